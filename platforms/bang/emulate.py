"""BANG C on the CPU virtual device: source -> one C++17 translation unit for g++.

API used by ``xpiler/run.py``:

``prepare(source, path, *, strict, profile) -> str``
    The translation unit (identical for strict and lenient runs: strictness is the runtime
    option ``xp_options_t.strict`` set by ``__xp_configure``): profile macros (``__BANG_ARCH__``, ``XPB_ARCH_GROUP``,
    ``__MLU_NRAM_SIZE__`` ...), ``#include "xp_bang.h"``, ``#line 1 "<path>"`` and the user's source
    rewritten line-preservingly, then one ``extern "C" void __xp_kernel_<name>(const xp_launch_t*,
    void**)`` stub per ``__mlu_global__``/``__mlu_entry__`` kernel (launch with ``cfg->dim`` and
    ``cfg->ktype`` = cores of the function type; ``args[i]`` points at the i-th argument value).
``INCLUDE_DIRS``
    ``platforms/bang/runtime`` (xp_bang.h and the shims bang.h, cnrt.h, mlu.h ...) and
    ``platforms/common/runtime`` (xp_core.h).
``compile_flags(strict) -> list[str]``
    Extra g++ flags (the driver adds ``-std=c++17 -O2 -shared -fPIC -w`` and the include dirs).
``load_profile(name=None) -> dict``
    A device profile from ``platforms/bang/profile.toml`` (default ``mtp_372``).

Source rewrites done here (everything else is plain C++ in the runtime headers):

* ``__nram__ T a[N];`` (also ``__wram__``, ``__mlu_shared__``, ``__ldram__``; at file scope or
  inside functions; qualifier before or after the type) becomes
  ``static T (&a)[N] = *(T(*)[N])xpb::site(XPB_NRAM, sizeof(T[N]), alignof(T));``: a fixed offset
  in the space's window, which always shows the running core's (cluster's) arena. ``sizeof(a)``
  and array semantics are kept. An initializer is kept in a ``static const`` twin and copied into
  every core's (cluster's) arena at each launch (``xpb::site_init``). Pointer and ``extern``
  declarations keep their original form (qualifier dropped) and a comment says so.
* ``k<<<dim, ktype[, queue]>>>(args)`` becomes ``xpb::make_launch(k, "k", dim, ktype[, queue])(args)``;
  the launch runs synchronously.
"""
from __future__ import annotations

import re
from pathlib import Path

import platforms
from platforms.bang.kernels import kernel_names, mask_source, mpu_kernels, uses_mpu  # noqa: F401 (API)
from platforms.common.preprocess import unicode_whitespace_to_spaces

HERE = Path(__file__).parent
RUNTIME_DIR = HERE / "runtime"
COMMON_RUNTIME_DIR = HERE.parent / "common" / "runtime"
INCLUDE_DIRS: list[Path] = [RUNTIME_DIR, COMMON_RUNTIME_DIR]

SPACE_OF = {"__nram__": "XPB_NRAM", "__wram__": "XPB_WRAM", "__mlu_shared__": "XPB_SRAM",
            "__ldram__": "XPB_LDRAM"}
_QUAL_RE = re.compile(r"\b(__nram__|__wram__|__mlu_shared__|__ldram__)\b")
_SPEC_WORDS = {"static", "extern", "const", "volatile", "inline", "__mlu_device__", "__mlu_func__"}


# ------------------------------------------------------------------------------ profile
def load_profile(name: str | None = None) -> dict:
    """Return a device profile (a plain dict) from profile.toml; ``None`` = the default
    (``platforms.profile``, the one profile loader)."""
    return platforms.profile("bang", name)


def compile_flags(strict: bool) -> list[str]:
    # -fwrapv: integer overflow wraps (design choice, PLATFORMS.md §2.0); no FMA contraction so
    # float results do not depend on the host compiler's choices; -mf16c: half <-> float by the
    # F16C instructions (exact, RNE) instead of libgcc calls (every x86-64 CPU since 2012).
    return ["-fwrapv", "-fno-strict-aliasing", "-ffp-contract=off", "-fno-fast-math", "-mf16c"]





def _apply_edits(src: str, edits: list[tuple[int, int, str]]) -> str:
    """``src`` with each ``src[a:b]`` replaced (edits in increasing order, not overlapping), in
    one pass: splicing them one by one copies the whole text per edit (quadratic)."""
    out, pos = [], 0
    for a, b, text in edits:
        out += (src[pos:a], text)
        pos = b
    out.append(src[pos:])
    return "".join(out)


