#include <immintrin.h>
#include <algorithm>
namespace kernels {
namespace detail {
template <int BLOCK>
inline void relu_block(const float* in, float* out) {
  for (int j = 0; j < BLOCK; j += 16)
    _mm512_storeu_ps(out + j, _mm512_max_ps(_mm512_loadu_ps(in + j), _mm512_setzero_ps()));
}
}  // namespace detail
template <int BLOCK>
void relu(const float* in, float* out, int n) {
  int i = 0;
  for (; i + BLOCK <= n; i += BLOCK) detail::relu_block<BLOCK>(in + i, out + i);
  for (; i < n; ++i) out[i] = std::max(in[i], 0.0f);
}
}  // namespace kernels
extern "C" void relu_f32(const float* in, float* out, int n) { kernels::relu<64>(in, out, n); }
