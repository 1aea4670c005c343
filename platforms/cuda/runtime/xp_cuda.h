// xp_cuda.h - CUDA prologue of the virtual device: the CUDA runtime API names mapped onto the
// shared runtime (platforms/common/gpu_runtime). prepare() includes this before the user's code;
// the shim headers (cuda_runtime.h, cuda_fp16.h, mma.h, ...) just include it.
#pragma once
#define XP_PLATFORM_CUDA 1
#ifndef XP_WARP_SIZE
#define XP_WARP_SIZE 32
#endif
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#define __NVCC__ 1
#ifndef __CUDACC_VER_MAJOR__
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 4
#define __CUDACC_VER_BUILD__ 0
#endif
#ifndef CUDART_VERSION
#define CUDART_VERSION 12040
#endif
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif
#include "xp_gpu.h"
#include "xp_wmma.h"

// ---------------------------------------------------------------- types
enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
                 cudaErrorInitializationError = 3, cudaErrorLaunchFailure = 4, cudaErrorInvalidConfiguration = 9,
                 cudaErrorInvalidDevicePointer = 17, cudaErrorInvalidMemcpyDirection = 21,
                 cudaErrorInvalidDeviceFunction = 98, cudaErrorNoDevice = 100, cudaErrorInvalidDevice = 101,
                 cudaErrorNotReady = 600, cudaErrorLaunchOutOfResources = 701, cudaErrorUnknown = 999 };
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
                      cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
                         cudaFuncAttributePreferredSharedMemoryCarveout = 9 };
enum cudaFuncCache { cudaFuncCachePreferNone = 0, cudaFuncCachePreferShared = 1, cudaFuncCachePreferL1 = 2,
                     cudaFuncCachePreferEqual = 3 };
enum cudaSharedMemConfig { cudaSharedMemBankSizeDefault = 0, cudaSharedMemBankSizeFourByte = 1,
                           cudaSharedMemBankSizeEightByte = 2 };
