"""The CLI end to end (in-process through main(), plus one real subprocess for start-up time)."""
import json
import subprocess
import sys
import time

import numpy as np
import pytest

from xpiler.cli import main

SAXPY = r"""
#include <immintrin.h>
extern "C" void saxpy(const float* x, float* y, float a, int n) {
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_fmadd_ps(_mm512_set1_ps(a), _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i));
    _mm512_storeu_ps(y + i, v);
  }
  for (; i < n; ++i) y[i] += a * x[i];
}
"""
SAXPY_SCALAR = r"""
extern "C" void saxpy(const float* x, float* y, float a, int n) {
  for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}
"""
SAXPY_WRONG = r"""
extern "C" void saxpy(const float* x, float* y, float a, int n) {
  for (int i = 0; i < n - 1; ++i) y[i] = a * x[i] + y[i];
}
"""


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("saxpy.cpp", SAXPY), ("scalar.cpp", SAXPY_SCALAR), ("wrong.cpp", SAXPY_WRONG)):
        (tmp_path / name).write_text(text)
        out[name] = tmp_path / name
    return out


def test_help_is_fast():
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "xpiler", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "run" in proc.stdout and "check" in proc.stdout
    assert time.perf_counter() - t0 < 2.0
    assert "tvm" not in subprocess.run(
        [sys.executable, "-c", "import sys, xpiler.cli; print(' '.join(sys.modules))"],
        capture_output=True, text=True).stdout.split()


def test_parse_json_schema(files, capsys):
    assert main(["parse", str(files["saxpy.cpp"]), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["platform"] == "vnni" and s["entry"] == {"name": "saxpy", "kind": "host"}
    assert [(p["name"], p["kind"], p["dtype"], p["role"]) for p in s["params"]] == [
        ("x", "pointer", "float32", "input"), ("y", "pointer", "float32", "inout"),
        ("a", "scalar", "float32", "scalar"), ("n", "scalar", "int32", "scalar")]
    for key in ("launch", "buffers", "intrinsics", "diagnostics", "allocations"):
        assert key in s


def test_run_saves_and_prints(files, tmp_path, capsys):
    x = np.arange(40, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    code = main(["run", str(files["saxpy.cpp"]), "--arg", f"x=@{tmp_path / 'x.npy'}", "--arg", "y=ones:40",
                 "--arg", "a=0.5", "--arg", "n=40", "--save", f"y={tmp_path / 'y.npy'}", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert res["entry"] == "saxpy" and res["platform"] == "vnni"
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), 1 + 0.5 * x)


def test_run_usage_errors_exit_2(files, capsys):
    assert main(["run", str(files["saxpy.cpp"]), "--arg", "x=random:8"]) == 2
    assert "no value for parameter 'y'" in capsys.readouterr().err
    assert main(["run", str(files["saxpy.cpp"]), "--arg", "q=1"]) == 2
    assert main(["run", str(files["saxpy.cpp"]), "--arg", "x=random:8:float64", "--arg", "y=zeros:8",
                 "--arg", "a=1", "--arg", "n=8"]) == 2
    assert "dtype float64" in capsys.readouterr().err


def test_check_agrees_and_disagrees(files, capsys):
    args = ["--arg", "x=random:37", "--arg", "y=random:37", "--arg", "a=1.5", "--arg", "n=37"]
    assert main(["check", str(files["saxpy.cpp"]), str(files["scalar.cpp"]), *args, "--seed", "3"]) == 0
    assert main(["check", str(files["saxpy.cpp"]), str(files["wrong.cpp"]), *args]) == 1


def test_check_json_reports_per_output(files, capsys):
    args = ["--arg", "x=random:37", "--arg", "y=random:37", "--arg", "a=1.5", "--arg", "n=37"]
    assert main(["check", str(files["saxpy.cpp"]), str(files["wrong.cpp"]), *args, "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    y = next(o for o in rep["outputs"] if o["name"] == "y")
    assert not rep["ok"] and y["mismatches"] == 1 and y["max_abs_err"] > 0


def test_missing_file_and_bad_source_exit_2(tmp_path, capsys):
    assert main(["parse", str(tmp_path / "nope.cu")]) == 2
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(float* a) { a[0] = ; }\n")
    assert main(["parse", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.cu:1:" in err and "error XP1" in err and "Traceback" not in err


def test_check_sizes_pointers_from_host_allocations(capsys):
    """A CUDA host wrapper's copies give each pointer's size as an expression of the scalars."""
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "xpiler" / "corpus" / "cuda" / "softmax_64_128.cu"
    assert main(["check", str(src), str(src), "--arg", "rows=64", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and {o["name"]: o["size"] for o in rep["outputs"]} == {"x": 64 * 128, "out": 64 * 128}


def test_platform_detection_ignores_comments():
    import platforms

    assert platforms.detect("k.cpp", "// was __bang_add\nextern \"C\" void f(float* a) {}") == "vnni"
    assert platforms.detect("k.cpp", "#include <hip/hip_runtime.h>\n") == "hip"
    assert platforms.detect("k.cu", "/* hipMalloc */ __global__ void k() {}") == "cuda"
    assert platforms.detect("k.cu", "hipMalloc(&p, 4);") == "hip"
    assert platforms.detect("k.mlu", "") == "bang"


def test_cache_command_reports_and_clears(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XPILER_CACHE_DIR", str(tmp_path))
    build = tmp_path / "build"
    build.mkdir()
    (build / "cuda-x.so").write_bytes(b"x" * 2048)
    assert main(["cache", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["files"] == 1 and info["bytes"] == 2048 and info["cap_bytes"] == 4096 << 20
    assert main(["cache", "--clear", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["files"] == 0 and info["deleted"] == 1 and info["freed_bytes"] == 2048
    assert main(["cache", "--prune", "--clear"]) == 2
