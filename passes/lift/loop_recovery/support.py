"""C++ support code for lifted CUDA/HIP programs (private helper of ``passes/lift/loop_recovery/__init__.py``).

The lifted file must be self-contained plain C++ that g++ compiles natively and that the vnni
front-end parses back (so: C syntax only, overloaded functions allowed, no templates/classes).
Each helper is one snippet; ``support_code(names, platform)`` returns the snippets a program
needs, in dependency order.

Special-instruction semantics are not written here: shuffle source lanes come from the
``source_lane`` formulas of ``platforms/<p>/intrinsics/warp.toml``, MFMA lane maps and
reference bodies from ``platforms/hip/intrinsics/mfma.toml``, wmma reference bodies and
fragment shapes from ``platforms/cuda/intrinsics/wmma.toml`` (the one home of that knowledge).
Host-side and math helpers mirror the virtual device's runtime
(``platforms/common/gpu_runtime/xp_gpu_device.h``): same overload sets, same formulas.
"""
from __future__ import annotations

import re
from functools import lru_cache

import platforms
from platforms.common.gpu_vectors import VECTOR_TYPES

WARP = {"cuda": 32, "hip": 64}


@lru_cache(maxsize=None)
def intrinsics(platform: str, name: str) -> dict:
    import platforms

    return platforms.intrinsic_table(platform, name)


def intrinsic(platform: str, table: str, name: str) -> dict | None:
    return next((i for i in intrinsics(platform, table).get("intrinsic", []) if i["name"] == name), None)


# ----------------------------------------------------------------------------- shuffles
SHUFFLES = {
    "cuda": {"__shfl_sync": "idx", "__shfl_up_sync": "up", "__shfl_down_sync": "down",
             "__shfl_xor_sync": "xor"},
    # HIP also has CUDA's *_sync forms (mask first, the same lanes as the mask-less ones)
    "hip": {"__shfl": "idx", "__shfl_up": "up", "__shfl_down": "down", "__shfl_xor": "xor",
            "__shfl_sync": "idx", "__shfl_up_sync": "up", "__shfl_down_sync": "down", "__shfl_xor_sync": "xor"},
}


# warp votes lifted like shuffles (exchange through a per-thread predicate array)
_BLOCK_VOTES = {"__syncthreads_count": "bcount", "__syncthreads_and": "band", "__syncthreads_or": "bor"}
VOTES = {
    "cuda": {"__ballot_sync": "ballot", "__any_sync": "any", "__all_sync": "all", **_BLOCK_VOTES},
    "hip": {"__ballot": "ballot", "__ballot64": "ballot", "__any": "any", "__all": "all",
            "__ballot_sync": "ballot", "__any_sync": "any", "__all_sync": "all", **_BLOCK_VOTES},
}


# CUDA 11 warp reductions (warp.toml: the lanes that take part and the combining formula);
# HIP keeps CUDA's names in its *_sync forms (64-bit mask)
_REDUCE_OPS = ("add", "min", "max", "and", "or", "xor")
REDUCES = {p: {f"__reduce_{op}_sync": op for op in _REDUCE_OPS} for p in ("cuda", "hip")}


def reduce_type(op: str, value_type: str | None) -> str:
    """The overload a warp reduction picks: ``int`` for a signed integer value of
    ``__reduce_add/min/max_sync``, else ``unsigned`` (warp.toml ``types``)."""
    item = intrinsic("cuda", "warp", f"__reduce_{op}_sync")
    signed = value_type in ("int", "short", "char", "signed char", "signed", "signed int", "short int")
    return "int" if signed and "int" in item.get("types", ()) else "unsigned"


