"""HIP back-end: Program -> ``.hip`` text, and the HIP-runtime host entry.

Device code prints with ``XGenerator`` unchanged (``hipLaunchKernelGGL`` is an ordinary call;
``<<<>>>`` launches print back as written, which hipcc accepts).
"""
from __future__ import annotations

from xpiler.ir.program import Program

from platforms.common.generator import XGenerator, emit_program
from platforms.common.hostgen import HIP_RUNTIME, gpu_host_entry


class HipGenerator(XGenerator):
    """Prints the normalised AST as HIP C++."""


def emit(program: Program) -> str:
    """HIP source of ``program`` (preamble + AST)."""
    return note_contraction(emit_program(program, HipGenerator))


_NO_CONTRACT = '#pragma GCC optimize ("fp-contract=off")'
CONTRACTION_NOTE = ("// verified without floating-point contraction (no fused multiply-add); the pragma "
                    "below only binds the host compiler: compile with `hipcc -ffp-contract=off` to reproduce the "
                    "verified numerics on the device")


def note_contraction(text: str) -> str:
    """Put a comment before the lifts' ``fp-contract=off`` pragma saying which hipcc flag
    gives the device code the same no-contraction numerics (the pragma is a GCC one)."""
    if _NO_CONTRACT not in text or CONTRACTION_NOTE in text:
        return text
    return text.replace(_NO_CONTRACT, CONTRACTION_NOTE + "\n" + _NO_CONTRACT, 1)


def emit_host_entry(entry_name, params, kernel_name, launch, sizes=None,
                    kernel_args=None) -> str:
    """``extern "C"`` HIP-runtime wrapper: hipMalloc, hipMemcpy, ``<<<grid, block>>>``,
    hipMemcpy back, hipFree. ``launch`` is a ``Launch`` or a mapping with grid/block."""
    return gpu_host_entry(HIP_RUNTIME, entry_name, params, kernel_name, launch, sizes,
                          kernel_args)
