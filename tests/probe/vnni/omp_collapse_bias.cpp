#include <cstdint>
extern "C" void add_bias_nchw(float* x, const float* bias, int N, int C, int HW) {
#pragma omp parallel for collapse(2)
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) {
      float b = bias[c];
      float* p = x + ((int64_t)n * C + c) * HW;
      for (int i = 0; i < HW; ++i) p[i] += b;
    }
}
