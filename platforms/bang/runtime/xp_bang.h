// xp_bang.h - the BANG C virtual device (CPU emulation of a Cambricon MLU).
//
// A BANG source is turned by platforms/bang/emulate.py::prepare() into one C++17 translation unit
// that includes this header first. What lives here:
//   * qualifiers (__mlu_global__ ...) as plain C++; types half (= _Float16, IEEE binary16, every
//     operation rounded to nearest-even), bfloat16_t (float arithmetic + one RNE rounding);
//   * built-in variables taskId, coreId, clusterId ... as GLOBAL variables that the scheduler
//     rewrites on every fiber switch (host code may still declare locals with those names);
//   * memory spaces: NRAM / WRAM / LDRAM per core, SRAM per cluster. Each space has a fixed
//     "window" address range; the window shows the current core's (cluster's) arena, remapped
//     with mmap(MAP_FIXED) of a memfd on every switch. `__nram__ T buf[N];` is rewritten by
//     prepare() into `static T (&buf)[N] = *(T(*)[N])xpb::site(XPB_NRAM, sizeof(T[N]), ...);`,
//     i.e. a fixed offset in the window (like a linker would place it), valid for every core.
//     Hence xpb::space_of(p) knows the space of any pointer, and intrinsics/memcpy check bounds
//     against the arena's capacity;
//   * tasks as fibers (one OS thread, deterministic round-robin at barriers), __sync_* barriers;
//   * __memcpy / fills / CNRT host API / <<<>>> launcher. The __bang_* intrinsics are GENERATED
//     from platforms/bang/intrinsics/*.toml into xp_bang_intrinsics.gen.h (included at the end).
// Design choices are marked (design choice); PLATFORMS.md §1, §2 and §6 are the specification.
#pragma once
#include "xp_core.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// ---------------------------------------------------------------- arch of the device profile
// prepare() defines these from the profile; defaults = mtp_372.
#ifndef __BANG_ARCH__
#define __BANG_ARCH__ 372
#endif
#ifndef XPB_ARCH_GROUP          // 2 = (m)tp_2xx, 3 = (m)tp_3xx, 5 = (m)tp_5xx
#define XPB_ARCH_GROUP (__BANG_ARCH__ / 100)
#endif
#ifndef __MLU_NRAM_SIZE__
#define __MLU_NRAM_SIZE__ 768
#endif
#ifndef __MLU_WRAM_SIZE__
#define __MLU_WRAM_SIZE__ 1024
#endif
#ifndef __MLU_SRAM_SIZE__
#define __MLU_SRAM_SIZE__ 4096
#endif
#ifndef XPB_HAS_SRAM_ARCH       // 0 on tp_* parts (BG Table 3.2)
#define XPB_HAS_SRAM_ARCH 1
#endif
#define __BANG__ 1
#define __MLU_H__ 1

// ---------------------------------------------------------------- qualifiers
// (the C++ front-end, platforms/common/cxx, parses with clang in CUDA mode: it defines
// XP_CLANG_PARSE and these qualifiers as clang attributes first)
#ifndef XP_CLANG_PARSE
#define __mlu_global__
#define __mlu_entry__
// __mlu_func__ is an attribute in cncc (mlu_device, always_inline), not the 'inline' keyword:
// 'template <...> __mlu_func__ inline T f()' is valid BANG C (mmcv's helpers), which a
// '#define __mlu_func__ inline' would turn into g++'s "duplicate 'inline'" error. The unit
// is one translation unit, so a non-inline definition is fine.
#define __mlu_func__ __attribute__((unused))
#define __mlu_device__
#define __mlu_host__
#define __mlu_const__
#define __mlu_builtin__ inline
#endif
#define __bang_printf printf
#ifndef XP_CLANG_PARSE
// prepare() rewrites declarations carrying these; any left (e.g. on a pointer) mean nothing.
#define __nram__
#define __wram__
#define __ldram__
#define __mlu_shared__
#endif

