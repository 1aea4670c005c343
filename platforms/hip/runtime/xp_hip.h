// xp_hip.h - HIP prologue of the virtual device: HIP runtime API names and AMD device built-ins
// on the shared runtime (platforms/common/gpu_runtime). Wavefront = 64 lanes (CDNA).
// The MFMA builtins are generated into the unit by platforms/hip/emulate.py from
// platforms/hip/intrinsics/mfma.toml (after this header).
#pragma once
#define XP_PLATFORM_HIP 1
#ifndef XP_WARP_SIZE
#define XP_WARP_SIZE 64
#endif
#define __HIP_PLATFORM_AMD__ 1
#define __HIP_PLATFORM_HCC__ 1
#define __HIPCC__ 1
#define __HIP__ 1
#ifndef HIP_VERSION_MAJOR
#define HIP_VERSION_MAJOR 6
#define HIP_VERSION_MINOR 2
#define HIP_VERSION_PATCH 0
#define HIP_VERSION (HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH)
#endif
#include "xp_gpu.h"

// ---------------------------------------------------------------- types
enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorOutOfMemory = 2, hipErrorMemoryAllocation = 2,
                  hipErrorNotInitialized = 3, hipErrorInitializationError = 3, hipErrorInvalidConfiguration = 9,
                  hipErrorInvalidDevicePointer = 17, hipErrorInvalidMemcpyDirection = 21, hipErrorNoDevice = 100,
                  hipErrorInvalidDevice = 101, hipErrorNotReady = 600, hipErrorLaunchFailure = 719,
                  hipErrorUnknown = 999 };
enum hipMemcpyKind { hipMemcpyHostToHost = 0, hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2,
                     hipMemcpyDeviceToDevice = 3, hipMemcpyDefault = 4 };
enum hipFuncAttribute { hipFuncAttributeMaxDynamicSharedMemorySize = 8, hipFuncAttributePreferredSharedMemoryCarveout = 9 };
enum hipDeviceAttribute_t { hipDeviceAttributeMaxThreadsPerBlock = 1, hipDeviceAttributeWarpSize = 10,
                            hipDeviceAttributeMaxSharedMemoryPerBlock = 8, hipDeviceAttributeMultiprocessorCount = 16 };
struct ihipStream_t { xp::gpu::Stream s; };
struct ihipEvent_t { xp::gpu::Event e; };
typedef ihipStream_t *hipStream_t;
typedef ihipEvent_t *hipEvent_t;
#define hipStreamDefault 0
#define hipStreamNonBlocking 1
#define hipEventDefault 0
#define hipEventDisableTiming 2
#define hipHostMallocDefault 0
#define hipMemAttachGlobal 1

struct hipDeviceProp_t {
  char name[256];
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
  size_t totalConstMem;
  int major, minor, multiProcessorCount, l2CacheSize, maxThreadsPerMultiProcessor;
  size_t maxSharedMemoryPerMultiProcessor;
  char gcnArchName[256];
  int memoryClockRate, memoryBusWidth, concurrentKernels, managedMemory;
};

#ifndef XP_HIP_ARCH_NAME
#define XP_HIP_ARCH_NAME "gfx90a"
#endif

