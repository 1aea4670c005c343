// one iteration touches a 1M-float row: the window cannot fit NRAM
extern "C" void huge_row_kernel(const float* x, float* out) {
  for (int i = 0; i < 4; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 1048576; ++j)
      s += x[i * 1048576 + j];
    out[i] = s;
  }
}
