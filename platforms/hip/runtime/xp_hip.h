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
// (Error codes: ROCm's values, which coincide with CUDA's for these. Device attributes: ROCm 6's
// names; their numeric values are the virtual device's own.)
enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorOutOfMemory = 2, hipErrorMemoryAllocation = 2,
                  hipErrorNotInitialized = 3, hipErrorInitializationError = 3, hipErrorDeinitialized = 4,
                  hipErrorInvalidConfiguration = 9, hipErrorInvalidPitchValue = 12, hipErrorInvalidSymbol = 13,
                  hipErrorInvalidDevicePointer = 17, hipErrorInvalidMemcpyDirection = 21,
                  hipErrorInsufficientDriver = 35, hipErrorInvalidDeviceFunction = 98, hipErrorNoDevice = 100,
                  hipErrorInvalidDevice = 101, hipErrorInvalidImage = 200, hipErrorInvalidContext = 201,
                  hipErrorInvalidHandle = 400, hipErrorInvalidResourceHandle = 400, hipErrorNotFound = 500,
                  hipErrorNotReady = 600, hipErrorIllegalAddress = 700, hipErrorLaunchOutOfResources = 701,
                  hipErrorLaunchTimeOut = 702, hipErrorPeerAccessAlreadyEnabled = 704,
                  hipErrorPeerAccessNotEnabled = 705, hipErrorLaunchFailure = 719,
                  hipErrorCooperativeLaunchTooLarge = 720, hipErrorNotSupported = 801, hipErrorUnknown = 999 };
enum hipMemcpyKind { hipMemcpyHostToHost = 0, hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2,
                     hipMemcpyDeviceToDevice = 3, hipMemcpyDefault = 4 };
enum hipFuncAttribute { hipFuncAttributeMaxDynamicSharedMemorySize = 8, hipFuncAttributePreferredSharedMemoryCarveout = 9,
                        hipFuncAttributeMax };
enum hipFuncCache_t { hipFuncCachePreferNone = 0, hipFuncCachePreferShared = 1, hipFuncCachePreferL1 = 2,
                      hipFuncCachePreferEqual = 3 };
enum hipSharedMemConfig { hipSharedMemBankSizeDefault = 0, hipSharedMemBankSizeFourByte = 1,
                          hipSharedMemBankSizeEightByte = 2 };
enum hipLimit_t { hipLimitStackSize = 0x0, hipLimitPrintfFifoSize = 0x01, hipLimitMallocHeapSize = 0x02,
                  hipLimitRange };
enum hipComputeMode { hipComputeModeDefault = 0, hipComputeModeExclusive = 1, hipComputeModeProhibited = 2,
                      hipComputeModeExclusiveProcess = 3 };
enum hipMemoryType { hipMemoryTypeUnregistered = 0, hipMemoryTypeHost = 1, hipMemoryTypeDevice = 2,
                     hipMemoryTypeManaged = 3, hipMemoryTypeArray = 10, hipMemoryTypeUnified = 11 };
enum hipMemoryAdvise { hipMemAdviseSetReadMostly = 1, hipMemAdviseUnsetReadMostly = 2,
                       hipMemAdviseSetPreferredLocation = 3, hipMemAdviseUnsetPreferredLocation = 4,
                       hipMemAdviseSetAccessedBy = 5, hipMemAdviseUnsetAccessedBy = 6 };
