"""Private helpers of the BANG lift (detensorize / task_recovery): intrinsic instantiation.

Everything here is derived from ``platforms/bang/intrinsics`` (the one home of the semantics):

* ``select_form(name, arg_types)`` picks the TOML entry (overload) a call resolves to;
* ``instantiate(form, arg_types, arch_group)`` binds the entry's template parameters from the
  argument types (as C++ deduction would), substitutes them into the prelude / loop / reference
  body, and rewrites the ``xpb::`` helpers of the emulator into plain C (``xpd_*`` functions
  defined in ``HELPERS``, compile-time facts such as ``acc_t`` / ``fill_t`` / ``fix_scale`` folded),
  returning C text that pycparser parses;
* ``helper_defs(names)`` gives the C definitions of the ``xpd_*`` helpers a body uses;
* ``CType`` / ``TypeEnv`` / ``type_of`` a small expression typer over pycparser ASTs.

Checks (strict rules, operand bounds) are not part of a reference body and are dropped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pycparser import c_ast
from pycparser.c_parser import CParser

# ------------------------------------------------------------------------------ types
# canonical scalar types: name -> (size, integral, signed)
SCALARS = {
    "bool": (1, True, False), "char": (1, True, True), "signed char": (1, True, True),
    "unsigned char": (1, True, False), "short": (2, True, True), "unsigned short": (2, True, False),
    "int": (4, True, True), "unsigned int": (4, True, False), "long": (8, True, True),
    "unsigned long": (8, True, False), "long long": (8, True, True),
    "unsigned long long": (8, True, False), "half": (2, False, True), "float": (4, False, True),
    "double": (8, False, True), "long double": (16, False, True), "bfloat16_t": (2, False, True),
    "void": (0, False, False),
}
ALIASES = {
    "int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short",
    "uint16_t": "unsigned short", "int32_t": "int", "uint32_t": "unsigned int",
    "int64_t": "long", "uint64_t": "unsigned long", "size_t": "unsigned long",
    "uintptr_t": "unsigned long", "intptr_t": "long", "ptrdiff_t": "long", "_Bool": "bool",
    "signed": "int", "unsigned": "unsigned int", "short int": "short", "signed short": "short",
    "unsigned short int": "unsigned short", "long int": "long", "long long int": "long long",
    "unsigned long int": "unsigned long", "unsigned long long int": "unsigned long long",
    "signed int": "int", "_Float16": "half", "__fp16": "half", "bfloat16": "bfloat16_t",
    "int8": "signed char", "uint": "unsigned int", "mluMemcpyDirection_t": "int",
}
_RANK = ["bool", "signed char", "char", "unsigned char", "short", "unsigned short", "int",
         "unsigned int", "long", "unsigned long", "long long", "unsigned long long", "half",
         "bfloat16_t", "float", "double", "long double"]


def canon(name: str) -> str:
    name = " ".join(name.replace("const", " ").replace("volatile", " ").split())
    return ALIASES.get(name, name)


@dataclass(frozen=True)
class CType:
    base: str           # spelling as written (without const), e.g. "int8_t", "float"
    ptr: int = 0        # pointer depth (arrays count as pointers: they decay in calls)

    @property
    def scalar(self) -> str:
        return canon(self.base)

    def known(self) -> bool:
        return self.scalar in SCALARS

    def deref(self) -> "CType":
        return CType(self.base, max(self.ptr - 1, 0))


UNKNOWN = CType("?", 0)
INT = CType("int")


def size_of(t: str) -> int:
    return SCALARS[canon(t)][0]


def is_integral(t: str) -> bool:
    c = canon(t)
    return c in SCALARS and SCALARS[c][1]


def decl_type(node) -> CType:
    """CType of a declaration's type node (TypeDecl / PtrDecl / ArrayDecl chain)."""
    ptr = 0
    while True:
        if isinstance(node, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            ptr += 1
            node = node.type
        elif isinstance(node, c_ast.TypeDecl):
            node = node.type
        elif isinstance(node, c_ast.IdentifierType):
            return CType(" ".join(node.names), ptr)
        elif isinstance(node, c_ast.Typename):
            node = node.type
        else:
            return CType("?", ptr)


class TypeEnv:
    """Names -> CType: file-scope declarations plus every declaration of one function."""

    def __init__(self, names: dict[str, CType] | None = None):
        self.names: dict[str, CType] = dict(names or {})

    def child(self) -> "TypeEnv":
        return TypeEnv(self.names)

    def add_decls(self, node) -> None:
        class V(c_ast.NodeVisitor):
            def visit_Decl(v, n):
                if n.name and not isinstance(n.type, c_ast.FuncDecl):
                    self.names[n.name] = decl_type(n.type)
                v.generic_visit(n)

        V().visit(node)


_MATH_FLOAT = re.compile(r"^(exp|log|sqrt|sin|cos|tan|tanh|fabs|pow|exp2|log2|erf|floor|ceil|round|fmax|fmin)f$")


def _arith(a: CType, b: CType) -> CType:
    if a.ptr or b.ptr:
        return a if a.ptr else b
    ra = _RANK.index(a.scalar) if a.scalar in _RANK else 6
    rb = _RANK.index(b.scalar) if b.scalar in _RANK else 6
    r = max(ra, rb, 6)  # integer promotion to int
    return CType(_RANK[r])


def type_of(e, env: TypeEnv) -> CType:
    """Best-effort C type of an expression (enough for template deduction)."""
    if isinstance(e, c_ast.ID):
        return env.names.get(e.name, INT if e.name not in env.names else UNKNOWN)
    if isinstance(e, c_ast.Constant):
        t, v = e.type, e.value.lower()
        if t in ("float", "double"):
            return CType("float" if v.endswith("f") else "double")
        if t == "string":
            return CType("char", 1)
        if t == "char":
            return CType("char")
        if "unsigned" in t and "long" in t:
            return CType("unsigned long long" if t.count("long") > 1 else "unsigned long")
        if "long" in t:
            return CType("long long" if t.count("long") > 1 else "long")
        if "unsigned" in t:
            return CType("unsigned int")
        if t == "bool":
            return CType("bool")
        return INT
    if isinstance(e, c_ast.Cast):
        return decl_type(e.to_type)
    if isinstance(e, c_ast.ArrayRef):
        return type_of(e.name, env).deref()
    if isinstance(e, c_ast.UnaryOp):
        if e.op == "&":
            t = type_of(e.expr, env)
            return CType(t.base, t.ptr + 1)
        if e.op == "*":
            return type_of(e.expr, env).deref()
        if e.op in ("sizeof", "_Alignof"):
            return CType("unsigned long")
        if e.op == "!":
            return INT
        t = type_of(e.expr, env)
        if e.op in ("-", "+", "~") and not t.ptr:
            return _arith(t, INT) if is_integral(t.base) and t.known() else t
        return t
    if isinstance(e, c_ast.BinaryOp):
        if e.op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
            return INT
        a, b = type_of(e.left, env), type_of(e.right, env)
        if e.op == "-" and a.ptr and b.ptr:
            return CType("long")
        if e.op in ("<<", ">>"):
            return _arith(a, INT)
        return _arith(a, b)
    if isinstance(e, c_ast.TernaryOp):
        a, b = type_of(e.iftrue, env), type_of(e.iffalse, env)
        return a if a.ptr else _arith(a, b)
    if isinstance(e, c_ast.Assignment):
        return type_of(e.lvalue, env)
    if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID):
        if _MATH_FLOAT.match(e.name.name):
            return CType("float")
        return UNKNOWN
    return UNKNOWN


