"""HIP front-end: ``.hip`` / ``.cpp`` with HIP headers -> Program.

Shared normalisation: ``platforms/common/lexer.py``. HIP specifics: ``hipLaunchKernelGGL(k,
grid, block, shmem, stream, args...)`` is kept as an ordinary call (the analysis reads it like a
``<<<>>>`` launch); ``typedef float floatx4 __attribute__((ext_vector_type(4)))`` becomes a
``Typedef`` with a C23 ``gnu::`` attribute; MFMA builtins are ordinary calls.
"""
from __future__ import annotations

from xpiler.ir.program import Program

from platforms.common.dialect import Dialect
from platforms.common.frontend import parse_program
from platforms.common.gpu_vectors import VECTOR_TYPES

HIP_TYPES = frozenset("""
dim3 hipStream_t hipError_t hipEvent_t hipMemcpyKind hipDeviceProp_t hip_bfloat16 __hip_bfloat16
__hip_bfloat162 half2 __half2
""".split()) | frozenset(VECTOR_TYPES)

DIALECT = Dialect(
    name="hip",
    kernel_specifiers=frozenset({"__global__"}),
    device_specifiers=frozenset({"__device__"}),
    function_specifiers=frozenset({"__global__", "__device__", "__host__", "__forceinline__",
                                   "__noinline__"}),
    memory_spaces=frozenset({"__shared__", "__constant__", "__managed__"}),
    types=HIP_TYPES,
    ctor_types=frozenset({"dim3"}),
    predefined={"__HIPCC__": "1", "__HIP__": "1", "__HIP_PLATFORM_AMD__": "1",
                "__HIP_PLATFORM_HCC__": "1", "__HIP_DEVICE_COMPILE__": "1", "__gfx90a__": "1",
                "__AMDGCN_WAVEFRONT_SIZE": "64", "__cplusplus": "201703", "__x86_64__": "1"},
    malloc_functions=frozenset({"hipMalloc", "hipMallocManaged"}),
    memcpy_functions=frozenset({"hipMemcpy", "hipMemcpyAsync"}),
    memset_functions=frozenset({"hipMemset", "hipMemsetAsync"}),
    h2d=frozenset({"hipMemcpyHostToDevice"}),
    d2h=frozenset({"hipMemcpyDeviceToHost"}),
    launch_functions=frozenset({"hipLaunchKernelGGL"}),
)


def parse(text: str, path: str = "<input>", entry: str | None = None) -> Program:
    """Parse HIP source text (raises ``SourceError`` with XP1nnn diagnostics)."""
    return parse_program(text, DIALECT, path=path, entry=entry)
