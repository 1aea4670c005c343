"""passes/cleanup/devcopy.py: device copies of lifted host code are removed (golden, verified, refusals)."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.cleanup import devcopy  # noqa: F401  (registers the passes)
from passes.lift import loop_recovery
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

KERNEL = """#include <cuda_runtime.h>
__global__ void k(float* __restrict__ C, const float* __restrict__ A, float* __restrict__ B, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { C[i] = A[i] + B[i]; B[i] = B[i] * 2.0f; }
}
"""

GOOD = KERNEL + """
extern "C" void entry(float* A, float* B, float* C, int n) {
  float* d_A; float* d_B; float* d_C;
  cudaMalloc(&d_A, n * sizeof(float));
  cudaMalloc(&d_B, n * sizeof(float));
  cudaMalloc(&d_C, n * sizeof(float));
  cudaMemcpy(d_A, A, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, n * sizeof(float), cudaMemcpyHostToDevice);
  k<<<(n + 63) / 64, 64>>>(d_C, d_A, d_B, n);
  cudaMemcpy(C, d_C, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(B, d_B, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A); cudaFree(d_B); cudaFree(d_C);
}
"""


def _lift(src):
    prog = parse_source(src, "cuda", "k.cu")
    return prog, run_pass("loop_recovery", prog)


def _entry_text(text):
    return text[text.rfind('extern "C"'):]


def _runs_the_same(tmp_path, src, prog, text, args):
    """The source and devcopy's output on copies of ``args``: the three buffers agree."""
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    (tmp_path / "k.cu").write_text(src)
    (tmp_path / "k.cpp").write_text(text)
    run_kernel(tmp_path / "k.cu", args=want, program=prog)
    run_kernel(tmp_path / "k.cpp", args=got, source=text, strict=True)
    for w, g in zip(want[:3], got[:3]):
        np.testing.assert_array_equal(g, w)


def test_golden_and_verified(tmp_path):
    prog, lifted = _lift(GOOD)
    out = run_pass("devcopy", lifted)
    text = platforms.module("vnni", "backend").emit(out)
    body = _entry_text(text)
    for gone in ("d_A", "d_B", "d_C", "xp_malloc(", "xp_memcpy(", "xp_free("):
        assert gone not in body, body
    assert "k(C, A, B, n," in body.replace("(float *) ", "")
    n = 200
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(n).astype(np.float32) for _ in range(3)] + [n]
    _runs_the_same(tmp_path, GOOD, prog, text, args)


def _codes(src):
    _, lifted = _lift(src)
    with pytest.raises(PassRefused) as exc:
        run_pass("devcopy", lifted)
    return [d.code for d in exc.value.diagnostics]


def test_nothing_to_do_without_device_buffers():
    from passes.base import apply_pass

    src = KERNEL + """
extern "C" void entry(float* A, float* B, float* C, int n) {
  k<<<(n + 63) / 64, 64>>>(C, A, B, n);
}
"""
    _, lifted = _lift(src)
    out = apply_pass("devcopy", lifted)                 # not applicable: the input, unchanged
    assert not out.changed and out.program is lifted and out.reason.code == "XP-DEVCOPY-001"


@pytest.mark.parametrize("variant", ["partial", "inplace_input", "alias"])
def test_refuses_aliasing_or_partial(variant):
    copy_b = {"partial": "(n / 2) * sizeof(float)"}.get(variant, "n * sizeof(float)")
    back_b = "" if variant == "inplace_input" else \
        "cudaMemcpy(B, d_B, n * sizeof(float), cudaMemcpyDeviceToHost);"
    a_src = "B" if variant == "alias" else "A"
    src = KERNEL + f"""
extern "C" void entry(float* A, float* B, float* C, int n) {{
  float* d_A; float* d_B; float* d_C;
  cudaMalloc(&d_A, n * sizeof(float));
  cudaMalloc(&d_B, n * sizeof(float));
  cudaMalloc(&d_C, n * sizeof(float));
  cudaMemcpy(d_A, {a_src}, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, {copy_b}, cudaMemcpyHostToDevice);
  k<<<(n + 63) / 64, 64>>>(d_C, d_A, d_B, n);
  cudaMemcpy(C, d_C, n * sizeof(float), cudaMemcpyDeviceToHost);
  {back_b}
  cudaFree(d_A); cudaFree(d_B); cudaFree(d_C);
}}
"""
    assert "XP-DEVCOPY-002" in _codes(src)


