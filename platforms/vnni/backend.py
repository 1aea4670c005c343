"""VNNI back-end: Program -> C++ text, and the (trivial) host entry: a direct call."""
from __future__ import annotations

from xpiler.ir.program import Program

from platforms.common.generator import XGenerator, emit_program
from platforms.common.hostgen import plain_host_entry


class VnniGenerator(XGenerator):
    """Prints the normalised AST as C++ with x86 intrinsics."""


def emit(program: Program) -> str:
    """C++ source of ``program`` (preamble + AST)."""
    return emit_program(program, VnniGenerator)


def emit_host_entry(entry_name, params, kernel_name, launch=None, sizes=None,
                    kernel_args=None) -> str:
    """``extern "C"`` function calling ``kernel_name`` with the same arguments (includes only
    when the entry is the kernel itself)."""
    return plain_host_entry(entry_name, params, kernel_name, launch, sizes,
                          kernel_args)