enum hipDeviceAttribute_t {
  hipDeviceAttributeCudaCompatibleBegin = 0, hipDeviceAttributeEccEnabled = hipDeviceAttributeCudaCompatibleBegin,
  hipDeviceAttributeAccessPolicyMaxWindowSize, hipDeviceAttributeAsyncEngineCount, hipDeviceAttributeCanMapHostMemory,
  hipDeviceAttributeCanUseHostPointerForRegisteredMem, hipDeviceAttributeClockRate, hipDeviceAttributeComputeMode,
  hipDeviceAttributeComputePreemptionSupported, hipDeviceAttributeConcurrentKernels,
  hipDeviceAttributeConcurrentManagedAccess, hipDeviceAttributeCooperativeLaunch,
  hipDeviceAttributeCooperativeMultiDeviceLaunch, hipDeviceAttributeDeviceOverlap,
  hipDeviceAttributeDirectManagedMemAccessFromHost, hipDeviceAttributeGlobalL1CacheSupported,
  hipDeviceAttributeHostNativeAtomicSupported, hipDeviceAttributeIntegrated, hipDeviceAttributeIsMultiGpuBoard,
  hipDeviceAttributeKernelExecTimeout, hipDeviceAttributeL2CacheSize, hipDeviceAttributeLocalL1CacheSupported,
  hipDeviceAttributeLuid, hipDeviceAttributeLuidDeviceNodeMask, hipDeviceAttributeComputeCapabilityMajor,
  hipDeviceAttributeManagedMemory, hipDeviceAttributeMaxBlocksPerMultiProcessor, hipDeviceAttributeMaxBlockDimX,
  hipDeviceAttributeMaxBlockDimY, hipDeviceAttributeMaxBlockDimZ, hipDeviceAttributeMaxGridDimX,
  hipDeviceAttributeMaxGridDimY, hipDeviceAttributeMaxGridDimZ, hipDeviceAttributeMaxThreadsDim,
  hipDeviceAttributeMaxThreadsPerBlock, hipDeviceAttributeMaxThreadsPerMultiProcessor, hipDeviceAttributeMaxPitch,
  hipDeviceAttributeMemoryBusWidth, hipDeviceAttributeMemoryClockRate, hipDeviceAttributeComputeCapabilityMinor,
  hipDeviceAttributeMultiGpuBoardGroupID, hipDeviceAttributeMultiprocessorCount,
  hipDeviceAttributePageableMemoryAccess, hipDeviceAttributePageableMemoryAccessUsesHostPageTables,
  hipDeviceAttributePciBusId, hipDeviceAttributePciDeviceId, hipDeviceAttributePciDomainID,
  hipDeviceAttributePersistingL2CacheMaxSize, hipDeviceAttributeMaxRegistersPerBlock,
  hipDeviceAttributeMaxRegistersPerMultiprocessor, hipDeviceAttributeReservedSharedMemPerBlock,
  hipDeviceAttributeMaxSharedMemoryPerBlock, hipDeviceAttributeSharedMemPerBlockOptin,
  hipDeviceAttributeSharedMemPerMultiprocessor, hipDeviceAttributeSingleToDoublePrecisionPerfRatio,
  hipDeviceAttributeStreamPrioritiesSupported, hipDeviceAttributeSurfaceAlignment, hipDeviceAttributeTccDriver,
  hipDeviceAttributeTextureAlignment, hipDeviceAttributeTexturePitchAlignment, hipDeviceAttributeTotalConstantMemory,
  hipDeviceAttributeTotalGlobalMem, hipDeviceAttributeUnifiedAddressing, hipDeviceAttributeWarpSize,
  hipDeviceAttributeMemoryPoolsSupported, hipDeviceAttributeVirtualMemoryManagementSupported,
  hipDeviceAttributeHostRegisterSupported,
  hipDeviceAttributeCudaCompatibleEnd = 9999, hipDeviceAttributeAmdSpecificBegin = 10000,
  hipDeviceAttributeClockInstructionRate = hipDeviceAttributeAmdSpecificBegin,
  hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, hipDeviceAttributeIsLargeBar, hipDeviceAttributeAsicRevision,
  hipDeviceAttributeCanUseStreamWaitValue, hipDeviceAttributeImageSupport,
  hipDeviceAttributePhysicalMultiProcessorCount, hipDeviceAttributeFineGrainSupport, hipDeviceAttributeWallClockRate,
  hipDeviceAttributeAmdSpecificEnd = 19999
};
struct ihipStream_t { xp::gpu::Stream s; };
struct ihipEvent_t { xp::gpu::Event e; };
typedef ihipStream_t *hipStream_t;
typedef ihipEvent_t *hipEvent_t;
typedef int hipDevice_t;
typedef void (*hipStreamCallback_t)(hipStream_t, hipError_t, void *);
typedef void (*hipHostFn_t)(void *);
#define hipStreamDefault 0x00
#define hipStreamNonBlocking 0x01
#define hipStreamPerThread ((hipStream_t)2)
#define hipEventDefault 0x0
#define hipEventBlockingSync 0x1
#define hipEventDisableTiming 0x2
#define hipEventInterprocess 0x4
#define hipHostMallocDefault 0x0
#define hipHostMallocPortable 0x1
#define hipHostMallocMapped 0x2
#define hipHostMallocWriteCombined 0x4
#define hipHostMallocCoherent 0x40000000
#define hipHostMallocNonCoherent 0x80000000
#define hipHostRegisterDefault 0x0
#define hipHostRegisterPortable 0x1
#define hipHostRegisterMapped 0x2
#define hipMemAttachGlobal 0x01
#define hipMemAttachHost 0x02
#define hipMemAttachSingle 0x04
#define hipDeviceScheduleAuto 0x0
#define hipDeviceScheduleSpin 0x1
#define hipDeviceScheduleYield 0x2
#define hipDeviceScheduleBlockingSync 0x4
#define hipDeviceMapHost 0x8

struct hipDeviceArch_t {
  unsigned hasGlobalInt32Atomics : 1, hasGlobalFloatAtomicExch : 1, hasSharedInt32Atomics : 1,
      hasSharedFloatAtomicExch : 1, hasFloatAtomicAdd : 1, hasGlobalInt64Atomics : 1, hasSharedInt64Atomics : 1,
      hasDoubles : 1, hasWarpVote : 1, hasWarpBallot : 1, hasWarpShuffle : 1, hasFunnelShift : 1,
      hasThreadFenceSystem : 1, hasSyncThreadsExt : 1, hasSurfaceFuncs : 1, has3dGrid : 1, hasDynamicParallelism : 1;
};
struct hipDeviceProp_t {
  char name[256];
  char uuid[16];
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize;
  size_t memPitch;
  int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
  size_t totalConstMem;
  int major, minor;
  size_t textureAlignment, texturePitchAlignment;
  int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode;
  int concurrentKernels, ECCEnabled, pciBusID, pciDeviceID, pciDomainID, tccDriver, asyncEngineCount;
  int unifiedAddressing, memoryClockRate, memoryBusWidth, l2CacheSize, persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor, streamPrioritiesSupported, globalL1CacheSupported, localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor, managedMemory, isMultiGpuBoard, multiGpuBoardGroupID;
  int hostNativeAtomicSupported, singleToDoublePrecisionPerfRatio, pageableMemoryAccess, concurrentManagedAccess;
  int computePreemptionSupported, canUseHostPointerForRegisteredMem, cooperativeLaunch, cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables, directManagedMemAccessFromHost, maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported, memoryPoolsSupported;
  char gcnArchName[256];
  size_t maxSharedMemoryPerMultiProcessor;
  int clockInstructionRate;
  hipDeviceArch_t arch;
  int gcnArch, isLargeBar, asicRevision;
  int reserved[32];
};
struct hipFuncAttributes {
  int binaryVersion, cacheModeCA;
  size_t constSizeBytes, localSizeBytes;
  int maxDynamicSharedSizeBytes, maxThreadsPerBlock, numRegs, preferredShmemCarveout, ptxVersion;
  size_t sharedSizeBytes;
};
struct hipPointerAttribute_t {
  hipMemoryType type;
  int device;
  void *devicePointer, *hostPointer;
  int isManaged;
  unsigned allocationFlags;
};

#ifndef XP_HIP_ARCH_NAME
#define XP_HIP_ARCH_NAME "gfx90a"
#endif

// ---------------------------------------------------------------- errors
inline hipError_t hipGetLastError() { return (hipError_t)xp::gpu::consume_error(); }
inline hipError_t hipPeekAtLastError() { return (hipError_t)xp::gpu::last_error(); }
inline const char *hipGetErrorString(hipError_t e) { return xp::gpu::error_string((int)e); }
inline const char *hipGetErrorName(hipError_t e) {
  static thread_local char buf[64];
  snprintf(buf, sizeof buf, "hip%s", xp::gpu::error_name((int)e));
  return buf;
}

