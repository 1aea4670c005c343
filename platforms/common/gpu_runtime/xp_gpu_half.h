// xp_gpu_half.h - __half / half, __half2, __nv_bfloat16 (CUDA cuda_fp16.h / cuda_bf16.h, HIP
// hip_fp16.h) with IEEE binary16 semantics: every arithmetic operation is done in float and
// rounded once to nearest-even (exact for + - * / sqrt: float has >= 2*11+2 bits), conversions
// float->half are round-to-nearest-even, half->float exact. __hfma is computed in double
// (product exact) and rounded once. NaN results are the canonical 0x7FFF like CUDA.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace xp { namespace gpu {

inline float bits_to_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
inline uint32_t float_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

// float -> binary16, round to nearest even (needs the default FP environment: RNE, no FTZ).
inline uint16_t f2h_bits(float f) {
  uint32_t fu = float_to_bits(f);
  uint32_t sign = fu & 0x80000000u;
  fu ^= sign;
  uint16_t o;
  if (fu >= (uint32_t)(127 + 16) << 23) {           // >= 65536: Inf or NaN (65520..65536 below)
    o = fu > 0x7f800000u ? 0x7fff : 0x7c00;
    if (fu > 0x7f800000u) return 0x7fff;             // canonical NaN (CUDA), sign dropped
  } else if (fu < (uint32_t)113 << 23) {            // subnormal or zero result
    const uint32_t magic_u = (uint32_t)((127 - 15) + (23 - 10) + 1) << 23;
    float ff = bits_to_float(fu) + bits_to_float(magic_u);
    o = (uint16_t)(float_to_bits(ff) - magic_u);
  } else {
    uint32_t mant_odd = (fu >> 13) & 1;
    fu += ((uint32_t)(15 - 127) << 23) + 0xfff;
    fu += mant_odd;
    o = (uint16_t)(fu >> 13);                        // may carry into Inf (>= 65520): correct
  }
  return (uint16_t)(o | (sign >> 16));
}

inline float h2f_bits(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) {
    float f = (float)man * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  if (exp == 31) return bits_to_float(sign | 0x7f800000u | (man << 13));
  return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

// double -> float rounded to odd, so that a following RNE to half is a single correct rounding.
inline float d2f_round_odd(double d) {
  float f = (float)d;
  if (std::isnan(d) || std::isinf(f) || (double)f == d) return f;
  uint32_t u = float_to_bits(f);
  if ((u & 1) == 0) {
    bool toward_zero_needed = std::fabs((double)f) > std::fabs(d);
    u = toward_zero_needed ? u - 1 : u + 1;
  }
  return bits_to_float(u);
}
inline uint16_t d2h_bits(double d) { return f2h_bits(d2f_round_odd(d)); }

inline uint16_t f2bf_bits(float f) {
  uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
inline float bf2f_bits(uint16_t b) { return bits_to_float((uint32_t)b << 16); }

}}  // namespace xp::gpu

struct __half_raw { unsigned short x; };
struct __half2_raw { unsigned short x, y; };

struct __half {
  unsigned short __x;
  __half() = default;
  constexpr __half(const __half_raw &r) : __x(r.x) {}
  __half(float f) : __x(xp::gpu::f2h_bits(f)) {}
  __half(double d) : __x(xp::gpu::d2h_bits(d)) {}
  __half(short v) : __x(xp::gpu::f2h_bits((float)v)) {}
  __half(unsigned short v) : __x(xp::gpu::f2h_bits((float)v)) {}
  __half(int v) : __x(xp::gpu::d2h_bits((double)v)) {}
  __half(unsigned int v) : __x(xp::gpu::d2h_bits((double)v)) {}
  __half(long v) : __x(xp::gpu::d2h_bits((double)v)) {}
  __half(unsigned long v) : __x(xp::gpu::d2h_bits((double)v)) {}
  __half(long long v) : __x(xp::gpu::d2h_bits((double)v)) {}
  __half(unsigned long long v) : __x(xp::gpu::d2h_bits((double)v)) {}
  __half &operator=(float f) { __x = xp::gpu::f2h_bits(f); return *this; }
  __half &operator=(double d) { __x = xp::gpu::d2h_bits(d); return *this; }
  __half &operator=(const __half_raw &r) { __x = r.x; return *this; }
  operator __half_raw() const { return __half_raw{__x}; }
  operator float() const { return xp::gpu::h2f_bits(__x); }
  // as cuda_fp16.hpp: conversions to integers truncate toward zero
  explicit operator bool() const { return (__x & 0x7fff) != 0; }
  operator short() const { return (short)xp::gpu::h2f_bits(__x); }
  operator unsigned short() const { return (unsigned short)xp::gpu::h2f_bits(__x); }
  operator int() const { return (int)xp::gpu::h2f_bits(__x); }
  operator unsigned int() const { return (unsigned int)xp::gpu::h2f_bits(__x); }
  operator long long() const { return (long long)xp::gpu::h2f_bits(__x); }
  operator unsigned long long() const { return (unsigned long long)xp::gpu::h2f_bits(__x); }
};
typedef __half half;

