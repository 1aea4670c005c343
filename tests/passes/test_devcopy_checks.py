"""passes/cleanup/devcopy.py: status-check wrapper macros (CUDA_CHECK / HIP_CHECK shapes, any name)
around the runtime calls do not hide the device-copy pattern; other macros still do."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.cleanup import devcopy
from passes.lift import loop_recovery
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

PASSES = (loop_recovery,)   # imported to register it

KERNEL = """
__global__ void k(float* C, const float* __restrict__ A, float* B, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { C[i] = A[i] + B[i]; B[i] = B[i] * 2.0f; }
}
"""

ENTRY = """
extern "C" void entry(float* A, float* B, float* C, int n) {
  float *d_A, *d_B, *d_C;
  const size_t bytes = n * sizeof(float);
  W(cudaMalloc((void**)&d_A, bytes));
  W(cudaMalloc(&d_B, bytes));
  W(cudaMalloc(&d_C, bytes));
  W(cudaMemcpy(d_A, A, bytes, cudaMemcpyHostToDevice));
  W(cudaMemcpy(d_B, B, bytes, cudaMemcpyHostToDevice));
  W(cudaMemset(d_C, 0, bytes));
  k<<<(n + 63) / 64, 64>>>(d_C, d_A, d_B, n);
  W(cudaGetLastError());
  W(cudaDeviceSynchronize());
  W(cudaMemcpy(C, d_C, bytes, cudaMemcpyDeviceToHost));
  W(cudaMemcpy(B, d_B, bytes, cudaMemcpyDeviceToHost));
  W(cudaFree(d_A)); W(cudaFree(d_B)); W(cudaFree(d_C));
}
"""

# status-check wrappers: the call evaluated once, its status compared with success (0)
CHECKS = {
    "do_decl_fprintf": "#define W(call)                                              \\\n"
                       "  do {                                                       \\\n"
                       "    cudaError_t err_ = (call);                               \\\n"
                       "    if (err_ != cudaSuccess) {                               \\\n"
                       "      fprintf(stderr, \"%s at %s:%d: %s\\n\", #call, __FILE__, \\\n"
                       "              __LINE__, cudaGetErrorString(err_));           \\\n"
                       "      exit(1);                                               \\\n"
                       "    }                                                        \\\n"
                       "  } while (0)",
    "bare_if": "#define W(x) if ((x) != cudaSuccess) { fprintf(stderr, \"failed\\n\"); abort(); }",
    "braced_truth": "#define W(x) { const cudaError_t e = x; if (e) return; }",
    "zero_left": "#define W(x) do { cudaError_t s = (x); if (cudaSuccess != s) { return; } } while (0)",
}


def _src(check):
    return "#include <cuda_runtime.h>\n#include <cstdio>\n#include <cstdlib>\n" + check + "\n" + \
        KERNEL + ENTRY


def _lift(src):
    prog = parse_source(src, "cuda", "k.cu")
    return prog, run_pass("loop_recovery", prog)


@pytest.mark.parametrize("form", sorted(CHECKS))
def test_wrapped_pattern_is_recovered_and_verified(form, tmp_path):
    src = _src(CHECKS[form])
    prog, lifted = _lift(src)
    assert devcopy._status_wrappers(lifted.facts) == {"W"}
    text = platforms.module("vnni", "backend").emit(run_pass("devcopy", lifted))
    body = text[text.rfind('extern "C"'):]
    for gone in ("d_A", "d_B", "d_C", "xp_malloc(", "xp_memcpy(", "xp_free(", "W("):
        assert gone not in body, body
    assert "xp_memset(C, 0, bytes)" in body.replace("(void *) ", "")
    n = 200
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(n).astype(np.float32) for _ in range(3)] + [n]
    sp = tmp_path / "k.cu"
    sp.write_text(src)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(sp, args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tp = tmp_path / "k.cpp"
    tp.write_text(text)
    run_kernel(tp, args=got, source=text, strict=True)
    for w, g in zip(want[:3], got[:3]):
        np.testing.assert_array_equal(g, w)


def test_hip_check_with_launch_macro_is_recovered():
    src = """#include <hip/hip_runtime.h>
