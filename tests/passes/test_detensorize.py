"""detensorize (BANG): each intrinsic family, original vs detensorized on the BANG emulator.

The vector families are generated from the descriptions themselves (every form of the
``vec_binary`` / ``vec_scalar`` / ``vec_unary`` / ``vec_cycle`` templates that takes float), so a new
entry is tested without editing this file. Results must be bit-identical: both runs use the same
compiler and flags and the detensorized loops are the reference bodies.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from passes.lift import bang_lower as bl
from passes.base import PassRefused, run_pass
import passes.lift.detensorize  # noqa: F401  (registers the pass)
import platforms
from xpiler.parse import parse_source
from xpiler.run import run_kernel

NE = 64


def _emit(program) -> str:
    return platforms.module("bang", "backend").emit(program)


def check_same(tmp_path, source: str, args: list, name: str = "k") -> str:
    """Run ``source`` and its detensorized form on identical inputs; outputs must be identical."""
    prog = parse_source(source, "bang", str(tmp_path / f"{name}.mlu"))
    want = [a.copy() for a in args]
    run_kernel(tmp_path / f"{name}.mlu", args=want, source=source, program=prog)
    out = run_pass("detensorize", prog)
    text = _emit(out)
    assert not re.search(r"\b__bang_\w+\s*\(|\b__memcpy\w*\s*\(|\b__memset_nram\s*\(|\b__nramset\s*\(", text), text
    got = [a.copy() for a in args]
    path = tmp_path / f"{name}_dt.mlu"
    run_kernel(path, args=got, source=text, program=parse_source(text, "bang", str(path)))
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    assert prog.ast is not out.ast          # pure: the input program is untouched
    assert "__bang_" in _emit(prog) or "__memcpy" in _emit(prog)
    return text


def _rng(seed=0):
    return np.random.default_rng(seed)


def _forms(template: str, ty: str = "float"):
    out = []
    for name, forms in sorted(bl._forms().items()):
        for f in forms:
            if f.get("template") == template and ty in f["types"].get("T", []):
                out.append(name)
                break
    return out


def _vector_kernel(template: str, ty: str) -> tuple[str, int]:
    names = _forms(template, ty)
    calls = []
    for j, nm in enumerate(names):
        if template == "vec_binary":
            op = f"{nm}(o, a, b, NE);"
        elif template == "vec_scalar":
            op = f"{nm}(o, a, ({ty})0.75f, NE);"
        elif template == "vec_unary":
            op = f"{nm}(o, a, NE);"
        else:
            op = f"{nm}(o, a, s, NE, 16);"
        calls.append(f"  if (taskId == {j} % taskDim) {{ {op} __memcpy(out + {j} * NE, o, NE * sizeof({ty}), NRAM2GDRAM); }}")
    src = f"""#include <bang.h>
#define NE {NE}
__nram__ {ty} a[NE];
__nram__ {ty} b[NE];
__nram__ {ty} s[16];
__nram__ {ty} o[NE];
__mlu_global__ void fam({ty} *x, {ty} *y, {ty} *out) {{
  __memcpy(a, x, NE * sizeof({ty}), GDRAM2NRAM);
  __memcpy(b, y, NE * sizeof({ty}), GDRAM2NRAM);
  __memcpy(s, y, 16 * sizeof({ty}), GDRAM2NRAM);
{chr(10).join(calls)}
}}
"""
    return src, len(names)


@pytest.mark.parametrize("template,ty", [("vec_binary", "float"), ("vec_scalar", "float"), ("vec_unary", "float"),
                                         ("vec_cycle", "float"), ("vec_binary", "half"), ("vec_unary", "half")])
def test_vector_family_from_descriptions(tmp_path, template, ty):
    src, n = _vector_kernel(template, ty)
    assert n >= 3
    dt = np.float32 if ty == "float" else np.float16
    r = _rng(1)
    x = r.uniform(-3, 3, NE).astype(dt)
    y = r.uniform(0.5, 3, NE).astype(dt)
    out = np.zeros(n * NE, dt)
    check_same(tmp_path, src, [x, y, out], f"{template}_{ty}")


def test_reduce_sum_per_chunk_and_full_reductions(tmp_path):
    src = """#include <bang.h>
