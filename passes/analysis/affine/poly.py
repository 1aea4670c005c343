"""affine polynomials: integer polynomials over the entry's scalars, loop variables and atoms.

``to_poly`` converts an IR (None when it reads a local of unknown value); a scalar-only
sub-expression it cannot expand (a division by a scalar, a conditional) becomes an atom whose
IR is remembered, so that ``ir_of_poly`` can hand a Poly back to Z3. ``ir_c_text`` and
``Poly.c_text`` write them as C text.
"""
from __future__ import annotations

from typing import Any


class Poly:
    """Integer polynomial: {monomial (sorted tuple of symbol keys): coefficient}."""

    __slots__ = ("t",)

    def __init__(self, terms=None):
        self.t = {m: c for m, c in (terms or {}).items() if c != 0}

    @staticmethod
    def const(c: int) -> "Poly":
        return Poly({(): c})

    @staticmethod
    def sym(key: str) -> "Poly":
        return Poly({(key,): 1})

    def __add__(self, o):
        t = dict(self.t)
        for m, c in o.t.items():
            t[m] = t.get(m, 0) + c
        return Poly(t)

    def __neg__(self):
        return Poly({m: -c for m, c in self.t.items()})

    def __sub__(self, o):
        return self + (-o)

    def __mul__(self, o):
        t: dict = {}
        for m1, c1 in self.t.items():
            for m2, c2 in o.t.items():
                m = tuple(sorted(m1 + m2))
                t[m] = t.get(m, 0) + c1 * c2
        return Poly(t)

    def is_const(self) -> bool:
        return all(m == () for m in self.t)

    def value(self) -> int:
        return self.t.get((), 0)

    def keys(self) -> set:
        return {k for m in self.t for k in m}

    def split(self, key: str):
        """(coefficient of key, rest) when degree in key <= 1, else None."""
        coef, rest = {}, {}
        for m, c in self.t.items():
            n = m.count(key)
            if n == 0:
                rest[m] = c
            elif n == 1:
                mm = list(m)
                mm.remove(key)
                coef[tuple(mm)] = c
            else:
                return None
        return Poly(coef), Poly(rest)

    def sign(self) -> int | None:
        """+1 / -1 / 0 when provable with every symbol >= 0, else None."""
        if not self.t:
            return 0
        if all(c > 0 for c in self.t.values()):
            return 1
        if all(c < 0 for c in self.t.values()):
            return -1
        return None

    def subst(self, key: str, value: "Poly") -> "Poly":
        out = Poly()
        for m, c in self.t.items():
            term = Poly.const(c)
            for k in m:
                term = term * (value if k == key else Poly.sym(k))
            out = out + term
        return out

    def c_text(self) -> str:
        if not self.t:
            return "0"
        parts = []
        for m in sorted(self.t, key=lambda m: (-len(m), m)):
            c = self.t[m]
            names = [_key_text(k) for k in m]
            mag = abs(c)
            body = " * ".join(names) if names else str(mag)
            if names and mag != 1:
                body = f"{mag} * {body}"
            parts.append(("-" if c < 0 else "+", body))
        text = ("-" if parts[0][0] == "-" else "") + parts[0][1]
        for sgn, body in parts[1:]:
            text += f" {sgn} {body}"
        return text

    def __repr__(self):
        return f"Poly({self.c_text()})"


def _key_text(key: str) -> str:
    kind, _, rest = key.partition(":")
    return rest if kind in ("s", "a") else rest.split("#")[0]


def ir_c_text(ir) -> str | None:
    """C text of an IR over scalars (None if it mentions loop variables or opaque locals)."""
    tag = ir[0]
    if tag == "c":
        return str(ir[1])
    if tag in ("s", "a"):
        return ir[1]
    if tag in ("v", "l"):
        return None
    if tag == "neg":
        a = ir_c_text(ir[1])
        return None if a is None else f"(-{a})"
    if tag == "?":
        c, a, b = _cond_text(ir[1]), ir_c_text(ir[2]), ir_c_text(ir[3])
        return None if c is None or a is None or b is None else f"({c} ? {a} : {b})"
    a, b = ir_c_text(ir[1]), ir_c_text(ir[2])
    if a is None or b is None:
        return None
    op = {"fdiv": ">>", "fmod": "&"}.get(tag, tag)
    if tag == "fdiv":
        b = str(ir[2][1].bit_length() - 1)
    if tag == "fmod":
        b = str(ir[2][1] - 1)
    return f"({a} {op} {b})"


def _cond_text(c) -> str | None:
    """C text of a condition IR over scalars (None if it mentions loop variables or locals)."""
    if c[0] == "!":
        a = _cond_text(c[1])
        return None if a is None else f"(!{a})"
    if c[0] in ("&&", "||"):
        a, b = _cond_text(c[1]), _cond_text(c[2])
    else:
        a, b = ir_c_text(c[1]), ir_c_text(c[2])
    return None if a is None or b is None else f"({a} {c[0]} {b})"


def to_poly(ir) -> Poly | None:
    if not ir:
        return None                    # unknown (a bound of a loop that is not counted)
    tag = ir[0]
    if tag == "c":
        return Poly.const(ir[1])
    if tag == "s":
        return Poly.sym("s:" + ir[1])
    if tag == "v":
        return Poly.sym("v:" + ir[1])
    if tag == "l":
        return None
    if tag == "?":
        # a conditional over the scalars only (``e = n - 15 > e0 ? ... : e0``, the end of a
        # vector loop): an atom, which guards on the same value can cancel
        text = ir_c_text(ir)
        return None if text is None else atom(text, ir)
    if tag == "neg":
        a = to_poly(ir[1])
        return None if a is None else -a
    if tag in ("/", "%", "fdiv", "fmod"):
        a, b = to_poly(ir[1]), to_poly(ir[2])
        if a is not None and b is not None and a.is_const() and b.is_const() and b.value() > 0:
            x, y = a.value(), b.value()
            q = int(x / y) if tag == "/" else x // y
            if tag == "/":
                return Poly.const(q)
            if tag == "fdiv":
                return Poly.const(q)
            return Poly.const(x - y * int(x / y)) if tag == "%" else Poly.const(x % y)
        text = ir_c_text(ir)
        if text is None:
            return None
        return atom(text, ir)
    a, b = to_poly(ir[1]), to_poly(ir[2])
    if a is None or b is None:
        return None
    return a + b if tag == "+" else a - b if tag == "-" else a * b


# atom key -> its value as an IR over the entry's scalars (Z3 compares Polys through them)
_ATOM_IR: dict[str, Any] = {}


def atom(text: str, ir) -> Poly:
    """The opaque symbol of a scalar-only sub-expression (``a:text``), its IR remembered."""
    if ir is not None:
        _ATOM_IR.setdefault("a:" + text, ir)
    return Poly.sym("a:" + text)


def ir_of_poly(p: Poly, op: str | None = None, d: int = 1, loop_vars: bool = False):
    """IR of a Poly over scalars and known atoms, and loop variables when ``loop_vars``
    (``(op, p, d)`` when ``op`` is given); None when some atom's value is not known."""
    out: Any = ("c", 0)
    for m, c in p.t.items():
        term: Any = ("c", c)
        for k in m:
            if k.startswith("s:"):
                x = ("s", k[2:])
            elif loop_vars and k.startswith("v:"):
                x = ("v", k[2:])
            elif k in _ATOM_IR:
                x = _ATOM_IR[k]
            else:
                return None
            term = ("*", term, x)
        out = ("+", out, term)
    return out if op is None else (op, out, ("c", d))
