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
// Enumerations with CUDA's values (driver_types.h); the error codes and device attributes are the
// complete lists of the CUDA 13 headers, so code that names any of them compiles.
#define XP_CUDA_ERRORS(X) \
  X(cudaSuccess, 0) X(cudaErrorInvalidValue, 1) X(cudaErrorMemoryAllocation, 2) X(cudaErrorInitializationError, 3) \
  X(cudaErrorCudartUnloading, 4) X(cudaErrorProfilerDisabled, 5) X(cudaErrorProfilerNotInitialized, 6) \
  X(cudaErrorProfilerAlreadyStarted, 7) X(cudaErrorProfilerAlreadyStopped, 8) X(cudaErrorInvalidConfiguration, 9) \
  X(cudaErrorInvalidPitchValue, 12) X(cudaErrorInvalidSymbol, 13) X(cudaErrorInvalidHostPointer, 16) \
  X(cudaErrorInvalidDevicePointer, 17) X(cudaErrorInvalidTexture, 18) X(cudaErrorInvalidTextureBinding, 19) \
  X(cudaErrorInvalidChannelDescriptor, 20) X(cudaErrorInvalidMemcpyDirection, 21) X(cudaErrorAddressOfConstant, 22) \
  X(cudaErrorTextureFetchFailed, 23) X(cudaErrorTextureNotBound, 24) X(cudaErrorSynchronizationError, 25) \
  X(cudaErrorInvalidFilterSetting, 26) X(cudaErrorInvalidNormSetting, 27) X(cudaErrorMixedDeviceExecution, 28) \
  X(cudaErrorNotYetImplemented, 31) X(cudaErrorMemoryValueTooLarge, 32) X(cudaErrorStubLibrary, 34) \
  X(cudaErrorInsufficientDriver, 35) X(cudaErrorCallRequiresNewerDriver, 36) X(cudaErrorInvalidSurface, 37) \
  X(cudaErrorDuplicateVariableName, 43) X(cudaErrorDuplicateTextureName, 44) X(cudaErrorDuplicateSurfaceName, 45) \
  X(cudaErrorDevicesUnavailable, 46) X(cudaErrorIncompatibleDriverContext, 49) X(cudaErrorMissingConfiguration, 52) \
  X(cudaErrorPriorLaunchFailure, 53) X(cudaErrorLaunchMaxDepthExceeded, 65) X(cudaErrorLaunchFileScopedTex, 66) \
  X(cudaErrorLaunchFileScopedSurf, 67) X(cudaErrorSyncDepthExceeded, 68) X(cudaErrorLaunchPendingCountExceeded, 69) \
  X(cudaErrorInvalidDeviceFunction, 98) X(cudaErrorNoDevice, 100) X(cudaErrorInvalidDevice, 101) \
  X(cudaErrorDeviceNotLicensed, 102) X(cudaErrorSoftwareValidityNotEstablished, 103) \
  X(cudaErrorStartupFailure, 127) X(cudaErrorInvalidKernelImage, 200) X(cudaErrorDeviceUninitialized, 201) \
  X(cudaErrorMapBufferObjectFailed, 205) X(cudaErrorUnmapBufferObjectFailed, 206) X(cudaErrorArrayIsMapped, 207) \
  X(cudaErrorAlreadyMapped, 208) X(cudaErrorNoKernelImageForDevice, 209) X(cudaErrorAlreadyAcquired, 210) \
  X(cudaErrorNotMapped, 211) X(cudaErrorNotMappedAsArray, 212) X(cudaErrorNotMappedAsPointer, 213) \
  X(cudaErrorECCUncorrectable, 214) X(cudaErrorUnsupportedLimit, 215) X(cudaErrorDeviceAlreadyInUse, 216) \
  X(cudaErrorPeerAccessUnsupported, 217) X(cudaErrorInvalidPtx, 218) X(cudaErrorInvalidGraphicsContext, 219) \
  X(cudaErrorNvlinkUncorrectable, 220) X(cudaErrorJitCompilerNotFound, 221) X(cudaErrorUnsupportedPtxVersion, 222) \
  X(cudaErrorJitCompilationDisabled, 223) X(cudaErrorUnsupportedExecAffinity, 224) \
  X(cudaErrorUnsupportedDevSideSync, 225) X(cudaErrorContained, 226) X(cudaErrorInvalidSource, 300) \
  X(cudaErrorFileNotFound, 301) X(cudaErrorSharedObjectSymbolNotFound, 302) X(cudaErrorSharedObjectInitFailed, 303) \
  X(cudaErrorOperatingSystem, 304) X(cudaErrorInvalidResourceHandle, 400) X(cudaErrorIllegalState, 401) \
  X(cudaErrorLossyQuery, 402) X(cudaErrorSymbolNotFound, 500) X(cudaErrorNotReady, 600) \
  X(cudaErrorIllegalAddress, 700) X(cudaErrorLaunchOutOfResources, 701) X(cudaErrorLaunchTimeout, 702) \
  X(cudaErrorLaunchIncompatibleTexturing, 703) X(cudaErrorPeerAccessAlreadyEnabled, 704) \
  X(cudaErrorPeerAccessNotEnabled, 705) X(cudaErrorSetOnActiveProcess, 708) X(cudaErrorContextIsDestroyed, 709) \
  X(cudaErrorAssert, 710) X(cudaErrorTooManyPeers, 711) X(cudaErrorHostMemoryAlreadyRegistered, 712) \
  X(cudaErrorHostMemoryNotRegistered, 713) X(cudaErrorHardwareStackError, 714) X(cudaErrorIllegalInstruction, 715) \
  X(cudaErrorMisalignedAddress, 716) X(cudaErrorInvalidAddressSpace, 717) X(cudaErrorInvalidPc, 718) \
  X(cudaErrorLaunchFailure, 719) X(cudaErrorCooperativeLaunchTooLarge, 720) X(cudaErrorTensorMemoryLeak, 721) \
  X(cudaErrorNotPermitted, 800) X(cudaErrorNotSupported, 801) X(cudaErrorSystemNotReady, 802) \
  X(cudaErrorSystemDriverMismatch, 803) X(cudaErrorCompatNotSupportedOnDevice, 804) \
  X(cudaErrorMpsConnectionFailed, 805) X(cudaErrorMpsRpcFailure, 806) X(cudaErrorMpsServerNotReady, 807) \
  X(cudaErrorMpsMaxClientsReached, 808) X(cudaErrorMpsMaxConnectionsReached, 809) \
  X(cudaErrorMpsClientTerminated, 810) X(cudaErrorCdpNotSupported, 811) X(cudaErrorCdpVersionMismatch, 812) \
  X(cudaErrorStreamCaptureUnsupported, 900) X(cudaErrorStreamCaptureInvalidated, 901) \
  X(cudaErrorStreamCaptureMerge, 902) X(cudaErrorStreamCaptureUnmatched, 903) \
  X(cudaErrorStreamCaptureUnjoined, 904) X(cudaErrorStreamCaptureIsolation, 905) \
  X(cudaErrorStreamCaptureImplicit, 906) X(cudaErrorCapturedEvent, 907) X(cudaErrorStreamCaptureWrongThread, 908) \
  X(cudaErrorTimeout, 909) X(cudaErrorGraphExecUpdateFailure, 910) X(cudaErrorExternalDevice, 911) \
  X(cudaErrorInvalidClusterSize, 912) X(cudaErrorFunctionNotLoaded, 913) X(cudaErrorInvalidResourceType, 914) \
  X(cudaErrorInvalidResourceConfiguration, 915) X(cudaErrorUnknown, 999) X(cudaErrorApiFailureBase, 10000)
