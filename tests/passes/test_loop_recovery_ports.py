"""loop_recovery on ports and real host code (issue 16, wild set): a port's compatibility macros
keep their names when the lift gives the runtime names in their bodies a host meaning; stream
types and arguments are dropped; device queries (``cudaGetDevice``, ``cudaDeviceGetAttribute``)
are answered from the virtual device's profile."""
from __future__ import annotations

import numpy as np

import platforms
from passes.base import run_pass
from passes.lift import loop_recovery  # noqa: F401  (registers the pass)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

SUFFIX = {"cuda": ".cu", "hip": ".hip"}


def _lift_and_run(tmp_path, src: str, platform: str, args: list):
    prog = parse_source(src, platform, f"k{SUFFIX[platform]}")
    text = platforms.module("vnni", "backend").emit(run_pass("loop_recovery", prog))
    sp = tmp_path / f"k{SUFFIX[platform]}"
    sp.write_text(src)
    tp = tmp_path / "k.cpp"
    tp.write_text(text)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(sp, args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tp, args=got, source=text, strict=True)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
    return text


PORT_MACROS = r"""
#include <hip/hip_runtime.h>
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetLastError hipGetLastError
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) return; } while (0)

__global__ void twice(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

extern "C" void entry(const float *x, float *y, int n) {
  float *dx, *dy;
  CHECK(hipMalloc(&dx, n * sizeof(float)));
  CHECK(hipMalloc(&dy, n * sizeof(float)));
  hipMemcpy(dx, x, n * sizeof(float), hipMemcpyHostToDevice);
  twice<<<(n + 63) / 64, 64>>>(dx, dy, n);
  CHECK(cudaGetLastError());
  hipMemcpy(y, dy, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx);
  hipFree(dy);
}
"""


def test_port_macros_of_runtime_names_keep_their_names(tmp_path):
    x = np.arange(300, dtype=np.float32)
    text = _lift_and_run(tmp_path, PORT_MACROS, "hip", [x, np.zeros(300, np.float32), 300])
    assert "#define cudaSuccess 0" in text and "#define cudaError_t int" in text
    assert "#define 0" not in text and "#define int" not in text


DEVICE_QUERIES = r"""
#include <cuda_runtime.h>
struct launch_params { dim3 grid; dim3 block; cudaStream_t stream; };
void run_on(const float *x, float *y, int n, cudaStream_t stream);

__global__ void copy_strided(const float *x, float *y, int n, int nsm, int ws, int mtpb) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i];
  if (blockIdx.x == 0 && threadIdx.x == 0) { y[n] = nsm; y[n + 1] = ws; y[n + 2] = mtpb; }
}

void run_on(const float *x, float *y, int n, cudaStream_t stream) {
  int dev = -1, nsm = 0, ws = 0, mtpb = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&ws, cudaDevAttrWarpSize, dev);
  cudaDeviceGetAttribute(&mtpb, cudaDevAttrMaxThreadsPerBlock, dev);
  copy_strided<<<nsm, 64, 0, stream>>>(x, y, n, nsm, ws, mtpb);
}

extern "C" void entry(const float *x, float *y, int n) {
  float *dx, *dy;
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, (n + 3) * sizeof(float));
  cudaMemcpyAsync(dx, x, n * sizeof(float), cudaMemcpyHostToDevice, stream);
  run_on(dx, dy, n, stream);
  cudaMemcpyAsync(y, dy, (n + 3) * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  cudaFree(dx);
  cudaFree(dy);
}
"""


def test_device_queries_and_streams_are_seen_through(tmp_path):
    n = 10000
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n + 3, np.float32)
    text = _lift_and_run(tmp_path, DEVICE_QUERIES, "cuda", [x, y, n])
    assert "cudaStream_t" not in text and "cudaDeviceGetAttribute" not in text
    # the values are the virtual device's profile (device 0), the same the source run saw
    got = y.copy()
    run_kernel(tmp_path / "k.cpp", args=[x, got, n])
    prof = platforms.profile("cuda")
    assert list(got[n:]) == [prof["multiprocessor_count"], prof["warp_size"], prof["max_threads_per_block"]]


def test_hip_device_queries_use_the_hip_profile(tmp_path):
    src = DEVICE_QUERIES.replace("cuda_runtime.h", "hip/hip_runtime.h").replace("cudaDevAttrMultiProcessorCount",
                                                                              "hipDeviceAttributeMultiprocessorCount")
    src = src.replace("cudaDevAttrWarpSize", "hipDeviceAttributeWarpSize").replace(
        "cudaDevAttrMaxThreadsPerBlock", "hipDeviceAttributeMaxThreadsPerBlock").replace("cuda", "hip")
    n = 5000
    got = np.zeros(n + 3, np.float32)
    _lift_and_run(tmp_path, src, "hip", [np.ones(n, np.float32), got, n])
    run_kernel(tmp_path / "k.cpp", args=[np.ones(n, np.float32), got, n])
    prof = platforms.profile("hip")
    assert list(got[n:]) == [prof["multiprocessor_count"], prof["warp_size"], prof["max_threads_per_block"]]


def test_an_unknown_device_attribute_is_refused_by_name():
    import pytest
    from passes.base import PassRefused

    src = DEVICE_QUERIES.replace("cudaDevAttrWarpSize", "cudaDevAttrEccEnabled")
    with pytest.raises(PassRefused) as exc:
        run_pass("loop_recovery", parse_source(src, "cuda", "k.cu"))
    assert "cudaDevAttrEccEnabled" in str(exc.value)


