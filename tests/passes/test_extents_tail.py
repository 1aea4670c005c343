"""passes/analysis/affine/__init__.py extents of vector loops whose masked tail finishes the range (MLAS-style
block split): the tail is bounded through its guard in min-list form (opaque sub-expressions
over loop variables must cancel), and an access without a computed maximum counts only when
Z3 proves it stays below what the others reach."""
from __future__ import annotations

from passes.analysis import affine
from xpiler.parse import parse_source


def _info(body: str, params: str = "const float* x, float* out, int n"):
    src = f'extern "C" void k({params}) {{\n{body}\n}}\n'
    return affine.analyze(parse_source(src, "vnni", "<test>.cpp"))


def _eval(text, **scalars):
    from xpiler.verify import evaluate_size

    prog = parse_source('extern "C" void k(int n) {}', "vnni", "<t>.cpp")
    return evaluate_size(prog, text, scalars)


_BLOCK = """
  for (int blk = 0; blk < (n + 1023) / 1024; ++blk) {
    int len = n - blk * 1024 < 1024 ? n - blk * 1024 : 1024;
    for (int i = 0; i + 16 <= len; i += 16)
      for (int j = 0; j < 16; ++j) out[blk * 1024 + i + j] = x[blk * 1024 + i + j%s];
    int e = len / 16 * 16;
    if (e < len)
      for (int j = 0; j < 16; ++j)
        if (j < len - e) out[blk * 1024 + e + j] = x[blk * 1024 + e + j];
  }"""


def test_block_split_vector_loop_with_masked_tail_has_extent_n():
    ext = affine.extents(_info(_BLOCK % ""))
    assert ext["x"] == ext["out"] == "n"


def test_masked_tail_alone_is_bounded_by_its_guard():
    info = _info("""
  for (int blk = 0; blk < (n + 1023) / 1024; ++blk) {
    int len = n - blk * 1024 < 1024 ? n - blk * 1024 : 1024;
    int e = len / 16 * 16;
    for (int j = 0; j < 16; ++j)
      if (j < len - e) out[blk * 1024 + e + j] = x[blk * 1024 + e + j];
  }""")
    ext = affine.extents(info)
    assert ext["out"] is not None
    for n in (1, 17, 1024, 1030, 2047):
        assert _eval(ext["out"], n=n) == n, (n, ext["out"])


def test_vector_part_reaching_past_the_tail_is_covered():
    # x[... + j + 1] in the vector part reaches index n when len is a multiple of 16: the
    # strided vector loop stays below each bound of its minimum, so the extent is n + 1 (the
    # source itself reads one element past n there), never n
    ext = affine.extents(_info(_BLOCK % " + 1"))
    assert ext["x"] == "n + 1"
    assert ext["out"] == "n"


def test_opaque_term_that_does_not_cancel_gives_no_bound():
    # 2 * e + j under j < len - e leaves e (a division over blk) in the bound: no claim
    info = _info("""
  for (int blk = 0; blk < (n + 1023) / 1024; ++blk) {
    int len = n - blk * 1024 < 1024 ? n - blk * 1024 : 1024;
    int e = len / 16 * 16;
    if (e < len)
      for (int j = 0; j < 16; ++j)
        if (j < len - e) out[blk * 1024 + 2 * e + j] = x[j];
  }""")
    ext = affine.extents(info)
    assert ext["out"] is None
    assert ext["x"] is not None


def test_within_proves_and_refuses():
    info = _info("""
  for (int i = 0; i < n; i += 4)
    for (int j = 0; j < 4; ++j)
      if (i + j < n) out[i + j] = x[i + j];""")
    acc = next(a for a in info.accesses if a.buffer == "out")
    n = affine.Poly.sym("s:n")
    assert affine.within(acc, n - affine.Poly.const(1))
    assert not affine.within(acc, n - affine.Poly.const(2))


_LAST_CHUNK = """
  for (int t = 0; t < 16; ++t) {
    int chunks = (n + 2047) / 2048;
    for (int c = t; c < chunks; c += 16) {
      int len = (c == chunks - 1) ? n - c * 2048 : 2048;
      for (int i = 0; i < len; ++i) out[c * 2048 + i] = x[c * 2048 + i];
    }
  }"""


def test_a_last_chunk_length_chosen_by_equality_has_extent_n():
    """`len = c == chunks - 1 ? n - c * 2048 : 2048` (the BANG tail idiom): the last chunk ends
    at n, every other chunk at most at (chunks - 1) * 2048 <= n; the extent is exactly n."""
    ext = affine.extents(_info(_LAST_CHUNK))
    assert ext["x"] == ext["out"] == "n"
    # a value that is not the loop's last keeps the whole range for the other case: larger
    loose = affine.extents(_info(_LAST_CHUNK.replace("c == chunks - 1", "c == 0")))
    for n in (1, 2048, 5000):
        assert _eval(loose["out"], n=n) >= n


