"""Unicode whitespace (a no-break space pasted into code, as in mmcv's nms_utils.hpp) and
``__mlu_func__ inline``: what clang/cncc accepts must parse and run.

clang treats U+00A0 and the other Unicode spaces of ``UNICODE_WHITESPACE`` as whitespace outside
literals (``-Wunicode-whitespace``, an extension warning); g++ and pycparser refuse them. The
front-end (``platforms/common/preprocess.py``) and the BANG virtual device's ``prepare()`` turn
them into spaces, one character for one, so coordinates do not move; string and character
literals keep them.
"""
from __future__ import annotations

import numpy as np
import pytest

from platforms.bang import emulate
from platforms.common.preprocess import UNICODE_WHITESPACE, preprocess, unicode_whitespace_to_spaces
from xpiler.ir.errors import SourceError
from xpiler.parse import parse_source
from xpiler.run import run_kernel

NBSP = "\u00a0"

BANG_SRC = f"""#include <bang.h>
// comment with a no-break space:{NBSP}here
template <typename T>
__mlu_func__ inline T twice(T a) {{   /* block{NBSP}comment */
  return a +{NBSP}a;
}}
__mlu_global__ void k(float *x,{NBSP}float *y,{NBSP}int n) {{
  __nram__ float buf[256];
  if (taskId != 0) return;
  __memcpy(buf,{NBSP}x, n * sizeof(float), GDRAM2NRAM);
  __bang_mul_scalar(buf, buf,{NBSP}twice(1.5f), n);
  __memcpy(y, buf, n * sizeof(float),\u3000NRAM2GDRAM);
}}
"""


def test_clang_whitespace_set():
    # the set clang 18 treats as whitespace (checked with libclang); U+200B and U+FEFF are not in it
    assert NBSP in UNICODE_WHITESPACE and "\u3000" in UNICODE_WHITESPACE and "\u2009" in UNICODE_WHITESPACE
    assert "\u200b" not in UNICODE_WHITESPACE and "\ufeff" not in UNICODE_WHITESPACE
    assert len(UNICODE_WHITESPACE) == 20


def test_set_is_what_libclang_says():
    ci = pytest.importorskip("clang.cindex")
    index = ci.Index.create()
    for code in [*map(ord, UNICODE_WHITESPACE), 0x200B, 0xFEFF]:
        src = f"int f(int a, int b) {{ return a +{chr(code)}b; }}\n"
        tu = index.parse("t.cpp", args=["-std=c++17"], unsaved_files=[("t.cpp", src)])
        diags = [str(d) for d in tu.diagnostics]
        as_space = bool(diags) and all("treating Unicode character as whitespace" in d for d in diags)
        assert as_space == (chr(code) in UNICODE_WHITESPACE), (hex(code), diags)


def test_replacement_keeps_literals_and_length():
    text = f'int a ={NBSP}1; const char *s = "x{NBSP}y"; char c = \'{NBSP}\'; // c{NBSP}\nint b;'
    out = unicode_whitespace_to_spaces(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert out.startswith("int a = 1;")
    assert f'"x{NBSP}y"' in out and f"'{NBSP}'" in out        # literals untouched
    assert "// c \n" in out
    assert unicode_whitespace_to_spaces("int a;") == "int a;"


def test_preprocess_blanks_unicode_spaces_in_code_and_defines():
    pp = preprocess(f"#define TWO{NBSP}(1 +{NBSP}1)\nint f(int a,{NBSP}int b) {{ return a; }}\n", "t.cu")
    assert NBSP not in pp.text
    assert pp.defines["TWO"].body == "(1 + 1)"


@pytest.mark.parametrize("platform,src", [
    ("bang", BANG_SRC),
    ("cuda", f"__global__ void k(float *x,{NBSP}int n) {{ // c{NBSP}\n  x[threadIdx.x] *={NBSP}2.0f;\n}}\n"),
])
def test_front_end_reads_unicode_spaces(platform, src):
    try:
        prog = parse_source(src, platform, f"t.{'mlu' if platform == 'bang' else 'cu'}")
    except SourceError as e:
        pytest.fail(f"refused: {e}")
    assert [d for d in prog.diagnostics if d.code == "XP1100"] == []
    assert prog.entry is not None and prog.entry.name == "k"


def test_bang_prepare_and_run_with_unicode_spaces(tmp_path):
    unit = emulate.prepare(BANG_SRC, "t.mlu", strict=False, profile={})
    body = unit.split('#line 1 "t.mlu"', 1)[1]
    assert "// comment with a no-break space: here" in body and NBSP not in body
    path = tmp_path / "t.mlu"
    path.write_text(BANG_SRC)
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    run_kernel(path, args=[x, y, 64], launch={"clusters": 1, "cores": 1, "type": "block"})
    np.testing.assert_array_equal(y, x * 3.0)


@pytest.mark.parametrize("platform,head", [("cuda", ""), ("hip", "#include <hip/hip_runtime.h>\n")])
def test_gpu_sources_with_unicode_spaces_build_and_run(tmp_path, platform, head):
    src = head + f"__global__ void k(float *a,{NBSP}int n) {{\n  int i = threadIdx.x;{NBSP}if (i < n) a[i] = 2.0f * i;\n}}\n"
    path = tmp_path / f"k.{'cu' if platform == 'cuda' else 'hip'}"
    path.write_text(src)
    a = np.zeros(8, np.float32)
    run_kernel(path, args=[a, 8], launch={"grid": (1, 1, 1), "block": (8, 1, 1)})
    np.testing.assert_array_equal(a, 2.0 * np.arange(8, dtype=np.float32))