HIP_SYNC_SHUFFLES = r"""
#include <hip/hip_runtime.h>
#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)

__device__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffff, x, offset, 32);
  return x;
}

__global__ void sums(const float *x, float *y) {
  float s = warp_sum(x[blockIdx.x * 32 + threadIdx.x]);
  if (threadIdx.x == 0) y[blockIdx.x] = s;
}

extern "C" void entry(const float *x, float *y, int rows) {
  float *dx, *dy;
  hipMalloc(&dx, rows * 32 * sizeof(float));
  hipMalloc(&dy, rows * sizeof(float));
  hipMemcpy(dx, x, rows * 32 * sizeof(float), hipMemcpyHostToDevice);
  sums<<<rows, 32>>>(dx, dy);
  hipMemcpy(y, dy, rows * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx);
  hipFree(dy);
}
"""


def test_hip_sync_shuffles_through_a_port_macro_are_lifted(tmp_path):
    x = np.arange(4 * 32, dtype=np.float32)
    text = _lift_and_run(tmp_path, HIP_SYNC_SHUFFLES, "hip", [x, np.zeros(4, np.float32), 4])
    assert "#define __shfl_xor_sync" not in text and "__shfl_xor(" not in text


LAUNCH_HELPER = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>
typedef __hip_bfloat16 nv_bfloat16;     // a port's vendor header; unused here

struct launch_params { dim3 grid; dim3 block; size_t shmem; hipStream_t stream; };

static launch_params make_params(const dim3 grid, const dim3 block, const int shmem, const hipStream_t stream) {
  launch_params p;
  p.grid = grid;
  p.block = block;
  p.shmem = (size_t) shmem;
  p.stream = stream;
  return p;
}

__global__ void scale_k(const float *x, float *y, float s, int n);

static void launch(const launch_params lp, const float *x, float *y, float s, int n) {
  scale_k<<<lp.grid, lp.block, lp.shmem, lp.stream>>>(x, y, s, n);
}

__global__ void scale_k(const float *x, float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = s * x[i];
}

extern "C" void entry(const float *x, float *y, int n) {
  float *dx, *dy;
  hipMalloc(&dx, n * sizeof(float));
  hipMalloc(&dy, n * sizeof(float));
  hipMemcpy(dx, x, n * sizeof(float), hipMemcpyHostToDevice);
  const int blocks = (n + 127) / 128;
  launch(make_params(blocks, 128, 0, 0), dx, dy, 3.0f, n);
  hipMemcpy(y, dy, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx);
  hipFree(dy);
}
"""


def test_launch_through_a_parameter_struct_and_a_helper_before_the_kernel(tmp_path):
    """dim3 fields and parameters stay dim3 (ints passed for them are converted as C++ does),
    the kernel is declared before the helper that launches it, the unused bf16 typedef goes."""
    x = np.arange(1000, dtype=np.float32)
    text = _lift_and_run(tmp_path, LAUNCH_HELPER, "hip", [x, np.zeros(1000, np.float32), 1000])
    assert "xp_dim3(lp.grid" not in text and "__hip_bfloat16" not in text
    assert "make_params(xp_dim3(blocks, 1, 1), xp_dim3(128, 1, 1), 0, 0)" in text


EVENTS_AND_MANAGED = r"""
#include <cuda_runtime.h>
__global__ void twice(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
extern "C" void entry(const float *x, float *y, float *ms_out, int n) {
  float *dx, *dy;
  cudaMallocManaged(&dx, n * sizeof(float));
  cudaMallocHost(&dy, n * sizeof(float));
  for (int i = 0; i < n; ++i) dx[i] = x[i];
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreateWithFlags(&stop, 0);
  cudaEventRecord(start, 0);
  twice<<<(n + 63) / 64, 64>>>(dx, dy, n);
  cudaEventRecord(stop, 0);
  cudaEventSynchronize(stop);
  float ms = 1.0f;
  cudaEventElapsedTime(&ms, start, stop);
  ms_out[0] = ms >= 0.0f ? 1.0f : -1.0f;
  cudaDeviceSynchronize();
  for (int i = 0; i < n; ++i) y[i] = dy[i];
  cudaEventDestroy(start); cudaEventDestroy(stop);
  cudaFree(dx); cudaFreeHost(dy);
}
"""


def test_event_timing_and_managed_memory_are_seen_through(tmp_path):
    # timing code around a launch and managed / pinned buffers the host fills directly
    n = 300
    x = np.arange(n, dtype=np.float32)
    text = _lift_and_run(tmp_path, EVENTS_AND_MANAGED, "cuda",
                         [x, np.zeros(n, np.float32), np.zeros(1, np.float32), n])
    assert "cudaEvent" not in text and "cudaMallocManaged" not in text
    assert "xp_event_elapsed(&ms)" in text


FUNCTOR_LAMBDA = r"""
#include <cuda_runtime.h>
template <typename F>
__global__ void map_kernel(float *data, int n, F f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = f(data[i], i);
}
extern "C" void entry(float *data, int n, float slope) {
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, data, n * sizeof(float), cudaMemcpyHostToDevice);
  map_kernel<<<(n + 63) / 64, 64>>>(d, n, [slope] __device__ (float v, int i) { return v + slope * i; });
  cudaMemcpy(data, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
}
"""


def test_a_device_helper_declared_before_and_defined_after_its_kernel(tmp_path):
    # a functor lambda's function is declared before the kernel instance calling it and
    # defined after it: the lift keeps the declaration (as the helper is defined)
    n = 100
    text = _lift_and_run(tmp_path, FUNCTOR_LAMBDA, "cuda",
                         [np.arange(n, dtype=np.float32), n, np.float32(0.25)])
    head = text[:text.find("static void map_kernel")]
    assert "__xp_lambda_" in head
