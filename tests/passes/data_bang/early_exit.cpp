// the lift of `if (i >= n) return;` in a 4 x 64 grid: the early exit is a continue after a
// flag store; the rest of the body runs only for i < n, which bounds x and y by n (200)
extern "C" void early_exit(const float* x, float* y, int n) {
  for (unsigned int b = 0; b < 4u; ++b) {
    unsigned char done[64];
    for (unsigned int t = 0; t < 64u; ++t) {
      if ((int) (b * 64u + t) >= n) {
        done[t] = 1;
        continue;
      }
      y[b * 64u + t] = x[b * 64u + t] * 3.0f;
    }
  }
}