__nram__ float a[256];
__nram__ float o[256];
__nram__ half h[256];
__nram__ half ho[256];
__mlu_global__ void red(float *x, float *out, half *hx, half *hout) {
  if (taskId != 3) return;
  __memcpy(a, x, 256 * 4, GDRAM2NRAM);
  __memcpy(o, x, 256 * 4, GDRAM2NRAM);
  __bang_reduce_sum(o, a, 200);              /* 7 chunks of 32 floats, the last one partial */
  __memcpy(out, o, 256 * 4, NRAM2GDRAM);
  __bang_argmax(o, a, 100);
  __memcpy(out + 256, o, 8, NRAM2GDRAM);
  __bang_min(o, a, 77);
  __memcpy(out + 258, o, 8, NRAM2GDRAM);
  __memcpy(h, hx, 256 * 2, GDRAM2NRAM);
  __bang_reduce_sum(ho, h, 256);             /* 64 halves per chunk */
  __memcpy(hout, ho, 256 * 2, NRAM2GDRAM);
}
"""
    r = _rng(2)
    check_same(tmp_path, src, [r.standard_normal(256).astype(np.float32), np.zeros(260, np.float32),
                               r.standard_normal(256).astype(np.float16), np.zeros(256, np.float16)], "red")


def test_pooling_layouts_strides_and_value_index(tmp_path):
    # HWC, C = 8, H = 7, W = 6; stride_width (2) before stride_height (1); 7-arg forms stride = kernel
    src = """#include <bang.h>
#define C 8
#define H 7
#define W 6
__nram__ float a[H * W * C];
__nram__ float o[H * W * C * 2];
__mlu_global__ void pool(float *x, float *out) {
  __memcpy(a, x, H * W * C * 4, GDRAM2NRAM);
  if (taskId == 0) { __bang_sumpool(o, a, C, H, W, 3, 2, 2, 1); __memcpy(out, o, 1000, NRAM2GDRAM); }
  if (taskId == 1) { __bang_avgpool(o, a, C, H, W, 2, 3, 1, 2); __memcpy(out + 250, o, 1000, NRAM2GDRAM); }
  if (taskId == 2) { __bang_maxpool(o, a, C, H, W, 2, 2); __memcpy(out + 500, o, 1000, NRAM2GDRAM); }
  if (taskId == 3) { __bang_minpool(o, a, C, H, W, 3, 3, 1, 1, 2, 1, 1, 1); __memcpy(out + 750, o, 1000, NRAM2GDRAM); }
  if (taskId == 4) { __bang_maxpool_value_index(o, a, C, H, W, 3, 2, 2, 2, 512); __memcpy(out + 1000, o, 1024, NRAM2GDRAM); }
}
"""
    r = _rng(3)
    check_same(tmp_path, src, [r.standard_normal(7 * 6 * 8).astype(np.float32), np.zeros(1256, np.float32)], "pool")


def test_matrix_mlp_matmul_conv_int8_fixed_point_and_float(tmp_path):
    src = """#include <bang.h>
