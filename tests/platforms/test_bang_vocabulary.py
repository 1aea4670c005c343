"""Issue 17.1: the BANG vocabulary of real operator code.

* docs/bang-vocabulary.md is current and gives every name of the vocabulary a status (none unknown);
* a declared builtin (platforms/bang/intrinsics/declared.toml) builds in any position and stops
  the run with XP-BANG-DECL-001 naming it, only when it is called;
* __sramset and __sync_all_ipu_within_cluster in a UNION1 task;
* the BANG predefined macros (__MLU_NRAM_SIZE__ ...) are carried into a translated VNNI output.
(The described element-wise builtins are checked against numpy in test_bang_intrinsics.py.)
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _bang_harness as H  # noqa: E402

import platforms  # noqa: E402
from platforms.bang import emulate, intrinsics  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gen_bang_vocabulary.py"
sys.path.insert(0, str(ROOT / "tools"))
import gen_bang_vocabulary as V  # noqa: E402


def test_coverage_table_is_current():
    r = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_every_vocabulary_name_has_a_status():
    rows = V.statuses()
    assert len(rows) == 141 and len({r["name"] for r in rows}) == 141
    assert [r["name"] for r in rows if r["status"] == "unknown"] == []
    table = (ROOT / "docs" / "bang-vocabulary.md").read_text()
    for r in rows:
        assert f"| `{r['name']}` | {r['uses']} | {r['status']} |" in table


def test_declared_and_described_are_disjoint_and_documented():
    described = set(intrinsics.names())
    decl = intrinsics.declared()
    assert decl and not described & {d["name"] for d in decl}
    for d in decl:
        assert d["code"] == "XP-BANG-DECL-001" and d["question"].strip() and d["family"]
        assert d["name"] in intrinsics.refusal(d)
    header = intrinsics.GENERATED_HEADER.read_text()
    for d in decl:
        assert re.search(r"inline xpb::refused_t " + re.escape(d["name"]) + r"\(", header), d["name"]


DECLARED_SRC = r"""#include <bang.h>
__mlu_global__ void k_logic(float *out, const float *a, const float *b, int n, int call) {
  __nram__ float x[256];
  __nram__ float y[256];
  __memcpy(x, a, n * sizeof(float), GDRAM2NRAM);
  __memcpy(y, b, n * sizeof(float), GDRAM2NRAM);
  if (call == 1) __bang_and(x, x, y, n);
  if (call == 2) { int c = __bang_count(x, n); out[0] = c; }
  if (call == 3 && __bang_findfirst1(x, n)) out[0] = 1;
  __bang_band(x, x, y, n);
  __memcpy(out + 1, x + 1, (n - 1) * sizeof(float), NRAM2GDRAM);
}
"""


@pytest.fixture(scope="module")
def declared_so():
    return H.build(DECLARED_SRC, "declared.mlu", strict=True)


@pytest.mark.parametrize("call, name", [(1, "__bang_and"), (2, "__bang_count"), (3, "__bang_findfirst1")])
def test_declared_builtin_is_refused_when_called(declared_so, call, name):
    a, b = np.ones(256, np.float32), np.ones(256, np.float32)
    res = H.run(declared_so, [H.Kernel("k_logic", [np.zeros(256, np.float32), a, b, 256, call], dim=(1, 1, 1), ktype=1)],
                strict=True)
    assert res.returncode != 0
    err = res.error
    assert err and err["kind"] == "runtime", res.stderr[-2000:]
    assert err["message"].startswith(f"XP-BANG-DECL-001: '{name}' is declared but not emulated"), err
    assert "declared.toml" in err["message"] and "NOT FOUND" in err["message"]


def test_declared_builtin_not_called_runs(declared_so):
    a = np.arange(256, dtype=np.float32)
    res = H.run(declared_so, [H.Kernel("k_logic", [np.zeros(256, np.float32), a, a, 256, 0], dim=(1, 1, 1), ktype=1)],
                strict=True).ok()
    np.testing.assert_array_equal(res.outputs[0][0][1:], a[1:])


UNION_SRC = r"""#include <bang.h>
__mlu_shared__ int shared_vals[64];
__mlu_global__ void k_union(int *out) {
  if (__is_mpu()) return;
  if (coreId == 0) __sramset(shared_vals, 64, -3);
  __sync_cluster();
  int before = shared_vals[coreId];
  __sync_all_ipu_within_cluster();
  shared_vals[coreId] = coreId + 10 * clusterId;
  __sync_all_ipu_within_cluster();
  out[taskId * 3] = before;
  out[taskId * 3 + 1] = shared_vals[(coreId + 1) % coreDim];
  out[taskId * 3 + 2] = clusterId;
}
"""


def test_sramset_and_sync_all_ipu_within_cluster():
    so = H.build(UNION_SRC, "union.mlu", strict=True)
    out = np.zeros(24, np.int32)
    res = H.run(so, [H.Kernel("k_union", [out], dim=(8, 1, 1), ktype=4)], strict=True).ok()
    got = res.outputs[0][0].reshape(8, 3)
    assert (got[:, 0] == -3).all(), got           # the fill is seen by every core after __sync_cluster
    for task in range(8):                         # each core sees its neighbour's write after the sync
        assert got[task, 1] == (task % 4 + 1) % 4 + 10 * got[task, 2], got


@pytest.mark.parametrize("name", ["mtp_372", "mtp_592", "mtp_290"])
def test_carried_macro_values_are_the_virtual_devices(name):
    prof = platforms.profile("bang", name)
    unit = emulate.prepare("", "x.mlu", strict=False, profile=prof)
    backend = platforms.module("bang", "backend")
    for macro, value in backend.predefined_macros(prof).items():
        if macro != "__BANG__":
            assert f"#define {macro} {value}\n" in unit
    text = "char b[__MLU_NRAM_SIZE__ * 1024];\n#define __MLU_SRAM_SIZE__ 1\nint s = __MLU_SRAM_SIZE__;"
    assert backend.carried_macros(text, prof) == [f"#define __MLU_NRAM_SIZE__ {prof['nram_bytes'] // 1024}"]


NRAM_SRC = r"""#include <bang.h>
#define MAX_NRAM (__MLU_NRAM_SIZE__ * 1024 / 2)
__mlu_global__ void k_scale(float *out, const float *in, int n) {
  __nram__ char buf[__MLU_NRAM_SIZE__ * 1024 / 2];
  float *x = (float *)buf;
  int chunk = MAX_NRAM / sizeof(float) / 2;
  for (int s = 0; s < n; s += chunk) {
    int m = n - s < chunk ? n - s : chunk;
    __memcpy(x, in + s, m * sizeof(float), GDRAM2NRAM);
    __bang_mul_scalar(x, x, 2.0f, m);
    __memcpy(out + s, x, m * sizeof(float), NRAM2GDRAM);
  }
}
"""


def test_predefined_macros_are_carried_into_a_vnni_output(tmp_path):
    src = tmp_path / "k.mlu"
    src.write_text(NRAM_SRC)
    out = tmp_path / "k.cpp"
    r = subprocess.run([sys.executable, "-m", "xpiler", "translate", str(src), "--to", "vnni", "-o", str(out),
                        "--arg", "n=1000", "--arg", "out=zeros:1000", "--arg", "in=random:1000"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    text = out.read_text()
    assert "#define __MLU_NRAM_SIZE__ 768\n" in text
    assert "__MLU_WRAM_SIZE__" not in text and "__BANG_ARCH__" not in text   # only what the output names