// ---------------------------------------------------------------- memory
inline hipError_t hipMalloc(void **p, size_t n) { return (hipError_t)xp::gpu::api_malloc(p, n); }
template <class T> inline hipError_t hipMalloc(T **p, size_t n) { return hipMalloc((void **)p, n); }
inline hipError_t hipMallocManaged(void **p, size_t n, unsigned = hipMemAttachGlobal) { return hipMalloc(p, n); }
template <class T> inline hipError_t hipMallocManaged(T **p, size_t n, unsigned f = hipMemAttachGlobal) { return hipMallocManaged((void **)p, n, f); }
inline hipError_t hipMallocAsync(void **p, size_t n, hipStream_t) { return hipMalloc(p, n); }
template <class T> inline hipError_t hipMallocAsync(T **p, size_t n, hipStream_t s) { return hipMallocAsync((void **)p, n, s); }
inline hipError_t hipMallocPitch(void **p, size_t *pitch, size_t w, size_t h) { *pitch = (w + 255) / 256 * 256; return hipMalloc(p, *pitch * h); }
template <class T> inline hipError_t hipMallocPitch(T **p, size_t *pitch, size_t w, size_t h) { return hipMallocPitch((void **)p, pitch, w, h); }
inline hipError_t hipFree(void *p) { return (hipError_t)xp::gpu::api_free(p); }
inline hipError_t hipFreeAsync(void *p, hipStream_t) { return hipFree(p); }
inline hipError_t hipHostMalloc(void **p, size_t n, unsigned = 0) { *p = xp::gpu::host_alloc(n); return hipSuccess; }
template <class T> inline hipError_t hipHostMalloc(T **p, size_t n, unsigned f = 0) { return hipHostMalloc((void **)p, n, f); }
inline hipError_t hipMallocHost(void **p, size_t n) { return hipHostMalloc(p, n); }
template <class T> inline hipError_t hipMallocHost(T **p, size_t n) { return hipHostMalloc((void **)p, n); }
inline hipError_t hipHostAlloc(void **p, size_t n, unsigned f) { return hipHostMalloc(p, n, f); }
inline hipError_t hipHostFree(void *p) { xp::gpu::host_free(p); return hipSuccess; }
inline hipError_t hipFreeHost(void *p) { xp::gpu::host_free(p); return hipSuccess; }
inline hipError_t hipHostRegister(void *p, size_t, unsigned) { xp::gpu::pinned_host().insert(p); return hipSuccess; }
inline hipError_t hipHostUnregister(void *p) { xp::gpu::pinned_host().erase(p); return hipSuccess; }
inline hipError_t hipHostGetDevicePointer(void **d, void *h, unsigned) { *d = h; return hipSuccess; }
inline hipError_t hipHostGetFlags(unsigned *f, void *) { *f = 0; return hipSuccess; }
inline hipError_t hipPointerGetAttributes(hipPointerAttribute_t *a, const void *p) {
  memset(a, 0, sizeof *a);
  if (xp::gpu::device_region(p)) { a->type = hipMemoryTypeDevice; a->devicePointer = (void *)p; }
  else if (xp::gpu::pinned_host().count(p)) { a->type = hipMemoryTypeHost; a->hostPointer = a->devicePointer = (void *)p; }
  else return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
  return hipSuccess;
}
inline hipError_t hipMemcpy(void *d, const void *s, size_t n, hipMemcpyKind k) { return (hipError_t)xp::gpu::api_memcpy(d, s, n, (int)k, "hipMemcpy"); }
inline hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t = 0) { return (hipError_t)xp::gpu::api_memcpy(d, s, n, (int)k, "hipMemcpyAsync"); }
inline hipError_t hipMemcpyHtoD(void *d, const void *s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyHostToDevice); }
inline hipError_t hipMemcpyDtoH(void *d, const void *s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyDeviceToHost); }
inline hipError_t hipMemcpyDtoD(void *d, const void *s, size_t n) { return hipMemcpy(d, s, n, hipMemcpyDeviceToDevice); }
inline hipError_t hipMemcpyHtoDAsync(void *d, const void *s, size_t n, hipStream_t = 0) { return hipMemcpy(d, s, n, hipMemcpyHostToDevice); }
inline hipError_t hipMemcpyDtoHAsync(void *d, const void *s, size_t n, hipStream_t = 0) { return hipMemcpy(d, s, n, hipMemcpyDeviceToHost); }
inline hipError_t hipMemcpyDtoDAsync(void *d, const void *s, size_t n, hipStream_t = 0) { return hipMemcpy(d, s, n, hipMemcpyDeviceToDevice); }
inline hipError_t hipMemcpyPeer(void *d, int dd, const void *s, int sd, size_t n) {
  if (dd != 0 || sd != 0) return (hipError_t)xp::gpu::set_error(hipErrorInvalidDevice);
  return hipMemcpy(d, s, n, hipMemcpyDeviceToDevice);
}
inline hipError_t hipMemcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, hipMemcpyKind k) { return (hipError_t)xp::gpu::api_memcpy2d(d, dp, s, sp, w, h, (int)k, "hipMemcpy2D"); }
inline hipError_t hipMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, hipMemcpyKind k, hipStream_t = 0) { return hipMemcpy2D(d, dp, s, sp, w, h, k); }
inline hipError_t hipMemset(void *p, int v, size_t n) { return (hipError_t)xp::gpu::api_memset(p, v, n, "hipMemset"); }
inline hipError_t hipMemsetAsync(void *p, int v, size_t n, hipStream_t = 0) { return (hipError_t)xp::gpu::api_memset(p, v, n, "hipMemsetAsync"); }
inline hipError_t hipMemset2D(void *p, size_t pitch, int v, size_t w, size_t h) { return (hipError_t)xp::gpu::api_memset2d(p, pitch, v, w, h, "hipMemset2D"); }
inline hipError_t hipMemset2DAsync(void *p, size_t pitch, int v, size_t w, size_t h, hipStream_t = 0) { return (hipError_t)xp::gpu::api_memset2d(p, pitch, v, w, h, "hipMemset2DAsync"); }
inline hipError_t hipMemsetD8(void *p, unsigned char v, size_t n) { return (hipError_t)xp::gpu::api_memset_elems(p, v, n, "hipMemsetD8"); }
inline hipError_t hipMemsetD16(void *p, unsigned short v, size_t n) { return (hipError_t)xp::gpu::api_memset_elems(p, v, n, "hipMemsetD16"); }
inline hipError_t hipMemsetD32(void *p, int v, size_t n) { return (hipError_t)xp::gpu::api_memset_elems(p, v, n, "hipMemsetD32"); }
inline hipError_t hipMemsetD8Async(void *p, unsigned char v, size_t n, hipStream_t = 0) { return hipMemsetD8(p, v, n); }
inline hipError_t hipMemsetD16Async(void *p, unsigned short v, size_t n, hipStream_t = 0) { return hipMemsetD16(p, v, n); }
inline hipError_t hipMemsetD32Async(void *p, int v, size_t n, hipStream_t = 0) { return hipMemsetD32(p, v, n); }
template <class T> inline hipError_t hipMemcpyToSymbol(const T &sym, const void *src, size_t n, size_t off = 0, hipMemcpyKind = hipMemcpyHostToDevice) {
  if (off + n > sizeof(T)) return hipErrorInvalidValue;
  memcpy((char *)&sym + off, src, n); return hipSuccess;
}
template <class T> inline hipError_t hipMemcpyFromSymbol(void *dst, const T &sym, size_t n, size_t off = 0, hipMemcpyKind = hipMemcpyDeviceToHost) {
  if (off + n > sizeof(T)) return hipErrorInvalidValue;
  memcpy(dst, (const char *)&sym + off, n); return hipSuccess;
}
template <class T> inline hipError_t hipMemcpyToSymbolAsync(const T &sym, const void *src, size_t n, size_t off = 0, hipMemcpyKind k = hipMemcpyHostToDevice, hipStream_t = 0) { return hipMemcpyToSymbol(sym, src, n, off, k); }
template <class T> inline hipError_t hipMemcpyFromSymbolAsync(void *dst, const T &sym, size_t n, size_t off = 0, hipMemcpyKind k = hipMemcpyDeviceToHost, hipStream_t = 0) { return hipMemcpyFromSymbol(dst, sym, n, off, k); }
template <class T> inline hipError_t hipGetSymbolAddress(void **p, const T &sym) { *p = (void *)&sym; return hipSuccess; }
template <class T> inline hipError_t hipGetSymbolSize(size_t *n, const T &) { *n = sizeof(T); return hipSuccess; }
#define HIP_SYMBOL(x) x
inline hipError_t hipMemGetInfo(size_t *fr, size_t *tot) {
  *tot = (size_t)xp::gpu::device_model().global_bytes; *fr = *tot / 5 * 4; return hipSuccess;
}
inline hipError_t hipMemPrefetchAsync(const void *, size_t, int, hipStream_t = 0) { return hipSuccess; }
inline hipError_t hipMemAdvise(const void *, size_t, hipMemoryAdvise, int) { return hipSuccess; }

