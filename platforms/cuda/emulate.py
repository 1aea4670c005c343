"""CUDA on the CPU virtual device: turn a ``.cu`` file into one C++17 translation unit for g++.

API used by ``xpiler/run.py``::

    prepare(source, path, *, strict, profile) -> str   # the translation unit
    INCLUDE_DIRS: list[Path]                            # -I for g++
    compile_flags(strict) -> list[str]                  # extra g++ flags
    load_profile(name=None) -> dict                     # platforms/cuda/profile.toml

The unit is: profile macros, ``#include "xp_cuda.h"`` (the whole runtime, so the user's
``#include <cuda_runtime.h>`` & co. become no-ops), ``#line 1 "<path>"``, the user's source with
these line-preserving rewrites, and one launcher stub per non-template ``__global__`` function:

* ``K<<<g, b[, shmem[, stream]]>>>(args)`` -> ``::xp::gpu::launch_from_host("K", g, b, shmem,
  stream, <closure calling K(args)>)``; arguments are evaluated once, on the host, like CUDA.
* first statement of every kernel body: ``::xp::gpu::kernel_enter("K", <__launch_bounds__ max>)``.
* ``__shared__ T a[N];`` inside a function -> ``static auto &a = *::xp::gpu::shared_static<T[N]>(..);
  ::xp::gpu::shared_var(&a, sizeof a);`` (guarded storage: accesses past the end fault; several
  declarators or an aligned/attributed declaration: ``static T a[N];``)
  (blocks run one after another, so a static object is per-block shared memory; the call lets
  the runtime size and poison it).
* ``extern __shared__ T s[];`` -> ``T (&s)[] = ...(::xp::gpu::dyn_shared())`` (function scope) or a
  ``DynShared<T>`` object (file scope).
* local ``#include "x.h"`` files are inlined (with ``#line``) so the same rewrites apply to them.

Stub: ``extern "C" void __xp_kernel_<name>(const xp_launch_t* cfg, void** args)`` launches the
kernel once with cfg->grid, cfg->block, cfg->shmem; args[i] points at the i-th argument value.
"""
from __future__ import annotations

import re
from pathlib import Path

import platforms
from platforms.common.emulate_util import (apply_edits, c_string, inline_local_includes, line_directive,
                                           mask_code, match_backward, match_forward,
                                           param_list_without_defaults, scan_functions, space_before,
                                           split_top, word_before)
from platforms.common.preprocess import unicode_whitespace_to_spaces

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
INCLUDE_DIRS: list[Path] = [HERE / "runtime", ROOT / "common" / "gpu_runtime", ROOT / "common" / "runtime"]
PLATFORM = "cuda"


# ------------------------------------------------------------------------------------------ profile
def load_profile(name: str | None = None) -> dict:
    """The device profile (limits the strict mode enforces) from ``platforms/cuda/profile.toml``
    (``platforms.profile``, the one profile loader)."""
    return platforms.profile(PLATFORM, name)


def compile_flags(strict: bool) -> list[str]:
    """Extra g++ flags (the driver adds -std=c++17 -O2 -shared -fPIC -w and the include dirs)."""
    # TVM/CUDA code type-puns through pointers (`*(unsigned short*)&h`): keep aliasing loose.
    # Strictness is a run-time option (__xp_configure), so one build serves both modes.
    del strict
    return ["-fno-strict-aliasing", "-fno-fast-math", "-Wno-psabi"]


# ------------------------------------------------------------------------------------------ rewriting
_ATTR = re.compile(r"__align__\s*\([^()]*(?:\([^()]*\))*[^()]*\)|__attribute__\s*\(\(.*?\)\)|alignas\s*\([^()]*\)")


def _scope_stack_at(masked: str, offsets: list[int]) -> dict[int, list[str]]:
    """For each offset, the kinds of the enclosing braces: 'ns', 'extern', 'class', 'block'."""
    want = sorted(set(offsets))
    res: dict[int, list[str]] = {}
    stack: list[str] = []
    wi = 0
    for m in re.finditer(r"[{}]", masked):
        while wi < len(want) and want[wi] < m.start():
            res[want[wi]] = list(stack)
            wi += 1
        if m.group(0) == "}":
            if stack:
                stack.pop()
            continue
        before = masked[max(0, m.start() - 300):m.start()]
        if re.search(r"\bnamespace\b(\s*[\w:]+)?\s*$", before):
            stack.append("ns")
        elif re.search(r'\bextern\s*"\s*"\s*$', before) or re.search(r'\bextern\s*"C"\s*$', before):
            stack.append("extern")
        elif re.search(r"\b(struct|class|union|enum)\b[^;{}()]*$", before):
            stack.append("class")
        else:
            stack.append("block")
    while wi < len(want):
        res[want[wi]] = list(stack)
        wi += 1
    return res


