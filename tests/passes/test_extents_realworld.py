"""passes/analysis/affine/__init__.py extents on the forms of real-world kernels (task / grid-stride splits,
min-ternary tiles, data-dependent rows): a bound is given only with a proof, else None."""
from __future__ import annotations

from passes.analysis import affine
from xpiler.parse import parse_source


def _info(body: str, params: str, prelude: str = ""):
    src = f'{prelude}extern "C" void k({params}) {{\n{body}\n}}\n'
    return affine.analyze(parse_source(src, "vnni", "<test>.cpp"))


# the BANG task split of a lifted kernel: ``taskDim`` is a local constant of the lifted body
_TASK_STRIDE = """
  for (int taskId = 0; taskId < 16; ++taskId) {
    int taskDim = 16;
    for (int m = taskId; m < batch; m += taskDim)
      for (int j = 0; j < 48; ++j)
        out[m * 48 + j] = x[m * 48 + j];
  }"""


def test_loop_strided_by_a_local_constant_is_canonical():
    info = _info(_TASK_STRIDE, "const float* x, float* out, int batch")
    m = next(lp for lp in info.loops if lp.var == "m")
    assert m.canonical and m.step == 16, m.reason


def test_task_strided_loop_extent_is_joint_over_the_task_loop():
    # the starts 0..15 cover every residue modulo 16: the largest m is batch - 1
    info = _info(_TASK_STRIDE, "const float* x, float* out, int batch")
    assert affine.extents(info) == {"x": "48 * batch", "out": "48 * batch"}


def test_strided_loop_whose_task_appears_elsewhere_is_not_bounded_jointly():
    # the subscript also reads t: m = batch - 1 and t = 15 need not happen together, so no
    # joint bound is claimed (the exact maximum depends on batch % 16)
    info = _info("""
  for (int t = 0; t < 16; ++t)
    for (int m = t; m < batch; m += 16)
      out[m * 16 + t] = x[m];""", "const float* x, float* out, int batch")
    ext = affine.extents(info)
    assert ext["x"] == "batch"
    assert ext["out"] is None


def test_strided_loop_over_fewer_starts_than_its_step_is_not_bounded_jointly():
    # starts 0..7 with step 16: residues 8..15 are never taken, batch - 1 may not be reached
    info = _info("""
  for (int t = 0; t < 8; ++t)
    for (int m = t; m < batch; m += 16)
      out[m] = x[m];""", "const float* x, float* out, int batch")
    assert affine.extents(info) == {"x": None, "out": None}


def _eval(text, **scalars):
    from xpiler.verify import evaluate_size

    prog = parse_source('extern "C" void k(int n) {}', "vnni", "<t>.cpp")
    return evaluate_size(prog, text, scalars)


def test_rounded_down_bound_by_a_mask_of_low_bits():
    # ggml: ``np = n & ~15`` vector part, then a scalar tail from np to n
    info = _info("""
  const int np = n & ~15;
  for (int i = 0; i < np; i += 16)
    for (int j = 0; j < 16; ++j) out[i + j] = x[i + j];
  for (int i = np; i < n; ++i) out[i] = x[i];""", "const float* x, float* out, int n")
    ext = affine.extents(info)
    assert ext["x"] == ext["out"] and ext["x"] is not None
    for n in (0, 5, 16, 37, 48):
        assert _eval(ext["x"], n=n) == n, (n, ext["x"])


def test_vector_loop_that_does_not_run_adds_nothing_to_the_extent():
    # i + 16 <= n with n < 16: no iteration; the last-value formula must not round up to 16
    info = _info("""
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i + 16 <= n; i += 16)
      for (int j = 0; j < 16; ++j) out[r * n + i + j] = x[r * n + i + j];""",
                 "const float* x, float* out, int n, int rows")
    ext = affine.extents(info)
    # exact where the vector loop runs; never more than the rows hold where it does not
    for n, rows, want in ((16, 3, 48), (40, 2, 72), (47, 1, 32)):
        assert _eval(ext["x"], n=n, rows=rows) == want, (n, rows, ext["x"])
    for n, rows in ((5, 3), (15, 1), (0, 4)):
        assert _eval(ext["x"], n=n, rows=rows) <= n * rows, (n, rows, ext["x"])