// ---------------------------------------------------------------- device
inline hipError_t hipDeviceSynchronize() { return (hipError_t)xp::gpu::last_error(); }
inline hipError_t hipDeviceReset() { xp::gpu::last_error() = 0; return hipSuccess; }
inline hipError_t hipInit(unsigned) { return hipSuccess; }
inline hipError_t hipSetDevice(int d) { return d == 0 ? hipSuccess : (hipError_t)xp::gpu::set_error(hipErrorInvalidDevice); }
inline hipError_t hipGetDevice(int *d) { *d = 0; return hipSuccess; }
inline hipError_t hipGetDeviceCount(int *n) { *n = 1; return hipSuccess; }
inline hipError_t hipDeviceGet(hipDevice_t *d, int ordinal) { if (ordinal != 0) return (hipError_t)xp::gpu::set_error(hipErrorInvalidDevice); *d = 0; return hipSuccess; }
inline unsigned &__xp_hip_device_flags() { static unsigned f = 0; return f; }
inline hipError_t hipSetDeviceFlags(unsigned f) { __xp_hip_device_flags() = f; return hipSuccess; }
inline hipError_t hipGetDeviceFlags(unsigned *f) { *f = __xp_hip_device_flags(); return hipSuccess; }
inline hipError_t hipDriverGetVersion(int *v) { *v = HIP_VERSION; return hipSuccess; }
inline hipError_t hipRuntimeGetVersion(int *v) { *v = HIP_VERSION; return hipSuccess; }
inline hipError_t hipDeviceSetLimit(hipLimit_t l, size_t v) {
  if ((int)l < 0 || (int)l >= (int)hipLimitRange) return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
  xp::gpu::device_limit((int)l) = v; return hipSuccess;
}
inline hipError_t hipDeviceGetLimit(size_t *v, hipLimit_t l) {
  if ((int)l < 0 || (int)l >= (int)hipLimitRange) return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
  *v = xp::gpu::device_limit((int)l); return hipSuccess;
}
inline hipFuncCache_t &__xp_hip_cache_config() { static hipFuncCache_t c = hipFuncCachePreferNone; return c; }
inline hipSharedMemConfig &__xp_hip_shmem_config() { static hipSharedMemConfig c = hipSharedMemBankSizeFourByte; return c; }
inline hipError_t hipDeviceSetCacheConfig(hipFuncCache_t c) { __xp_hip_cache_config() = c; return hipSuccess; }
inline hipError_t hipDeviceGetCacheConfig(hipFuncCache_t *c) { *c = __xp_hip_cache_config(); return hipSuccess; }
inline hipError_t hipDeviceSetSharedMemConfig(hipSharedMemConfig c) { __xp_hip_shmem_config() = c; return hipSuccess; }
inline hipError_t hipDeviceGetSharedMemConfig(hipSharedMemConfig *c) { *c = __xp_hip_shmem_config(); return hipSuccess; }
inline hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -1;
  return hipSuccess;
}
inline hipError_t hipDeviceGetPCIBusId(char *id, int len, int d) {
  if (d != 0) return (hipError_t)xp::gpu::set_error(hipErrorInvalidDevice);
  snprintf(id, (size_t)len, "0000:00:00.0"); return hipSuccess;
}
inline hipError_t hipDeviceCanAccessPeer(int *can, int, int) { *can = 0; return hipSuccess; }
inline hipError_t hipDeviceEnablePeerAccess(int, unsigned) { return (hipError_t)xp::gpu::set_error(hipErrorInvalidDevice); }
inline hipError_t hipDeviceDisablePeerAccess(int) { return (hipError_t)xp::gpu::set_error(hipErrorPeerAccessNotEnabled); }

// Device properties: the profile's limits (wavefront size, threads and dims per block, grid
// dims, LDS per block) and the modelled device of the profile's `arch` (xp::gpu::device_model).
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int dev) {
  if (dev != 0) return (hipError_t)xp::gpu::set_error(hipErrorInvalidDevice);
  const xp::gpu::DeviceModel &m = xp::gpu::device_model();
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "xpiler virtual HIP device (%s, %s model)", XP_HIP_ARCH_NAME, m.model);
  snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", XP_HIP_ARCH_NAME);
  p->totalGlobalMem = (size_t)m.global_bytes;
  p->sharedMemPerBlock = (size_t)xp::options().shared_mem_bytes;
  p->sharedMemPerBlockOptin = (size_t)xp::gpu::shared_optin_bytes();
  p->sharedMemPerMultiprocessor = p->maxSharedMemoryPerMultiProcessor = (size_t)m.shared_per_sm;
  p->regsPerBlock = 65536; p->regsPerMultiprocessor = m.regs_per_sm;
  p->warpSize = warpSize; p->maxThreadsPerBlock = xp::options().max_threads_per_block;
  p->memPitch = (size_t)2147483647;
  p->maxThreadsDim[0] = XP_BLOCK_LIMIT_X; p->maxThreadsDim[1] = XP_BLOCK_LIMIT_Y; p->maxThreadsDim[2] = XP_BLOCK_LIMIT_Z;
  p->maxGridSize[0] = (int)XP_GRID_LIMIT_X; p->maxGridSize[1] = (int)XP_GRID_LIMIT_Y; p->maxGridSize[2] = (int)XP_GRID_LIMIT_Z;
  p->clockRate = m.clock_khz; p->memoryClockRate = m.mem_clock_khz; p->memoryBusWidth = m.bus_width;
  p->clockInstructionRate = 1000000;
  p->l2CacheSize = m.l2_bytes; p->totalConstMem = 65536;
  int arch = 0;
  if (sscanf(XP_HIP_ARCH_NAME, "gfx%x", (unsigned *)&arch) != 1) arch = 0x90a;
  p->major = arch >> 8; p->minor = (arch >> 4) & 0xf; p->gcnArch = p->major * 100 + p->minor * 10 + (arch & 0xf);
  p->multiProcessorCount = m.sms; p->maxThreadsPerMultiProcessor = m.threads_per_sm;
  p->maxBlocksPerMultiProcessor = m.blocks_per_sm;
  p->textureAlignment = 256; p->texturePitchAlignment = 256;
  p->deviceOverlap = 1; p->asyncEngineCount = 2; p->concurrentKernels = 1; p->unifiedAddressing = 1;
  p->managedMemory = 1; p->canMapHostMemory = 1; p->computeMode = hipComputeModeDefault; p->cooperativeLaunch = 1;
  p->cooperativeMultiDeviceLaunch = 1; p->streamPrioritiesSupported = 1; p->concurrentManagedAccess = 1;
  p->hostRegisterSupported = 1; p->memoryPoolsSupported = 1; p->isLargeBar = 1;
  p->arch.hasGlobalInt32Atomics = p->arch.hasGlobalFloatAtomicExch = p->arch.hasSharedInt32Atomics = 1;
  p->arch.hasSharedFloatAtomicExch = p->arch.hasFloatAtomicAdd = p->arch.hasGlobalInt64Atomics = 1;
  p->arch.hasSharedInt64Atomics = p->arch.hasDoubles = p->arch.hasWarpVote = p->arch.hasWarpBallot = 1;
  p->arch.hasWarpShuffle = p->arch.hasFunnelShift = p->arch.hasThreadFenceSystem = p->arch.hasSyncThreadsExt = 1;
  p->arch.has3dGrid = 1;
  return hipSuccess;
}
inline hipError_t hipDeviceGetName(char *name, int len, hipDevice_t d) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, d);
  if (!e) snprintf(name, (size_t)len, "%s", p.name);
  return e;
}
inline hipError_t hipChooseDevice(int *d, const hipDeviceProp_t *) { *d = 0; return hipSuccess; }
inline hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t a, int dev) {
  hipDeviceProp_t p;
  hipError_t e = hipGetDeviceProperties(&p, dev);
  if (e) return e;
  switch (a) {
    case hipDeviceAttributeMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case hipDeviceAttributeMaxBlockDimX: *v = p.maxThreadsDim[0]; break;
    case hipDeviceAttributeMaxBlockDimY: *v = p.maxThreadsDim[1]; break;
    case hipDeviceAttributeMaxBlockDimZ: *v = p.maxThreadsDim[2]; break;
    case hipDeviceAttributeMaxGridDimX: *v = p.maxGridSize[0]; break;
    case hipDeviceAttributeMaxGridDimY: *v = p.maxGridSize[1]; break;
    case hipDeviceAttributeMaxGridDimZ: *v = p.maxGridSize[2]; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
    case hipDeviceAttributeSharedMemPerBlockOptin: *v = (int)p.sharedMemPerBlockOptin; break;
    case hipDeviceAttributeSharedMemPerMultiprocessor:
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: *v = (int)p.sharedMemPerMultiprocessor; break;
    case hipDeviceAttributeTotalConstantMemory: *v = (int)p.totalConstMem; break;
    case hipDeviceAttributeWarpSize: *v = p.warpSize; break;
    case hipDeviceAttributeMaxPitch: *v = (int)p.memPitch; break;
    case hipDeviceAttributeMaxRegistersPerBlock: *v = p.regsPerBlock; break;
    case hipDeviceAttributeMaxRegistersPerMultiprocessor: *v = p.regsPerMultiprocessor; break;
    case hipDeviceAttributeClockRate: *v = p.clockRate; break;
    case hipDeviceAttributeClockInstructionRate: *v = p.clockInstructionRate; break;
    case hipDeviceAttributeWallClockRate: *v = 100000; break;
    case hipDeviceAttributeMemoryClockRate: *v = p.memoryClockRate; break;
    case hipDeviceAttributeMemoryBusWidth: *v = p.memoryBusWidth; break;
    case hipDeviceAttributeMultiprocessorCount:
    case hipDeviceAttributePhysicalMultiProcessorCount: *v = p.multiProcessorCount; break;
    case hipDeviceAttributeComputeCapabilityMajor: *v = p.major; break;
    case hipDeviceAttributeComputeCapabilityMinor: *v = p.minor; break;
    case hipDeviceAttributeL2CacheSize: *v = p.l2CacheSize; break;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
    case hipDeviceAttributeMaxBlocksPerMultiProcessor: *v = p.maxBlocksPerMultiProcessor; break;
    case hipDeviceAttributeComputeMode: *v = p.computeMode; break;
    case hipDeviceAttributeConcurrentKernels: case hipDeviceAttributeCooperativeLaunch:
    case hipDeviceAttributeCooperativeMultiDeviceLaunch: case hipDeviceAttributeManagedMemory:
    case hipDeviceAttributeUnifiedAddressing: case hipDeviceAttributeCanMapHostMemory:
    case hipDeviceAttributeDeviceOverlap: case hipDeviceAttributeConcurrentManagedAccess:
    case hipDeviceAttributeStreamPrioritiesSupported: case hipDeviceAttributeHostRegisterSupported:
    case hipDeviceAttributeMemoryPoolsSupported: case hipDeviceAttributeIsLargeBar:
    case hipDeviceAttributeImageSupport: *v = 1; break;
    case hipDeviceAttributeAsyncEngineCount: *v = p.asyncEngineCount; break;
    case hipDeviceAttributeTextureAlignment: *v = (int)p.textureAlignment; break;
    case hipDeviceAttributeTexturePitchAlignment: *v = (int)p.texturePitchAlignment; break;
    default:
      if ((int)a < 0 || ((int)a > (int)hipDeviceAttributeCudaCompatibleEnd && (int)a < (int)hipDeviceAttributeAmdSpecificBegin) ||
          (int)a > (int)hipDeviceAttributeAmdSpecificEnd)
        return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
      *v = 0;  // a capability the virtual device does not have
  }
  return hipSuccess;
}