#define MM 4
#define KK 32
#define NN 64
__nram__ int8_t a8[MM * KK];
__nram__ float af[MM * KK];
__nram__ float o[2048];
__nram__ float bias[NN];
__nram__ half oh[NN];
__nram__ int8_t im[5 * 5 * 16];
__wram__ int8_t w8[NN * KK];
__wram__ float wf[NN * KK];
__wram__ int8_t k8[8 * 3 * 3 * 16];
__nram__ float t[KK * NN];
__mlu_global__ void mat(int8_t *A, int8_t *B, float *Af, float *Bf, float *Bias, int8_t *Img, int8_t *Ker, float *out) {
  __memcpy(a8, A, MM * KK, GDRAM2NRAM);
  __memcpy(af, Af, MM * KK * 4, GDRAM2NRAM);
  __memcpy(w8, B, NN * KK, GDRAM2WRAM);
  __memcpy(wf, Bf, NN * KK * 4, GDRAM2WRAM);
  __memcpy(bias, Bias, NN * 4, GDRAM2NRAM);
  __memcpy(im, Img, 5 * 5 * 16, GDRAM2NRAM);
  __memcpy(k8, Ker, 8 * 3 * 3 * 16, GDRAM2WRAM);
  if (taskId == 0) { __bang_matmul(o, a8, w8, MM, KK, NN, -5); __memcpy(out, o, MM * NN * 4, NRAM2GDRAM); }
  if (taskId == 1) { __bang_matmul(o, af, wf, MM, KK, NN); __memcpy(out + 256, o, MM * NN * 4, NRAM2GDRAM); }
  if (taskId == 2) { __bang_mlp(o, a8, bias, w8, NN, KK, 3); __memcpy(out + 512, o, NN * 4, NRAM2GDRAM); }
  if (taskId == 3) { __bang_mlp(oh, a8, w8, NN, KK, -2); __memcpy(out + 576, oh, NN * 2, NRAM2GDRAM); }
  if (taskId == 4) { __bang_conv(o, im, k8, 16, 5, 5, 3, 3, 1, 2, 8, -3); __memcpy(out + 640, o, 3 * 2 * 8 * 4, NRAM2GDRAM); }
  if (taskId == 5) { __bang_transpose(t, af, MM, KK); __memcpy(out + 700, t, MM * KK * 4, NRAM2GDRAM); }
  // the float form without fix_position: not scaled (session 26: it detensorized to 0 * sum)
  if (taskId == 6) { __bang_conv(o, af, wf, 16, 2, 4, 1, 1, 1, 1, 8); __memcpy(out + 830, o, 2 * 4 * 8 * 4, NRAM2GDRAM); }
}
"""
    r = _rng(4)
    i8 = lambda n: r.integers(-100, 100, n).astype(np.int8)  # noqa: E731
    args = [i8(4 * 32), i8(64 * 32), r.standard_normal(128).astype(np.float32),
            r.standard_normal(64 * 32).astype(np.float32), r.standard_normal(64).astype(np.float32),
            i8(5 * 5 * 16), i8(8 * 3 * 3 * 16), np.zeros(900, np.float32)]
    check_same(tmp_path, src, args, "mat")


def test_memcpy_2d_3d_async_fills_and_conversions(tmp_path):
    src = """#include <bang.h>
__nram__ float a[512];
__nram__ float o[512];
__nram__ half h[512];
__nram__ int n32[64];
__mlu_global__ void mv(float *x, float *out, half *hout, int *iout) {
  if (taskId == 0) {
    __memcpy(a, x, 512 * 4, GDRAM2NRAM);
    __bang_write_zero(o, 512);
    __memcpy(o, a + 1, 12, NRAM2NRAM, 40, 24, 6);            /* 7 segments of 12 bytes */
    __memcpy(out, o, 512 * 4, NRAM2GDRAM);
  }
  if (taskId == 1) {
    __memcpy(a, x, 512 * 4, GDRAM2NRAM);
    __bang_write_value(o, 512, 2.5f);
    __memcpy(o, a, 8, NRAM2NRAM, 16, 2, 48, 1, 8, 3, 40, 1);   /* 3-D: 3x2 dst grid <- 4x2 src... same count */
    __memcpy_async(out + 512, o, 512 * 4, NRAM2GDRAM);
    __sync_io();
  }
  if (taskId == 2) {
    __memcpy(a, x, 512 * 4, GDRAM2NRAM);
    __bang_float2half_rd(h, a, 512);
    __memcpy(hout, h, 512 * 2, NRAM2GDRAM);
    __memset_nram(n32, 64, 7);
    __nramset(n32 + 8, 4, -3, 32, 3);
    __memcpy(iout, n32, 64 * 4, NRAM2GDRAM);
  }
}
"""
    r = _rng(5)
    check_same(tmp_path, src, [(r.standard_normal(512) * 1000).astype(np.float32), np.zeros(1024, np.float32),
                               np.zeros(512, np.float16), np.zeros(64, np.int32)], "mv")


def test_scalar_math_calls_inside_expressions(tmp_path):
    """__cn_scalar_* return a value: expanded where they stand (expression, condition), the
    argument evaluated once and converted to the parameter type, as the call would."""
    src = """#include <bang.h>