enum cudaDeviceAttr { cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMaxBlockDimX = 2, cudaDevAttrMaxBlockDimY = 3,
                      cudaDevAttrMaxBlockDimZ = 4, cudaDevAttrMaxGridDimX = 5, cudaDevAttrMaxGridDimY = 6,
                      cudaDevAttrMaxGridDimZ = 7, cudaDevAttrMaxSharedMemoryPerBlock = 8, cudaDevAttrWarpSize = 10,
                      cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75,
                      cudaDevAttrComputeCapabilityMinor = 76, cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
struct CUstream_st { xp::gpu::Stream s; };
struct CUevent_st { xp::gpu::Event e; };
typedef CUstream_st *cudaStream_t;
typedef CUevent_st *cudaEvent_t;
#define cudaStreamDefault 0
#define cudaStreamNonBlocking 1
#define cudaEventDefault 0
#define cudaEventBlockingSync 1
#define cudaEventDisableTiming 2
#define cudaHostAllocDefault 0
#define cudaMemAttachGlobal 1
#define cudaStreamLegacy ((cudaStream_t)0)
#define cudaStreamPerThread ((cudaStream_t)0)

struct cudaDeviceProp {
  char name[256];
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize;
  size_t memPitch;
  int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
  size_t totalConstMem;
  int major, minor;
  size_t textureAlignment;
  int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode;
  int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, asyncEngineCount, unifiedAddressing;
  int memoryClockRate, memoryBusWidth, l2CacheSize, maxThreadsPerMultiProcessor;
  size_t sharedMemPerMultiprocessor, sharedMemPerBlockOptin;
  int regsPerMultiprocessor, managedMemory, cooperativeLaunch, maxBlocksPerMultiProcessor;
};

// ---------------------------------------------------------------- API
inline cudaError_t cudaGetLastError() { return (cudaError_t)xp::gpu::consume_error(); }
inline cudaError_t cudaPeekAtLastError() { return (cudaError_t)xp::gpu::last_error(); }
inline const char *cudaGetErrorString(cudaError_t e) { return xp::gpu::error_string((int)e); }
inline const char *cudaGetErrorName(cudaError_t e) {
  static thread_local char buf[64];
  snprintf(buf, sizeof buf, "cuda%s", xp::gpu::error_name((int)e));
  return buf;
}
inline cudaError_t cudaMalloc(void **p, size_t n) { return (cudaError_t)xp::gpu::api_malloc(p, n); }
template <class T> inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc((void **)p, n); }
inline cudaError_t cudaMallocManaged(void **p, size_t n, unsigned = cudaMemAttachGlobal) { return cudaMalloc(p, n); }
template <class T> inline cudaError_t cudaMallocManaged(T **p, size_t n, unsigned f = cudaMemAttachGlobal) { return cudaMallocManaged((void **)p, n, f); }
inline cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
template <class T> inline cudaError_t cudaMallocAsync(T **p, size_t n, cudaStream_t s) { return cudaMallocAsync((void **)p, n, s); }
inline cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h) { *pitch = (w + 255) / 256 * 256; return cudaMalloc(p, *pitch * h); }
inline cudaError_t cudaFree(void *p) { return (cudaError_t)xp::gpu::api_free(p); }
inline cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }
inline cudaError_t cudaMallocHost(void **p, size_t n) { *p = xp::gpu::host_alloc(n); return cudaSuccess; }
template <class T> inline cudaError_t cudaMallocHost(T **p, size_t n) { return cudaMallocHost((void **)p, n); }
inline cudaError_t cudaHostAlloc(void **p, size_t n, unsigned) { return cudaMallocHost(p, n); }
template <class T> inline cudaError_t cudaHostAlloc(T **p, size_t n, unsigned f) { return cudaHostAlloc((void **)p, n, f); }
inline cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
inline cudaError_t cudaHostRegister(void *, size_t, unsigned) { return cudaSuccess; }
inline cudaError_t cudaHostUnregister(void *) { return cudaSuccess; }
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) { return (cudaError_t)xp::gpu::api_memcpy(d, s, n, (int)k, "cudaMemcpy"); }
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t = 0) { return (cudaError_t)xp::gpu::api_memcpy(d, s, n, (int)k, "cudaMemcpyAsync"); }
inline cudaError_t cudaMemcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, cudaMemcpyKind k) { return (cudaError_t)xp::gpu::api_memcpy2d(d, dp, s, sp, w, h, (int)k, "cudaMemcpy2D"); }
inline cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, cudaMemcpyKind k, cudaStream_t = 0) { return cudaMemcpy2D(d, dp, s, sp, w, h, k); }
inline cudaError_t cudaMemset(void *p, int v, size_t n) { return (cudaError_t)xp::gpu::api_memset(p, v, n, "cudaMemset"); }
inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t = 0) { return cudaMemset(p, v, n); }
template <class T> inline cudaError_t cudaMemcpyToSymbol(const T &sym, const void *src, size_t n, size_t off = 0, cudaMemcpyKind = cudaMemcpyHostToDevice) {
  if (off + n > sizeof(T)) return cudaErrorInvalidValue;
  memcpy((char *)&sym + off, src, n); return cudaSuccess;
}
template <class T> inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &sym, size_t n, size_t off = 0, cudaMemcpyKind = cudaMemcpyDeviceToHost) {
  if (off + n > sizeof(T)) return cudaErrorInvalidValue;
  memcpy(dst, (const char *)&sym + off, n); return cudaSuccess;
}
template <class T> inline cudaError_t cudaMemcpyToSymbolAsync(const T &sym, const void *src, size_t n, size_t off = 0, cudaMemcpyKind k = cudaMemcpyHostToDevice, cudaStream_t = 0) { return cudaMemcpyToSymbol(sym, src, n, off, k); }
template <class T> inline cudaError_t cudaGetSymbolAddress(void **p, const T &sym) { *p = (void *)&sym; return cudaSuccess; }
inline cudaError_t cudaMemGetInfo(size_t *fr, size_t *tot) { *fr = (size_t)16 << 30; *tot = (size_t)80 << 30; return cudaSuccess; }
inline cudaError_t cudaMemPrefetchAsync(const void *, size_t, int, cudaStream_t = 0) { return cudaSuccess; }

