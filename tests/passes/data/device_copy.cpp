// a bit-cast between two lane arrays (what a VNNI lift leaves for _mm512_castps_si512):
// both arrays live on the device, so the copy is a device-to-device memcpy, not a kernel
#include <stdint.h>
#include <string.h>
extern "C" void device_copy_kernel(const float* x, const float* y, uint32_t* out, float* sum) {
  float t[16];
  uint32_t u[16];
  for (int j = 0; j < 16; ++j) t[j] = x[j] * y[j];
  memcpy(u, t, sizeof(u));
  for (int j = 0; j < 16; ++j) out[j] = u[j] >> 1;
  memcpy(sum, t + 8, 8 * sizeof(float));
}
