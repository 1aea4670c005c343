// Row-wise argmax / top-1 (value + first index of the maximum).
// Per-lane running max with _mm512_cmp_ps_mask(_CMP_GT_OQ) + _mm512_mask_blend_ps/epi32,
// then _mm512_reduce_max_ps and the smallest index among lanes equal to the max.
#include <immintrin.h>
#include <cstdint>
#include <limits>

extern "C" void argmax_rows(const float* in, float* out_val, int32_t* out_idx, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* x = in + static_cast<int64_t>(r) * cols;
    float best = std::numeric_limits<float>::lowest();
    int32_t best_i = 0;
    int i = 0;
    if (cols >= 16) {
      __m512 vmax = _mm512_loadu_ps(x);
      __m512i vidx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
      __m512i cur = vidx;
      const __m512i step = _mm512_set1_epi32(16);
      for (i = 16; i + 16 <= cols; i += 16) {
        _mm_prefetch(reinterpret_cast<const char*>(x + i + 64), _MM_HINT_T0);
        cur = _mm512_add_epi32(cur, step);
        const __m512 v = _mm512_loadu_ps(x + i);
        const __mmask16 gt = _mm512_cmp_ps_mask(v, vmax, _CMP_GT_OQ);
        vmax = _mm512_mask_blend_ps(gt, vmax, v);
        vidx = _mm512_mask_blend_epi32(gt, vidx, cur);
      }
      best = _mm512_reduce_max_ps(vmax);
      const __mmask16 eq = _mm512_cmp_ps_mask(vmax, _mm512_set1_ps(best), _CMP_EQ_OQ);
      best_i = _mm512_mask_reduce_min_epi32(eq, vidx);
    }
    for (; i < cols; ++i) {
      if (x[i] > best) { best = x[i]; best_i = i; }
    }
    out_val[r] = best;
    out_idx[r] = best_i;
  }
}
