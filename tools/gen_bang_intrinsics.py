#!/usr/bin/env python3
"""Generate platforms/bang/runtime/xp_bang_intrinsics.gen.h from platforms/bang/intrinsics/*.toml.

    python tools/gen_bang_intrinsics.py          # write the header
    python tools/gen_bang_intrinsics.py --check  # exit 1 if the committed header is stale
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from platforms.bang import intrinsics  # noqa: E402


def main(argv: list[str]) -> int:
    text = intrinsics.render_cpp()
    out = intrinsics.GENERATED_HEADER
    if "--check" in argv:
        if not out.exists() or out.read_text() != text:
            print(f"{out} is stale: run python tools/gen_bang_intrinsics.py", file=sys.stderr)
            return 1
        return 0
    out.write_text(text)
    print(f"wrote {out} ({len(intrinsics.load())} intrinsic forms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
