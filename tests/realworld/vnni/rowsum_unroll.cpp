// Row sums with four independent 16-lane accumulators (64 floats per iteration, the usual
// latency-hiding unroll of MLAS / Eigen reductions), a 16-lane remainder loop, a masked tail
// and one _mm512_reduce_add_ps per row.
#include <immintrin.h>
#include <cstdint>

static inline float sum_row(const float* __restrict x, int n) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  __m512 acc2 = _mm512_setzero_ps(), acc3 = _mm512_setzero_ps();
  int i = 0;
  for (; i + 64 <= n; i += 64) {
    acc0 = _mm512_add_ps(acc0, _mm512_loadu_ps(x + i));
    acc1 = _mm512_add_ps(acc1, _mm512_loadu_ps(x + i + 16));
    acc2 = _mm512_add_ps(acc2, _mm512_loadu_ps(x + i + 32));
    acc3 = _mm512_add_ps(acc3, _mm512_loadu_ps(x + i + 48));
  }
  for (; i + 16 <= n; i += 16) acc0 = _mm512_add_ps(acc0, _mm512_loadu_ps(x + i));
  if (i < n) acc1 = _mm512_add_ps(acc1, _mm512_maskz_loadu_ps((__mmask16)((1u << (n - i)) - 1u), x + i));
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}

extern "C" void reduce_sum_rows(const float* __restrict in, float* __restrict out, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) out[r] = sum_row(in + (int64_t)r * cols, cols);
}