// ---------------------------------------------------------------- kernels: attributes, occupancy
inline hipError_t hipFuncSetAttribute(const void *f, hipFuncAttribute a, int v) {
  switch (a) {
    case hipFuncAttributeMaxDynamicSharedMemorySize: return (hipError_t)xp::gpu::func_set_max_dyn_shared(f, v);
    case hipFuncAttributePreferredSharedMemoryCarveout: return (hipError_t)xp::gpu::func_set_carveout(f, v);
    default: return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
  }
}
template <class T> inline hipError_t hipFuncSetAttribute(T *f, hipFuncAttribute a, int v) { return hipFuncSetAttribute((const void *)f, a, v); }
inline hipError_t hipFuncSetCacheConfig(const void *f, hipFuncCache_t c) {
  if ((int)c < 0 || (int)c > 3) return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
  xp::gpu::func_attr(f).cache = (int)c; return hipSuccess;
}
template <class T> inline hipError_t hipFuncSetCacheConfig(T *f, hipFuncCache_t c) { return hipFuncSetCacheConfig((const void *)f, c); }
inline hipError_t hipFuncSetSharedMemConfig(const void *f, hipSharedMemConfig c) { xp::gpu::func_attr(f).shmem_config = (int)c; return hipSuccess; }
template <class T> inline hipError_t hipFuncSetSharedMemConfig(T *f, hipSharedMemConfig c) { return hipFuncSetSharedMemConfig((const void *)f, c); }
// (see cudaFuncGetAttributes: static shared memory and __launch_bounds__ are known at run time)
inline hipError_t hipFuncGetAttributes(hipFuncAttributes *a, const void *f) {
  if (!f) return (hipError_t)xp::gpu::set_error(hipErrorInvalidDeviceFunction);
  const xp::gpu::FuncAttr &fa = xp::gpu::func_attr(f);
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = xp::options().max_threads_per_block;
  a->numRegs = 32;
  a->maxDynamicSharedSizeBytes = (int)(fa.max_dyn >= 0 ? fa.max_dyn : xp::options().shared_mem_bytes);
  a->preferredShmemCarveout = fa.carveout;
  return hipSuccess;
}
template <class T> inline hipError_t hipFuncGetAttributes(hipFuncAttributes *a, T *f) { return hipFuncGetAttributes(a, (const void *)f); }
inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *f, int block, size_t dyn) {
  if (!n || !f) return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
  *n = xp::gpu::max_active_blocks(block, (long long)dyn);
  return hipSuccess;
}
template <class T> inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *n, T *f, int block, size_t dyn) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void *)f, block, dyn);
}
template <class T> inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, T *f, int block, size_t dyn, unsigned) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void *)f, block, dyn);
}
template <class T> inline hipError_t hipOccupancyMaxPotentialBlockSize(int *min_grid, int *block, T f, size_t dyn = 0, int limit = 0) {
  if (!f) return (hipError_t)xp::gpu::set_error(hipErrorInvalidDeviceFunction);
  xp::gpu::max_potential_block(min_grid, block, [dyn](int) { return dyn; }, limit);
  return hipSuccess;
}
template <class S, class T> inline hipError_t hipOccupancyMaxPotentialBlockSizeVariableSMem(int *min_grid, int *block, T f, S smem_of, int limit = 0) {
  if (!f) return (hipError_t)xp::gpu::set_error(hipErrorInvalidDeviceFunction);
  xp::gpu::max_potential_block(min_grid, block, [&smem_of](int b) { return (size_t)smem_of(b); }, limit);
  return hipSuccess;
}

