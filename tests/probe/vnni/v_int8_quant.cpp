#include <cstdint>
#include <cmath>
#include <algorithm>
extern "C" void quantize_rows(const float* x, int8_t* q, float* scales, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + (size_t)r * cols;
    float amax = 0.f;
    for (int c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(xr[c]));
    float scale = amax / 127.f;
    float inv = scale > 0.f ? 1.f / scale : 0.f;
    scales[r] = scale;
    for (int c = 0; c < cols; ++c) {
      int v = (int)std::lround(xr[c] * inv);
      q[(size_t)r * cols + c] = (int8_t)std::min(127, std::max(-127, v));
    }
  }
}