# ------------------------------------------------------------------------------ declarations
def _split_top(text: str, sep: str = ",") -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _statement_bounds(masked: str, pos: int) -> tuple[int, int, bool]:
    """(start, end_after_semicolon, is_statement) of the declaration holding position ``pos``."""
    i = pos - 1
    while i >= 0 and masked[i] not in ";{}(,#":
        i -= 1
    if i >= 0 and masked[i] in "(,":
        return pos, pos, False  # a parameter or cast: just drop the qualifier
    start = i + 1
    if i >= 0 and masked[i] == "#":  # "# define X __nram__ ..." - not a declaration
        return pos, pos, False
    depth, j = 0, pos
    while j < len(masked):
        ch = masked[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return pos, pos, False
            depth -= 1
        elif ch == ";" and depth == 0:
            return start, j + 1, True
        j += 1
    return pos, pos, False


_DECL_RE = re.compile(
    r"^(?P<type>(?:(?:unsigned|signed|long|short|struct|enum|union|const|volatile)\s+)*"
    r"[A-Za-z_][\w:]*(?:\s*<[^;]*?>)?(?:\s+(?:const|volatile|int|long|char|short|double))*)"
    r"\s+(?P<decls>[^\s].*)$", re.S)
_DECLARATOR_RE = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]]*\]\s*)*)(?:=\s*(?P<init>.+))?$", re.S)


def _rewrite_declaration(stmt: str, qual: str) -> str | None:
    """One-line replacement of a memory-space declaration, or None when not handled."""
    body = _QUAL_RE.sub(" ", stmt).strip()
    assert body.endswith(";")
    body = body[:-1].strip()
    align = None
    while True:  # __attribute__((aligned(N))) anywhere in the declaration
        m = re.search(r"__attribute__\s*\(\(", body)
        if not m:
            break
        depth, k = 0, m.end() - 2
        while k < len(body):
            depth += {"(": 1, ")": -1}.get(body[k], 0)
            k += 1
            if depth == 0:
                break
        a = re.search(r"aligned\s*\(\s*([^()]+?)\s*\)", body[m.start():k])
        if a:
            align = a.group(1)
        body = body[:m.start()] + " " + body[k:]
    words = body.split()
    specs = []
    while words and words[0] in _SPEC_WORDS:
        specs.append(words.pop(0))
    if "extern" in specs:
        return None
    m = _DECL_RE.match(" ".join(words))
    if not m:
        return None
    ctype = m.group("type").strip()
    const = "const" in specs
    out = []
    for decl in _split_top(m.group("decls")):
        d = _DECLARATOR_RE.match(decl)
        if not d:
            return None  # pointer, initializer, function...: keep the original declaration
        name, dims = d.group("name"), re.sub(r"\s+", "", d.group("dims"))
        full = f"{'const ' if const else ''}{ctype}"
        al = f"alignof({ctype})" if align is None else f"(size_t)({align})"
        init = d.group("init")
        if init is not None:  # initial value: copied into every core's arena at each launch
            init = " ".join(init.split())
            if "[]" in dims:
                return None
            out.append(f"static const {ctype} xpb_init_{name}{dims} = {init};")
            ref = f"xpb_init_{name}" if dims else f"&xpb_init_{name}"
            if dims:
                out.append(f"static {full} (&{name}){dims} = *({full}(*){dims})"
                           f"xpb::site_init({SPACE_OF[qual]}, sizeof({ctype}{dims}), {al}, {ref});")
            else:
                out.append(f"static {full} &{name} = *({full} *)"
                           f"xpb::site_init({SPACE_OF[qual]}, sizeof({ctype}), {al}, {ref});")
            continue
        if dims:
            out.append(f"static {full} (&{name}){dims} = *({full}(*){dims})"
                       f"xpb::site({SPACE_OF[qual]}, sizeof({ctype}{dims}), {al});")
        else:
            out.append(f"static {full} &{name} = *({full} *)"
                       f"xpb::site({SPACE_OF[qual]}, sizeof({ctype}), {al});")
    return " ".join(out)