// ---------------------------------------------------------------- API
inline hipError_t hipGetLastError() { return (hipError_t)xp::gpu::consume_error(); }
inline hipError_t hipPeekAtLastError() { return (hipError_t)xp::gpu::last_error(); }
inline const char *hipGetErrorString(hipError_t e) { return xp::gpu::error_string((int)e); }
inline const char *hipGetErrorName(hipError_t e) {
  static thread_local char buf[64];
  snprintf(buf, sizeof buf, "hip%s", xp::gpu::error_name((int)e));
  return buf;
}
inline hipError_t hipMalloc(void **p, size_t n) { return (hipError_t)xp::gpu::api_malloc(p, n); }
template <class T> inline hipError_t hipMalloc(T **p, size_t n) { return hipMalloc((void **)p, n); }
inline hipError_t hipMallocManaged(void **p, size_t n, unsigned = hipMemAttachGlobal) { return hipMalloc(p, n); }
template <class T> inline hipError_t hipMallocManaged(T **p, size_t n, unsigned f = hipMemAttachGlobal) { return hipMallocManaged((void **)p, n, f); }
inline hipError_t hipFree(void *p) { return (hipError_t)xp::gpu::api_free(p); }
inline hipError_t hipHostMalloc(void **p, size_t n, unsigned = 0) { *p = xp::gpu::host_alloc(n); return hipSuccess; }
template <class T> inline hipError_t hipHostMalloc(T **p, size_t n, unsigned f = 0) { return hipHostMalloc((void **)p, n, f); }
inline hipError_t hipMallocHost(void **p, size_t n) { return hipHostMalloc(p, n); }
inline hipError_t hipHostFree(void *p) { free(p); return hipSuccess; }
inline hipError_t hipFreeHost(void *p) { free(p); return hipSuccess; }
inline hipError_t hipMemcpy(void *d, const void *s, size_t n, hipMemcpyKind k) { return (hipError_t)xp::gpu::api_memcpy(d, s, n, (int)k, "hipMemcpy"); }
inline hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t = 0) { return (hipError_t)xp::gpu::api_memcpy(d, s, n, (int)k, "hipMemcpyAsync"); }
inline hipError_t hipMemcpyHtoD(void *d, const void *s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyHostToDevice); }
inline hipError_t hipMemcpyDtoH(void *d, const void *s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyDeviceToHost); }
inline hipError_t hipMemcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, hipMemcpyKind k) { return (hipError_t)xp::gpu::api_memcpy2d(d, dp, s, sp, w, h, (int)k, "hipMemcpy2D"); }
inline hipError_t hipMemset(void *p, int v, size_t n) { return (hipError_t)xp::gpu::api_memset(p, v, n, "hipMemset"); }
inline hipError_t hipMemsetAsync(void *p, int v, size_t n, hipStream_t = 0) { return hipMemset(p, v, n); }
template <class T> inline hipError_t hipMemcpyToSymbol(const T &sym, const void *src, size_t n, size_t off = 0, hipMemcpyKind = hipMemcpyHostToDevice) {
  if (off + n > sizeof(T)) return hipErrorInvalidValue;
  memcpy((char *)&sym + off, src, n); return hipSuccess;
}
template <class T> inline hipError_t hipMemcpyFromSymbol(void *dst, const T &sym, size_t n, size_t off = 0, hipMemcpyKind = hipMemcpyDeviceToHost) {
  if (off + n > sizeof(T)) return hipErrorInvalidValue;
  memcpy(dst, (const char *)&sym + off, n); return hipSuccess;
}
#define HIP_SYMBOL(x) x
inline hipError_t hipMemGetInfo(size_t *fr, size_t *tot) { *fr = (size_t)16 << 30; *tot = (size_t)64 << 30; return hipSuccess; }
inline hipError_t hipDeviceSynchronize() { return (hipError_t)xp::gpu::last_error(); }
inline hipError_t hipDeviceReset() { return hipSuccess; }
inline hipError_t hipSetDevice(int d) { return d == 0 ? hipSuccess : hipErrorInvalidDevice; }
inline hipError_t hipGetDevice(int *d) { *d = 0; return hipSuccess; }
inline hipError_t hipGetDeviceCount(int *n) { *n = 1; return hipSuccess; }
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int dev) {
  if (dev != 0) return hipErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "xpiler virtual HIP device (%s)", XP_HIP_ARCH_NAME);
  snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", XP_HIP_ARCH_NAME);
  p->totalGlobalMem = (size_t)64 << 30;
  p->sharedMemPerBlock = (size_t)xp::options().shared_mem_bytes;
  p->maxSharedMemoryPerMultiProcessor = p->sharedMemPerBlock;
  p->regsPerBlock = 65536; p->warpSize = warpSize; p->maxThreadsPerBlock = xp::options().max_threads_per_block;
  p->maxThreadsDim[0] = XP_BLOCK_LIMIT_X; p->maxThreadsDim[1] = XP_BLOCK_LIMIT_Y; p->maxThreadsDim[2] = XP_BLOCK_LIMIT_Z;
  p->maxGridSize[0] = (int)XP_GRID_LIMIT_X; p->maxGridSize[1] = (int)XP_GRID_LIMIT_Y; p->maxGridSize[2] = (int)XP_GRID_LIMIT_Z;
  p->clockRate = 1700000; p->major = 9; p->minor = 0; p->multiProcessorCount = 104; p->l2CacheSize = 8 << 20;
  p->maxThreadsPerMultiProcessor = 2048; p->totalConstMem = 65536; p->concurrentKernels = 1; p->managedMemory = 1;
  return hipSuccess;
}
inline hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t a, int dev) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, dev);
  if (e) return e;
  switch (a) {
    case hipDeviceAttributeMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case hipDeviceAttributeWarpSize: *v = p.warpSize; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
    case hipDeviceAttributeMultiprocessorCount: *v = p.multiProcessorCount; break;
    default: return hipErrorInvalidValue;
  }
  return hipSuccess;
}
inline hipError_t hipFuncSetAttribute(const void *, hipFuncAttribute a, int v) {
  if (a == hipFuncAttributeMaxDynamicSharedMemorySize && v > xp::options().shared_mem_bytes)
    return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
  return hipSuccess;
}
template <class T> inline hipError_t hipFuncSetAttribute(T *f, hipFuncAttribute a, int v) { return hipFuncSetAttribute((const void *)f, a, v); }
inline hipError_t hipStreamCreate(hipStream_t *s) { *s = new ihipStream_t(); return hipSuccess; }
inline hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned) { return hipStreamCreate(s); }
inline hipError_t hipStreamDestroy(hipStream_t s) { delete s; return hipSuccess; }
inline hipError_t hipStreamSynchronize(hipStream_t) { return (hipError_t)xp::gpu::last_error(); }
inline hipError_t hipEventCreate(hipEvent_t *e) { *e = new ihipEvent_t(); return hipSuccess; }
inline hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned) { return hipEventCreate(e); }
inline hipError_t hipEventDestroy(hipEvent_t e) { delete e; return hipSuccess; }
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t = 0) { e->e.t = xp::gpu::now_ms(); e->e.recorded = true; return hipSuccess; }
inline hipError_t hipEventSynchronize(hipEvent_t) { return hipSuccess; }
inline hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b) {
  if (!a->e.recorded || !b->e.recorded) return hipErrorInvalidValue;
  *ms = (float)(b->e.t - a->e.t); return hipSuccess;
}

