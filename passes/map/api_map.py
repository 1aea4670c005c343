"""api_map: CUDA <-> HIP by mapping runtime API and warp intrinsics, keeping the thread structure.

Summary
    The structure-preserving plan between the two GPU dialects: same kernels, same launches,
    same block/thread decomposition; runtime calls, types, includes and shuffles renamed
    according to ``platforms/hip/api_map.toml`` (the one home of the name map).
Requires
    1. The program is CUDA and the target HIP, or the reverse.
    2. It uses no tensor-core / matrix-core instruction (``nvcuda::wmma``, ``__builtin_amdgcn_*``):
       those need the tensorize/detensorize pair, not a rename.
    3. It uses no ``__match_*`` intrinsic, and a ``__reduce_*_sync`` only with the full mask
       ``0xffffffff`` and an operand of a known ``int`` / ``unsigned`` type (CUDA -> HIP); HIP -> CUDA also no 64-lane vote
       (``__ballot``, ``__any``, ``__activemask``) and no shuffle with a constant
       width above 32, which 32-lane warps cannot express (XP-APIMAP-002).
Guarantees
    Same outputs on the virtual device: CUDA shuffles become HIP shuffles with an explicit width
    of 32 (the HIP width defaults to the 64-lane wavefront), and ``warpSize`` in CUDA device code
    becomes 32, so CUDA's 32-lane groups are kept exactly inside a 64-lane wavefront. HIP
    shuffles become ``*_sync`` shuffles with a full mask; HIP code must then be written in terms
    of ``warpSize`` (which is 32 on the CUDA side), which the verification run checks. CUDA warp
    votes become the 64-bit wavefront ``__ballot`` narrowed to the thread's 32-lane half
    (``(unsigned)(__ballot(p) >> (__lane_id() & 32))``); ``__syncwarp`` becomes
    ``__builtin_amdgcn_wave_barrier()``; ``hipLaunchKernelGGL`` becomes a ``<<<>>>`` launch.
    A CUDA 11 warp reduction with the full mask (``__reduce_add_sync(0xffffffff, v)``) becomes a
    call of a generated device function ``xp_reduce_<op>_sync_<int|unsigned>``: a shuffle-xor
    butterfly of width 32 combining as ``platforms/cuda/intrinsics/warp.toml`` says (sums in
    unsigned arithmetic, modulo 2^32), exact for these integer operations; every lane of the
    32-lane group must take part, as the full mask requires (the virtual device reports a read of
    a lane that did not).
    HIP's ``__lane_id()`` becomes the linear thread id modulo ``warpSize``. HIP -> CUDA also spells the older built-ins (``hipThreadIdx_x`` ...) as ``threadIdx.x`` and
    calls of the ROCm device library (``__ocml_erf_f32``) as the libm function (``erff``).
    Runtime names used inside ``#define`` bodies are renamed like the code.
Options
    to: target platform, ``cuda`` or ``hip``.
Example (CUDA -> HIP)
    ``v += __shfl_down_sync(0xffffffff, v, 16);``  ->  ``v += __shfl_down(v, 16, 32);``
    ``cudaMemcpy(d, h, n, cudaMemcpyHostToDevice)`` -> ``hipMemcpy(d, h, n, hipMemcpyHostToDevice)``
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace
from functools import lru_cache

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic

from passes.base import Option, PassInfo, register


_MATRIX = re.compile(r"^(?:nvcuda::wmma::|wmma::|__builtin_amdgcn_mfma_)")
_REDUCE_SYNC = re.compile(r"^__reduce_\w+_sync$")
_UNMAPPABLE = re.compile(r"^(?:nvcuda::wmma::|wmma::|__builtin_amdgcn_|__match_|__reduce_\w+_sync$)")
# warp votes map to HIP's 64-bit wavefront ballot, narrowed to the thread's 32-lane half
# (CUDA -> HIP only; the reverse would need 64-lane votes on 32-lane warps)
_VOTES_TO_HIP = {
    "__activemask": ("(unsigned)(__ballot(1) >> (__lane_id() & 32))", 0),
    "__ballot_sync": ("(unsigned)(__ballot(P0) >> (__lane_id() & 32))", 1),
    "__any_sync": ("(((unsigned)(__ballot(P0) >> (__lane_id() & 32))) != 0)", 1),
    "__all_sync": ("(((unsigned)(__ballot(P0) >> (__lane_id() & 32))) == "
                   "((unsigned)(__ballot(1) >> (__lane_id() & 32))))", 1),
    "__syncwarp": ("__builtin_amdgcn_wave_barrier()", None),
}
_HIP_ONLY = re.compile(r"^(?:__ballot|__any|__all|__activemask|__syncwarp)$")
# HIP's __lane_id() on CUDA: the lane within the 32-lane warp (HIP code written against warpSize)
_LANE_ID_CUDA = "((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % warpSize)"
_INCLUDE = re.compile(r'^(\s*#\s*include\s*[<"])([^>"]+)([>"].*)$')


def load_map() -> dict:
    """``platforms/hip/api_map.toml`` through the platform interface (read once)."""
    import platforms

    return platforms.api_map()


def _names(to: str) -> tuple[dict, dict, dict]:
    table = load_map()
    names, shuffles, includes = table["names"], table["shuffles"], table["includes"]
    if to == "hip":
        return {**table.get("cuda_only", {}), **names}, dict(shuffles), dict(includes)
    inv_includes: dict[str, str] = {}
    for cuda_h, hip_h in includes.items():
        inv_includes.setdefault(hip_h, cuda_h)
    return ({**{v: k for k, v in names.items()}, **table.get("hip_only", {})},
            {v: k for k, v in shuffles.items()}, inv_includes)


class _Uses(c_ast.NodeVisitor):
    """Collects identifiers used as call targets or names (for the legality check)."""

    def __init__(self):
        self.found: list[tuple[str, object]] = []

    def visit_ID(self, node):
        self.found.append((node.name, node.coord))

    def visit_IdentifierType(self, node):
        for n in node.names:
            self.found.append((n, node.coord))


def _coord(program, c) -> Coord:
    if c is None:
        return Coord(program.path)
    return Coord(getattr(c, "file", None) or program.path, getattr(c, "line", 0) or 0, getattr(c, "column", 0) or 0)


@register(PassInfo(
    name="api_map",
    lowers=True,
    summary="CUDA <-> HIP: rename runtime API, types, includes and shuffles; keep the thread structure",
    options={"to": Option(str, "hip", "target platform: cuda or hip")},
    requires=("program is CUDA and target HIP, or the reverse",
              "no wmma / MFMA instructions (use the tensorize pair)",
              "no __match_* / __reduce_*_sync; hip -> cuda: no 64-lane votes"),
    guarantees=("same outputs on the virtual device", "same kernels, launches and thread structure"),
    introduces=("HIP or CUDA runtime API",),
))
def api_map(program, *, to: str = "hip"):
    return map_api(program, to)


def map_api(program, to: str):
    """The rename itself (no legality check); also the tail of ``matrix_core_map``."""
    names, shuffles, includes = _names(to)
    ast = copy.deepcopy(program.ast)
    # names the program declares itself (a wrapper called cudaCreateChannelDesc, a variable
    # called hipStreamDefault) are the user's: they keep their spelling everywhere
    own = _Declared()
    own.visit(ast)
    names = {k: v for k, v in names.items() if k not in own.names}
    if to == "cuda":
        from passes.lift.loop_recovery.support import normalize_hip_builtins

        normalize_hip_builtins(ast)
    _Renamer(names, shuffles, to, program.platform).visit(ast)
    _replace_calls(ast, _votes_to_hip if to == "hip" else _launch_ggl_to_cuda)
    if to == "hip":
        _expand_reductions(ast)
    facts = copy.deepcopy(program.facts)
    facts["preamble"] = [_map_define(_map_include(line, includes), names, to, shuffles)
                         for line in facts.get("preamble", []) if not _porting_shim(line, names, shuffles)]
    facts["includes"] = [includes.get(h, h) for h in facts.get("includes", [])]
    if to == "hip" and not any("hip_runtime" in l for l in facts["preamble"]):
        facts["preamble"].insert(0, "#include <hip/hip_runtime.h>")
    if to == "cuda":
        facts["preamble"] = [l for l in facts["preamble"] if "hip/" not in l or "#include" not in l]
        if not any("cuda_runtime" in l for l in facts["preamble"]):
            facts["preamble"].insert(0, "#include <cuda_runtime.h>")
    return replace(program, platform=to, ast=ast, facts=facts, source="",
                   intrinsics=[names.get(i, shuffles.get(i, i)) for i in program.intrinsics])


@api_map.legality
def _api_map_legal(program, *, to: str = "hip") -> list[Diagnostic]:
    return api_legality(program, to)


def api_legality(program, to: str, allow_matrix: bool = False) -> list[Diagnostic]:
    """api_map's checks; ``allow_matrix``: wmma / MFMA names are handled by the caller
    (``matrix_core_map``)."""
    if program.platform == to:
        return [Diagnostic("XP-APIMAP-003", f"the program is already {to}: nothing to rename",
                           Coord(program.path), pass_name="api_map")]
    pair = {program.platform, to}
    if pair != {"cuda", "hip"}:
        return [Diagnostic("XP-APIMAP-001", f"api_map translates between cuda and hip, not "
                           f"{program.platform} -> {to}", Coord(program.path), pass_name="api_map")]
    if to == "cuda":
        wide = _wide_shuffle(program.ast)
        if wide is not None:
            name, width, coord = wide
            return [Diagnostic("XP-APIMAP-002", f"'{name}' with width {width} spans a 64-lane wavefront, which "
                               "has no one-to-one cuda equivalent (warps have 32 lanes)",
                               _coord(program, coord), construct=name, pass_name="api_map")]
    uses = _Uses()
    uses.visit(program.ast)
    for name, coord in uses.found:
        if allow_matrix and _MATRIX.match(name):
            continue
        if _REDUCE_SYNC.match(name):
            why = "only its full-mask form on a known int / unsigned operand" if to == "hip" else "none"
            if to == "hip":
                bad = _Reductions(program.ast).unexpandable
                if not bad:
                    continue
                name, coord, why = bad[0]
            return [Diagnostic("XP-APIMAP-002", f"'{name}' (a CUDA 11 warp reduction over the lanes of "
                               f"its mask) has no {to} equivalent in the mask-less wavefront intrinsics "
                               "this project generates (platforms/hip/intrinsics/warp.toml) but a "
                               f"shuffle-xor butterfly, which needs the full mask 0xffffffff and an "
                               f"int / unsigned operand ({why}); the lift to C (loop_recovery) gives it "
                               "its exact semantics",
                               _coord(program, coord), construct=name, pass_name="api_map")]
        if _UNMAPPABLE.match(name) or (to == "cuda" and _HIP_ONLY.match(name)):
            return [Diagnostic("XP-APIMAP-002", f"'{name}' has no one-to-one {to} equivalent "
                               "(matrix instructions and warp votes need other passes)",
                               _coord(program, coord), construct=name, pass_name="api_map")]
    return []


_WORD = re.compile(r"\b[A-Za-z_]\w*\b")
_OCML = re.compile(r"^__ocml_(\w+)_f(32|64)$")
_LITERAL = re.compile(r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')")


_DEFINE = re.compile(r"\s*#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$")


def _porting_shim(line: str, names: dict, shuffles: dict) -> bool:
    """A ``#define`` that spells a name of the target's API in terms of the source's own
    (``#define __shfl_xor_sync(mask, v, l, w) __shfl_xor(v, l, w)`` in a HIP port of CUDA code,
    ``#define cudaStream_t hipStream_t``): the target has the name natively, with the meaning the
    map gives its source counterpart, so the macro is dropped rather than translated (kept, it
    would redefine the target's own name, or in terms of names the target does not have)."""
    m = _DEFINE.match(line)
    if not m:
        return False
    name, body = m.group(1), m.group(3).strip()
    if name not in set(names.values()) | set(shuffles.values()):
        return False
    lead = _WORD.match(body)
    if lead is None:
        return False
    lead = lead.group(0)
    return lead == name or names.get(lead) == name or shuffles.get(lead) == name


def _map_define(line: str, names: dict, to: str, shuffles: dict | None = None) -> str:
    """Runtime names inside a ``#define`` body are renamed like the code (macros are not expanded
    by the front-end, so a ``CUDA_CHECK`` macro keeps naming ``cudaError_t``); toward CUDA, a HIP
    shuffle called in the body becomes the ``*_sync`` form with a full mask (the arguments
    after it are kept, as in the code)."""
    if not re.match(r"\s*#\s*define\b", line):
        return line
    if to == "cuda" and shuffles:
        line = re.sub(r"\b(%s)\s*\(" % "|".join(map(re.escape, sorted(shuffles, key=len, reverse=True))),
                      lambda m: f"{shuffles[m.group(1)]}(0xffffffffu, ", line)

    def sub(m):
        w = m.group(0)
        if to == "cuda":
            from passes.lift.loop_recovery.support import HIP_BUILTINS

            if w in HIP_BUILTINS:
                return "(%s.%s)" % HIP_BUILTINS[w]
            o = _OCML.match(w)
            if o:
                return _ocml_to_cuda(o)
        return names.get(w, w)

    # string and character literals keep their text ("cudaMalloc failed")
    return "".join(part if part[:1] in "\"'" else _WORD.sub(sub, part) for part in _LITERAL.split(line))


def _ocml_to_cuda(m) -> str:
    """``__ocml_erf_f32`` -> ``erff``; ``__ocml_erf_f64`` -> ``erf`` (CUDA's libm names)."""
    return m.group(1) + ("f" if m.group(2) == "32" else "")


def _wide_shuffle(ast):
    """(name, width, coord) of the first shuffle of a HIP source with a constant width above
    CUDA's 32: a mask-less HIP shuffle (width third) or a ``*_sync`` one (width fourth, which
    HIP also has and which a port may define in terms of the mask-less form)."""
    shuffles = load_map()["shuffles"]
    width_at = {**{h: 2 for h in shuffles.values()}, **{c: 3 for c in shuffles}}
    for node in _walk(ast):
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
                node.name.name in width_at and node.args and len(node.args.exprs) > width_at[node.name.name]:
            w = node.args.exprs[width_at[node.name.name]]
            if isinstance(w, c_ast.Constant) and w.type == "int":
                try:
                    width = int(w.value.rstrip("uUlL"), 0)
                except ValueError:
                    continue
                if width > load_map()["constants"]["cuda_warp_size"]:
                    return node.name.name, width, node.coord
    return None


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for _, c in n.children())


def _map_include(line: str, includes: dict) -> str:
    m = _INCLUDE.match(line)
    if not m:
        return line
    return f"{m.group(1)}{includes.get(m.group(2), m.group(2))}{m.group(3)}"


class _Declared(c_ast.NodeVisitor):
    """Names the program declares: variables, functions, parameters, typedefs, enumerators, tags."""

    def __init__(self):
        self.names: set[str] = set()

    def visit_Decl(self, node):
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)

    def visit_Typedef(self, node):
        self.names.add(node.name)
        self.generic_visit(node)

    def visit_Enumerator(self, node):
        self.names.add(node.name)
        self.generic_visit(node)

    def visit_Struct(self, node):
        if node.name and node.decls is not None:
            self.names.add(node.name)
        for member in node.decls or ():      # member names are the struct's own namespace
            self.visit(member.type)

    visit_Union = visit_Struct

    def visit_Enum(self, node):
        if node.name and node.values is not None:
            self.names.add(node.name)
        self.generic_visit(node)