_GATHER = """
  for (int i = 0; i < n_ids; ++i) {{
    const int r = ids[i];
    {check}
    for (int j = 0; j < nc; ++j) dst[i * nc + j] = src[r * nc + j];
  }}"""
_GATHER_PARAMS = "const float* src, const int* ids, float* dst, int nc, int nr, int n_ids"


def test_data_dependent_row_is_bounded_by_the_programs_assert():
    info = _info(_GATHER.format(check="assert(r >= 0 && r < nr);"), _GATHER_PARAMS)
    assert affine.extents(info) == {"src": "nc * nr", "ids": "n_ids", "dst": "n_ids * nc"}


def test_data_dependent_row_is_bounded_by_a_guard():
    body = _GATHER.format(check="").replace("dst[i * nc + j] = src[r * nc + j];",
                                            "if (r >= 0 && r < nr) dst[i * nc + j] = src[r * nc + j];")
    info = _info(body, _GATHER_PARAMS)
    assert affine.extents(info)["src"] == "nc * nr"


def test_data_dependent_row_without_a_stated_range_has_no_extent():
    # no bound on r (or only one side of it): the analysis must not guess
    for check in ("", "assert(r < nr);", "assert(r >= 0);", "if (r > nr) return;"):
        info = _info(_GATHER.format(check=check), _GATHER_PARAMS)
        assert affine.extents(info)["src"] is None, check


def test_tiles_bounded_by_a_minimum_have_the_exact_extent():
    # blocked transpose: r < min(16 * tr + 16, rows), c < min(16 * tc + 16, cols)
    info = _info("""
  for (int tr = 0; tr < (rows + 15) / 16; ++tr)
    for (int tc = 0; tc < (cols + 15) / 16; ++tc)
      for (int r = tr * 16; r < (tr * 16 + 16 < rows ? tr * 16 + 16 : rows); ++r)
        for (int c = tc * 16; c < (tc * 16 + 16 < cols ? tc * 16 + 16 : cols); ++c)
          out[c * rows + r] = x[r * cols + c];""", "const float* x, float* out, int rows, int cols")
    assert affine.extents(info) == {"x": "cols * rows", "out": "cols * rows"}
    for rows, cols in ((1, 1), (17, 5), (32, 33)):
        assert _eval("cols * rows", rows=rows, cols=cols) == rows * cols


def test_minimum_of_terms_that_move_apart_is_not_bounded():
    # min(t, 9 - t) grows with t in one term and shrinks in the other: the largest value is
    # not at an end of t's range, so no bound is claimed
    info = _info("""
  for (int t = 0; t < 10; ++t)
    for (int i = 0; i < (t < 9 - t ? t : 9 - t); ++i)
      out[i] = x[i + n];""", "const float* x, float* out, int n")
    # (the constant shape of out is bounded exactly by Z3's optimisation: i <= 3 at t = 4)
    assert affine.extents(info) == {"x": None, "out": 4}


def test_vector_tile_with_a_minimum_and_an_outer_dependent_stride_stays_below_n():
    # MLAS-style block of 1024 split 16 lanes at a time: the last vector of a block depends
    # on (n - 1024 * blk) / 16, which has no closed form over blk; each vector stays below
    # len - 15, so the subscript stays below blk * 1024 + len <= n: the extent is n (an upper
    # bound: without a tail loop the last n % 16 elements are not touched), never the tile
    # bound 1024 * blocks + 16 past the end of the arrays
    info = _info("""
  for (int blk = 0; blk < (n + 1023) / 1024; ++blk) {
    int len = n - blk * 1024 < 1024 ? n - blk * 1024 : 1024;
    for (int i = 0; i + 16 <= len; i += 16)
      for (int j = 0; j < 16; ++j) out[blk * 1024 + i + j] = x[blk * 1024 + i + j];
  }""", "const float* x, float* out, int n")
    assert affine.extents(info) == {"x": "n", "out": "n"}