// ---------------------------------------------------------------- types
typedef _Float16 half;
struct bfloat16_t {
  unsigned short x;
  bfloat16_t() = default;
  static unsigned short from_float(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    return (unsigned short)(u >> 16);
  }
  bfloat16_t(float f) : x(from_float(f)) {}
  bfloat16_t(double f) : x(from_float((float)f)) {}
  bfloat16_t(int v) : x(from_float((float)v)) {}
  bfloat16_t(unsigned v) : x(from_float((float)v)) {}
  bfloat16_t(half v) : x(from_float((float)v)) {}
  operator float() const {
    uint32_t u = (uint32_t)x << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  bfloat16_t &operator+=(float v) { return *this = bfloat16_t(float(*this) + v); }
  bfloat16_t &operator-=(float v) { return *this = bfloat16_t(float(*this) - v); }
  bfloat16_t &operator*=(float v) { return *this = bfloat16_t(float(*this) * v); }
  bfloat16_t &operator/=(float v) { return *this = bfloat16_t(float(*this) / v); }
};
typedef bfloat16_t bfloat16;
struct int4x2_t { signed char v; };  // two int4 in one byte (low nibble = element 0)

// ---------------------------------------------------------------- built-in variables
// (design choice) globals, rewritten by the scheduler on every switch; PLATFORMS.md §1.2.
inline int taskIdX = 0, taskIdY = 0, taskIdZ = 0, taskId = 0;
inline int taskDimX = 1, taskDimY = 1, taskDimZ = 1, taskDim = 1;
inline int clusterId = 0, clusterDim = 0, coreId = 0, coreDim = 1;
inline bool __is_mpu() { return coreId == 0x80; }
inline bool __is_ipu() { return coreId != 0x80; }

// ---------------------------------------------------------------- helpers for intrinsic bodies
namespace xpb {
template <class T> struct same { typedef T type; };
template <class T> using same_t = typename same<T>::type;  // non-deduced parameter

template <class T> struct is_half_like : std::integral_constant<bool,
    std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value> {};
template <class T> struct is_floating : std::integral_constant<bool,
    std::is_floating_point<T>::value || is_half_like<T>::value> {};

// element -> double (exact for every element type)
template <class T> inline double f64(T v) { return (double)v; }
inline double f64(bfloat16_t v) { return (double)(float)v; }
inline double f64(half v) { return (double)(float)v; }
inline double f64(int4x2_t v) { return (double)v.v; }
// float accumulator type of an element type
template <class T> inline float f32(T v) { return (float)v; }
inline float f32(bfloat16_t v) { return (float)v; }

template <class T> inline bool isnan_(T v) { return is_floating<T>::value && f64(v) != f64(v); }

// double -> element: floats round to nearest even; integers: round half to even + saturate
// (design choice for fixed-point results).
template <class T> inline T from_f64(double v) {
  if constexpr (std::is_same<T, half>::value) return (half)v;  // one RNE rounding
  else if constexpr (std::is_same<T, bfloat16_t>::value) return bfloat16_t((float)v);
  else if constexpr (std::is_floating_point<T>::value) return (T)v;
  else {
    if (v != v) return (T)0;
    double r = std::nearbyint(v);
    if (r < (double)std::numeric_limits<T>::min()) return std::numeric_limits<T>::min();
    if (r > (double)std::numeric_limits<T>::max()) return std::numeric_limits<T>::max();
    return (T)r;
  }
}
// integer results wrap modulo 2^bits (design choice, PLATFORMS.md §2.0 leaves it open)
template <class T> inline T wrap(long long v) { return (T)(typename std::make_unsigned<T>::type)v; }

enum Round { RN, TZ, OZ, UP, DN, RD, RM };
// Round double v to an integer with the given mode (BG §5.1).
inline double round_int(double v, Round m) {
  switch (m) {
    case RN: return std::nearbyint(v);
    case TZ: return std::trunc(v);
    case OZ: return v < 0 ? std::floor(v) : std::ceil(v);
    case UP: return std::ceil(v);
    case DN: return std::floor(v);
    case RD: return std::round(v);           // nearest, ties away from zero
    case RM: return std::floor(v + 0.5);     // nearest, ties toward +inf (BG examples)
  }
  return v;
}
// float -> half with an explicit rounding mode (BG §5.1). Exact: candidates bracket v in double.
inline half f2h(float f, Round m) {
  half h = (half)f;  // RNE
  double v = f, hv = (double)(float)h;
  if (v != v || hv == v) return h;
  // the two halves bracketing v: h and its neighbour on v's side (stepped on the bit pattern)
  auto step = [](half x, bool up) -> half {
    uint16_t b; memcpy(&b, &x, 2);
    bool neg = b & 0x8000;
    if ((b & 0x7fff) == 0) { b = up ? 0x0001 : 0x8001; }
    else if (up != neg) b = (uint16_t)(b + 1);
    else b = (uint16_t)(b - 1);
    half r; memcpy(&r, &b, 2); return r;
  };
  half lo = h, hi = h;
  if (hv < v) hi = step(h, true); else lo = step(h, false);
  double lv = (double)(float)lo, uv = (double)(float)hi;
  if (std::isinf(lv) && lv > 0) lv = 65504.0, lo = (half)65504.0f;      // lo never +inf
  if (std::isinf(uv) && uv < 0) uv = -65504.0, hi = (half)-65504.0f;
  switch (m) {
    case RN: return h;
    case TZ: return v > 0 ? lo : hi;
    case OZ: return v > 0 ? hi : lo;
    case UP: return hi;
    case DN: return lo;
    case RD: { double dl = v - lv, du = uv - v; if (dl == du) return v > 0 ? hi : lo; return dl < du ? lo : hi; }
    case RM: { double dl = v - lv, du = uv - v; if (dl == du) return hi; return dl < du ? lo : hi; }
  }
  return h;
}
inline double exp2i(int e) { return std::ldexp(1.0, e); }

// accumulator of a product of A and B: int64 when both are integers, else float (fp32 MACs)
template <class A, class B> using acc_t = typename std::conditional<
    std::is_integral<A>::value && std::is_integral<B>::value, long long, float>::type;
template <class Acc, class T> inline Acc to_acc(T v) {
  if constexpr (std::is_integral<Acc>::value) return (Acc)v;
  else return (Acc)f32(v);
}
// scale of an integer matrix product: 2^fix_position when an operand is fixed point, else 1
template <class A, class B> inline double fix_scale(int fix_position) {
  return (std::is_integral<A>::value || std::is_integral<B>::value) ? exp2i(fix_position) : 1.0;
}

// element type a fill value of C++ type T writes (the real overloads are char/short/int/half/bf16/float)
template <class T> struct fill { typedef T type; };
template <> struct fill<double> { typedef float type; };
template <> struct fill<long double> { typedef float type; };
template <> struct fill<bool> { typedef signed char type; };
template <> struct fill<long> { typedef int type; };
template <> struct fill<unsigned long> { typedef unsigned int type; };
template <> struct fill<long long> { typedef int type; };
template <> struct fill<unsigned long long> { typedef unsigned int type; };
template <class T> using fill_t = typename fill<T>::type;

template <class T> inline T abs_(T v) {
  if constexpr (is_floating<T>::value) return (T)std::fabs(f32(v));
  else return (T)(v < 0 ? -v : v);
}
// division: integer division by zero gives 0 (after a strict-rule report), floats follow IEEE
template <class T> inline T div_(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    if (b == 0) return (T)0;
    return (T)(a / b);
  } else {
    return (T)(f32(a) / f32(b));
  }
}
template <class T> inline bool nonzero_all(const T *p, unsigned int n) {
  for (unsigned int i = 0; i < n; ++i) if (f64(p[i]) == 0) return false;
  return true;
}
// every element in [lo, hi] (NaN fails)
template <class T> inline bool all_in(const T *p, unsigned int n, double lo, double hi) {
  for (unsigned int i = 0; i < n; ++i) { double v = f64(p[i]); if (!(v >= lo && v <= hi)) return false; }
  return true;
}
}  // namespace xpb

// ---------------------------------------------------------------- memory spaces
enum { XPB_GDRAM = 0, XPB_NRAM = 1, XPB_WRAM = 2, XPB_SRAM = 3, XPB_LDRAM = 4, XPB_NSPACES = 5 };
// operand masks used by generated checks
#define XPB_M_GDRAM (1u << XPB_GDRAM)
#define XPB_M_NRAM (1u << XPB_NRAM)
#define XPB_M_WRAM (1u << XPB_WRAM)
#define XPB_M_SRAM (1u << XPB_SRAM)
#define XPB_M_LDRAM (1u << XPB_LDRAM)
#define XPB_M_ANY 0x1fu