class _Renamer(c_ast.NodeVisitor):
    """Renames API identifiers and rewrites shuffle calls in place (on the pass's own copy)."""

    def __init__(self, names: dict, shuffles: dict, to: str, source_platform: str):
        self.names, self.shuffles, self.to = names, shuffles, to
        self.warp = load_map()["constants"]["cuda_warp_size"]
        self.source_platform = source_platform
        self.in_device = False

    def visit_FuncDef(self, node):
        spec = set(node.decl.funcspec or [])
        was = self.in_device
        self.in_device = bool(spec & {"__global__", "__device__"})
        self.generic_visit(node)
        self.in_device = was

    def visit_FuncCall(self, node):
        if isinstance(node.name, c_ast.ID) and node.name.name in self.shuffles:
            self._rewrite_shuffle(node)
        self.generic_visit(node)

    def _rewrite_shuffle(self, node):
        args = list(node.args.exprs) if node.args else []
        new = self.shuffles[node.name.name]
        if self.to == "hip":          # (mask, v, lane/delta[, width]) -> (v, lane/delta, width or 32)
            rest = args[1:]
            if len(rest) == 2:
                rest.append(c_ast.Constant("int", str(self.warp)))
        else:                         # (v, lane/delta[, width]) -> (0xffffffff, v, lane/delta[, width])
            rest = [c_ast.Constant("unsigned int", "0xffffffffu")] + args
        node.name = c_ast.ID(new, coord=node.name.coord)
        node.args = c_ast.ExprList(rest, coord=node.args.coord if node.args else node.coord)

    def visit_StructRef(self, node):
        # a member name (s.cudaStream, p->hipError) is the struct's, not the runtime's
        self.visit(node.name)

    def visit_ID(self, node):
        if node.name == "warpSize" and self.to == "hip" and self.in_device:
            # CUDA semantics: warps of 32 (shuffles keep width 32, see module docstring)
            node.name = str(self.warp)
            return
        if node.name in self.names:
            node.name = self.names[node.name]
        elif self.to == "cuda" and _OCML.match(node.name):
            node.name = _ocml_to_cuda(_OCML.match(node.name))

    def visit_IdentifierType(self, node):
        node.names = [self.names.get(n, n) for n in node.names]