_TASK_ROWS_IN_TILES = """
  for (int t = 0; t < 16; ++t) {
    int per = (rows + 15) / 16;
    int r0 = t * per;
    int r1 = r0 + per < rows ? r0 + per : rows;
    for (int r = r0; r < r1; r += 32) {
      int nr = r1 - r < 32 ? r1 - r : 32;
      for (int i = 0; i < nr * 64; ++i) out[r * 64 + i] = x[r * 64 + i];
    }
  }"""


def test_a_task_s_rows_in_tiles_have_the_rows_extent():
    """Each task's rows [r0, min(r0 + per, rows)) in tiles of 32 (a strided loop whose start
    depends on the task): the tile loop stays below each bound of the minimum, and the minimum
    with the row bound gives 64 * rows."""
    ext = affine.extents(_info(_TASK_ROWS_IN_TILES, "const float* x, float* out, int rows"))
    assert ext["x"] == ext["out"] == "64 * rows"


_SHARE_WITH_REMAINDER = """
  for (int t = 0; t < 16; ++t) {
    int per_task = n / 16;
    int rem = n % 16;
    int offset = t * per_task + ((t < rem) ? t : rem);
    int count = per_task + ((t < rem) ? 1 : 0);
    int repeat = count / 4096;
    int tail = count % 4096;
    for (int i = 0; i < repeat; ++i)
      for (int j = 0; j < 4096; ++j) out[offset + i * 4096 + j] = x[offset + i * 4096 + j];
    if (tail > 0)
      for (int j = 0; j < tail; ++j) out[offset + repeat * 4096 + j] = x[offset + repeat * 4096 + j];
  }"""


def test_a_task_share_with_a_remainder_in_tiles_is_proved_by_z3():
    """mlu-ops' partition (n / taskDim each, the first n % taskDim tasks one more) walked in
    tiles of count / 4096: no closed form, but Z3 proves every subscript below n and one
    reaching n - 1, so n is the count; a loose candidate is never claimed."""
    info = _info(_SHARE_WITH_REMAINDER)
    assert affine.extents(info) == {"x": None, "out": None}
    assert affine.proved_extent(info, "x") == affine.proved_extent(info, "out") == "n"
    half = _info(_SHARE_WITH_REMAINDER.replace("n / 16", "n / 32").replace("n % 16", "n % 32"))
    assert affine.proved_extent(half, "x") is None       # only half of n is reached: not n


def test_a_loop_condition_on_a_scaled_variable_is_counted():
    # for (b = t; b * 256 < n; b += 16): b < ceil(n / 256)
    info = _info("""
  for (int t = 0; t < 16; ++t)
    for (int b = t; b * 256 < n; b += 16) {
      int len = n - b * 256 < 256 ? n - b * 256 : 256;
      for (int i = 0; i < len; ++i) out[b * 256 + i] = x[b * 256 + i];
    }""")
    assert all(lp.canonical for lp in info.loops)
    ext = affine.extents(info)
    for n in (1, 255, 256, 4097):
        assert _eval(ext["out"], n=n) == n, ext


def test_a_share_of_rows_of_a_constant_length_is_proved_as_rows_times_it():
    # session 24 probe (argmax over logits [rows, 1000]): each task's rows of a share with a
    # remainder, 1000 floats each: rows * 1000, a scalar times a constant of the subscripts
    info = _info(_SHARE_WITH_REMAINDER.replace("out[offset + i * 4096 + j] = x[offset + i * 4096 + j];",
                                               "for (int c = 0; c < 1000; ++c) out[(offset + i * 4096 + j) * 1000 + c] = x[(offset + i * 4096 + j) * 1000 + c];")
                 .replace("out[offset + repeat * 4096 + j] = x[offset + repeat * 4096 + j];",
                          "for (int c = 0; c < 1000; ++c) out[(offset + repeat * 4096 + j) * 1000 + c] = x[(offset + repeat * 4096 + j) * 1000 + c];"))
    assert affine.proved_extent(info, "x") == "n * 1000"


_ROW_BLOCKS = """
  for (int t = 0; t < 16; ++t) {
    int block_rows = (65536 - 2 * cols) / cols;
    if (block_rows > 64) block_rows = 64;
    for (int b = t; b < (rows + block_rows - 1) / block_rows; b += 16) {
      const int r0 = b * block_rows;
      const int nr = (rows - r0 < block_rows) ? rows - r0 : block_rows;
      for (int r = 0; r < nr; ++r)
        for (int c = 0; c < cols; ++c) out[(r0 + r) * cols + c] = x[(r0 + r) * cols + c];
    }
  }"""


def test_blocks_of_rows_sized_by_an_assigned_local_are_proved():
    # session 25 probe (BANG l2norm / rmsnorm rows staged in NRAM blocks): the rows per block
    # are a local assigned twice (min with 64), of unknown value to the analysis. Every
    # access stays below rows * cols for any value of it, and reaches its end
    info = _info(_ROW_BLOCKS, "const float* x, float* out, int rows, int cols")
    assert affine.extents(info) == {"x": None, "out": None}
    assert affine.proved_extent(info, "x") == affine.proved_extent(info, "out") == "rows * cols"
    # an access the local can move past the end is never bounded by a guess
    loose = _info(_ROW_BLOCKS.replace("r < nr", "r < block_rows"),
                  "const float* x, float* out, int rows, int cols")
    assert affine.proved_extent(loose, "x") is None


