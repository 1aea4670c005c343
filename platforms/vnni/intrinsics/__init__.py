"""The x86 AVX-512 / VNNI intrinsic knowledge base: one TOML entry per intrinsic (README.md).

``load()`` reads every ``*.toml`` here, expands templates and ``expand`` products, checks each
entry against the schema and returns a ``Catalog``: vector types, mask types, immediate
constants, shared support code and the intrinsics (name -> ``Intrinsic``).

``Catalog.helpers_c(names)`` renders the scalar C reference of those intrinsics: small structs
for the vector types and one ``static inline`` function per intrinsic (``xp_mm512_add_ps`` for
``_mm512_add_ps``) whose body is the entry's scalar body over lane arrays. The detensorize pass
(``passes/lift/detensorize_vnni/__init__.py``) puts exactly this code into the programs it rewrites, and
``tests/platforms/test_vnni_intrinsics.py`` compiles the same code next to the real intrinsics
and compares them bit for bit on random inputs: the description is checked where it is used.
"""
from __future__ import annotations

import copy
import itertools
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).parent

# fields an intrinsic entry (or template) may carry; anything else is a typo and rejected
FIELDS = frozenset({"name", "template", "source", "isa", "signature", "views", "lanes", "reduction",
                    "needs", "body", "rules", "test", "vars", "expand", "notes", "tolerance"})
REQUIRED = ("name", "source", "isa", "signature", "body")
# lane types a view may use, with their sizes in bytes
LANE_TYPES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
              "int64_t": 8, "uint64_t": 8, "float": 4, "double": 8}
HELPER_PREFIX = "xp"


class IntrinsicsError(ValueError):
    """A malformed intrinsics file (the message names the file and the entry)."""


@dataclass(frozen=True)
class VectorType:
    name: str          # __m512
    c: str             # xp_m512: struct { elem v[lanes]; }
    bytes: int
    elem: str

    @property
    def lanes(self) -> int:
        return self.bytes // LANE_TYPES[self.elem]


@dataclass(frozen=True)
class MaskType:
    name: str          # __mmask16
    c: str             # unsigned short
    bits: int


@dataclass(frozen=True)
class Support:
    name: str
    code: str
    file: str


@dataclass(frozen=True)
class Param:
    type: str          # as spelled in the signature (Intel/GCC names)
    name: str


@dataclass(frozen=True)
class Intrinsic:
    name: str
    file: str
    source: str
    isa: tuple[str, ...]
    signature: str
    ret: str
    params: tuple[Param, ...]
    views: dict          # operand name (or "dst") -> (lane type, count), vector operands only
    lanes: int | None    # body runs for j in [0, lanes) under `#pragma omp simd`
    reduction: str | None
    needs: tuple[str, ...]
    body: str
    rules: tuple[tuple[str, str], ...]   # (C condition, message)
    test: dict = field(default_factory=dict)
    notes: str = ""
    # None: the body is bit-exact. A number: the instruction's result is only specified within this
    # relative error of the exact value (rcp14, rsqrt14); the body gives the exact value rounded
    tolerance: float | None = None


