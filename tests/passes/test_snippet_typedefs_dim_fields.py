"""Regressions: a pass re-parsing a snippet with a library typedef name (canon.parse_expr of
``(size_t) N``), and task_recovery{form=flat} on a cnrtDim3_t set field by field."""
from __future__ import annotations

from pathlib import Path

import pytest
from pycparser import c_ast

from passes import canon  # noqa: F401  (registers the pass)
from passes.lift import task_recovery
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source

BANG = Path(__file__).resolve().parents[1] / "realworld" / "bang"


def test_snippet_with_library_typedef_names_parses_as_casts():
    e = canon.parse_expr("(size_t) N * sizeof(int64_t) + (half) x")
    assert isinstance(e.left.left, c_ast.Cast) and e.left.left.to_type.type.type.names == ["size_t"]
    assert canon.ids_in(e) == {"N", "x"}


KERNEL = """
#include <bang.h>
__mlu_global__ void k(float *y, const float *x, int n) {
  for (int i = taskId; i < n; i += taskDim) y[i] = x[i] * 2.0f;
}
void host(float *y, const float *x, int n) {
  cnrtQueue_t queue;
  cnrtDim3_t dim;
  dim.x = 4;
  dim.y = 1;
  dim.z = 1;
  %s
  k<<<dim, CNRT_FUNC_TYPE_UNION1, queue>>>(y, x, n);
}
"""


def test_dim_set_field_by_field_is_a_constant_launch():
    p = parse_source(KERNEL % "", "bang", "t.mlu", entry="host")
    out = run_pass("task_recovery", p, form="flat")
    assert out is not None


def test_dim_written_again_is_read_at_the_launch():
    # (refused with XP-TASK-012 before issue 17) a field written twice: the runner receives
    # the dimension's fields as the launch reads them
    import platforms

    p = parse_source(KERNEL % "dim.x = n;", "bang", "t.mlu", entry="host")
    out = run_pass("task_recovery", p, form="flat")
    text = platforms.module("vnni", "backend").emit(out)
    assert "k(y, x, n, (int) dim.x, (int) dim.y, (int) dim.z)" in text
    assert "taskId < xp_dim_x * xp_dim_y * xp_dim_z" in text


def test_function_type_written_again_is_refused():
    p = parse_source(KERNEL.replace("CNRT_FUNC_TYPE_UNION1", "kt").replace(
        "cnrtDim3_t dim;", "cnrtDim3_t dim;\n  cnrtFunctionType_t kt = CNRT_FUNC_TYPE_UNION1;") % "kt = CNRT_FUNC_TYPE_BLOCK;",
        "bang", "t.mlu", entry="host")
    with pytest.raises(PassRefused) as exc:
        run_pass("task_recovery", p, form="flat")
    assert any(d.code == "XP-TASK-012" for d in exc.value.diagnostics)
