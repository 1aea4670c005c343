"""passes/analysis/affine/__init__.py: dependence decisions (with refusals) and accessed extents."""
from __future__ import annotations

import pytest

from passes.analysis import affine
from xpiler.parse import parse_source
from xpiler.verify import evaluate_size


def _info(body: str, params: str = "const float* x, float* out, int n"):
    src = f'extern "C" void k({params}) {{\n{body}\n}}\n'
    return affine.analyze(parse_source(src, "vnni", "<test>.cpp"))


def _verdicts(info):
    return [(lp.var, affine.parallel(info, lp)) for lp in info.loops]


def test_gemm_nest_i_j_parallel_k_reduction():
    info = _info("""
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
      C[i * N + j] = acc;
    }""", "const float* A, const float* B, float* C, int M, int N, int K")
    v = dict(_verdicts(info))
    assert v["i"].parallel and v["j"].parallel
    assert not v["k"].parallel and v["k"].code == "XP-BIND-001" and "'acc'" in v["k"].reason
    assert affine.extents(info) == {"A": "K * M", "B": "K * N", "C": "M * N"}


@pytest.mark.parametrize("body", [
    "for (int i = 1; i < n; ++i) out[i] = out[i - 1] + x[i];",        # flow dependence
    "for (int i = 0; i + 1 < n; ++i) out[i] = out[i + 1] * 2.0f;",    # anti dependence
    "for (int i = 0; i < n; ++i) out[i % 4] = x[i];",                 # output dependence
    "float s = 0.0f; for (int i = 0; i < n; ++i) { s += x[i]; out[i] = s; }",   # running value
])
def test_loop_carried_dependences_are_refused(body):
    (_, v), = _verdicts(_info(body))
    assert not v.parallel and v.code == "XP-BIND-001"


def test_exact_test_separates_even_and_odd_elements():
    (_, v), = _verdicts(_info("for (int i = 0; i < n; ++i) out[2 * i] = out[2 * i + 1] + x[i];"))
    assert v.parallel


def test_private_local_array_vs_shared_one():
    private = _info("for (int i = 0; i < n; ++i) { float t[4]; for (int j = 0; j < 4; ++j) "
                    "t[j] = x[4 * i + j]; out[i] = t[0] + t[3]; }")
    shared = _info("float t[4]; for (int i = 0; i < n; ++i) { for (int j = 0; j < 4; ++j) "
                   "t[j] = x[4 * i + j]; out[i] = t[0] + t[3]; }")
    assert affine.parallel(private, private.loops[0]).parallel
    v = affine.parallel(shared, shared.loops[0])
    assert not v.parallel and "'t'" in v.reason


def test_unknown_call_and_break_make_a_loop_sequential():
    (_, v), = _verdicts(_info("for (int i = 0; i < n; ++i) { out[i] = x[i]; opaque(i); }"))
    assert not v.parallel and v.code == "XP-BIND-003" and "opaque" in v.reason
    (_, v), = _verdicts(_info("for (int i = 0; i < n; ++i) { if (x[i] < 0) break; out[i] = 1; }"))
    assert not v.parallel and "break" in v.reason


def test_extent_uses_the_guard_of_a_lifted_flat_index():
    info = _info("""
  for (int bx = 0; bx < 3; ++bx)
    for (int tx = 0; tx < 1024; ++tx) {
      int idx = bx * 1024 + tx;
      if (idx < 2304) { int r = idx / 48; int c = idx % 48; out[c * 48 + r] = x[idx]; }
    }""")
    assert affine.extents(info) == {"x": 2304, "out": 2304}
    assert all(affine.parallel(info, lp).parallel for lp in info.loops)


def test_extents_of_strided_and_reversed_loops():
    info = _info("for (int i = 0; i + 16 <= n; i += 16) for (int l = 0; l < 16; ++l) "
                 "out[i + l] = x[i + l];")
    ext = affine.extents(info)
    assert ext["x"] == ext["out"]
    # the last full vector ends at 16 * (n / 16); with n < 16 the loop does not run, and the
    # extent must not claim 16 elements of a 5-element buffer (C division truncates -11 / 16
    # to 0: the floor is written out)
    prog = parse_source('extern "C" void k(const float* x, float* out, int n) {}', "vnni", "<t>.cpp")
    for n, want in ((40, 32), (32, 32), (16, 16), (5, 0), (0, 0)):
        assert evaluate_size(prog, ext["x"], {"n": n}) == want, (n, ext["x"])
    info = _info("for (int i = 9; i >= 2; i -= 3) out[i] = x[i - 2];")
    assert affine.extents(info) == {"x": 8, "out": 10}