def reduce_fn(platform: str, op: str, t: str) -> str:
    """``xp_wreduce_<op>_<t>(v, tid, nt, done, part, mask)``: the value of ``__reduce_<op>_sync``
    for thread ``tid``: ``v`` folded over the lanes of its warp that take part (in ``mask``,
    existing, not exited, inside the condition ``part``), combined as warp.toml says. Sums are
    taken in unsigned arithmetic (modulo 2^32, as the hardware's)."""
    w = WARP[platform]
    item = intrinsic("cuda", "warp", f"__reduce_{op}_sync")
    acc = "unsigned int" if op == "add" or t == "unsigned" else "int"
    ct = "unsigned int" if t == "unsigned" else "int"
    return (f"static inline {ct} xp_wreduce_{op}_{t}(const {ct} *v, unsigned int tid, unsigned int nt, "
            f"const unsigned char *done, const unsigned char *part, unsigned long long mask) {{\n"
            f"  {acc} a = 0;\n  int first = 1;\n  unsigned int base = tid - tid % {w};\n"
            f"  for (unsigned int l = 0; l < {w}; ++l) {{\n    unsigned int s = base + l;\n"
            f"    if (s >= nt || !((mask >> l) & 1ull) || (done && done[s]) || (part && !part[s])) continue;\n"
            f"    {acc} b = ({acc})v[s];\n    a = first ? b : ({acc})({item['combine']});\n    first = 0;\n"
            f"  }}\n  return ({ct})a;\n}}\n")


def with_mask(name: str) -> bool:
    """A collective whose first argument is a lane mask (CUDA's, and HIP's ``*_sync`` forms)."""
    return name.endswith("_sync") and name not in _BLOCK_VOTES


def block_vote_fn() -> str:
    """``__syncthreads_count``: threads of the block that take part (not exited, inside the
    condition ``part``) and voted true (all of them with ``live_only``)."""
    return ("static inline int xp_block_vote(const unsigned char *v, unsigned int nt, const unsigned char *done, "
            "const unsigned char *part, int live_only) {\n  int c = 0;\n"
            "  for (unsigned int s = 0; s < nt; ++s)\n"
            "    if (!(done && done[s]) && !(part && !part[s]) && (live_only || v[s])) ++c;\n  return c;\n}\n")


def collectives(platform: str) -> set[str]:
    """Warp collectives the lift turns into exchange points (shuffles and votes)."""
    return set(SHUFFLES[platform]) | set(VOTES[platform]) | set(REDUCES[platform])


def vote_mask_fn(platform: str) -> str:
    """Ballot of the lanes of ``tid``'s warp that take part (exist, not exited, inside the
    condition ``part``) and voted true (all of them with ``live_only``)."""
    w = WARP[platform]
    t = "unsigned int" if w == 32 else "unsigned long long"
    return (f"static inline {t} xp_vote_mask(const unsigned char *v, unsigned int tid, unsigned int nt, "
            f"const unsigned char *done, const unsigned char *part, int live_only) {{\n"
            f"  {t} m = 0;\n  unsigned int base = tid - tid % {w};\n"
            f"  for (unsigned int l = 0; l < {w}; ++l) {{\n    unsigned int s = base + l;\n"
            f"    if (s < nt && !(done && done[s]) && !(part && !part[s]) && (live_only || v[s])) m |= ({t})1 << l;\n"
            f"  }}\n  return m;\n}}\n")


def _py_cond_to_c(text: str) -> str:
    """``A if C else B`` (TOML formula spelling) -> ``((C) ? (A) : (B))``; comments dropped."""
    text = text.split("#", 1)[0].strip()
    m = re.fullmatch(r"(.+?)\s+if\s+(.+?)\s+else\s+(.+)", text)
    if not m:
        return f"({text})"
    return f"(({m.group(2)}) ? ({m.group(1)}) : ({_py_cond_to_c(m.group(3))}))"


def shuffle_source_fn(platform: str, kind: str) -> str:
    """C function ``xp_shfl_src_<kind>(laneId, arg, width)`` generated from warp.toml."""
    name = next(n for n, k in SHUFFLES[platform].items() if k == kind)
    item = intrinsic(platform, "warp", name)
    formula = _py_cond_to_c(item["source_lane"])
    mask = " & 63" if platform == "hip" else ""
    return (f"static inline int xp_shfl_src_{kind}(long long laneId, long long arg, long long width) {{\n"
            f"  long long lane = laneId % width;\n  long long base = laneId - lane;\n"
            f"  long long self = laneId;\n  long long srcLane = arg;\n  long long delta = arg;\n"
            f"  long long laneMask = arg;\n"
            f"  return (int)({formula}{mask});\n}}\n")