# ------------------------------------------------------------------------------ forms
@lru_cache(maxsize=1)
def _forms() -> dict[str, list[dict]]:
    import platforms

    out: dict[str, list[dict]] = {}
    for e in platforms.intrinsics("bang"):
        e = dict(e)
        e["tparams"], e["ret"], e["params"] = parse_signature(e["signature"])
        out.setdefault(e["name"], []).append(e)
    return out


def names() -> set[str]:
    return set(_forms())


def parse_signature(sig: str) -> tuple[list[str], str, list[tuple[str, str]]]:
    """(template params, return type, [(param type, param name)])."""
    tparams: list[str] = []
    m = re.match(r"\s*template\s*<([^>]*)>\s*", sig)
    if m:
        tparams = [p.split()[-1] for p in m.group(1).split(",") if p.strip()]
        sig = sig[m.end():]
    head, _, rest = sig.partition("(")
    ret = " ".join(head.split()[:-1]).replace("inline", "").strip()
    plist = rest.rsplit(")", 1)[0]
    params = []
    depth, cur = 0, ""
    for ch in plist + ",":
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            if cur.strip():
                mm = re.match(r"(.*?)(\w+)\s*$", cur.strip(), re.S)
                params.append((mm.group(1).strip(), mm.group(2)))
            cur = ""
        else:
            cur += ch
    return tparams, ret, params


