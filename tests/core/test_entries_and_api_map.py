"""Issue 14 item 5 (leniency): an extern "C" entry that shares its name with its kernel or a
device function (C++ overloading across sides), ``--entry`` held through the whole translation
pipeline, and the cooperative-groups header in api_map (CUDA <-> HIP)."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.map import api_map  # noqa: F401  (registers the pass)
from passes.base import run_pass
from xpiler.argspec import parse_arg_specs
from xpiler.parse import parse_source
from xpiler.run import run_kernel
from xpiler.translate import translate

SAME_NAME = r"""
#include <cuda_runtime.h>

__device__ float twice(float v) { return 2.0f * v; }

__global__ void add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = twice(a[i]) + b[i];
}

void twice(float *c, int n) {
  for (int i = 0; i < n; ++i) c[i] = c[i] * 2.0f;
}

extern "C" void add(const float *a, const float *b, float *c, int n, int reps) {
  float *da, *db, *dc;
  cudaMalloc(&da, n * sizeof(float));
  cudaMalloc(&db, n * sizeof(float));
  cudaMalloc(&dc, n * sizeof(float));
  cudaMemcpy(da, a, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b, n * sizeof(float), cudaMemcpyHostToDevice);
  for (int r = 0; r < reps; ++r)
    add<<<(n + 127) / 128, 128>>>(da, db, dc, n);
  cudaMemcpy(c, dc, n * sizeof(float), cudaMemcpyDeviceToHost);
  twice(c, n);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
}
"""

HIP_SAME_NAME = r"""
#include <hip/hip_runtime.h>

__global__ void scale(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 3.0f * x[i];
}

extern "C" void scale(const float *x, float *y, int n, int unused) {
  float *dx, *dy;
  hipMalloc(&dx, n * sizeof(float));
  hipMalloc(&dy, n * sizeof(float));
  hipMemcpy(dx, x, n * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(scale, dim3((n + 63) / 64), dim3(64), 0, 0, dx, dy, n);
  hipMemcpy(y, dy, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx);
  hipFree(dy);
}
"""


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def test_entry_sharing_its_kernels_name_parses_with_both_functions():
    p = parse_source(SAME_NAME, "cuda", "same.cu")
    kinds = {f.name: f.kind for f in p.functions}
    assert kinds == {"twice_device": "device", "add_kernel": "kernel", "twice": "host", "add": "host"}
    assert p.entry.name == "add" and p.entry.extern_c
    assert [launch.kernel for launch in p.launches] == ["add_kernel"]
    assert p.facts["overloads_renamed"] == {"twice_device": "twice", "add_kernel": "add"}
    text = _emit(p)
    assert "add_kernel<<<" in text and "twice_device(a[i])" in text and "\n  twice(c, n);" in text
    assert 'extern "C" __global__' not in text


def test_entry_sharing_its_kernels_name_runs_and_translates_to_hip(tmp_path):
    src = tmp_path / "same.cu"
    src.write_text(SAME_NAME)
    n = 300
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = np.zeros(n, np.float32)
    run_kernel(src, args=[a, b, c, n, 2])
    np.testing.assert_allclose(c, 2 * (2 * a + b), rtol=1e-6)
    out = tmp_path / "same.hip"
    report = translate(str(src), "hip", str(out), arg_specs=parse_arg_specs(["n=300", "reps=1"]))
    assert report.status == "verified", report.to_json() if hasattr(report, "to_json") else report
    text = out.read_text()
    assert "__global__ void add_kernel(" in text and 'extern "C" void add(' in text


def test_hip_entry_sharing_its_kernels_name_through_hipLaunchKernelGGL():
    p = parse_source(HIP_SAME_NAME, "hip", "same.hip")
    assert {f.name: f.kind for f in p.functions} == {"scale_kernel": "kernel", "scale": "host"}
    assert "hipLaunchKernelGGL(scale_kernel," in _emit(p)
    back = run_pass("api_map", p, to="cuda")
    assert "scale_kernel<<<" in _emit(back) or "scale_kernel," in _emit(back)


def test_same_signature_is_left_to_the_compiler():
    # not overloading but a redefinition: nothing is renamed; the build rejects it as nvcc does
    src = SAME_NAME.replace("int n, int reps)", "int n)").replace("r < reps", "r < 1")
    p = parse_source(src, "cuda", "redef.cu")
    assert "add_kernel" not in {f.name for f in p.functions}


TWO_ENTRIES = r"""
#include <cuda_runtime.h>

__global__ void scale_k(const float *x, float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = s * x[i];
}

extern "C" void scale2(const float *x, float *y, int n) {
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  scale_k<<<(n + 127) / 128, 128>>>(dx, dy, 2.0f, n);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}

extern "C" void scale3(const float *x, float *y, int n) {
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  scale_k<<<(n + 127) / 128, 128>>>(dx, dy, 3.0f, n);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}
"""


@pytest.mark.parametrize("to", ["hip", "vnni"])
def test_entry_holds_through_the_pipeline(tmp_path, to):
    src = tmp_path / "two.cu"
    src.write_text(TWO_ENTRIES)
    out = tmp_path / ("two.hip" if to == "hip" else "two.cpp")
    report = translate(str(src), to, str(out), arg_specs=parse_arg_specs(["n=200"]), entry="scale3")
    assert report.status == "verified", [(s.name, s.status, s.message) for s in report.steps]
    assert not any("XP1141" in (s.message or "") for s in report.steps)
    got = np.zeros(200, np.float32)
    x = np.arange(200, dtype=np.float32)
    run_kernel(out, entry="scale3", args=[x, got, 200])
    np.testing.assert_array_equal(got, 3 * x)


CG = r"""
#include <cuda_runtime.h>
#include <cooperative_groups.h>

__global__ void copy(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
"""


def test_api_map_maps_the_cooperative_groups_header_both_ways():
    p = parse_source(CG, "cuda", "cg.cu")
    hip = run_pass("api_map", p, to="hip")
    text = _emit(hip)
    assert "#include <hip/hip_cooperative_groups.h>" in text and "<cooperative_groups.h>" not in text
    back = run_pass("api_map", parse_source(text, "hip", "cg.hip"), to="cuda")
    text = _emit(back)
    assert "hip_cooperative_groups" not in text
    assert "#include <cooperative_groups/reduce.h>" in text     # includes <cooperative_groups.h>


DEVICE_ATTRIBUTE = r"""
#include <cuda_runtime.h>
__global__ void fill(int *out, int n, int nsm) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = nsm > 0 ? i : -1;
}
extern "C" void entry(int *out, int n) {
  int nsm = 0;
  cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0);
  int *d;
  cudaMalloc(&d, n * sizeof(int));
  fill<<<(n + 63) / 64, 64>>>(d, n, nsm);
  cudaMemcpy(out, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
}
"""


def test_device_attributes_are_mapped_to_hip(tmp_path):
    src = tmp_path / "attr.cu"
    src.write_text(DEVICE_ATTRIBUTE)
    out = tmp_path / "attr.hip"
    report = translate(str(src), "hip", str(out), arg_specs=parse_arg_specs(["n=100"]))
    assert report.status == "verified"
    text = out.read_text()
    assert "hipDeviceGetAttribute(&nsm, hipDeviceAttributeMultiprocessorCount, 0)" in text