def test_recorded_extent_folds_sizeof_of_typedef_scalars():
    # sizeof(int64_t) would read as an unknown name to the lowering; the recorded size keeps
    # only the entry's scalars (sizeof of keyword types stays as written)
    src = """#include <cuda_runtime.h>
#include <stdint.h>
__global__ void g(const float* x, const int64_t* idx, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[idx[i]];
}
extern "C" void entry(float* x, int64_t* idx, float* y, int n) {
  float* d_x; int64_t* d_idx; float* d_y;
  cudaMalloc(&d_x, n * sizeof(float));
  cudaMalloc(&d_idx, n * sizeof(int64_t));
  cudaMalloc(&d_y, n * sizeof(float));
  cudaMemcpy(d_x, x, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_idx, idx, n * sizeof(int64_t), cudaMemcpyHostToDevice);
  g<<<(n + 31) / 32, 32>>>(d_x, d_idx, d_y, n);
  cudaMemcpy(y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x); cudaFree(d_idx); cudaFree(d_y);
}
"""
    _, lifted = _lift(src)
    ext = devcopy.recorded_extents(run_pass("devcopy", lifted, extents=True).ast)
    assert ext["idx"].replace(" ", "") == "n*8"
    assert "sizeof(float)" in ext["x"].replace(" ", "")


D2D = """#include <cuda_runtime.h>
__global__ void upd(const int* idx, const float* u, float* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) o[idx[i]] = u[i];
}
extern "C" void entry(float* data, int* idx, float* u, float* out, int m, int n) {
  float* d_data; int* d_idx; float* d_u; float* d_out;
  cudaMalloc(&d_data, m * sizeof(float));
  cudaMalloc(&d_idx, n * sizeof(int));
  cudaMalloc(&d_u, n * sizeof(float));
  cudaMalloc(&d_out, m * sizeof(float));
  cudaMemcpy(d_data, data, m * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_idx, idx, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_u, u, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_out, d_data, m * sizeof(float), cudaMemcpyDeviceToDevice);
  upd<<<(n + 31) / 32, 32>>>(d_idx, d_u, d_out, n);
  cudaMemcpy(out, d_out, m * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_data); cudaFree(d_idx); cudaFree(d_u); cudaFree(d_out);
}
"""