def _declarator_names(decl: str) -> list[str]:
    """Names declared by ``float a[4][4], b`` (decl text after the storage keyword, no ';')."""
    clean = _ATTR.sub(" ", decl)
    names = []
    for a, b in split_top(clean):
        part = clean[a:b]
        eq = part.find("=")
        if eq >= 0:
            part = part[:eq]
        br = part.find("[")
        head = part if br < 0 else part[:br]
        ids = re.findall(r"[A-Za-z_]\w*", head)
        if ids:
            names.append(ids[-1])
    return names


def _find_stmt_end(masked: str, i: int) -> int:
    depth = 0
    for k in range(i, len(masked)):
        ch = masked[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return -1
        elif ch == ";" and depth == 0:
            return k
    return -1


def _keep_newlines(original: str, replacement: str) -> str:
    return replacement + "\n" * (original.count("\n") - replacement.count("\n"))


def _dyn_shared_decl(decl: str, file_scope: bool) -> str | None:
    clean = " ".join(_ATTR.sub(" ", decl).split())
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\](?:\s*\[[^\]]*\])*)\s*$", clean)
    if not m:
        return None
    typ, name, suffix = m.group(1).strip(), m.group(2), m.group(3).replace(" ", "")
    if file_scope:
        if suffix != "[]":
            return None
        return f"static ::xp::gpu::DynShared<{typ}> {name};"
    return f"{typ} (&{name}){suffix} = *reinterpret_cast<{typ} (*){suffix}>(::xp::gpu::dyn_shared());"


def _launch_rewrites(text: str, masked: str) -> list[tuple[int, int, str]]:
    # Every scan here is bounded (a forward search resumes where the last one ended, backward
    # scans stop at the callee's own words): a hostile file (a 200k-character identifier, a line
    # of '<<<') must not make the rewrite quadratic.
    edits = []
    cfg_end = -1
    for m in re.finditer(r"<<<", masked):
        cfg_start = m.end()
        if cfg_end < cfg_start:
            cfg_end = masked.find(">>>", cfg_start)
            if cfg_end < 0:
                break                       # no '>>>' after this one: none after any later one
        k = space_before(masked, m.start()) - 1
        if k >= 0 and masked[k] == ">":
            o = match_backward(masked, k, "<", ">", stop=";{}")
            if o < 0:
                continue
            k = space_before(masked, o) - 1
        callee_start = k + 1
        while True:
            w = word_before(masked, space_before(masked, callee_start))
            if w < 0:
                break
            callee_start = w
            e = space_before(masked, callee_start)
            if e < 2 or not masked.startswith("::", e - 2):
                break
            callee_start = e - 2
        callee = text[callee_start:m.start()].strip()
        p = cfg_end + 3
        while p < len(masked) and masked[p].isspace():
            p += 1
        if p >= len(masked) or masked[p] != "(" or not callee:
            continue
        close = match_forward(masked, p)
        if close < 0:
            continue
        cfg = [text[cfg_start + a:cfg_start + b] for a, b in split_top(masked[cfg_start:cfg_end])]
        cfg = [c for c in cfg if c.strip()]
        cfg += ["0"] * (4 - len(cfg))
        args_masked = masked[p + 1:close]
        args = []
        for a, b in split_top(args_masked):
            arg = text[p + 1 + a:p + 1 + b]
            args.append("nullptr" if arg.strip() == "NULL" else arg)
        args_text = ",".join(args) if any(x.strip() for x in args) else text[p + 1:close]
        name = re.sub(r"\s+", "", callee)
        original = text[callee_start:close + 1]
        repl = (f"::xp::gpu::launch_from_host({c_string(name)}, ({cfg[0]}), ({cfg[1]}), ({cfg[2]}), ({cfg[3]}), "
                f"[&](auto... __xp_a) {{ return [=]() mutable {{ {callee.replace(chr(10), ' ')}(__xp_a...); }}; }}("
                f"{args_text}))")
        edits.append((callee_start, close + 1, _keep_newlines(original, repl)))
    return edits


# `__shared__ <type words> name[d1][d2]...;` with one declarator (masked text after __shared__)
_SINGLE_SHARED = re.compile(r"\s*((?:[A-Za-z_][\w:]*\s+)*?[A-Za-z_][\w:]*(?:\s*<[^;{}=,]*>)?)\s+"
                            r"([A-Za-z_]\w*)((?:\s*\[[^\[\];{}=]+\])*)\s*")