inline __half __xp_mkh(uint16_t b) { return __half(__half_raw{b}); }
inline __half __float2half(float f) { return __xp_mkh(xp::gpu::f2h_bits(f)); }
inline __half __float2half_rn(float f) { return __float2half(f); }
inline __half __double2half(double d) { return __xp_mkh(xp::gpu::d2h_bits(d)); }
inline float __half2float(__half h) { return xp::gpu::h2f_bits(h.__x); }
inline __half __float2half_rz(float f) {   // round toward zero
  __half h = __float2half(f);
  float b = __half2float(h);
  if (std::isfinite(f) && std::fabs(b) > std::fabs(f)) h.__x = (uint16_t)(h.__x - 1);
  return h;
}
inline __half __float2half_rd(float f) {
  __half h = __float2half(f);
  float b = __half2float(h);
  if (std::isfinite(f) && b > f) h.__x = (uint16_t)(f > 0 || h.__x == 0 ? h.__x - 1 : (h.__x == 0x8000 ? 0x8001 : h.__x + 1));
  return h;
}
inline __half __float2half_ru(float f) {
  __half h = __float2half(f);
  float b = __half2float(h);
  if (std::isfinite(f) && b < f) h.__x = (uint16_t)(f < 0 ? h.__x - 1 : (h.__x == 0x8000 ? 0x0001 : h.__x + 1));
  return h;
}
inline __half __int2half_rn(int v) { return __half(v); }
inline __half __uint2half_rn(unsigned v) { return __half(v); }
inline __half __short2half_rn(short v) { return __half(v); }
inline __half __ll2half_rn(long long v) { return __half(v); }
inline int __half2int_rn(__half h) { return (int)std::nearbyint(__half2float(h)); }
inline int __half2int_rz(__half h) { return (int)__half2float(h); }
inline int __half2int_rd(__half h) { return (int)std::floor(__half2float(h)); }
inline int __half2int_ru(__half h) { return (int)std::ceil(__half2float(h)); }
inline unsigned __half2uint_rz(__half h) { return (unsigned)__half2float(h); }
inline short __half2short_rz(__half h) { return (short)__half2float(h); }
inline long long __half2ll_rz(__half h) { return (long long)__half2float(h); }
inline short __half_as_short(__half h) { return (short)h.__x; }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __short_as_half(short s) { return __xp_mkh((uint16_t)s); }
inline __half __ushort_as_half(unsigned short s) { return __xp_mkh(s); }