def _rewrite_spaces(src: str) -> str:
    masked = mask_source(src)
    # preprocessor lines blanked too, so a declaration after "#include ..." is found; a qualifier
    # inside a macro body is bounded with the plain mask instead
    masked_d = mask_source(src, directives=True)
    edits: list[tuple[int, int, str]] = []
    pos = 0
    while True:
        m = _QUAL_RE.search(masked, pos)
        if not m:
            break
        in_directive = masked_d[m.start()] == " "
        bmask = masked if in_directive else masked_d
        start, end, is_stmt = _statement_bounds(bmask, m.start())
        if is_stmt:
            while start < m.start() and bmask[start].isspace():
                start += 1  # leave blank lines and preprocessor lines before the declaration alone
            stmt = src[start:end]
            # every qualifier of the statement is handled at once
            qual = _QUAL_RE.search(bmask[start:end]).group(1)
            new = _rewrite_declaration(bmask[start:end], qual)
            if new is None:
                new = _QUAL_RE.sub(lambda q: " " * len(q.group(0)), stmt) + \
                    " /* xpiler: kept as an ordinary variable (initializer/pointer/extern) */"
            new += "\n" * stmt.count("\n")  # keep line numbers
            edits.append((start, end, new))
            pos = end
        else:
            edits.append((m.start(), m.end(), " " * (m.end() - m.start())))
            pos = m.end()
    return _apply_edits(src, edits)


# ------------------------------------------------------------------------------ launches
def _rewrite_launches(src: str) -> str:
    masked = mask_source(src)
    edits = []
    pos = 0
    while True:
        i = masked.find("<<<", pos)
        if i < 0:
            break
        j = masked.find(">>>", i + 3)
        if j < 0:
            break
        # kernel expression: identifier (with ::) and optional template arguments, before <<<
        k = i
        while k > 0 and masked[k - 1] in " \t":
            k -= 1
        end_name = k
        if k > 0 and masked[k - 1] == ">":  # k<T><<<...
            # bounded: template arguments neither span a statement nor reach the last launch
            depth, opened = 0, False
            while k > pos:
                k -= 1
                if masked[k] in ";{}":
                    break
                if masked[k] == ">":
                    depth += 1
                elif masked[k] == "<":
                    depth -= 1
                    if depth == 0:
                        opened = True
                        break
            if not opened:
                k = end_name
        while k > pos and (masked[k - 1].isalnum() or masked[k - 1] in "_:"):
            k -= 1
        name = src[k:end_name].strip()
        cfg = src[i + 3:j]
        plain = re.sub(r"<.*>", "", name).split("::")[-1]
        edits.append((k, j + 3, f'xpb::make_launch({name}, "{plain}", {cfg})'))
        pos = j + 3
    return _apply_edits(src, edits)


def _c_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def prepare(source: str, path: str, *, strict: bool, profile: dict) -> str:
    """Return one C++17 translation unit: runtime + rewritten source + kernel launcher stubs."""
    prof = {**load_profile(None), **(profile or {})}
    bang_arch = int(prof.get("bang_arch", 372))
    group = int(str(prof.get("arch_group", f"{bang_arch // 100}xx"))[0])
    has_sram = int(prof.get("sram_bytes", 1) > 0)
    head = [
        # nothing before the #line may depend on the path: run.py precompiles this prefix once
        "// generated by platforms/bang/emulate.py (xpiler virtual device) - do not edit",
        f"#define __BANG_ARCH__ {bang_arch}",
        f"#define XPB_ARCH_GROUP {group}",
        f"#define __MLU_NRAM_SIZE__ {int(prof.get('nram_bytes', 786432)) // 1024}",
        f"#define __MLU_WRAM_SIZE__ {int(prof.get('wram_bytes', 1048576)) // 1024}",
        f"#define __MLU_SRAM_SIZE__ {int(prof.get('sram_bytes', 4194304)) // 1024}",
        f"#define XPB_HAS_SRAM_ARCH {has_sram}",
        '#include "xp_bang.h"',
        f'#line 1 "{_c_string(path)}"',
    ]
    # clang (cncc) treats a no-break space and the other Unicode spaces as whitespace; g++ does not
    source = unicode_whitespace_to_spaces(source)
    body = _rewrite_launches(_rewrite_spaces(source))
    stubs = ['', '#line 1 "<xpiler-bang-launchers>"']
    for name in mpu_kernels(source):
        stubs.append(f"static const bool xpb_mpu_{name} = xpb::register_mpu_kernel((const void *)&{name});")
    for name in kernel_names(source):
        stubs.append(f'XP_EXPORT void __xp_kernel_{name}(const xp_launch_t *cfg, void **args) '
                     f'{{ xpb::run_stub({name}, "{name}", cfg, args); }}')
    return "\n".join(head) + "\n" + body + ("" if body.endswith("\n") else "\n") + "\n".join(stubs) + "\n"
