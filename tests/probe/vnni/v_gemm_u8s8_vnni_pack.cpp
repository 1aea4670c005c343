// Small int8 GEMM C[M,N] = scale_a*scale_b[n] * (A_u8[M,K] . B_s8[K,N]) + bias[n]
// B is packed once into the VNNI layout [K/4][N][4] (k-blocking by 4, zero padded),
// A rows are padded to K%4==0; inner kernel = broadcast 4 A bytes + _mm512_dpbusd_epi32.
#include <immintrin.h>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
constexpr int kNr = 16;  // int32 lanes per zmm = output columns per block
constexpr int kKb = 4;   // bytes per dpbusd lane

void pack_b_vnni(const int8_t* B, int K, int N, int Kp, int Np, int8_t* Bp) {
  std::memset(Bp, 0, static_cast<size_t>(Kp) * Np);
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n)
      Bp[(static_cast<size_t>(k / kKb) * Np + n) * kKb + (k % kKb)] = B[static_cast<size_t>(k) * N + n];
}
}  // namespace

extern "C" void gemm_u8s8_vnni(const uint8_t* A, const int8_t* B, const float* bias,
                               const float* scale_b, float scale_a, float* C,
                               int M, int N, int K) {
  const int Kp = (K + kKb - 1) / kKb * kKb;
  const int Np = (N + kNr - 1) / kNr * kNr;
  std::vector<int8_t> Bp(static_cast<size_t>(Kp) * Np);
  pack_b_vnni(B, K, N, Kp, Np, Bp.data());
  std::vector<uint8_t> Ap(static_cast<size_t>(M) * Kp, 0);
  for (int m = 0; m < M; ++m)
    std::memcpy(Ap.data() + static_cast<size_t>(m) * Kp, A + static_cast<size_t>(m) * K, K);

#pragma omp parallel for schedule(static)
  for (int m = 0; m < M; ++m) {
    const uint8_t* a = Ap.data() + static_cast<size_t>(m) * Kp;
    float* c = C + static_cast<size_t>(m) * N;
    for (int n0 = 0; n0 < Np; n0 += kNr) {
      __m512i acc = _mm512_setzero_si512();
      const int8_t* bp = Bp.data() + static_cast<size_t>(n0) * kKb;
      for (int k = 0; k < Kp; k += kKb) {
        int32_t a4;
        std::memcpy(&a4, a + k, sizeof(a4));
        const __m512i va = _mm512_set1_epi32(a4);
        const __m512i vb = _mm512_loadu_si512(bp + static_cast<size_t>(k / kKb) * Np * kKb);
        acc = _mm512_dpbusd_epi32(acc, va, vb);
      }
      const int rem = N - n0;
      const __mmask16 mk = rem >= kNr ? static_cast<__mmask16>(0xFFFF)
                                      : static_cast<__mmask16>((1u << rem) - 1u);
      const __m512 s = _mm512_mul_ps(_mm512_set1_ps(scale_a), _mm512_maskz_loadu_ps(mk, scale_b + n0));
      const __m512 r = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), s, _mm512_maskz_loadu_ps(mk, bias + n0));
      _mm512_mask_storeu_ps(c + n0, mk, r);
    }
  }
}
