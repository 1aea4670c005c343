"""Every pass diagnostic code raised in passes/ is documented in passes/diagnostics.toml."""
import re
import tomllib
from pathlib import Path

PASSES = Path(__file__).resolve().parents[2] / "passes"


def test_every_pass_code_is_documented():
    table = tomllib.loads((PASSES / "diagnostics.toml").read_text())
    used = set()
    for f in PASSES.rglob("*.py"):
        used |= set(re.findall(r'"(XP-[A-Z]+(?:-[A-Z]+)*-\d{3})"', f.read_text()))
    missing = sorted(used - set(table))
    assert not missing, f"add these codes to passes/diagnostics.toml: {missing}"
    for code, entry in table.items():
        assert {"title", "meaning", "hint"} <= set(entry), code