#define XP_CUDA_ERROR_ENUM(n, v) n = v,
enum cudaError { XP_CUDA_ERRORS(XP_CUDA_ERROR_ENUM) };
#undef XP_CUDA_ERROR_ENUM
typedef enum cudaError cudaError_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
                      cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
                         cudaFuncAttributePreferredSharedMemoryCarveout = 9, cudaFuncAttributeClusterDimMustBeSet = 10,
                         cudaFuncAttributeRequiredClusterWidth = 11, cudaFuncAttributeRequiredClusterHeight = 12,
                         cudaFuncAttributeRequiredClusterDepth = 13, cudaFuncAttributeNonPortableClusterSizeAllowed = 14,
                         cudaFuncAttributeClusterSchedulingPolicyPreference = 15, cudaFuncAttributeMax };
enum cudaFuncCache { cudaFuncCachePreferNone = 0, cudaFuncCachePreferShared = 1, cudaFuncCachePreferL1 = 2,
                     cudaFuncCachePreferEqual = 3 };
enum cudaSharedMemConfig { cudaSharedMemBankSizeDefault = 0, cudaSharedMemBankSizeFourByte = 1,
                           cudaSharedMemBankSizeEightByte = 2 };
enum cudaSharedCarveout { cudaSharedmemCarveoutDefault = -1, cudaSharedmemCarveoutMaxShared = 100,
                          cudaSharedmemCarveoutMaxL1 = 0 };
enum cudaLimit { cudaLimitStackSize = 0x00, cudaLimitPrintfFifoSize = 0x01, cudaLimitMallocHeapSize = 0x02,
                 cudaLimitDevRuntimeSyncDepth = 0x03, cudaLimitDevRuntimePendingLaunchCount = 0x04,
                 cudaLimitMaxL2FetchGranularity = 0x05, cudaLimitPersistingL2CacheSize = 0x06 };
enum cudaComputeMode { cudaComputeModeDefault = 0, cudaComputeModeExclusive = 1, cudaComputeModeProhibited = 2,
                       cudaComputeModeExclusiveProcess = 3 };
enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2,
                      cudaMemoryTypeManaged = 3 };
