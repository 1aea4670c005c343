"""api_map on HIP ports of CUDA code (issue 16, wild set): the port's compatibility macros
(``#define __shfl_xor_sync(mask, v, l, w) __shfl_xor(v, l, w)``, ``#define cudaStream_t
hipStream_t``) name the target's own API and are dropped toward CUDA; HIP shuffles in other macro
bodies become ``*_sync`` shuffles with a full mask; shuffles wider than a 32-lane warp stay
refused."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import PassRefused, run_pass
from passes.map import api_map  # noqa: F401  (registers the pass)
from xpiler.argspec import parse_arg_specs
from xpiler.parse import parse_source
from xpiler.run import run_kernel
from xpiler.translate import translate

PORT = r"""
#include <hip/hip_runtime.h>
#define WARP_SIZE 32
#define cudaStream_t hipStream_t
#define __shfl_sync(mask, var, laneMask, width) __shfl(var, laneMask, width)
#define __shfl_xor_sync(mask, var, laneMask, width) __shfl_xor(var, laneMask, width)
#define BCAST(v) __shfl(v, 0, WARP_SIZE)

template <int width = WARP_SIZE>
__device__ float warp_sum(float x) {
  for (int offset = width / 2; offset > 0; offset >>= 1)
    x += __shfl_xor_sync(0xffffffff, x, offset, width);
  return x;
}

__global__ void row_sums(const float *x, float *y, int ncols) {
  int row = blockIdx.x;
  float s = 0.0f;
  for (int c = threadIdx.x; c < ncols; c += WARP_SIZE) s += x[row * ncols + c];
  s = warp_sum(s);
  s = BCAST(s);
  if (threadIdx.x == 0) y[row] = s;
}

extern "C" void entry(const float *x, float *y, int nrows, int ncols) {
  float *dx, *dy;
  cudaStream_t stream = 0;
  hipMalloc(&dx, nrows * ncols * sizeof(float));
  hipMalloc(&dy, nrows * sizeof(float));
  hipMemcpy(dx, x, nrows * ncols * sizeof(float), hipMemcpyHostToDevice);
  row_sums<<<nrows, WARP_SIZE, 0, stream>>>(dx, dy, ncols);
  hipMemcpy(y, dy, nrows * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx);
  hipFree(dy);
}
"""


def _emit(p) -> str:
    return platforms.module(p.platform, "backend").emit(p)


def test_port_macros_of_cuda_names_are_dropped_toward_cuda():
    text = _emit(run_pass("api_map", parse_source(PORT, "hip", "port.hip"), to="cuda"))
    assert "#define __shfl_xor_sync" not in text and "#define __shfl_sync" not in text
    assert "#define cudaStream_t" not in text
    assert "__shfl_xor(" not in text and "__shfl(" not in text
    assert "__shfl_sync(0xffffffffu, v, 0, WARP_SIZE)" in text      # macro body: HIP -> CUDA form


def test_hip_port_with_shuffle_macros_verifies_on_cuda(tmp_path):
    src = tmp_path / "port.hip"
    src.write_text(PORT)
    out = tmp_path / "port.cu"
    report = translate(str(src), "cuda", str(out), arg_specs=parse_arg_specs(["nrows=4", "ncols=100"]))
    assert report.status == "verified", [(s.name, s.status, s.message) for s in report.steps]
    x = np.random.default_rng(0).standard_normal((4, 100)).astype(np.float32)
    y = np.zeros(4, np.float32)
    run_kernel(out, args=[x, y, 4, 100])
    np.testing.assert_allclose(y, x.sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call", ["__shfl_xor_sync(0xffffffff, x, 16, 64)", "__shfl_xor(x, 16, 64)"])
def test_shuffles_wider_than_a_warp_stay_refused(call):
    src = PORT.replace("__shfl_xor_sync(0xffffffff, x, offset, width)", call)
    with pytest.raises(PassRefused) as exc:
        run_pass("api_map", parse_source(src, "hip", "wide.hip"), to="cuda")
    assert exc.value.diagnostics[0].code == "XP-APIMAP-002" and "width 64" in str(exc.value)


BF16 = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>
typedef __hip_bfloat16 nv_bfloat16;

__global__ void scale_bf16(const __hip_bfloat16 *x, __hip_bfloat162 *y2, hip_bfloat16 *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    nv_bfloat16 v = __float2bfloat16(s * __bfloat162float(x[i]));
    y[i] = v;
    y2[i] = __hip_bfloat162(v, x[i]);
  }
}
"""


def test_hip_bf16_types_become_cuda_bf16_types(tmp_path):
    text = _emit(run_pass("api_map", parse_source(BF16, "hip", "bf16.hip"), to="cuda"))
    assert "hip_bfloat16" not in text and "__hip_bfloat162" not in text and "hip_bf16.h" not in text
    assert "const __nv_bfloat16 *x" in text and "__nv_bfloat162 *y2" in text and "__nv_bfloat16 *y" in text
    assert "<cuda_bf16.h>" in text
    src = tmp_path / "bf16.hip"
    src.write_text(BF16)
    report = translate(str(src), "cuda", str(tmp_path / "bf16.cu"),
                       arg_specs=parse_arg_specs(["x=random:64", "y2=zeros:128", "y=zeros:64", "s=0.5", "n=64"]),
                       entry="scale_bf16")
    assert report.status == "verified", [(s.name, s.status, s.message) for s in report.steps]
    # and back: CUDA's __nv_bfloat16 is HIP's __hip_bfloat16 (HIPIFY's name)
    back = _emit(run_pass("api_map", parse_source(text, "cuda", "bf16.cu"), to="hip"))
    assert "__hip_bfloat16 *x" in back and "__nv_bfloat16" not in back


def test_cuda11_warp_reductions_over_part_of_a_warp_are_refused_toward_hip():
    # the full-mask form becomes a width-32 butterfly (test_warp_macro_aliases.py); a partial
    # mask has no mask-less HIP form
    src = """#include <cuda_runtime.h>
__global__ void k(const int *x, int *y) {
  int s = __reduce_add_sync(0x0000ffff, x[threadIdx.x]);
  if (threadIdx.x == 0) y[0] = s;
}
"""
    with pytest.raises(PassRefused) as exc:
        run_pass("api_map", parse_source(src, "cuda", "k.cu"), to="hip")
    d = exc.value.diagnostics[0]
    assert d.code == "XP-APIMAP-002" and d.construct == "__reduce_add_sync" and "warp reduction" in d.message
    assert "mask is not the constant 0xffffffff" in d.message