def _is_ptr_param(ptype: str) -> bool:
    return ptype.rstrip().endswith("*")


def select_form(name: str, arg_types: list[CType]) -> dict | None:
    """The overload a call with these argument types resolves to (arity, then pointer-ness)."""
    cands = [f for f in _forms().get(name, []) if len(f["params"]) == len(arg_types)]
    if len(cands) > 1:
        def fits(f):
            for (pt, _), at in zip(f["params"], arg_types):
                if at is UNKNOWN:
                    continue
                if _is_ptr_param(pt) != (at.ptr > 0):
                    return False
            return True
        fitting = [f for f in cands if fits(f)]
        cands = fitting or cands
    return cands[0] if len(cands) == 1 else (cands[0] if cands else None)


class InstantiationError(ValueError):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def bind(form: dict, arg_types: list[CType]) -> dict[str, str]:
    """Template parameter -> C spelling, deduced from the arguments (C++ rules, simplified)."""
    binding: dict[str, str] = {}
    for (ptype, pname), at in zip(form["params"], arg_types):
        t = " ".join(ptype.replace("const", " ").split())
        m = re.fullmatch(r"(\w+)\s*\*", t)
        if m and m.group(1) in form["tparams"]:
            want, got = m.group(1), (canon(at.base) if at.ptr == 1 else None)
            if got is None or not at.known() or got == "void":
                raise InstantiationError("XP-DETENSOR-003", f"{form['name']}: cannot deduce {want} from "
                                         f"argument '{pname}' (type {at.base}{'*' * at.ptr})")
        elif t in form["tparams"]:
            want, got = t, (canon(at.base) if at.ptr == 0 and at.known() else None)
            if got is None:
                raise InstantiationError("XP-DETENSOR-003", f"{form['name']}: cannot deduce {t} from "
                                         f"argument '{pname}'")
        else:
            continue
        if want in binding and binding[want] != got:
            raise InstantiationError("XP-DETENSOR-003", f"{form['name']}: {want} deduced as both "
                                     f"{binding[want]} and {got}")
        binding[want] = got
    missing = [t for t in form["tparams"] if t not in binding]
    if missing:
        raise InstantiationError("XP-DETENSOR-003", f"{form['name']}: cannot deduce {', '.join(missing)}")
    return binding


_FILL = {"double": "float", "long double": "float", "bool": "signed char", "long": "int",
         "unsigned long": "unsigned int", "long long": "int", "unsigned long long": "unsigned int"}
ROUND_MODES = ["RN", "TZ", "OZ", "UP", "DN", "RD", "RM"]


def mangle(t: str) -> str:
    return re.sub(r"\W+", "_", canon(t))


def _subst_words(text: str, mapping: dict[str, str]) -> str:
    if not mapping:
        return text
    rx = re.compile(r"(?<![\w:.])(" + "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True)) + r")\b")
    return rx.sub(lambda m: mapping[m.group(1)], text)


