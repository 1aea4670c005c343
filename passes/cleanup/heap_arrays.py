"""heap_arrays: heap scratch of the entry's own block -> arrays.

Summary
    CPU kernels allocate per-call scratch on the heap (``float *a = (float *) malloc(sizeof(float)
    * C); ... free(a);``: per-channel factors folded once, then used by the parallel loops).
    The access analysis traces arrays and parameters, not heap pointers, so the binders refused
    such entries (XP-BIND-003, a store through an untraceable pointer). A pointer local of the
    entry's top-level block, declared with ``malloc(bytes)`` / ``calloc(n, size)`` of a scalar
    type, freed once by a later statement of the same block, and otherwise only indexed (never
    assigned, incremented, address-taken or passed to a call but ``free``) becomes ``T a[(bytes
    + sizeof(T) - 1) / sizeof(T)]`` (zero-filled when calloc'd); the ``free`` goes. The output's
    host code gets heap blocks back from ``host_heap`` (arrays sized by the data are never left on
    the stack). The machinery is ``heap_locals``' (``passes/lower/heap_locals.py``).
Requires
    1. The program has an entry function definition (XP-HEAP-ARRAYS-001).
    2. At least one such buffer (XP-HEAP-ARRAYS-002: none, nothing to do).
Guarantees
    Same outputs on the virtual device: the array has the buffer's bytes (rounded up to whole
    elements) for the same lifetime; calloc's zeros are written.
Options
    none.
"""
from __future__ import annotations

import passes.canon as canon
from passes.base import PassInfo, register
from passes.lower.heap_locals import entry_heap_arrays

NAME = "heap_arrays"


@register(PassInfo(
    name=NAME,
    summary="malloc'd scratch of the entry's own block, freed there -> arrays",
    requires=("an entry function definition (XP-HEAP-ARRAYS-001)",
              "a pointer local of the entry's block allocated with malloc / calloc, freed once in "
              "the same block and otherwise only indexed (XP-HEAP-ARRAYS-002)"),
    guarantees=("same outputs on the virtual device",),
))
def heap_arrays(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@heap_arrays.legality
def _legal(program):
    if program.entry is None or program.ast is None or \
            canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-HEAP-ARRAYS-001", "no entry function definition")]
    new = entry_heap_arrays(program)
    if new is None:
        return [canon.diag(program, NAME, "XP-HEAP-ARRAYS-002", "no heap buffer of the entry's "
                           "block that is freed there and only indexed")]
    return canon.Rewritten(new.ast)