__nram__ float a[64];
__nram__ half h[64];
__mlu_global__ void sc(float *x, float *out, half *hout) {
  if (taskId == 0) {
    __memcpy(a, x, 64 * 4, GDRAM2NRAM);
    for (int i = 0; i < 64; ++i) {
      h[i] = __cn_scalar_sin_f16((half)a[i]) + __cn_scalar_cos_f16((half)a[i]);
      a[i] = __cn_scalar_cos_f32(a[i]) * 2.0f + __cn_scalar_sin_f32(a[i] + 1.0f);
      if (__cn_scalar_sin_f32(a[i]) > 0.5f) a[i] = -a[i];
    }
    __memcpy(out, a, 64 * 4, NRAM2GDRAM);
    __memcpy(hout, h, 64 * 2, NRAM2GDRAM);
  }
}
"""
    r = _rng(7)
    text = check_same(tmp_path, src, [(r.standard_normal(64) * 4).astype(np.float32), np.zeros(64, np.float32),
                                      np.zeros(64, np.float16)], "sc")
    assert "__cn_scalar_" not in text and "sinf" in text


def test_value_returning_instruction_stored_in_a_variable(tmp_path):
    """``T v = __bang_sum(...);`` and ``x = __bang_sum(...);``: the expansion stores the result."""
    src = """#include <bang.h>
__nram__ float a[64];
__nram__ half h[128];
__mlu_global__ void sm(float *x, half *hx, float *out) {
  if (taskId == 0) {
    __memcpy(a, x, 64 * 4, GDRAM2NRAM);
    __memcpy(h, hx, 128 * 2, GDRAM2NRAM);
    float s = __bang_sum(a, 64);
    out[0] = s;
    out[1] = __bang_sum(a + 8, 32);
    half hs = __bang_sum(h, 128);
    out[2] = (float) hs;
  }
}
"""
    r = _rng(9)
    text = check_same(tmp_path, src, [r.standard_normal(64).astype(np.float32),
                                      r.standard_normal(128).astype(np.float16), np.zeros(4, np.float32)], "sm")
    assert "__bang_sum" not in text


# ------------------------------------------------------------------------------ refusals
def _refused(src: str):
    prog = parse_source(src, "bang", "r.mlu")
    with pytest.raises(PassRefused) as exc:
        run_pass("detensorize", prog)
    return exc.value.diagnostics[0].code


def test_refuses_intrinsic_without_reference_body():
    assert _refused("__nram__ float a[64];\n__mlu_global__ void k(float *x) { __bang_frobnicate(a, a, 64); }") \
        == "XP-DETENSOR-001"


def test_refuses_intrinsic_inside_an_expression():
    assert _refused("__nram__ float a[64];\n__mlu_global__ void k(float *x) { x[0] = 1.0f + __bang_sum(a, 64); }") \
        == "XP-DETENSOR-002"
    assert _refused("__nram__ float a[64];\n__mlu_global__ void k(float *x) { const float s = __bang_sum(a, 64); "
                    "x[0] = s; }") == "XP-DETENSOR-002"


def test_refuses_value_builtin_without_plain_c_body():
    # __is_dram asks the virtual device for the pointer's memory space: a clear refusal
    # instead of an output that does not build
    assert _refused("__mlu_global__ void k(float *x) { if (__is_dram(x)) x[0] = 1.0f; }") == "XP-DETENSOR-004"


def test_refuses_undeducible_template_argument():
    assert _refused("__mlu_global__ void k(void *p) { __bang_add(p, p, p, 64); }") == "XP-DETENSOR-003"


def test_refuses_body_without_plain_c_lowering():
    src = "__mlu_shared__ float s[64];\n__mlu_global__ void k(float *x) { __memcpy(s, s, 64, SRAM2SRAM, 1); }"
    assert _refused(src) == "XP-DETENSOR-004"


def test_simd_only_for_provably_independent_operands():
    src = """__nram__ float a[64];
__nram__ float b[64];
__mlu_global__ void k(float *x) {
  __bang_add(a, a, b, 64);
  __bang_add(a + 1, a, b, 32);
}
"""
    out = run_pass("detensorize", parse_source(src, "bang", "s.mlu"))
    text = _emit(out)
    assert text.count("#pragma omp simd") == 1