def lower_text(text: str, arch_group: int, used: set[str]) -> str:
    """Rewrite the emulator helpers of a (type-substituted) body into plain C; records the
    ``xpd_*`` helpers needed in ``used``. Raises InstantiationError for anything left over."""
    t = text
    t = re.sub(r"\bxpb::copy_range\s*\([^;]*\)\s*;", "", t)
    t = re.sub(r"\bXPB_ARCH_GROUP\b", str(arch_group), t)
    t = re.sub(r"\bxpb::same_t<([^<>]+)>", r"\1", t)
    t = re.sub(r"\bxpb::fill_t<([^<>]+)>", lambda m: _FILL.get(canon(m.group(1)), m.group(1).strip()), t)
    t = re.sub(r"\bxpb::acc_t<([^<>,]+),([^<>]+)>",
               lambda m: "long long" if is_integral(m.group(1)) and is_integral(m.group(2)) else "float", t)

    def fix(m):
        # 2^fix_position when an operand is fixed point; a float product is not scaled
        if is_integral(m.group(1)) or is_integral(m.group(2)):
            used.add("xpd_exp2i")
            return f"xpd_exp2i({m.group(3)})"
        return "1.0"
    t = re.sub(r"\bxpb::fix_scale<([^<>,]+),([^<>]+)>\s*\(([^()]*)\)", fix, t)
    t = re.sub(r"\bxpb::to_acc<(\w+)>\s*\(", r"(\1)(", t)
    t = re.sub(r"\b(?:typename\s+)?std::conditional<\s*sizeof\(([^()]+)\)\s*==\s*(\d+)\s*,\s*([^,<>]+),\s*([^,<>]+)>::type",
               lambda m: (m.group(3) if size_of(m.group(1)) == int(m.group(2)) else m.group(4)).strip(), t)

    def from_f64(m):
        name = "xpd_from_f64_" + mangle(m.group(1))
        used.add(name)
        return name + "("
    t = re.sub(r"\bxpb::from_f64<([^<>]+)>\s*\(", from_f64, t)
    for mode in ROUND_MODES:
        t = re.sub(r"\bxpb::" + mode + r"\b", "XPD_" + mode, t)
    for fn in ("f64", "isnan_", "abs_", "div_", "f2h", "round_int", "exp2i", "f32"):
        new = "xpd_" + fn.rstrip("_")
        if re.search(r"\bxpb::" + fn + r"\s*\(", t):
            used.add(new)
            t = re.sub(r"\bxpb::" + fn + r"\s*\(", new + "(", t)
    if "XPD_" in t:
        used.add("XPD_modes")
    left = re.search(r"\b(?:xpb|std)::\w+", t)
    if left:
        raise InstantiationError("XP-DETENSOR-004", f"the reference body uses '{left.group(0)}', which has "
                                 "no plain-C lowering")
    return t


@dataclass
class Instance:
    form: dict
    params: list[tuple[str, str]]        # (C type, name) after substitution
    prelude: str                         # C statements run before the body
    loop: str | None                     # element-loop bound (body runs for i in [0, loop)) or None
    body: str                            # the reference body, types substituted, lowered to C
    helpers: set[str]
    ret: str = "void"                    # the return type, types substituted


def instantiate(form: dict, arg_types: list[CType], arch_group: int, returns: bool = False) -> Instance:
    """Bind the form's template parameters from ``arg_types`` and lower its texts to plain C.
    ``returns``: the body may end with ``return E;`` (a value builtin whose result the caller
    stores); otherwise a ``return`` is refused."""
    binding = bind(form, arg_types)
    used: set[str] = set()
    params = []
    for ptype, pname in form["params"]:
        pt = " ".join(lower_text(_subst_words(ptype, binding), arch_group, used).split())
        params.append(("int" if pt == "mluMemcpyDirection_t" else pt, pname))
    prelude = lower_text(_subst_words(form.get("prelude") or "", binding), arch_group, used)
    body = lower_text(_subst_words(form["body"], binding), arch_group, used)
    if re.search(r"\breturn\b", body) and not (returns and not form.get("loop")
                                                and len(re.findall(r"\breturn\b", body)) == 1
                                                and re.search(r"\breturn\b[^;]*;\s*$", body)):
        raise InstantiationError("XP-DETENSOR-002", f"{form['name']} returns a value; only statement "
                                 "intrinsics and stored results (x = f(...); T x = f(...);) are inlined")
    loop = lower_text(_subst_words(form["loop"], binding), arch_group, used) if form.get("loop") else None
    ret = " ".join(_subst_words(form.get("ret") or "void", binding).split())
    return Instance(form, params, prelude, loop, body, used, ret)


