"""What `xpiler translate` writes and removes, and how path problems are reported (audit issue 13).

- SRC (or a hard or symbolic link to it), the config file and the report are never removed or
  overwritten; a usage error removes nothing.
- An unusable -o / --report path is a usage error (exit 2, the path named, no traceback),
  found before the translation runs where possible; the write itself is guarded too.
- A directory, a missing file or a dangling link as SRC/FILE gives `file:1:1: error XPnnnn`.
- Outputs honour the umask.
"""
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

import xpiler.parse
from xpiler.cli import main
from xpiler.translate import GENERATED_BANNER

CORPUS = Path(__file__).resolve().parents[2] / "xpiler" / "corpus"


@pytest.fixture
def cu(tmp_path):
    """add_4_256.cu with its case file (a.json) in a fresh directory: cuda -> hip verifies in ~1 s."""
    shutil.copy(CORPUS / "cuda" / "add_4_256.cu", tmp_path / "a.cu")
    shutil.copy(CORPUS / "cuda" / "add_4_256.json", tmp_path / "a.json")
    return tmp_path / "a.cu"


@pytest.fixture
def generated_hip(tmp_path):
    """A HIP source that an earlier `xpiler translate` wrote (starts with the banner)."""
    path = tmp_path / "gen.hip"
    path.write_text(f"{GENERATED_BANNER} from a.cu (api_map{{to=hip}}); verified.\n"
                    + (CORPUS / "hip" / "add_4_256.hip").read_text())
    shutil.copy(CORPUS / "hip" / "add_4_256.json", tmp_path / "gen.json")
    return path


@pytest.fixture
def no_translation(monkeypatch):
    """Fails the test if the translation starts (parse_file is its first slow step)."""
    def refuse(*args, **kwargs):
        raise AssertionError("the translation ran before the path problem was reported")

    monkeypatch.setattr(xpiler.parse, "parse_file", refuse)


def _usage_error(capsys, *names):
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Usage:" not in err, err
    assert "error" in err
    for name in names:
        assert str(name) in err, err
    return err


# ------------------------------------------------------------------ 1. SRC is never removed
def test_output_onto_the_generated_source_keeps_it(generated_hip, capsys):
    before = generated_hip.read_text()
    assert main(["translate", str(generated_hip), "--to", "cuda", "-o", str(generated_hip)]) == 2
    assert "refusing to overwrite the source" in capsys.readouterr().err
    assert generated_hip.read_text() == before


@pytest.mark.parametrize("kind", ["hardlink", "symlink"])
def test_output_as_a_link_to_the_source_is_refused(generated_hip, tmp_path, capsys, kind):
    link = tmp_path / "link.hip"
    os.link(generated_hip, link) if kind == "hardlink" else link.symlink_to(generated_hip.name)
    before = generated_hip.read_text()
    assert main(["translate", str(generated_hip), "--to", "cuda", "-o", str(link)]) == 2
    assert "refusing to overwrite the source" in capsys.readouterr().err
    assert generated_hip.read_text() == before and os.path.samefile(link, generated_hip)


def test_report_over_the_source_is_refused(cu, tmp_path, capsys, no_translation):
    before = cu.read_text()
    assert main(["translate", str(cu), "--to", "hip", "-o", str(tmp_path / "x.hip"), "--report", str(cu)]) == 2
    _usage_error(capsys, cu)
    assert cu.read_text() == before and not (tmp_path / "x.hip").exists()


def test_output_over_the_config_file_is_refused(cu, tmp_path, capsys, no_translation):
    config = tmp_path / "a.json"
    before = config.read_text()
    assert main(["translate", str(cu), "--to", "hip", "-o", str(config), "--config", str(config)]) == 2
    _usage_error(capsys, config)
    assert config.read_text() == before


def test_usage_error_leaves_a_stale_output(cu, tmp_path, capsys):
    """A usage error runs nothing, so it removes nothing; a failed translation still removes the
    stale OUT an earlier run wrote."""
    out = tmp_path / "out.hip"
    out.write_text(f"{GENERATED_BANNER} from a.cu; verified.\n")
    assert main(["translate", str(cu), "--to", "hip", "-o", str(out), "--arg", "nonsense"]) == 2
    _usage_error(capsys)
    assert out.exists()
    assert main(["translate", str(tmp_path / "missing.cu"), "--to", "hip", "-o", str(out)]) == 2
    assert not out.exists()


# ------------------------------------------------------------------ 2. unusable paths: exit 2
def test_output_under_a_regular_file(cu, tmp_path, capsys, no_translation):
    (tmp_path / "plain").write_text("x")
    assert main(["translate", str(cu), "--to", "hip", "-o", str(tmp_path / "plain" / "out.hip")]) == 2
    _usage_error(capsys, tmp_path / "plain" / "out.hip", "not a directory")
    assert main(["translate", str(cu), "--to", "hip", "-o", str(tmp_path / "plain" / "sub" / "out.hip")]) == 2
    _usage_error(capsys, tmp_path / "plain" / "sub" / "out.hip")


def test_output_is_an_existing_directory(cu, tmp_path, capsys, no_translation):
    (tmp_path / "d").mkdir()
    assert main(["translate", str(cu), "--to", "hip", "-o", str(tmp_path / "d")]) == 2
    _usage_error(capsys, tmp_path / "d", "is a directory")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only directories")
