// log_softmax along the last axis of x[rows, cols]:
//   out[r, c] = x[r, c] - max_r - log(sum_c exp(x[r, c] - max_r))
// exp is a Cephes-style polynomial evaluated with AVX-512 and scaled by 2^n via _mm512_scalef_ps;
// the final log of the (scalar) row sum uses logf. Column tail handled with masked loads/stores;
// masked-out lanes are set to -inf for the max and contribute 0 to the sum.
#include <immintrin.h>
#include <math.h>

static inline __m512 exp512_ps(__m512 x) {
  const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
  const __m512 ln2_hi = _mm512_set1_ps(0.693359375f);
  const __m512 ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.3365f));
  x = _mm512_min_ps(x, _mm512_set1_ps(88.3762f));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, ln2_hi, x);
  r = _mm512_fnmadd_ps(n, ln2_lo, r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  __m512 r2 = _mm512_mul_ps(r, r);
  p = _mm512_fmadd_ps(p, r2, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, n);
}

extern "C" void log_softmax_rows_avx512(const float* x, float* out, int rows, int cols) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + (size_t)r * cols;
    float* orow = out + (size_t)r * cols;
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 vmax = ninf;
    for (int c = 0; c < cols; c += 16) {
      int rem = cols - c;
      __mmask16 m = rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1);
      vmax = _mm512_max_ps(vmax, _mm512_mask_loadu_ps(ninf, m, xr + c));
    }
    const float mx = _mm512_reduce_max_ps(vmax);
    const __m512 vmx = _mm512_set1_ps(mx);
    __m512 vsum = _mm512_setzero_ps();
    for (int c = 0; c < cols; c += 16) {
      int rem = cols - c;
      __mmask16 m = rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1);
      __m512 e = exp512_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, xr + c), vmx));
      vsum = _mm512_mask_add_ps(vsum, m, vsum, e);
    }
    const float lse = mx + logf(_mm512_reduce_add_ps(vsum));
    const __m512 vlse = _mm512_set1_ps(lse);
    for (int c = 0; c < cols; c += 16) {
      int rem = cols - c;
      __mmask16 m = rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1);
      _mm512_mask_storeu_ps(orow + c, m, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, xr + c), vlse));
    }
  }
}
