// Two exported functions: quantise and dequantise; the entry must be chosen with entry=.
#include <stdint.h>
#include <math.h>

extern "C" void quantize_u8(const float* x, uint8_t* q, int n, float scale) {
  for (int i = 0; i < n; ++i) {
    float v = nearbyintf(x[i] / scale) + 128.0f;
    q[i] = (uint8_t)(v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v));
  }
}

extern "C" void dequantize_u8(const uint8_t* q, float* x, int n, float scale) {
  for (int i = 0; i < n; ++i) x[i] = ((int)q[i] - 128) * scale;
}