enum cudaMemoryAdvise { cudaMemAdviseSetReadMostly = 1, cudaMemAdviseUnsetReadMostly = 2,
                        cudaMemAdviseSetPreferredLocation = 3, cudaMemAdviseUnsetPreferredLocation = 4,
                        cudaMemAdviseSetAccessedBy = 5, cudaMemAdviseUnsetAccessedBy = 6 };
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMaxBlockDimX = 2, cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4, cudaDevAttrMaxGridDimX = 5, cudaDevAttrMaxGridDimY = 6, cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8, cudaDevAttrTotalConstantMemory = 9, cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxPitch = 11, cudaDevAttrMaxRegistersPerBlock = 12, cudaDevAttrClockRate = 13,
  cudaDevAttrTextureAlignment = 14, cudaDevAttrGpuOverlap = 15, cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrKernelExecTimeout = 17, cudaDevAttrIntegrated = 18, cudaDevAttrCanMapHostMemory = 19,
  cudaDevAttrComputeMode = 20, cudaDevAttrMaxTexture1DWidth = 21, cudaDevAttrMaxTexture2DWidth = 22,
  cudaDevAttrMaxTexture2DHeight = 23, cudaDevAttrMaxTexture3DWidth = 24, cudaDevAttrMaxTexture3DHeight = 25,
  cudaDevAttrMaxTexture3DDepth = 26, cudaDevAttrMaxTexture2DLayeredWidth = 27,
  cudaDevAttrMaxTexture2DLayeredHeight = 28, cudaDevAttrMaxTexture2DLayeredLayers = 29,
  cudaDevAttrSurfaceAlignment = 30, cudaDevAttrConcurrentKernels = 31, cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33, cudaDevAttrPciDeviceId = 34, cudaDevAttrTccDriver = 35, cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37, cudaDevAttrL2CacheSize = 38, cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrAsyncEngineCount = 40, cudaDevAttrUnifiedAddressing = 41, cudaDevAttrMaxTexture1DLayeredWidth = 42,
  cudaDevAttrMaxTexture1DLayeredLayers = 43, cudaDevAttrMaxTexture2DGatherWidth = 45,
  cudaDevAttrMaxTexture2DGatherHeight = 46, cudaDevAttrMaxTexture3DWidthAlt = 47,
  cudaDevAttrMaxTexture3DHeightAlt = 48, cudaDevAttrMaxTexture3DDepthAlt = 49, cudaDevAttrPciDomainId = 50,
  cudaDevAttrTexturePitchAlignment = 51, cudaDevAttrMaxTextureCubemapWidth = 52,
  cudaDevAttrMaxTextureCubemapLayeredWidth = 53, cudaDevAttrMaxTextureCubemapLayeredLayers = 54,
  cudaDevAttrMaxSurface1DWidth = 55, cudaDevAttrMaxSurface2DWidth = 56, cudaDevAttrMaxSurface2DHeight = 57,
  cudaDevAttrMaxSurface3DWidth = 58, cudaDevAttrMaxSurface3DHeight = 59, cudaDevAttrMaxSurface3DDepth = 60,
  cudaDevAttrMaxSurface1DLayeredWidth = 61, cudaDevAttrMaxSurface1DLayeredLayers = 62,
  cudaDevAttrMaxSurface2DLayeredWidth = 63, cudaDevAttrMaxSurface2DLayeredHeight = 64,
  cudaDevAttrMaxSurface2DLayeredLayers = 65, cudaDevAttrMaxSurfaceCubemapWidth = 66,
  cudaDevAttrMaxSurfaceCubemapLayeredWidth = 67, cudaDevAttrMaxSurfaceCubemapLayeredLayers = 68,
  cudaDevAttrMaxTexture1DLinearWidth = 69, cudaDevAttrMaxTexture2DLinearWidth = 70,
  cudaDevAttrMaxTexture2DLinearHeight = 71, cudaDevAttrMaxTexture2DLinearPitch = 72,
  cudaDevAttrMaxTexture2DMipmappedWidth = 73, cudaDevAttrMaxTexture2DMipmappedHeight = 74,
  cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxTexture1DMipmappedWidth = 77, cudaDevAttrStreamPrioritiesSupported = 78,
  cudaDevAttrGlobalL1CacheSupported = 79, cudaDevAttrLocalL1CacheSupported = 80,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81, cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrManagedMemory = 83, cudaDevAttrIsMultiGpuBoard = 84, cudaDevAttrMultiGpuBoardGroupID = 85,
  cudaDevAttrHostNativeAtomicSupported = 86, cudaDevAttrSingleToDoublePrecisionPerfRatio = 87,
  cudaDevAttrPageableMemoryAccess = 88, cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrComputePreemptionSupported = 90, cudaDevAttrCanUseHostPointerForRegisteredMem = 91,
  cudaDevAttrReserved92 = 92, cudaDevAttrReserved93 = 93, cudaDevAttrReserved94 = 94,
  cudaDevAttrCooperativeLaunch = 95, cudaDevAttrReserved96 = 96, cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrCanFlushRemoteWrites = 98, cudaDevAttrHostRegisterSupported = 99,
  cudaDevAttrPageableMemoryAccessUsesHostPageTables = 100, cudaDevAttrDirectManagedMemAccessFromHost = 101,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106, cudaDevAttrMaxPersistingL2CacheSize = 108,
  cudaDevAttrMaxAccessPolicyWindowSize = 109, cudaDevAttrReservedSharedMemoryPerBlock = 111,
  cudaDevAttrSparseCudaArraySupported = 112, cudaDevAttrHostRegisterReadOnlySupported = 113,
  cudaDevAttrTimelineSemaphoreInteropSupported = 114, cudaDevAttrMemoryPoolsSupported = 115,
  cudaDevAttrGPUDirectRDMASupported = 116, cudaDevAttrGPUDirectRDMAFlushWritesOptions = 117,
  cudaDevAttrGPUDirectRDMAWritesOrdering = 118, cudaDevAttrMemoryPoolSupportedHandleTypes = 119,
  cudaDevAttrClusterLaunch = 120, cudaDevAttrDeferredMappingCudaArraySupported = 121, cudaDevAttrReserved122 = 122,
  cudaDevAttrReserved123 = 123, cudaDevAttrReserved124 = 124, cudaDevAttrIpcEventSupport = 125,
  cudaDevAttrMemSyncDomainCount = 126, cudaDevAttrReserved127 = 127, cudaDevAttrReserved128 = 128,
  cudaDevAttrReserved129 = 129, cudaDevAttrNumaConfig = 130, cudaDevAttrNumaId = 131, cudaDevAttrReserved132 = 132,
  cudaDevAttrMpsEnabled = 133, cudaDevAttrHostNumaId = 134, cudaDevAttrD3D12CigSupported = 135,
  cudaDevAttrVulkanCigSupported = 138, cudaDevAttrGpuPciDeviceId = 139, cudaDevAttrGpuPciSubsystemId = 140,
  cudaDevAttrReserved141 = 141, cudaDevAttrHostNumaMemoryPoolsSupported = 142,
  cudaDevAttrHostNumaMultinodeIpcSupported = 143, cudaDevAttrHostMemoryPoolsSupported = 144,
  cudaDevAttrReserved145 = 145, cudaDevAttrOnlyPartialHostNativeAtomicSupported = 147, cudaDevAttrMax
};
struct CUstream_st { xp::gpu::Stream s; };
struct CUevent_st { xp::gpu::Event e; };
typedef CUstream_st *cudaStream_t;
typedef CUevent_st *cudaEvent_t;
typedef void (*cudaStreamCallback_t)(cudaStream_t, cudaError_t, void *);
typedef void (*cudaHostFn_t)(void *);
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04
#define cudaEventRecordDefault 0x00
#define cudaEventRecordExternal 0x01
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaMemAttachSingle 0x04
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceBlockingSync 0x04
#define cudaDeviceScheduleMask 0x07
#define cudaDeviceMapHost 0x08
#define cudaDeviceLmemResizeToMax 0x10
#define cudaDeviceMask 0xff
#define cudaCooperativeLaunchMultiDeviceNoPreSync 0x01
#define cudaCooperativeLaunchMultiDeviceNoPostSync 0x02
#define cudaCpuDeviceId ((int)-1)
#define cudaInvalidDeviceId ((int)-2)
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