#define XP_HBIN(name, op) inline __half name(__half a, __half b) { return __float2half(__half2float(a) op __half2float(b)); }
XP_HBIN(__hadd, +) XP_HBIN(__hsub, -) XP_HBIN(__hmul, *) XP_HBIN(__hdiv, /)
XP_HBIN(__hadd_rn, +) XP_HBIN(__hsub_rn, -) XP_HBIN(__hmul_rn, *)
#undef XP_HBIN
inline __half __hadd_sat(__half a, __half b) { float r = __half2float(__hadd(a, b)); return __float2half(r != r ? 0.f : std::fmin(1.f, std::fmax(0.f, r))); }
inline __half __hmul_sat(__half a, __half b) { float r = __half2float(__hmul(a, b)); return __float2half(r != r ? 0.f : std::fmin(1.f, std::fmax(0.f, r))); }
inline __half __hfma(__half a, __half b, __half c) {
  return __double2half((double)__half2float(a) * (double)__half2float(b) + (double)__half2float(c));
}
inline __half __hfma_sat(__half a, __half b, __half c) { float r = __half2float(__hfma(a, b, c)); return __float2half(r != r ? 0.f : std::fmin(1.f, std::fmax(0.f, r))); }
inline __half __hneg(__half a) { return __xp_mkh((uint16_t)(a.__x ^ 0x8000)); }
inline __half __habs(__half a) { return __xp_mkh((uint16_t)(a.__x & 0x7fff)); }
inline bool __hisnan(__half a) { return (a.__x & 0x7fff) > 0x7c00; }
inline int __hisinf(__half a) { return (a.__x & 0x7fff) == 0x7c00 ? ((a.__x & 0x8000) ? -1 : 1) : 0; }
inline __half __hmax(__half a, __half b) { if (__hisnan(a)) return b; if (__hisnan(b)) return a; return __half2float(a) >= __half2float(b) ? a : b; }
inline __half __hmin(__half a, __half b) { if (__hisnan(a)) return b; if (__hisnan(b)) return a; return __half2float(a) <= __half2float(b) ? a : b; }
inline __half __hmax_nan(__half a, __half b) { if (__hisnan(a) || __hisnan(b)) return __xp_mkh(0x7fff); return __hmax(a, b); }
inline __half __hmin_nan(__half a, __half b) { if (__hisnan(a) || __hisnan(b)) return __xp_mkh(0x7fff); return __hmin(a, b); }
#define XP_HCMP(name, op) inline bool name(__half a, __half b) { return __half2float(a) op __half2float(b); }
XP_HCMP(__heq, ==) XP_HCMP(__hne, !=) XP_HCMP(__hlt, <) XP_HCMP(__hle, <=) XP_HCMP(__hgt, >) XP_HCMP(__hge, >=)
#undef XP_HCMP
#define XP_HCMPU(name, op) inline bool name(__half a, __half b) { float x = __half2float(a), y = __half2float(b); return x != x || y != y || (x op y); }
XP_HCMPU(__hequ, ==) XP_HCMPU(__hneu, !=) XP_HCMPU(__hltu, <) XP_HCMPU(__hleu, <=) XP_HCMPU(__hgtu, >) XP_HCMPU(__hgeu, >=)
#undef XP_HCMPU

inline __half operator+(const __half &a, const __half &b) { return __hadd(a, b); }
inline __half operator-(const __half &a, const __half &b) { return __hsub(a, b); }
inline __half operator*(const __half &a, const __half &b) { return __hmul(a, b); }
inline __half operator/(const __half &a, const __half &b) { return __hdiv(a, b); }
inline __half &operator+=(__half &a, const __half &b) { return a = __hadd(a, b); }
inline __half &operator-=(__half &a, const __half &b) { return a = __hsub(a, b); }
inline __half &operator*=(__half &a, const __half &b) { return a = __hmul(a, b); }
inline __half &operator/=(__half &a, const __half &b) { return a = __hdiv(a, b); }
inline __half operator+(const __half &a) { return a; }
inline __half operator-(const __half &a) { return __hneg(a); }
inline __half &operator++(__half &a) { return a = __hadd(a, __xp_mkh(0x3c00)); }
inline __half &operator--(__half &a) { return a = __hsub(a, __xp_mkh(0x3c00)); }
inline __half operator++(__half &a, int) { __half o = a; ++a; return o; }
inline __half operator--(__half &a, int) { __half o = a; --a; return o; }
inline bool operator==(const __half &a, const __half &b) { return __heq(a, b); }
inline bool operator!=(const __half &a, const __half &b) { return __hneu(a, b); }
inline bool operator<(const __half &a, const __half &b) { return __hlt(a, b); }
inline bool operator<=(const __half &a, const __half &b) { return __hle(a, b); }
inline bool operator>(const __half &a, const __half &b) { return __hgt(a, b); }
inline bool operator>=(const __half &a, const __half &b) { return __hge(a, b); }