# ------------------------------------------------------------------------------ parsing C text
_TYPEDEFS = ["half", "bfloat16_t", "size_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t",
             "uint32_t", "int64_t", "uint64_t", "uintptr_t", "intptr_t", "ptrdiff_t"]


def parse_block(text: str, extra_types: tuple[str, ...] = ()) -> c_ast.Compound:
    """Parse C statements into a Compound (coordinates cleared)."""
    head = "".join(f"typedef int {t};\n" for t in (*_TYPEDEFS, *extra_types))
    src = head + "void __xpd_block(void) {\n" + text + "\n}\n"
    ast = CParser(dialect="c23").parse(src, "<intrinsic>")
    fn = ast.ext[-1]
    clear_coords(fn.body)
    return fn.body


def parse_decls(text: str, extra_types: tuple[str, ...] = ()) -> list:
    head = "".join(f"typedef int {t};\n" for t in (*_TYPEDEFS, *extra_types))
    ast = CParser(dialect="c23").parse(head + text, "<helpers>")
    out = ast.ext[len(_TYPEDEFS) + len(extra_types):]
    for n in out:
        clear_coords(n)
    return out


def clear_coords(node) -> None:
    for n in walk(node):
        n.coord = None


def walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        yield n
        stack.extend(c for _, c in n.children())


# ------------------------------------------------------------------------------ helpers (plain C)
_INT_TYPES = ["signed char", "char", "unsigned char", "short", "unsigned short", "int", "unsigned int",
              "long", "unsigned long", "long long", "unsigned long long"]
_FLOAT_TYPES = ["half", "float", "double"]
_LIMITS = {"signed char": ("-128", "127"), "char": ("-128", "127"), "unsigned char": ("0", "255"),
           "short": ("-32768", "32767"), "unsigned short": ("0", "65535"),
           "int": ("-2147483648.0", "2147483647.0"), "unsigned int": ("0", "4294967295.0"),
           "long": ("-9223372036854775808.0", "9223372036854775807.0"),
           "long long": ("-9223372036854775808.0", "9223372036854775807.0"),
           "unsigned long": ("0", "18446744073709551615.0"),
           "unsigned long long": ("0", "18446744073709551615.0"), "bool": ("0", "1")}