def test_output_in_an_unwritable_directory(cu, tmp_path, capsys, no_translation):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(["translate", str(cu), "--to", "hip", "-o", str(ro / "out.hip")]) == 2
        _usage_error(capsys, ro / "out.hip", "not writable")
    finally:
        ro.chmod(0o755)


def test_report_under_a_regular_file(cu, tmp_path, capsys, no_translation):
    (tmp_path / "plain").write_text("x")
    out = tmp_path / "out.hip"
    assert main(["translate", str(cu), "--to", "hip", "-o", str(out), "--report", str(tmp_path / "plain" / "r.json")]) == 2
    _usage_error(capsys, tmp_path / "plain" / "r.json", "not a directory")
    assert not out.exists()
    (tmp_path / "d").mkdir()
    assert main(["translate", str(cu), "--to", "hip", "-o", str(out), "--report", str(tmp_path / "d")]) == 2
    _usage_error(capsys, tmp_path / "d", "is a directory")


def test_a_name_too_long(cu, tmp_path, capsys, no_translation):
    out = tmp_path / ("x" * 300 + ".hip")
    assert main(["translate", str(cu), "--to", "hip", "-o", str(out)]) == 2
    _usage_error(capsys, out.name, "too long")


@pytest.mark.parametrize("name", ["plain/out.hip", "x" * 300 + ".hip"])
def test_the_write_itself_is_guarded(cu, tmp_path, capsys, monkeypatch, name):
    """What the pre-flight check does not catch (here: switched off) fails at the write: exit 2,
    the path named, no temporary file left behind, the report still written."""
    import xpiler.translate

    monkeypatch.setattr(xpiler.translate, "check_output_path", lambda *args: None, raising=False)
    (tmp_path / "plain").write_text("x")
    out, rep = tmp_path / name, tmp_path / "r.json"
    assert main(["translate", str(cu), "--to", "hip", "-o", str(out), "--report", str(rep)]) == 2
    _usage_error(capsys, out, "cannot write")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cu", "a.json", "plain", "r.json"]
    assert json.loads(rep.read_text())["status"] == "failed"


# ------------------------------------------------------------------ 3. file errors carry a position
def _dangling(tmp_path):
    link = tmp_path / "dangling.cu"
    link.symlink_to(tmp_path / "nothing.cu")
    return link


@pytest.mark.parametrize("command", ["parse", "run", "check", "translate"])
@pytest.mark.parametrize("case,code", [("directory", "XP1005"), ("missing", "XP1001"), ("dangling", "XP1001")])
def test_unreadable_source_is_a_positioned_diagnostic(cu, tmp_path, capsys, command, case, code):
    path = {"directory": lambda: (tmp_path / "dir.cu").mkdir() or tmp_path / "dir.cu",
            "missing": lambda: tmp_path / "missing.cu", "dangling": lambda: _dangling(tmp_path)}[case]()
    argv = {"parse": ["parse", str(path)], "run": ["run", str(path)], "check": ["check", str(path), str(cu)],
            "translate": ["translate", str(path), "--to", "hip", "-o", str(tmp_path / "out.hip")]}[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{path}:1:1: error {code}: " in err and "Usage:" not in err and "Traceback" not in err, err
    if case == "dangling":
        assert "dangling symbolic link" in err


def test_file_error_diagnostics_point_at_line_1(tmp_path):
    from xpiler.ir.errors import SourceError

    with pytest.raises(SourceError) as err:
        xpiler.parse.parse_file(tmp_path)
    assert err.value.diagnostics[0].to_json()["line"] == 1 and err.value.diagnostics[0].code == "XP1005"


# ------------------------------------------------------------------ 4. the umask is honoured
def test_outputs_honour_the_umask(cu, tmp_path, capsys):
    out, rep = tmp_path / "out.hip", tmp_path / "r.json"
    old = os.umask(0o022)
    try:
        assert main(["translate", str(cu), "--to", "hip", "-o", str(out), "--report", str(rep)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert stat.S_IMODE(rep.stat().st_mode) == 0o644
    assert json.loads(rep.read_text())["status"] == "verified"


def test_a_case_file_naming_an_unknown_operator_is_a_usage_error(tmp_path, capsys):
    # was: an uncaught CaseError traceback (exit 1) from xpiler.ops
    src = tmp_path / "k.cpp"
    src.write_text('extern "C" void k(float *y, int n) { for (int i = 0; i < n; ++i) y[i] = 1.0f; }\n')
    (tmp_path / "k.json").write_text(json.dumps({"name": "k", "op": "no_such_operator",
                                                 "params": [{"name": "y", "shape": [4]}]}))
    rc = main(["translate", str(src), "--to", "cuda", "-o", str(tmp_path / "out.cu")])
    assert rc == 2
    assert "not a usable case file" in capsys.readouterr().err


@pytest.mark.parametrize("value, shown", [("0", False), ("", False), ("no", False), ("1", True)])
def test_xpiler_debug_zero_means_off(monkeypatch, value, shown):
    from xpiler.ir.errors import debug_enabled

    monkeypatch.setenv("XPILER_DEBUG", value)
    assert debug_enabled() is shown
