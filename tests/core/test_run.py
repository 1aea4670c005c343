"""The run driver (xpiler/run.py): argument checks, guarded buffers, limits, error mapping.

These tests build the Program by hand so they exercise the driver alone (the front-ends have
their own tests); the kernels are plain C++ run natively (platform vnni).
"""
import numpy as np
import pytest

from xpiler.ir import errors
from xpiler.ir.program import Function, Param, Program
from xpiler.run import run_kernel

SRC = r"""
#include <cstdio>
#include <vector>
extern "C" void axpy(const float* x, float* y, float a, int n) {
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
  printf("n=%d\n", n);
}
extern "C" void overrun(const float* x, float* y, int n) {
  for (int i = 0; i <= n + 64; ++i) y[i] = x[i];
}
extern "C" void slack_write(float* y, int n) { y[n] = 1.0f; }
extern "C" void spin(float* y) { volatile int go = 1; while (go) {} }
extern "C" void hog(float* y) { std::vector<char> v(64ull << 30); y[0] = v[12345]; }
extern "C" void halves(const unsigned short* h, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = h[i]; }
extern "C" void divide(int* y, int d) { y[0] = 10 / d; }
"""

F32 = "float32"


def P(name, kind="pointer", dtype=F32, role="input"):
    return Param(name, f"{dtype} {'*' if kind == 'pointer' else ''}", kind, dtype, role)


def prog(name, *params):
    f = Function(name, "host", tuple(params), True)
    return Program("vnni", SRC, "kern.cpp", functions=[f], entry=f)


@pytest.fixture
def kfile(tmp_path):
    p = tmp_path / "kern.cpp"
    p.write_text(SRC)
    return p


def run(kfile, program, args, **kw):
    return run_kernel(kfile, args=args, program=program, **kw)


def test_axpy_updates_arrays_in_place_and_captures_stdout(kfile):
    x = np.arange(8, dtype=np.float32)
    y = np.ones(8, dtype=np.float32)
    r = run(kfile, prog("axpy", P("x"), P("y", role="inout"), P("a", "scalar"), P("n", "scalar", "int32")),
            [x, y, 2.0, 8])
    np.testing.assert_array_equal(y, 1 + 2 * np.arange(8, dtype=np.float32))
    assert r.stdout == "n=8" and r.platform == "vnni" and r.entry == "axpy"
    again = run(kfile, prog("axpy", P("x"), P("y", role="inout"), P("a", "scalar"), P("n", "scalar", "int32")),
                [x, y, 0.0, 8])
    assert again.cached and again.build_s == 0.0


def test_read_past_argument_is_reported_naming_it(kfile):
    x = np.zeros(16, np.float32)
    y = np.zeros(16, np.float32)
    with pytest.raises(errors.OutOfBoundsAccess) as exc:
        run(kfile, prog("overrun", P("x"), P("y", role="output"), P("n", "scalar", "int32")), [x, y, 16])
    assert "argument 'x'" in str(exc.value) and exc.value.exit_code == 8


def test_write_into_alignment_slack_is_caught_by_canary(kfile):
    y = np.zeros(5, np.float32)  # 20 bytes: the guard page starts 12 bytes later
    with pytest.raises(errors.OutOfBoundsAccess, match="argument 'y'"):
        run(kfile, prog("slack_write", P("y", role="output"), P("n", "scalar", "int32")), [y, 5])


def test_hang_is_stopped_by_time_limit(kfile):
    with pytest.raises(errors.KernelTimeout) as exc:
        run(kfile, prog("spin", P("y", role="output")), [np.zeros(1, np.float32)], timeout=1)
    assert exc.value.exit_code == 6 and exc.value.kernel == "spin"


def test_memory_limit(kfile):
    with pytest.raises(errors.MemoryLimitExceeded):
        run(kfile, prog("hog", P("y", role="output")), [np.zeros(1, np.float32)], memory_limit=1 << 30)


def test_division_by_zero_is_a_runtime_error(kfile):
    with pytest.raises(errors.KernelRuntimeError, match="arithmetic"):
        run(kfile, prog("divide", P("y", dtype="int32", role="output"), P("d", "scalar", "int32")),
            [np.zeros(1, np.int32), 0])


def test_dtype_mismatch_is_an_error_not_a_cast(kfile):
    with pytest.raises(errors.UsageError, match="dtype float64"):
        run(kfile, prog("axpy", P("x"), P("y", role="inout"), P("a", "scalar"), P("n", "scalar", "int32")),
            [np.zeros(4), np.zeros(4, np.float32), 1.0, 4])


