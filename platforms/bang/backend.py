"""BANG C back-end: Program -> ``.mlu`` text, and the CNRT host entry.

Memory-space qualifiers sit in ``Decl.storage`` and kernel qualifiers in ``Decl.funcspec``, so
``XGenerator`` prints them back unchanged; ``<<<dim, ktype, queue>>>`` launches print back from
the normalised call form.
"""
from __future__ import annotations

from xpiler.ir.program import Program

from platforms.common.generator import XGenerator, emit_program
from platforms.common.hostgen import cnrt_host_entry


class BangGenerator(XGenerator):
    """Prints the normalised AST as BANG C."""


def emit(program: Program) -> str:
    """BANG C source of ``program`` (preamble + AST)."""
    return emit_program(program, BangGenerator)


def emit_host_entry(entry_name, params, kernel_name, launch, sizes=None,
                    kernel_args=None) -> str:
    """``extern "C"`` CNRT wrapper: queue, cnrtMalloc, cnrtMemcpy HOST2DEV, ``cnrtDim3_t``,
    ``cnrtFunctionType_t``, ``k<<<dim, ktype, queue>>>``, cnrtQueueSync, cnrtMemcpy DEV2HOST,
    cnrtFree, cnrtQueueDestroy. ``launch`` is a ``Launch`` or a mapping with dim/ktype
    (defaults: dim {4, 1, 1}, CNRT_FUNC_TYPE_UNION1)."""
    return cnrt_host_entry(entry_name, params, kernel_name, launch, sizes,
                          kernel_args)
