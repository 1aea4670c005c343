"""The Program model: one parsed source file with the dialect facts xpiler needs.

A ``Program`` is plain, picklable data (serialisable for process pools / Dask): the platform id,
the source text, the pycparser AST of the normalised source, and the facts the front-end
resolved: functions (kernels, device helpers, host functions), the entry and its parameters
with roles, launch configurations, device allocations, on-chip buffers and special
instructions used. Passes never mutate a Program; they return a new one.

JSON schema of ``Program.summary()`` (``xpiler parse --json``), documented in README:
    platform: str, file: str,
    kernels: [str], device_functions: [str], host_functions: [str],
    entry: {name, kind: "host"|"kernel"} | null,
    params: [{name, type, kind: "pointer"|"scalar", dtype, role: "input"|"output"|"inout"|"scalar",
              size: element-count C expression over the scalars | null}],
    launch: [{kernel, grid: [x,y,z] | null, block: [x,y,z] | null, shmem, stream,
              dim: [x,y,z] | null, ktype}],
    allocations: [{name, bytes}],
    buffers: [{name, space, dtype, shape, bytes, function}],
    intrinsics: [str], diagnostics: [{code, severity, message, file, line, col, construct}]
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# C type spelling -> numpy dtype name (pointer element types and scalars)
DTYPES = {
    "float": "float32", "double": "float64", "half": "float16", "__half": "float16",
    "_Float16": "float16", "bfloat16": "bfloat16", "bfloat16_t": "bfloat16",
    "__nv_bfloat16": "bfloat16", "hip_bfloat16": "bfloat16", "__hip_bfloat16": "bfloat16",
    "nv_bfloat16": "bfloat16",
    "int": "int32", "signed int": "int32", "unsigned": "uint32", "unsigned int": "uint32",
    "int32_t": "int32", "uint32_t": "uint32", "long": "int64", "long long": "int64",
    "unsigned long": "uint64", "unsigned long long": "uint64", "int64_t": "int64",
    "uint64_t": "uint64", "size_t": "uint64", "short": "int16", "int16_t": "int16",
    "unsigned short": "uint16", "uint16_t": "uint16", "char": "int8", "signed char": "int8",
    "int8_t": "int8", "int8": "int8", "unsigned char": "uint8", "uint8_t": "uint8", "bool": "bool",
    "_Bool": "bool", "uint": "uint32", "long int": "int64", "long long int": "int64",
    "unsigned long int": "uint64", "unsigned long long int": "uint64", "short int": "int16",
    "unsigned short int": "uint16", "__nv_half": "float16", "float16_t": "float16",
}
# CUDA/HIP vector types: a pointer to them is a buffer of their element type (n vectors = k*n
# elements, same bytes), so arrays of the element dtype are passed for them
for _elem, _dt in (("float", "float32"), ("double", "float64"), ("int", "int32"), ("uint", "uint32"),
                   ("short", "int16"), ("ushort", "uint16"), ("char", "int8"), ("uchar", "uint8"),
                   ("long", "int64"), ("ulong", "uint64"), ("longlong", "int64"), ("ulonglong", "uint64")):
    for _k in (1, 2, 3, 4):
        DTYPES.setdefault(f"{_elem}{_k}", _dt)
DTYPES.update({"half2": "float16", "__half2": "float16", "__nv_half2": "float16",
               "__nv_bfloat162": "bfloat16", "__hip_bfloat162": "bfloat16"})


@dataclass(frozen=True)
class Param:
    name: str
    type: str            # C spelling as written, e.g. "const float *"
    kind: str            # "pointer" | "scalar"
    dtype: str           # numpy dtype name of the element / scalar
    role: str            # "input" | "output" | "inout" | "scalar"
    size: str | None = None  # element count (C expression over the entry's scalars), if known

    def to_json(self) -> dict:
        return {"name": self.name, "type": self.type, "kind": self.kind, "dtype": self.dtype,
                "role": self.role, "size": self.size}


@dataclass(frozen=True)
class Function:
    name: str
    kind: str            # "kernel" | "device" | "host"
    params: tuple[Param, ...] = ()
    extern_c: bool = False
    qualifiers: tuple[str, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class Launch:
    kernel: str
    caller: str
    grid: tuple[str, ...] | None = None    # C expressions over the caller's scalars
    block: tuple[str, ...] | None = None
    shmem: str | None = None
    stream: str | None = None
    dim: tuple[str, ...] | None = None     # BANG cnrtDim3_t
    ktype: str | None = None               # BANG cnrtFunctionType_t name
    args: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "caller": self.caller,
                "grid": list(self.grid) if self.grid else None,
                "block": list(self.block) if self.block else None,
                "shmem": self.shmem, "stream": self.stream,
                "dim": list(self.dim) if self.dim else None, "ktype": self.ktype,
                "args": list(self.args)}


@dataclass(frozen=True)
class Buffer:
    name: str
    space: str           # shared | nram | wram | sram | ldram | constant | gdram
    dtype: str
    shape: tuple[str, ...]
    bytes: int | None    # None when not a compile-time constant
    function: str | None = None

    def to_json(self) -> dict:
        return {"name": self.name, "space": self.space, "dtype": self.dtype,
                "shape": list(self.shape), "bytes": self.bytes, "function": self.function}


@dataclass(frozen=True)
class Allocation:
    name: str
    bytes: str           # C expression
    function: str

    def to_json(self) -> dict:
        return {"name": self.name, "bytes": self.bytes, "function": self.function}


@dataclass
class Program:
    platform: str
    source: str
    path: str = "<input>"
    ast: Any = None                      # pycparser c_ast.FileAST of the normalised source
    functions: list[Function] = field(default_factory=list)
    entry: Function | None = None
    launches: list[Launch] = field(default_factory=list)
    allocations: list[Allocation] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=list)
    intrinsics: list[str] = field(default_factory=list)
    diagnostics: list = field(default_factory=list)
    facts: dict = field(default_factory=dict)  # front-end private, reversible normalisation data

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.kind == "kernel"]

    @property
    def params(self) -> tuple[Param, ...]:
        return self.entry.params if self.entry else ()

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)

    def summary(self) -> dict:
        return {
            "platform": self.platform,
            "file": self.path,
            "kernels": [f.name for f in self.functions if f.kind == "kernel"],
            "device_functions": [f.name for f in self.functions if f.kind == "device"],
            "host_functions": [f.name for f in self.functions if f.kind == "host"],
            "entry": ({"name": self.entry.name, "kind": "host" if self.entry.kind == "host" else "kernel"}
                      if self.entry else None),
            "params": [p.to_json() for p in self.params],
            "launch": [l.to_json() for l in self.launches],
            "allocations": [a.to_json() for a in self.allocations],
            "buffers": [b.to_json() for b in self.buffers],
            "intrinsics": sorted(set(self.intrinsics)),
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }
