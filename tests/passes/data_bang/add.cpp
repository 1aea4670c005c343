// elementwise add, symbolic length (canonical C)
#include <stdint.h>
extern "C" void add_kernel(const float* x, const float* y, float* out, int n) {
  #pragma omp parallel for
  for (int i = 0; i < n; ++i)
    out[i] = x[i] + y[i];
}