def test_device_to_device_copy_becomes_a_copy_between_parameters(tmp_path):
    # out starts as a device copy of data (scatter): the copy stays, between the parameters
    prog, lifted = _lift(D2D)
    out = run_pass("devcopy", lifted)
    text = platforms.module("vnni", "backend").emit(out)
    body = _entry_text(text)
    for gone in ("d_data", "d_out", "xp_malloc(", "xp_free("):
        assert gone not in body, body
    assert "xp_memcpy(out, data," in body.replace("(float *) ", "")
    m, n = 64, 40
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(m).astype(np.float32), rng.permutation(m)[:n].astype(np.int32),
            rng.standard_normal(n).astype(np.float32), np.zeros(m, np.float32), m, n]
    sp = tmp_path / "k.cu"
    sp.write_text(D2D)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(sp, args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tp = tmp_path / "k.cpp"
    tp.write_text(text)
    run_kernel(tp, args=got, source=text, strict=True)
    for w, g in zip(want[:4], got[:4]):
        np.testing.assert_array_equal(g, w)


def test_device_to_device_copy_out_of_a_written_buffer_is_refused():
    # the source of the device copy is also written by a kernel: not a plain input
    src = D2D.replace("upd<<<(n + 31) / 32, 32>>>(d_idx, d_u, d_out, n);",
                      "upd<<<(n + 31) / 32, 32>>>(d_idx, d_u, d_data, n);\n  "
                      "upd<<<(n + 31) / 32, 32>>>(d_idx, d_u, d_out, n);")
    assert "XP-DEVCOPY-002" in _codes(src)


@pytest.mark.parametrize("null", ["NULL", "nullptr", "0", "(float *) 0"])
def test_buffers_declared_as_null_pointers_then_allocated(tmp_path, null):
    # ``float *d_A = NULL, *d_B = NULL; cudaMalloc(&d_A, ...)``: the null initializer holds
    # no data, the buffer is the same full-copy pattern
    src = GOOD.replace("float* d_A; float* d_B; float* d_C;",
                       f"float* d_A = {null}; float* d_B = {null}; float* d_C = {null};")
    if null == "NULL":
        src = "#include <cstddef>\n" + src
    prog, lifted = _lift(src)
    out = run_pass("devcopy", lifted)
    text = platforms.module("vnni", "backend").emit(out)
    body = _entry_text(text)
    for gone in ("d_A", "d_B", "d_C", "xp_malloc(", "xp_memcpy(", "xp_free("):
        assert gone not in body, body
    n = 96
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


def test_null_buffer_with_another_initializer_or_use_is_refused():
    # a buffer initialised with something other than a null pointer or its allocation, or
    # tested before use, is not the pattern
    src = GOOD.replace("float* d_A; float* d_B; float* d_C;",
                       "float* d_A = 0; float* d_B = 0; float* d_C = A;")
    assert "XP-DEVCOPY-002" in _codes(src)
    src = GOOD.replace("cudaFree(d_A);", "if (d_A != 0) cudaFree(d_A);") \
        .replace("float* d_A; float* d_B; float* d_C;", "float* d_A = 0; float* d_B = 0; float* d_C = 0;")
    assert "XP-DEVCOPY-002" in _codes(src)


THROUGH_HELPER = KERNEL + """
static void launch(float* C, const float* A, float* B, int n) {
  dim3 block(64);
  if (n < 1024) k<<<(n + block.x - 1) / block.x, block>>>(C, A, B, n);
  else k<<<(n + 255) / 256, 256>>>(C, A, B, n);
}
extern "C" void entry(float* A, float* B, float* C, int n) {
  float* d_A; float* d_B; float* d_C;
  cudaMalloc(&d_A, n * sizeof(float));
  cudaMalloc(&d_B, n * sizeof(float));
  cudaMalloc(&d_C, n * sizeof(float));
  cudaMemcpy(d_A, A, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, n * sizeof(float), cudaMemcpyHostToDevice);
  launch(d_C, d_A, d_B, n);
  cudaMemcpy(C, d_C, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(B, d_B, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A); cudaFree(d_B); cudaFree(d_C);
}
"""


def test_buffers_handed_to_a_host_helper_that_only_launches_kernels(tmp_path):
    """ggml's norm_f32_cuda(d_x, ...) picks a block size and launches: the buffers reach the
    kernels whole through it (``block.x`` is a field, not a use of a buffer), so the copies go;
    a helper that also indexes a buffer keeps them."""
    prog, lifted = _lift(THROUGH_HELPER)
    out = run_pass("devcopy", lifted)
    body = _entry_text(platforms.module("vnni", "backend").emit(out))
    assert "d_A" not in body and "xp_memcpy(" not in body and "launch(C, A, B, n)" in body.replace("(float *) ", "")
    n = 100
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(n).astype(np.float32) for _ in range(3)] + [n]
    _runs_the_same(tmp_path, THROUGH_HELPER, prog, platforms.module("vnni", "backend").emit(out), args)
    touched = THROUGH_HELPER.replace("dim3 block(64);", "dim3 block(64); B[0] = 1.0f;")
    assert "XP-DEVCOPY-002" in _codes(touched)


def test_a_const_input_handed_to_a_helper_taking_void_pointers_still_builds(tmp_path):
    """aiter's LLGemmZZ(void *in_a, ...) gets d_A; replaced by the entry's `const float *A`
    it would pass a const pointer as `void *`, which C++ refuses: it gets the buffer's type."""
    src = KERNEL + """
static void launch(void* C, void* A, void* B, int n) {
  k<<<(n + 63) / 64, 64>>>(reinterpret_cast<float*>(C), reinterpret_cast<const float*>(A),
                           reinterpret_cast<float*>(B), n);
}
extern "C" void entry(const float* A, float* B, float* C, int n) {
  float *d_A, *d_B, *d_C;
  cudaMalloc(&d_A, n * sizeof(float));
  cudaMalloc(&d_B, n * sizeof(float));
  cudaMalloc(&d_C, n * sizeof(float));
  cudaMemcpy(d_A, A, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, n * sizeof(float), cudaMemcpyHostToDevice);
  launch(d_C, d_A, d_B, n);
  cudaMemcpy(C, d_C, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(B, d_B, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A); cudaFree(d_B); cudaFree(d_C);
}
"""
    prog, lifted = _lift(src)
    out = run_pass("devcopy", lifted)
    text = platforms.module("vnni", "backend").emit(out)
    assert "launch(C, (float *) A, B, n" in _entry_text(text)
    n = 70
    args = [np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32), n]
    _runs_the_same(tmp_path, src, prog, text, args)


