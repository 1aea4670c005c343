"""loop_recovery and per-thread state (issue 16, probe kernels of session 24): a local bound to a
C++ reference parameter of a device helper is written by the call, so it stays per thread (it
was hoisted to the block as if uniform and every thread merged into one accumulator); a
``__syncwarp`` under a warp-uniform ``if (threadIdx.x < 32)`` splits the predicated regions
like a warp collective does (it was refused as a barrier under a thread-dependent condition)."""
from __future__ import annotations

import numpy as np
import pytest

from passes.base import PassRefused, run_pass
from passes.lift import loop_recovery  # noqa: F401  (registers the pass)
from xpiler.parse import parse_source
from tests.passes.test_loop_recovery_ports import _lift_and_run

REFERENCE_ACCUMULATOR = r"""
#include <cuda_runtime.h>
__device__ __forceinline__ void merge(float &m, float &d, float v) {
  float mn = fmaxf(m, v);
  d = d * expf(m - mn) + expf(v - mn);
  m = mn;
}
__global__ void row_stats(const float *x, float *out, int cols) {
  float m = -1e30f, d = 0.f;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) merge(m, d, x[blockIdx.x * cols + i]);
  out[(blockIdx.x * blockDim.x + threadIdx.x) * 2] = m;
  out[(blockIdx.x * blockDim.x + threadIdx.x) * 2 + 1] = d;
}
extern "C" void entry(const float *x, float *out, int rows, int cols) {
  float *dx, *dout;
  cudaMalloc(&dx, rows * cols * sizeof(float));
  cudaMalloc(&dout, rows * 64 * 2 * sizeof(float));
  cudaMemcpy(dx, x, rows * cols * sizeof(float), cudaMemcpyHostToDevice);
  row_stats<<<rows, 64>>>(dx, dout, cols);
  cudaMemcpy(out, dout, rows * 64 * 2 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dout);
}
"""


def test_local_bound_to_reference_parameter_stays_per_thread(tmp_path):
    rows, cols = 3, 100
    x = np.random.default_rng(0).standard_normal(rows * cols).astype(np.float32)
    out = np.zeros(rows * 64 * 2, np.float32)
    text = _lift_and_run(tmp_path, REFERENCE_ACCUMULATOR, "cuda", [x, out, rows, cols])
    # the accumulators are declared in the thread loop, not once per block
    assert text.index("float m = ") > text.index("for (unsigned int xp_tx")


WARP_TAIL = r"""
#include <cuda_runtime.h>
__global__ void block_sum(const float *x, float *out, int n) {
  __shared__ float s[128];
  float a = 0.f;
  for (int i = threadIdx.x; i < n; i += 128) a += x[i];
  s[threadIdx.x] = a;
  __syncthreads();
  if (threadIdx.x < 64) s[threadIdx.x] += s[threadIdx.x + 64];
  __syncthreads();
  if (threadIdx.x < 32) {
    for (int k = 32; k > 0; k >>= 1) {
      float v = s[threadIdx.x] + s[threadIdx.x + k];
      __syncwarp();
      s[threadIdx.x] = v;
      __syncwarp();
    }
  }
  if (threadIdx.x == 0) out[0] = s[0];
}
extern "C" void entry(const float *x, float *out, int n) {
  float *dx, *dout;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dout, sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  block_sum<<<1, 128>>>(dx, dout, n);
  cudaMemcpy(out, dout, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dout);
}
"""


def test_syncwarp_under_warp_uniform_if(tmp_path):
    x = np.arange(300, dtype=np.float32) / 7
    out = np.zeros(1, np.float32)
    _lift_and_run(tmp_path, WARP_TAIL, "cuda", [x, out, 300])


def test_syncthreads_under_thread_dependent_if_still_refused():
    src = WARP_TAIL.replace("__syncwarp();\n      s[threadIdx.x] = v;", "__syncthreads();\n      s[threadIdx.x] = v;")
    with pytest.raises(PassRefused) as err:
        run_pass("loop_recovery", parse_source(src, "cuda", "k.cu"))
    assert "XP-RECOVER-001" in err.value.render()
