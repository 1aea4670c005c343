// Single-precision GEMM C = A * B (row-major) in the BLIS / MLAS style: B is packed panel by
// panel (16 columns, zero-padded) into a 64-byte aligned buffer, a 4 x 16 micro-kernel keeps
// four accumulators and broadcasts A with _mm512_set1_ps into _mm512_fmadd_ps; the column tail
// is stored through a mask and the row tail by a 1 x 16 kernel.
#include <immintrin.h>
#include <cstring>
#include <algorithm>

namespace {

constexpr int NR = 16;
constexpr int MR = 4;
constexpr int KMAX = 256;

inline __mmask16 col_mask(int cols) { return cols >= NR ? (__mmask16)0xFFFF : (__mmask16)((1u << cols) - 1u); }

void pack_b_panel(const float* B, int K, int N, int j0, float* packed) {
  const int cols = std::min(NR, N - j0);
  for (int k = 0; k < K; ++k) {
    const __mmask16 m = col_mask(cols);
    _mm512_store_ps(packed + k * NR, _mm512_maskz_loadu_ps(m, B + (size_t)k * N + j0));
  }
}

template <int ROWS>
void micro_kernel(const float* A, int lda, const float* packed, int K, float* C, int ldc, __mmask16 m) {
  __m512 acc[ROWS];
  for (int r = 0; r < ROWS; ++r) acc[r] = _mm512_setzero_ps();
  for (int k = 0; k < K; ++k) {
    const __m512 b = _mm512_load_ps(packed + k * NR);
    for (int r = 0; r < ROWS; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(A[(size_t)r * lda + k]), b, acc[r]);
  }
  for (int r = 0; r < ROWS; ++r) _mm512_mask_storeu_ps(C + (size_t)r * ldc, m, acc[r]);
}

}  // namespace

extern "C" void sgemm_nn(const float* A, const float* B, float* C, int M, int N, int K) {
  alignas(64) static float packed[KMAX * NR];
  for (int j0 = 0; j0 < N; j0 += NR) {
    pack_b_panel(B, K, N, j0, packed);
    const __mmask16 m = col_mask(N - j0);
    int i = 0;
    for (; i + MR <= M; i += MR) micro_kernel<MR>(A + (size_t)i * K, K, packed, K, C + (size_t)i * N + j0, N, m);
    for (; i < M; ++i) micro_kernel<1>(A + (size_t)i * K, K, packed, K, C + (size_t)i * N + j0, N, m);
  }
}