# ------------------------------------------------------------------------------ warp reductions
_INT_TYPES = {"int": "int", "signed": "int", "signed int": "int", "int32_t": "int",
              "unsigned": "unsigned", "unsigned int": "unsigned", "uint32_t": "unsigned"}


def _scalar_type(node) -> str | None:
    """``int`` / ``unsigned`` for a declaration or type name of one of those types, else None."""
    if isinstance(node, (c_ast.Decl, c_ast.Typename)):
        node = node.type
    if isinstance(node, c_ast.TypeDecl) and isinstance(node.type, c_ast.IdentifierType):
        return _INT_TYPES.get(" ".join(node.type.names))
    return None


def _full_mask(e) -> bool:
    if not isinstance(e, c_ast.Constant) or e.type not in ("int", "unsigned int", "long int", "unsigned long int"):
        return False
    try:
        return int(e.value.rstrip("uUlL"), 0) == 0xFFFFFFFF
    except ValueError:
        return False


def _element_type(node) -> str | None:
    """``int`` / ``unsigned`` for a declaration of a pointer to / array of one of those types."""
    if isinstance(node, c_ast.Decl):
        node = node.type
    if isinstance(node, (c_ast.PtrDecl, c_ast.ArrayDecl)):
        return _scalar_type(node.type)
    return None