@dataclass(frozen=True)
class Catalog:
    types: dict          # name -> VectorType
    masks: dict          # name -> MaskType
    constants: dict      # name -> int
    support: dict        # name -> Support
    intrinsics: dict     # name -> Intrinsic

    # ------------------------------------------------------------------ names and types
    @staticmethod
    def helper_name(name: str) -> str:
        """C name of the scalar reference of intrinsic ``name`` (``_mm512_add_ps`` -> ``xp_mm512_add_ps``)."""
        return HELPER_PREFIX + (name if name.startswith("_") else "_" + name)

    def c_type(self, spelling: str) -> str:
        """``spelling`` with every vector / mask type name replaced by its scalar C type."""
        def sub(m):
            word = m.group(0)
            if word in self.types:
                return self.types[word].c
            if word in self.masks:
                return self.masks[word].c
            return word
        return re.sub(r"\b__\w+\b", sub, spelling)

    def is_vector(self, spelling: str) -> bool:
        return "*" not in spelling and any(w in self.types for w in re.findall(r"\w+", spelling))

    def vector_of(self, spelling: str) -> VectorType | None:
        if "*" in spelling:
            return None
        return next((self.types[w] for w in re.findall(r"\w+", spelling) if w in self.types), None)

    # ------------------------------------------------------------------ C rendering
    def typedefs_c(self, names=None) -> str:
        """``typedef struct { T v[n]; } xp_m512;`` for the vector types ``names`` (all if None)."""
        out = []
        for t in self.types.values():
            if names is None or t.name in names:
                out.append(f"typedef struct {{ {t.elem} v[{t.lanes}]; }} {t.c};")
        return "\n".join(out)

    def support_closure(self, names) -> list[str]:
        """Support entries needed by the intrinsics ``names``, in catalogue order."""
        want = set()
        for n in names:
            want.update(self.intrinsics[n].needs)
        return [s for s in self.support if s in want]

    def types_used(self, names) -> set[str]:
        used = set()
        for n in names:
            it = self.intrinsics[n]
            for spelling in [it.ret] + [p.type for p in it.params]:
                used.update(w for w in re.findall(r"\w+", spelling) if w in self.types)
        return used

    def helper_c(self, name: str, *, rules: bool = True) -> str:
        """The scalar C reference function of intrinsic ``name``."""
        it = self.intrinsics[name]
        params, pre = [], []
        for p in it.params:
            vt = self.vector_of(p.type)
            if vt is not None:
                elem, n = it.views[p.name]
                params.append(f"{vt.c} {p.name}_v")
                pre.append(f"{elem} {p.name}[{n}];")
                pre.append(f"memcpy({p.name}, &{p.name}_v, sizeof {p.name});")
            elif "*" in p.type:
                params.append(("const void *" if re.search(r"\bconst\b", p.type) else "void *") + p.name)
            else:
                params.append(f"{self.c_type(p.type)} {p.name}")
        ret_vec = self.vector_of(it.ret)
        ret_c = self.c_type(it.ret)
        if ret_vec is not None:
            elem, n = it.views["dst"]
            pre.append(f"{elem} dst[{n}];")
        elif it.ret != "void":
            pre.append(f"{ret_c} dst = 0;")
        lines = [f"static inline {ret_c} {self.helper_name(name)}({', '.join(params) or 'void'}) {{"]
        if rules:
            for check, message in it.rules:
                lines.append(f"  if (!({self.c_type(check)})) __builtin_trap();  /* {name}: {message} */")
        lines += ["  " + s for s in pre]
        body = self.c_type(it.body).strip().splitlines()
        if it.lanes is not None:
            clause = f" reduction({it.reduction})" if it.reduction else ""
            # a lane loop that touches memory under its mask (masked loads and stores) gets no
            # `omp simd`: under it GCC may load every lane unconditionally, reading past the
            # end of a buffer where the intrinsic itself suppresses the masked-out lanes' faults
            masked_memory = any("*" in p.type for p in it.params) and re.search(r"\?|\bif\b", it.body)
            if not masked_memory:
                lines.append(f"  #pragma omp simd{clause}")
            lines.append(f"  for (int j = 0; j < {it.lanes}; ++j) {{")
            lines += ["    " + s.strip() for s in body]
            lines.append("  }")
        else:
            lines += ["  " + s.strip() for s in body]
        if ret_vec is not None:
            lines.append(f"  {ret_c} r;")
            lines.append("  memcpy(&r, dst, sizeof r);")
            lines.append("  return r;")
        elif it.ret != "void":
            lines.append("  return dst;")
        lines.append("}")
        return "\n".join(lines)

    def helpers_c(self, names, *, rules: bool = True, types=()) -> str:
        """Typedefs (of ``types`` plus those the intrinsics use), support code and one helper per
        intrinsic of ``names`` (in catalogue order): self-contained C given <stdint.h>,
        <string.h> and <math.h>."""
        names = [n for n in self.intrinsics if n in set(names)]
        used_types = set(types) | self.types_used(names)
        parts = [self.typedefs_c(used_types)] if used_types else []
        parts += [self.support[s].code.strip() for s in self.support_closure(names)]
        parts += [self.helper_c(n, rules=rules) for n in names]
        return "\n".join(parts) + "\n"

    def by_file(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for it in self.intrinsics.values():
            out.setdefault(it.file, []).append(it.name)
        return out


# ---------------------------------------------------------------------------------- loading
def _fill(value, subst: dict):
    """Replace {key} placeholders (only known keys: C braces stay untouched)."""
    if isinstance(value, str):
        return re.sub(r"\{(\w+)\}", lambda m: str(subst[m.group(1)]) if m.group(1) in subst else m.group(0),
                      value)
    if isinstance(value, list):
        return [_fill(v, subst) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, subst) for k, v in value.items()}
    return value


