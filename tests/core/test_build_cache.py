"""The build cache survives what happens to it (issue 13): an unusable XPILER_CACHE_DIR is a usage
error, a corrupted object or precompiled header is rebuilt instead of loaded, temporaries left
by killed builds are counted and pruned, and the BANG precompiled prefix is shared by every path.

Each test uses a private cache; the cold builds are small CUDA kernels sharing one precompiled
prefix, built once per module and copied.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import platforms
from xpiler.ir import errors
from xpiler import run as run_mod
from xpiler.cli import main
from xpiler.run import run_kernel

KERNEL = """__global__ void {name}(float *y, const float *x, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = {factor}.0f * x[i];
}}
"""
N = 64


def _run(path: Path, factor: int):
    x = np.arange(N, dtype=np.float32)
    y = np.zeros(N, np.float32)
    res = run_kernel(path, args=[y, x, N], launch={"grid": (1, 1, 1), "block": (N, 1, 1)})
    np.testing.assert_array_equal(y, factor * x)
    return res


def _objects(root: Path) -> list[Path]:
    return sorted(root.glob("cuda-*.so"))


@pytest.fixture(scope="module")
def primed(tmp_path_factory):
    """A cache holding the builds of two kernels (twice, thrice) and their shared .gch."""
    base = tmp_path_factory.mktemp("primed")
    src = base / "src"
    src.mkdir()
    (src / "twice.cu").write_text(KERNEL.format(name="twice", factor=2))
    (src / "thrice.cu").write_text(KERNEL.format(name="thrice", factor=3))
    mp = pytest.MonkeyPatch()
    mp.setenv("XPILER_CACHE_DIR", str(base / "cache"))
    try:
        root = run_mod.cache_dir()
        assert not _run(src / "twice.cu", 2).cached
        twice = _objects(root)
        assert len(twice) == 1
        assert not _run(src / "thrice.cu", 3).cached
        thrice = [o for o in _objects(root) if o != twice[0]]
    finally:
        mp.undo()
    return base, twice[0].name, thrice[0].name


@pytest.fixture
def cache(primed, tmp_path, monkeypatch):
    """A private copy of the primed cache: (build dir, twice.cu, twice's object, thrice's object)."""
    base, twice, thrice = primed
    shutil.copytree(base / "cache", tmp_path / "cache")
    monkeypatch.setenv("XPILER_CACHE_DIR", str(tmp_path / "cache"))
    root = run_mod.cache_dir()
    assert root == tmp_path / "cache" / "build"
    return root, base / "src" / "twice.cu", root / twice, root / thrice


# ------------------------------------------------------------------------------ A: unusable dir
@pytest.mark.parametrize("where", ["file", "under_file"])
@pytest.mark.parametrize("command", ["cache", "run"])
def test_cache_dir_that_is_a_file_is_a_usage_error(tmp_path, monkeypatch, capsys, where, command):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    target = blocker if where == "file" else blocker / "sub"
    monkeypatch.setenv("XPILER_CACHE_DIR", str(target))
    kernel = tmp_path / "twice.cu"
    kernel.write_text(KERNEL.format(name="twice", factor=2))
    argv = ["cache"] if command == "cache" else ["run", str(kernel), "--grid", "1", "--block", "64",
                                                 "--arg", "n=64", "--arg", "y=zeros:64",
                                                 "--arg", "x=ones:64"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "XPILER_CACHE_DIR" in err and str(target) in err.replace("\n", "")
    assert "Traceback" not in err
    with pytest.raises(errors.UsageError):
        run_mod.cache_dir()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_cache_dir_is_a_usage_error(tmp_path, monkeypatch, capsys):
    ro = tmp_path / "ro"
    (ro / "build" / "tmp").mkdir(parents=True)
    ro.joinpath("build").chmod(0o555)
    monkeypatch.setenv("XPILER_CACHE_DIR", str(ro))
    try:
        assert main(["cache"]) == 2
        assert "XPILER_CACHE_DIR" in capsys.readouterr().err
    finally:
        ro.joinpath("build").chmod(0o755)


# ------------------------------------------------------------------------------ B: corruption
def _truncate(obj: Path, other: Path):
    obj.write_bytes(obj.read_bytes()[: obj.stat().st_size // 2])


def _garbage(obj: Path, other: Path):
    obj.write_bytes(os.urandom(obj.stat().st_size))


def _bit_flip(obj: Path, other: Path):
    data = bytearray(obj.read_bytes())
    data[len(data) // 2] ^= 0x40              # lands in code or data: the file still loads
    obj.write_bytes(bytes(data))


def _directory(obj: Path, other: Path):
    obj.unlink()
    obj.mkdir()
    (obj / "junk").write_bytes(b"x" * 100)


def _other_kernel(obj: Path, other: Path):
    shutil.copyfile(other, obj)               # loads, but lacks __xp_kernel_twice


@pytest.mark.parametrize("corrupt", [_truncate, _garbage, _bit_flip, _directory, _other_kernel],
                         ids=lambda f: f.__name__.strip("_"))
def test_corrupt_object_is_rebuilt(cache, corrupt):
    root, twice, obj, other = cache
    good = obj.read_bytes()
    assert _run(twice, 2).cached              # the copy is a valid cache
    corrupt(obj, other)
    res = _run(twice, 2)                      # would load the corrupt object (exit 5) before
    assert not res.cached
    assert obj.is_file() and obj.read_bytes() == good     # builds are deterministic
    assert run_mod._verified(obj)
    assert _run(twice, 2).cached


def test_missing_hash_record_means_rebuild(cache):
    root, twice, obj, other = cache
    Path(f"{obj}.sha256").unlink()             # the hash recorded at build time
    assert not _run(twice, 2).cached
    assert run_mod._verified(obj)


def test_corrupt_precompiled_header_is_rebuilt(cache):
    root, twice, obj, other = cache
    (gch,) = root.glob("prefix-*.h.gch")
    gch.write_bytes(gch.read_bytes()[:4096])   # g++: "cannot read PCH file", every build failed
    obj.unlink()                               # force a fresh build of the kernel
    assert not _run(twice, 2).cached
    assert run_mod._verified(gch) and gch.stat().st_size > 1 << 20
    header = Path(str(gch)[: -len(".gch")])
    header.write_text("#error corrupt header\n")   # the header is checked against the prefix too
    obj.unlink()
    assert not _run(twice, 2).cached


# ------------------------------------------------------------------------------ C: leftovers
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _leftover(path: Path, age: float, size: int = 1 << 20) -> Path:
    path.mkdir(parents=True)
    (path / "payload").write_bytes(b"\0" * size)
    then = time.time() - age
    os.utime(path / "payload", (then, then))
    os.utime(path, (then, then))
    return path


def test_leftover_temporaries_are_counted_and_pruned(cache, capsys):
    root, twice, obj, other = cache
    dead, me = _dead_pid(), os.getpid()
    tmp = root / "tmp"
    stale = [_leftover(tmp / f"xpiler-pch-{dead}-abc", 1200),        # killed 20 minutes ago
             _leftover(tmp / f"xpiler-build-{dead}-def", 1200),
             _leftover(tmp / f"xpiler-pch-{me}-old", 2 * 3600),      # older than any build
             _leftover(root / "xpiler-pch-legacy1", 2 * 3600)]       # older versions: no pid
    kept = [_leftover(tmp / f"xpiler-build-{me}-live", 5),            # a running build's
            _leftover(tmp / f"xpiler-pch-{dead}-young", 5)]           # maybe another pid namespace's
    assert main(["cache", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["temporaries"] == 6 and info["temporary_bytes"] == 6 << 20
    assert info["stale_temporaries"] == 4
    assert info["bytes"] >= (6 << 20) + obj.stat().st_size
    assert main(["cache"]) == 0
    assert "6 temporaries" in capsys.readouterr().out
    assert main(["cache", "--prune", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["deleted"] == 4 and info["freed_bytes"] == 4 << 20
    assert not any(p.exists() for p in stale) and all(p.exists() for p in kept)
    assert info["temporaries"] == 2
    assert obj.exists()                        # under the cap: no build is pruned
    assert main(["cache", "--clear", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert all(p.exists() for p in kept) and not list(root.glob("*.so")) and not list(root.glob("prefix-*"))


def test_fresh_build_check_removes_stale_temporaries(cache, monkeypatch):
    root, twice, obj, other = cache
    stale = _leftover(root / "tmp" / f"xpiler-pch-{_dead_pid()}-abc", 1200)
    monkeypatch.setattr(run_mod, "_fresh_builds", 0)      # the next fresh build checks the cache
    obj.unlink()
    assert not _run(twice, 2).cached
    assert not stale.exists()


def test_build_temporaries_live_in_the_cache_named_with_the_pid(cache, monkeypatch, tmp_path):
    root, twice, obj, other = cache
    for p in root.glob("*"):
        if p.name != "tmp":
            p.unlink()                         # cold: the .gch is built too
    outputs = []
    real = subprocess.run

    def spy(cmd, *a, **kw):
        if isinstance(cmd, list) and "-o" in cmd:
            outputs.append(Path(cmd[cmd.index("-o") + 1]))
        return real(cmd, *a, **kw)

    monkeypatch.setattr(subprocess, "run", spy)
    assert not _run(twice, 2).cached
    assert len(outputs) == 2                   # the .gch, then the object
    pid = os.getpid()
    assert outputs[0].parent.parent == root / "tmp" and outputs[0].parent.name.startswith(f"xpiler-pch-{pid}-")
    assert outputs[1].parent.parent == root / "tmp" and outputs[1].parent.name.startswith(f"xpiler-build-{pid}-")
    assert list((root / "tmp").iterdir()) == []


def test_killed_build_leaves_a_visible_prunable_temporary(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XPILER_CACHE_DIR", str(tmp_path / "cache"))
    kernel = tmp_path / "twice.cu"
    kernel.write_text(KERNEL.format(name="twice", factor=2))
    script = ("import numpy as np, xpiler; y = np.zeros(64, np.float32); "
              f"xpiler.run_kernel({str(kernel)!r}, args=[y, np.ones(64, np.float32), 64], "
              "launch={'grid': (1, 1, 1), 'block': (64, 1, 1)})")
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            cwd=Path(__file__).resolve().parents[2])
    tmp = tmp_path / "cache" / "build" / "tmp"
    deadline = time.time() + 60
    while time.time() < deadline and not (tmp.is_dir() and any(tmp.glob(f"xpiler-*-{proc.pid}-*"))):
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)        # the interpreter and its g++
    proc.wait()
    left = list(tmp.glob(f"xpiler-*-{proc.pid}-*"))
    assert left, "the build finished before it could be killed"
    assert main(["cache", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["temporaries"] == len(left)
    then = time.time() - 1200
    for p in left:
        os.utime(p, (then, then))
    assert main(["cache", "--prune", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["temporaries"] == 0
    assert not any(p.exists() for p in left)


# ------------------------------------------------------------------------------ C3: shared prefix
def test_precompiled_prefix_does_not_depend_on_the_source_path(tmp_path):
    sources = {"bang": Path("xpiler/corpus/bang/add_18_128.mlu"),
               "cuda": Path("xpiler/corpus/cuda/add_4_256.cu"),
               "hip": Path("xpiler/corpus/hip/add_4_256.hip"),
               "vnni": Path("xpiler/corpus/vnni/add_18_128.cpp")}
    repo = Path(__file__).resolve().parents[2]
    for plat, rel in sources.items():
        emulate = platforms.module(plat, "emulate")
        text = (repo / rel).read_text()
        if plat == "vnni":
            try:
                emulate.check_host(text, str(rel))
            except errors.XpilerError:                  # this CPU lacks avx512_vnni
                continue
        prefixes = set()
        for where in (tmp_path / "a" / rel.name, tmp_path / "elsewhere" / "b" / rel.name):
            unit = emulate.prepare(text, str(where), strict=True, profile=emulate.load_profile(None))
            cut = unit.find("\n#line ")
            assert cut > 0 and str(where) in unit[cut:]
            prefixes.add(unit[: cut + 1])
        assert len(prefixes) == 1, f"{plat}: the precompiled prefix names the source path"
