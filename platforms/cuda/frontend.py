"""CUDA front-end: ``.cu`` source -> Program.

The normalisation (qualifiers, ``<<<>>>`` launches, C++ casts, templates, ``extern "C"``...)
is shared by all dialects and documented in ``platforms/common/lexer.py``; this module only
states what is CUDA-specific.
"""
from __future__ import annotations

from xpiler.ir.program import Program

from platforms.common.dialect import Dialect
from platforms.common.frontend import parse_program
from platforms.common.gpu_vectors import VECTOR_TYPES

CUDA_TYPES = frozenset("""
dim3 cudaStream_t cudaError_t cudaEvent_t cudaMemcpyKind cudaDeviceProp __nv_bfloat16
__nv_bfloat162 nv_bfloat162 __nv_half nv_bfloat16 half2 cudaFuncAttribute
""".split()) | frozenset(VECTOR_TYPES)

DIALECT = Dialect(
    name="cuda",
    kernel_specifiers=frozenset({"__global__"}),
    device_specifiers=frozenset({"__device__"}),
    function_specifiers=frozenset({"__global__", "__device__", "__host__", "__forceinline__",
                                   "__noinline__"}),
    memory_spaces=frozenset({"__shared__", "__constant__", "__managed__"}),
    types=CUDA_TYPES,
    ctor_types=frozenset({"dim3"}),
    predefined={"__CUDACC__": "1", "__NVCC__": "1", "__CUDA_ARCH__": "800",
                "__cplusplus": "201703", "__x86_64__": "1"},
    malloc_functions=frozenset({"cudaMalloc", "cudaMallocManaged"}),
    memcpy_functions=frozenset({"cudaMemcpy", "cudaMemcpyAsync"}),
    memset_functions=frozenset({"cudaMemset", "cudaMemsetAsync"}),
    h2d=frozenset({"cudaMemcpyHostToDevice"}),
    d2h=frozenset({"cudaMemcpyDeviceToHost"}),
)


def parse(text: str, path: str = "<input>", entry: str | None = None) -> Program:
    """Parse CUDA source text (raises ``SourceError`` with XP1nnn diagnostics)."""
    return parse_program(text, DIALECT, path=path, entry=entry)