def shuffle_pick_fn(platform: str, kind: str) -> str:
    """Linear id of the thread whose value a shuffle returns (own id for out-of-range lanes,
    missing lanes of a partial warp and exited lanes: the emulator's 'own value' rule)."""
    w = WARP[platform]
    return (f"static inline unsigned int xp_shfl_{kind}(unsigned int tid, unsigned int nt, long long arg, "
            f"long long width, const unsigned char *done, const unsigned char *part) {{\n"
            f"  if (width <= 0 || width > {w} || (width & (width - 1)) != 0) width = {w};\n"
            f"  unsigned int src = tid - tid % {w} + (unsigned int)xp_shfl_src_{kind}(tid % {w}, arg, width);\n"
            f"  if (src >= nt) return tid;\n  if (done && done[src]) return tid;\n"
            f"  if (part && !part[src]) return tid;\n  return src;\n}}\n")


# ----------------------------------------------------------------------------- MFMA
_C_TYPES = {"float": "float", "_Float16": "_Float16", "half": "_Float16"}


def mfma_info(name: str) -> dict | None:
    return intrinsic("hip", "mfma", name)


def mfma_fn(name: str) -> str:
    """Whole-wavefront MFMA on per-lane operand arrays, generated from mfma.toml: gather A, B,
    C through the lane maps, run the TOML reference body, scatter D through d_map."""
    it = mfma_info(name)
    m, n, k = it["m"], it["n"], it["k"]
    ae, ce = it["a_elems"], it["c_elems"]
    t = _C_TYPES[it["in_elem"]]
    am, bm, dm = it["a_map"], it["b_map"], it["d_map"]
    fn = "xp_" + name.removeprefix("__builtin_amdgcn_")
    return (f"static void {fn}(const {t} *a, const {t} *b, const float *c, float *d) {{\n"
            f"  {t} A[{m}][{k}];\n  {t} B[{k}][{n}];\n  float C[{m}][{n}];\n  float D[{m}][{n}];\n"
            f"  for (int L = 0; L < 64; ++L) {{\n"
            f"    for (int r = 0; r < {ae}; ++r) {{\n"
            f"      A[{am[0]}][{am[1]}] = a[L * {ae} + r];\n"
            f"      B[{bm[0]}][{bm[1]}] = b[L * {ae} + r];\n    }}\n"
            f"    for (int r = 0; r < {ce}; ++r) C[{dm[0]}][{dm[1]}] = c[L * {ce} + r];\n  }}\n"
            f"{it['reference'].strip()}\n"
            f"  for (int L = 0; L < 64; ++L)\n"
            f"    for (int r = 0; r < {ce}; ++r) d[L * {ce} + r] = D[{dm[0]}][{dm[1]}];\n}}\n")


# ----------------------------------------------------------------------------- wmma
def wmma_shape(m: int, n: int, k: int, use: str) -> tuple[int, int, int]:
    """(rows, cols, num_elements) of a fragment, from wmma.toml [fragment.mXnYkZ]."""
    frag = intrinsics("cuda", "wmma")["fragment"].get(f"m{m}n{n}k{k}")
    if frag is None or use not in frag:
        raise KeyError(f"m{m}n{n}k{k} {use}")
    f = frag[use]
    return f["rows"], f["cols"], f["num_elements"]


def _ref(name: str) -> str:
    return intrinsic("cuda", "wmma", "nvcuda::wmma::" + name)["reference"].strip()


def wmma_load_fn(t: str, rows: int, cols: int) -> str:
    """``F`` is the fragment's logical rows x cols matrix (row-major storage); the TOML
    reference reads row-major memory, its stated column-major variant is p[c*ldm + r]."""
    body = _ref("load_matrix_sync").replace("p[r*ldm + c]", "p[col ? c*ldm + r : r*ldm + c]")
    return (f"static void xp_wmma_load_{t}_{rows}x{cols}({t} (*F)[{cols}], const {t} *p, unsigned int ldm, "
            f"int col) {{\n  const int rows = {rows};\n  const int cols = {cols};\n{body}\n}}\n")


def wmma_store_fn(t: str, m: int, n: int) -> str:
    body = _ref("store_matrix_sync")
    return (f"static void xp_wmma_store_{t}_{m}x{n}({t} *p, {t} (*F)[{n}], unsigned int ldm, int layout) {{\n"
            f"  const int m = {m};\n  const int n = {n};\n  const int mem_row_major = 0;\n{body}\n}}\n")


def wmma_fill_fn(t: str, rows: int, cols: int) -> str:
    # reference: every lane sets each of its x[i]; over the warp that is every element
    return (f"static void xp_wmma_fill_{t}_{rows}x{cols}({t} (*F)[{cols}], {t} v) {{\n"
            f"  for (int r = 0; r < {rows}; ++r) for (int c = 0; c < {cols}; ++c) F[r][c] = v;\n}}\n")