struct cudaUUID_t { char bytes[16]; };
typedef struct cudaUUID_t CUuuid;
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem, sharedMemPerBlock;
  int regsPerBlock, warpSize;
  size_t memPitch;
  int maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate;
  size_t totalConstMem;
  int major, minor;
  size_t textureAlignment, texturePitchAlignment;
  int deviceOverlap, multiProcessorCount, kernelExecTimeoutEnabled, integrated, canMapHostMemory, computeMode;
  int maxTexture1D, maxTexture1DMipmap, maxTexture1DLinear, maxTexture2D[2], maxTexture2DMipmap[2];
  int maxTexture2DLinear[3], maxTexture2DGather[2], maxTexture3D[3], maxTexture3DAlt[3], maxTextureCubemap;
  int maxTexture1DLayered[2], maxTexture2DLayered[3], maxTextureCubemapLayered[2];
  int maxSurface1D, maxSurface2D[2], maxSurface3D[3], maxSurface1DLayered[2], maxSurface2DLayered[3];
  int maxSurfaceCubemap, maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
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
  int hostRegisterSupported, sparseCudaArraySupported, hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported, memoryPoolsSupported, gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported, ipcEventSupported, clusterLaunch, unifiedFunctionPointers;
  int reserved[63];
};
struct cudaFuncAttributes {
  size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
  int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA, maxDynamicSharedSizeBytes;
  int preferredShmemCarveout, clusterDimMustBeSet, requiredClusterWidth, requiredClusterHeight;
  int requiredClusterDepth, clusterSchedulingPolicyPreference, nonPortableClusterSizeAllowed;
  int reserved[16];
};
struct cudaPointerAttributes { enum cudaMemoryType type; int device; void *devicePointer; void *hostPointer; long reserved[8]; };
struct cudaPitchedPtr { void *ptr; size_t pitch, xsize, ysize; };
struct cudaExtent { size_t width, height, depth; };
struct cudaPos { size_t x, y, z; };
inline cudaPitchedPtr make_cudaPitchedPtr(void *d, size_t p, size_t xsz, size_t ysz) { return cudaPitchedPtr{d, p, xsz, ysz}; }
inline cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) { return cudaExtent{w, h, d}; }
inline cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return cudaPos{x, y, z}; }

// ---------------------------------------------------------------- errors
inline cudaError_t cudaGetLastError() { return (cudaError_t)xp::gpu::consume_error(); }
inline cudaError_t cudaPeekAtLastError() { return (cudaError_t)xp::gpu::last_error(); }
inline const char *cudaGetErrorName(cudaError_t e) {
#define XP_CUDA_ERROR_NAME(n, v) case v: return #n;
  switch ((int)e) { XP_CUDA_ERRORS(XP_CUDA_ERROR_NAME) default: return "cudaErrorUnknown"; }
#undef XP_CUDA_ERROR_NAME
}
inline const char *cudaGetErrorString(cudaError_t e) {
  const char *s = xp::gpu::error_string((int)e);
  if (strcmp(s, "unknown error") != 0 || e == cudaErrorUnknown) return s;
  return cudaGetErrorName(e);  // (codes the virtual device never returns: their name)
}

