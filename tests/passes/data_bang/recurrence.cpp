// prefix sum: every iteration depends on the previous one (no parallel loop)
extern "C" void prefix_kernel(const float* x, float* out, int n) {
  out[0] = x[0];
  for (int i = 1; i < n; ++i)
    out[i] = out[i - 1] + x[i];
}
