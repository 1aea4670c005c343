"""affine: subscripts, loop nests, dependences and accessed extents of canonical sequential C.

Summary
    Analysis (no rewrite) shared by the lowering passes. ``analyze(program)`` walks the entry
    function of a canonical C program (platform ``vnni``: plain loops, an ``extern "C"`` entry
    taking host pointers) and returns a ``NestInfo``: one ``LoopInfo`` per ``for`` loop and one
    ``Access`` per memory reference through a pointer parameter or a local array, each with its
    subscript as a small integer expression tree (``IR``) over loop variables and the entry's
    scalars, its enclosing loops and the guards (``if`` / ``?:`` / ``&&`` conditions) under which
    it executes.

    - ``parallel(info, loop)`` decides whether ``loop`` carries no dependence: for every pair of
      accesses to one buffer (one of them a write) Z3 must prove that two different iterations
      of ``loop`` (same outer iterations, any inner ones, guards holding) never touch the same
      element. Scalars declared outside the loop and assigned inside it (reductions, running
      values) make it sequential; so do ``break``/``return``/``goto`` at its level and calls
      whose effects are unknown.
    - ``extents(info)`` / ``infer_inputs(program)``: per pointer parameter the number of
      elements the program touches (largest index + 1) as a C expression over the entry's
      scalars (an ``int`` when the shapes are constants), by exact elimination of the loop
      variables innermost-first (affine subscripts, affine or constant loop bounds), refined by
      guards ``e < b`` on the same subscript; ``None`` when not computable. A coefficient of
      unknown sign (``i * (H - K + 1)``) contributes through ``max(coef, 0)``; ``x / d`` and
      ``x % d`` by a scalar ``d >= 0`` of an ``x >= 0`` (a flattened index's coordinates)
      become fresh variables over the ranges they take (an upper bound).
    - Reinterpreting accesses (``((uint8_t *) (int16_t *) p)[j]``, the byte views a VNNI lift
      leaves) are byte ranges: a pointer cast to another element type switches its offset to
      bytes; the access records ``byte_index`` and ``width`` (its ``index`` is None for other
      clients). ``parallel`` compares a buffer with such accesses as byte ranges (overlap, not
      equality); ``extents`` takes the last element a range touches.
    - ``memcpy``/``memmove``/``memset`` whose pointer operands trace to buffers are not
      unknown calls: their operands are escapes (read and written at unknown elements), so a
      loop containing one is parallel only when those buffers are private to its iterations.
Requires
    1. Pointer parameters do not alias each other (``restrict`` semantics, as in every corpus
       kernel); integer scalars used in subscripts and bounds are non-negative (sizes).
    2. Subscripts are evaluated with C integer semantics (``/`` and ``%`` truncate; both are
       encoded exactly for Z3).
Guarantees
    ``parallel`` answers True only with a proof (unknown or timeout = dependent); ``extents``
    returns an exact maximum (or, for divisions by scalars, a proved upper bound) for the forms
    it accepts and ``None`` otherwise (never a guess, never below the true maximum).
Options
    none (an analysis).
Example
    ``for (i < M) for (j < N) { acc = 0; for (k < K) acc += A[i*K+k]*B[k*N+j]; C[i*N+j] = acc; }``
    -> i and j parallel, k sequential (``acc`` declared outside k is updated in it);
    extents ``A: M * K``, ``B: K * N``, ``C: M * N``.
Modules
    ``ir`` (the subscript IR, loops, accesses, the nest), ``walk`` (the AST walker:
    ``analyze``), ``solver`` (the Z3 encoding and portfolio), ``poly`` (polynomials over
    scalars and loop variables), ``dependence`` (``parallel``, ``privatizable``), ``extents``
    (bounds, ``extents``), ``legality`` (``may_conflict`` / ``reorder_violation`` of the
    schedule passes). This package re-exports their public interface: callers use ``affine.X``.
"""
from __future__ import annotations

from .ir import (
    CHECK_CALLS, IR, MEM_FUNCTIONS, PURE_FUNCTIONS, Access, LoopInfo, NestInfo, Var,
    buffer_elem_bytes, bytes_of_words, type_names, type_names_text)
from .solver import ANALYSIS_ERRORS, check, load_z3, tdiv
from .poly import Poly, ir_c_text, to_poly
from .walk import analyze, entry_function
from .dependence import Verdict, parallel, privatizable
from .extents import (
    extents, extreme_of_var, free_symbols, infer_inputs, max_index, poly_max, proved_extent,
    sign_when_running, within)
from .legality import may_conflict, reorder_violation

__all__ = [
    # ir
    "CHECK_CALLS", "IR", "MEM_FUNCTIONS", "PURE_FUNCTIONS", "Access", "LoopInfo", "NestInfo",
    "Var", "buffer_elem_bytes", "bytes_of_words", "type_names", "type_names_text",
    # solver
    "ANALYSIS_ERRORS", "check", "load_z3", "tdiv",
    # poly
    "Poly", "ir_c_text", "to_poly",
    # walk
    "analyze", "entry_function",
    # dependence
    "Verdict", "parallel", "privatizable",
    # extents
    "extents", "extreme_of_var", "free_symbols", "infer_inputs", "max_index", "poly_max",
    "proved_extent", "sign_when_running", "within",
    # legality
    "may_conflict", "reorder_violation",
]
