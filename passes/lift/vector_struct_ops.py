"""vector_struct_ops: HIP's element-wise arithmetic on vector structs -> one statement per member.

Summary
    HIP defines ``+ - * /`` on its vector structs (``float2 c = a * b;``, ``acc += a * b;``:
    element-wise, a scalar operand converted to the element type first), plain C and CUDA do
    not, so a HIP kernel that uses them cannot be lifted to canonical C (the lift's output does
    not build) nor mapped to CUDA. This pass runs on the HIP source, before ``loop_recovery``:
    every whole-vector statement ``v = e;`` / ``v op= e;`` (``e`` built from vector structs,
    ``make_float2(..)``, braced vector literals, scalars and ``+ - * /``) and every declaration
    initialised by one becomes one statement per member, ``v.x = (float)(a.x * b.x);`` (each
    lane operation cast back to the element type, as the vector operator rounds). The lane
    machinery is ``vector_types``'s (``passes/cleanup/vector_types.py``).
Requires
    1. Some element-wise arithmetic on a vector struct (else nothing to do: XP-VECTYPES-006).
    2. It stands in a whole statement or initialiser; vector comparisons and other operators
       are refused (XP-VECTYPES-003); operands are side-effect free (XP-VECTYPES-004); no
       target and operand both reached through pointers (XP-VECTYPES-005).
Guarantees
    Same outputs on the virtual device; no operator applied to a whole vector struct.
Options
    none.
Example
    ``float2 acc[4]; acc[i] += a2[i] * x2;`` -> ``acc[i].x = (float)(acc[i].x + (float)(a2[i].x * x2.x)); acc[i].y = ...``
"""
from __future__ import annotations

import copy

import passes.canon as canon
from passes.base import PassInfo, register
from passes.cleanup.vector_types import expand_struct_arithmetic

NAME = "vector_struct_ops"


@register(PassInfo(
    name=NAME,
    summary="HIP vector-struct arithmetic (float2 * float2) -> one statement per member",
    requires=("element-wise + - * / on vector structs (float2, int4, ...) in whole statements or "
              "initialisers (XP-VECTYPES-006 when there is none; XP-VECTYPES-003 elsewhere)",
              "side-effect-free operands (XP-VECTYPES-004), no target and operand both through "
              "pointers (XP-VECTYPES-005)"),
    guarantees=("same outputs on the virtual device", "no operator applied to a whole vector struct"),
))
def vector_struct_ops(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@vector_struct_ops.legality
def _legal(program):
    """The expansion, run on a copy of the AST: the plan the rewrite emits."""
    ast = copy.deepcopy(program.ast)
    changed, refusal = expand_struct_arithmetic(ast)
    if refusal is not None:
        return [canon.diag(program, NAME, *refusal)]
    if not changed:
        return [canon.diag(program, NAME, "XP-VECTYPES-006",
                           "no element-wise arithmetic on a CUDA/HIP vector struct")]
    return canon.Rewritten(ast)