namespace xpb {
inline const char *space_name(int s) {
  static const char *n[] = {"GDRAM", "NRAM", "WRAM", "SRAM", "LDRAM"};
  return n[s];
}

// One strict-rule violation: strict -> fail(strict); lenient -> one warning per rule site.
inline void violation(bool *warned, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
inline void violation(bool *warned, const char *fmt, ...) {
  char msg[900];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (xp::options().strict) xp::fail(xp::FAIL_STRICT, "%s", msg);
  if (!*warned) { *warned = true; xp::warn("%s", msg); }
}
#define XPB_RULE(cond, ...)                                                   \
  do {                                                                        \
    if (!(cond)) { static bool xpb_w_ = false; ::xpb::violation(&xpb_w_, __VA_ARGS__); } \
  } while (0)
#define XPB_ALIGNED(p, n) ((((uintptr_t)(const void *)(p)) % (n)) == 0)

// Window = fixed address range showing the current core's (cluster's) arena of one space.
struct Space {
  size_t reserve;            // bytes of one arena (window size), fixed at start-up
  char *window = nullptr;    // current core's view
  int fd = -1;               // memfd holding every slot's arena back to back
  int mapped_slot = -1;      // slot shown in the window
  size_t used = 0;           // bytes placed by sites (same offsets in every slot)
  // [offset, offset + bytes) of every declaration placed, in placement (= offset) order: an
  // operand that starts inside one must end inside it (C: a pointer stays in its array)
  std::vector<std::pair<size_t, size_t>> sites;
  std::vector<char *> views; // canonical view of each slot (created on demand)
  bool warned_cap = false;
};
inline Space *spaces() {
  static Space s[XPB_NSPACES] = {{0}, {16u << 20}, {16u << 20}, {32u << 20}, {16u << 20}};
  return s;
}
constexpr int kMaxSlots = 128;

inline void init_space(int sp) {
  Space &s = spaces()[sp];
  if (s.window) return;
  static const char *names[] = {"", "xpb-nram", "xpb-wram", "xpb-sram", "xpb-ldram"};
  s.fd = (int)syscall(SYS_memfd_create, names[sp], 0u);
  if (s.fd < 0 || ftruncate(s.fd, (off_t)(s.reserve * kMaxSlots)) != 0)
    xp::fail(xp::FAIL_MEMORY, "cannot create the %s arenas (memfd)", space_name(sp));
  size_t ps = xp::page_size();
  void *w = mmap(nullptr, s.reserve + ps, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (w == MAP_FAILED) xp::fail(xp::FAIL_MEMORY, "cannot reserve the %s window", space_name(sp));
  s.window = (char *)w;
  if (mmap(s.window, s.reserve, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s.fd, 0) == MAP_FAILED)
    xp::fail(xp::FAIL_MEMORY, "cannot map the %s window", space_name(sp));
  s.mapped_slot = 0;
  s.views.assign(kMaxSlots, nullptr);
  // the guard page after the window reports overruns as out-of-bounds accesses
  static const char *what[] = {"", "the NRAM arena", "the WRAM arena", "the SRAM arena", "the LDRAM arena"};
  xp::regions().push_back({s.window, s.reserve + ps, s.window, s.reserve, (int)xp::regions().size(), what[sp], true});
}
inline char *slot_view(int sp, int slot) {
  Space &s = spaces()[sp];
  init_space(sp);
  if (slot < 0 || slot >= kMaxSlots) xp::fail(xp::FAIL_RUNTIME, "too many cores/clusters (%d) for the emulator", slot);
  if (!s.views[slot]) {
    void *v = mmap(nullptr, s.reserve, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, s.fd, (off_t)(s.reserve * slot));
    if (v == MAP_FAILED) xp::fail(xp::FAIL_MEMORY, "cannot map %s arena %d", space_name(sp), slot);
    s.views[slot] = (char *)v;
  }
  return s.views[slot];
}
inline void map_slot(int sp, int slot) {
  Space &s = spaces()[sp];
  if (!s.window) return;  // space never used
  if (s.mapped_slot == slot) return;
  if (mmap(s.window, s.reserve, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s.fd, (off_t)(s.reserve * slot)) == MAP_FAILED)
    xp::fail(xp::FAIL_MEMORY, "cannot remap the %s window", space_name(sp));
  s.mapped_slot = slot;
}

inline long long capacity(int sp) {
  const xp_options_t &o = xp::options();
  switch (sp) {
    case XPB_NRAM: return o.nram_bytes;
    case XPB_WRAM: return o.wram_bytes;
    case XPB_SRAM: return o.sram_bytes;
    case XPB_LDRAM: return o.ldram_bytes;
  }
  return 0;
}

// Space of a pointer (anything outside the on-chip windows is off-chip GDRAM / host memory).
inline int space_of(const void *p, size_t *off = nullptr) {
  const char *c = (const char *)p;
  Space *s = spaces();
  for (int sp = 1; sp < XPB_NSPACES; ++sp)
    if (s[sp].window && c >= s[sp].window && c < s[sp].window + s[sp].reserve) {
      if (off) *off = (size_t)(c - s[sp].window);
      return sp;
    }
  return XPB_GDRAM;
}

// Launch state needed by sites (which slots to poison).
struct LaunchState {
  bool active = false;
  int core_slots = 0, cluster_slots = 0;
};
inline LaunchState &launch_state() { static LaunchState l; return l; }

inline void check_capacity(int sp) {
  Space &s = spaces()[sp];
  long long cap = capacity(sp);
  if ((long long)s.used > cap) {
    static bool w[XPB_NSPACES];
    violation(&w[sp], "%s over capacity: the __%s__ buffers need %zu bytes per %s, the device profile has %lld",
              space_name(sp), sp == XPB_SRAM ? "mlu_shared" : (sp == XPB_NRAM ? "nram" : sp == XPB_WRAM ? "wram" : "ldram"),
              s.used, sp == XPB_SRAM ? "cluster" : "core", cap);
  }
}

inline void fill_slots(int sp, size_t off, size_t len, int value) {
  if (!len) return;
  LaunchState &L = launch_state();
  int n = sp == XPB_SRAM ? L.cluster_slots : L.core_slots;
  for (int slot = 0; slot < n; ++slot) memset(slot_view(sp, slot) + off, value, len);
}

// Place one __nram__/__wram__/__mlu_shared__/__ldram__ declaration (called once per site).
inline void *site(int sp, size_t bytes, size_t align) {
  Space &s = spaces()[sp];
  init_space(sp);
  if (align < 64) align = 64;
  size_t off = (s.used + align - 1) / align * align;
  if (off + bytes > s.reserve)
    xp::fail(xp::FAIL_MEMORY, "%s buffers need %zu bytes, more than the emulator's %zu-byte arena", space_name(sp),
             off + bytes, s.reserve);
  s.used = off + bytes;
  s.sites.emplace_back(off, bytes);
  if (launch_state().active) {  // a kernel-local site executed for the first time
    check_capacity(sp);
    if (xp::fresh_fill() >= 0) fill_slots(sp, off, bytes, (unsigned char)xp::fresh_fill());
  }
  return s.window + off;
}

// Initial values of initialised declarations, copied into every active slot at launch start.
struct SiteInit { int sp; size_t off, bytes; const void *data; };
inline std::vector<SiteInit> &site_inits() { static std::vector<SiteInit> v; return v; }
inline void apply_init(const SiteInit &si) {
  LaunchState &L = launch_state();
  int n = si.sp == XPB_SRAM ? L.cluster_slots : L.core_slots;
  for (int slot = 0; slot < n; ++slot) memcpy(slot_view(si.sp, slot) + si.off, si.data, si.bytes);
}
inline void *site_init(int sp, size_t bytes, size_t align, const void *init) {
  char *p = (char *)site(sp, bytes, align);
  SiteInit si = {sp, (size_t)(p - spaces()[sp].window), bytes, init};
  site_inits().push_back(si);
  if (launch_state().active) apply_init(si);
  else memcpy(p, init, bytes);
  return p;
}

// Operand check of an intrinsic: space in `mask`, and [p, p+bytes) inside its arena.
inline void operand(const char *fn, const char *name, const void *p, size_t bytes, unsigned mask) {
  size_t off = 0;
  int sp = space_of(p, &off);
  if (!(mask & (1u << sp))) {
    static bool w = false;
    char want[64] = "";
    for (int i = 0; i < XPB_NSPACES; ++i)
      if (mask & (1u << i)) { if (want[0]) strcat(want, "/"); strcat(want, space_name(i)); }
    violation(&w, "%s: operand '%s' must be in %s, but %p is in %s", fn, name, want, p, space_name(sp));
  }
  if (sp != XPB_GDRAM) {
    size_t limit = (size_t)capacity(sp);
    if (spaces()[sp].used > limit) limit = spaces()[sp].used;
    if (limit > spaces()[sp].reserve) limit = spaces()[sp].reserve;
    if (off + bytes > limit)
      xp::fail(xp::FAIL_OOB, "%s: operand '%s' covers %s bytes [%zu, %zu), beyond the %zu-byte %s of the core",
               fn, name, space_name(sp), off, off + bytes, limit, space_name(sp));
    // the declared array the operand starts in: it must not run past its end
    const auto &r = spaces()[sp].sites;
    auto it = std::upper_bound(r.begin(), r.end(), off,
                               [](size_t o, const std::pair<size_t, size_t> &x) { return o < x.first; });
    if (bytes && it != r.begin()) {
      --it;
      size_t end = it->first + it->second;
      if (off < end && off + bytes > end)
        xp::fail(xp::FAIL_OOB, "%s: operand '%s' covers %s bytes [%zu, %zu), past the end of the %zu-byte %s "
                 "array declared at [%zu, %zu)", fn, name, space_name(sp), off, off + bytes, it->second,
                 space_name(sp), it->first, end);
    }
  }
}
}  // namespace xpb

// ---------------------------------------------------------------- tasks, fibers, barriers
namespace xpb {
enum BarKind { BAR_ALL = 0, BAR_IPU = 1, BAR_MPU = 2, BAR_CLUSTER = 3 };  // cluster c -> key 3 + c
constexpr int BAR_CLUSTER_IPU = BAR_CLUSTER + 64;  // IPU cores of cluster c -> key BAR_CLUSTER_IPU + c

struct Task {
  xp::Fiber fiber;
  int id, idx, idy, idz;
  int core, cluster;           // built-in coreId / clusterId
  int core_slot, cluster_slot; // arenas
  bool mpu = false, done = false, waiting = false;
  int wait_key = -1;           // barrier key, or -2 - id for a split-barrier wait
  unsigned wait_gen = 0;
  int wait_count = 0;
};
struct Barrier { int arrived = 0; unsigned gen = 0; };

struct Sched {
  std::vector<Task> tasks;
  std::vector<Barrier> bars;
  std::vector<int> split;      // __sync_all_arrive counters
  Task *cur = nullptr;
  void *sched_sp = nullptr;
  const std::function<void()> *body = nullptr;
  bool block = true;
  int ncl = 0;                 // clusters in the union
  unsigned dim[3] = {1, 1, 1};
  int cluster_dim = 0, core_dim = 1;
};
inline Sched &sched() { static Sched s; return s; }

inline void set_builtins(const Task &t) {
  Sched &S = sched();
  taskIdX = t.idx; taskIdY = t.idy; taskIdZ = t.idz; taskId = t.id;
  taskDimX = (int)S.dim[0]; taskDimY = (int)S.dim[1]; taskDimZ = (int)S.dim[2];
  taskDim = taskDimX * taskDimY * taskDimZ;
  coreId = t.core; clusterId = t.cluster; coreDim = S.core_dim; clusterDim = S.cluster_dim;
  map_slot(XPB_NRAM, t.core_slot);
  map_slot(XPB_WRAM, t.core_slot);
  map_slot(XPB_LDRAM, t.core_slot);
  map_slot(XPB_SRAM, t.cluster_slot);
}

inline void yield_to_scheduler() {
  Sched &S = sched();
  Task *t = S.cur;
  xp::xp_ctx_switch(&t->fiber.sp, S.sched_sp);
}

inline void fiber_main(void *arg) {
  Task *t = (Task *)arg;
  (*sched().body)();
  t->done = true;
  xp::xp_ctx_switch(&t->fiber.sp, sched().sched_sp);
  __builtin_unreachable();
}

inline bool participates(const Task &t, int key) {
  if (key == BAR_ALL) return true;
  if (key == BAR_IPU) return !t.mpu;
  if (key == BAR_MPU) return t.mpu;
  if (key >= BAR_CLUSTER_IPU) return !t.mpu && t.cluster == key - BAR_CLUSTER_IPU;
  return t.cluster == key - BAR_CLUSTER;
}
inline const char *bar_name(int key) {
  return key == BAR_ALL ? "__sync_all" : key == BAR_IPU ? "__sync_all_ipu" : key == BAR_MPU ? "__sync_all_mpu"
       : key >= BAR_CLUSTER_IPU ? "__sync_all_ipu_within_cluster" : "__sync_cluster";
}
// release `key` if every live participant arrived; returns true when released
inline bool try_release(int key) {
  Sched &S = sched();
  Barrier &b = S.bars[key];
  if (b.arrived == 0) return false;
  int live = 0, early_ipu = 0;
  for (auto &t : S.tasks)
    if (participates(t, key)) { if (!t.done) ++live; else if (!t.mpu) ++early_ipu; }
  if (b.arrived < live) return false;
  if (early_ipu) {
    static bool w = false;
    violation(&w, "%s: %d task(s) of the barrier returned before reaching it; the other cores would wait "
              "forever on the device", bar_name(key), early_ipu);
  }
  b.arrived = 0;
  b.gen++;
  return true;
}

inline void barrier(int key) {
  Sched &S = sched();
  if (!S.cur || S.block) return;  // BLOCK task: cluster/all syncs are core-local (HDR)
  if (key >= BAR_CLUSTER_IPU) key = BAR_CLUSTER_IPU + S.cur->cluster;
  else if (key >= BAR_CLUSTER) key = BAR_CLUSTER + S.cur->cluster;
  Task *t = S.cur;
  Barrier &b = S.bars[key];
  b.arrived++;
  t->wait_key = key;
  t->wait_gen = b.gen;
  if (try_release(key)) { t->wait_key = -1; return; }
  t->waiting = true;
  yield_to_scheduler();
  t->waiting = false;
  t->wait_key = -1;
  set_builtins(*t);
}

inline bool runnable(const Task &t) {
  if (t.done) return false;
  if (!t.waiting) return true;
  Sched &S = sched();
  if (t.wait_key >= 0) return S.bars[t.wait_key].gen != t.wait_gen;
  int id = -2 - t.wait_key;
  return S.split[id] >= t.wait_count;
}

constexpr size_t kStack = 8u << 20;

// Run the tasks of one group (BLOCK: one task; UNIONn: 4n tasks + n MPUs when used) to completion.
inline void run_group() {
  Sched &S = sched();
  for (size_t i = 0; i < S.tasks.size(); ++i) {
    Task &t = S.tasks[i];
    t.fiber.stack = xp::fiber_stack(i, kStack);
    t.fiber.stack_size = kStack;
    t.fiber.prepare(fiber_main, &t);
  }
  S.bars.assign(BAR_CLUSTER_IPU + 64, Barrier());
  size_t n = S.tasks.size(), next = 0;
  for (;;) {
    bool progress = false, all_done = true;
    for (size_t k = 0; k < n; ++k) {
      Task &t = S.tasks[(next + k) % n];
      if (t.done) continue;
      all_done = false;
      if (!runnable(t)) continue;
      if (t.waiting && t.wait_key < -1) { S.split[-2 - t.wait_key] -= t.wait_count; }
      S.cur = &t;
      set_builtins(t);
      xp::xp_ctx_switch(&S.sched_sp, t.fiber.sp);
      S.cur = nullptr;
      progress = true;
      next = (size_t)(&t - &S.tasks[0]) + 1;
      if (t.done)  // a finished task may complete a barrier the others wait on
        for (size_t key = 0; key < S.bars.size(); ++key) try_release((int)key);
      break;
    }
    if (all_done) break;
    if (!progress) {
      char who[512] = "";
      for (auto &t : S.tasks)
        if (!t.done && strlen(who) < 400)
          snprintf(who + strlen(who), sizeof who - strlen(who), "%s task %d%s waits in %s", who[0] ? ";" : "", t.id,
                   t.mpu ? " (MPU)" : "", t.wait_key >= 0 ? bar_name(t.wait_key) : "__sync_all_wait");
      xp::fail(xp::FAIL_RUNTIME, "deadlock: no task can continue (%s)", who);
    }
  }
}

// Launch `body` once per task. ktype = cores of the function type (1 BLOCK, 4 UNION1, 8 UNION2 ...).
// Kernels that test coreId == 0x80 / __is_mpu() (prepare() registers them at load time).
inline std::vector<const void *> &mpu_kernels() { static std::vector<const void *> v; return v; }
inline bool register_mpu_kernel(const void *k) { mpu_kernels().push_back(k); return true; }
inline bool uses_mpu(const void *k) {
  for (const void *p : mpu_kernels()) if (p == k) return true;
  return false;
}

inline void launch(const char *name, unsigned dx, unsigned dy, unsigned dz, int ktype, const std::function<void()> &body,
                   bool with_mpu = false) {
  xp::install_handlers();
  Sched &S = sched();
  if (S.body) xp::fail(xp::FAIL_RUNTIME, "kernel %s launched from inside a kernel", name);
  const char *prev_kernel = xp::current_kernel();
  xp::current_kernel() = name;
  if (dx == 0 || dy == 0 || dz == 0) xp::fail(xp::FAIL_RUNTIME, "launch of %s with an empty task dim {%u, %u, %u}", name, dx, dy, dz);
  if (ktype == 0) ktype = 1;  // old CNRT numbering: BLOCK = 0
  bool block = ktype == 1;
  if (!block && (ktype % 4 != 0 || ktype > 64 || (ktype / 4 & (ktype / 4 - 1)) != 0))
    xp::fail(xp::FAIL_RUNTIME, "launch of %s: function type %d is not BLOCK (1) or UNIONn (4n cores, n = 1,2,4,8,16)", name, ktype);
  int n = block ? 0 : ktype / 4;
  const xp_options_t &o = xp::options();
  if (!block) {
    XPB_RULE(dx % (unsigned)ktype == 0, "launch of %s: UNION%d needs dim.x to be a multiple of %d, got %u", name, n, ktype, dx);
    XPB_RULE(n <= o.clusters, "launch of %s: UNION%d needs %d clusters, the device profile has %d", name, n, n, o.clusters);
  }
  S.dim[0] = dx; S.dim[1] = dy; S.dim[2] = dz;
  S.block = block;
  S.ncl = n;
  S.core_dim = block ? 1 : 4;
  S.cluster_dim = n;
  S.body = &body;
  S.split.assign(32768, 0);
  LaunchState &L = launch_state();
  L.active = true;
  L.core_slots = block ? 1 : ktype + n;
  L.cluster_slots = block ? 1 : n;
  for (int sp = 1; sp < XPB_NSPACES; ++sp) {
    if (!spaces()[sp].window) continue;
    check_capacity(sp);
    if (xp::fresh_fill() >= 0)  // poison (or a driver's pattern): uninitialised reads show up
      fill_slots(sp, 0, spaces()[sp].used, (unsigned char)xp::fresh_fill());
  }
  for (const SiteInit &si : site_inits()) apply_init(si);
  unsigned long long total = (unsigned long long)dx * dy * dz;
  unsigned long long gsize = block ? 1 : (unsigned long long)ktype;
  // tasks run one group after another; the driver may reverse the order of the groups and of
  // the tasks in a group (options().reverse_blocks) to find output elements whose value depends
  // on it (tasks writing the same element)
  const bool reverse = xp::options().reverse_blocks != 0;
  const unsigned long long groups = (total + gsize - 1) / gsize;
  for (unsigned long long g = 0; g < groups; ++g) {
    const unsigned long long first = (reverse ? groups - 1 - g : g) * gsize;
    S.tasks.clear();
    unsigned long long cnt = total - first < gsize ? total - first : gsize;
    S.tasks.reserve(cnt + n);
    for (unsigned long long k = 0; k < cnt; ++k) {
      Task t;
      unsigned long long id = first + k;
      t.id = (int)id;
      t.idx = (int)(id % dx); t.idy = (int)(id / dx % dy); t.idz = (int)(id / ((unsigned long long)dx * dy));
      t.core = block ? 0 : (int)(id % 4);
      t.cluster = block ? 0 : (int)(id / 4 % n);
      t.core_slot = block ? 0 : (int)k;
      t.cluster_slot = block ? 0 : (int)(k / 4);
      S.tasks.push_back(t);
    }
    if (!block && with_mpu) {  // (design choice) MPU only when the kernel tests for it
      for (int c = 0; c < n && (unsigned long long)(4 * c) < cnt; ++c) {
        Task t = S.tasks[(size_t)(4 * c)];  // the MPU sees the ids of its cluster's first task
        t.mpu = true;
        t.core = 0x80;
        t.core_slot = ktype + c;
        S.tasks.push_back(t);
      }
    }
    if (reverse) std::reverse(S.tasks.begin(), S.tasks.begin() + (long)cnt);   // the compute tasks
    run_group();
  }
  S.tasks.clear();
  S.body = nullptr;
  L.active = false;
  taskIdX = taskIdY = taskIdZ = taskId = 0;
  taskDimX = taskDimY = taskDimZ = taskDim = 1;
  clusterId = clusterDim = coreId = 0; coreDim = 1;
  xp::current_kernel() = prev_kernel;
}

// Launcher used by the rewritten `k<<<dim, ktype, queue>>>(args)` and by __xp_kernel_ stubs.
template <class... P>
struct Launcher {
  void (*k)(P...);
  const char *name;
  unsigned d[3];
  int ktype;
  template <class... A>
  void operator()(A &&...a) const {
    static_assert(sizeof...(A) == sizeof...(P), "wrong number of kernel arguments");
    std::tuple<std::decay_t<P>...> args(std::forward<A>(a)...);
    auto kk = k;
    std::function<void()> body = [&]() { std::tuple<std::decay_t<P>...> copy = args; std::apply(kk, copy); };
    launch(name, d[0], d[1], d[2], ktype, body, uses_mpu((const void *)k));
  }
};
}  // namespace xpb

// ---------------------------------------------------------------- synchronisation (BG §3.18, §3.19)
// Copies and vector ops complete eagerly, so the pipeline syncs have nothing to wait for.
inline void __sync() {}
inline void __sync_io() {}
inline void __sync_compute() {}
inline void __sync_move() {}
inline void __sync_io_move_compute(bool = true, bool = true, bool = true, bool = true, bool = true, bool = true) {}
inline void __sync_all() { xpb::barrier(xpb::BAR_ALL); }
inline void __sync_cluster() { xpb::barrier(xpb::BAR_CLUSTER); }
inline void __sync_all_ipu() { xpb::barrier(xpb::BAR_IPU); }
inline void __sync_all_mpu() { xpb::barrier(xpb::BAR_MPU); }
// the compute (IPU) cores of the running core's cluster, the memory core (MPU) not included
inline void __sync_all_ipu_within_cluster() { xpb::barrier(xpb::BAR_CLUSTER_IPU); }
inline void __sync_all_arrive(unsigned id, unsigned count) {
  XPB_RULE(id <= 32767 && count > 1, "__sync_all_arrive: id must be in [0, 32767] and count > 1 (got %u, %u)", id, count);
  xpb::Sched &S = xpb::sched();
  if (!S.cur || S.block) return;
  S.split[id & 32767]++;
}
inline void __sync_all_wait(unsigned id, unsigned count) {
  XPB_RULE(id <= 32767 && count > 1, "__sync_all_wait: id must be in [0, 32767] and count > 1 (got %u, %u)", id, count);
  xpb::Sched &S = xpb::sched();
  if (!S.cur || S.block) return;
  id &= 32767;
  if (S.split[id] >= (int)count) { S.split[id] -= (int)count; return; }
  xpb::Task *t = S.cur;
  t->wait_key = -2 - (int)id;
  t->wait_count = (int)count;
  t->waiting = true;
  xpb::yield_to_scheduler();  // the scheduler consumes the signals when it resumes us
  t->waiting = false;
  t->wait_key = -1;
  xpb::set_builtins(*t);
}

// ---------------------------------------------------------------- __memcpy directions (HDR order)
enum mluMemcpyDirection_t {
  GDRAM2NRAM = 0, NRAM2GDRAM, LDRAM2NRAM, NRAM2LDRAM, GDRAM2WRAM, WRAM2GDRAM, LDRAM2WRAM, WRAM2LDRAM,
  NRAM2NRAM, NRAM2WRAM, WRAM2NRAM, GDRAM2SRAM, SRAM2GDRAM, LDRAM2SRAM, SRAM2LDRAM, SRAM2NRAM,
  NRAM2SRAM, SRAM2WRAM, WRAM2SRAM, GDRAM2GDRAM, GDRAM2LDRAM, LDRAM2GDRAM, LDRAM2LDRAM, SRAM2SRAM
};
namespace xpb {
struct DirInfo { const char *name; int src, dst; };
inline const DirInfo &dir_info(int d) {
  static const DirInfo t[] = {
      {"GDRAM2NRAM", XPB_GDRAM, XPB_NRAM}, {"NRAM2GDRAM", XPB_NRAM, XPB_GDRAM}, {"LDRAM2NRAM", XPB_LDRAM, XPB_NRAM},
      {"NRAM2LDRAM", XPB_NRAM, XPB_LDRAM}, {"GDRAM2WRAM", XPB_GDRAM, XPB_WRAM}, {"WRAM2GDRAM", XPB_WRAM, XPB_GDRAM},
      {"LDRAM2WRAM", XPB_LDRAM, XPB_WRAM}, {"WRAM2LDRAM", XPB_WRAM, XPB_LDRAM}, {"NRAM2NRAM", XPB_NRAM, XPB_NRAM},
      {"NRAM2WRAM", XPB_NRAM, XPB_WRAM}, {"WRAM2NRAM", XPB_WRAM, XPB_NRAM}, {"GDRAM2SRAM", XPB_GDRAM, XPB_SRAM},
      {"SRAM2GDRAM", XPB_SRAM, XPB_GDRAM}, {"LDRAM2SRAM", XPB_LDRAM, XPB_SRAM}, {"SRAM2LDRAM", XPB_SRAM, XPB_LDRAM},
      {"SRAM2NRAM", XPB_SRAM, XPB_NRAM}, {"NRAM2SRAM", XPB_NRAM, XPB_SRAM}, {"SRAM2WRAM", XPB_SRAM, XPB_WRAM},
      {"WRAM2SRAM", XPB_WRAM, XPB_SRAM}, {"GDRAM2GDRAM", XPB_GDRAM, XPB_GDRAM}, {"GDRAM2LDRAM", XPB_GDRAM, XPB_LDRAM},
      {"LDRAM2GDRAM", XPB_LDRAM, XPB_GDRAM}, {"LDRAM2LDRAM", XPB_LDRAM, XPB_LDRAM}, {"SRAM2SRAM", XPB_SRAM, XPB_SRAM}};
  if (d < 0 || d > 23) xp::fail(xp::FAIL_RUNTIME, "__memcpy: invalid direction %d", d);
  return t[d];
}
inline bool has_sram() { return XPB_HAS_SRAM_ARCH; }
// Direction vs the pointers' real spaces; SRAM availability; BLOCK tasks have no SRAM.
inline void check_direction(const char *fn, const void *dst, const void *src, int dir) {
  const DirInfo &d = dir_info(dir);
  int ss = space_of(src), ds = space_of(dst);
  XPB_RULE(ss == d.src && ds == d.dst, "%s: direction %s, but the destination is in %s and the source in %s", fn,
           d.name, space_name(ds), space_name(ss));
  if (d.src == XPB_SRAM || d.dst == XPB_SRAM) {
    XPB_RULE(has_sram(), "%s: %s: this device (__BANG_ARCH__ %d) has no SRAM", fn, d.name, __BANG_ARCH__);
    XPB_RULE(!sched().block, "%s: %s in a BLOCK task (SRAM exists only in UNION tasks)", fn, d.name);
  }
}
// Bounds of one byte range of a copy (on-chip: inside the arena; off-chip: guard pages catch it).
inline void copy_range(const char *fn, const char *what, const void *p, long long lo, long long hi) {
  if (hi <= lo) return;
  operand(fn, what, (const char *)p + lo, (size_t)(hi - lo), XPB_M_ANY);
}
// SRAM2SRAM to another cluster: the same offset in that cluster's SRAM.
inline void *remote_sram(void *dst, unsigned cluster) {
  size_t off = 0;
  if (space_of(dst, &off) != XPB_SRAM) return dst;
  Sched &S = sched();
  int base = S.cur ? S.cur->cluster_slot - S.cur->cluster : 0;
  XPB_RULE((int)cluster < (S.ncl ? S.ncl : 1), "__memcpy: id_dst_cluster %u is not a cluster of this union task", cluster);
  return slot_view(XPB_SRAM, base + (int)cluster) + off;
}
}  // namespace xpb

// ---------------------------------------------------------------- CNRT host API (CNRT4 / CNRT6)
typedef enum {
  CNRT_RET_SUCCESS = 0, cnrtSuccess = 0, CNRT_RET_ERR_INVALID = 632007, cnrtErrorInvalidValue = 632007,
  CNRT_RET_ERR_NOMEM = 632008, cnrtErrorNoMem = 632008, CNRT_RET_ERR_SYS = 632011, cnrtErrorSys = 632011
} cnrtRet_t;
typedef cnrtRet_t cnrtError_t;
typedef enum {
  CNRT_MEM_TRANS_DIR_HOST2DEV = 0, CNRT_MEM_TRANS_DIR_DEV2DEV = 1, CNRT_MEM_TRANS_DIR_DEV2HOST = 2,
  CNRT_MEM_TRANS_DIR_HOST2HOST = 3, CNRT_MEM_TRANS_DIR_PEER2PEER = 4, CNRT_MEM_TRANS_DIR_NODIR = 5,
  cnrtMemcpyHostToDev = 0, cnrtMemcpyDevToDev = 1, cnrtMemcpyDevToHost = 2, cnrtMemcpyHostToHost = 3,
  cnrtMemcpyPeerToPeer = 4, cnrtMemcpyNoDirection = 5
} cnrtMemTransDir_t;
typedef cnrtMemTransDir_t cnrtMemTransDir;
// value = number of MLU cores (CNRT 4.3 / mlu-ops); PLATFORMS.md §1.5
typedef enum {
  CNRT_FUNC_TYPE_BLOCK = 1, CNRT_FUNC_TYPE_BLOCK0 = 1, CNRT_FUNC_TYPE_UNION1 = 4, CNRT_FUNC_TYPE_UNION2 = 8,
  CNRT_FUNC_TYPE_UNION4 = 16, CNRT_FUNC_TYPE_UNION8 = 32, CNRT_FUNC_TYPE_UNION16 = 64,
  cnrtFuncTypeBlock = 1, cnrtFuncTypeUnion1 = 4, cnrtFuncTypeUnion2 = 8, cnrtFuncTypeUnion4 = 16,
  cnrtFuncTypeUnion8 = 32, cnrtFuncTypeUnion16 = 64
} cnrtFunctionType_t;
typedef struct { unsigned int x, y, z; } cnrtDim3_t;
struct xpb_queue { int id; };
typedef xpb_queue *cnrtQueue_t;
typedef void *cnrtNotifier_t;
typedef int cnrtDev_t;

namespace xpb {
inline bool is_device_ptr(const void *p) {
  xp::Region *r = xp::find_region(p);
  return r && r->user && (const char *)p >= r->user && (const char *)p < r->user + r->size + 16 &&
         strcmp(r->what, "device allocation") == 0;
}
}  // namespace xpb

inline const char *cnrtGetErrorStr(cnrtRet_t r) {
  switch ((int)r) {
    case 0: return "CNRT_RET_SUCCESS";
    case 632007: return "CNRT_RET_ERR_INVALID: invalid argument";
    case 632008: return "CNRT_RET_ERR_NOMEM: out of memory";
    default: return "CNRT error";
  }
}
inline const char *cnrtGetErrorName(cnrtRet_t r) { return cnrtGetErrorStr(r); }
inline cnrtRet_t cnrtGetLastError() { return cnrtSuccess; }
#define CNRT_CHECK(call)                                                                         \
  do {                                                                                           \
    cnrtRet_t xpb_ret_ = (cnrtRet_t)(call);                                                      \
    if (xpb_ret_ != cnrtSuccess)                                                                 \
      ::xp::fail(::xp::FAIL_RUNTIME, "%s failed: %s (%d)", #call, cnrtGetErrorStr(xpb_ret_), (int)xpb_ret_); \
  } while (0)
#define CNRT_CHECK_RETURN CNRT_CHECK
inline cnrtRet_t cnrtInit(unsigned int = 0) { xp::install_handlers(); return cnrtSuccess; }
inline void cnrtDestroy() {}
inline cnrtRet_t cnrtGetDeviceCount(unsigned int *n) { if (n) *n = 1; return cnrtSuccess; }
inline cnrtRet_t cnrtGetDeviceHandle(cnrtDev_t *d, int) { if (d) *d = 0; return cnrtSuccess; }
inline cnrtRet_t cnrtSetCurrentDevice(cnrtDev_t) { return cnrtSuccess; }
inline cnrtRet_t cnrtSetDevice(int) { return cnrtSuccess; }
inline cnrtRet_t cnrtGetDevice(int *d) { if (d) *d = 0; return cnrtSuccess; }
inline cnrtRet_t cnrtSyncDevice() { return cnrtSuccess; }
inline cnrtRet_t cnrtDeviceReset() { return cnrtSuccess; }
inline cnrtRet_t cnrtQueueCreate(cnrtQueue_t *q) { static xpb_queue qs[64]; static int n; if (q) *q = &qs[n++ % 64]; return cnrtSuccess; }
inline cnrtRet_t cnrtCreateQueue(cnrtQueue_t *q) { return cnrtQueueCreate(q); }
inline cnrtRet_t cnrtQueueDestroy(cnrtQueue_t) { return cnrtSuccess; }
inline cnrtRet_t cnrtDestroyQueue(cnrtQueue_t) { return cnrtSuccess; }
inline cnrtRet_t cnrtQueueSync(cnrtQueue_t) { return cnrtSuccess; }  // launches run synchronously
inline cnrtRet_t cnrtSyncQueue(cnrtQueue_t) { return cnrtSuccess; }
inline cnrtRet_t cnrtQueueQuery(cnrtQueue_t) { return cnrtSuccess; }
inline cnrtRet_t cnrtMalloc(void **p, size_t bytes) {
  if (!p) return cnrtErrorInvalidValue;
  *p = __xp_device_alloc(bytes);
  return cnrtSuccess;
}
template <class T> inline cnrtRet_t cnrtMalloc(T **p, size_t bytes) { return cnrtMalloc((void **)p, bytes); }
// Named device allocations (see xp::AllocSite; the macro is defined at the end of this header).
inline cnrtRet_t cnrtMalloc(void **p, size_t bytes, ::xp::AllocSite s) {
  if (!p) return cnrtErrorInvalidValue;
  xp::install_handlers();
  *p = xp::guarded_alloc(bytes, "device allocation", xp::kDeviceAlign, xp::fresh_fill(),
                         ::xp::site_label("cnrtMalloc", s));
  return cnrtSuccess;
}
template <class T> inline cnrtRet_t cnrtMalloc(T **p, size_t bytes, ::xp::AllocSite s) { return cnrtMalloc((void **)p, bytes, s); }
inline cnrtRet_t cnrtFree(void *p) { if (p) __xp_device_free(p); return cnrtSuccess; }
inline cnrtRet_t cnrtMemcpy(void *dst, const void *src, size_t bytes, cnrtMemTransDir_t dir) {
  bool dd = xpb::is_device_ptr(dst), sd = xpb::is_device_ptr(src);
  bool want_dd = dir == CNRT_MEM_TRANS_DIR_HOST2DEV || dir == CNRT_MEM_TRANS_DIR_DEV2DEV || dir == CNRT_MEM_TRANS_DIR_PEER2PEER;
  bool want_sd = dir == CNRT_MEM_TRANS_DIR_DEV2HOST || dir == CNRT_MEM_TRANS_DIR_DEV2DEV || dir == CNRT_MEM_TRANS_DIR_PEER2PEER;
  if (dir != CNRT_MEM_TRANS_DIR_NODIR)
    XPB_RULE(dd == want_dd && sd == want_sd,
             "cnrtMemcpy: direction %d does not match the pointers (destination %s, source %s)", (int)dir,
             dd ? "device" : "host", sd ? "device" : "host");
  if (bytes) memmove(dst, src, bytes);
  return cnrtSuccess;
}
inline cnrtRet_t cnrtMemcpyAsync(void *dst, void *src, size_t bytes, cnrtQueue_t, cnrtMemTransDir_t dir) {
  return cnrtMemcpy(dst, src, bytes, dir);
}
inline cnrtRet_t cnrtMemset(void *p, int value, size_t bytes) { if (bytes) memset(p, value, bytes); return cnrtSuccess; }
inline cnrtRet_t cnrtMemsetD8(void *p, unsigned char value, size_t n) { return cnrtMemset(p, value, n); }
inline cnrtRet_t cnrtMemsetD32(void *p, unsigned value, size_t n) {
  for (size_t i = 0; i < n; ++i) memcpy((char *)p + 4 * i, &value, 4);
  return cnrtSuccess;
}

namespace xpb {
template <class... P>
inline Launcher<P...> make_launch(void (*k)(P...), const char *name, cnrtDim3_t d, cnrtFunctionType_t kt,
                                  cnrtQueue_t = nullptr) {
  return Launcher<P...>{k, name, {d.x, d.y, d.z}, (int)kt};
}
template <class... P>
inline Launcher<P...> make_launch(void (*k)(P...), const char *name, cnrtDim3_t d, int kt, cnrtQueue_t = nullptr) {
  return Launcher<P...>{k, name, {d.x, d.y, d.z}, kt};
}
// Entry for the driver's __xp_kernel_<name> stub.
template <class... P>
inline void run_stub(void (*k)(P...), const char *name, const xp_launch_t *cfg, void **args) {
  std::function<void()> body = [&]() { xp::call_with_args(k, args); };
  launch(name, cfg->dim[0], cfg->dim[1], cfg->dim[2], cfg->ktype, body, uses_mpu((const void *)k));
}
}  // namespace xpb

#include "xp_bang_intrinsics.gen.h"
#define cnrtMalloc(...) cnrtMalloc(__VA_ARGS__, ::xp::AllocSite{#__VA_ARGS__, __FILE__, __LINE__})