_SIG = re.compile(r"^\s*(?P<ret>.+?)\s*\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)\s*$", re.S)


def _parse_signature(sig: str, where: str) -> tuple[str, str, tuple[Param, ...]]:
    m = _SIG.match(sig)
    if not m:
        raise IntrinsicsError(f"{where}: cannot read signature {sig!r}")
    params = []
    text = m.group("params").strip()
    if text and text != "void":
        for part in text.split(","):
            pm = re.match(r"^\s*(.*?)\s*\b([A-Za-z_]\w*)\s*$", part)
            if not pm or not pm.group(1):
                raise IntrinsicsError(f"{where}: cannot read parameter {part!r} of {sig!r}")
            params.append(Param(pm.group(1).strip(), pm.group(2)))
    return m.group("ret").strip(), m.group("name"), tuple(params)


def _count(text: str, where: str) -> int:
    if not re.fullmatch(r"[\d\s*+()-]+", str(text)):
        raise IntrinsicsError(f"{where}: lane count {text!r} is not an integer expression")
    return int(eval(str(text), {"__builtins__": {}}))  # digits and + - * only (checked above)


def _view(text: str, where: str) -> tuple[str, int]:
    m = re.fullmatch(r"\s*(\w+)\s*\[(.+)\]\s*", text)
    if not m or m.group(1) not in LANE_TYPES:
        raise IntrinsicsError(f"{where}: view {text!r} must be LANE_TYPE[count] with a lane type of "
                              f"{', '.join(LANE_TYPES)}")
    return m.group(1), _count(m.group(2), where)


def _expand(raw: dict, templates: dict, file: str) -> list[dict]:
    unknown = set(raw) - FIELDS
    if unknown:
        raise IntrinsicsError(f"{file}: entry {raw.get('name')!r} has unknown fields {sorted(unknown)}")
    entry: dict = {}
    variables: dict = {}
    if "template" in raw:
        if raw["template"] not in templates:
            raise IntrinsicsError(f"{file}: entry {raw.get('name')!r} names unknown template {raw['template']!r}")
        tpl = copy.deepcopy(templates[raw["template"]])
        variables.update(tpl.pop("vars", {}))
        entry.update(tpl)
    variables.update(raw.get("vars", {}))
    entry.update({k: copy.deepcopy(v) for k, v in raw.items() if k != "vars"})
    groups = entry.pop("expand", None) or [[{}]]
    out = []
    for combo in itertools.product(*groups):
        e, v = copy.deepcopy(entry), dict(variables)
        for item in combo:
            for k, val in item.items():
                (e if k in FIELDS else v)[k] = copy.deepcopy(val)
        for _ in range(6):                       # nested placeholders ({R} holding {n} ...)
            v = _fill(v, v)
            e = _fill(e, v)
        out.append(e)
    return out


