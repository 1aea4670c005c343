// xp_gpu_device.h - device built-in functions: warp shuffles and votes (as warp collectives),
// atomics (plain read-modify-write: one OS thread, no preemption inside a fiber), the CUDA
// math/intrinsic functions that libm lacks, cache-hinted loads, bit tricks.
#pragma once
#include <cmath>
#include <climits>
#include <cstring>
#include <type_traits>
#include "xp_gpu_sched.h"
#include "xp_gpu_half.h"

namespace xp { namespace gpu {

// ---------------------------------------------------------------- shuffles
enum ShflKind { SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_XOR, SHFL_RAW };  // RAW: source lane = arg % warpSize (ds_bpermute, readlane)

template <class T>
struct ShflLane { T v; int kind; long long arg; int width; T out; };

// Source lane of a shuffle (PLATFORMS.md §3 / PTX shfl semantics for CUDA; HIP's
// amd_warp_functions.h formulas for HIP). Returns the lane itself for "keep own value".
inline int shfl_source(int lane, int kind, long long arg, int width) {
  if (kind == SHFL_RAW) return (int)(arg & (kWarp - 1));
#ifdef XP_PLATFORM_HIP
  int base = lane & ~(width - 1);
  long long idx;
  switch (kind) {
    case SHFL_IDX: idx = (arg & (width - 1)) + base; break;
    case SHFL_UP: idx = lane - (long long)(unsigned)arg; if (idx < base) idx = lane; break;
    case SHFL_DOWN: idx = ((lane & (width - 1)) + (long long)(unsigned)arg) >= width ? lane : lane + (long long)(unsigned)arg; break;
    default: idx = lane ^ (int)arg; if (idx >= ((lane + width) & ~(width - 1))) idx = lane; break;
  }
  return (int)(idx & 63);   // ds_bpermute uses address bits [7:2]
#else
  int segmask = (32 - width) & 31;
  int bval = (int)(arg & 31);
  int maxLane, j;
  bool ok;
  switch (kind) {
    case SHFL_IDX: maxLane = (lane & segmask) | (31 & ~segmask); j = (lane & segmask) | (bval & ~segmask); ok = j <= maxLane; break;
    case SHFL_UP: maxLane = lane & segmask; j = lane - bval; ok = j >= maxLane; break;
    case SHFL_DOWN: maxLane = (lane & segmask) | (31 & ~segmask); j = lane + bval; ok = j <= maxLane; break;
    default: maxLane = (lane & segmask) | (31 & ~segmask); j = lane ^ bval; ok = j <= maxLane; break;
  }
  return ok ? j : lane;
#endif
}

template <class T>
inline void shfl_resolve(WarpGroup &g) {
  for (int l = 0; l < kWarp; ++l) {
    if (!(g.arrived >> l & 1)) continue;
    ShflLane<T> *d = static_cast<ShflLane<T> *>(g.data[l]);
    int src = shfl_source(l, d->kind, d->arg, d->width);
    if (g.arrived >> src & 1) {
      d->out = static_cast<ShflLane<T> *>(g.data[src])->v;
    } else {
      XP_RULE(false, "%s: lane %d reads lane %d, which did not take part (exited or not in the mask): undefined",
              g.what, l, src);
      LaunchState &L = launch_state();
      if (!L.warned_lanes) {
        L.warned_lanes = true;
        warn("kernel %s: %s reads lane %d of warp %d, which did not take part; using the reader's own value",
             L.name, g.what, src, g.warp);
      }
      d->out = d->v;
    }
  }
}

template <class T>
inline T shfl(lanemask_t mask, T v, int kind, long long arg, int width, const char *what = "warp shuffle") {
  static_assert(std::is_trivially_copyable<T>::value, "shuffled type must be trivially copyable");
  XP_RULE(width > 0 && width <= kWarp && (width & (width - 1)) == 0,
          "warp shuffle width %d must be a power of two <= warpSize (%d)", width, kWarp);
  if (width <= 0 || width > kWarp || (width & (width - 1))) width = kWarp;
  ShflLane<T> d{v, kind, arg, width, v};
  warp_collective(mask, &shfl_resolve<T>, what, &d);
  return d.out;
}

// ---------------------------------------------------------------- votes and reductions
struct VoteLane { long long v; lanemask_t ballot, arrived; long long red[6]; };
inline void vote_resolve(WarpGroup &g) {
  lanemask_t ballot = 0;
  long long sum = 0, mn = LLONG_MAX, mx = LLONG_MIN, a = -1, o = 0, x = 0;
  for (int l = 0; l < kWarp; ++l) {
    if (!(g.arrived >> l & 1)) continue;
    long long v = static_cast<VoteLane *>(g.data[l])->v;
    if (v) ballot |= 1ull << l;
    sum += v; mn = std::min(mn, v); mx = std::max(mx, v); a &= v; o |= v; x ^= v;
  }
  for (int l = 0; l < kWarp; ++l) {
    if (!(g.arrived >> l & 1)) continue;
    VoteLane *d = static_cast<VoteLane *>(g.data[l]);
    d->ballot = ballot;
    d->arrived = g.arrived;
    d->red[0] = sum; d->red[1] = mn; d->red[2] = mx; d->red[3] = a; d->red[4] = o; d->red[5] = x;
  }
}
inline VoteLane vote(lanemask_t mask, long long v, const char *what) {
  VoteLane d{v, 0, 0, {0, 0, 0, 0, 0, 0}};
  warp_collective(mask, &vote_resolve, what, &d);
  return d;
}

struct MatchLane { unsigned long long v; lanemask_t out; bool all; };
inline void match_resolve(WarpGroup &g) {
  for (int l = 0; l < kWarp; ++l) {
    if (!(g.arrived >> l & 1)) continue;
    MatchLane *d = static_cast<MatchLane *>(g.data[l]);
    lanemask_t m = 0;
    for (int s = 0; s < kWarp; ++s)
      if ((g.arrived >> s & 1) && static_cast<MatchLane *>(g.data[s])->v == d->v) m |= 1ull << s;
    d->out = m;
    d->all = m == g.arrived;
  }
}

typedef std::conditional<kWarp == 64, unsigned long long, unsigned>::type ballot_t;
inline lanemask_t lane_bit() { return 1ull << cur_thread().lane; }
inline lanemask_t full_mask() { return kWarp == 64 ? ~0ull : 0xffffffffull; }

}}  // namespace xp::gpu

