"""passes/analysis/affine/__init__.py dependence test: running counters (a staging count reset by a flush)
are bounded by their loop's iteration number (``Access.facts``), and a bound read from a
local of the tested loop is per-iteration."""
from __future__ import annotations

from passes.analysis import affine
from xpiler.parse import parse_source


def _info(body: str, params: str = "const float* x, const int* idx, float* out, int n"):
    src = f'extern "C" void k({params}) {{\n{body}\n}}\n'
    return affine.analyze(parse_source(src, "vnni", "<test>.cpp"))


def _loop(info, var):
    return next(lp for lp in info.loops if lp.var == var)


GATHER = """
  for (int t = 0; t < 4; ++t) {
    int start = t * 16;
    int staged = 0;
    for (int i = 0; i < 16; ++i) {
      %s
      if (staged == 8 || i == 15) {
        for (int e = 0; e < staged * 4; ++e)
          out[(start + i + 1 - staged) * 4 + e] = x[e];
        staged = %s;
      }
    }
  }"""


def test_flushed_staging_counter_makes_the_task_loop_parallel():
    info = _info(GATHER % ("++staged;", "0"))
    acc = next(a for a in info.accesses if a.buffer == "out")
    assert len(acc.facts) == 2
    assert affine.parallel(info, _loop(info, "t")).parallel
    assert not affine.parallel(info, _loop(info, "i")).parallel      # staged is carried


def test_counter_incremented_twice_per_iteration_is_not_bounded():
    # staged may reach 2 * (i + 1): the flush could start before the task's rows
    info = _info(GATHER % ("++staged; staged++;", "0"))
    assert all(not a.facts for a in info.accesses)
    assert not affine.parallel(info, _loop(info, "t")).parallel


def test_counter_incremented_in_a_nested_loop_or_reset_to_a_variable_is_not_bounded():
    nested = _info(GATHER % ("for (int r = 0; r < 2; ++r) ++staged;", "0"))
    assert all(not a.facts for a in nested.accesses)
    assert not affine.parallel(nested, _loop(nested, "t")).parallel
    reset = _info(GATHER % ("++staged;", "idx[i]"))
    assert all(not a.facts for a in reset.accesses)
    assert not affine.parallel(reset, _loop(reset, "t")).parallel


def test_counter_reset_to_a_larger_literal_widens_the_bound():
    # resets to 3: staged <= i + 4, which lets the flush reach the previous task's rows
    info = _info(GATHER % ("++staged;", "3"))
    acc = next(a for a in info.accesses if a.buffer == "out")
    assert ("<=", acc.facts[1][1], ("+", ("-", ("v", _loop(info, "i").uid), ("c", 0)), ("c", 4))) \
        == acc.facts[1]
    assert not affine.parallel(info, _loop(info, "t")).parallel


def test_inner_loop_bound_read_from_a_local_of_the_iteration_is_private():
    # j runs from idx[t]: two tasks may write the same element (idx[t1] + t1 == idx[t2] + t2)
    info = _info("""
  for (int t = 0; t < 4; ++t) {
    int b = idx[t];
    for (int j = b; j < b + 1; ++j) out[j + t] = x[t];
  }""")
    assert not affine.parallel(info, _loop(info, "t")).parallel


# -- one Z3 symbol per local must mean one value: what was recorded from a local's value
# -- before it changes no longer speaks about it afterwards

def test_guard_on_a_local_assigned_afterwards_no_longer_holds():
    # every task whose idx[t] == t writes out[0]: the guard c == t is stale after c = 0
    info = _info("""
  for (int t = 0; t < 4; ++t) {
    int c = idx[t];
    if (c == t) { c = 0; out[c] = x[t]; }
  }""")
    assert not affine.parallel(info, _loop(info, "t")).parallel


def test_guard_on_a_local_a_later_loop_writes_no_longer_holds():
    # the second iteration of j writes out[0] in every task that took the branch
    info = _info("""
  for (int t = 0; t < 4; ++t) {
    int c = idx[t];
    if (c == t)
      for (int j = 0; j < 2; ++j) { out[c] = x[j]; c = 0; }
  }""")
    assert not affine.parallel(info, _loop(info, "t")).parallel


def test_copy_of_a_local_keeps_its_own_value_after_the_local_changes():
    # n is idx[t], s becomes t: out[n - s + t] is out[idx[t]], not out[t]
    info = _info("""
  for (int t = 0; t < 4; ++t) {
    int s = idx[t];
    int n = s;
    s = t;
    out[n - s + t] = x[t];
  }""")
    assert not affine.parallel(info, _loop(info, "t")).parallel
    # without the reassignment n - s + t is t: independent
    ok = _info("""
  for (int t = 0; t < 4; ++t) {
    int s = idx[t];
    int n = s;
    out[n - s + t] = x[t];
  }""")
    assert affine.parallel(ok, _loop(ok, "t")).parallel


def test_counter_incremented_in_a_nested_while_loop_is_not_bounded():
    info = _info(GATHER % ("int r = 0; while (r < 2) { ++staged; ++r; }", "0"))
    assert all(not a.facts for a in info.accesses)
    assert not affine.parallel(info, _loop(info, "t")).parallel


def test_loop_whose_bound_reads_a_local_it_assigns_is_not_canonical():
    info = _info("""
  for (int t = 0; t < 4; ++t) {
    int c = idx[t];
    for (int j = 0; j < c; ++j) { c = c - 1; out[t * 64 + j] = x[j]; }
  }""")
    j = _loop(info, "j")
    assert not j.canonical and "assigns" in j.reason