class _Reductions(c_ast.NodeVisitor):
    """The ``__reduce_<op>_sync`` calls of a CUDA program with, per call, the overload its operand
    picks (``int`` / ``unsigned``, from the declared type of a variable, a cast or a literal, in
    the scopes of its function) when the call can become a width-32 butterfly (full mask, a type
    warp.toml lists for the operation); the others in ``unexpandable`` (name, coord, why)."""

    def __init__(self, ast):
        self.scopes: list[dict] = [{}]
        self.expandable: dict[int, tuple[str, str]] = {}
        self.unexpandable: list[tuple[str, object, str]] = []
        for ext in ast.ext:
            if isinstance(ext, c_ast.Decl) and ext.name:
                self.scopes[0][ext.name] = ext
        self.visit(ast)

    def visit_FuncDef(self, node):
        self.scopes.append({})
        args = node.decl.type.args if isinstance(node.decl.type, c_ast.FuncDecl) else None
        for prm in (args.params if args else []):
            if isinstance(prm, c_ast.Decl) and prm.name:
                self.scopes[-1][prm.name] = prm
        self.visit(node.body)
        self.scopes.pop()

    def visit_Compound(self, node):
        self.scopes.append({})
        self.generic_visit(node)
        self.scopes.pop()

    visit_For = visit_Compound

    def visit_Decl(self, node):
        self.generic_visit(node)          # the initialiser sees the outer name
        if node.name:
            self.scopes[-1][node.name] = node

    def declared(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def type_of(self, e) -> str | None:
        if isinstance(e, c_ast.ID):
            return _scalar_type(self.declared(e.name))
        if isinstance(e, c_ast.ArrayRef) and isinstance(e.name, c_ast.ID):
            return _element_type(self.declared(e.name.name))
        if isinstance(e, c_ast.Cast):
            return _scalar_type(e.to_type)
        if isinstance(e, c_ast.Constant) and e.type in ("int", "unsigned int"):
            return "int" if e.type == "int" else "unsigned"
        return None

    def visit_FuncCall(self, node):
        self.generic_visit(node)
        name = node.name.name if isinstance(node.name, c_ast.ID) else None
        if not name or not _REDUCE_SYNC.match(name):
            return
        args = node.args.exprs if node.args else []
        t = self.type_of(args[1]) if len(args) == 2 else None
        op = name[len("__reduce_"):-len("_sync")]
        import platforms

        item = next((i for i in platforms.intrinsic_table("cuda", "warp")["intrinsic"] if i["name"] == name), None)
        if item is None or len(args) != 2:
            self.unexpandable.append((name, node.coord, "an unknown form"))
        elif not _full_mask(args[0]):
            self.unexpandable.append((name, node.coord, "its mask is not the constant 0xffffffff"))
        elif t is None or t not in item.get("types", ()):
            self.unexpandable.append((name, node.coord, "the operand's type is not established as one of "
                                      + " / ".join(item.get("types", ()))))
        else:
            self.expandable[id(node)] = (op, t, item["combine"])


def _reduction_fn(op: str, t: str, combine: str, warp: int) -> str:
    """The device function of ``__reduce_<op>_sync(0xffffffff, v)`` for a ``t`` operand."""
    ct = "unsigned int" if t == "unsigned" else "int"
    acc = "unsigned int" if op == "add" or t == "unsigned" else "int"
    return (f"static __device__ __forceinline__ {ct} xp_reduce_{op}_sync_{t}({ct} v) {{\n"
            f"  {acc} a = ({acc})v;\n"
            f"  for (int o = {warp // 2}; o > 0; o >>= 1) {{\n"
            f"    {acc} b = __shfl_xor(a, o, {warp});\n"
            f"    a = ({acc})({combine});\n"
            f"  }}\n  return ({ct})a;\n}}\n")


def _expand_reductions(ast) -> None:
    """Full-mask warp reductions -> calls of generated width-32 butterflies (module docstring),
    defined before the first function of the file."""
    found = _Reductions(ast)
    if not found.expandable:
        return
    warp = load_map()["constants"]["cuda_warp_size"]
    made: dict[str, str] = {}

    def rewrite(call):
        got = found.expandable.get(id(call))
        if got is None:
            return None
        op, t, combine = got
        fn = f"xp_reduce_{op}_sync_{t}"
        made.setdefault(fn, _reduction_fn(op, t, combine, warp))
        return c_ast.FuncCall(c_ast.ID(fn, coord=call.name.coord),
                              c_ast.ExprList([call.args.exprs[1]], coord=call.args.coord), coord=call.coord)

    _replace_calls(ast, rewrite)
    import platforms

    probe = 'extern "C" void xp_reduce_probe(void) {}\n'       # the front-end wants an entry
    helpers = platforms.module("hip", "frontend").parse(
        "#include <hip/hip_runtime.h>\n" + "".join(made[k] for k in sorted(made)) + probe,
        path="<xpiler-warp-reductions>")
    defs = [e for e in helpers.ast.ext if isinstance(e, c_ast.FuncDef) and e.decl.name in made]
    at = next((i for i, e in enumerate(ast.ext) if isinstance(e, c_ast.FuncDef)), len(ast.ext))
    ast.ext[at:at] = defs


# ------------------------------------------------------------------------------ call rewrites
def _replace_calls(node, rewrite) -> None:
    """Post-order walk replacing FuncCall children for which ``rewrite`` returns a new node."""
    for attr in getattr(node, "__slots__", ()):
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr, None)
        if isinstance(value, c_ast.Node):
            _replace_calls(value, rewrite)
            new = rewrite(value) if isinstance(value, c_ast.FuncCall) else None
            if new is not None:
                setattr(node, attr, new)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, c_ast.Node):
                    _replace_calls(item, rewrite)
                    new = rewrite(item) if isinstance(item, c_ast.FuncCall) else None
                    if new is not None:
                        value[i] = new