def wmma_mma_fn(td: str, ta: str, tb: str, tc: str, m: int, n: int, k: int) -> str:
    body = _ref("mma_sync")
    return (f"static void xp_wmma_mma_{td}_{ta}_{tb}_{tc}_{m}x{n}x{k}({td} (*D)[{n}], {ta} (*A)[{k}], "
            f"{tb} (*B)[{n}], {tc} (*C)[{n}], int satf) {{\n"
            f"  const int m = {m};\n  const int n = {n};\n  const int k = {k};\n{body}\n}}\n")


SATURATE = ("static inline float saturate(float x) {\n"
            "  if (x != x) return 0.0f;\n  if (x > 65504.0f) return 65504.0f;\n"
            "  if (x < -65504.0f) return -65504.0f;\n  return x;\n}\n")


def wmma_saturate(td: str) -> str:
    """satf: NaN -> +0, +-Inf -> +-MAX_NORM of the accumulator type (wmma.toml mma_sync)."""
    big = "65504.0f" if td == "half" else "3.40282347e+38f"
    return SATURATE.replace("65504.0f", big)


# ----------------------------------------------------------------------------- fixed helpers
HOST = """\
typedef struct { unsigned int x, y, z; } dim3;
static inline dim3 xp_dim3(unsigned int x, unsigned int y, unsigned int z) {
  dim3 d;
  d.x = x;
  d.y = y;
  d.z = z;
  return d;
}
static inline int xp_malloc(void **p, size_t n) {
  *p = malloc(n ? n : 1);
  return *p ? 0 : 2;
}
static inline int xp_memcpy(void *dst, const void *src, size_t n) {
  if (n && dst != src) memmove(dst, src, n);
  return 0;
}
static inline int xp_memset(void *dst, int v, size_t n) {
  memset(dst, v, n);
  return 0;
}
static inline int xp_free(void *p) {
  free(p);
  return 0;
}
static inline int xp_nop(void) {
  return 0;
}
static inline const char *xp_error_string(int e) {
  return e ? "error" : "no error";
}
static inline int xp_event_elapsed(float *ms) {
  *ms = 0.0f;
  return 0;
}
static inline int xp_get_device(int *d) {
  *d = 0;
  return 0;
}
static inline int xp_get_device_count(int *n) {
  *n = 1;
  return 0;
}
static inline int xp_device_attribute(int *v, int value, int dev) {
  if (dev != 0) return 1;
  *v = value;
  return 0;
}
"""

# Device functions the lifted program may call: the runtime's host-definable definitions (one
# home: platforms/common/gpu_runtime/xp_gpu_device.h, read through platforms.device_functions)
# and the lift's own stand-ins for names the header does not define that way.
MATH = {name: f"static {text}" for name, text in platforms.device_functions("cuda").items()}
MATH.update({
    "__ocml_sin_f32": "static inline float __ocml_sin_f32(float x) { return sinf(x); }",
    "__ocml_cos_f32": "static inline float __ocml_cos_f32(float x) { return cosf(x); }",
    "__ocml_exp_f32": "static inline float __ocml_exp_f32(float x) { return expf(x); }",
    "__ldg": None,   # rewritten to a plain load by the lift
})

# ROCm device library functions called directly (__ocml_<fn>_f32/_f64): the libm function
# (same table as platforms/hip/runtime/xp_hip.h).
OCML_UNARY = ("acos acosh asin asinh atan atanh cbrt ceil cos cosh erf erfc exp exp10 exp2 expm1 fabs "
              "floor lgamma log log10 log1p log2 rint round sin sinh sqrt tan tanh tgamma trunc").split()
OCML_BINARY = "atan2 copysign fdim fmax fmin fmod hypot pow".split()
for _f in OCML_UNARY:
    MATH.setdefault(f"__ocml_{_f}_f32", f"static inline float __ocml_{_f}_f32(float x) {{ return {_f}f(x); }}")
    MATH.setdefault(f"__ocml_{_f}_f64", f"static inline double __ocml_{_f}_f64(double x) {{ return {_f}(x); }}")
