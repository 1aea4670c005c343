"""Issue 14 item 5 (leniency): standard-library names used without their header get warning
XP1152 naming the name and the header; the virtual device's build and translated outputs
include the header (platforms/common/std_headers.toml, one table)."""
from __future__ import annotations

import numpy as np

from platforms.common.std_headers import complete, missing
from xpiler.argspec import parse_arg_specs
from xpiler.parse import parse_source
from xpiler.run import run_kernel
from xpiler.translate import translate

VNNI = """\
extern "C" void act(const float *x, float *y, int n) {
  for (int i = 0; i < n; ++i)
    y[i] = tanh(x[i]) * (float)M_PI + sqrtf(fabsf(x[i])) + (x[i] > FLT_MAX ? 1.0f : 0.0f);
}
"""

CUDA = """\
__global__ void act(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = tanhf(x[i]) + (x[i] > FLT_MAX ? 1.0f : 0.0f) + (float)M_PI;
}
"""


def _want(x):
    return (np.tanh(x.astype(np.float64)) * np.float32(np.pi) + np.sqrt(np.abs(x))).astype(np.float32)


def test_parse_warns_with_name_and_header():
    p = parse_source(VNNI, "vnni", "act.cpp")
    found = [(d.code, d.severity, d.coord.line, d.coord.col, d.message) for d in p.diagnostics
             if d.code == "XP1152"]
    assert [f[:4] for f in found] == [("XP1152", "warning", 3, 12), ("XP1152", "warning", 3, 68)]
    assert "'tanh'" in found[0][4] and "<math.h>" in found[0][4]
    assert "'FLT_MAX'" in found[1][4] and "<float.h>" in found[1][4]


def test_vnni_source_without_headers_runs():
    x = np.linspace(-2, 2, 16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    run_kernel("test_std_headers/act.cpp", source=VNNI, args=[x, y, 16])
    np.testing.assert_allclose(y, _want(x), rtol=1e-5)


def test_cuda_platform_implies_math_but_not_float_h():
    # nvcc's implicit cuda_runtime.h brings math.h (tanhf, M_PI), not float.h (FLT_MAX)
    assert [(m.name, m.header) for m in missing(CUDA, "cuda")] == [("FLT_MAX", "float.h")]
    assert [(m.name, m.header) for m in missing(CUDA, "vnni")] == [("tanhf", "math.h"), ("FLT_MAX", "float.h")]


def test_includes_twins_definitions_and_qualified_names_count():
    assert missing("#include <math.h>\nfloat f(float x) { return tanhf(x); }\n", "vnni") == []
    assert missing("#include <cmath>\nfloat f(float x) { return tanhf(x); }\n", "vnni") == []
    assert missing("#define M_PI 3.14f\nfloat f() { return M_PI; }\n", "vnni") == []
    assert missing("static float sqrtf(float x) { return x; }\nfloat f() { return sqrtf(2.f); }\n", "vnni") == []
    assert missing("#include <cmath>\nfloat f(float x) { return std::sqrt(x); } // printf\n", "vnni") == []
    assert missing('const char *s = "printf assert";\n', "vnni") == []


def test_complete_keeps_lines():
    text, found = complete("int f() {\n  return INT_MAX;\n}\n", "vnni")
    assert [m.header for m in found] == ["limits.h"]
    assert text.startswith("#include <limits.h>\n#line 1\n")


def test_translated_output_includes_the_header(tmp_path):
    src = tmp_path / "act.cu"
    src.write_text(CUDA)
    out = tmp_path / "act.cpp"
    report = translate(str(src), "vnni", str(out), arg_specs=parse_arg_specs(
        ["n=64", "x=random:64", "y=zeros:64"]))
    assert report.status == "verified", [(s.name, s.status, s.message) for s in report.steps]
    text = out.read_text()
    assert "#include <float.h>" in text
    assert missing(text, "vnni") == []