// ---------------------------------------------------------------- memory
inline cudaError_t cudaMalloc(void **p, size_t n) { return (cudaError_t)xp::gpu::api_malloc(p, n); }
template <class T> inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc((void **)p, n); }
inline cudaError_t cudaMallocManaged(void **p, size_t n, unsigned = cudaMemAttachGlobal) { return cudaMalloc(p, n); }
template <class T> inline cudaError_t cudaMallocManaged(T **p, size_t n, unsigned f = cudaMemAttachGlobal) { return cudaMallocManaged((void **)p, n, f); }
inline cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
template <class T> inline cudaError_t cudaMallocAsync(T **p, size_t n, cudaStream_t s) { return cudaMallocAsync((void **)p, n, s); }
inline cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h) { *pitch = (w + 255) / 256 * 256; return cudaMalloc(p, *pitch * h); }
template <class T> inline cudaError_t cudaMallocPitch(T **p, size_t *pitch, size_t w, size_t h) { return cudaMallocPitch((void **)p, pitch, w, h); }
inline cudaError_t cudaMalloc3D(cudaPitchedPtr *pp, cudaExtent e) {
  size_t pitch = 0;
  void *d = nullptr;
  cudaError_t r = cudaMallocPitch(&d, &pitch, e.width, e.height * (e.depth ? e.depth : 1));
  if (r) return r;
  *pp = make_cudaPitchedPtr(d, pitch, e.width, e.height);
  return cudaSuccess;
}
inline cudaError_t cudaFree(void *p) { return (cudaError_t)xp::gpu::api_free(p); }
inline cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }
inline cudaError_t cudaMallocHost(void **p, size_t n) { *p = xp::gpu::host_alloc(n); return cudaSuccess; }
template <class T> inline cudaError_t cudaMallocHost(T **p, size_t n) { return cudaMallocHost((void **)p, n); }
inline cudaError_t cudaMallocHost(void **p, size_t n, unsigned) { return cudaMallocHost(p, n); }
inline cudaError_t cudaHostAlloc(void **p, size_t n, unsigned) { return cudaMallocHost(p, n); }
template <class T> inline cudaError_t cudaHostAlloc(T **p, size_t n, unsigned f) { return cudaHostAlloc((void **)p, n, f); }
inline cudaError_t cudaFreeHost(void *p) { xp::gpu::host_free(p); return cudaSuccess; }
inline cudaError_t cudaHostRegister(void *p, size_t, unsigned) { xp::gpu::pinned_host().insert(p); return cudaSuccess; }
inline cudaError_t cudaHostUnregister(void *p) { xp::gpu::pinned_host().erase(p); return cudaSuccess; }
// all memory is host memory here: a mapped host pointer is its own device pointer
inline cudaError_t cudaHostGetDevicePointer(void **d, void *h, unsigned) { *d = h; return cudaSuccess; }
inline cudaError_t cudaHostGetFlags(unsigned *f, void *) { *f = 0; return cudaSuccess; }
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a, const void *p) {
  memset(a, 0, sizeof *a);
  if (xp::gpu::device_region(p)) { a->type = cudaMemoryTypeDevice; a->devicePointer = (void *)p; }
  else if (xp::gpu::pinned_host().count(p)) { a->type = cudaMemoryTypeHost; a->hostPointer = a->devicePointer = (void *)p; }
  else { a->type = cudaMemoryTypeUnregistered; a->device = -2; a->hostPointer = (void *)p; }
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) { return (cudaError_t)xp::gpu::api_memcpy(d, s, n, (int)k, "cudaMemcpy"); }
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t = 0) { return (cudaError_t)xp::gpu::api_memcpy(d, s, n, (int)k, "cudaMemcpyAsync"); }
inline cudaError_t cudaMemcpyPeer(void *d, int dd, const void *s, int sd, size_t n) {
  if (dd != 0 || sd != 0) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidDevice);
  return (cudaError_t)xp::gpu::api_memcpy(d, s, n, (int)cudaMemcpyDeviceToDevice, "cudaMemcpyPeer");
}
inline cudaError_t cudaMemcpyPeerAsync(void *d, int dd, const void *s, int sd, size_t n, cudaStream_t = 0) { return cudaMemcpyPeer(d, dd, s, sd, n); }
inline cudaError_t cudaMemcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, cudaMemcpyKind k) { return (cudaError_t)xp::gpu::api_memcpy2d(d, dp, s, sp, w, h, (int)k, "cudaMemcpy2D"); }
inline cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, cudaMemcpyKind k, cudaStream_t = 0) { return cudaMemcpy2D(d, dp, s, sp, w, h, k); }
inline cudaError_t cudaMemset(void *p, int v, size_t n) { return (cudaError_t)xp::gpu::api_memset(p, v, n, "cudaMemset"); }
inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t = 0) { return (cudaError_t)xp::gpu::api_memset(p, v, n, "cudaMemsetAsync"); }
inline cudaError_t cudaMemset2D(void *p, size_t pitch, int v, size_t w, size_t h) { return (cudaError_t)xp::gpu::api_memset2d(p, pitch, v, w, h, "cudaMemset2D"); }
inline cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int v, size_t w, size_t h, cudaStream_t = 0) { return (cudaError_t)xp::gpu::api_memset2d(p, pitch, v, w, h, "cudaMemset2DAsync"); }
inline cudaError_t cudaMemset3D(cudaPitchedPtr pp, int v, cudaExtent e) {
  for (size_t z = 0; z < e.depth; ++z) {
    int r = xp::gpu::api_memset2d((char *)pp.ptr + z * pp.pitch * pp.ysize, pp.pitch, v, e.width, e.height, "cudaMemset3D");
    if (r) return (cudaError_t)r;
  }
  return cudaSuccess;
}
inline cudaError_t cudaMemset3DAsync(cudaPitchedPtr pp, int v, cudaExtent e, cudaStream_t = 0) { return cudaMemset3D(pp, v, e); }
template <class T> inline cudaError_t cudaMemcpyToSymbol(const T &sym, const void *src, size_t n, size_t off = 0, cudaMemcpyKind = cudaMemcpyHostToDevice) {
  if (off + n > sizeof(T)) return cudaErrorInvalidValue;
  memcpy((char *)&sym + off, src, n); return cudaSuccess;
}
template <class T> inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &sym, size_t n, size_t off = 0, cudaMemcpyKind = cudaMemcpyDeviceToHost) {
  if (off + n > sizeof(T)) return cudaErrorInvalidValue;
  memcpy(dst, (const char *)&sym + off, n); return cudaSuccess;
}
template <class T> inline cudaError_t cudaMemcpyToSymbolAsync(const T &sym, const void *src, size_t n, size_t off = 0, cudaMemcpyKind k = cudaMemcpyHostToDevice, cudaStream_t = 0) { return cudaMemcpyToSymbol(sym, src, n, off, k); }
template <class T> inline cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const T &sym, size_t n, size_t off = 0, cudaMemcpyKind k = cudaMemcpyDeviceToHost, cudaStream_t = 0) { return cudaMemcpyFromSymbol(dst, sym, n, off, k); }
template <class T> inline cudaError_t cudaGetSymbolAddress(void **p, const T &sym) { *p = (void *)&sym; return cudaSuccess; }
template <class T> inline cudaError_t cudaGetSymbolSize(size_t *n, const T &) { *n = sizeof(T); return cudaSuccess; }
inline cudaError_t cudaMemGetInfo(size_t *fr, size_t *tot) {
  *tot = (size_t)xp::gpu::device_model().global_bytes; *fr = *tot / 5 * 4; return cudaSuccess;
}
inline cudaError_t cudaMemPrefetchAsync(const void *, size_t, int, cudaStream_t = 0) { return cudaSuccess; }
inline cudaError_t cudaMemAdvise(const void *, size_t, cudaMemoryAdvise, int) { return cudaSuccess; }

