"""task_bind: staged windows are built from the dependence analysis, which names the values
local copies resolve to (``int c = j0;`` -> the host loop variable ``j0``); the kernel must
receive those host scalars too (sgemm_packed.cpp -> bang did not build without them)."""
from __future__ import annotations

import re

from passes.lower import task_bind  # noqa: F401  (registers the pass)
from xpiler.argspec import parse_arg_specs
from xpiler.translate import translate

PASSES = (task_bind,)   # imported to register it

SRC = """extern "C" void rows(const float *x, float *y, int n) {
  for (int i = 0; i < n; ++i) y[i] = x[i];
  for (int j0 = 1; j0 < 4; ++j0) {       /* row j0 reads row j0 - 1: sequential on the host */
    int c = j0;
    for (int i = 0; i < n; ++i) y[c * n + i] = x[c * n + i] * 0.5f + y[(c - 1) * n + i];
  }
}
"""


def test_window_of_a_copied_host_loop_variable_builds_and_verifies(tmp_path):
    src = tmp_path / "rows.cpp"
    src.write_text(SRC)
    out = tmp_path / "rows.mlu"
    report = translate(str(src), "bang", str(out),
                       arg_specs=parse_arg_specs(("x=random:400", "y=zeros:400", "n=100")))
    assert report.status == "verified", (report.message, [s.message for s in report.steps])
    text = out.read_text()
    kernels = re.findall(r"__mlu_global__ void \w+\(([^)]*)\)", text)
    assert any("int j0" in k for k in kernels), kernels
