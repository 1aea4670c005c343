"""What the shared front-end / back-end need to know about one dialect.

Each ``platforms/<p>/frontend.py`` builds one ``Dialect``; the shared code in this package reads
nothing else about the platform.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Qualifiers become pycparser tokens of these kinds (their text is kept, see lexer.py).
FUNCTION_SPECIFIER = "INLINE"      # -> Decl.funcspec
MEMORY_SPACE = "REGISTER"          # a storage-class token kind -> Decl.storage
POINTER_QUALIFIER = "RESTRICT"     # -> PtrDecl.quals / TypeDecl.quals

# Types every dialect may mention (typedef names pycparser must know in advance).
COMMON_TYPES = frozenset("""
size_t ssize_t ptrdiff_t intptr_t uintptr_t int8_t int16_t int32_t int64_t uint8_t uint16_t
uint32_t uint64_t uint wchar_t _Float16 FILE half half2 __half __half2 bfloat16_t
""".split())

# Memory-space storage qualifier -> Buffer.space
SPACES = {
    "__shared__": "shared", "__constant__": "constant", "__managed__": "gdram",
    "__nram__": "nram", "__wram__": "wram", "__ldram__": "ldram", "__mlu_shared__": "sram",
    "__mlu_const__": "constant",
}
# function specifiers that, on a variable, place it in global device memory
GLOBAL_VARIABLE_SPECIFIERS = frozenset({"__device__", "__mlu_device__"})


@dataclass(frozen=True)
class Dialect:
    name: str
    kernel_specifiers: frozenset[str]            # mark a function as a kernel
    device_specifiers: frozenset[str]            # mark a device helper
    function_specifiers: frozenset[str]          # all qualifiers lexed as function specifiers
    memory_spaces: frozenset[str]                # qualifiers lexed as storage (memory space)
    types: frozenset[str]                        # extra typedef names
    ctor_types: frozenset[str] = frozenset()     # class types constructed as T(x, y) / T v(x)
    predefined: dict[str, str] = field(default_factory=dict)   # for #if evaluation
    malloc_functions: frozenset[str] = frozenset()
    memcpy_functions: frozenset[str] = frozenset()
    memset_functions: frozenset[str] = frozenset()
    h2d: frozenset[str] = frozenset()            # memcpy direction constants host -> device
    d2h: frozenset[str] = frozenset()
    launch_functions: frozenset[str] = frozenset()   # hipLaunchKernelGGL-like macros

    @property
    def all_types(self) -> frozenset[str]:
        return COMMON_TYPES | self.types

    def function_kind(self, funcspec: list[str]) -> str:
        """'kernel' | 'device' | 'host' for a function with these specifiers."""
        specs = set(funcspec)
        if specs & self.kernel_specifiers:
            return "kernel"
        if specs & self.device_specifiers and "__host__" not in specs:
            return "device"
        if "__host__" in specs and "__device__" in specs:
            return "device"
        return "host"