// ---------------------------------------------------------------- streams and events (synchronous)
inline hipError_t hipStreamCreate(hipStream_t *s) { *s = new ihipStream_t(); return hipSuccess; }
inline hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned f) {
  if (f > hipStreamNonBlocking) return (hipError_t)xp::gpu::set_error(hipErrorInvalidValue);
  *s = new ihipStream_t(); (*s)->s.flags = f; return hipSuccess;
}
inline hipError_t hipStreamCreateWithPriority(hipStream_t *s, unsigned f, int prio) {
  hipError_t e = hipStreamCreateWithFlags(s, f);
  if (!e) (*s)->s.priority = prio < -1 ? -1 : prio > 0 ? 0 : prio;
  return e;
}
inline bool __xp_is_special_stream(hipStream_t s) { return s == nullptr || s == hipStreamPerThread; }
inline hipError_t hipStreamDestroy(hipStream_t s) {
  if (__xp_is_special_stream(s)) return (hipError_t)xp::gpu::set_error(hipErrorInvalidHandle);
  delete s; return hipSuccess;
}
inline hipError_t hipStreamSynchronize(hipStream_t) { return (hipError_t)xp::gpu::last_error(); }
inline hipError_t hipStreamQuery(hipStream_t) { return hipSuccess; }
inline hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t, unsigned = 0) { return hipSuccess; }
inline hipError_t hipStreamGetFlags(hipStream_t s, unsigned *f) { *f = __xp_is_special_stream(s) ? 0u : s->s.flags; return hipSuccess; }
inline hipError_t hipStreamGetPriority(hipStream_t s, int *p) { *p = __xp_is_special_stream(s) ? 0 : s->s.priority; return hipSuccess; }
inline hipError_t hipStreamAddCallback(hipStream_t s, hipStreamCallback_t cb, void *user, unsigned) {
  cb(s, (hipError_t)xp::gpu::last_error(), user); return hipSuccess;
}
inline hipError_t hipLaunchHostFunc(hipStream_t, hipHostFn_t fn, void *user) { fn(user); return hipSuccess; }
inline hipError_t hipEventCreate(hipEvent_t *e) { *e = new ihipEvent_t(); return hipSuccess; }
inline hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned f) { *e = new ihipEvent_t(); (*e)->e.flags = f; return hipSuccess; }
inline hipError_t hipEventDestroy(hipEvent_t e) {
  if (!e) return (hipError_t)xp::gpu::set_error(hipErrorInvalidHandle);
  delete e; return hipSuccess;
}
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t = 0) {
  if (!e) return (hipError_t)xp::gpu::set_error(hipErrorInvalidHandle);
  e->e.t = xp::gpu::now_ms(); e->e.recorded = true; return hipSuccess;
}
inline hipError_t hipEventSynchronize(hipEvent_t e) { return e ? hipSuccess : (hipError_t)xp::gpu::set_error(hipErrorInvalidHandle); }
inline hipError_t hipEventQuery(hipEvent_t e) { return e ? hipSuccess : (hipError_t)xp::gpu::set_error(hipErrorInvalidHandle); }
inline hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b) {
  if (!a || !b || ((a->e.flags | b->e.flags) & hipEventDisableTiming)) return (hipError_t)xp::gpu::set_error(hipErrorInvalidHandle);
  if (!a->e.recorded || !b->e.recorded) return (hipError_t)xp::gpu::set_error(hipErrorInvalidHandle);
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
// cooperative launch: every block must be resident at once (else hipErrorCooperativeLaunchTooLarge);
// cooperative_groups::this_grid().is_valid() in the kernel
template <class... P>
inline hipError_t hipLaunchCooperativeKernel(void (*k)(P...), dim3 grid, dim3 block, void **args, unsigned shmem = 0, hipStream_t = 0) {
  if (!xp::gpu::cooperative_fits(grid, block, shmem)) return (hipError_t)xp::gpu::set_error(hipErrorCooperativeLaunchTooLarge);
  auto body = [k, args]() { ::xp::call_with_args(k, args); };
  xp::gpu::pending_cooperative() = 1;
  return (hipError_t)xp::gpu::set_error(xp::gpu::launch("hipLaunchCooperativeKernel", grid, block, shmem, nullptr, body));
}
inline hipError_t hipLaunchCooperativeKernel(const void *k, dim3 grid, dim3 block, void **args, unsigned shmem = 0, hipStream_t = 0) {
  if (!xp::gpu::cooperative_fits(grid, block, shmem)) return (hipError_t)xp::gpu::set_error(hipErrorCooperativeLaunchTooLarge);
  return (hipError_t)xp::gpu::set_error(xp::gpu::launch_untyped(k, grid, block, args, shmem, true));
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

// ---------------------------------------------------------------- HIP device builtins
// Bodies of hip/amd_detail/amd_device_functions.h (ROCm 5.2), __ocml_floor/ceil/rint_f* read as
// floor/ceil/rint. Left out: the integer -> float conversions with a directed rounding suffix and
// __double2float_rd/ru/rz, which that header spells as plain casts under "rounding modes are not
// yet supported ... not correct", and __uint2double_rn, declared there with an int parameter.
// Shift counts of the bit-field builtins are taken modulo the word size, as the hardware's
// shifts do (a field past bit 31 is undefined in the header's C).
// xp:host-definable begin -- functions of their arguments only (platforms.device_functions)
inline unsigned int __bitextract_u32(unsigned int src0, unsigned int src1, unsigned int src2) {
  unsigned int offset = src1 & 31, width = src2 & 31;
  return width == 0 ? 0 : (src0 << ((32 - offset - width) & 31)) >> ((32 - width) & 31);
}
inline unsigned long long __bitextract_u64(unsigned long long src0, unsigned int src1, unsigned int src2) {
  unsigned long long offset = src1 & 63, width = src2 & 63;
  return width == 0 ? 0 : (src0 << ((64 - offset - width) & 63)) >> ((64 - width) & 63);
}
inline unsigned int __bitinsert_u32(unsigned int src0, unsigned int src1, unsigned int src2, unsigned int src3) {
  unsigned int offset = src2 & 31, width = src3 & 31, mask = (1u << width) - 1;
  return (src0 & ~(mask << offset)) | ((src1 & mask) << offset);
}
inline unsigned long long __bitinsert_u64(unsigned long long src0, unsigned long long src1, unsigned int src2, unsigned int src3) {
  unsigned long long offset = src2 & 63, width = src3 & 63, mask = (1ull << width) - 1;
  return (src0 & ~(mask << offset)) | ((src1 & mask) << offset);
}
inline unsigned int __lastbit_u32_u64(unsigned long long input) { return input == 0 ? (unsigned int)-1 : (unsigned int)__builtin_ctzll(input); }
inline unsigned int __lastbit_u32_u32(unsigned int input) { return input == 0 ? (unsigned int)-1 : (unsigned int)__builtin_ctz(input); }
// __builtin_amdgcn_alignbit(hi, lo, s) = low word of (hi:lo) >> (s & 31)
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
  unsigned int s = shift >= 32 ? 32 : shift;
  return s == 0 ? hi : (unsigned int)((((unsigned long long)hi << 32) | lo) >> ((32 - s) & 31));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
  return shift >= 32 ? hi : (unsigned int)((((unsigned long long)hi << 32) | lo) >> shift);
}
inline int __double2int_rd(double x) { return (int)floor(x); }
inline int __double2int_ru(double x) { return (int)ceil(x); }
inline long long __double2ll_rd(double x) { return (long long)floor(x); }
inline long long __double2ll_rn(double x) { return (long long)rint(x); }
inline long long __double2ll_ru(double x) { return (long long)ceil(x); }
inline long long __double2ll_rz(double x) { return (long long)x; }
inline unsigned int __double2uint_rd(double x) { return (unsigned int)floor(x); }
inline unsigned int __double2uint_rn(double x) { return (unsigned int)rint(x); }
inline unsigned int __double2uint_ru(double x) { return (unsigned int)ceil(x); }
inline unsigned int __double2uint_rz(double x) { return (unsigned int)x; }
inline unsigned long long __double2ull_rd(double x) { return (unsigned long long)floor(x); }
inline unsigned long long __double2ull_rn(double x) { return (unsigned long long)rint(x); }
inline unsigned long long __double2ull_ru(double x) { return (unsigned long long)ceil(x); }
inline unsigned long long __double2ull_rz(double x) { return (unsigned long long)x; }
inline long long __float2ll_rd(float x) { return (long long)floorf(x); }
inline long long __float2ll_ru(float x) { return (long long)ceilf(x); }
inline unsigned int __float2uint_rd(float x) { return (unsigned int)floorf(x); }
inline unsigned int __float2uint_ru(float x) { return (unsigned int)ceilf(x); }
inline unsigned long long __float2ull_rd(float x) { return (unsigned long long)floorf(x); }
inline unsigned long long __float2ull_rn(float x) { return (unsigned long long)rintf(x); }
inline unsigned long long __float2ull_ru(float x) { return (unsigned long long)ceilf(x); }
inline unsigned long long __float2ull_rz(float x) { return (unsigned long long)x; }
inline double __ll2double_rn(long long x) { return (double)x; }
inline double __ull2double_rn(unsigned long long x) { return (double)x; }
inline float __ull2float_rn(unsigned long long x) { return (float)x; }
// xp:host-definable end
// thread-state builtins: __fns32/__fns64 as the header's loop computes them (the n-th set bit of
// the 64-bit mask from base, -1 when there is none), the lane masks over the active lanes
inline int __fns64(unsigned long long mask, unsigned int base, int offset) { return (int)__xp_fns(mask, base, offset, 64); }
inline int __fns32(unsigned long long mask, unsigned int base, int offset) { return (int)__xp_fns(mask, base, offset, 64); }
inline unsigned long long __lanemask_gt() {
  unsigned lane = __lane_id();
  unsigned long long ballot = __ballot64(1);
  return lane == 63 ? 0ull : (~0ull << (lane + 1)) & ballot;
}
inline long long __clock64() { return clock64(); }
inline long long __clock() { return __clock64(); }
inline int __builtin_amdgcn_ds_bpermute(int addr, int v) { return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_RAW, addr >> 2, 64); }
inline int __builtin_amdgcn_readfirstlane(int v) {
  xp::gpu::require_device("__builtin_amdgcn_readfirstlane");
  auto live = xp::gpu::block_state().warps[xp::gpu::cur_thread().warp].live;
  return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_RAW, __builtin_ctzll(live), 64);
}
inline int __builtin_amdgcn_readlane(int v, int lane) { return xp::gpu::shfl(~0ull, v, xp::gpu::SHFL_RAW, lane, 64); }
inline unsigned __builtin_amdgcn_mbcnt_lo(unsigned m, unsigned c) { return c + __builtin_popcount(m & (unsigned)((xp::gpu::lane_bit() - 1) & 0xffffffffu)); }
inline unsigned __builtin_amdgcn_mbcnt_hi(unsigned m, unsigned c) { return c + __builtin_popcount(m & (unsigned)((xp::gpu::lane_bit() - 1) >> 32)); }
inline unsigned int __mbcnt_lo(unsigned int x, unsigned int y) { return __builtin_amdgcn_mbcnt_lo(x, y); }
inline unsigned int __mbcnt_hi(unsigned int x, unsigned int y) { return __builtin_amdgcn_mbcnt_hi(x, y); }
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
// exit() in the program: a runtime error of the run naming the call site (xp::gpu::program_exit)
namespace std { using ::__xp_exit; }
#define exit(status) __xp_exit((status), __FILE__, __LINE__)