// ---------------------------------------------------------------- device
inline cudaError_t cudaDeviceSynchronize() { return (cudaError_t)xp::gpu::last_error(); }
inline cudaError_t cudaThreadSynchronize() { return cudaDeviceSynchronize(); }
inline cudaError_t cudaDeviceReset() { xp::gpu::last_error() = 0; return cudaSuccess; }
inline cudaError_t cudaThreadExit() { return cudaDeviceReset(); }
inline cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : (cudaError_t)xp::gpu::set_error(cudaErrorInvalidDevice); }
inline cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
inline cudaError_t cudaInitDevice(int d, unsigned = 0, unsigned = 0) { return cudaSetDevice(d); }
inline cudaError_t cudaChooseDevice(int *d, const cudaDeviceProp *) { *d = 0; return cudaSuccess; }
inline unsigned &__xp_cuda_device_flags() { static unsigned f = 0; return f; }
inline cudaError_t cudaSetDeviceFlags(unsigned f) { __xp_cuda_device_flags() = f; return cudaSuccess; }
inline cudaError_t cudaGetDeviceFlags(unsigned *f) { *f = __xp_cuda_device_flags() | cudaDeviceMapHost; return cudaSuccess; }
inline cudaError_t cudaDriverGetVersion(int *v) { *v = CUDART_VERSION; return cudaSuccess; }
inline cudaError_t cudaRuntimeGetVersion(int *v) { *v = CUDART_VERSION; return cudaSuccess; }
inline cudaError_t cudaDeviceSetLimit(cudaLimit l, size_t v) {
  if ((int)l < 0 || (int)l > 6) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidValue);
  xp::gpu::device_limit((int)l) = v; return cudaSuccess;
}
inline cudaError_t cudaDeviceGetLimit(size_t *v, cudaLimit l) {
  if ((int)l < 0 || (int)l > 6) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidValue);
  *v = xp::gpu::device_limit((int)l); return cudaSuccess;
}
inline cudaFuncCache &__xp_cuda_cache_config() { static cudaFuncCache c = cudaFuncCachePreferNone; return c; }
inline cudaSharedMemConfig &__xp_cuda_shmem_config() { static cudaSharedMemConfig c = cudaSharedMemBankSizeFourByte; return c; }
inline cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache c) { __xp_cuda_cache_config() = c; return cudaSuccess; }
inline cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache *c) { *c = __xp_cuda_cache_config(); return cudaSuccess; }
inline cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig c) { __xp_cuda_shmem_config() = c; return cudaSuccess; }
inline cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig *c) { *c = __xp_cuda_shmem_config(); return cudaSuccess; }
inline cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int d) {
  if (d != 0) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidDevice);
  snprintf(id, (size_t)len, "0000:00:00.0"); return cudaSuccess;
}
inline cudaError_t cudaDeviceGetByPCIBusId(int *d, const char *) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceCanAccessPeer(int *can, int, int) { *can = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceEnablePeerAccess(int, unsigned) { return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidDevice); }
inline cudaError_t cudaDeviceDisablePeerAccess(int) { return (cudaError_t)xp::gpu::set_error(cudaErrorPeerAccessNotEnabled); }
inline cudaError_t cudaProfilerStart() { return cudaSuccess; }
inline cudaError_t cudaProfilerStop() { return cudaSuccess; }

// Device properties: the profile's limits (warp size, threads and dims per block, grid dims,
// shared memory per block and its opt-in, compute capability from `arch`) and the modelled
// device of that architecture (xp::gpu::device_model: SMs, clocks, memory, per-SM limits).
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev) {
  if (dev != 0) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidDevice);
  const xp::gpu::DeviceModel &m = xp::gpu::device_model();
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "xpiler virtual CUDA device (sm_%d, %s model)", __CUDA_ARCH__ / 10, m.model);
  memcpy(p->uuid.bytes, "xpiler-virtual-0", 16);
  p->totalGlobalMem = (size_t)m.global_bytes;
  p->sharedMemPerBlock = (size_t)xp::options().shared_mem_bytes;
  p->sharedMemPerBlockOptin = (size_t)xp::gpu::shared_optin_bytes();
  p->sharedMemPerMultiprocessor = (size_t)m.shared_per_sm;
  p->reservedSharedMemPerBlock = (size_t)m.reserved_shared;
  p->regsPerBlock = 65536; p->regsPerMultiprocessor = m.regs_per_sm;
  p->warpSize = warpSize;
  p->memPitch = (size_t)2147483647;
  p->maxThreadsPerBlock = xp::options().max_threads_per_block;
  p->maxThreadsDim[0] = XP_BLOCK_LIMIT_X; p->maxThreadsDim[1] = XP_BLOCK_LIMIT_Y; p->maxThreadsDim[2] = XP_BLOCK_LIMIT_Z;
  p->maxGridSize[0] = (int)XP_GRID_LIMIT_X; p->maxGridSize[1] = (int)XP_GRID_LIMIT_Y; p->maxGridSize[2] = (int)XP_GRID_LIMIT_Z;
  p->clockRate = m.clock_khz; p->memoryClockRate = m.mem_clock_khz; p->memoryBusWidth = m.bus_width;
  p->l2CacheSize = m.l2_bytes; p->persistingL2CacheMaxSize = m.l2_bytes / 4 * 3;
  p->totalConstMem = 65536; p->major = __CUDA_ARCH__ / 100; p->minor = (__CUDA_ARCH__ / 10) % 10;
  p->textureAlignment = 512; p->texturePitchAlignment = 32; p->surfaceAlignment = 512;
  p->multiProcessorCount = m.sms; p->maxThreadsPerMultiProcessor = m.threads_per_sm;
  p->maxBlocksPerMultiProcessor = m.blocks_per_sm;
  p->deviceOverlap = 1; p->asyncEngineCount = 2; p->concurrentKernels = 1; p->unifiedAddressing = 1;
  p->managedMemory = 1; p->canMapHostMemory = 1; p->computeMode = cudaComputeModeDefault;
  p->streamPrioritiesSupported = 1; p->globalL1CacheSupported = 1; p->localL1CacheSupported = 1;
  p->cooperativeLaunch = 1; p->hostNativeAtomicSupported = 0; p->singleToDoublePrecisionPerfRatio = 2;
  p->computePreemptionSupported = 1; p->canUseHostPointerForRegisteredMem = 1; p->concurrentManagedAccess = 1;
  p->directManagedMemAccessFromHost = 0; p->accessPolicyMaxWindowSize = 134213632; p->hostRegisterSupported = 1;
  p->memoryPoolsSupported = 1; p->clusterLaunch = __CUDA_ARCH__ >= 900; p->unifiedFunctionPointers = 0;
  p->maxTexture1D = 131072; p->maxTexture2D[0] = 131072; p->maxTexture2D[1] = 65536;
  p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = 16384;
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
    case cudaDevAttrTotalConstantMemory: *v = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *v = p.warpSize; break;
    case cudaDevAttrMaxPitch: *v = (int)p.memPitch; break;
    case cudaDevAttrMaxRegistersPerBlock: *v = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *v = p.clockRate; break;
    case cudaDevAttrTextureAlignment: *v = (int)p.textureAlignment; break;
    case cudaDevAttrGpuOverlap: *v = p.deviceOverlap; break;
    case cudaDevAttrMultiProcessorCount: *v = p.multiProcessorCount; break;
    case cudaDevAttrKernelExecTimeout: *v = 0; break;
    case cudaDevAttrIntegrated: *v = 0; break;
    case cudaDevAttrCanMapHostMemory: *v = 1; break;
    case cudaDevAttrComputeMode: *v = p.computeMode; break;
    case cudaDevAttrConcurrentKernels: *v = 1; break;
    case cudaDevAttrEccEnabled: *v = p.ECCEnabled; break;
    case cudaDevAttrPciBusId: *v = p.pciBusID; break;
    case cudaDevAttrPciDeviceId: *v = p.pciDeviceID; break;
    case cudaDevAttrPciDomainId: *v = p.pciDomainID; break;
    case cudaDevAttrTccDriver: *v = 0; break;
    case cudaDevAttrMemoryClockRate: *v = p.memoryClockRate; break;
    case cudaDevAttrGlobalMemoryBusWidth: *v = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *v = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrAsyncEngineCount: *v = p.asyncEngineCount; break;
    case cudaDevAttrUnifiedAddressing: *v = 1; break;
    case cudaDevAttrTexturePitchAlignment: *v = (int)p.texturePitchAlignment; break;
    case cudaDevAttrSurfaceAlignment: *v = (int)p.surfaceAlignment; break;
    case cudaDevAttrComputeCapabilityMajor: *v = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *v = p.minor; break;
    case cudaDevAttrStreamPrioritiesSupported: *v = 1; break;
    case cudaDevAttrGlobalL1CacheSupported: *v = 1; break;
    case cudaDevAttrLocalL1CacheSupported: *v = 1; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *v = p.regsPerMultiprocessor; break;
    case cudaDevAttrManagedMemory: *v = 1; break;
    case cudaDevAttrIsMultiGpuBoard: *v = 0; break;
    case cudaDevAttrMultiGpuBoardGroupID: *v = 0; break;
    case cudaDevAttrHostNativeAtomicSupported: *v = 0; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: *v = p.singleToDoublePrecisionPerfRatio; break;
    case cudaDevAttrPageableMemoryAccess: *v = 0; break;
    case cudaDevAttrConcurrentManagedAccess: *v = 1; break;
    case cudaDevAttrComputePreemptionSupported: *v = 1; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: *v = 1; break;
    case cudaDevAttrCooperativeLaunch: *v = 1; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrCanFlushRemoteWrites: *v = 0; break;
    case cudaDevAttrHostRegisterSupported: *v = 1; break;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: *v = 0; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: *v = 0; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *v = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrMaxPersistingL2CacheSize: *v = p.persistingL2CacheMaxSize; break;
    case cudaDevAttrMaxAccessPolicyWindowSize: *v = p.accessPolicyMaxWindowSize; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *v = (int)p.reservedSharedMemPerBlock; break;
    case cudaDevAttrMemoryPoolsSupported: *v = 1; break;
    case cudaDevAttrClusterLaunch: *v = p.clusterLaunch; break;
    default:
      if ((int)a <= 0 || (int)a >= (int)cudaDevAttrMax) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidValue);
      *v = 0;  // a capability the virtual device does not have (textures, IPC, NUMA, ...)
  }
  return cudaSuccess;
}