@lru_cache(maxsize=None)
def _template(text: str) -> c_ast.Node:
    from pycparser import c_parser

    unit = c_parser.CParser().parse(f"void __xp_t(void) {{ __xp_r = {text}; }}")
    return unit.ext[0].body.block_items[0].rvalue


def _instantiate(text: str, subs: dict, coord) -> c_ast.Node:
    node = copy.deepcopy(_template(text))

    def fill(n):
        for attr in getattr(n, "__slots__", ()):
            if attr in ("coord", "__weakref__"):
                continue
            v = getattr(n, attr, None)
            if isinstance(v, c_ast.ID) and v.name in subs:
                setattr(n, attr, copy.deepcopy(subs[v.name]))
            elif isinstance(v, c_ast.Node):
                fill(v)
            elif isinstance(v, list):
                for i, item in enumerate(v):
                    if isinstance(item, c_ast.ID) and item.name in subs:
                        v[i] = copy.deepcopy(subs[item.name])
                    elif isinstance(item, c_ast.Node):
                        fill(item)
        if hasattr(n, "coord") and n.coord is None:
            n.coord = coord

    fill(node)
    return node


def _votes_to_hip(call: c_ast.FuncCall):
    if not isinstance(call.name, c_ast.ID) or call.name.name not in _VOTES_TO_HIP:
        return None
    text, pred_index = _VOTES_TO_HIP[call.name.name]
    args = list(call.args.exprs) if call.args else []
    subs = {"P0": args[pred_index]} if pred_index is not None and len(args) > pred_index else {}
    return _instantiate(text, subs, call.coord)