#define HIP_CHECK(cmd) do { hipError_t e = (cmd); if (e != hipSuccess) { return; } } while (0)
__global__ void k(const float* a, float* c, size_t n) {
  size_t i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  if (i < n) c[i] = a[i] * 3.0f;
}
extern "C" void entry(const float* a, float* c, int n) {
  float *da, *dc;
  HIP_CHECK(hipMalloc(&da, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dc, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(da, a, n * sizeof(float), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(k, dim3((n + 255) / 256), dim3(256), 0, 0, da, dc, (size_t)n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(c, dc, n * sizeof(float), hipMemcpyDeviceToHost));
  hipFree(da); hipFree(dc);
}
"""
    lifted = run_pass("loop_recovery", parse_source(src, "hip", "k.hip"))
    text = platforms.module("vnni", "backend").emit(run_pass("devcopy", lifted))
    body = text[text.rfind('extern "C"'):]
    assert "da" not in body.replace("xp_dim3", "") and "HIP_CHECK(" not in body, body
    assert "k(a, c, (size_t) n," in body


# not status checks: the macro does more than check the status of one evaluation of its
# argument on the success path, compares with a non-success value, or is defined twice
NOT_CHECKS = {
    "twice": "#define W(x) do { if ((x) != 0) printf(\"%d\\n\", (int) (x)); } while (0)",
    "success_effect": "#define W(x) do { cudaError_t e = (x); printf(\"ok\\n\"); if (e) return; } while (0)",
    "else_branch": "#define W(x) do { cudaError_t e = (x); if (e != 0) return; else puts(\"ok\"); } while (0)",
    "wrong_value": "#define W(x) do { cudaError_t e = (x); if (e != 1) { return; } } while (0)",
    "equal_test": "#define W(x) do { cudaError_t e = (x); if (e == cudaSuccess) { return; } } while (0)",
    "unbraced_decl": "#define W(x) cudaError_t e = (x); if (e) return",
    "static_status": "#define W(x) do { static cudaError_t e = (x); if (e) return; } while (0)",
    "negated": "#define W(x) if (!(x)) return",
    "loop": "#define W(x) do { cudaError_t e = (x); while (e != 0) { return; } } while (0)",
}


@pytest.mark.parametrize("form", sorted(NOT_CHECKS))
def test_other_macros_are_not_wrappers(form):
    line = NOT_CHECKS[form].replace("cudaError_t", "int").replace("cudaSuccess", "0")
    assert devcopy._status_wrappers({"preamble": [line]}) == frozenset()


def test_redefined_or_undefined_macro_is_not_a_wrapper():
    good = "#define W(x) do { int e = (x); if (e != 0) return; } while (0)"
    assert devcopy._status_wrappers({"preamble": [good]}) == {"W"}
    assert devcopy._status_wrappers({"preamble": [good, "#undef W", good]}) == frozenset()


def test_pattern_behind_another_macro_is_still_not_seen():
    from passes.base import apply_pass

    src = _src(NOT_CHECKS["success_effect"])
    _, lifted = _lift(src)
    out = apply_pass("devcopy", lifted)      # no buffer pattern seen: nothing to do, unchanged
    assert not out.changed and out.program is lifted and out.reason.code == "XP-DEVCOPY-001"


def test_wrapped_call_other_than_a_runtime_helper_is_not_unwrapped():
    # a user function's status is not known to be success: its wrapper statement stays
    src = _src(CHECKS["zero_left"]).replace(
        "  W(cudaGetLastError());", "  W(user_status(n));").replace(
        "extern \"C\"", "static int user_status(int n) { return n > 100; }\nextern \"C\"")
    _, lifted = _lift(src)
    text = platforms.module("vnni", "backend").emit(run_pass("devcopy", lifted))
    body = text[text.rfind('extern "C"'):]
    assert "W(user_status(n));" in body and "d_A" not in body


@pytest.mark.parametrize("test, recovered", [("!= cudaSuccess", True), ("", True),
                                              ("!= 1", False), ("== cudaSuccess", False)])
def test_check_written_inline(test, recovered):
    # the same check spelled out in the entry (or a macro the front end expanded)
    src = _src(CHECKS["zero_left"]).replace("W(cudaMalloc(&d_B, bytes));",
                                       f"if (cudaMalloc(&d_B, bytes) {test}) {{ return; }}")
    _, lifted = _lift(src)
    text = platforms.module("vnni", "backend").emit(run_pass("devcopy", lifted))
    body = text[text.rfind('extern "C"'):]
    assert "d_A" not in body and "d_C" not in body
    # not a success check: d_B keeps its allocation, copies and free (other buffers go)
    assert ("d_B" in body) != recovered, body
    assert ("xp_malloc((void **) (&d_B), bytes)" in body) != recovered, body
