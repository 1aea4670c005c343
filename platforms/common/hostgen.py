"""Host entries: ``extern "C"`` functions that take host pointers, move data to the device,
launch one kernel and copy the results back, in each runtime's API.

``gpu_host_entry`` covers the CUDA and HIP runtimes (``GpuRuntime`` tables), ``cnrt_host_entry``
the Cambricon CNRT API and ``plain_host_entry`` VNNI (a direct call). Every pointer parameter is
allocated on the device and copied in (outputs too, so elements the kernel does not write keep
their values); outputs and inouts are copied back. Kernel arguments are the parameters in order,
pointers replaced by their device copies, unless ``kernel_args`` (C expressions over the entry's
parameter names) says otherwise; pointer parameter names in them are replaced by the device
copies (``A`` -> ``d_A``).

Element counts come from ``Param.size`` or the ``sizes`` mapping (name -> C expression).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from xpiler.ir.errors import UsageError
from xpiler.ir.program import Launch, Param

_QUALIFIER_WORDS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict)\b|[*&]")


@dataclass(frozen=True)
class GpuRuntime:
    includes: tuple[str, ...]
    half_include: str
    malloc: str
    memcpy: str
    h2d: str
    d2h: str
    free: str
    sync: str
    d2d: str
    # raises a kernel's dynamic shared memory limit (format fields: kernel, bytes)
    max_dynamic_shared: str = ""


CUDA_RUNTIME = GpuRuntime(("#include <cuda_runtime.h>", "#include <stdint.h>"),
                          "#include <cuda_fp16.h>", "cudaMalloc", "cudaMemcpy",
                          "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost", "cudaFree",
                          "cudaDeviceSynchronize", "cudaMemcpyDeviceToDevice",
                          "cudaFuncSetAttribute({kernel}, "
                          "cudaFuncAttributeMaxDynamicSharedMemorySize, {bytes});")
HIP_RUNTIME = GpuRuntime(("#include <hip/hip_runtime.h>", "#include <stdint.h>"),
                         "#include <hip/hip_fp16.h>", "hipMalloc", "hipMemcpy",
                         "hipMemcpyHostToDevice", "hipMemcpyDeviceToHost", "hipFree",
                         "hipDeviceSynchronize", "hipMemcpyDeviceToDevice",
                         "hipFuncSetAttribute((const void *) {kernel}, "
                         "hipFuncAttributeMaxDynamicSharedMemorySize, {bytes});")


def element_type(param: Param) -> str:
    """``float`` for ``const float * __restrict__``."""
    return " ".join(_QUALIFIER_WORDS.sub(" ", param.type).split()) or "char"


def launch_field(launch: Launch | Mapping[str, Any] | None, name: str):
    if launch is None:
        return None
    if isinstance(launch, Mapping):
        return launch.get(name)
    return getattr(launch, name, None)


def signature(entry_name: str, params: Sequence[Param]) -> str:
    args = ", ".join(_declare(p) for p in params) or "void"
    return f'extern "C" void {entry_name}({args})'


def _declare(p: Param) -> str:
    t = p.type.strip()
    if t.endswith(("*", "&")):
        return f"{t}{p.name}"
    return f"{t} {p.name}"


def _sizes(params: Sequence[Param], sizes: Mapping[str, str] | None) -> dict[str, str]:
    out = {}
    for p in params:
        if p.kind != "pointer":
            continue
        size = (sizes or {}).get(p.name) or p.size
        if not size:
            raise UsageError(f"element count of pointer parameter '{p.name}' is unknown: "
                             f"pass sizes={{'{p.name}': '<C expression>'}}")
        out[p.name] = f"({size}) * sizeof({element_type(p)})"
    return out


def _dims(values, default: tuple[str, str, str]) -> str:
    vals = [str(v) for v in (values or default)]
    vals += ["1"] * (3 - len(vals))
    return ", ".join(vals[:3])


def _kernel_args(params: Sequence[Param], kernel_args: Sequence[str] | None = None) -> str:
    if kernel_args is None:
        return ", ".join(f"d_{p.name}" if p.kind == "pointer" else p.name for p in params)
    pointers = {p.name for p in params if p.kind == "pointer"}
    if not pointers:
        return ", ".join(kernel_args)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(pointers))) + r")\b")
    return ", ".join(pattern.sub(r"d_\1", str(a)) for a in kernel_args)


def _needs_half(params: Sequence[Param]) -> bool:
    return any(p.dtype in ("float16",) for p in params)


def gpu_host_entry(rt: GpuRuntime, entry_name: str, params: Sequence[Param], kernel_name: str,
                   launch, sizes: Mapping[str, str] | None = None,
                   kernel_args: Sequence[str] | None = None) -> str:
    grid, block = launch_field(launch, "grid"), launch_field(launch, "block")
    if not grid or not block:
        raise UsageError("a CUDA/HIP host entry needs launch grid and block")
    nbytes = _sizes(params, sizes)
    pointers = [p for p in params if p.kind == "pointer"]
    lines = list(rt.includes) + ([rt.half_include] if _needs_half(params) else [])
    lines += ["", signature(entry_name, params), "{"]
    for p in pointers:
        lines.append(f"  {element_type(p)} *d_{p.name} = 0;")
        lines.append(f"  {rt.malloc}((void **)&d_{p.name}, {nbytes[p.name]});")
    for p in pointers:
        lines.append(f"  {rt.memcpy}(d_{p.name}, {p.name}, {nbytes[p.name]}, {rt.h2d});")
    lines.append(f"  dim3 grid({_dims(grid, ('1', '1', '1'))});")
    lines.append(f"  dim3 block({_dims(block, ('1', '1', '1'))});")
    shmem = launch_field(launch, "shmem")
    config = "grid, block" + (f", {shmem}" if shmem else "")
    lines.append(f"  {kernel_name}<<<{config}>>>({_kernel_args(params, kernel_args)});")
    lines.append(f"  {rt.sync}();")
    for p in pointers:
        if p.role in ("output", "inout"):
            lines.append(f"  {rt.memcpy}({p.name}, d_{p.name}, {nbytes[p.name]}, {rt.d2h});")
    lines += [f"  {rt.free}(d_{p.name});" for p in pointers]
    lines.append("}")
    return "\n".join(lines) + "\n"


def cnrt_names(params: Sequence[Param]) -> dict[str, str]:
    """The CNRT wrapper's locals (``queue``, ``dim``, ``ktype``), renamed ``__xp_<name>`` where
    an entry parameter already has that name (a kernel taking ``int dim``)."""
    taken = {p.name for p in params}
    return {n: (f"__xp_{n}" if n in taken else n) for n in ("queue", "dim", "ktype")}


def cnrt_host_entry(entry_name: str, params: Sequence[Param], kernel_name: str, launch,
                    sizes: Mapping[str, str] | None = None,
                    kernel_args: Sequence[str] | None = None) -> str:
    dim = launch_field(launch, "dim") or ("4", "1", "1")
    ktype = launch_field(launch, "ktype") or "CNRT_FUNC_TYPE_UNION1"
    nbytes = _sizes(params, sizes)
    pointers = [p for p in params if p.kind == "pointer"]
    v = cnrt_names(params)
    queue = v["queue"]
    lines = ["#include <bang.h>", "#include <cnrt.h>", "#include <stdint.h>", "",
             signature(entry_name, params), "{", f"  cnrtQueue_t {queue};",
             f"  cnrtQueueCreate(&{queue});"]
    for p in pointers:
        lines.append(f"  {element_type(p)} *d_{p.name} = 0;")
        lines.append(f"  cnrtMalloc((void **)&d_{p.name}, {nbytes[p.name]});")
    for p in pointers:
        lines.append(f"  cnrtMemcpy(d_{p.name}, (void *){p.name}, {nbytes[p.name]}, "
                     f"CNRT_MEM_TRANS_DIR_HOST2DEV);")
    lines.append(f"  cnrtDim3_t {v['dim']} = {{{_dims(dim, ('4', '1', '1'))}}};")
    lines.append(f"  cnrtFunctionType_t {v['ktype']} = {ktype};")
    lines.append(f"  {kernel_name}<<<{v['dim']}, {v['ktype']}, {queue}>>>({_kernel_args(params, kernel_args)});")
    lines.append(f"  cnrtQueueSync({queue});")
    for p in pointers:
        if p.role in ("output", "inout"):
            lines.append(f"  cnrtMemcpy((void *){p.name}, d_{p.name}, {nbytes[p.name]}, "
                         f"CNRT_MEM_TRANS_DIR_DEV2HOST);")
    lines += [f"  cnrtFree(d_{p.name});" for p in pointers]
    lines += [f"  cnrtQueueDestroy({queue});", "}"]
    return "\n".join(lines) + "\n"


def plain_host_entry(entry_name: str, params: Sequence[Param], kernel_name: str,
                     launch=None, sizes: Mapping[str, str] | None = None,
                     kernel_args: Sequence[str] | None = None) -> str:
    lines = ["#include <immintrin.h>", "#include <stdint.h>", ""]
    if entry_name == kernel_name:
        return "\n".join(lines)
    args = ", ".join(kernel_args if kernel_args is not None else [p.name for p in params])
    lines += [signature(entry_name, params), "{", f"  {kernel_name}({args});", "}"]
    return "\n".join(lines) + "\n"
