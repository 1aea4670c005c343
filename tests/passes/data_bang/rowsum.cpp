// reduction along the inner loop: rows are independent, columns are accumulated
extern "C" void rowsum_kernel(const float* x, float* out, int M, int N) {
  for (int i = 0; i < M; ++i) {
    float s = 0.0f;
    for (int j = 0; j < N; ++j)
      s += x[i * N + j];
    out[i] = s;
  }
}
