// xp_gpu_host.h - host runtime shared by the CUDA and HIP shims (cudaMalloc/hipMalloc, ...).
// Device memory is host memory from xp::guarded_alloc (ends at a guard page, poisoned in strict
// mode); copies are memcpy; streams and events are synchronous. Error codes use CUDA's numbers
// (HIP's coincide for the ones used here). The shims wrap these in cuda* / hip* names.
#pragma once
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include "xp_gpu_sched.h"

namespace xp { namespace gpu {

enum ErrCode {
  E_SUCCESS = 0, E_INVALID_VALUE = 1, E_MEMORY = 2, E_INIT = 3, E_INVALID_CONFIG = 9,
  E_INVALID_DEVPTR = 17, E_INVALID_MEMCPY_DIR = 21, E_INVALID_DEVICE_FUNCTION = 98, E_NO_DEVICE = 100,
  E_INVALID_DEVICE = 101, E_INVALID_HANDLE = 400, E_NOT_READY = 600, E_PEER_NOT_ENABLED = 705,
  E_COOP_TOO_LARGE = 720, E_NOT_SUPPORTED = 801
};
enum CopyKind { K_H2H = 0, K_H2D = 1, K_D2H = 2, K_D2D = 3, K_DEFAULT = 4 };

inline int &last_error() { static int e = 0; return e; }
inline int set_error(int e) { if (e) last_error() = e; return e; }

inline const char *error_name(int e) {
  switch (e) {
    case E_SUCCESS: return "Success";
    case E_INVALID_VALUE: return "ErrorInvalidValue";
    case E_MEMORY: return "ErrorMemoryAllocation";
    case E_INIT: return "ErrorInitializationError";
    case E_INVALID_CONFIG: return "ErrorInvalidConfiguration";
    case E_INVALID_DEVPTR: return "ErrorInvalidDevicePointer";
    case E_INVALID_MEMCPY_DIR: return "ErrorInvalidMemcpyDirection";
    case E_INVALID_DEVICE_FUNCTION: return "ErrorInvalidDeviceFunction";
    case E_NO_DEVICE: return "ErrorNoDevice";
    case E_INVALID_DEVICE: return "ErrorInvalidDevice";
    case E_INVALID_HANDLE: return "ErrorInvalidResourceHandle";
    case E_NOT_READY: return "ErrorNotReady";
    case E_PEER_NOT_ENABLED: return "ErrorPeerAccessNotEnabled";
    case E_COOP_TOO_LARGE: return "ErrorCooperativeLaunchTooLarge";
    case E_NOT_SUPPORTED: return "ErrorNotSupported";
    default: return "ErrorUnknown";
  }
}
inline const char *error_string(int e) {
  switch (e) {
    case E_SUCCESS: return "no error";
    case E_INVALID_VALUE: return "invalid argument";
    case E_MEMORY: return "out of memory";
    case E_INIT: return "initialization error";
    case E_INVALID_CONFIG: return "invalid configuration argument";
    case E_INVALID_DEVPTR: return "invalid device pointer";
    case E_INVALID_MEMCPY_DIR: return "invalid copy direction for memcpy";
    case E_INVALID_DEVICE_FUNCTION: return "invalid device function";
    case E_NO_DEVICE: return "no CUDA-capable device is detected";
    case E_INVALID_DEVICE: return "invalid device ordinal";
    case E_INVALID_HANDLE: return "invalid resource handle";
    case E_NOT_READY: return "device not ready";
    case E_PEER_NOT_ENABLED: return "peer access has not been enabled";
    case E_COOP_TOO_LARGE: return "too many blocks in cooperative launch";
    case E_NOT_SUPPORTED: return "operation not supported";
    default: return "unknown error";
  }
}

// Device allocation containing [p, p+n)? (nullptr when p is not device memory)
inline Region *device_region(const void *p) {
  Region *r = find_region(p);
  if (r && r->what && strcmp(r->what, "device allocation") == 0) return r;
  return nullptr;
}

inline int api_malloc(void **p, size_t n, const char *label = nullptr) {
  install_handlers();
  if (!p) return set_error(E_INVALID_VALUE);
  *p = guarded_alloc(n, "device allocation", kDeviceAlign, fresh_fill(), label);
  return E_SUCCESS;
}

inline int api_free(void *p) {
  if (!p) return E_SUCCESS;
  Region *r = device_region(p);
  if (!r || r->user != (char *)p) {
    if (options().strict) fail(FAIL_STRICT, "free of %p, which is not the start of a device allocation", p);
    warn("free of %p, which is not the start of a device allocation (ignored)", p);
    return set_error(E_INVALID_DEVPTR);
  }
  guarded_free(p);
  return E_SUCCESS;
}

// Pinned (page-locked) host allocations and registrations: plain host memory here, remembered so
// cudaPointerGetAttributes / hipPointerGetAttributes can say "host".
inline std::set<const void *> &pinned_host() { static std::set<const void *> s; return s; }
inline void *host_alloc(size_t n) {
  void *p = nullptr;
  if (posix_memalign(&p, 256, n ? n : 1)) fail(FAIL_MEMORY, "cannot allocate %zu bytes of pinned host memory", n);
  pinned_host().insert(p);
  return p;
}
inline void host_free(void *p) {
  if (!p) return;
  pinned_host().erase(p);
  free(p);
}

inline void check_side(const void *p, size_t n, bool want_device, const char *api, const char *side) {
  if (n == 0) return;
  Region *r = device_region(p);
  if (want_device) {
    if (!r) {
      if (options().strict) fail(FAIL_STRICT, "%s: %s pointer %p is not device memory for this copy direction", api, side, p);
      warn("%s: %s pointer %p is not device memory (wrong copy kind?)", api, side, p);
      return;
    }
    if ((const char *)p + n > r->user + r->size)
      fail(FAIL_OOB, "%s: %zu bytes at %s offset %zu run past the end of device allocation #%d (%zu bytes)", api, n, side,
           (size_t)((const char *)p - r->user), r->id, r->size);
  } else if (r) {
    if (options().strict) fail(FAIL_STRICT, "%s: %s pointer %p is device memory but the copy kind says host", api, side, p);
    warn("%s: %s pointer %p is device memory but the copy kind says host", api, side, p);
  }
}

inline int api_memcpy(void *dst, const void *src, size_t n, int kind, const char *api) {
  if (in_kernel()) fail(FAIL_RUNTIME, "%s called from device code", api);
  if (kind < 0 || kind > 4) return set_error(E_INVALID_MEMCPY_DIR);
  if (n && (!dst || !src)) return set_error(E_INVALID_VALUE);
  if (kind != K_DEFAULT) {
    check_side(dst, n, kind == K_H2D || kind == K_D2D, api, "destination");
    check_side(src, n, kind == K_D2H || kind == K_D2D, api, "source");
  } else {
    for (const void *q : {(const void *)dst, src}) {
      Region *r = device_region(q);
      if (r && n && (const char *)q + n > r->user + r->size)
        fail(FAIL_OOB, "%s: %zu bytes run past the end of device allocation #%d (%zu bytes)", api, n, r->id, r->size);
    }
  }
  if (n) memmove(dst, src, n);
  return E_SUCCESS;
}

inline int api_memset(void *p, int v, size_t n, const char *api) {
  if (in_kernel()) fail(FAIL_RUNTIME, "%s called from device code", api);
  if (n == 0) return E_SUCCESS;
  if (!p) return set_error(E_INVALID_VALUE);
  check_side(p, n, true, api, "destination");
  memset(p, v, n);
  return E_SUCCESS;
}

// cudaMemset2D / hipMemset2D: `height` rows of `width` bytes, `pitch` bytes apart
inline int api_memset2d(void *p, size_t pitch, int v, size_t width, size_t height, const char *api) {
  if (width > pitch && height > 1) return set_error(E_INVALID_VALUE);
  for (size_t r = 0; r < height; ++r) {
    int e = api_memset((char *)p + r * pitch, v, width, api);
    if (e) return e;
  }
  return E_SUCCESS;
}

// hipMemsetD8/D16/D32 (cuMemsetD*): `count` elements of the value's width
template <class T>
inline int api_memset_elems(void *p, T v, size_t count, const char *api) {
  if (in_kernel()) fail(FAIL_RUNTIME, "%s called from device code", api);
  if (count == 0) return E_SUCCESS;
  if (!p) return set_error(E_INVALID_VALUE);
  check_side(p, count * sizeof(T), true, api, "destination");
  T *q = static_cast<T *>(p);
  for (size_t i = 0; i < count; ++i) q[i] = v;
  return E_SUCCESS;
}

inline int api_memcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t w, size_t h, int kind, const char *api) {
  if (w > dpitch || w > spitch) return set_error(E_INVALID_VALUE);
  for (size_t r = 0; r < h; ++r) {
    int e = api_memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, w, kind, api);
    if (e) return e;
  }
  return E_SUCCESS;
}

