// host code between nests: a scalar computed on the host, a single-thread fix-up, two nests
extern "C" void phases_kernel(const float* x, float* y, float* z, int n) {
  int half = n / 2;
  for (int i = 0; i < n; ++i)
    y[i] = x[i] * 2.0f;
  y[0] = y[0] + y[n - 1];
  for (int i = 0; i < n; i += 2)
    z[i / 2] = y[i] + (float)half;
  for (int i = n - 1; i >= half; --i)
    z[i] = -y[i];
}