for _f in OCML_BINARY:
    MATH.setdefault(f"__ocml_{_f}_f32",
                    f"static inline float __ocml_{_f}_f32(float x, float y) {{ return {_f}f(x, y); }}")
    MATH.setdefault(f"__ocml_{_f}_f64",
                    f"static inline double __ocml_{_f}_f64(double x, double y) {{ return {_f}(x, y); }}")
MATH["__ocml_rsqrt_f32"] = "static inline float __ocml_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }"
MATH["__ocml_rsqrt_f64"] = "static inline double __ocml_rsqrt_f64(double x) { return 1.0 / sqrt(x); }"
MATH["__ocml_fma_f32"] = "static inline float __ocml_fma_f32(float x, float y, float z) { return fmaf(x, y, z); }"
MATH["__ocml_fma_f64"] = "static inline double __ocml_fma_f64(double x, double y, double z) { return fma(x, y, z); }"


def _minmax() -> str:
    out = []
    pairs = [("int", "int", "int"), ("unsigned int", "unsigned int", "unsigned int"),
             ("int", "unsigned int", "unsigned int"), ("unsigned int", "int", "unsigned int"),
             ("long", "long", "long"), ("unsigned long", "unsigned long", "unsigned long"),
             ("long long", "long long", "long long"),
             ("unsigned long long", "unsigned long long", "unsigned long long"),
             ("long long", "unsigned long long", "unsigned long long"),
             ("unsigned long long", "long long", "unsigned long long")]
    for a, b, r in pairs:
        out.append(f"inline {r} min({a} a, {b} b) {{ return ({r})a < ({r})b ? ({r})a : ({r})b; }}")
        out.append(f"inline {r} max({a} a, {b} b) {{ return ({r})a > ({r})b ? ({r})a : ({r})b; }}")
    out += ["inline float min(float a, float b) { return fminf(a, b); }",
            "inline float max(float a, float b) { return fmaxf(a, b); }",
            "inline double min(double a, double b) { return fmin(a, b); }",
            "inline double max(double a, double b) { return fmax(a, b); }",
            "inline double min(float a, double b) { return fmin(a, b); }",
            "inline double max(float a, double b) { return fmax(a, b); }",
            "inline double min(double a, float b) { return fmin(a, b); }",
            "inline double max(double a, float b) { return fmax(a, b); }"]
    return "\n".join(out) + "\n"


_ATOMIC_TYPES = {
    "atomicAdd": ["int", "unsigned int", "unsigned long long", "float", "double"],
    "atomicSub": ["int", "unsigned int", "unsigned long long", "float"],
    "atomicAnd": ["int", "unsigned int", "unsigned long long"],
    "atomicOr": ["int", "unsigned int", "unsigned long long"],
    "atomicXor": ["int", "unsigned int", "unsigned long long"],
    "atomicExch": ["int", "unsigned int", "unsigned long long", "float", "double"],
    "atomicMin": ["int", "unsigned int", "unsigned long long", "long long", "float", "double"],
    "atomicMax": ["int", "unsigned int", "unsigned long long", "long long", "float", "double"],
    "atomicInc": ["unsigned int"],
    "atomicDec": ["unsigned int"],
    "atomicCAS": ["int", "unsigned int", "unsigned long long"],
}
_CAPTURE = {"atomicAdd": "+", "atomicSub": "-", "atomicAnd": "&", "atomicOr": "|", "atomicXor": "^"}
ATOMICS = frozenset(_ATOMIC_TYPES)


def atomic_fn(name: str) -> str:
    """Atomic read-modify-write returning the old value (semantics: PLATFORMS.md §3 and
    platforms/cuda/intrinsics/atomics.toml); OpenMP atomic/critical so parallel blocks stay exact."""
    out = []
    for t in _ATOMIC_TYPES[name]:
        if name in _CAPTURE:
            op = _CAPTURE[name]
            out.append(f"static inline {t} {name}({t} *p, {t} v) {{\n  {t} old;\n"
                       f"#pragma omp atomic capture\n  {{ old = *p; *p = *p {op} v; }}\n  return old;\n}}")
            continue
        if name == "atomicCAS":
            out.append(f"static inline {t} atomicCAS({t} *p, {t} cmp, {t} v) {{\n  {t} old;\n"
                       f"#pragma omp critical(xp_atomic)\n  {{ old = *p; if (old == cmp) *p = v; }}\n"
                       f"  return old;\n}}")
            continue
        new = {"atomicExch": "v",
               "atomicMin": "fmin(old, v)" if t in ("float", "double") else "v < old ? v : old",
               "atomicMax": "fmax(old, v)" if t in ("float", "double") else "v > old ? v : old",
               "atomicInc": "old >= v ? 0u : old + 1u",
               "atomicDec": "(old == 0u || old > v) ? v : old - 1u"}[name]
        if t == "float" and name in ("atomicMin", "atomicMax"):
            new = new.replace("fmin", "fminf").replace("fmax", "fmaxf")
        out.append(f"static inline {t} {name}({t} *p, {t} v) {{\n  {t} old;\n"
                   f"#pragma omp critical(xp_atomic)\n  {{ old = *p; *p = {new}; }}\n  return old;\n}}")
    return "\n".join(out) + "\n"


