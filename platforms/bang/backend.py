"""BANG C back-end: Program -> ``.mlu`` text, and the CNRT host entry.

Memory-space qualifiers sit in ``Decl.storage`` and kernel qualifiers in ``Decl.funcspec``, so
``XGenerator`` prints them back unchanged; ``<<<dim, ktype, queue>>>`` launches print back from
the normalised call form.
"""
from __future__ import annotations

import re

import platforms
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


# The macros the BANG toolchain predefines for every source (MLISA: __MLU_{NRAM,WRAM,SRAM}_SIZE__
# in KiB; BG §2.1: __BANG_ARCH__), with the values of a device profile -- the same values the
# virtual device compiles a BANG source with (platforms/bang/emulate.py prepare()).
PREDEFINED = ("__BANG__", "__BANG_ARCH__", "__MLU_NRAM_SIZE__", "__MLU_WRAM_SIZE__", "__MLU_SRAM_SIZE__")


def predefined_macros(profile: dict | None = None) -> dict[str, str]:
    """``{macro: value}`` of the BANG predefined macros for ``profile`` (None: the default)."""
    prof = {**platforms.profile("bang"), **(profile or {})}
    return {
        "__BANG__": "1",
        "__BANG_ARCH__": str(int(prof.get("bang_arch", 372))),
        "__MLU_NRAM_SIZE__": str(int(prof.get("nram_bytes", 786432)) // 1024),
        "__MLU_WRAM_SIZE__": str(int(prof.get("wram_bytes", 1048576)) // 1024),
        "__MLU_SRAM_SIZE__": str(int(prof.get("sram_bytes", 4194304)) // 1024),
    }


def carried_macros(text: str, profile: dict | None = None) -> list[str]:
    """``#define`` lines for the predefined BANG macros that ``text`` (a translated output: its
    preamble and body) still names and does not define itself, so that the output builds
    outside the BANG toolchain with the values the source was compiled and verified with."""
    out = []
    for name, value in predefined_macros(profile).items():
        if re.search(r"\b" + name + r"\b", text) and not re.search(r"#\s*define\s+" + name + r"\b", text):
            out.append(f"#define {name} {value}")
    return out
