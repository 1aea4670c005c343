// xp_gpu_host.h - host runtime shared by the CUDA and HIP shims (cudaMalloc/hipMalloc, ...).
// Device memory is host memory from xp::guarded_alloc (ends at a guard page, poisoned in strict
// mode); copies are memcpy; streams and events are synchronous. Error codes use CUDA's numbers
// (HIP's coincide for the ones used here). The shims wrap these in cuda* / hip* names.
#pragma once
#include <chrono>
#include <cstdlib>
#include <cstring>
#include "xp_gpu_sched.h"

namespace xp { namespace gpu {

enum ErrCode {
  E_SUCCESS = 0, E_INVALID_VALUE = 1, E_MEMORY = 2, E_INIT = 3, E_INVALID_CONFIG = 9,
  E_INVALID_DEVPTR = 17, E_INVALID_MEMCPY_DIR = 21, E_NO_DEVICE = 100, E_INVALID_DEVICE = 101,
  E_NOT_READY = 600
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
    case E_NO_DEVICE: return "ErrorNoDevice";
    case E_INVALID_DEVICE: return "ErrorInvalidDevice";
    case E_NOT_READY: return "ErrorNotReady";
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
    case E_NO_DEVICE: return "no device";
    case E_INVALID_DEVICE: return "invalid device ordinal";
    case E_NOT_READY: return "device not ready";
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
  *p = guarded_alloc(n, "device allocation", kDeviceAlign, options().strict != 0, label);
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

inline void *host_alloc(size_t n) {
  void *p = nullptr;
  if (posix_memalign(&p, 256, n ? n : 1)) fail(FAIL_MEMORY, "cannot allocate %zu bytes of pinned host memory", n);
  return p;
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
  if (n == 0) return E_SUCCESS;
  check_side(p, n, true, api, "destination");
  memset(p, v, n);
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

struct Event { double t = 0; bool recorded = false; };
struct Stream { int id = 0; };
inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline int consume_error() { int e = last_error(); last_error() = 0; return e; }

}}  // namespace xp::gpu

namespace xp { namespace gpu {
// `k<<<g, b, shmem, stream>>>(args)` as rewritten by prepare(): launch errors go to the
// cudaGetLastError / hipGetLastError state, like an asynchronous launch.
template <class S, class F>
inline void launch_from_host(const char *name, dim3 grid, dim3 block, size_t shmem, S &&, F &&body) {
  set_error(launch(name, grid, block, shmem, nullptr, body));
}
}}  // namespace xp::gpu
