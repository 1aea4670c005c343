// fp32 GEMM with bias: C[M,N] = A[M,K] * B[K,N] + bias[N]   (row-major)
// Register-blocked AVX-512 micro-kernel: 4 rows x 32 columns (8 zmm accumulators),
// broadcast A element, FMA against two B vectors. N tail handled by __mmask16 masks,
// M tail (M % 4) handled by a 1-row micro-kernel. Row blocks distributed with OpenMP.
#include <immintrin.h>

static inline __mmask16 mask_for(int rem) {
  return rem >= 16 ? (__mmask16)0xFFFF : (rem <= 0 ? (__mmask16)0 : (__mmask16)((1u << rem) - 1));
}

static inline void kernel_4x32(const float* A, const float* B, const float* bias, float* C,
                               int N, int K, int lda, int j) {
  __mmask16 m0 = mask_for(N - j), m1 = mask_for(N - j - 16);
  __m512 b0i = _mm512_maskz_loadu_ps(m0, bias + j), b1i = _mm512_maskz_loadu_ps(m1, bias + j + 16);
  __m512 c00 = b0i, c01 = b1i, c10 = b0i, c11 = b1i, c20 = b0i, c21 = b1i, c30 = b0i, c31 = b1i;
  for (int k = 0; k < K; ++k) {
    __m512 b0 = _mm512_maskz_loadu_ps(m0, B + (size_t)k * N + j);
    __m512 b1 = _mm512_maskz_loadu_ps(m1, B + (size_t)k * N + j + 16);
    __m512 a0 = _mm512_set1_ps(A[k]);
    __m512 a1 = _mm512_set1_ps(A[(size_t)lda + k]);
    __m512 a2 = _mm512_set1_ps(A[(size_t)2 * lda + k]);
    __m512 a3 = _mm512_set1_ps(A[(size_t)3 * lda + k]);
    c00 = _mm512_fmadd_ps(a0, b0, c00); c01 = _mm512_fmadd_ps(a0, b1, c01);
    c10 = _mm512_fmadd_ps(a1, b0, c10); c11 = _mm512_fmadd_ps(a1, b1, c11);
    c20 = _mm512_fmadd_ps(a2, b0, c20); c21 = _mm512_fmadd_ps(a2, b1, c21);
    c30 = _mm512_fmadd_ps(a3, b0, c30); c31 = _mm512_fmadd_ps(a3, b1, c31);
  }
  _mm512_mask_storeu_ps(C + j, m0, c00);                    _mm512_mask_storeu_ps(C + j + 16, m1, c01);
  _mm512_mask_storeu_ps(C + (size_t)N + j, m0, c10);        _mm512_mask_storeu_ps(C + (size_t)N + j + 16, m1, c11);
  _mm512_mask_storeu_ps(C + (size_t)2 * N + j, m0, c20);    _mm512_mask_storeu_ps(C + (size_t)2 * N + j + 16, m1, c21);
  _mm512_mask_storeu_ps(C + (size_t)3 * N + j, m0, c30);    _mm512_mask_storeu_ps(C + (size_t)3 * N + j + 16, m1, c31);
}

static inline void kernel_1x32(const float* A, const float* B, const float* bias, float* C,
                               int N, int K, int j) {
  __mmask16 m0 = mask_for(N - j), m1 = mask_for(N - j - 16);
  __m512 c0 = _mm512_maskz_loadu_ps(m0, bias + j), c1 = _mm512_maskz_loadu_ps(m1, bias + j + 16);
  for (int k = 0; k < K; ++k) {
    __m512 a = _mm512_set1_ps(A[k]);
    c0 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m0, B + (size_t)k * N + j), c0);
    c1 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m1, B + (size_t)k * N + j + 16), c1);
  }
  _mm512_mask_storeu_ps(C + j, m0, c0);
  _mm512_mask_storeu_ps(C + j + 16, m1, c1);
}

extern "C" void sgemm_bias_avx512(const float* A, const float* B, const float* bias, float* C,
                                  int M, int N, int K) {
  const int Mb = M / 4;
#pragma omp parallel for schedule(static)
  for (int ib = 0; ib < Mb; ++ib) {
    int i = ib * 4;
    for (int j = 0; j < N; j += 32)
      kernel_4x32(A + (size_t)i * K, B, bias, C + (size_t)i * N, N, K, K, j);
  }
  for (int i = Mb * 4; i < M; ++i)
    for (int j = 0; j < N; j += 32)
      kernel_1x32(A + (size_t)i * K, B, bias, C + (size_t)i * N, N, K, j);
}