def rewrite_source(text: str, platform: str) -> tuple[str, list]:
    """Apply the line-preserving rewrites; return (new text, kernels found)."""
    masked = mask_code(text)
    edits: list[tuple[int, int, str]] = []
    kernels = scan_functions(text, "__global__", masked)
    for k in kernels:
        if k.body_span is None:
            continue
        lb = "0"
        if "__launch_bounds__" in k.attrs:
            parts = split_top(mask_code(k.attrs["__launch_bounds__"]))
            lb = " ".join(k.attrs["__launch_bounds__"][parts[0][0]:parts[0][1]].split()) or "0"
        pos = k.body_span[0] + 1
        edits.append((pos, pos, f" ::xp::gpu::kernel_enter({c_string(k.name)}, (long long)({lb}));"))
    edits += _launch_rewrites(text, masked)

    shared_hits = [m for m in re.finditer(r"\b__shared__\b", masked)]
    hip_dyn = [m for m in re.finditer(r"\bHIP_DYNAMIC_SHARED\s*\(", masked)] if platform == "hip" else []
    scopes = _scope_stack_at(masked, [m.start() for m in shared_hits + hip_dyn])
    for m in shared_hits:
        in_func = "block" in scopes[m.start()]
        before = masked[max(0, m.start() - 40):m.start()]
        ext = re.search(r"\bextern\s*$", before)
        end = _find_stmt_end(masked, m.end())
        if end < 0:
            continue
        if ext:
            start = m.start() - (len(before) - ext.start())
            decl = text[m.end():end]
            repl = _dyn_shared_decl(decl, not in_func)
            if repl is not None:
                edits.append((start, end + 1, _keep_newlines(text[start:end + 1], repl)))
            continue
        if not in_func:
            continue  # file scope: the __shared__ macro makes it a static object
        st = re.search(r"\bstatic\s*$", before)
        single = _SINGLE_SHARED.fullmatch(masked[m.end():end])
        if single and single.group(1).split()[-1] not in ("struct", "union", "enum"):
            # one declarator of a plain type: a static reference to guarded storage
            typ, name, dims = (text[m.end() + single.start(g): m.end() + single.end(g)] for g in (1, 2, 3))
            what = c_string(f"__shared__ {name}")
            repl = (f"{'' if st else 'static '}auto &{name} = *::xp::gpu::shared_static<{typ}{dims}>({what});"
                    f" ::xp::gpu::shared_var((void*)&{name}, sizeof({name}));")
            edits.append((m.start(), end + 1, _keep_newlines(text[m.start():end + 1], repl)))
            continue
        edits.append((m.start(), m.end(), "XP_SHARED_ALIGN" if st else "static XP_SHARED_ALIGN"))
        names = _declarator_names(text[m.end():end])
        reg = "".join(f" ::xp::gpu::shared_var((void*)&{n}, sizeof({n}));" for n in names)
        edits.append((end + 1, end + 1, reg))
    for m in hip_dyn:
        close = match_forward(masked, m.end() - 1)
        if close < 0:
            continue
        inner = text[m.end():close]
        parts = split_top(mask_code(inner))
        if len(parts) != 2:
            continue
        typ, name = inner[parts[0][0]:parts[0][1]].strip(), inner[parts[1][0]:parts[1][1]].strip()
        in_func = "block" in scopes[m.start()]
        repl = _dyn_shared_decl(f"{typ} {name}[]", not in_func)
        if repl is None:
            continue
        end = close + 1  # HIP's macro expands to a whole declaration, ';' included
        edits.append((m.start(), end, _keep_newlines(text[m.start():end], repl)))
    return apply_edits(text, edits), kernels


def launcher_stubs(kernels) -> str:
    """extern "C" __xp_kernel_<name> for every non-template kernel definition, plus a registration
    so cudaLaunchKernel/hipLaunchKernel with an untyped `(void*)kernel` can find its stub."""
    out = []
    used: dict[str, int] = {}
    for k in kernels:
        if k.body_span is None or k.is_template:
            continue
        n = used.get(k.name, 0)
        used[k.name] = n + 1
        stub = f"__xp_kernel_{k.name}" + (f"_{n + 1}" if n else "")
        params = param_list_without_defaults(mask_code(k.params, mask_preprocessor=False).replace("\n", " "))
        params = params if params.strip() not in ("", "void") else ""
        named = [ns for ns in k.namespaces if ns]
        anon = "" in k.namespaces
        ref = f"{'::'.join(named)}::{k.name}" if (named and anon) else k.name
        body = (f'extern "C" __attribute__((visibility("default"), used)) void {stub}(const xp_launch_t* __xp_cfg, '
                f"void** __xp_args) {{ void (*__xp_fp)({params}) = {ref}; "
                f"::xp::gpu::launch_stub({c_string(k.name)}, __xp_cfg, __xp_fp, __xp_args); }} "
                f"static const int __xp_reg_{stub} = ::xp::gpu::register_kernel("
                f"(const void*)static_cast<void (*)({params})>({ref}), &{stub});")
        if named and not anon:
            body = "".join(f"namespace {ns} {{ " for ns in named) + body + " }" * len(named)
        out.append(body)
    return "\n".join(out)