HALF = """\
typedef _Float16 half;
typedef _Float16 __half;
static inline half __float2half(float f) { return (half)f; }
static inline half __float2half_rn(float f) { return (half)f; }
static inline float __half2float(half h) { return (float)h; }
static inline half __hadd(half a, half b) { return (half)((float)a + (float)b); }
static inline half __hsub(half a, half b) { return (half)((float)a - (float)b); }
static inline half __hmul(half a, half b) { return (half)((float)a * (float)b); }
static inline half __hdiv(half a, half b) { return (half)((float)a / (float)b); }
static inline half __hfma(half a, half b, half c) { return (half)((double)a * (double)b + (double)c); }
"""

HALF2_NAMES = {"half2", "__half2", "__half22float2", "__floats2half2_rn", "__float22half2_rn", "__float2half2_rn",
               "__halves2half2", "__low2float", "__high2float", "__low2half", "__high2half", "__hadd2", "__hsub2",
               "__hmul2", "__hfma2", "make_half2"}
HALF2 = """\
typedef struct __attribute__((aligned(4))) { _Float16 x, y; } __half2;
typedef __half2 half2;
static inline __half2 make_half2(_Float16 x, _Float16 y) { __half2 v = { x, y }; return v; }
static inline __half2 __halves2half2(_Float16 x, _Float16 y) { __half2 v = { x, y }; return v; }
static inline float2 __half22float2(__half2 h) { float2 v = { (float)h.x, (float)h.y }; return v; }
static inline __half2 __floats2half2_rn(float a, float b) { __half2 v = { (_Float16)a, (_Float16)b }; return v; }
static inline __half2 __float22half2_rn(float2 f) { __half2 v = { (_Float16)f.x, (_Float16)f.y }; return v; }
static inline __half2 __float2half2_rn(float f) { __half2 v = { (_Float16)f, (_Float16)f }; return v; }
static inline float __low2float(__half2 h) { return (float)h.x; }
static inline float __high2float(__half2 h) { return (float)h.y; }
static inline _Float16 __low2half(__half2 h) { return h.x; }
static inline _Float16 __high2half(__half2 h) { return h.y; }
static inline __half2 __hadd2(__half2 a, __half2 b) { __half2 v = { (_Float16)((float)a.x + (float)b.x), (_Float16)((float)a.y + (float)b.y) }; return v; }
static inline __half2 __hsub2(__half2 a, __half2 b) { __half2 v = { (_Float16)((float)a.x - (float)b.x), (_Float16)((float)a.y - (float)b.y) }; return v; }
static inline __half2 __hmul2(__half2 a, __half2 b) { __half2 v = { (_Float16)((float)a.x * (float)b.x), (_Float16)((float)a.y * (float)b.y) }; return v; }
static inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { __half2 v = { (_Float16)((double)a.x * (double)b.x + (double)c.x), (_Float16)((double)a.y * (double)b.y + (double)c.y) }; return v; }
"""

VEC = """\
typedef float xp_f32x4 __attribute__((vector_size(16)));
typedef float xp_f32x16 __attribute__((vector_size(64)));
typedef _Float16 xp_f16x4 __attribute__((vector_size(8)));
static inline xp_f32x4 xp_ld_f32x4(const float *p) {
  xp_f32x4 v;
  memcpy(&v, p, sizeof(v));
  return v;
}
static inline xp_f32x16 xp_ld_f32x16(const float *p) {
  xp_f32x16 v;
  memcpy(&v, p, sizeof(v));
  return v;
}
"""


