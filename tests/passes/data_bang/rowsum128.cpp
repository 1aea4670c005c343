// row sums over constant rows of 128 floats (a chunked-reduction candidate), and a scaled copy
extern "C" void rowsum128_kernel(const float* x, float* out, float* y) {
  for (int i = 0; i < 40; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 128; ++j)
      s += x[i * 128 + j];
    out[i] = s;
  }
  for (int k = 0; k < 40 * 128; ++k)
    y[k] = x[k] * 0.5f;
}