// hipLaunchKernelGGL(kernel, grid, block, shmem, stream, args...) == kernel<<<grid, block, shmem, stream>>>(args...)
#ifdef XP_CLANG_PARSE  // the C++ front-end: a launch clang sees as one (CUDA mode)
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...) \
  kernel<<<dim3(grid), dim3(block), (size_t)(shmem), (stream)>>>(__VA_ARGS__)
#else
#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...)                                   \
  ::xp::gpu::launch_from_host(#kernel, dim3(grid), dim3(block), (size_t)(shmem), (stream),             \
                              [&](auto... __xp_a) { return [=]() mutable { kernel(__xp_a...); }; }(__VA_ARGS__))
#endif
#define HIP_KERNEL_NAME(...) __VA_ARGS__
template <class... P>
inline hipError_t hipLaunchKernel(void (*k)(P...), dim3 grid, dim3 block, void **args, size_t shmem = 0, hipStream_t = 0) {
  auto body = [k, args]() { ::xp::call_with_args(k, args); };
  return (hipError_t)xp::gpu::set_error(xp::gpu::launch("hipLaunchKernel", grid, block, shmem, nullptr, body));
}

inline hipError_t hipLaunchKernel(const void *k, dim3 grid, dim3 block, void **args, size_t shmem = 0, hipStream_t = 0) {
  return (hipError_t)xp::gpu::set_error(xp::gpu::launch_untyped(k, grid, block, args, shmem));
}

// ---------------------------------------------------------------- device built-ins (AMD)
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