// ---------------------------------------------------------------- kernels: attributes, occupancy
inline cudaError_t cudaFuncSetAttribute(const void *f, cudaFuncAttribute a, int v) {
  switch (a) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize: return (cudaError_t)xp::gpu::func_set_max_dyn_shared(f, v);
    case cudaFuncAttributePreferredSharedMemoryCarveout: return (cudaError_t)xp::gpu::func_set_carveout(f, v);
    case cudaFuncAttributeRequiredClusterWidth: case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth: case cudaFuncAttributeNonPortableClusterSizeAllowed:
    case cudaFuncAttributeClusterSchedulingPolicyPreference: case cudaFuncAttributeClusterDimMustBeSet:
      return cudaSuccess;  // clusters: accepted, not modelled
    default: return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidValue);
  }
}
template <class T> inline cudaError_t cudaFuncSetAttribute(T *f, cudaFuncAttribute a, int v) { return cudaFuncSetAttribute((const void *)f, a, v); }
inline cudaError_t cudaFuncSetCacheConfig(const void *f, cudaFuncCache c) {
  if ((int)c < 0 || (int)c > 3) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidValue);
  xp::gpu::func_attr(f).cache = (int)c; return cudaSuccess;
}
template <class T> inline cudaError_t cudaFuncSetCacheConfig(T *f, cudaFuncCache c) { return cudaFuncSetCacheConfig((const void *)f, c); }
inline cudaError_t cudaFuncSetSharedMemConfig(const void *f, cudaSharedMemConfig c) { xp::gpu::func_attr(f).shmem_config = (int)c; return cudaSuccess; }
template <class T> inline cudaError_t cudaFuncSetSharedMemConfig(T *f, cudaSharedMemConfig c) { return cudaFuncSetSharedMemConfig((const void *)f, c); }
// A kernel's attributes. What only a run reveals is reported as the device allows: the static
// shared memory of a kernel is known to the virtual device when it runs (sharedSizeBytes 0) and
// __launch_bounds__ when it is entered (maxThreadsPerBlock: the device's limit).
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *f) {
  if (!f) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidDeviceFunction);
  const xp::gpu::FuncAttr &fa = xp::gpu::func_attr(f);
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = xp::options().max_threads_per_block;
  a->numRegs = 32;
  a->ptxVersion = a->binaryVersion = __CUDA_ARCH__ / 10;
  a->maxDynamicSharedSizeBytes = (int)(fa.max_dyn >= 0 ? fa.max_dyn : xp::options().shared_mem_bytes);
  a->preferredShmemCarveout = fa.carveout;
  return cudaSuccess;
}
template <class T> inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, T *f) { return cudaFuncGetAttributes(a, (const void *)f); }
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *f, int block, size_t dyn) {
  if (!n || !f) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidValue);
  *n = xp::gpu::max_active_blocks(block, (long long)dyn);
  return cudaSuccess;
}
template <class T> inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, T *f, int block, size_t dyn) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void *)f, block, dyn);
}
template <class T> inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, T *f, int block, size_t dyn, unsigned) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void *)f, block, dyn);
}
template <class T> inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int *min_grid, int *block, T f, size_t dyn = 0, int limit = 0) {
  if (!f) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidDeviceFunction);
  xp::gpu::max_potential_block(min_grid, block, [dyn](int) { return dyn; }, limit);
  return cudaSuccess;
}
template <class T> inline cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block, T f, size_t dyn = 0, int limit = 0, unsigned = 0) {
  return cudaOccupancyMaxPotentialBlockSize(min_grid, block, f, dyn, limit);
}
template <class S, class T> inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int *min_grid, int *block, T f, S smem_of, int limit = 0) {
  if (!f) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidDeviceFunction);
  xp::gpu::max_potential_block(min_grid, block, [&smem_of](int b) { return (size_t)smem_of(b); }, limit);
  return cudaSuccess;
}
template <class S, class T> inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(int *min_grid, int *block, T f, S smem_of, int limit = 0, unsigned = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMem(min_grid, block, f, smem_of, limit);
}
template <class T> inline cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *n, T *, int blocks, int block) {
  const xp::gpu::DeviceModel &m = xp::gpu::device_model();
  if (blocks <= 0 || block <= 0 || xp::gpu::max_active_blocks(block, 0) < blocks) { *n = 0; return cudaSuccess; }
  long long per = m.shared_per_sm / blocks - m.reserved_shared;
  *n = (size_t)std::max(0LL, std::min(per, xp::gpu::shared_optin_bytes()));
  return cudaSuccess;
}

