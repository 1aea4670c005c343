// a function-scope static array (VNNI kernels pack operands into such arrays) written by one
// parallel loop and read by the next: a GDRAM buffer; its values persist between calls
#include <stdint.h>
extern "C" void static_scratch_kernel(const float* x, float* out) {
  static float q[64];
  for (int i = 0; i < 64; ++i)
    q[i] = x[i] * 2.0f;
  for (int i = 0; i < 64; ++i)
    out[i] = q[63 - i] + q[i];
}
