"""BANG C front-end: ``.mlu`` source -> Program.

Shared normalisation: ``platforms/common/lexer.py``. BANG specifics: ``__mlu_global__`` /
``__mlu_entry__`` mark kernels, ``__mlu_func__`` / ``__mlu_device__`` device functions (on a
variable ``__mlu_device__`` means GDRAM); ``__nram__ __wram__ __ldram__ __mlu_shared__
__mlu_const__`` are memory spaces (``Decl.storage``); the launch ``k<<<dim, ktype, queue>>>``
is normalised like CUDA's, and the analysis reads ``cnrtDim3_t dim = {x, y, z}`` (+ ``dim.x =``
assignments) and ``cnrtFunctionType_t`` for ``Launch.dim`` / ``Launch.ktype``.
"""
from __future__ import annotations

from xpiler.ir.program import Program

from platforms.common.dialect import Dialect
from platforms.common.frontend import parse_program

BANG_TYPES = frozenset("""
cnrtQueue_t cnrtDim3_t cnrtFunctionType_t cnrtRet_t cnrtNotifier_t cnrtMemTransDir_t
cnrtDev_t cnrtDeviceProp_t mluMemcpyDirection_t bfloat16_t int4x2_t half
""".split())

DIALECT = Dialect(
    name="bang",
    kernel_specifiers=frozenset({"__mlu_global__", "__mlu_entry__"}),
    device_specifiers=frozenset({"__mlu_func__", "__mlu_device__"}),
    function_specifiers=frozenset({"__mlu_global__", "__mlu_entry__", "__mlu_func__",
                                   "__mlu_device__", "__mlu_host__"}),
    memory_spaces=frozenset({"__nram__", "__wram__", "__ldram__", "__mlu_shared__",
                             "__mlu_const__"}),
    types=BANG_TYPES,
    predefined={"__BANG__": "1", "__BANG_ARCH__": "372", "__MLU_NRAM_SIZE__": "768",
                "__MLU_WRAM_SIZE__": "1024", "__MLU_SRAM_SIZE__": "4096",
                "__cplusplus": "201703", "__x86_64__": "1"},
    malloc_functions=frozenset({"cnrtMalloc"}),
    memcpy_functions=frozenset({"cnrtMemcpy", "cnrtMemcpyAsync"}),
    memset_functions=frozenset({"cnrtMemset"}),
    h2d=frozenset({"CNRT_MEM_TRANS_DIR_HOST2DEV", "cnrtMemcpyHostToDev"}),
    d2h=frozenset({"CNRT_MEM_TRANS_DIR_DEV2HOST", "cnrtMemcpyDevToHost"}),
)


def parse(text: str, path: str = "<input>", entry: str | None = None) -> Program:
    """Parse BANG C source text (raises ``SourceError`` with XP1nnn diagnostics)."""
    return parse_program(text, DIALECT, path=path, entry=entry)