inline cudaError_t cudaDeviceSynchronize() { return (cudaError_t)xp::gpu::last_error(); }
inline cudaError_t cudaThreadSynchronize() { return cudaDeviceSynchronize(); }
inline cudaError_t cudaDeviceReset() { return cudaSuccess; }
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
inline cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
inline cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev) {
  if (dev != 0) return cudaErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "xpiler virtual CUDA device (sm_%d)", __CUDA_ARCH__ / 10);
  p->totalGlobalMem = (size_t)80 << 30;
  p->sharedMemPerBlock = (size_t)xp::options().shared_mem_bytes;
  p->sharedMemPerBlockOptin = XP_SHARED_OPTIN_BYTES > 0 ? (size_t)XP_SHARED_OPTIN_BYTES : p->sharedMemPerBlock;
  p->sharedMemPerMultiprocessor = p->sharedMemPerBlockOptin;
  p->regsPerBlock = 65536; p->regsPerMultiprocessor = 65536;
  p->warpSize = warpSize;
  p->maxThreadsPerBlock = xp::options().max_threads_per_block;
  p->maxThreadsDim[0] = XP_BLOCK_LIMIT_X; p->maxThreadsDim[1] = XP_BLOCK_LIMIT_Y; p->maxThreadsDim[2] = XP_BLOCK_LIMIT_Z;
  p->maxGridSize[0] = (int)XP_GRID_LIMIT_X; p->maxGridSize[1] = (int)XP_GRID_LIMIT_Y; p->maxGridSize[2] = (int)XP_GRID_LIMIT_Z;
  p->clockRate = 1410000; p->memoryClockRate = 1215000; p->memoryBusWidth = 5120; p->l2CacheSize = 40 << 20;
  p->totalConstMem = 65536; p->major = __CUDA_ARCH__ / 100; p->minor = (__CUDA_ARCH__ / 10) % 10;
  p->multiProcessorCount = 108; p->maxThreadsPerMultiProcessor = 2048; p->maxBlocksPerMultiProcessor = 32;
  p->concurrentKernels = 1; p->unifiedAddressing = 1; p->managedMemory = 1; p->canMapHostMemory = 1;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int dev) {
  cudaDeviceProp p;
  cudaError_t e = cudaGetDeviceProperties(&p, dev);
  if (e) return e;
  switch (a) {
    case cudaDevAttrMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *v = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *v = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *v = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *v = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *v = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *v = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrWarpSize: *v = p.warpSize; break;
    case cudaDevAttrMultiProcessorCount: *v = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *v = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *v = p.minor; break;
    default: return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}
inline cudaError_t cudaFuncSetAttribute(const void *, cudaFuncAttribute a, int v) {
  if (a == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    long long cap = XP_SHARED_OPTIN_BYTES > 0 ? (long long)XP_SHARED_OPTIN_BYTES : xp::options().shared_mem_bytes;
    if (v < 0 || v > cap) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidValue);
    if (v > xp::gpu::dyn_shared_optin()) xp::gpu::dyn_shared_optin() = v;
  }
  return cudaSuccess;
}
template <class T> inline cudaError_t cudaFuncSetAttribute(T *f, cudaFuncAttribute a, int v) { return cudaFuncSetAttribute((const void *)f, a, v); }
template <class T> inline cudaError_t cudaFuncSetCacheConfig(T *, cudaFuncCache) { return cudaSuccess; }
template <class T> inline cudaError_t cudaFuncSetSharedMemConfig(T *, cudaSharedMemConfig) { return cudaSuccess; }

inline cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = new CUstream_st(); return cudaSuccess; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) { return cudaStreamCreate(s); }
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned, int) { return cudaStreamCreate(s); }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) { delete s; return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return (cudaError_t)xp::gpu::last_error(); }
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = new CUevent_st(); return cudaSuccess; }
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { return cudaEventCreate(e); }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = 0) { e->e.t = xp::gpu::now_ms(); e->e.recorded = true; return cudaSuccess; }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  if (!a->e.recorded || !b->e.recorded) return cudaErrorInvalidValue;
  *ms = (float)(b->e.t - a->e.t); return cudaSuccess;
}

// cudaLaunchKernel(func, grid, block, args, shmem, stream): args[i] points at argument i.
template <class... P>
inline cudaError_t cudaLaunchKernel(void (*k)(P...), dim3 grid, dim3 block, void **args, size_t shmem = 0, cudaStream_t = 0) {
  auto body = [k, args]() { ::xp::call_with_args(k, args); };
  return (cudaError_t)xp::gpu::set_error(xp::gpu::launch("cudaLaunchKernel", grid, block, shmem, nullptr, body));
}
inline cudaError_t cudaLaunchKernel(const void *k, dim3 grid, dim3 block, void **args, size_t shmem = 0, cudaStream_t = 0) {
  return (cudaError_t)xp::gpu::set_error(xp::gpu::launch_untyped(k, grid, block, args, shmem));
}
inline unsigned __activemask() { return (unsigned)__xp_activemask(); }

// Named device allocations (see xp::AllocSite): the macros come last so the runtime above calls
// the plain functions; `::cudaMalloc(...)` still works (the expansion starts with the name).
inline cudaError_t cudaMalloc(void **p, size_t n, ::xp::AllocSite s) {
  return (cudaError_t)xp::gpu::api_malloc(p, n, ::xp::site_label("cudaMalloc", s));
}
template <class T> inline cudaError_t cudaMalloc(T **p, size_t n, ::xp::AllocSite s) { return cudaMalloc((void **)p, n, s); }
inline cudaError_t cudaMallocManaged(void **p, size_t n, unsigned, ::xp::AllocSite s) {
  return (cudaError_t)xp::gpu::api_malloc(p, n, ::xp::site_label("cudaMallocManaged", s));
}
inline cudaError_t cudaMallocManaged(void **p, size_t n, ::xp::AllocSite s) { return cudaMallocManaged(p, n, 0u, s); }
template <class T> inline cudaError_t cudaMallocManaged(T **p, size_t n, unsigned f, ::xp::AllocSite s) {
  return cudaMallocManaged((void **)p, n, f, s);
}
template <class T> inline cudaError_t cudaMallocManaged(T **p, size_t n, ::xp::AllocSite s) {
  return cudaMallocManaged((void **)p, n, 0u, s);
}
#define cudaMalloc(...) cudaMalloc(__VA_ARGS__, ::xp::AllocSite{#__VA_ARGS__, __FILE__, __LINE__})
#define cudaMallocManaged(...) cudaMallocManaged(__VA_ARGS__, ::xp::AllocSite{#__VA_ARGS__, __FILE__, __LINE__})