def _launch_ggl_to_cuda(call: c_ast.FuncCall):
    """HIP -> CUDA call rewrites: ``__lane_id()`` and ``hipLaunchKernelGGL``."""
    if isinstance(call.name, c_ast.ID) and call.name.name == "__lane_id" and not (call.args and call.args.exprs):
        return _instantiate(_LANE_ID_CUDA, {}, call.coord)
    return _ggl_to_cuda(call)


def _ggl_to_cuda(call: c_ast.FuncCall):
    """``hipLaunchKernelGGL(k, grid, block, shmem, stream, args...)`` -> ``k<<<grid, block, shmem,
    stream>>>(args...)`` in the front-end's launch form; ``HIP_KERNEL_NAME(k)`` unwraps to k."""
    if not isinstance(call.name, c_ast.ID) or call.name.name != "hipLaunchKernelGGL" or not call.args:
        return None
    args = list(call.args.exprs)
    if len(args) < 5:
        return None
    kernel = args[0]
    if (isinstance(kernel, c_ast.FuncCall) and isinstance(kernel.name, c_ast.ID)
            and kernel.name.name == "HIP_KERNEL_NAME" and kernel.args):
        kernel = kernel.args.exprs[0]
    config = c_ast.ExprList([kernel, *args[1:5]], coord=call.coord)
    launch = c_ast.FuncCall(c_ast.ID("__xp_launch", coord=call.coord), config, coord=call.coord)
    return c_ast.FuncCall(launch, c_ast.ExprList(args[5:], coord=call.coord), coord=call.coord)