def test_argument_count_and_scalar_range(kfile):
    program = prog("axpy", P("x"), P("y", role="inout"), P("a", "scalar"), P("n", "scalar", "int32"))
    with pytest.raises(errors.UsageError, match="takes 4"):
        run(kfile, program, [np.zeros(4, np.float32)])
    with pytest.raises(errors.UsageError, match="does not fit"):
        run(kfile, program, [np.zeros(4, np.float32), np.zeros(4, np.float32), 1.0, 2**40])
    with pytest.raises(errors.UsageError, match="not an integer"):
        run(kfile, program, [np.zeros(4, np.float32), np.zeros(4, np.float32), 1.0, 2.5])


def test_build_error_carries_compiler_message(tmp_path):
    bad = tmp_path / "bad.cpp"
    bad.write_text('extern "C" void f(float* y) { y[0] = undefined_name; }\n')
    f = Function("f", "host", (P("y", role="output"),), True)
    with pytest.raises(errors.BuildError) as exc:
        run_kernel(bad, args=[np.zeros(1, np.float32)], program=Program("vnni", bad.read_text(), str(bad),
                                                                         functions=[f], entry=f))
    assert "undefined_name" in exc.value.detail and "bad.cpp:1" in exc.value.detail


def test_build_cache_is_pruned_least_recently_used_first(tmp_path, monkeypatch):
    import os
    import time

    from xpiler import run as run_mod

    monkeypatch.setenv("XPILER_CACHE_DIR", str(tmp_path))
    root = run_mod.cache_dir()
    now = time.time()

    def put(name, size, age):
        f = root / name
        f.write_bytes(b"x" * size)
        os.utime(f, (now - age, now - age))
        return f

    oldest = put("cuda-a.so", 400, 9000)
    gch = put("prefix-k.h.gch", 300, 8000)
    header = put("prefix-k.h", 10, 8000)
    recent = put("cuda-b.so", 400, 5000)
    young = put("cuda-c.so", 400, 5)            # in use by another process: never pruned
    deleted, freed = run_mod.prune_cache(limit=1000)
    assert not oldest.exists() and not gch.exists() and not header.exists()
    assert recent.exists() and young.exists()
    assert (deleted, freed) == (3, 710)
    # under the cap nothing is touched; 0 means no cap
    assert run_mod.prune_cache(limit=1000) == (0, 0)
    assert run_mod.prune_cache(limit=0) == (0, 0)
    monkeypatch.setenv("XPILER_CACHE_MAX_MB", "lots")
    with pytest.raises(errors.UsageError):
        run_mod.cache_limit_bytes()


def test_host_entry_without_extern_c_runs_and_freed_overrun_is_caught(tmp_path):
    # a host entry with C++ linkage (mangled symbol) gets an extern "C" forwarder
    src = tmp_path / "slack.cu"
    text = ("__global__ void past(float *d) { d[threadIdx.x] = 1.0f; }\n"
            "void run_past(float *out) {\n"
            "  float *d; cudaMalloc(&d, 5 * sizeof(float));\n"
            "  past<<<1, THREADS>>>(d);\n"
            "  cudaMemcpy(out, d, 5 * sizeof(float), cudaMemcpyDeviceToHost);\n"
            "  cudaFree(d);\n}\n")
    src.write_text("#define THREADS 5\n" + text)
    out = np.zeros(5, np.float32)
    run_kernel(src, args=[out])
    assert out.tolist() == [1.0] * 5
    # one thread too many writes into the allocation's slack; the buffer is freed before the
    # run ends, so the canary must be checked by cudaFree itself
    src.write_text("#define THREADS 6\n" + text)
    with pytest.raises(errors.OutOfBoundsAccess, match="when it was freed"):
        run_kernel(src, args=[np.zeros(5, np.float32)])


UNINITIALISED = """__global__ void first(float *y) { if (threadIdx.x == 0) y[0] = 1.0f; }
extern "C" void run(float *y, int n) {
    float *d;
    cudaMalloc(&d, n * sizeof(float));
    first<<<1, 32>>>(d);
    cudaMemcpy(y, d, n * sizeof(float), cudaMemcpyDeviceToHost);   // the rest was never written
    cudaFree(d);
}
"""


@pytest.mark.parametrize("strict, fill, byte", [(False, None, 0x00), (True, None, 0xFF),
                                                (False, 0xA5, 0xA5), (True, 0x3C, 0x3C)])
def test_fresh_memory_fill(tmp_path, strict, fill, byte):
    """Fresh device memory holds zeros in a lenient run, the 0xFF poison in strict mode, or the
    byte a driver asks for (``fresh_fill``: its second run of a source finds the output elements
    that depend on uninitialised memory)."""
    path = tmp_path / "u.cu"
    path.write_text(UNINITIALISED)
    y = np.full(8, 7.0, np.float32)
    run_kernel(path, args=[y, 8], strict=strict, fresh_fill=fill)
    assert y[0] == 1.0
    assert set(y[1:].view(np.uint8).tolist()) == {byte}
    with pytest.raises(errors.UsageError):
        run_kernel(path, args=[y, 8], fresh_fill=256)