POINTER_VIEWS = """#include <cuda_runtime.h>
__global__ void pairsum(const float2* __restrict__ in, float* __restrict__ out, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) out[i] = in[i].x + in[i].y;
}
extern "C" void entry(const float* in, float* out, unsigned int* count, int n) {
  float *d_in, *d_out; unsigned int* d_count;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, n / 2 * sizeof(float));
  cudaMalloc(&d_count, sizeof(unsigned int));
  cudaMemcpy(d_in, in, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_count, count, sizeof(unsigned int), cudaMemcpyHostToDevice);
  pairsum<<<(n / 2 + 63) / 64, 64>>>(reinterpret_cast<const float2*>(d_in), d_out, n / 2);
  cudaMemcpy(out, d_out, n / 2 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(count, d_count, sizeof(unsigned int), cudaMemcpyDeviceToHost);
  cudaFree(d_in); cudaFree(d_out); cudaFree(d_count);
}
"""


def test_a_buffer_handed_to_a_kernel_through_a_pointer_cast(tmp_path):
    """``reinterpret_cast<const float2 *>(d_in)`` is still the whole buffer: its copies go and
    the kernel gets the cast host pointer; the recorded extent of a multi-word type keeps its
    blank (``sizeof(unsigned int)``, not ``sizeof(unsignedint)``)."""
    prog, lifted = _lift(POINTER_VIEWS)
    out = run_pass("devcopy", lifted, extents=True)
    text = platforms.module("vnni", "backend").emit(out)
    body = _entry_text(text)
    assert "d_in" not in body and "xp_memcpy(" not in body
    assert "extent(count, sizeof(unsigned int))" in text
    assert devcopy.recorded_extents(out.ast)["count"] == "sizeof(unsigned int)"
    n = 64
    want = [np.arange(n, dtype=np.float32), np.zeros(n // 2, np.float32),
            np.ones(1, np.uint32), n]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in want]
    (tmp_path / "k.cu").write_text(POINTER_VIEWS)
    (tmp_path / "k.cpp").write_text(text)
    run_kernel(tmp_path / "k.cu", args=want, program=prog)
    run_kernel(tmp_path / "k.cpp", args=got, source=text, strict=True)
    np.testing.assert_array_equal(got[1], np.arange(0, n, 2) * 2 + 1)
    np.testing.assert_array_equal(got[1], want[1])


OFFSET_ARGUMENT = r"""
#include <cuda_runtime.h>
__global__ void scale(const float *x, float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = s * x[i];
}
extern "C" void two_outputs(const float *x, float *y, int n) {
  float *d_x, *d_y;
  cudaMalloc(&d_x, n * sizeof(float));
  cudaMalloc(&d_y, 2 * n * sizeof(float));
  cudaMemcpy(d_x, x, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(n + 63) / 64, 64>>>(d_x, d_y, 2.0f, n);
  scale<<<(n + 63) / 64, 64>>>(d_x, d_y + n, 3.0f, n);
  cudaMemcpy(y, d_y, 2 * n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x); cudaFree(d_y);
}
"""


def test_buffer_handed_to_a_kernel_at_an_offset(tmp_path):
    # a second kernel writes the second half of the output (``d_y + n``): the same half of
    # the host buffer once the device buffer is replaced
    prog, lifted = _lift(OFFSET_ARGUMENT)
    out = run_pass("devcopy", lifted)
    text = platforms.module("vnni", "backend").emit(out)
    body = _entry_text(text)
    for gone in ("d_x", "d_y", "xp_malloc(", "xp_memcpy(", "xp_free("):
        assert gone not in body, body
    assert "y + n" in body
    n = 100
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    _runs_the_same(tmp_path, OFFSET_ARGUMENT, prog, text, [x, np.zeros(2 * n, np.float32), n])
