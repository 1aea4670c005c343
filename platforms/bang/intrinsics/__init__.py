"""The BANG C intrinsic knowledge base: one TOML entry per intrinsic form (see README.md).

``load()`` returns every entry with its template expanded and placeholders filled, in a stable
order; ``render_cpp()`` turns those entries into the C++ the virtual device compiles
(``platforms/bang/runtime/xp_bang_intrinsics.gen.h``, written by ``tools/gen_bang_intrinsics.py``).
Passes (detensorize/tensorize) and prompts read the same entries through ``load()``.
"""
from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path

HERE = Path(__file__).parent
TEMPLATES_FILE = "templates.toml"
GENERATED_HEADER = HERE.parent / "runtime" / "xp_bang_intrinsics.gen.h"

# fields an entry may carry (anything else is a typo and rejected)
FIELDS = {"name", "template", "source", "signature", "types", "operands", "rules", "loop", "prelude",
          "body", "vars", "notes", "reference"}
SPACES = {"gdram": "XPB_M_GDRAM", "nram": "XPB_M_NRAM", "wram": "XPB_M_WRAM", "sram": "XPB_M_SRAM",
          "ldram": "XPB_M_LDRAM", "any": "XPB_M_ANY"}
ARCH_COND = {"all": None, "2xx": "XPB_ARCH_GROUP == 2", "3xx": "XPB_ARCH_GROUP == 3",
             "5xx": "XPB_ARCH_GROUP == 5", "3xx+": "XPB_ARCH_GROUP >= 3", "5xx+": "XPB_ARCH_GROUP >= 5"}


class IntrinsicsError(ValueError):
    """A malformed intrinsics file."""


def _files() -> list[Path]:
    return sorted(p for p in HERE.glob("*.toml") if p.name != TEMPLATES_FILE)


def _templates() -> dict:
    templates: dict = {}
    for path in [HERE / TEMPLATES_FILE, *_files()]:
        data = tomllib.loads(path.read_text())
        for k, v in data.get("templates", {}).items():
            if k in templates:
                raise IntrinsicsError(f"{path.name}: template '{k}' defined twice")
            templates[k] = v
    return templates


def _fill(value, subst: dict):
    """Replace {key} placeholders (only known keys: C braces stay untouched)."""
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\}", lambda m: str(subst[m.group(1)]) if m.group(1) in subst else m.group(0), value)
    if isinstance(value, list):
        return [_fill(v, subst) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, subst) for k, v in value.items()}
    return value


def load() -> list[dict]:
    """Every intrinsic form, expanded. Keys: name, file, source, signature, types, operands,
    rules, loop, prelude, body, notes, reference, template."""
    templates = _templates()
    out = []
    for path in _files():
        data = tomllib.loads(path.read_text())
        for raw in data.get("intrinsic", []):
            bad = set(raw) - FIELDS
            if bad:
                raise IntrinsicsError(f"{path.name}: {raw.get('name')}: unknown field(s) {sorted(bad)}")
            entry = {}
            if "template" in raw:
                if raw["template"] not in templates:
                    raise IntrinsicsError(f"{path.name}: {raw['name']}: unknown template '{raw['template']}'")
                entry.update(copy.deepcopy(templates[raw["template"]]))
            entry.update(copy.deepcopy(raw))
            subst = {"name": entry["name"], **entry.get("vars", {})}
            for key in ("signature", "loop", "prelude", "body", "operands", "rules", "reference"):
                if key in entry:
                    entry[key] = _fill(entry[key], subst)
            for key in ("signature", "body"):
                if not entry.get(key):
                    raise IntrinsicsError(f"{path.name}: {entry['name']}: missing '{key}'")
            entry.setdefault("source", "")
            entry.setdefault("types", {})
            entry.setdefault("operands", [])
            entry.setdefault("rules", [])
            entry.setdefault("notes", "")
            entry["file"] = path.name
            out.append(entry)
    return out


DECLARED_FIELDS = {"name", "family", "question", "code", "notes"}
DECLARED_CODE = "XP-BANG-DECL-001"


def declared() -> list[dict]:
    """Builtins declared but NOT described (``[[declared]]`` tables): real code uses them, the
    sources do not settle their semantics. Keys: name, family, question, code, notes, file. The
    virtual device defines each as a function that stops the run with ``code`` when called."""
    described = set(names())
    out, seen = [], set()
    for path in _files():
        for raw in tomllib.loads(path.read_text()).get("declared", []):
            bad = set(raw) - DECLARED_FIELDS
            if bad:
                raise IntrinsicsError(f"{path.name}: {raw.get('name')}: unknown field(s) {sorted(bad)}")
            for key in ("name", "family", "question"):
                if not raw.get(key):
                    raise IntrinsicsError(f"{path.name}: declared {raw.get('name')}: missing '{key}'")
            if raw["name"] in described:
                raise IntrinsicsError(f"{path.name}: {raw['name']} is described and declared")
            if raw["name"] in seen:
                raise IntrinsicsError(f"{path.name}: {raw['name']} declared twice")
            seen.add(raw["name"])
            out.append({"code": DECLARED_CODE, "notes": "", **raw, "file": path.name})
    return out


def refusal(entry: dict) -> str:
    """The diagnostic of a call to a declared builtin (also printed by the virtual device)."""
    return (f"{entry['code']}: '{entry['name']}' is declared but not emulated "
            f"(platforms/bang/intrinsics/{entry['file']}): {entry['question']}")