def test_float4_view_of_a_float_array_and_a_grid_stride_tail():
    # relu_float4 after the lift: n / 4 float4 lanes by a grid-stride loop over 256 threads,
    # then the scalar tail from 4 * (n / 4); both end at n
    info = _info("""
  for (unsigned int tx = 0; tx < 256u; ++tx) {
    for (int i = tx; i < n / 4; i += 256) {
      float4 v = ((float4 *) in)[i];
      ((float4 *) out)[i] = v;
    }
    for (int i = n / 4 * 4 + tx; i < n; i += 256) out[i] = in[i];
  }""", "const float* in, float* out, int n",
                 "typedef struct { float x; float y; float z; float w; } float4;\n")
    assert affine.extents(info) == {"in": "n", "out": "n"}


def test_grid_stride_over_blocks_and_threads():
    # the lift of a 2 x 128 launch: i = 128 * bx + tx covers 0..255, the stride
    info = _info("""
  for (int bx = 0; bx < 2; ++bx)
    for (int tx = 0; tx < 128; ++tx)
      for (int i = 128 * bx + tx; i < n; i += 256) out[i] = x[i];""", "const float* x, float* out, int n")
    assert affine.extents(info) == {"x": "n", "out": "n"}
    # a stride larger than the launch (512 over 256 starts) skips values: no joint bound
    info = _info("""
  for (int bx = 0; bx < 2; ++bx)
    for (int tx = 0; tx < 128; ++tx)
      for (int i = 128 * bx + tx; i < n; i += 512) out[i] = x[i];""", "const float* x, float* out, int n")
    assert affine.extents(info) == {"x": None, "out": None}


def test_early_continue_guards_the_rest_of_the_loop_body():
    # one row per 4 threads; threads past the last row leave early: y holds rows, not 16
    info = _info("""
  for (int t = 0; t < 64; ++t) {
    if (t / 4 >= rows) continue;
    y[t / 4] = x[t];
  }""", "const float* x, float* y, int rows")
    ext = affine.extents(info)
    assert ext["x"] == 64
    assert ext["y"] == "((16) < (rows) ? (16) : (rows))"
    # without the early exit the 16 rows the threads cover are the bound
    info = _info("for (int t = 0; t < 64; ++t) y[t / 4] = x[t];", "const float* x, float* y, int rows")
    assert affine.extents(info)["y"] == 16


def test_a_label_after_the_early_exit_drops_the_guard():
    info = _info("""
  for (int t = 0; t < 64; ++t) {
    if (t >= rows) continue;
    L: y[t] = x[t];
  }""", "const float* x, float* y, int rows")
    assert affine.extents(info)["y"] == 64


# a lifted warp-per-row kernel: phase 1 marks the threads past the last row, later phases
# (after a barrier) skip the marked threads; a thread index splits into warp and lane
_WARP_ROWS = """
  for (int bx = 0; bx < 5; ++bx) {
    unsigned char done[256];
    for (int m = 0; m < 256; ++m) done[m] = 0;
    for (int tx = 0; tx < 256; ++tx) {
      const int tid = tx;
      if ((bx * 256 + tx) / 32 >= rows) { done[tid] = 1; continue; }
      for (int j = tx % 32; j < cols; j += 32) acc[bx * 256 + tx] += A[((bx * 256 + tx) / 32) * cols + j] * x[j];
    }
    for (int tx = 0; tx < 256; ++tx) {
      const int tid = tx;
      if (done && done[tid]) continue;
      if (done[tid]) continue;
      if (tx % 32 == 0) y[(bx * 256 + tx) / 32] = acc[bx * 256 + tx];
    }
  }"""


def test_early_exit_flag_guards_later_phases_and_warps_split():
    info = _info(_WARP_ROWS, "const float* A, const float* x, float* acc, float* y, int rows, int cols")
    ext = affine.extents(info)
    # row = 8 * bx + warp < rows and < 40 (the launch); lanes stride cols
    assert ext["A"] == "((40 * cols) < (cols * rows) ? (40 * cols) : (cols * rows))"
    assert ext["x"] == "cols"
    assert ext["y"] == "((40) < (rows) ? (40) : (rows))"


