#include <cstddef>
#include <algorithm>
#include <vector>
template <typename T>
static void clamp_inplace(T* data, size_t n, T lo, T hi) {
  for (size_t i = 0; i < n; ++i) data[i] = std::min(std::max(data[i], lo), hi);
}
extern "C" void clamp_f32(float* data, long n, float lo, float hi) {
  std::vector<float> tmp(data, data + n);
  clamp_inplace(tmp.data(), tmp.size(), lo, hi);
  std::copy(tmp.begin(), tmp.end(), data);
}
