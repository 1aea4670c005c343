"""CUDA back-end: Program -> ``.cu`` text, and the CUDA-runtime host entry.

CUDA is the reference spelling of the shared normalisation, so ``CudaGenerator`` adds nothing
to ``XGenerator`` (see ``platforms/common/generator.py`` for what is printed back and how).
"""
from __future__ import annotations

from xpiler.program import Program

from platforms.common.generator import XGenerator, emit_program
from platforms.common.hostgen import CUDA_RUNTIME, gpu_host_entry


class CudaGenerator(XGenerator):
    """Prints the normalised AST as CUDA C++."""


def emit(program: Program) -> str:
    """CUDA source of ``program`` (preamble + AST)."""
    return emit_program(program, CudaGenerator)


def emit_host_entry(entry_name, params, kernel_name, launch, sizes=None,
                    kernel_args=None) -> str:
    """``extern "C"`` CUDA-runtime wrapper: cudaMalloc, cudaMemcpy, ``<<<grid, block>>>``,
    cudaMemcpy back, cudaFree. ``launch`` is a ``Launch`` or a mapping with grid/block."""
    return gpu_host_entry(CUDA_RUNTIME, entry_name, params, kernel_name, launch, sizes,
                          kernel_args)
