// a local array declared outside the parallel loop that every iteration overwrites before
// reading it (privatised: one copy per task)
#include <stdint.h>
extern "C" void private_tmp_kernel(const float* x, float* out) {
  float tmp[16];
  for (int i = 0; i < 24; ++i) {
    for (int j = 0; j < 16; ++j)
      tmp[j] = x[i * 16 + j] * 2.0f;
    for (int j = 0; j < 16; ++j)
      out[i * 16 + j] = tmp[15 - j] + tmp[j];
  }
}
