// an extent-1 loop around the parallel loop (vnni kernels with OUTER = 1): the bound loop's
// windows and body use its variable
#include <stdint.h>
static const int OUTER = 1, R = 3, INNER = 40;
extern "C" void unit_outer_kernel(const float* x, float* out) {
  for (int o = 0; o < OUTER; ++o)
    for (int i = 0; i < INNER; ++i) {
      float acc = x[(o * R) * INNER + i];
      for (int r = 1; r < R; ++r)
        acc = acc > x[(o * R + r) * INNER + i] ? acc : x[(o * R + r) * INNER + i];
      out[o * INNER + i] = acc;
    }
}