def names() -> list[str]:
    """Distinct intrinsic names, in file order."""
    seen: dict[str, None] = {}
    for e in load():
        seen.setdefault(e["name"], None)
    return list(seen)


# ------------------------------------------------------------------------------ C++ rendering
def _cstr(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


def _template_params(signature: str) -> list[str]:
    m = re.match(r"\s*template\s*<([^>]*)>", signature)
    if not m:
        return []
    return [p.split()[-1] for p in m.group(1).split(",") if p.strip()]


def _type_rules(entry: dict) -> list[str]:
    """`"bfloat16_t:5xx"` in types -> a strict rule that the type needs that arch group."""
    params = _template_params(entry["signature"])
    lines = []
    for param, tys in entry["types"].items():
        if param not in params:
            continue
        for ty in tys:
            if ":" not in ty:
                continue
            base, arch = ty.split(":", 1)
            group = int(arch[0])
            alts = [base] + (["signed char"] if base == "char" else [])
            cond = " && ".join(f"!std::is_same<{param}, {a}>::value" for a in alts)
            msg = _cstr(f"{entry['name']}: {param} = {base} needs (m)tp_{arch} or later")
            lines.append(f"  XPB_RULE(({cond}) || XPB_ARCH_GROUP >= {group}, {msg});")
    return lines


def _with_inline(signature: str) -> str:
    m = re.match(r"(\s*template\s*<[^>]*>\s*)(.*)$", signature, re.S)
    if m:
        rest = m.group(2)
        return m.group(1) + (rest if rest.startswith("inline ") else "inline " + rest)
    return signature if signature.lstrip().startswith("inline ") else "inline " + signature


def _indent(block: str, pad: str = "  ") -> list[str]:
    return [(pad + line) if line.strip() else "" for line in block.strip("\n").splitlines()]


def render_entry(e: dict) -> str:
    name = e["name"]
    lines = [f"// {name} [{e['file']}] {e['source']}".rstrip()]
    lines.append(_with_inline(e["signature"]) + " {")
    if e.get("prelude"):
        lines += _indent(e["prelude"])
    for r in e["rules"]:
        if "call" in r:
            lines.append(f"  {r['call']};")
            continue
        arch = r.get("arch", "all")
        if arch not in ARCH_COND:
            raise IntrinsicsError(f"{name}: unknown arch '{arch}' (use {', '.join(ARCH_COND)})")
        suffix = "" if arch == "all" else f" ({arch})"
        stmt = f"XPB_RULE(({r['check']}), {_cstr(name + ': ' + r['message'] + suffix)});"
        cond = ARCH_COND[arch]
        lines.append(f"  if ({cond}) {stmt}" if cond else f"  {stmt}")
    lines += _type_rules(e)
    for op in e["operands"]:
        masks = []
        for sp in op["space"].split("|"):
            if sp not in SPACES:
                raise IntrinsicsError(f"{name}: operand {op['name']}: unknown space '{sp}'")
            masks.append(SPACES[sp])
        if "count" in op:
            size = f"(size_t)({op['count']}) * sizeof(*{op['name']})"
        elif "bytes" in op:
            size = f"(size_t)({op['bytes']})"
        else:
            raise IntrinsicsError(f"{name}: operand {op['name']} needs 'count' or 'bytes'")
        lines.append(f'  xpb::operand("{name}", "{op["name"]}", {op["name"]}, {size}, {" | ".join(masks)});')
    if e.get("loop"):
        lines.append(f"  for (unsigned int i = 0; i < (unsigned int)({e['loop']}); ++i) {{")
        lines += _indent(e["body"], "    ")
        lines.append("  }")
    else:
        lines += _indent(e["body"])
    lines.append("}")
    return "\n".join(lines)


def render_cpp(entries: list[dict] | None = None) -> str:
    entries = load() if entries is None else entries
    head = [
        "// GENERATED by tools/gen_bang_intrinsics.py from platforms/bang/intrinsics/*.toml.",
        "// Do not edit: change the TOML entry and regenerate (a test checks this file is current).",
        "// Each function: prelude, strict rules (XPB_RULE: strict -> error, lenient -> warning),",
        "// operand space/bounds checks (xpb::operand), then the entry's scalar reference body.",
        "#pragma once",
        "",
    ]
    body = "\n\n".join(render_entry(e) for e in entries)
    decl = declared()
    if decl:
        body += "\n\n" + "\n".join(_DECLARED_HEAD) + "\n\n" + "\n\n".join(render_declared(d) for d in decl)
    return "\n".join(head) + body + "\n"


# Declared builtins: any arguments, any use of the result (the conversion is never reached:
# the call stops the run first), so a kernel that uses one builds and is refused when it calls it.
_DECLARED_HEAD = [
    "// ---- declared, not described (declared.toml): a call stops the run with its diagnostic",
    "namespace xpb {",
    "struct refused_t {",
    "  template <class T> operator T() const { return T(); }",
    "};",
    "[[noreturn]] inline void refuse(const char *diagnostic) { xp::fail(xp::FAIL_RUNTIME, \"%s\", diagnostic); }",
    "}  // namespace xpb",
]


def render_declared(d: dict) -> str:
    return "\n".join([
        f"// {d['name']} [{d['file']}] declared ({d['family']}): {d['code']}",
        f"template <class... A> inline xpb::refused_t {d['name']}(A &&...) {{",
        f"  xpb::refuse({_cstr(refusal(d)).replace('%%', '%')});",
        "}",
    ])