struct Event { double t = 0; bool recorded = false; unsigned flags = 0; };
struct Stream { int id = 0; unsigned flags = 0; int priority = 0; };
inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline int consume_error() { int e = last_error(); last_error() = 0; return e; }

// ---------------------------------------------------------------- the modelled device
// The real device a profile stands for (platforms/<p>/profile.toml `arch`): what the device-
// property queries report besides the profile's own limits (threads, block and grid dims, shared
// memory per block and its opt-in), and what the occupancy calculator uses.
struct DeviceModel {
  const char *model;
  int sms, clock_khz, mem_clock_khz, bus_width, l2_bytes;
  unsigned long long global_bytes;
  int threads_per_sm, blocks_per_sm;
  long long shared_per_sm, reserved_shared;
  int regs_per_sm;
};
inline const DeviceModel &device_model() {
#if defined(XP_PLATFORM_HIP)
#if defined(__gfx908__)
  static const DeviceModel m{"MI100", 120, 1502000, 1200000, 4096, 8 << 20, 32ull << 30, 2560, 40, 65536, 0, 65536};
#elif defined(__gfx942__)
  static const DeviceModel m{"MI300X", 304, 2100000, 1300000, 8192, 4 << 20, 192ull << 30, 2048, 32, 65536, 0, 65536};
#else
  static const DeviceModel m{"MI210", 104, 1700000, 1600000, 4096, 8 << 20, 64ull << 30, 2048, 32, 65536, 0, 65536};
#endif
#elif __CUDA_ARCH__ == 700
  static const DeviceModel m{"V100-SXM2-32GB", 80, 1530000, 877000, 4096, 6 << 20, 32ull << 30, 2048, 32, 98304, 0, 65536};
#elif __CUDA_ARCH__ == 860
  static const DeviceModel m{"RTX-A6000", 84, 1800000, 8001000, 384, 6 << 20, 48ull << 30, 1536, 16, 102400, 1024, 65536};
#elif __CUDA_ARCH__ == 900
  static const DeviceModel m{"H100-SXM5-80GB", 132, 1980000, 2619000, 5120, 50 << 20, 80ull << 30, 2048, 32, 233472, 1024, 65536};
#else
  static const DeviceModel m{"A100-SXM4-80GB", 108, 1410000, 1593000, 5120, 40 << 20, 80ull << 30, 2048, 32, 167936, 1024, 65536};
#endif
#if defined(XP_SM_COUNT) && defined(XP_THREADS_PER_SM)
  // the profile's own values (platforms/<p>/profile.toml), which a lift answers queries with too
  static const DeviceModel p = [] { DeviceModel d = m; d.sms = XP_SM_COUNT; d.threads_per_sm = XP_THREADS_PER_SM; return d; }();
  return p;
#else
  return m;
#endif
}
inline long long shared_optin_bytes() {
  return XP_SHARED_OPTIN_BYTES > 0 ? (long long)XP_SHARED_OPTIN_BYTES : (long long)options().shared_mem_bytes;
}

