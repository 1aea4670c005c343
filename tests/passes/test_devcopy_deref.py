"""passes/cleanup/devcopy.py: a kernel reading an input through *(p + off) (the lift of __ldg) leaves
it read-only; a store through *(p + off) or a cast of p still counts as a write."""
from __future__ import annotations

import pytest

import platforms
from passes.cleanup import devcopy  # noqa: F401  (registers the passes)
from passes.lift import loop_recovery
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source

PASSES = (devcopy, loop_recovery)   # imported to register them

ENTRY = """
extern "C" void entry(float* w, float* out, int n) {
  float* d_w; float* d_out;
  cudaMalloc(&d_w, n * sizeof(float));
  cudaMalloc(&d_out, n * sizeof(float));
  cudaMemcpy(d_w, w, n * sizeof(float), cudaMemcpyHostToDevice);
  k<<<(n + 63) / 64, 64>>>(d_out, d_w, n);
  cudaMemcpy(out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_w); cudaFree(d_out);
}
"""


def _kernel(body):
    return ("#include <cuda_runtime.h>\n__global__ void k(float* out, float* w, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) { " + body +
            " }\n}\n" + ENTRY)


def _lifted(src):
    return run_pass("loop_recovery", parse_source(src, "cuda", "k.cu"))


def test_ldg_read_of_an_input_only_buffer_is_recovered():
    out = run_pass("devcopy", _lifted(_kernel("out[i] = __ldg(w + i) * 2.0f + *(w + i);")))
    text = platforms.module("vnni", "backend").emit(out)
    body = text[text.rfind('extern "C"'):]
    assert "d_w" not in body and "xp_memcpy(" not in body
    assert "k(out, w, n," in body


@pytest.mark.parametrize("store", ["*(w + i) = 1.0f;", "((float *) w)[i] = 1.0f;",
                                   "*(i + w) += 1.0f;", "(*(w + i))++;"])
def test_store_through_a_deref_or_cast_still_refuses(store):
    with pytest.raises(PassRefused) as exc:
        run_pass("devcopy", _lifted(_kernel("out[i] = w[i]; " + store)))
    codes = [d.code for d in exc.value.diagnostics]
    assert codes == ["XP-DEVCOPY-002"], codes
    assert "written by kernel k" in exc.value.diagnostics[0].message