def test_extent_through_pointer_aliases_and_constants():
    src = """#define ROWS 4
static const int COLS = 10;
extern "C" void k(const float* x, float* out) {
  for (int r = 0; r < ROWS; ++r) {
    const float* row = x + r * COLS;
    for (int c = 0; c < COLS; ++c) out[r * COLS + c] = row[c];
  }
}
"""
    p = parse_source(src, "vnni", "<t>.cpp")
    assert affine.infer_inputs(p) == {"x": 40, "out": 40}


def test_non_affine_subscript_has_no_extent():
    info = _info("for (int i = 0; i < n; ++i) out[i * i] = x[i];")
    assert affine.extents(info)["out"] is None
    (_, v), = _verdicts(info)
    assert v.parallel                    # i*i is injective on i >= 0: Z3 proves it


def test_indirect_subscript_is_not_parallel():
    info = _info("for (int i = 0; i < n; ++i) out[idx[i]] += x[i];",
                 "const float* x, const int* idx, float* out, int n")
    (_, v), = _verdicts(info)
    assert not v.parallel


# -- byte views, mem* ranges, conjunctive bounds, rows of multi-dimensional arrays -----------
def test_byte_views_are_compared_as_byte_ranges():
    params = "const int16_t* x, int16_t* out"
    rows = _info("for (int i = 0; i < 64; ++i) { uint8_t b[32]; memcpy(b, x + i * 16, sizeof(b)); "
                 "for (int j = 0; j < 32; ++j) ((uint8_t*)(out + i * 16))[j] = b[j]; }", params)
    assert affine.parallel(rows, rows.loops[0]).parallel          # 32 bytes = one 16-word row
    assert affine.extents(rows) == {"x": 1024, "out": 1024}
    overlap = _info("for (int i = 0; i < 64; ++i) { uint8_t b[32]; memcpy(b, x + i * 16, 32); "
                    "for (int j = 0; j < 32; ++j) ((uint8_t*)(out + i * 8))[j] = b[j]; }", params)
    v = affine.parallel(overlap, overlap.loops[0])                # rows of 8 words, 16 written
    assert not v.parallel and v.code == "XP-BIND-001"


def test_mem_calls_with_traced_operands_are_not_unknown_calls():
    info = _info("for (int i = 0; i < n; ++i) { float t[4]; memcpy(t, x + 4 * i, sizeof(t)); "
                 "out[i] = t[0] + t[3]; }")
    assert affine.parallel(info, info.loops[0]).parallel
    assert affine.extents(info) == {"x": "4 * n", "out": "n"}
    shared = _info("float t[4]; for (int i = 0; i < n; ++i) { memcpy(t, x + 4 * i, sizeof(t)); "
                   "out[i] = t[0]; }")
    assert not affine.parallel(shared, shared.loops[0]).parallel


def test_conjunctive_upper_bounds_make_a_canonical_loop():
    info = _info("for (int r0 = 0; r0 < 100; r0 += 16) "
                 "for (int r = r0; r < r0 + 16 && r < 100; ++r) out[r] = x[r];")
    inner = info.loops[1]
    assert inner.canonical and affine.parallel(info, info.loops[0]).parallel
    assert affine.parallel(info, inner).parallel
    assert affine.extents(info) == {"x": 100, "out": 100}
    lower = _info("for (int r = n; r > 0 && r < 100; --r) out[r] = x[r];")
    assert not lower.loops[0].canonical              # a conjunction bounds from above only


def test_rows_of_multidimensional_locals_and_constant_ternaries():
    info = _info("for (int w = 0; w < 4; ++w) { float a[4][16][16]; float (*F)[16] = a[w]; "
                 "for (int r = 0; r < 16; ++r) for (int c = 0; c < 16; ++c) F[r][c] = 0.0f; "
                 "for (int r = 0; r < 16; ++r) out[w * 256 + ((0 == 0) ? r * 16 : r)] = F[r][0]; }")
    assert not info.problems
    assert affine.parallel(info, info.loops[0]).parallel
    assert affine.extents(info)["out"] == 1009


