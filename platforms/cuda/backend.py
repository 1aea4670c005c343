"""CUDA back-end: Program -> ``.cu`` text, and the CUDA-runtime host entry.

CUDA is the reference spelling of the shared normalisation, so ``CudaGenerator`` adds nothing
to ``XGenerator`` (see ``platforms/common/generator.py`` for what is printed back and how).
"""
from __future__ import annotations

from xpiler.ir.program import Program

from platforms.common.generator import XGenerator, emit_program
from platforms.common.hostgen import CUDA_RUNTIME, gpu_host_entry


class CudaGenerator(XGenerator):
    """Prints the normalised AST as CUDA C++."""


def emit(program: Program) -> str:
    """CUDA source of ``program`` (preamble + AST). ``_Float16`` is printed as ``__half`` with
    the conversions C applied implicitly made explicit (``platforms/cuda/half.py``: nvcc 13 has
    an internal error on ``_Float16`` in device code); where that cannot be done exactly the
    program is printed as it is."""
    from .half import to_half

    halved = to_half(program)
    if halved is not None and halved is not program:
        text = note_contraction(emit_program(halved, CudaGenerator))
        if "_Float16" not in text:
            return text
    return note_contraction(emit_program(program, CudaGenerator))


_NO_CONTRACT = '#pragma GCC optimize ("fp-contract=off")'
CONTRACTION_NOTE = ("// verified without floating-point contraction (no fused multiply-add); the pragma "
                    "below only binds the host compiler: compile with `nvcc -fmad=false` to reproduce the "
                    "verified numerics on the device")


def note_contraction(text: str) -> str:
    """Put a comment before the lifts' ``fp-contract=off`` pragma saying which nvcc flag
    gives the device code the same no-contraction numerics (the pragma is a GCC one)."""
    if _NO_CONTRACT not in text or CONTRACTION_NOTE in text:
        return text
    return text.replace(_NO_CONTRACT, CONTRACTION_NOTE + "\n" + _NO_CONTRACT, 1)


def emit_host_entry(entry_name, params, kernel_name, launch, sizes=None,
                    kernel_args=None) -> str:
    """``extern "C"`` CUDA-runtime wrapper: cudaMalloc, cudaMemcpy, ``<<<grid, block>>>``,
    cudaMemcpy back, cudaFree. ``launch`` is a ``Launch`` or a mapping with grid/block."""
    return gpu_host_entry(CUDA_RUNTIME, entry_name, params, kernel_name, launch, sizes,
                          kernel_args)
