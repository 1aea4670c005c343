"""Host runtime API of the virtual device (platforms/cuda/runtime/xp_cuda.h,
platforms/hip/runtime/xp_hip.h, platforms/common/gpu_runtime/xp_gpu_host.h): device properties
from the device profile, events, streams, memsets, function attributes and carveouts, occupancy,
exit() in host code; and tools/runtime_coverage.py, which writes docs/runtime-coverage.md.

Host entries write what the API returned into int/float arrays the tests check. Each source is
built once per profile (cached by content).
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xpiler.ir import errors
from xpiler.run import run_kernel

ROOT = Path(__file__).resolve().parents[2]

CUDA = r'''
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

__global__ void fill(float *p, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
__global__ void uses_shared(float *p) {
  extern __shared__ float s[];
  s[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  p[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

extern "C" void device_props(int *out) {
  cudaDeviceProp p;
  out[0] = cudaGetDeviceProperties(&p, 0);
  out[1] = p.multiProcessorCount;
  out[2] = (int)p.sharedMemPerBlock;
  out[3] = (int)p.sharedMemPerBlockOptin;
  out[4] = p.maxThreadsPerBlock;
  out[5] = p.warpSize;
  out[6] = p.major * 10 + p.minor;
  out[7] = p.maxGridSize[1];
  out[8] = p.maxThreadsDim[2];
  out[9] = (int)(p.totalGlobalMem >> 30);
  out[10] = p.maxThreadsPerMultiProcessor;
  out[11] = (int)p.sharedMemPerMultiprocessor;
  out[12] = p.cooperativeLaunch;
  cudaDeviceGetAttribute(&out[13], cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&out[14], cudaDevAttrMaxSharedMemoryPerBlockOptin, 0);
  cudaDeviceGetAttribute(&out[15], cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&out[16], cudaDevAttrL2CacheSize, 0);
  cudaDeviceGetAttribute(&out[17], cudaDevAttrMaxBlocksPerMultiprocessor, 0);
  out[18] = cudaDeviceGetAttribute(&out[19], (enum cudaDeviceAttr)100000, 0);
  int n = -1, d = -1;
  cudaGetDeviceCount(&n);
  out[20] = n;
  out[21] = cudaSetDevice(0);
  cudaGetDevice(&d);
  out[22] = d;
  out[23] = cudaSetDevice(1);
  out[24] = cudaGetLastError();          // the failed cudaSetDevice(1) ...
  out[25] = cudaGetLastError();          // ... read once
  out[26] = cudaDeviceSynchronize();
  out[27] = cudaDeviceReset();
  out[28] = (int)(strstr(p.name, "sm_") != nullptr) + 2 * (int)(p.name[0] != 0);
  printf("%s\n", p.name);
}

extern "C" void events(float *ms, int *rc) {
  cudaEvent_t a, b, untimed;
  rc[0] = cudaEventCreate(&a);
  rc[1] = cudaEventCreateWithFlags(&b, cudaEventDefault);
  rc[2] = cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming);
  float *d;
  cudaMalloc(&d, 4096 * sizeof(float));
  rc[3] = cudaEventRecord(a, 0);
  for (int k = 0; k < 20; ++k) fill<<<16, 256>>>(d, 4096, (float)k);
  rc[4] = cudaEventRecord(b, 0);
  rc[5] = cudaEventSynchronize(b);
  rc[6] = cudaEventQuery(b);
  rc[7] = cudaEventElapsedTime(&ms[0], a, b);
  rc[8] = cudaEventRecord(untimed, 0);
  ms[1] = -1.0f;
  rc[9] = cudaEventElapsedTime(&ms[1], a, untimed);   // a timing-disabled event cannot be timed
  rc[10] = cudaGetLastError();
  cudaEventDestroy(a); cudaEventDestroy(b); cudaEventDestroy(untimed);
  cudaFree(d);
}

extern "C" void memsets(unsigned char *flat, int *pitched, float *filled, int *rc) {
  cudaStream_t s;
  rc[0] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  unsigned flags = 99;
  rc[1] = cudaStreamGetFlags(s, &flags);
  rc[2] = (int)flags;
  rc[3] = cudaStreamDefault;
  unsigned char *d1;
  cudaMalloc(&d1, 1000);
  rc[4] = cudaMemset(d1, 0x11, 1000);
  rc[5] = cudaMemsetAsync(d1 + 100, 0x7f, 300, s);
  rc[6] = cudaStreamSynchronize(s);
  cudaMemcpy(flat, d1, 1000, cudaMemcpyDeviceToHost);
  int *d2;
  size_t pitch = 0;
  rc[7] = cudaMallocPitch((void **)&d2, &pitch, 10 * sizeof(int), 6);
  rc[8] = (int)pitch;
  cudaMemset2D(d2, pitch, 0, pitch, 6);
  rc[9] = cudaMemset2D(d2, pitch, 0xff, 4 * sizeof(int), 6);     // the first 4 ints of each row
  rc[10] = cudaMemcpy2D(pitched, 10 * sizeof(int), d2, pitch, 10 * sizeof(int), 6, cudaMemcpyDeviceToHost);
  float *m;
  rc[11] = cudaMallocManaged(&m, 256 * sizeof(float));
  fill<<<1, 256, 0, s>>>(m, 256, 2.5f);
  rc[12] = cudaStreamSynchronize(s);
  for (int i = 0; i < 256; ++i) filled[i] = m[i];     // managed memory: read on the host directly
  rc[13] = cudaStreamDestroy(s);
  cudaFree(d1); cudaFree(d2); cudaFree(m);
}

extern "C" void attributes(int *out) {
  out[0] = cudaFuncSetAttribute(uses_shared, cudaFuncAttributePreferredSharedMemoryCarveout,
                                cudaSharedmemCarveoutMaxShared);
  out[1] = cudaFuncSetAttribute(uses_shared, cudaFuncAttributePreferredSharedMemoryCarveout, 101);
  out[2] = cudaGetLastError();
  out[3] = cudaFuncSetAttribute(uses_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
  out[4] = cudaFuncSetCacheConfig(uses_shared, cudaFuncCachePreferShared);
  struct cudaFuncAttributes fa;
  out[5] = cudaFuncGetAttributes(&fa, uses_shared);
  out[6] = fa.preferredShmemCarveout;
  out[7] = fa.maxDynamicSharedSizeBytes;
  out[8] = cudaSharedmemCarveoutDefault;
  out[9] = cudaSharedmemCarveoutMaxL1;
  out[10] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&out[11], fill, 256, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&out[12], uses_shared, 128, 48 * 1024);
  out[13] = cudaOccupancyMaxPotentialBlockSize(&out[14], &out[15], fill, 0, 0);
  cudaOccupancyMaxPotentialBlockSize(&out[16], &out[17], uses_shared, 100 * 1024, 0);
  float *d;
  cudaMalloc(&d, 1024 * sizeof(float));
  uses_shared<<<1, 1024, 64 * 1024>>>(d);     // 64 KB of dynamic shared memory after the opt-in
  out[18] = cudaGetLastError();
  float h[1024];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  out[19] = (int)h[0];
  cudaFree(d);
}

extern "C" void exits(int *out, int code) {
  out[0] = 1;
  printf("about to fail\n");
  fflush(stdout);
  if (code) {
    fprintf(stderr, "error: bad input\n");
    exit(code);
  }
  out[0] = 2;
}
'''

HIP = r'''
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

__global__ void fill(float *p, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

extern "C" void hip_api(int *out, float *ms, unsigned char *flat, int *words) {
  hipDeviceProp_t p;
  out[0] = hipGetDeviceProperties(&p, 0);
  out[1] = p.warpSize;
  out[2] = (int)p.sharedMemPerBlock;
  out[3] = (int)p.sharedMemPerBlockOptin;
  out[4] = p.multiProcessorCount;
  hipDeviceGetAttribute(&out[5], hipDeviceAttributeMultiprocessorCount, 0);
  hipDeviceGetAttribute(&out[6], hipDeviceAttributeWarpSize, 0);
  hipDeviceGetAttribute(&out[7], hipDeviceAttributeComputeCapabilityMajor, 0);
  hipDeviceGetAttribute(&out[8], hipDeviceAttributeMaxBlockDimZ, 0);
  out[9] = hipFuncSetAttribute((const void *)fill, hipFuncAttributePreferredSharedMemoryCarveout, 50);
  out[10] = hipFuncSetAttribute((const void *)fill, hipFuncAttributePreferredSharedMemoryCarveout, -2);
  out[11] = hipGetLastError();
  out[12] = hipFuncSetCacheConfig((const void *)fill, hipFuncCachePreferL1);
  out[13] = hipOccupancyMaxPotentialBlockSize(&out[14], &out[15], fill, 0, 0);
  hipStream_t s;
  out[16] = hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
  hipEvent_t a, b, untimed;
  hipEventCreate(&a); hipEventCreate(&b);
  hipEventCreateWithFlags(&untimed, hipEventDisableTiming);
  hipEventRecord(a, s);
  float *d;
  hipMalloc(&d, 4096 * sizeof(float));
  for (int k = 0; k < 10; ++k) hipLaunchKernelGGL(fill, dim3(16), dim3(256), 0, s, d, 4096, (float)k);
  hipEventRecord(b, s);
  out[17] = hipEventSynchronize(b);
  out[18] = hipEventElapsedTime(&ms[0], a, b);
  hipEventRecord(untimed, s);
  out[19] = hipEventElapsedTime(&ms[1], a, untimed);
  unsigned char *d1;
  hipMalloc(&d1, 256);
  out[20] = hipMemset(d1, 0x22, 256);
  out[21] = hipMemsetAsync(d1 + 16, 0x33, 16, s);
  out[22] = hipMemset2D(d1 + 64, 32, 0x44, 8, 4);
  hipMemcpy(flat, d1, 256, hipMemcpyDeviceToHost);
  int *d2;
  hipMalloc(&d2, 64 * sizeof(int));
  out[23] = hipMemsetD32(d2, 0x01020304, 64);
  hipMemcpy(words, d2, 64 * sizeof(int), hipMemcpyDeviceToHost);
  out[24] = hipStreamDestroy(s);
  hipEventDestroy(a); hipEventDestroy(b); hipEventDestroy(untimed);
  hipFree(d); hipFree(d1); hipFree(d2);
}

extern "C" void hip_exit(int *out) {
  out[0] = 1;
  std::exit(3);
}
'''


def _run(tmp_path, name, text, args, **kw):
    """run_kernel on ``text`` under a fixed name (the build, keyed by the unit's text, is cached)."""
    del tmp_path
    return run_kernel(f"test_runtime_api/{name}", args=args, source=text, **kw)


@pytest.mark.parametrize("profile, sms, arch, optin", [("sm_80", 108, 80, 166912), ("sm_90", 132, 90, 232448)])
def test_device_properties_reflect_the_profile(tmp_path, profile, sms, arch, optin):
    from platforms.cuda.emulate import load_profile

    prof = load_profile(profile)
    out = np.zeros(32, np.int32)
    res = _run(tmp_path, "api.cu", CUDA, [out], entry="device_props", profile=profile)
    assert out[0] == 0
    assert out[1] == out[13] == sms                      # the modelled device of the profile's arch
    assert out[2] == prof["shared_mem_bytes"]
    assert out[3] == out[14] == prof["shared_mem_optin_bytes"] == optin
    assert out[4] == prof["max_threads_per_block"] and out[5] == prof["warp_size"] == 32
    assert out[6] == arch and out[15] == arch // 10
    assert out[7] == prof["max_grid_dims"][1] and out[8] == prof["max_block_dims"][2]
    assert out[9] == 80 and out[10] == 2048 and out[11] > out[3] and out[12] == 1
    assert out[16] > 0 and out[17] == 32
    assert out[18] == 1                                   # cudaErrorInvalidValue for an unknown attribute
    assert list(out[20:28]) == [1, 0, 0, 101, 101, 0, 0, 0]
    assert out[28] == 3 and f"sm_{arch}" in res.stdout


def test_events_measure_non_negative_time(tmp_path):
    ms, rc = np.zeros(2, np.float32), np.full(12, -1, np.int32)
    _run(tmp_path, "api.cu", CUDA, [ms, rc], entry="events", strict=True)
    assert list(rc[:9]) == [0] * 9
    assert ms[0] >= 0.0
    assert rc[9] == 400 and ms[1] == -1.0                 # cudaErrorInvalidResourceHandle
    assert rc[10] == 400


def test_memset_fills_and_streams(tmp_path):
    flat, pitched = np.zeros(1000, np.uint8), np.zeros((6, 10), np.int32)
    filled, rc = np.zeros(256, np.float32), np.full(16, -1, np.int32)
    _run(tmp_path, "api.cu", CUDA, [flat, pitched, filled, rc], entry="memsets", strict=True)
    assert list(rc[[0, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13]]) == [0] * 11
    assert rc[2] == 1 and rc[3] == 0                      # cudaStreamNonBlocking, cudaStreamDefault
    assert rc[8] >= 40 and rc[8] % 256 == 0
    want = np.full(1000, 0x11, np.uint8)
    want[100:400] = 0x7F
    np.testing.assert_array_equal(flat, want)
    want2 = np.zeros((6, 10), np.int32)
    want2[:, :4] = -1
    np.testing.assert_array_equal(pitched, want2)
    assert (filled == 2.5).all()


def test_carveout_attribute_accepted_and_occupancy(tmp_path):
    out = np.full(24, -9, np.int32)
    _run(tmp_path, "api.cu", CUDA, [out], entry="attributes", strict=True, profile="sm_80")
    assert out[0] == 0
    assert out[1] == 1 and out[2] == 1                    # carveout 101%: cudaErrorInvalidValue
    assert out[3] == 0 and out[4] == 0 and out[5] == 0
    assert out[6] == 100 and out[7] == 64 * 1024
    assert out[8] == -1 and out[9] == 0
    # A100 model: 2048 threads, 32 blocks, 164 KB shared per SM, 1 KB reserved per block
    assert out[10] == 0 and out[11] == 8
    assert out[12] == 167936 // (48 * 1024 + 1024)
    assert out[13] == 0 and (out[14], out[15]) == (216, 1024)
    assert out[17] == 1024 and out[16] == 108             # one 100 KB block per SM
    assert out[18] == 0 and out[19] == 1023


def test_exit_in_host_code_is_a_runtime_error_naming_exit(tmp_path):
    out = np.zeros(1, np.int32)
    with pytest.raises(errors.KernelRuntimeError) as exc:
        _run(tmp_path, "api.cu", CUDA, [out, 2], entry="exits")
    assert "exit(2)" in exc.value.message and "api.cu:" in exc.value.message, exc.value.message
    assert "about to fail" in (exc.value.detail or "")
    out = np.zeros(1, np.int32)
    _run(tmp_path, "api.cu", CUDA, [out, 0], entry="exits")
    assert out[0] == 2


def test_hip_runtime_api(tmp_path):
    out, ms = np.full(32, -9, np.int32), np.full(2, -1.0, np.float32)
    flat, words = np.zeros(256, np.uint8), np.zeros(64, np.int32)
    _run(tmp_path, "api.hip", HIP, [out, ms, flat, words], entry="hip_api", strict=True)
    assert out[0] == 0 and out[1] == out[6] == 64
    assert out[2] == 65536 and out[3] == 65536            # platforms/hip/profile.toml (gfx90a)
    assert out[4] == out[5] == 104 and out[7] == 9 and out[8] == 1024
    assert out[9] == 0 and out[10] == 1 and out[11] == 1 and out[12] == 0
    assert out[13] == 0 and out[15] == 1024 and out[14] == 2 * 104
    assert out[16] == 0 and out[17] == 0 and out[18] == 0 and ms[0] >= 0.0
    assert out[19] == 400 and ms[1] == -1.0               # hipErrorInvalidHandle: timing disabled
    assert list(out[20:25]) == [0] * 5
    want = np.full(256, 0x22, np.uint8)
    want[16:32] = 0x33
    for r in range(4):
        want[64 + 32 * r: 72 + 32 * r] = 0x44
    np.testing.assert_array_equal(flat, want)
    assert (words == 0x01020304).all()


def test_hip_std_exit_is_a_runtime_error_naming_exit(tmp_path):
    with pytest.raises(errors.KernelRuntimeError, match=r"exit\(3\) at .*api\.hip:\d+"):
        _run(tmp_path, "api.hip", HIP, [np.zeros(1, np.int32)], entry="hip_exit")


# ------------------------------------------------------------------------------ coverage tool
def _coverage_tool():
    spec = importlib.util.spec_from_file_location("runtime_coverage", ROOT / "tools" / "runtime_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod            # (its dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


def test_coverage_tool_reads_names_and_probes_them():
    rc = _coverage_tool()
    header = """
    /* extern __host__ cudaError_t CUDARTAPI cudaInComment(int); */
    extern __host__ __cudart_builtin__ cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp *p, int d);
    extern __host__ cudaError_t CUDARTAPI cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s);
    enum __device_builtin__ cudaSharedCarveout { cudaSharedmemCarveoutDefault = -1, cudaSharedmemCarveoutMaxL1 = 0 };
    struct __device_builtin__ cudaFuncAttributes { size_t sharedSizeBytes; struct { int x; } inner; };
    typedef __device_builtin__ struct CUgraphExec_st *cudaGraphExec_t;
    #define cudaStreamNonBlocking 0x01
    #define cudaSignalExternalSemaphoresAsync __CUDART_API_PTSZ(cudaSignalExternalSemaphoresAsync)
    """
    names = {(n.name, n.kind) for n in rc.names_of("driver_types.h", header, ("functions", "enums", "types", "macros"))}
    assert ("cudaGetDeviceProperties", "function") in names and ("cudaGraphLaunch", "function") in names
    assert not any(n == "cudaInComment" for n, _ in names)
    assert {("cudaSharedmemCarveoutDefault", "constant"), ("cudaSharedmemCarveoutMaxL1", "constant"),
            ("cudaSharedCarveout", "type"), ("cudaFuncAttributes", "type"), ("cudaGraphExec_t", "type"),
            ("cudaStreamNonBlocking", "constant")} <= names
    assert not any(n in ("inner", "cudaSignalExternalSemaphoresAsync") for n, _ in names)
    probe = [rc.Name(n, k, "x") for n, k in [("cudaGetDeviceProperties", "function"), ("cudaGraphLaunch", "function"),
                                            ("cudaSharedmemCarveoutMaxL1", "constant"), ("cudaFuncAttributes", "type"),
                                            ("cudaStreamNonBlocking", "constant"), ("cudaGraphExec_t", "type"),
                                            ("cudaMalloc", "function"), ("cudaOccupancyMaxPotentialBlockSize", "function")]]
    have = rc.probe("cuda", probe)
    assert have == {"cudaGetDeviceProperties", "cudaSharedmemCarveoutMaxL1", "cudaFuncAttributes",
                    "cudaStreamNonBlocking", "cudaMalloc", "cudaOccupancyMaxPotentialBlockSize"}


def test_runtime_coverage_doc_is_current():
    import re

    rc = _coverage_tool()
    try:
        include = rc.find_cuda_include()
    except SystemExit:
        pytest.skip("no CUDA toolkit installed (tools/runtime_coverage.py reads its headers)")
    doc = (ROOT / "docs" / "runtime-coverage.md").read_text()
    made_with = re.search(r"\(CUDA ([\d.]+)\)", doc)
    if not made_with or made_with.group(1) != rc.cuda_version(include):
        pytest.skip(f"docs/runtime-coverage.md was generated from another CUDA release than {rc.cuda_version(include)}")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "runtime_coverage.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
