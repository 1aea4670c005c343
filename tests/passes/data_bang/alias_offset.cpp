// a host pointer local into a parameter (the GPU lifts keep compute = C): the kernel gets
// it rebased onto the device buffer (d_out + 8), never the host address
#include <stdint.h>
extern "C" void alias_offset(const float* x, float* out) {
  float* o = out + 8;
  for (int i = 0; i < 56; ++i)
    o[i] = x[i] * 2.0f;
  for (int i = 0; i < 8; ++i)
    out[i] = x[i];
}
