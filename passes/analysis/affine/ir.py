"""affine IR: the data structures the walker builds and the analyses read.

A subscript, a loop bound or a guard is a small integer expression tree (``IR``, its grammar
below) over loop variables, locals and the entry's scalars. ``LoopInfo`` (one ``for`` loop),
``Access`` (one memory reference) and ``NestInfo`` (the entry function: loops, accesses,
locals, refused constructs) hold a walked loop nest. Also here: the call vocabulary the walker
classifies calls by (pure, check and memory functions), the byte sizes of C scalar types
(``bytes_of_words``, ``buffer_elem_bytes``) and small traversals of an IR (``locals_in``,
``subst_var``, ``const_ir``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pycparser import c_ast


# ('c', int) constant | ('s', name) entry scalar / host constant | ('v', uid) loop variable
# ('l', uid) local with unknown value | ('a', text) opaque scalar-only sub-expression (atom)
# (op, a, b) for op in + - * / % | ('neg', a)
# conditions: (op, a, b) for < <= == != (on IR) | ('&&', c, c) | ('||', c, c) | ('!', c)
IR = Any

PURE_FUNCTIONS = frozenset("""
expf exp exp2f exp2 expm1f logf log log2f log2 log10f log1pf sqrtf sqrt rsqrtf cbrtf powf pow
fabsf fabs abs labs llabs fmaxf fmax fminf fmin tanhf tanh sinhf coshf sinf sin cosf cos tanf
atanf atan2f asinf acosf erff erf erfcf floorf floor ceilf ceil roundf round truncf trunc rintf
rint nearbyintf nearbyint lrintf lrint llrintf llrint lroundf lround llroundf llround asinhf asinh
acoshf acosh atanhf atanh tgammaf tgamma lgammaf lgamma fdimf fdim remainderf remainder fmodf fmod
copysignf copysign ldexpf ldexp frexpf max min isnan isinf fmaf fma
nextafterf nextafter scalbnf scalbn ilogbf ilogb logbf logb hypotf hypot cbrt expm1 log1p log10
erfc isfinite signbit
""".split()) | frozenset(
    # the compiler's bit builtins that device code may call too (nvcc takes exactly these;
    # ctz / parity / bswap and the `long` forms are host-only there): a lifted `__popc`,
    # `__clz` or `__ffs` is defined with them
    "__builtin_popcount __builtin_popcountll __builtin_clz __builtin_clzll __builtin_ffs "
    "__builtin_ffsll".split())
# calls that only read their operands and may stop the program: no element is written, and
# the outcome (a failed check aborts) does not depend on the order iterations run in
CHECK_CALLS = frozenset({"assert"})
# calls that only read their operands and write to a stream (a host's error message after a
# status check): no element of the program's memory changes
OUTPUT_CALLS = frozenset({"printf", "fprintf", "puts", "fputs", "putchar", "fputc", "fflush", "perror"})
_INT_TYPES = frozenset("int unsigned signed long short char size_t int32_t int64_t uint32_t "
                       "uint64_t int16_t uint16_t int8_t uint8_t ptrdiff_t bool".split())


@dataclass
class Var:
    name: str
    uid: str
    kind: str                      # ptr | scalar | loop | local | alias | array | symbol
    owners: tuple = ()             # LoopInfo objects enclosing the declaration
    value: IR = None               # loop: ('v', uid); local: substituted IR or ('l', uid)
    root: str | None = None        # alias/ptr: the pointer parameter (or array uid)
    offset: IR = None              # alias: element offset into root
    dims: tuple = ()               # array: constant dimensions
    decl: c_ast.Node | None = None


@dataclass(eq=False)
class LoopInfo:
    var: str
    uid: str
    node: c_ast.For
    parent: "LoopInfo | None"
    depth: int
    canonical: bool = False
    reason: str = ""
    lo: IR = None                  # smallest value (inclusive) the variable may take
    hi: IR = None                  # exclusive upper bound
    start: IR = None               # first value
    step: int = 1                  # signed constant step
    accesses: list = field(default_factory=list)
    scalar_writes: list = field(default_factory=list)   # (Var, node, is_loop_header)
    children: list = field(default_factory=list)
    escapes: list = field(default_factory=list)         # break/continue/return/goto at its level
    unknown_calls: list = field(default_factory=list)   # (name, node)

    def ancestors(self) -> list["LoopInfo"]:
        out, p = [], self.parent
        while p is not None:
            out.append(p)
            p = p.parent
        return out[::-1]


@dataclass(eq=False)
class Access:
    buffer: str                    # pointer parameter name, or local array uid
    is_param: bool
    index: IR                      # element index (None: not analysable)
    read: bool
    write: bool
    loops: tuple                   # enclosing LoopInfo, outermost first
    guards: tuple                  # conditions known to hold
    node: c_ast.Node
    owners: dict = field(default_factory=dict)   # local uid -> owners (for opaque locals)
    byte_index: IR = None          # reinterpreting access (``((uint8_t *) p)[j]``): first byte
    width: int = 0                 # ... and the number of bytes it covers (index is then None)
    facts: tuple = ()              # invariants that hold where it runs (running counters' bounds)


@dataclass
class NestInfo:
    function: c_ast.FuncDef
    params: dict                   # name -> Param
    loops: list                    # all LoopInfo in program order
    top: list                      # outermost LoopInfo (children of the function body)
    accesses: list                 # every Access (also outside loops)
    loop_of: dict                  # id(For node) -> LoopInfo
    problems: list                 # (code, message, node): constructs the analysis refuses
    locals: dict = field(default_factory=dict)    # uid -> Var


# ------------------------------------------------------------------------------ C types
def type_names(node) -> list[str]:
    while node is not None and not isinstance(node, c_ast.IdentifierType):
        node = getattr(node, "type", None)
    return list(node.names) if node is not None else []


def is_int_type(node) -> bool:
    return is_int_words(type_names(node))


def is_int_words(names) -> bool:
    return bool(names) and all(n in _INT_TYPES for n in names)


MEM_FUNCTIONS = frozenset({"memcpy", "memmove", "memset"})
_WORD_BYTES = {"char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1, "_Bool": 1, "short": 2,
               "int16_t": 2, "uint16_t": 2, "int": 4, "unsigned": 4, "int32_t": 4,
               "uint32_t": 4, "float": 4, "long": 8, "int64_t": 8, "uint64_t": 8, "double": 8,
               "size_t": 8,
               # CUDA / HIP vector types of the lifts' runtime (structs of 2 or 4 lanes)
               "float2": 8, "float4": 16, "int2": 8, "int4": 16, "uint2": 8, "uint4": 16,
               "double2": 16, "char4": 4, "uchar4": 4, "short2": 4, "short4": 8,
               # half precision and its packed pairs (cuda_fp16.h, cuda_bf16.h, HIP's)
               "half": 2, "__half": 2, "__nv_half": 2, "half2": 4, "__half2": 4, "_Float16": 2,
               "__bf16": 2, "bfloat16_t": 2,
               "__nv_half2": 4, "__nv_bfloat16": 2, "__hip_bfloat16": 2, "__nv_bfloat162": 4,
               "__hip_bfloat162": 4}


def bytes_of_words(words) -> int | None:
    """Size of a scalar type given by its words (``unsigned short`` -> 2), None if unknown."""
    w = [x for x in words if x not in ("const", "volatile", "signed", "struct")]
    if not w:
        return None
    if "long" in w:
        return 8 if w.count("long") >= 1 and "double" not in w else None
    if "short" in w:
        return 2
    if "char" in w:
        return 1
    if w == ["unsigned"] or w == ["unsigned", "int"]:
        return 4
    if len(w) == 2 and w[0] == "unsigned":
        w = w[1:]
    return _WORD_BYTES.get(w[0]) if len(w) == 1 else None


def type_names_text(t: str) -> list[str]:
    words = t.replace("*", " ").replace("&", " ").split()
    return [w for w in words if w not in ("const", "volatile", "__restrict__", "__restrict",
                                          "restrict")]


def buffer_elem_bytes(info: NestInfo, buffer: str) -> int | None:
    """Element size in bytes of a pointer parameter or local array (uid)."""
    p = info.params.get(buffer)
    if p is not None:
        return bytes_of_words(type_names_text(p.type))
    var = info.locals.get(buffer)
    if var is None or var.decl is None:
        return None
    t = var.decl.type
    while isinstance(t, (c_ast.ArrayDecl, c_ast.PtrDecl)):
        t = t.type
    return bytes_of_words(type_names(t))


# ------------------------------------------------------------------------------ IR traversals
def locals_in(ir, out: set) -> set:
    if isinstance(ir, tuple):
        if ir and ir[0] == "l":
            out.add(ir[1])
        for x in ir[1:]:
            locals_in(x, out)
    return out


def _uses_opaque(ir) -> bool:
    return bool(locals_in(ir, set()))


def replace_ir(ir, old, new):
    """``ir`` with every sub-expression equal to ``old`` (a loop variable ``('v', uid)``, a
    local ``('l', uid)``) replaced by ``new``."""
    if ir == old:
        return new
    if not isinstance(ir, tuple):
        return ir
    return tuple(replace_ir(x, old, new) if isinstance(x, tuple) else x for x in ir)


def subst_var(ir, old: str, new: str):
    """``ir`` with loop variable ``old`` renamed ``new``."""
    return replace_ir(ir, ("v", old), ("v", new))


def _sum_terms(ir) -> list:
    return _sum_terms(ir[1]) + _sum_terms(ir[2]) if ir[0] == "+" else [ir]


def _quotient_times(term):
    """(x, d, kind) of ``(x / d) * d`` (either operand order; ``fdiv``: a shift), else None."""
    if term[0] != "*":
        return None
    for q, m in ((term[1], term[2]), (term[2], term[1])):
        if q[0] in ("/", "fdiv") and q[2] == m:
            return q[1], q[2], q[0]
    return None


def recombine_divmod(ir):
    """A sum with the terms ``(x / d) * d`` and ``x % d`` reads ``x`` there: C's ``/`` and
    ``%`` satisfy ``x == (x / d) * d + x % d`` for every ``x`` and ``d != 0`` (``fdiv`` /
    ``fmod`` likewise). A flattened index split into coordinates and put back together
    (``(i / (h*w)) * (h*w) + (i % (h*w) / w) * w + i % (h*w) % w``) is ``i`` again."""
    terms = _sum_terms(ir)
    if len(terms) < 2:
        return ir
    changed = True
    while changed:
        changed = False
        for a, t in enumerate(terms):
            qt = _quotient_times(t)
            if qt is None:
                continue
            x, d, kind = qt
            rem = ("%" if kind == "/" else "fmod", x, d)
            b = next((b for b, u in enumerate(terms) if b != a and u == rem), None)
            if b is None:
                continue
            terms = [u for k, u in enumerate(terms) if k not in (a, b)] + [x]
            changed = True
            break
    out = terms[0]
    for t in terms[1:]:
        out = ("+", out, t)
    return out


def const_ir(ir) -> int | None:
    """Value of an IR built from integer constants only (``256u * 4u`` -> 1024), else None."""
    if not ir:
        return None
    tag = ir[0]
    if tag == "c":
        return ir[1]
    if tag == "neg":
        a = const_ir(ir[1])
        return None if a is None else -a
    if tag in ("+", "-", "*"):
        a, b = const_ir(ir[1]), const_ir(ir[2])
        if a is None or b is None:
            return None
        return a + b if tag == "+" else a - b if tag == "-" else a * b
    return None