def _intrinsic(e: dict, file: str, cat_types: dict, cat_masks: dict) -> Intrinsic:
    where = f"{file}: {e.get('name')!r}"
    for key in REQUIRED:
        if key not in e:
            raise IntrinsicsError(f"{where}: missing field {key!r}")
    left = re.findall(r"\{(\w+)\}", e["name"] + e["signature"])
    if left:
        raise IntrinsicsError(f"{where}: unfilled placeholders {left}")
    ret, name, params = _parse_signature(e["signature"], where)
    if name != e["name"]:
        raise IntrinsicsError(f"{where}: signature names {name!r}")
    views_raw = dict(e.get("views", {}))
    views = {}

    def vec(spelling):
        if "*" in spelling:
            return None
        return next((cat_types[w] for w in re.findall(r"\w+", spelling) if w in cat_types), None)

    operands = [(p.name, p.type) for p in params] + [("dst", ret)]
    for pname, ptype in operands:
        vt = vec(ptype)
        if vt is None:
            continue
        if pname in views_raw:
            elem, n = _view(views_raw[pname], where)
            if LANE_TYPES[elem] * n != vt.bytes:
                raise IntrinsicsError(f"{where}: view {pname}={views_raw[pname]!r} covers "
                                      f"{LANE_TYPES[elem] * n} bytes, {ptype} has {vt.bytes}")
            views[pname] = (elem, n)
        else:
            views[pname] = (vt.elem, vt.lanes)
    lanes = e.get("lanes")
    lanes = _count(lanes, where) if lanes is not None else None
    rules = []
    for r in e.get("rules", []):
        if set(r) - {"check", "message"} or "check" not in r:
            raise IntrinsicsError(f"{where}: a rule is {{check = C condition, message = text}}")
        rules.append((r["check"], r.get("message", r["check"])))
    isa = e["isa"] if isinstance(e["isa"], list) else [e["isa"]]
    tolerance = e.get("tolerance")
    if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float))
                                  or not 0 < tolerance < 1):
        raise IntrinsicsError(f"{where}: tolerance {tolerance!r} must be a relative error in (0, 1)")
    return Intrinsic(name=name, file=file, source=e["source"], isa=tuple(isa), signature=e["signature"],
                     ret=ret, params=params, views=views, lanes=lanes, reduction=e.get("reduction"),
                     needs=tuple(e.get("needs", [])), body=e["body"], rules=tuple(rules),
                     test=dict(e.get("test", {})), notes=e.get("notes", ""),
                     tolerance=float(tolerance) if tolerance is not None else None)


@lru_cache(maxsize=1)
def _load_cached() -> Catalog:
    files = sorted(HERE.glob("*.toml"))
    data = {}
    for path in files:
        try:
            data[path.name] = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise IntrinsicsError(f"{path.name}: {exc}") from None
    types, masks, constants, support, templates = {}, {}, {}, {}, {}
    for fname, d in data.items():
        unknown = set(d) - {"types", "masks", "constants", "support", "templates", "intrinsic"}
        if unknown:
            raise IntrinsicsError(f"{fname}: unknown tables {sorted(unknown)}")
        for k, v in d.get("types", {}).items():
            if v["elem"] not in LANE_TYPES or v["bytes"] % LANE_TYPES[v["elem"]]:
                raise IntrinsicsError(f"{fname}: type {k}: bad elem/bytes")
            types[k] = VectorType(k, v["c"], v["bytes"], v["elem"])
        for k, v in d.get("masks", {}).items():
            masks[k] = MaskType(k, v["c"], v["bits"])
        constants.update(d.get("constants", {}))
        for k, v in d.get("support", {}).items():
            if k in support:
                raise IntrinsicsError(f"{fname}: support {k!r} defined twice")
            support[k] = Support(k, v["code"], fname)
        for k, v in d.get("templates", {}).items():
            if k in templates:
                raise IntrinsicsError(f"{fname}: template {k!r} defined twice")
            templates[k] = v
    intrinsics: dict = {}
    for fname, d in data.items():
        for raw in d.get("intrinsic", []):
            for e in _expand(raw, templates, fname):
                it = _intrinsic(e, fname, types, masks)
                if it.name in intrinsics:
                    raise IntrinsicsError(f"{fname}: {it.name} described twice (also in "
                                          f"{intrinsics[it.name].file})")
                missing = [n for n in it.needs if n not in support]
                if missing:
                    raise IntrinsicsError(f"{fname}: {it.name} needs unknown support {missing}")
                intrinsics[it.name] = it
    return Catalog(types, masks, constants, support, intrinsics)


def load() -> Catalog:
    """The whole knowledge base (cached; treat it as read-only)."""
    return _load_cached()