// mask-less wavefront shuffles (LLVM / amd_warp_functions.h formulas, see shfl_source)
template <class T> inline T __shfl(T v, int src, int width = warpSize) { return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_IDX, src, width); }
template <class T> inline T __shfl_up(T v, unsigned delta, int width = warpSize) { return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_UP, delta, width); }
template <class T> inline T __shfl_down(T v, unsigned delta, int width = warpSize) { return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_DOWN, delta, width); }
template <class T> inline T __shfl_xor(T v, int lane_mask, int width = warpSize) { return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_XOR, lane_mask, width); }
inline unsigned long long __ballot(int pred) { return xp::gpu::vote(~0ull, pred != 0, "__ballot").ballot; }
inline unsigned long long __ballot64(int pred) { return __ballot(pred); }
inline int __any(int pred) { return __ballot(pred) != 0; }
inline int __all(int pred) { auto d = xp::gpu::vote(~0ull, pred != 0, "__all"); return d.ballot == d.arrived; }
inline unsigned long long __activemask() { return __xp_activemask(); }
inline unsigned __lane_id() { xp::gpu::require_device("__lane_id"); return (unsigned)xp::gpu::cur_thread().lane; }
inline unsigned __smid() { return 0; }
inline int __builtin_amdgcn_ds_bpermute(int addr, int v) { return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_RAW, addr >> 2, 64); }
inline int __builtin_amdgcn_readfirstlane(int v) {
  xp::gpu::require_device("__builtin_amdgcn_readfirstlane");
  auto live = xp::gpu::block_state().warps[xp::gpu::cur_thread().warp].live;
  return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_RAW, __builtin_ctzll(live), 64);
}
inline int __builtin_amdgcn_readlane(int v, int lane) { return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_RAW, lane, 64); }
inline unsigned __builtin_amdgcn_mbcnt_lo(unsigned m, unsigned c) { return c + __builtin_popcount(m & (unsigned)((xp::gpu::lane_bit() - 1) & 0xffffffffu)); }
inline unsigned __builtin_amdgcn_mbcnt_hi(unsigned m, unsigned c) { return c + __builtin_popcount(m & (unsigned)((xp::gpu::lane_bit() - 1) >> 32)); }
inline void __builtin_amdgcn_s_barrier() { __syncthreads(); }
inline void __builtin_amdgcn_wave_barrier() { __syncwarp(); }
inline void __builtin_amdgcn_s_waitcnt(int) {}
inline void __builtin_amdgcn_s_setprio(int) {}
inline void __builtin_amdgcn_s_sleep(int) {}
inline void __builtin_amdgcn_sched_barrier(int) {}
inline void __builtin_amdgcn_sched_group_barrier(int, int, int) {}
inline void __builtin_amdgcn_fence(int, const char *) {}
inline unsigned __builtin_amdgcn_workitem_id_x() { return threadIdx.x; }
inline unsigned __builtin_amdgcn_workitem_id_y() { return threadIdx.y; }
inline unsigned __builtin_amdgcn_workitem_id_z() { return threadIdx.z; }
inline unsigned __builtin_amdgcn_workgroup_id_x() { return blockIdx.x; }
inline unsigned __builtin_amdgcn_workgroup_id_y() { return blockIdx.y; }
inline unsigned __builtin_amdgcn_workgroup_id_z() { return blockIdx.z; }
// ---------------------------------------------------------------- ROCm device library (OCML)
// __ocml_<fn>_f32 / _f64 as called directly by hand-tuned ROCm kernels: the libm function.
// (The same table is in passes/gpu_lift_support.py OCML_UNARY / OCML_BINARY.)
#define XP_OCML1(fn, cf, cd) inline float __ocml_##fn##_f32(float x) { return cf(x); } \
  inline double __ocml_##fn##_f64(double x) { return cd(x); }
#define XP_OCML2(fn, cf, cd) inline float __ocml_##fn##_f32(float x, float y) { return cf(x, y); } \
  inline double __ocml_##fn##_f64(double x, double y) { return cd(x, y); }