// ---------------------------------------------------------------- CUDA warp functions
template <class T> inline T __shfl_sync(unsigned long long mask, T v, int src, int width = warpSize) { return xp::gpu::shfl(mask, v, xp::gpu::SHFL_IDX, src, width); }
template <class T> inline T __shfl_up_sync(unsigned long long mask, T v, unsigned delta, int width = warpSize) { return xp::gpu::shfl(mask, v, xp::gpu::SHFL_UP, delta, width); }
template <class T> inline T __shfl_down_sync(unsigned long long mask, T v, unsigned delta, int width = warpSize) { return xp::gpu::shfl(mask, v, xp::gpu::SHFL_DOWN, delta, width); }
template <class T> inline T __shfl_xor_sync(unsigned long long mask, T v, int lane_mask, int width = warpSize) { return xp::gpu::shfl(mask, v, xp::gpu::SHFL_XOR, lane_mask, width); }
inline xp::gpu::ballot_t __ballot_sync(unsigned long long mask, int pred) { return (xp::gpu::ballot_t)xp::gpu::vote(mask, pred != 0, "__ballot_sync").ballot; }
inline int __any_sync(unsigned long long mask, int pred) { return xp::gpu::vote(mask, pred != 0, "__any_sync").ballot != 0; }
inline int __all_sync(unsigned long long mask, int pred) { auto d = xp::gpu::vote(mask, pred != 0, "__all_sync"); return d.ballot == d.arrived; }
inline int __uni_sync(unsigned long long mask, int pred) { auto d = xp::gpu::vote(mask, pred != 0, "__uni_sync"); return d.ballot == 0 || d.ballot == d.arrived; }
inline void __syncwarp(unsigned long long mask = ~0ull) {
  if (!xp::gpu::in_kernel()) return;
  xp::gpu::warp_collective(mask, &xp::gpu::syncwarp_resolve, "__syncwarp", nullptr);
}
inline unsigned __reduce_add_sync(unsigned mask, unsigned v) { return (unsigned)xp::gpu::vote(mask, v, "__reduce_add_sync").red[0]; }
inline int __reduce_add_sync(unsigned mask, int v) { return (int)xp::gpu::vote(mask, v, "__reduce_add_sync").red[0]; }
inline unsigned __reduce_min_sync(unsigned mask, unsigned v) { return (unsigned)xp::gpu::vote(mask, v, "__reduce_min_sync").red[1]; }
inline int __reduce_min_sync(unsigned mask, int v) { return (int)xp::gpu::vote(mask, v, "__reduce_min_sync").red[1]; }
inline unsigned __reduce_max_sync(unsigned mask, unsigned v) { return (unsigned)xp::gpu::vote(mask, v, "__reduce_max_sync").red[2]; }
inline int __reduce_max_sync(unsigned mask, int v) { return (int)xp::gpu::vote(mask, v, "__reduce_max_sync").red[2]; }
inline unsigned __reduce_and_sync(unsigned mask, unsigned v) { return (unsigned)xp::gpu::vote(mask, v, "__reduce_and_sync").red[3]; }
inline unsigned __reduce_or_sync(unsigned mask, unsigned v) { return (unsigned)xp::gpu::vote(mask, v, "__reduce_or_sync").red[4]; }
inline unsigned __reduce_xor_sync(unsigned mask, unsigned v) { return (unsigned)xp::gpu::vote(mask, v, "__reduce_xor_sync").red[5]; }
template <class T> inline unsigned __match_any_sync(unsigned mask, T v) {
  xp::gpu::MatchLane d{0, 0, false};
  memcpy(&d.v, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  xp::gpu::warp_collective(mask, &xp::gpu::match_resolve, "__match_any_sync", &d);
  return (unsigned)d.out;
}
template <class T> inline unsigned __match_all_sync(unsigned mask, T v, int *pred) {
  xp::gpu::MatchLane d{0, 0, false};
  memcpy(&d.v, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  xp::gpu::warp_collective(mask, &xp::gpu::match_resolve, "__match_all_sync", &d);
  *pred = d.all;
  return d.all ? (unsigned)d.out : 0u;
}
// Lanes of the warp that have not exited (hardware: the converged lanes; see warp.toml).
inline xp::gpu::lanemask_t __xp_activemask() {
  xp::gpu::require_device("__activemask");
  auto &b = xp::gpu::block_state();
  return b.warps[xp::gpu::cur_thread().warp].live;
}
inline unsigned __lanemask_lt() { return (unsigned)(xp::gpu::lane_bit() - 1); }
// n-th set bit of mask counted from bit base (inclusive), towards the MSB for offset > 0 and the LSB
// for offset < 0; 0xffffffff when there is none (PTX fns). offset 0: base if its bit is set.
inline unsigned __xp_fns(unsigned long long mask, unsigned base, int offset, int bits) {
  if ((int)base >= bits) return 0xffffffffu;
  if (offset == 0) return (mask >> base & 1) ? base : 0xffffffffu;
  int step = offset > 0 ? 1 : -1, left = offset > 0 ? offset : -offset;
  for (int b = (int)base; b >= 0 && b < bits; b += step)
    if ((mask >> b & 1) && --left == 0) return (unsigned)b;
  return 0xffffffffu;
}
inline unsigned __fns(unsigned mask, unsigned base, int offset) { return __xp_fns(mask, base, offset, 32); }
inline unsigned __lanemask_le() { return (unsigned)((xp::gpu::lane_bit() << 1) - 1); }
inline unsigned __lanemask_eq() { return (unsigned)xp::gpu::lane_bit(); }

inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
[[noreturn]] inline void __trap() { xp::fail(xp::FAIL_ABORT, "__trap() executed"); }
inline void __brkpt() {}
inline long long clock64() { return (long long)std::chrono::steady_clock::now().time_since_epoch().count(); }
inline unsigned long long __globaltimer() { return (unsigned long long)clock64(); }

// ---------------------------------------------------------------- atomics (return the old value)
#define XP_ATOMIC(name, T, expr) inline T name(T *p, T v) { T old = *p; *p = (expr); return old; }
#define XP_ATOMIC_ALL(name, expr) \
  XP_ATOMIC(name, int, expr) XP_ATOMIC(name, unsigned int, expr) XP_ATOMIC(name, unsigned long long, expr) \
  XP_ATOMIC(name, long long, expr) XP_ATOMIC(name, unsigned long, expr) XP_ATOMIC(name, long, expr)
XP_ATOMIC_ALL(atomicAdd, old + v)
XP_ATOMIC(atomicAdd, float, old + v) XP_ATOMIC(atomicAdd, double, old + v)
XP_ATOMIC(atomicAdd, __half, __hadd(old, v)) XP_ATOMIC(atomicAdd, __nv_bfloat16, __hadd(old, v))
XP_ATOMIC(atomicAdd, __half2, __hadd2(old, v))
XP_ATOMIC(atomicSub, int, old - v) XP_ATOMIC(atomicSub, unsigned int, old - v)
XP_ATOMIC(atomicSub, unsigned long long, old - v) XP_ATOMIC(atomicSub, float, old - v)
XP_ATOMIC_ALL(atomicExch, v) XP_ATOMIC(atomicExch, float, v) XP_ATOMIC(atomicExch, double, v)
XP_ATOMIC_ALL(atomicMin, v < old ? v : old) XP_ATOMIC_ALL(atomicMax, v > old ? v : old)
XP_ATOMIC(atomicMin, float, std::fmin(old, v)) XP_ATOMIC(atomicMax, float, std::fmax(old, v))
XP_ATOMIC(atomicMin, double, std::fmin(old, v)) XP_ATOMIC(atomicMax, double, std::fmax(old, v))
XP_ATOMIC_ALL(atomicAnd, old & v) XP_ATOMIC_ALL(atomicOr, old | v) XP_ATOMIC_ALL(atomicXor, old ^ v)
XP_ATOMIC(atomicInc, unsigned int, old >= v ? 0u : old + 1)
XP_ATOMIC(atomicDec, unsigned int, (old == 0 || old > v) ? v : old - 1)
#undef XP_ATOMIC_ALL
#undef XP_ATOMIC
#define XP_CAS(T) inline T atomicCAS(T *p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
XP_CAS(int) XP_CAS(unsigned int) XP_CAS(unsigned long long) XP_CAS(unsigned short) XP_CAS(long long) XP_CAS(unsigned long)
#undef XP_CAS
#define XP_ATOMIC_SCOPE(name) \
  template <class... A> inline auto name##_block(A... a) { return name(a...); } \
  template <class... A> inline auto name##_system(A... a) { return name(a...); }
XP_ATOMIC_SCOPE(atomicAdd) XP_ATOMIC_SCOPE(atomicSub) XP_ATOMIC_SCOPE(atomicExch) XP_ATOMIC_SCOPE(atomicMin)
XP_ATOMIC_SCOPE(atomicMax) XP_ATOMIC_SCOPE(atomicAnd) XP_ATOMIC_SCOPE(atomicOr) XP_ATOMIC_SCOPE(atomicXor)
XP_ATOMIC_SCOPE(atomicInc) XP_ATOMIC_SCOPE(atomicDec) XP_ATOMIC_SCOPE(atomicCAS)
#undef XP_ATOMIC_SCOPE

// ---------------------------------------------------------------- loads with cache hints
template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T __ldcg(const T *p) { return *p; }
template <class T> inline T __ldca(const T *p) { return *p; }
template <class T> inline T __ldcs(const T *p) { return *p; }
template <class T> inline T __ldlu(const T *p) { return *p; }
template <class T> inline T __ldcv(const T *p) { return *p; }
template <class T> inline void __stwb(T *p, T v) { *p = v; }
template <class T> inline void __stcg(T *p, T v) { *p = v; }
template <class T> inline void __stcs(T *p, T v) { *p = v; }
template <class T> inline void __stwt(T *p, T v) { *p = v; }

// ---------------------------------------------------------------- math (CUDA Math API names libm lacks)
// xp:host-definable begin -- functions of their arguments only (no thread, block or memory
// state): a lift defines them on the host from this text (platforms.device_functions)
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float *s, float *c) { *s = sinf(x); *c = cosf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float fdividef(float x, float y) { return x / y; }
inline double __ddiv_rn(double x, double y) { return x / y; }
inline float __fdiv_rn(float x, float y) { return x / y; }
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fsub_rn(float x, float y) { return x - y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
inline float __fmaf_rz(float x, float y, float z) { return fmaf(x, y, z); }
inline double __fma_rn(double x, double y, double z) { return fma(x, y, z); }
inline double __dadd_rn(double x, double y) { return x + y; }
inline double __dmul_rn(double x, double y) { return x * y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline double __dsqrt_rn(double x) { return sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
inline float saturatef(float x) { return __saturatef(x); }
inline float sinpif(float x) { return (float)sin(M_PI * (double)x); }
inline float cospif(float x) { return (float)cos(M_PI * (double)x); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline double cospi(double x) { return cos(M_PI * x); }
inline void sincospif(float x, float *s, float *c) { *s = sinpif(x); *c = cospif(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline double erfinv(double y) {
  if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
  if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) { w -= 2.5; x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w; x = -4.39150654e-06 + x * w;
    x = 0.00021858087 + x * w; x = -0.00125372503 + x * w; x = -0.00417768164 + x * w; x = 0.246640727 + x * w; x = 1.50140941 + x * w; }
  else { w = sqrt(w) - 3.0; x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w; x = -0.00367342844 + x * w;
    x = 0.00573950773 + x * w; x = -0.0076224613 + x * w; x = 0.00943887047 + x * w; x = 1.00167406 + x * w; x = 2.83297682 + x * w; }
  x *= y;
  for (int i = 0; i < 2; ++i) x -= (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));  // Newton polish
  return x;
}
inline float erfinvf(float y) { return (float)erfinv((double)y); }
inline float erfcinvf(float y) { return (float)erfinv(1.0 - (double)y); }
inline double erfcinv(double y) { return erfinv(1.0 - y); }
inline float normf(int n, const float *a) { double s = 0; for (int i = 0; i < n; ++i) s += (double)a[i] * a[i]; return (float)sqrt(s); }
inline float norm3df(float a, float b, float c) { return sqrtf(a * a + b * b + c * c); }
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline float norm4df(float a, float b, float c, float d) { return sqrtf(a * a + b * b + c * c + d * d); }
inline float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }

inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline int __float2int_rd(float x) { return (int)floorf(x); }
inline int __float2int_ru(float x) { return (int)ceilf(x); }
inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
inline long long __float2ll_rz(float x) { return (long long)x; }
inline int __double2int_rn(double x) { return (int)nearbyint(x); }
inline int __double2int_rz(double x) { return (int)x; }
inline float __double2float_rn(double x) { return (float)x; }
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline float __ll2float_rn(long long x) { return (float)x; }
inline double __int2double_rn(int x) { return (double)x; }
inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
inline unsigned __float_as_uint(float x) { unsigned i; memcpy(&i, &x, 4); return i; }
inline float __int_as_float(int i) { float x; memcpy(&x, &i, 4); return x; }
inline float __uint_as_float(unsigned i) { float x; memcpy(&x, &i, 4); return x; }
inline long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
inline double __longlong_as_double(long long i) { double x; memcpy(&x, &i, 8); return x; }
inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return (int)(__double_as_longlong(x) & 0xffffffff); }
inline double __hiloint2double(int hi, int lo) { return __longlong_as_double(((long long)hi << 32) | (unsigned)lo); }

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) { unsigned r = 0; for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i); return r; }
inline unsigned long long __brevll(unsigned long long x) { unsigned long long r = 0; for (int i = 0; i < 64; ++i) r |= ((x >> i) & 1ull) << (63 - i); return r; }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) { unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned)((v << (s & 31)) >> 32); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) { unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned)(v >> (s & 31)); }
inline int __mul24(int x, int y) { return (int)(((long long)(x << 8 >> 8)) * (y << 8 >> 8)); }
inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffff) * (y & 0xffffff); }
inline int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
inline unsigned __umulhi(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x * y) >> 32); }
inline long long __mul64hi(long long x, long long y) { return (long long)(((__int128)x * y) >> 64); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) { return (unsigned long long)(((unsigned __int128)x * y) >> 64); }
inline unsigned __sad(int x, int y, unsigned z) { return z + (unsigned)(x > y ? x - y : y - x); }
inline unsigned __usad(unsigned x, unsigned y, unsigned z) { return z + (x > y ? x - y : y - x); }
inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
inline unsigned __uhadd(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x + y) >> 1); }
inline unsigned __urhadd(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x + y + 1) >> 1); }
// xp:host-definable end

// min/max overloads as CUDA's math_functions.hpp declares them (not std templates).
#define XP_MINMAX(A, B, R) \
  inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; } \
  inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
XP_MINMAX(int, int, int) XP_MINMAX(unsigned int, unsigned int, unsigned int)
XP_MINMAX(int, unsigned int, unsigned int) XP_MINMAX(unsigned int, int, unsigned int)
XP_MINMAX(long, long, long) XP_MINMAX(unsigned long, unsigned long, unsigned long)
XP_MINMAX(long long, long long, long long) XP_MINMAX(unsigned long long, unsigned long long, unsigned long long)
XP_MINMAX(long long, unsigned long long, unsigned long long) XP_MINMAX(unsigned long long, long long, unsigned long long)
#undef XP_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