#define XP_HUN(name, expr) inline __half name(__half h) { float x = __half2float(h); return __float2half(expr); }
XP_HUN(hsqrt, std::sqrt(x)) XP_HUN(hrsqrt, 1.0f / std::sqrt(x)) XP_HUN(hrcp, 1.0f / x)
XP_HUN(hexp, std::exp(x)) XP_HUN(hexp2, std::exp2(x)) XP_HUN(hexp10, std::pow(10.0f, x))
XP_HUN(hlog, std::log(x)) XP_HUN(hlog2, std::log2(x)) XP_HUN(hlog10, std::log10(x))
XP_HUN(hsin, std::sin(x)) XP_HUN(hcos, std::cos(x))
XP_HUN(hceil, std::ceil(x)) XP_HUN(hfloor, std::floor(x)) XP_HUN(htrunc, std::trunc(x)) XP_HUN(hrint, std::nearbyint(x))
#undef XP_HUN

// ---------------------------------------------------------------- __half2
struct __align__(4) __half2 {
  __half x, y;
  __half2() = default;
  constexpr __half2(const __half &a, const __half &b) : x(a), y(b) {}
  __half2(const __half2_raw &r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
  operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};
typedef __half2 half2;
inline __half2 make_half2(__half a, __half b) { return __half2(a, b); }
inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
inline __half2 __half2half2(__half a) { return __half2(a, a); }
inline __half2 __float2half2_rn(float f) { return __half2(__float2half(f), __float2half(f)); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(__float2half(a), __float2half(b)); }
inline __half2 __float22half2_rn(float2 f) { return __half2(__float2half(f.x), __float2half(f.y)); }
inline float2 __half22float2(__half2 h) { return make_float2(__half2float(h.x), __half2float(h.y)); }
inline float __low2float(__half2 h) { return __half2float(h.x); }
inline float __high2float(__half2 h) { return __half2float(h.y); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __low2half2(__half2 h) { return __half2(h.x, h.x); }
inline __half2 __high2half2(__half2 h) { return __half2(h.y, h.y); }
inline __half2 __lowhigh2highlow(__half2 h) { return __half2(h.y, h.x); }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
#define XP_H2BIN(name, f) inline __half2 name(__half2 a, __half2 b) { return __half2(f(a.x, b.x), f(a.y, b.y)); }
XP_H2BIN(__hadd2, __hadd) XP_H2BIN(__hsub2, __hsub) XP_H2BIN(__hmul2, __hmul) XP_H2BIN(__h2div, __hdiv)
XP_H2BIN(__hmax2, __hmax) XP_H2BIN(__hmin2, __hmin) XP_H2BIN(__hadd2_sat, __hadd_sat) XP_H2BIN(__hmul2_sat, __hmul_sat)
#undef XP_H2BIN
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
inline __half2 h2sqrt(__half2 a) { return __half2(hsqrt(a.x), hsqrt(a.y)); }
inline __half2 h2exp(__half2 a) { return __half2(hexp(a.x), hexp(a.y)); }
inline __half2 h2rcp(__half2 a) { return __half2(hrcp(a.x), hrcp(a.y)); }
inline __half2 h2rsqrt(__half2 a) { return __half2(hrsqrt(a.x), hrsqrt(a.y)); }
inline __half2 operator+(const __half2 &a, const __half2 &b) { return __hadd2(a, b); }
inline __half2 operator-(const __half2 &a, const __half2 &b) { return __hsub2(a, b); }
inline __half2 operator*(const __half2 &a, const __half2 &b) { return __hmul2(a, b); }
inline __half2 operator/(const __half2 &a, const __half2 &b) { return __h2div(a, b); }
inline __half2 &operator+=(__half2 &a, const __half2 &b) { return a = a + b; }
inline __half2 &operator-=(__half2 &a, const __half2 &b) { return a = a - b; }
inline __half2 &operator*=(__half2 &a, const __half2 &b) { return a = a * b; }
inline __half2 operator-(const __half2 &a) { return __hneg2(a); }

// ---------------------------------------------------------------- bfloat16
struct __nv_bfloat16_raw { unsigned short x; };
struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(const __nv_bfloat16_raw &r) : __x(r.x) {}
  __nv_bfloat16(float f) : __x(xp::gpu::f2bf_bits(f)) {}
  __nv_bfloat16(double d) : __x(xp::gpu::f2bf_bits(xp::gpu::d2f_round_odd(d))) {}
  __nv_bfloat16(int v) : __x(xp::gpu::f2bf_bits(xp::gpu::d2f_round_odd((double)v))) {}
  operator float() const { return xp::gpu::bf2f_bits(__x); }
  explicit operator bool() const { return (__x & 0x7fff) != 0; }
};
typedef __nv_bfloat16 nv_bfloat16;
struct __nv_bfloat162_raw { unsigned short x, y; };
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
  __nv_bfloat162(const __nv_bfloat162_raw &r) : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
  operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.__x, y.__x}; }
};
typedef __nv_bfloat162 nv_bfloat162;
inline __nv_bfloat16 __xp_mkbf(uint16_t b) { return __nv_bfloat16(__nv_bfloat16_raw{b}); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __xp_mkbf(xp::gpu::f2bf_bits(f)); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __float2bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return xp::gpu::bf2f_bits(b.__x); }
#define XP_BBIN(name, op) inline __nv_bfloat16 name(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) op __bfloat162float(b)); }
XP_BBIN(__hadd, +) XP_BBIN(__hsub, -) XP_BBIN(__hmul, *) XP_BBIN(__hdiv, /)
#undef XP_BBIN
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return __nv_bfloat16((double)__bfloat162float(a) * __bfloat162float(b) + __bfloat162float(c));
}
inline __nv_bfloat16 operator+(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __hadd(a, b); }
inline __nv_bfloat16 operator-(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __hsub(a, b); }
inline __nv_bfloat16 operator*(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __hmul(a, b); }
inline __nv_bfloat16 operator/(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __hdiv(a, b); }
inline __nv_bfloat16 &operator+=(__nv_bfloat16 &a, const __nv_bfloat16 &b) { return a = a + b; }
inline __nv_bfloat16 &operator*=(__nv_bfloat16 &a, const __nv_bfloat16 &b) { return a = a * b; }
inline __nv_bfloat16 operator-(const __nv_bfloat16 &a) { return __xp_mkbf((uint16_t)(a.__x ^ 0x8000)); }
inline bool operator<(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __bfloat162float(a) < __bfloat162float(b); }
inline bool operator>(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __bfloat162float(a) > __bfloat162float(b); }
inline bool operator==(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __bfloat162float(a) == __bfloat162float(b); }
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) >= __bfloat162float(b) ? a : b; }
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) <= __bfloat162float(b) ? a : b; }