// Per-kernel attributes set by cudaFuncSetAttribute / cudaFuncSetCacheConfig (keyed by the
// function's address; the launch limit itself stays the largest opt-in, see dyn_shared_optin).
struct FuncAttr { long long max_dyn = -1; int carveout = -1, cache = 0, shmem_config = 0; };
inline FuncAttr &func_attr(const void *f) { static std::map<const void *, FuncAttr> m; return m[f]; }

inline int func_set_max_dyn_shared(const void *f, long long v) {
  if (!f) return set_error(E_INVALID_DEVICE_FUNCTION);
  if (v < 0 || v > shared_optin_bytes()) return set_error(E_INVALID_VALUE);
  func_attr(f).max_dyn = v;
  if (v > dyn_shared_optin()) dyn_shared_optin() = v;
  return E_SUCCESS;
}
// PreferredSharedMemoryCarveout: a percentage of the maximum shared memory, or -1 (default)
inline int func_set_carveout(const void *f, long long v) {
  if (!f) return set_error(E_INVALID_DEVICE_FUNCTION);
  if (v < -1 || v > 100) return set_error(E_INVALID_VALUE);
  func_attr(f).carveout = (int)v;
  return E_SUCCESS;
}

// Blocks of `block_threads` threads using `smem` bytes of shared memory (static + dynamic) that
// fit on one multiprocessor at once: the least of the thread, block-slot and shared-memory
// limits of the modelled device (registers are not modelled).
inline int max_active_blocks(long long block_threads, long long smem) {
  const DeviceModel &m = device_model();
  if (block_threads <= 0 || block_threads > options().max_threads_per_block) return 0;
  if (smem > shared_optin_bytes()) return 0;
  long long warps = (block_threads + kWarp - 1) / kWarp;
  long long n = std::min<long long>(m.threads_per_sm / (warps * kWarp), m.blocks_per_sm);
  long long per_block = smem + m.reserved_shared;
  if (per_block > 0) n = std::min<long long>(n, m.shared_per_sm / per_block);
  return (int)std::max<long long>(n, 0);
}