def test_a_sample_size_the_kernel_refuses_does_not_count_against_a_bound():
    # session 25 probe (log_softmax, `if (cols > MAX_COLS) return;`): at cols = 4099 nothing
    # runs; rows * cols is still the footprint at the sizes that do
    info = _info("""
  if (cols <= 0 || cols > 4096) return;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[r * cols + c] = x[r * cols + c];""",
                 "const float* x, float* out, int rows, int cols")
    assert affine.proved_extent(info, "x") == "rows * cols"
    # a bound that is loose where the kernel runs is still refused
    half = _info("""
  if (cols <= 0 || cols > 4096) return;
  for (int r = 0; r < rows / 2; ++r)
    for (int c = 0; c < cols; ++c) out[r * cols + c] = x[r * cols + c];""",
                 "const float* x, float* out, int rows, int cols")
    assert affine.proved_extent(half, "x") is None


def test_sizeof_of_a_type_is_a_constant_of_the_subscripts():
    info = _info("""
  const int chunk = 4096 / (sizeof(float) + sizeof(_Float16)) / 64 * 64;
  for (int i = 0; i < n / chunk; ++i)
    for (int j = 0; j < chunk; ++j) out[i * chunk + j] = x[i * chunk + j];""")
    from passes.analysis.affine.ir import locals_in

    acc = next(a for a in info.accesses if a.buffer == "x")
    assert not locals_in(acc.index, set())          # chunk = 4096 / 6 / 64 * 64 = 640
    assert _eval(affine.extents(info)["x"], n=1300) == 1280


_CLAMPED = """
  for (int i = 0; i < n; ++i) {
    int s = idx[i];
    s = s < 0 ? 0 : (s >= m ? m - 1 : s);%s
    out[i] = x[s];
  }"""


def test_a_clamped_index_read_from_memory_is_bounded_by_its_clamp():
    # session 25 probe (gather along a dim: `src = src < 0 ? 0 : (src >= in_dim ? in_dim - 1
    # : src)`): the assignment holds for the rest of the block, over the value read before
    params = "const float* x, const int* idx, float* out, int n, int m"
    assert affine.proved_extent(_info(_CLAMPED % "", params), "x") == "m"
    # clamped from below only: any value of idx may be read
    below = _info(_CLAMPED.replace("(s >= m ? m - 1 : s)", "s") % "", params)
    assert affine.proved_extent(below, "x") is None
    # written again after the clamp: the clamp no longer tells the value
    again = _info(_CLAMPED % "\n    s = idx[i + 1];", params)
    assert affine.proved_extent(again, "x") is None
    # a label after the clamp can be reached without it
    jumped = _info(_CLAMPED.replace("    out[i] = x[s];", "  skip:\n    out[i] = x[s];") % "", params)
    assert affine.proved_extent(jumped, "x") is None


_IF_CLAMPED = """
  for (int i = 0; i < n; ++i) {
    int jmax = flag ? i + (m - n) + 1 : m;
    if (jmax > m) jmax = m;
    if (jmax < 0) jmax = 0;%s
    for (int j = 0; j < jmax; ++j) out[i * m + j] = x[j];
  }"""


def test_a_bound_clamped_by_ifs_after_its_declaration_is_proved():
    # session 26 probe (causal attention: `int jmax = causal ? i + (S - L) + 1 : S; if (jmax >
    # S) jmax = S; if (jmax < 0) jmax = 0;`): the initial value and each `if (c) x = E;` hold
    # of the values before the next assignment
    params = "const float* x, float* out, int n, int m, int flag"
    assert affine.proved_extent(_info(_IF_CLAMPED % "", params), "x") == "m"
    # a start past m and no upper clamp: rows read past m, the bound is not m
    loose = _IF_CLAMPED.replace("i + (m - n) + 1", "i + m + 1").replace(
        "    if (jmax > m) jmax = m;\n", "")
    assert affine.proved_extent(_info(loose % "", params), "x") != "m"
    # assigned again with an unknown value after the clamps: nothing is known of it
    again = _info(_IF_CLAMPED % "\n    jmax = (int) x[i];", params)
    assert affine.proved_extent(again, "x") is None


def test_a_local_computed_from_a_value_clamped_later_keeps_that_value():
    # session 26 probe (pooling windows: `int h0 = oh * s - pad, h1 = h0 + K < H ? h0 + K : H;
    # if (h0 < 0) h0 = 0;`): h1 reads h0 before the clamp, which stays h0's earlier value
    body = """
  for (int i = 0; i < n; ++i) {
    int lo = i - 2, hi = lo + 5 < n ? lo + 5 : n;
    if (lo < 0) lo = 0;
    float s = 0;
    for (int j = lo; j < hi; ++j) s += x[j];
    out[i] = s;
  }"""
    assert affine.proved_extent(_info(body), "x") == "n"
    # no cap at n: the window reads up to x[n + 2]
    assert affine.proved_extent(_info(body.replace("lo + 5 < n ? lo + 5 : n", "lo + 5")), "x") != "n"