def vector_type(name: str) -> str:
    """``float4`` & co.: a struct with x, y, z, w of the CUDA alignment, and ``make_float4``."""
    elem, k, align = VECTOR_TYPES[name]
    comps = "xyzw"[:k]
    fields = " ".join(f"{elem} {c};" for c in comps)
    params = ", ".join(f"{elem} {c}" for c in comps)
    init = ", ".join(comps)
    return (f"typedef struct __attribute__((aligned({align}))) {{ {fields} }} {name};\n"
            f"static inline {name} make_{name}({params}) {{ {name} v = {{ {init} }}; return v; }}\n")


def activemask_fn(platform: str) -> str:
    """``__activemask()``: lanes of the caller's warp that exist and have not exited (warp.toml
    [emulation] activemask); threads run in id order, so later lanes have not exited yet."""
    w = WARP[platform]
    t = "unsigned int" if platform == "cuda" else "unsigned long long"
    return (f"static inline {t} xp_activemask(unsigned int tid, unsigned int nt, const unsigned char *done) {{\n"
            f"  {t} m = 0;\n  unsigned int base = tid - tid % {w};\n"
            f"  for (unsigned int l = 0; l < {w}; ++l)\n"
            f"    if (base + l < nt && !(done && done[base + l])) m |= ({t})1 << l;\n  return m;\n}}\n")


def device_facts(platform: str, profile: dict) -> dict[str, int]:
    """The ``xp_device_prop`` fields the virtual device reports (device 0), from its profile:
    warp size, limits, shared memory, multiprocessor count (the one home of these facts is
    ``platforms/<p>/profile.toml``, which the runtime reads too)."""
    bd = profile.get("max_block_dims", [1024, 1024, 64])
    gd = profile.get("max_grid_dims", [2147483647, 65535, 65535])
    facts = {"sharedMemPerBlock": int(profile.get("shared_mem_bytes", 49152)),
             "warpSize": int(profile.get("warp_size", WARP[platform])),
             "maxThreadsPerBlock": int(profile.get("max_threads_per_block", 1024)),
             "multiProcessorCount": int(profile["multiprocessor_count"]),
             "maxThreadsPerMultiProcessor": int(profile["max_threads_per_multiprocessor"])}
    facts.update({f"maxThreadsDim[{i}]": int(bd[i]) for i in range(3)})
    facts.update({f"maxGridSize[{i}]": int(gd[i]) for i in range(3)})
    return facts


def device_prop(platform: str, profile: dict) -> str:
    """``cudaGetDeviceProperties`` / ``hipGetDeviceProperties``: the fields the virtual device
    reports (``device_facts``); others are zero."""
    sets = "".join(f"  p->{field} = {value}{'ul' if field == 'sharedMemPerBlock' else ''};\n"
                   for field, value in device_facts(platform, profile).items())
    return ("typedef struct {\n  char name[256];\n  unsigned long totalGlobalMem;\n  unsigned long sharedMemPerBlock;\n"
            "  int warpSize;\n  int maxThreadsPerBlock;\n  int maxThreadsDim[3];\n  int maxGridSize[3];\n"
            "  int multiProcessorCount;\n  int maxThreadsPerMultiProcessor;\n} xp_device_prop;\n"
            "static inline int xp_get_device_properties(xp_device_prop *p, int dev) {\n"
            "  if (dev != 0) return 1;\n  memset(p, 0, sizeof(*p));\n" + sets + "  return 0;\n}\n")