def test_arrays_overwritten_before_every_read_are_privatizable():
    body = """
  static float p[16];
  for (int i = 0; i < n; ++i) {
    float mx = 0.0f;
    for (int j = 0; j < 16; ++j) { p[j] = x[i * 16 + j]; mx = p[j] > mx ? p[j] : mx; }
    float s = 0.0f;
    for (int j = 0; j < 16; ++j) s += p[j] - mx;
    out[i] = s;
  }"""
    info = _info(body)
    assert not affine.parallel(info, info.loops[0]).parallel
    v = affine.parallel(info, info.loops[0], privatize=True)
    assert v.parallel and [info.locals[u].name for u in v.private] == ["p"]
    # a read before the write sees the previous iteration's values: not privatizable
    early = _info(body.replace("float s = 0.0f;", "float s = p[15];").replace(
        "float mx = 0.0f;", "float mx = p[0];"))
    assert not affine.parallel(early, early.loops[0], privatize=True).parallel
    # the kill covers 8 elements only; reading p[15] may see another iteration's value
    partial = _info(body.replace("for (int j = 0; j < 16; ++j) { p[j]", "for (int j = 0; j < 8; ++j) { p[j]"))
    assert not affine.parallel(partial, partial.loops[0], privatize=True).parallel
    # live after the loop: the last iteration's values are needed
    live = _info(body + "\n  out[0] = p[3];")
    assert not affine.parallel(live, live.loops[0], privatize=True).parallel


def test_struct_field_stores_write_the_struct():
    info = _info("for (int i = 0; i < n; ++i) { struct P { float a; float b; } v; v.a = x[i]; "
                 "v.b = 1.0f; out[i] = v.a + v.b; }")
    assert not info.problems and affine.parallel(info, info.loops[0]).parallel
    shared = _info("struct P { float a; } v; for (int i = 0; i < n; ++i) { v.a = x[i]; out[i] = v.a; }")
    assert not affine.parallel(shared, shared.loops[0]).parallel


def test_grid_stride_nest_is_analysed_without_crashing():
    # run alone, Z3's default arithmetic solver diverged on this 12-constraint problem (after
    # other queries it did not): affine.check's portfolio must decide it whatever ran before
    # lifted grid-stride loop: the step is a constant product (256u * 4u) and the start depends
    # on the enclosing block/thread loops; the analysis proves the block loop parallel
    info = _info("""
  for (unsigned int b = 0; b < 4u; ++b)
    for (unsigned int t = 0; t < 256u; ++t)
      for (int i = b * 256u + t; i < n; i += 256u * 4u)
        out[i] = x[i] * 2.0f;""")
    v = dict(_verdicts(info))
    assert v["b"].parallel and v["t"].parallel
    assert info.loops[2].canonical and info.loops[2].step == 1024


def test_loop_that_is_not_counted_is_a_refusal_not_a_crash():
    # the inner loop cannot be counted (data-dependent step): dependence tests over accesses
    # inside it must answer (here: conservatively), never raise
    info = _info("""
  for (int b = 0; b < 4; ++b)
    for (int i = b; i < n; i += (int) x[0])
      out[i] = x[i];""")
    v = dict(_verdicts(info))
    assert not v["b"].parallel and v["b"].code in ("XP-BIND-001", "XP-BIND-003")
    assert not v["i"].parallel
    assert affine.extents(info)["out"] is None


def test_out_parameters_and_struct_array_fields_are_accesses_of_the_local():
    """Inlined runtime queries write a local through its address (``*((int *) &id) = 0``,
    ``*((int *) &info.devices[0].nsm) = 108``) and read array fields of a struct local: accesses
    of that local, not stores through untraceable pointers; a cast of an element's address to
    another pointer type (a wider access) is still not taken for the element."""
    info = _info("""
  typedef struct { int nsm; } dev_t;
  typedef struct { dev_t devices[4]; } info_t;
  int id; info_t info;
  *((int *) (&id)) = 0;
  *((int *) (&info.devices[0].nsm)) = 108;
  const int nsm = info.devices[id].nsm;
  for (int i = 0; i < n; ++i) out[i] = x[i] * nsm;""")
    assert not info.problems, info.problems
    assert affine.extents(info) == {"x": "n", "out": "n"}
    # (double *) &out[2 * i]: eight bytes from out[2 * i], i.e. out[2 * i + 1] too
    wide = _info("for (int i = 0; i < n; ++i) *((double *) (&out[2 * i])) = 0.0;")
    assert affine.extents(wide)["out"] == "2 * n"