XP_OCML1(acos, ::acosf, ::acos)
XP_OCML1(acosh, ::acoshf, ::acosh)
XP_OCML1(asin, ::asinf, ::asin)
XP_OCML1(asinh, ::asinhf, ::asinh)
XP_OCML1(atan, ::atanf, ::atan)
XP_OCML1(atanh, ::atanhf, ::atanh)
XP_OCML1(cbrt, ::cbrtf, ::cbrt)
XP_OCML1(ceil, ::ceilf, ::ceil)
XP_OCML1(cos, ::cosf, ::cos)
XP_OCML1(cosh, ::coshf, ::cosh)
XP_OCML1(erf, ::erff, ::erf)
XP_OCML1(erfc, ::erfcf, ::erfc)
XP_OCML1(exp, ::expf, ::exp)
XP_OCML1(exp10, ::exp10f, ::exp10)
XP_OCML1(exp2, ::exp2f, ::exp2)
XP_OCML1(expm1, ::expm1f, ::expm1)
XP_OCML1(fabs, ::fabsf, ::fabs)
XP_OCML1(floor, ::floorf, ::floor)
XP_OCML1(lgamma, ::lgammaf, ::lgamma)
XP_OCML1(log, ::logf, ::log)
XP_OCML1(log10, ::log10f, ::log10)
XP_OCML1(log1p, ::log1pf, ::log1p)
XP_OCML1(log2, ::log2f, ::log2)
XP_OCML1(rint, ::rintf, ::rint)
XP_OCML1(round, ::roundf, ::round)
inline float __ocml_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }
inline double __ocml_rsqrt_f64(double x) { return 1.0 / sqrt(x); }
XP_OCML1(sin, ::sinf, ::sin)
XP_OCML1(sinh, ::sinhf, ::sinh)
XP_OCML1(sqrt, ::sqrtf, ::sqrt)
XP_OCML1(tan, ::tanf, ::tan)
XP_OCML1(tanh, ::tanhf, ::tanh)
XP_OCML1(tgamma, ::tgammaf, ::tgamma)
XP_OCML1(trunc, ::truncf, ::trunc)
XP_OCML2(atan2, ::atan2f, ::atan2)
XP_OCML2(copysign, ::copysignf, ::copysign)
XP_OCML2(fdim, ::fdimf, ::fdim)
XP_OCML2(fmax, ::fmaxf, ::fmax)
XP_OCML2(fmin, ::fminf, ::fmin)
XP_OCML2(fmod, ::fmodf, ::fmod)
XP_OCML2(hypot, ::hypotf, ::hypot)
XP_OCML2(pow, ::powf, ::pow)
inline float __ocml_fma_f32(float x, float y, float z) { return fmaf(x, y, z); }
inline double __ocml_fma_f64(double x, double y, double z) { return fma(x, y, z); }
#undef XP_OCML1
#undef XP_OCML2
typedef __half __xp_f16;   // prepare() maps `_Float16` / `__fp16` to this (binary16, RNE arithmetic)

// Named device allocations (see xp::AllocSite): the macros come last so the runtime above calls
// the plain functions; `::hipMalloc(...)` still works (the expansion starts with the name).
inline hipError_t hipMalloc(void **p, size_t n, ::xp::AllocSite s) {
  return (hipError_t)xp::gpu::api_malloc(p, n, ::xp::site_label("hipMalloc", s));
}
template <class T> inline hipError_t hipMalloc(T **p, size_t n, ::xp::AllocSite s) { return hipMalloc((void **)p, n, s); }
inline hipError_t hipMallocManaged(void **p, size_t n, unsigned, ::xp::AllocSite s) {
  return (hipError_t)xp::gpu::api_malloc(p, n, ::xp::site_label("hipMallocManaged", s));
}
inline hipError_t hipMallocManaged(void **p, size_t n, ::xp::AllocSite s) { return hipMallocManaged(p, n, 0u, s); }
template <class T> inline hipError_t hipMallocManaged(T **p, size_t n, unsigned f, ::xp::AllocSite s) {
  return hipMallocManaged((void **)p, n, f, s);
}
template <class T> inline hipError_t hipMallocManaged(T **p, size_t n, ::xp::AllocSite s) {
  return hipMallocManaged((void **)p, n, 0u, s);
}
#define hipMalloc(...) hipMalloc(__VA_ARGS__, ::xp::AllocSite{#__VA_ARGS__, __FILE__, __LINE__})
#define hipMallocManaged(...) hipMallocManaged(__VA_ARGS__, ::xp::AllocSite{#__VA_ARGS__, __FILE__, __LINE__})
