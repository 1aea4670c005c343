// Row gather as in ggml_compute_forward_get_rows_f32: out row i = src row ids[i], copied with
// 512-bit loads/stores (ggml_vec_cpy_f32 body) and a masked tail; rows split over threads.
#include <immintrin.h>
#include <cstdint>
#include <cassert>

static inline void vec_cpy_f32(const int n, float* y, const float* x) {
  int i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_loadu_ps(x + i));
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, _mm512_maskz_loadu_ps(m, x + i));
  }
}

extern "C" void get_rows_f32(const float* src0, const int32_t* ids, float* dst, int nc, int nr, int n_ids) {
#pragma omp parallel for
  for (int i = 0; i < n_ids; ++i) {
    const int r = ids[i];
    assert(r >= 0 && r < nr);
    vec_cpy_f32(nc, dst + (int64_t)i * nc, src0 + (int64_t)r * nc);
  }
}