def _helper_text(name: str) -> str:
    if name == "XPD_modes":
        return "enum { XPD_RN = 0, XPD_TZ = 1, XPD_OZ = 2, XPD_UP = 3, XPD_DN = 4, XPD_RD = 5, XPD_RM = 6 };"
    if name == "xpd_exp2i":
        return "static inline double xpd_exp2i(int e) { return ldexp(1.0, e); }"
    if name == "xpd_f64":
        return "\n".join(f"static inline double xpd_f64({t} v) {{ return (double)v; }}" for t in _INT_TYPES + ["float", "double"]) + \
            "\nstatic inline double xpd_f64(half v) { return (double)(float)v; }"
    if name == "xpd_f32":
        return "\n".join(f"static inline float xpd_f32({t} v) {{ return (float)v; }}" for t in _INT_TYPES + _FLOAT_TYPES)
    if name == "xpd_isnan":
        return "\n".join(f"static inline bool xpd_isnan({t} v) {{ return false; }}" for t in _INT_TYPES) + "\n" + \
            "\n".join(f"static inline bool xpd_isnan({t} v) {{ return v != v; }}" for t in _FLOAT_TYPES)
    if name == "xpd_abs":
        return "\n".join(f"static inline {t} xpd_abs({t} v) {{ return ({t})(v < 0 ? -v : v); }}" for t in _INT_TYPES) + "\n" + \
            "\n".join(f"static inline {t} xpd_abs({t} v) {{ return ({t})fabs((double)(float)v); }}" for t in _FLOAT_TYPES)
    if name == "xpd_div":
        return "\n".join(f"static inline {t} xpd_div({t} a, {t} b) {{ if (b == 0) return ({t})0; return ({t})(a / b); }}"
                         for t in _INT_TYPES) + "\n" + \
            "\n".join(f"static inline {t} xpd_div({t} a, {t} b) {{ return ({t})((float)a / (float)b); }}" for t in ("half", "float")) + \
            "\nstatic inline double xpd_div(double a, double b) { return (double)((float)a / (float)b); }"
    if name.startswith("xpd_from_f64_"):
        m = name[len("xpd_from_f64_"):]
        t = next((x for x in _INT_TYPES + _FLOAT_TYPES + ["bool"] if mangle(x) == m), None)
        if t is None:
            raise InstantiationError("XP-DETENSOR-004", f"no plain-C conversion to '{m}'")
        if t in _FLOAT_TYPES:
            return f"static inline {t} {name}(double v) {{ return ({t})v; }}"
        lo, hi = _LIMITS[t]
        return (f"static inline {t} {name}(double v) {{ if (v != v) return ({t})0; double r = nearbyint(v); "
                f"if (r < (double)({lo})) return ({t})({lo}); if (r > (double)({hi})) return ({t})({hi}); return ({t})r; }}")
    if name == "xpd_round_int":
        return ("static inline double xpd_round_int(double v, int m) {\n"
                "  if (m == 0) return nearbyint(v);\n  if (m == 1) return trunc(v);\n"
                "  if (m == 2) return v < 0 ? floor(v) : ceil(v);\n  if (m == 3) return ceil(v);\n"
                "  if (m == 4) return floor(v);\n  if (m == 5) return round(v);\n"
                "  if (m == 6) return floor(v + 0.5);\n  return v;\n}")
    if name == "xpd_f2h":
        return """static inline half xpd_f2h_step(half x, bool up) {
  unsigned short b;
  memcpy(&b, &x, 2);
  bool neg = (b & 0x8000) != 0;
  if ((b & 0x7fff) == 0) b = up ? 0x0001 : 0x8001;
  else if (up != neg) b = (unsigned short)(b + 1);
  else b = (unsigned short)(b - 1);
  half r;
  memcpy(&r, &b, 2);
  return r;
}
static inline half xpd_f2h(float f, int m) {
  half h = (half)f;
  double v = f, hv = (double)(float)h;
  if (v != v || hv == v) return h;
  half lo = h, hi = h;
  if (hv < v) hi = xpd_f2h_step(h, true); else lo = xpd_f2h_step(h, false);
  double lv = (double)(float)lo, uv = (double)(float)hi;
  if (lv > 65504.0) { lv = 65504.0; lo = (half)65504.0f; }
  if (uv < -65504.0) { uv = -65504.0; hi = (half)-65504.0f; }
  if (m == 0) return h;
  if (m == 1) return v > 0 ? lo : hi;
  if (m == 2) return v > 0 ? hi : lo;
  if (m == 3) return hi;
  if (m == 4) return lo;
  if (m == 5) { double dl = v - lv, du = uv - v; if (dl == du) return v > 0 ? hi : lo; return dl < du ? lo : hi; }
  if (m == 6) { double dl = v - lv, du = uv - v; if (dl == du) return hi; return dl < du ? lo : hi; }
  return h;
}"""
    raise InstantiationError("XP-DETENSOR-004", f"unknown helper {name}")


HELPER_ORDER = ["XPD_modes", "xpd_exp2i", "xpd_f64", "xpd_f32", "xpd_isnan", "xpd_abs", "xpd_div",
                "xpd_round_int", "xpd_f2h"]


def helper_defs(used: set[str]) -> list:
    """pycparser nodes defining the helpers in ``used`` (stable order)."""
    order = [n for n in HELPER_ORDER if n in used] + sorted(n for n in used if n not in HELPER_ORDER)
    if not order:
        return []
    return parse_decls("\n".join(_helper_text(n) for n in order))


HELPER_PREFIX = "xpd_"