// ---------------------------------------------------------------- streams and events (synchronous)
inline cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = new CUstream_st(); return cudaSuccess; }
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f) {
  if (f > cudaStreamNonBlocking) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidValue);
  *s = new CUstream_st(); (*s)->s.flags = f; return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned f, int prio) {
  cudaError_t e = cudaStreamCreateWithFlags(s, f);
  if (!e) (*s)->s.priority = prio < -5 ? -5 : prio > 0 ? 0 : prio;
  return e;
}
inline bool __xp_is_special_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (__xp_is_special_stream(s)) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidResourceHandle);
  delete s; return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return (cudaError_t)xp::gpu::last_error(); }
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
inline cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned *f) { *f = __xp_is_special_stream(s) ? 0u : s->s.flags; return cudaSuccess; }
inline cudaError_t cudaStreamGetPriority(cudaStream_t s, int *p) { *p = __xp_is_special_stream(s) ? 0 : s->s.priority; return cudaSuccess; }
inline cudaError_t cudaStreamAttachMemAsync(cudaStream_t, void *, size_t = 0, unsigned = cudaMemAttachSingle) { return cudaSuccess; }
// work on a stream is done when it is issued, so a host callback runs at once
inline cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void *user, unsigned) {
  cb(s, (cudaError_t)xp::gpu::last_error(), user); return cudaSuccess;
}
inline cudaError_t cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t fn, void *user) { fn(user); return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = new CUevent_st(); return cudaSuccess; }
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f) { *e = new CUevent_st(); (*e)->e.flags = f; return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  if (!e) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidResourceHandle);
  delete e; return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = 0) {
  if (!e) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidResourceHandle);
  e->e.t = xp::gpu::now_ms(); e->e.recorded = true; return cudaSuccess;
}
inline cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s = 0, unsigned = 0) { return cudaEventRecord(e, s); }
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { return e ? cudaSuccess : (cudaError_t)xp::gpu::set_error(cudaErrorInvalidResourceHandle); }
inline cudaError_t cudaEventQuery(cudaEvent_t e) { return e ? cudaSuccess : (cudaError_t)xp::gpu::set_error(cudaErrorInvalidResourceHandle); }
// milliseconds of host time between the two records (kernels run when launched, so this is the
// virtual device's time, >= 0 for records made in order)
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  if (!a || !b || ((a->e.flags | b->e.flags) & cudaEventDisableTiming)) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidResourceHandle);
  if (!a->e.recorded || !b->e.recorded) return (cudaError_t)xp::gpu::set_error(cudaErrorInvalidResourceHandle);
  *ms = (float)(b->e.t - a->e.t); return cudaSuccess;
}

// ---------------------------------------------------------------- launches
// cudaLaunchKernel(func, grid, block, args, shmem, stream): args[i] points at argument i.
template <class... P>
inline cudaError_t cudaLaunchKernel(void (*k)(P...), dim3 grid, dim3 block, void **args, size_t shmem = 0, cudaStream_t = 0) {
  auto body = [k, args]() { ::xp::call_with_args(k, args); };
  return (cudaError_t)xp::gpu::set_error(xp::gpu::launch("cudaLaunchKernel", grid, block, shmem, nullptr, body));
}
inline cudaError_t cudaLaunchKernel(const void *k, dim3 grid, dim3 block, void **args, size_t shmem = 0, cudaStream_t = 0) {
  return (cudaError_t)xp::gpu::set_error(xp::gpu::launch_untyped(k, grid, block, args, shmem));
}
// cooperative launch: every block must be resident at once (else cudaErrorCooperativeLaunchTooLarge);
// cooperative_groups::this_grid().is_valid() in the kernel
template <class... P>
inline cudaError_t cudaLaunchCooperativeKernel(void (*k)(P...), dim3 grid, dim3 block, void **args, size_t shmem = 0, cudaStream_t = 0) {
  if (!xp::gpu::cooperative_fits(grid, block, shmem)) return (cudaError_t)xp::gpu::set_error(cudaErrorCooperativeLaunchTooLarge);
  auto body = [k, args]() { ::xp::call_with_args(k, args); };
  xp::gpu::pending_cooperative() = 1;
  return (cudaError_t)xp::gpu::set_error(xp::gpu::launch("cudaLaunchCooperativeKernel", grid, block, shmem, nullptr, body));
}
inline cudaError_t cudaLaunchCooperativeKernel(const void *k, dim3 grid, dim3 block, void **args, size_t shmem = 0, cudaStream_t = 0) {
  if (!xp::gpu::cooperative_fits(grid, block, shmem)) return (cudaError_t)xp::gpu::set_error(cudaErrorCooperativeLaunchTooLarge);
  return (cudaError_t)xp::gpu::set_error(xp::gpu::launch_untyped(k, grid, block, args, shmem, true));
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
// exit() in the program: a runtime error of the run naming the call site (xp::gpu::program_exit)
namespace std { using ::__xp_exit; }
#define exit(status) __xp_exit((status), __FILE__, __LINE__)