def test_flag_written_again_or_over_another_range_gives_no_guard():
    again = _WARP_ROWS.replace("      if (done && done[tid]) continue;\n",
                               "      done[tid] = 0;\n")
    info = _info(again, "const float* A, const float* x, float* acc, float* y, int rows, int cols")
    assert affine.extents(info)["y"] == 40
    other = _WARP_ROWS.replace("for (int tx = 0; tx < 256; ++tx) {\n      const int tid = tx;\n"
                               "      if (done &&", "for (int tx = 0; tx < 128; ++tx) {\n"
                               "      const int tid = tx;\n      if (done &&")
    info = _info(other, "const float* A, const float* x, float* acc, float* y, int rows, int cols")
    assert affine.extents(info)["y"] == 36


def test_flag_set_on_some_paths_only_gives_no_guard():
    # a thread with c and d leaves without setting its flag: !c does not follow from a clear flag
    partial = _WARP_ROWS.replace("{ done[tid] = 1; continue; }",
                                 "{ if (cols > 7) continue; done[tid] = 1; continue; }")
    info = _info(partial, "const float* A, const float* x, float* acc, float* y, int rows, int cols")
    assert affine.extents(info)["y"] == 40


def test_pointer_comparisons_read_no_element():
    # the lifted cudaMemcpy of a host wrapper: copy only when the buffers differ
    info = _info("""
  float dX[n];
  if (n && ((void *) dX) != ((void *) X))
    for (int m = 0; m < n; ++m) dX[m] = X[m];
  for (int i = 0; i < n; ++i) out[i] = dX[i] * 2.0f;""", "const float* X, float* out, int n")
    assert affine.extents(info) == {"X": "n", "out": "n"}
    # a pointer passed to an unknown call still escapes
    info = _info("opaque(X); for (int i = 0; i < n; ++i) out[i] = X[i];", "const float* X, float* out, int n")
    assert affine.extents(info)["X"] is None


def test_task_tiles_with_a_min_tail_are_bounded_exactly():
    # BANG's chunked task split: task t takes the tiles t, t + 16, ... of 1024 elements, the
    # last one clamped (count = min(n - s, 1024)); the starts are every multiple of 1024
    # below n, so the largest element is n - 1
    tiles = """
  for (int t = 0; t < 16; ++t)
    for (int s = t * 1024; s < n; s += 16 * 1024) {
      int c = (n - s < %d) ? (n - s) : %d;
      for (int k = 0; k < c; ++k) out[s + k] = x[s + k];
    }"""
    assert affine.extents(_info(tiles % (1024, 1024), "const float* x, float* out, int n")) == \
        {"x": "n", "out": "n"}
    # tiles shorter than their stride leave gaps: n - 1 need not be reached, no bound claimed
    assert affine.extents(_info(tiles % (1000, 1000), "const float* x, float* out, int n")) == \
        {"x": None, "out": None}
    # fewer tasks than the stride's share: the same
    fewer = (tiles % (1024, 1024)).replace("t < 16", "t < 8")
    assert affine.extents(_info(fewer, "const float* x, float* out, int n")) == {"x": None, "out": None}


# simsimd's size classes: a masked load (lanes below a guard) in one branch, a loop in another
_MASKED_TAIL = """
  if (n <= 64) {
    for (int j = 0; j < 64; ++j)
      if (j < n % 256) out[j] = ((const unsigned char *) (((b8 *) a) + 0))[j];
  } else {
    for (int i = 0; i < n; ++i) out[i] = (unsigned char) a[i];
  }"""


def test_a_masked_tail_beside_a_loop_adds_nothing_to_the_loop_extent():
    # min(64, n % 256) is at most n, the loop's extent: the max of the two is n
    info = _info(_MASKED_TAIL, "const unsigned char* a, int n, unsigned char* out",
                 "typedef unsigned char b8;\n")
    assert affine.extents(info) == {"a": "n", "out": "n"}


def test_a_masked_byte_range_has_the_min_of_its_loop_and_guard_bounds():
    # 16-bit elements read bytewise: the last element is min(31, (bytes - 1) / 2) per term;
    # the min node of the first byte was once read as a Poly and the extent was lost
    info = _info(_MASKED_TAIL, "const unsigned short* a, int n, unsigned char* out",
                 "typedef unsigned short b8;\n")
    a = affine.extents(info)["a"]
    assert a is not None and "(32) < ((((n % 256) - 1) / 2) + 1)" in a and "(n)" in a