def math_closure(names) -> list[str]:
    """The MATH definitions ``names`` need, each after the ones its body calls."""
    out: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or not MATH.get(name):
            return
        seen.add(name)
        body = MATH[name].split("{", 1)[1]
        for callee in sorted(set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", body)) - {name}):
            visit(callee)
        out.append(name)

    for name in sorted(names):
        visit(name)
    return out


def support_code(names: set[str], platform: str, extra: list[str]) -> str:
    """Helper snippets for the identifiers ``names`` the lifted program uses, then ``extra``
    (generated instruction helpers)."""
    parts = [HOST]
    if names & {"half", "__half", "__float2half", "__half2float", "__float2half_rn", "__hadd",
                "__hsub", "__hmul", "__hdiv", "__hfma"}:
        parts.append(HALF)
    if names & {"min", "max"}:
        parts.append(_minmax())
    vec = names & set(VECTOR_TYPES)
    if names & HALF2_NAMES:
        vec.add("float2")
    for name in sorted(vec):
        parts.append(vector_type(name))
    if names & HALF2_NAMES:
        if HALF not in parts:
            parts.append(HALF)
        parts.append(HALF2)
    for name in math_closure(names):
        parts.append(MATH[name].replace("static inline", "inline") + "\n")
    for name in sorted(names):
        if name in ATOMICS:
            parts.append(atomic_fn(name))
    parts.append(VEC)
    parts.extend(extra)
    return "\n".join(parts)


INCLUDES = ["#include <math.h>", "#include <stdint.h>", "#include <stdlib.h>", "#include <string.h>"]
GPU_HEADERS = re.compile(r"#\s*include\s*[<\"](cuda[\w./]*|cuda_runtime[\w.]*|cuda_fp16\.h|cuda_bf16\.h|mma\.h|"
                         r"device_launch_parameters\.h|device_functions\.h|math_constants\.h|"
                         r"hip/[\w./]*|vector_types\.h|sm_\w+\.h|cooperative_groups\.h)[>\"]")


# HIP's older built-in spellings (hipThreadIdx_x ...) -> the CUDA-style member access.
HIP_BUILTINS = {f"hip{name}_{c}": (var, c) for name, var in (("ThreadIdx", "threadIdx"), ("BlockIdx", "blockIdx"),
                                                               ("BlockDim", "blockDim"), ("GridDim", "gridDim"))
                for c in "xyz"}


def normalize_hip_builtins(node):
    """Replace ``hipThreadIdx_x``-style identifiers (in place) by ``threadIdx.x`` member accesses."""
    from pycparser import c_ast

    def sub(v):
        if isinstance(v, c_ast.ID) and v.name in HIP_BUILTINS:
            var, c = HIP_BUILTINS[v.name]
            return c_ast.StructRef(c_ast.ID(var, coord=v.coord), ".", c_ast.ID(c, coord=v.coord), coord=v.coord)
        return None

    stack = [node]
    while stack:
        n = stack.pop()
        for attr in getattr(n, "__slots__", ()):
            if attr in ("coord", "__weakref__"):
                continue
            v = getattr(n, attr, None)
            if isinstance(v, c_ast.Node):
                r = sub(v)
                if r is not None:
                    setattr(n, attr, r)
                else:
                    stack.append(v)
            elif isinstance(v, list):
                for i, item in enumerate(v):
                    if isinstance(item, c_ast.Node):
                        r = sub(item)
                        if r is not None:
                            v[i] = r
                        else:
                            stack.append(item)
    return node


_MACRO_NAMES = {"cudaError_t": "int", "hipError_t": "int", "cudaError": "int", "cudaSuccess": "0",
                "hipSuccess": "0", "cudaGetErrorString": "xp_error_string", "hipGetErrorString": "xp_error_string",
                "cudaGetLastError": "xp_nop", "hipGetLastError": "xp_nop", "cudaPeekAtLastError": "xp_nop",
                "hipPeekAtLastError": "xp_nop", "cudaDeviceSynchronize": "xp_nop", "hipDeviceSynchronize": "xp_nop"}


def collective_macro(line: str) -> bool:
    """A ``#define`` of a warp collective's name (a port's ``#define __shfl_xor_sync(m, v, l, w)
    __shfl_xor(v, l, w)``): the lift gives the name its meaning itself, the macro is dropped."""
    m = re.match(r"\s*#\s*define\s+([A-Za-z_]\w*)", line)
    return bool(m) and m.group(1) in collectives("cuda") | collectives("hip")


def lift_macro_line(line: str) -> str:
    """A ``#define`` kept in the preamble, with the runtime names it uses given their host
    meaning (error type int, success 0, error strings, no-op synchronisation). Only the
    replacement list is rewritten: the macro's own name stays (``#define cudaSuccess hipSuccess``
    in a HIP port becomes ``#define cudaSuccess 0``, not ``#define 0 0``)."""
    m = re.match(r"(\s*#\s*define\s+[A-Za-z_]\w*(?:\([^)]*\))?)(.*)$", line, re.S)
    if not m:
        return line
    return m.group(1) + re.sub(r"\b(" + "|".join(_MACRO_NAMES) + r")\b",
                               lambda w: _MACRO_NAMES[w.group(1)], m.group(2))
