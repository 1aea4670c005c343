"""passes/lift/pointer_select.py: a select between two pointers into one buffer becomes the buffer
plus a selected offset (BANG ping-pong buffers), inside task_recovery{form=flat}; legality
(what is left alone) and the flat form of a ping-pong kernel verified against the emulator."""
from __future__ import annotations

import numpy as np
import pytest
from pycparser import c_ast, c_generator

from passes.base import run_pass
from passes.lift.pointer_select import file_variables, fold_pointer_selects
import platforms
from xpiler.parse import parse_source
from xpiler.run import run_kernel
from xpiler.translate import load_passes

load_passes()

FN = """
int g;
void f(float *x, int n) {
  float buf[64];
  float *ping = buf;
  float *pong = buf + 32;
  const int half_n = n / 2;
  for (int i = 0; i < n; ++i) {
    float *cur = (i % 2 == 0) ? ping : pong;
    cur[0] = x[i];
  }
}
"""


def _fold(src: str):
    ast = parse_source(src, "vnni", "f.cpp").ast
    fd = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef))
    n = fold_pointer_selects(fd, file_variables(ast))
    return n, c_generator.CGenerator().visit(fd).replace(" ", "").replace("(", "").replace(")", "")


def test_ping_pong_select_becomes_one_buffer_and_an_offset():
    n, text = _fold(FN)
    assert n == 1
    assert "float*cur=buf+i%2==0?0:32;" in text, text


@pytest.mark.parametrize("change", [
    ("float *pong = buf + 32;", "float *pong = buf + 32;\n  pong = buf + 16;"),        # pointer written
    ("float *pong = buf + 32;", "float other[64];\n  float *pong = other;"),           # two buffers
    ("float *pong = buf + 32;", "int k = 32;\n  float *pong = buf + k;\n  k = 0;"),    # offset written
    ("float *pong = buf + 32;", "float *pong = buf + g;"),                             # file variable
    ("float *pong = buf + 32;", "float *pong = buf + (int) x[0];"),                    # memory read
    ("float *pong = buf + 32;", "float *pong = (float *) ((char *) buf + 4);"),        # reinterpretation
    ("float *pong = buf + 32;", "float *pong = buf + 32;\n  float **pp = &pong;"),     # address taken
    ("float buf[64];", "float buf[64];\n  {\n    float buf[8];\n    buf[0] = 1.0f;\n  }"),  # two decls
])
def test_selects_it_cannot_prove_are_left_alone(change):
    src = FN.replace(*change)
    assert src != FN
    n, text = _fold(src)
    assert n == 0 and "?ping:pong" in text, text


def test_nested_selects_and_offset_chains_fold():
    src = FN.replace("float *cur = (i % 2 == 0) ? ping : pong;",
                     "float *cur = (i % 3 == 0) ? ping + half_n : ((i % 3 == 1) ? pong - 1 : buf + 2);")
    n, text = _fold(src)
    assert n == 2, text
    assert "float*cur=buf+i%3==0?half_n:i%3==1?32-1:2;" in text, text


PINGPONG = """#include <bang.h>
#define TILE 64
__nram__ float nram[4 * TILE];
__mlu_func__ void load(float *a_n, float *b_n, const float *a, const float *b) {
  __memcpy(a_n, a, TILE * sizeof(float), GDRAM2NRAM);
  __memcpy(b_n, b, TILE * sizeof(float), GDRAM2NRAM);
}
__mlu_global__ void pp(const float *a, const float *b, float *c) {
  float *ping_a = nram;
  float *ping_b = nram + TILE;
  float *pong_a = nram + 2 * TILE;
  float *pong_b = nram + 3 * TILE;
  int start = taskId * 4 * TILE;
  load(ping_a, ping_b, a + start, b + start);
  for (int i = 0; i < 4; ++i) {
    float *cur_a = (i % 2 == 0) ? ping_a : pong_a;
    float *cur_b = (i % 2 == 0) ? ping_b : pong_b;
    if (i + 1 < 4)
      load((i % 2 == 0) ? pong_a : ping_a, (i % 2 == 0) ? pong_b : ping_b,
           a + start + (i + 1) * TILE, b + start + (i + 1) * TILE);
    __bang_add(cur_a, cur_a, cur_b, TILE);
    __memcpy(c + start + i * TILE, cur_a, TILE * sizeof(float), NRAM2GDRAM);
  }
}
"""


def test_flat_form_folds_ping_pong_buffers_and_loop_bind_traces_them(tmp_path):
    prog = parse_source(PINGPONG, "bang", str(tmp_path / "pp.mlu"))
    flat = run_pass("task_recovery", run_pass("detensorize", prog, typed=True), form="flat")
    assert flat.facts["statistics"]["task_recovery"]["pointer_selects_folded"] == 4
    text = platforms.module("vnni", "backend").emit(flat)
    assert "? ping_a : pong_a" not in text and "nram + (" in text
    n = 16 * 4 * 64
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    want = [a, b, np.zeros(n, np.float32)]
    got = [a, b, np.zeros(n, np.float32)]
    run_kernel(tmp_path / "pp.mlu", args=want, source=PINGPONG, program=prog)
    path = tmp_path / "pp.cpp"
    path.write_text(text)
    run_kernel(path, args=got, source=text, program=parse_source(text, "vnni", str(path)))
    np.testing.assert_array_equal(got[2], want[2])
    # the lowering traces every store to the task-private buffer (no XP-BIND-003)
    lowered = run_pass("loop_bind", run_pass("inline", flat), to="cuda")
    assert any(k.name.startswith("pp") for k in lowered.kernels)


def test_const_buffers_fold_only_through_const_views():
    src = """
void f(const float *x, float *y, int n) {
  const float *p = x;
  const float *q = x + 4;
  float *r = (float *) x;
  float *s = (float *) x + 4;
  for (int i = 0; i < n; ++i) {
    const float *cur = (i % 2) ? p : q;
    float *bad = (i % 2) ? r : s;
    y[i] = cur[0] + bad[0];
  }
}
"""
    n, text = _fold(src)
    assert n == 1, text
    assert "constfloat*cur=x+i%2?0:4;" in text and "float*bad=i%2?r:s;" in text, text


BYTES = """
void f(float *x, int n, int cols) {
  char pool[4096];
  const int row_bytes = cols * 4;
  float *ping = (float *) pool;
  float *pong = (float *) (pool + row_bytes);
  for (int i = 0; i < n; ++i) {
    float *cur = (i % 2 == 0) ? ping : pong;
    float *nxt = (i % 2 == 0) ? pong + 1 : ping + 1;
    cur[0] = x[i];
    nxt[0] = x[i];
  }
}
"""


def test_views_of_a_byte_pool_fold_to_one_view_and_a_byte_offset():
    # ``char nram_buffer[]`` carved into float rows by byte offsets (mlu-ops style): the select
    # becomes the same float view of the pool at a selected byte offset
    n, text = _fold(BYTES)
    assert n == 2
    assert "float*cur=float*pool+i%2==0?0:row_bytes;" in text, text
    assert "float*nxt=float*pool+i%2==0?row_bytes+long1*sizeoffloat:long1*sizeoffloat;" in text, text
    # views of another type in the two arms are left alone
    n, _ = _fold(BYTES.replace("float *pong = (float *) (pool + row_bytes);",
                               "float *pong = (float *) (int *) (pool + row_bytes);"))
    assert n == 0