// cudaOccupancyMaxPotentialBlockSize's search (cuda_runtime.h): the block size, from the largest
// down in steps of the warp size, with the most resident threads per multiprocessor (ties: the
// larger block); `smem_of(block_size)` gives its dynamic shared memory.
template <class F>
inline void max_potential_block(int *min_grid, int *block, F &&smem_of, int limit) {
  const DeviceModel &m = device_model();
  int max_block = options().max_threads_per_block;
  if (limit > 0 && limit < max_block) max_block = limit;
  int best = 0, best_blocks = 0, best_occ = 0;
  for (int aligned = (max_block + kWarp - 1) / kWarp * kWarp; aligned > 0; aligned -= kWarp) {
    int bs = std::min(max_block, aligned);
    int nb = max_active_blocks(bs, (long long)smem_of(bs));
    if (bs * nb > best_occ) { best = bs; best_blocks = nb; best_occ = bs * nb; }
    if (best_occ == m.threads_per_sm) break;
  }
  if (min_grid) *min_grid = best_blocks * m.sms;
  if (block) *block = best;
}

// A cooperative launch needs every block resident at once (cudaErrorCooperativeLaunchTooLarge).
inline bool cooperative_fits(dim3 grid, dim3 block, size_t shmem) {
  long long nb = (long long)grid.x * grid.y * grid.z;
  long long nt = (long long)block.x * block.y * block.z;
  return nb <= (long long)max_active_blocks(nt, (long long)shmem) * device_model().sms;
}

// Device limits (cudaDeviceSetLimit / hipDeviceSetLimit): remembered and reported back.
inline size_t &device_limit(int which) {
  static size_t v[8] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0, 0};
  return v[which & 7];
}

// exit() in the program's code (the prologues define `exit(...)` as a call of this): a runtime
// error of the run naming the call, instead of the process ending with the driver's outputs not
// produced (and, in a forked driver, atexit handlers and stdio buffers run twice).
[[noreturn]] inline void program_exit(int status, const char *file, int line) {
  fflush(stdout);
  fflush(stderr);
  if (in_kernel())
    fail(FAIL_RUNTIME, "exit(%d) called in device code of kernel %s at %s:%d", status, launch_state().name, file, line);
  fail(FAIL_RUNTIME, "the program called exit(%d) at %s:%d (host code ends the run: its outputs are not produced)",
       status, file, line);
}

}}  // namespace xp::gpu

namespace xp { namespace gpu {
// `k<<<g, b, shmem, stream>>>(args)` as rewritten by prepare(): launch errors go to the
// cudaGetLastError / hipGetLastError state, like an asynchronous launch.
template <class S, class F>
inline void launch_from_host(const char *name, dim3 grid, dim3 block, size_t shmem, S &&, F &&body) {
  set_error(launch(name, grid, block, shmem, nullptr, body));
}
}}  // namespace xp::gpu

// The prologues end with `#define exit(status) __xp_exit((status), __FILE__, __LINE__)` (and
// `std::__xp_exit`), so the program's exit() calls come here with their call site.
[[noreturn]] inline void __xp_exit(int status, const char *file, int line) { xp::gpu::program_exit(status, file, line); }