// conversions (cuda_bf16.h / HIP amd_hip_bf16.h): every one is the exact value rounded once in
// the named mode (_rn nearest-even, _rz toward zero, _rd down, _ru up); bf16 -> integer: NaN is
// 0, out-of-range values saturate (as the PTX cvt.*i.bf16 instructions).
namespace xp { namespace gpu {
inline long double bf_val(uint16_t b) { return (long double)bf2f_bits(b); }
inline uint16_t bf_next_up(uint16_t b) {
  if (b == 0x8000) return 0x0001;
  if (b == 0x7f80) return b;
  return (uint16_t)((b & 0x8000) ? b - 1 : b + 1);
}
inline uint16_t bf_next_down(uint16_t b) {
  if (b == 0x0000) return 0x8001;
  if (b == 0xff80) return b;
  return (uint16_t)((b & 0x8000) ? b + 1 : b - 1);
}
// mode: 0 nearest-even, 1 toward zero, 2 down (-inf), 3 up (+inf)
inline uint16_t ld2bf_bits(long double v, int mode) {
  if (v != v) return 0x7fff;
  uint16_t lo = f2bf_bits((float)v), hi = lo;           // within an ulp of v
  while (bf_val(lo) > v) lo = bf_next_down(lo);         // lo: the largest bf16 <= v
  while (bf_val(hi) < v) hi = bf_next_up(hi);           // hi: the smallest bf16 >= v
  if (lo == hi || bf_val(lo) == v) return lo;
  if (bf_val(hi) == v) return hi;
  switch (mode) {
    case 1: return v > 0 ? lo : hi;
    case 2: return lo;
    case 3: return hi;
    default: break;
  }
  // nearest: beyond the largest finite value the midpoint is max + ulp/2 (IEEE overflow rule)
  long double l = bf_val(lo), h = bf_val(hi);
  long double mid = std::isinf(h) ? l + std::ldexp((long double)1, 119)
                  : std::isinf(l) ? h - std::ldexp((long double)1, 119) : (l + h) / 2;
  if (v < mid) return lo;
  if (v > mid) return hi;
  return (lo & 1) ? hi : lo;
}
template <class I> inline I bf2int(uint16_t b, int mode) {
  float f = bf2f_bits(b);
  if (f != f) return 0;
  long double r = mode == 0 ? std::nearbyint((long double)f) : mode == 1 ? std::trunc((long double)f)
                : mode == 2 ? std::floor((long double)f) : std::ceil((long double)f);
  if (r <= (long double)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  if (r >= (long double)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  return (I)r;
}
}}  // namespace xp::gpu

inline __nv_bfloat16 __double2bfloat16(double d) { return __xp_mkbf(xp::gpu::ld2bf_bits(d, 0)); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) { return __xp_mkbf(xp::gpu::ld2bf_bits(f, 1)); }
inline __nv_bfloat16 __float2bfloat16_rd(float f) { return __xp_mkbf(xp::gpu::ld2bf_bits(f, 2)); }
inline __nv_bfloat16 __float2bfloat16_ru(float f) { return __xp_mkbf(xp::gpu::ld2bf_bits(f, 3)); }
#define XP_I2BF(name, T)                                                                          \
  inline __nv_bfloat16 name##_rn(T v) { return __xp_mkbf(xp::gpu::ld2bf_bits((long double)v, 0)); } \
  inline __nv_bfloat16 name##_rz(T v) { return __xp_mkbf(xp::gpu::ld2bf_bits((long double)v, 1)); } \
  inline __nv_bfloat16 name##_rd(T v) { return __xp_mkbf(xp::gpu::ld2bf_bits((long double)v, 2)); } \
  inline __nv_bfloat16 name##_ru(T v) { return __xp_mkbf(xp::gpu::ld2bf_bits((long double)v, 3)); }
XP_I2BF(__int2bfloat16, int) XP_I2BF(__uint2bfloat16, unsigned int) XP_I2BF(__short2bfloat16, short)
XP_I2BF(__ushort2bfloat16, unsigned short) XP_I2BF(__ll2bfloat16, long long)
XP_I2BF(__ull2bfloat16, unsigned long long)
#undef XP_I2BF
#define XP_BF2I(name, T)                                                                          \
  inline T name##_rn(__nv_bfloat16 b) { return xp::gpu::bf2int<T>(b.__x, 0); }                  \
  inline T name##_rz(__nv_bfloat16 b) { return xp::gpu::bf2int<T>(b.__x, 1); }                  \
  inline T name##_rd(__nv_bfloat16 b) { return xp::gpu::bf2int<T>(b.__x, 2); }                  \
  inline T name##_ru(__nv_bfloat16 b) { return xp::gpu::bf2int<T>(b.__x, 3); }
XP_BF2I(__bfloat162int, int) XP_BF2I(__bfloat162uint, unsigned int) XP_BF2I(__bfloat162short, short)
XP_BF2I(__bfloat162ushort, unsigned short) XP_BF2I(__bfloat162ll, long long)
XP_BF2I(__bfloat162ull, unsigned long long)
#undef XP_BF2I
inline signed char __bfloat162char_rz(__nv_bfloat16 b) { return xp::gpu::bf2int<signed char>(b.__x, 1); }
inline unsigned char __bfloat162uchar_rz(__nv_bfloat16 b) { return xp::gpu::bf2int<unsigned char>(b.__x, 1); }
inline short __bfloat16_as_short(__nv_bfloat16 b) { return (short)b.__x; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
inline __nv_bfloat16 __short_as_bfloat16(short s) { return __xp_mkbf((uint16_t)s); }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { return __xp_mkbf(s); }

inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return __xp_mkbf((uint16_t)(a.__x ^ 0x8000)); }
inline __nv_bfloat16 __habs(__nv_bfloat16 a) { return __xp_mkbf((uint16_t)(a.__x & 0x7fff)); }
inline bool __hisnan(__nv_bfloat16 a) { return (a.__x & 0x7fff) > 0x7f80; }
inline int __hisinf(__nv_bfloat16 a) { return (a.__x & 0x7fff) == 0x7f80 ? ((a.__x & 0x8000) ? -1 : 1) : 0; }
#define XP_BCMP(name, op) inline bool name(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) op __bfloat162float(b); }
XP_BCMP(__heq, ==) XP_BCMP(__hne, !=) XP_BCMP(__hlt, <) XP_BCMP(__hle, <=) XP_BCMP(__hgt, >) XP_BCMP(__hge, >=)
#undef XP_BCMP
inline bool operator!=(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { float x = __bfloat162float(a), y = __bfloat162float(b); return x != y; }
inline bool operator<=(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __bfloat162float(a) <= __bfloat162float(b); }
inline bool operator>=(const __nv_bfloat16 &a, const __nv_bfloat16 &b) { return __bfloat162float(a) >= __bfloat162float(b); }
inline __nv_bfloat16 &operator-=(__nv_bfloat16 &a, const __nv_bfloat16 &b) { return a = a - b; }
inline __nv_bfloat16 &operator/=(__nv_bfloat16 &a, const __nv_bfloat16 &b) { return a = a / b; }

// __nv_bfloat162: pairs, lane moves, per-lane arithmetic
inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162(a, a); }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__float2bfloat16(f), __float2bfloat16(f)); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__float2bfloat16(a), __float2bfloat16(b)); }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __nv_bfloat162(__float2bfloat16(f.x), __float2bfloat16(f.y)); }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return make_float2(__bfloat162float(h.x), __bfloat162float(h.y)); }
inline float __low2float(__nv_bfloat162 h) { return __bfloat162float(h.x); }
inline float __high2float(__nv_bfloat162 h) { return __bfloat162float(h.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 h) { return __nv_bfloat162(h.x, h.x); }
inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 h) { return __nv_bfloat162(h.y, h.y); }
inline __nv_bfloat162 __lowhigh2highlow(__nv_bfloat162 h) { return __nv_bfloat162(h.y, h.x); }
inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
#define XP_B2BIN(name, f) inline __nv_bfloat162 name(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(f(a.x, b.x), f(a.y, b.y)); }
XP_B2BIN(__hadd2, __hadd) XP_B2BIN(__hsub2, __hsub) XP_B2BIN(__hmul2, __hmul) XP_B2BIN(__h2div, __hdiv)
XP_B2BIN(__hmax2, __hmax) XP_B2BIN(__hmin2, __hmin)
#undef XP_B2BIN
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) { return __nv_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __nv_bfloat162 __hneg2(__nv_bfloat162 a) { return __nv_bfloat162(__hneg(a.x), __hneg(a.y)); }
inline __nv_bfloat162 __habs2(__nv_bfloat162 a) { return __nv_bfloat162(__habs(a.x), __habs(a.y)); }
inline __nv_bfloat162 operator+(const __nv_bfloat162 &a, const __nv_bfloat162 &b) { return __hadd2(a, b); }
inline __nv_bfloat162 operator-(const __nv_bfloat162 &a, const __nv_bfloat162 &b) { return __hsub2(a, b); }
inline __nv_bfloat162 operator*(const __nv_bfloat162 &a, const __nv_bfloat162 &b) { return __hmul2(a, b); }
inline __nv_bfloat162 operator/(const __nv_bfloat162 &a, const __nv_bfloat162 &b) { return __h2div(a, b); }
inline __nv_bfloat162 &operator+=(__nv_bfloat162 &a, const __nv_bfloat162 &b) { return a = a + b; }
inline __nv_bfloat162 &operator-=(__nv_bfloat162 &a, const __nv_bfloat162 &b) { return a = a - b; }
inline __nv_bfloat162 &operator*=(__nv_bfloat162 &a, const __nv_bfloat162 &b) { return a = a * b; }
inline __nv_bfloat162 operator-(const __nv_bfloat162 &a) { return __hneg2(a); }

#ifdef XP_PLATFORM_HIP
typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
typedef __nv_bfloat16 hip_bfloat16;
inline __nv_bfloat16 __float2bfloat16_hip(float f) { return __float2bfloat16(f); }
#endif
