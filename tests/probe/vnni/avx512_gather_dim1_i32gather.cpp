// torch.gather(x, dim=1, index): x[B, T], index[B, J] (int32, values in [0, T)), out[B, J]
//   out[b, j] = x[b, index[b, j]]
// Uses _mm512_mask_i32gather_ps with the row base pointer; tail lanes masked off (both for the
// index load and the gather, so no out-of-range addresses are touched). Negative indices
// wrap like Python (index + T).
#include <immintrin.h>
#include <stdint.h>

extern "C" void gather_dim1_f32(const float* x, const int32_t* index, float* out, int B, int T, int J) {
  const __m512i vT = _mm512_set1_epi32(T);
  const __m512i vzero = _mm512_setzero_si512();
#pragma omp parallel for schedule(static)
  for (int b = 0; b < B; ++b) {
    const float* xrow = x + (size_t)b * T;
    const int32_t* irow = index + (size_t)b * J;
    float* orow = out + (size_t)b * J;
    int j = 0;
    for (; j + 16 <= J; j += 16) {
      __m512i idx = _mm512_loadu_si512((const void*)(irow + j));
      __mmask16 neg = _mm512_cmplt_epi32_mask(idx, vzero);
      idx = _mm512_mask_add_epi32(idx, neg, idx, vT);
      __m512 v = _mm512_i32gather_ps(idx, xrow, 4);
      _mm512_storeu_ps(orow + j, v);
    }
    if (j < J) {
      __mmask16 m = (__mmask16)((1u << (J - j)) - 1);
      __m512i idx = _mm512_maskz_loadu_epi32(m, irow + j);
      __mmask16 neg = _mm512_mask_cmplt_epi32_mask(m, idx, vzero);
      idx = _mm512_mask_add_epi32(idx, neg, idx, vT);
      __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, xrow, 4);
      _mm512_mask_storeu_ps(orow + j, m, v);
    }
  }
}
