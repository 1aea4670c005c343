// out[cols x rows] = transpose(in[rows x cols]). Full 16x16 blocks go through an
// in-register transpose (unpacklo/hi ps, unpacklo/hi pd, shuffle_f32x4) into an
// alignas(64) tile accessed via reinterpret_cast<__m512*>; ragged edges are scalar.
#include <immintrin.h>
#include <cstdint>
#include <cstring>

namespace tp {
constexpr int kB = 16;

static inline void block16(const float* src, int64_t lds, float* dst, int64_t ldd) {
  alignas(64) float tile[kB * kB];
  __m512* t = reinterpret_cast<__m512*>(tile);
  __m512 r[kB], u[kB];
  for (int i = 0; i < kB; ++i) r[i] = _mm512_loadu_ps(src + i * lds);
  for (int i = 0; i < kB; i += 2) {
    u[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    u[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < kB; i += 4) {
    for (int j = 0; j < 2; ++j) {
      const __m512d a = _mm512_castps_pd(u[i + j]), b = _mm512_castps_pd(u[i + j + 2]);
      r[i + 2 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      r[i + 2 * j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
  }
  for (int g = 0; g < kB; g += 8) {
    for (int j = 0; j < 4; ++j) {
      u[g + j] = _mm512_shuffle_f32x4(r[g + j], r[g + j + 4], 0x88);
      u[g + j + 4] = _mm512_shuffle_f32x4(r[g + j], r[g + j + 4], 0xdd);
    }
  }
  for (int j = 0; j < 8; ++j) {
    t[j] = _mm512_shuffle_f32x4(u[j], u[j + 8], 0x88);
    t[j + 8] = _mm512_shuffle_f32x4(u[j], u[j + 8], 0xdd);
  }
  for (int i = 0; i < kB; ++i) std::memcpy(dst + i * ldd, tile + i * kB, kB * sizeof(float));
}
}  // namespace tp

extern "C" void transpose_f32(const float* in, float* out, int rows, int cols) {
  const int64_t lds = cols, ldd = rows;
  const int rb = rows / tp::kB * tp::kB, cb = cols / tp::kB * tp::kB;
  for (int i = 0; i < rb; i += tp::kB) {
    if (i + tp::kB < rb) _mm_prefetch(reinterpret_cast<const char*>(in + (i + tp::kB) * lds), _MM_HINT_T0);
    for (int j = 0; j < cb; j += tp::kB)
      tp::block16(in + i * lds + j, lds, out + j * ldd + i, ldd);
  }
  for (int i = 0; i < rows; ++i) {
    const int j0 = i < rb ? cb : 0;  // right edge for blocked rows, everything for bottom rows
    for (int j = j0; j < cols; ++j) out[j * ldd + i] = in[i * lds + j];
  }
}