_EXPLICIT = re.compile(r"\btemplate\s+((?:[A-Za-z_]\w*\s+)*?)([A-Za-z_]\w*)\s*<([^;{}()]*)>\s*\(([^;{}]*)\)\s*;")


def template_stubs(text: str) -> str:
    """Stubs for explicit instantiations of template kernels (``template __global__ void
    k<128>(float*, int);``): ``__xp_kernel_<k>_<args>``, the name the front-end gives the
    instance (platforms/common/templates.py), so a kernel-only file whose kernel is a template
    can be run; the stub takes the instantiation's (concrete) parameter types."""
    from platforms.common.templates import mangle_spelling

    masked = mask_code(text)
    out = []
    seen = set()
    for m in _EXPLICIT.finditer(masked):
        if "__global__" not in m.group(1).split():
            continue
        name, args = m.group(2), text[m.start(3):m.end(3)]
        params = param_list_without_defaults(text[m.start(4):m.end(4)].replace("\n", " "))
        params = params if params.strip() not in ("", "void") else ""
        mangled = mangle_spelling(name, args)
        if mangled in seen:
            continue
        seen.add(mangled)
        stub = f"__xp_kernel_{mangled}"
        ref = f"{name}<{args}>"
        out.append(f'extern "C" __attribute__((visibility("default"), used)) void {stub}(const xp_launch_t* __xp_cfg, '
                   f"void** __xp_args) {{ void (*__xp_fp)({params}) = {ref}; "
                   f"::xp::gpu::launch_stub({c_string(name)}, __xp_cfg, __xp_fp, __xp_args); }}")
    return "\n".join(out)


def profile_defines(profile: dict) -> list[str]:
    bd = profile.get("max_block_dims", [1024, 1024, 64])
    gd = profile.get("max_grid_dims", [2147483647, 65535, 65535])
    lines = [
        f"#define XP_WARP_SIZE {int(profile.get('warp_size', 32))}",
        f"#define XP_SHARED_OPTIN_BYTES {int(profile.get('shared_mem_optin_bytes', 0))}LL",
        f"#define XP_BLOCK_LIMIT_X {int(bd[0])}",
        f"#define XP_BLOCK_LIMIT_Y {int(bd[1])}",
        f"#define XP_BLOCK_LIMIT_Z {int(bd[2])}",
        f"#define XP_GRID_LIMIT_X {int(gd[0])}LL",
        f"#define XP_GRID_LIMIT_Y {int(gd[1])}LL",
        f"#define XP_GRID_LIMIT_Z {int(gd[2])}LL",
    ]
    # the modelled device's SM (CU) count and threads per SM: one home, the profile
    if "multiprocessor_count" in profile:
        lines.append(f"#define XP_SM_COUNT {int(profile['multiprocessor_count'])}")
    if "max_threads_per_multiprocessor" in profile:
        lines.append(f"#define XP_THREADS_PER_SM {int(profile['max_threads_per_multiprocessor'])}")
    return lines


def build_unit(source: str, path: str, *, strict: bool, profile: dict, platform: str, prologue_header: str,
               extra_defines: list[str], extra_code: str = "", transform=None) -> str:
    del strict  # strictness is chosen at run time (__xp_configure), the unit is the same
    text = inline_local_includes(source, path) if path else source
    text = unicode_whitespace_to_spaces(text)   # what clang and nvcc accept as whitespace
    if transform is not None:
        text = transform(text)
    body, kernels = rewrite_source(text, platform)
    shown = path or f"<{platform} source>"
    parts = [
        f"// generated by platforms/{platform}/emulate.py (xpiler virtual device) - do not edit",
        *profile_defines(profile),
        *extra_defines,
        f'#include "{prologue_header}"',
    ]
    if extra_code:
        parts.append(extra_code)
    parts += [line_directive(1, shown), body, "", line_directive(1, "<xpiler launch stubs>"),
              launcher_stubs(kernels), template_stubs(text), ""]
    return "\n".join(parts)


def prepare(source: str, path: str, *, strict: bool, profile: dict) -> str:
    """One C++17 translation unit: runtime + the user's code (``#line``-mapped) + launcher stubs."""
    arch = int(profile.get("arch", 800))
    return build_unit(source, path, strict=strict, profile=profile, platform=PLATFORM,
                      prologue_header="xp_cuda.h", extra_defines=[f"#define __CUDA_ARCH__ {arch}"])
