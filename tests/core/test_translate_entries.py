"""A file with several entries (issue 16, probe batch of session 24: kernel-only files with two
kernels, BANG files with two entries): ``xpiler translate`` without ``--entry`` translates each
entry, merges the outputs into one file (``xpiler.merge``) and verifies the merged file again
for every entry; nothing is written when one entry fails."""
from __future__ import annotations

import pytest

from xpiler.ir.errors import TranslationFailed
from xpiler.merge import merge_outputs
from xpiler.parse import parse_file
from xpiler.translate import translate

TWO_KERNELS = r"""
#include <cuda_runtime.h>
__device__ __forceinline__ float relu(float v) { return v > 0.f ? v : 0.f; }
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = relu(x[i]);
}
__global__ void scale_kernel(const float* __restrict__ x, float* __restrict__ y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = s * relu(x[i]);
}
"""


@pytest.mark.parametrize("to", ["hip", "vnni"])
def test_every_kernel_of_a_kernel_only_file_is_translated_and_verified(tmp_path, to):
    src = tmp_path / "two.cu"
    src.write_text(TWO_KERNELS)
    out = tmp_path / f"two.{to}"
    report = translate(str(src), to, str(out))
    assert report.status == "verified" and report.written, report.message
    assert [e["status"] for e in report.entries] == ["verified", "verified"]
    merges = [s for s in report.steps if s.name == "merge"]
    assert [s.status for s in merges] == ["verified", "verified"]
    text = out.read_text()
    assert "relu_kernel" in text and "scale_kernel" in text
    if to == "hip":       # the output is a file with the same two entries
        with pytest.raises(Exception) as err:
            parse_file(out)
        assert err.value.entry_candidates == ["relu_kernel", "scale_kernel"]


def test_one_failing_entry_writes_nothing(tmp_path):
    src = tmp_path / "two.cu"
    # the second kernel calls a device function nothing defines: the file does not build
    src.write_text(TWO_KERNELS.replace("s * relu(x[i])", "s * mystery(x[i])").replace(
        "__global__ void scale_kernel", "__device__ float mystery(float);\n__global__ void scale_kernel"))
    out = tmp_path / "two.cpp"
    report = translate(str(src), "vnni", str(out))
    assert report.status != "verified" and not report.written and not out.exists()
    assert report.message.startswith("entry relu_kernel:"), report.message   # the first that failed


def test_merge_refuses_two_different_definitions_of_one_name():
    a = "float h(float v) { return v; }\nvoid f(float* x) { x[0] = h(x[0]); }\n"
    b = "float h(float v) { return -v; }\nvoid g(float* x) { x[0] = h(x[0]); }\n"
    with pytest.raises(TranslationFailed, match="define 'h' differently"):
        merge_outputs([(a, "f"), (b, "g")], "vnni")
    same = merge_outputs([(a, "f"), (a.replace("void f", "void g"), "g")], "vnni")
    assert same.count("float h(float v)") == 1 and "void f(" in same and "void g(" in same


def test_merge_keeps_overloads_of_a_helper_side_by_side():
    # session 25 probe (BANG masked_where_select -> cuda): one entry's output defines the
    # lift's xpd_f64 for every element type, the other's none or another set
    a = "double w(int v) { return v; }\nvoid f(int* x) { x[0] = (int) w(x[0]); }\n"
    b = ("double w(int v) { return v; }\ndouble w(float v) { return v; }\n"
         "void g(float* x) { x[0] = (float) w(x[0]); }\n")
    merged = merge_outputs([(a, "f"), (b, "g")], "vnni")
    assert merged.count("double w(int v)") == 1 and merged.count("double w(float v)") == 1
    c = "double w(float v) { return -v; }\nvoid g(float* x) { x[0] = (float) w(x[0]); }\n"
    with pytest.raises(TranslationFailed, match="define 'w' differently"):
        merge_outputs([(b.replace("void g", "void f"), "f"), (c, "g")], "vnni")
