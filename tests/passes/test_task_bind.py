"""passes/lower/task_bind/__init__.py: canonical C -> BANG C (golden structure, refusals, strict-mode runs)."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

import platforms
from passes.lower import task_bind  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_file

DATA = Path(__file__).parent / "data_bang"


def _lower(name: str, **opts):
    prog = parse_file(DATA / f"{name}.cpp")
    out = run_pass("task_bind", prog, **opts)
    return prog, out, platforms.module("bang", "backend").emit(out)


def test_elementwise_golden():
    _, out, text = _lower("add")
    assert out.platform == "bang"
    assert [k.name for k in out.kernels] == ["add_kernel_k0"]
    assert out.entry.name == "add_kernel" and [p.name for p in out.entry.params] == \
        ["x", "y", "out", "n"]
    kernel = text.split('extern "C"')[0]
    assert "__mlu_global__ void add_kernel_k0(const float *x, const float *y, float *out, int n)" \
        in kernel
    assert "(__xp_n + taskDim - 1) / taskDim" in kernel and "((long long) taskId) * __xp_per" in kernel
    for buf in ("x", "y", "out"):
        assert f"__memcpy(__xp_{buf}_n, {buf} + __xp_w0_{buf}" in kernel
    assert "__memcpy(out + __xp_w0_out, __xp_out_n" in kernel and "NRAM2GDRAM" in kernel
    assert "__memcpy(x + " not in kernel                  # inputs are never written back
    assert "__xp_out_n[i - __xp_w0_out] = __xp_x_n[i - __xp_w0_x] + __xp_y_n[i - __xp_w0_y]" \
        in kernel
    assert "__nram__ char __xp_pool[589824]" in text      # 768 KiB - 128 KiB - 64 KiB
    host = text.split('extern "C"')[1]
    assert "cnrtDim3_t dim = {16, 1, 1}" in host and "CNRT_FUNC_TYPE_UNION4" in host
    assert "add_kernel_k0<<<dim, ktype, queue>>>(d_x, d_y, d_out, n)" in host
    assert "cnrtMemcpy((void *) out, d_out, n * sizeof(float), CNRT_MEM_TRANS_DIR_DEV2HOST)" in host
    assert "#pragma omp" not in text
    assert out.facts["task_bind"]["tasks"] == 16


def test_constant_shapes_get_a_compile_time_tile():
    _, out, text = _lower("softmax")
    assert "long long __xp_tile = " in text and "__xp_g = " not in text   # constant: no runtime sizing
    assert sorted(out.facts["task_bind"]["staged"]) == ["softmax_kernel_k0:in",
                                                        "softmax_kernel_k0:out"]


def test_symbolic_shapes_size_tiles_at_run_time_with_a_gdram_fallback():
    _, out, text = _lower("gemm")
    assert "const long long __xp_g = " in text and "if (__xp_tile < 1)" in text
    assert "for (int k = 0; k < K; ++k)" in text          # reduction stays sequential per task


def test_scattered_writes_stay_in_gdram():
    _, out, text = _lower("transpose_lifted")
    facts = out.facts["task_bind"]
    assert facts["staged"] == ["transpose_kernel_k0:in"]
    assert facts["direct"] and facts["direct"][0].startswith("transpose_kernel_k0:out")
    assert "__memcpy(out" not in text                      # never copied back wholesale


def test_input_program_is_not_mutated():
    prog = parse_file(DATA / "gemm.cpp")
    before = copy.deepcopy(prog.ast)
    run_pass("task_bind", prog)
    assert str(before) == str(prog.ast)


def _refusal(name: str, **opts) -> str:
    prog = parse_file(DATA / f"{name}.cpp")
    with pytest.raises(PassRefused) as exc:
        run_pass("task_bind", prog, **opts)
    return exc.value.diagnostics[0].code


def test_no_parallel_loop_is_refused():
    assert _refusal("recurrence") == "XP-TASK-BIND-001"


def test_uncomputable_extent_is_refused():
    assert _refusal("gather") == "XP-TASK-BIND-002"


def test_window_over_nram_is_refused():
    assert _refusal("huge_row") == "XP-TASK-BIND-003"


def test_intrinsics_are_refused():
    prog = parse_file(Path(__file__).parents[2] / "xpiler" / "corpus" / "vnni" / "add_18_128.cpp")
    with pytest.raises(PassRefused) as exc:
        run_pass("task_bind", prog)
    assert exc.value.diagnostics[0].code == "XP-TASK-BIND-006"


def test_bad_launch_is_refused():
    assert _refusal("add", cores=2) == "XP-TASK-BIND-005"
    assert _refusal("add", clusters=8) == "XP-TASK-BIND-005"      # mtp_372 has 4 clusters


def _translate(path: Path, tmp_path):
    from xpiler.translate import translate

    return translate(str(path), "bang", str(tmp_path / (path.stem + ".mlu")))


@pytest.mark.parametrize("name", ["add", "gemm"])
def test_strict_mode_round_trip(name, tmp_path):
    rep = _translate(DATA / f"{name}.cpp", tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    step = next(s for s in rep.steps if s.name == "task_bind")
    assert step.status == "verified"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rowsum", "softmax", "transpose_lifted", "rowsum128", "phases"])
def test_strict_mode_round_trip_more(name, tmp_path):
    rep = _translate(DATA / f"{name}.cpp", tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]


# ------------------------------------------------------------------------------ corpus
CORPUS = Path(__file__).parents[2] / "xpiler" / "corpus"
SUFFIX = {"vnni": ".cpp", "cuda": ".cu", "hip": ".hip"}


def _corpus(src: str, stem: str, tmp_path):
    from xpiler.translate import translate

    return translate(str(CORPUS / src / f"{stem}{SUFFIX[src]}"), "bang",
                     str(tmp_path / f"{src}_{stem}.mlu"))


@pytest.mark.parametrize("stem", ["relu_8_1024", "sum_32_128"])
def test_corpus_sample_vnni_to_bang_verified(stem, tmp_path):
    rep = _corpus("vnni", stem, tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert [s.status for s in rep.steps if s.name == "task_bind"] == ["verified"]
    assert rep.summary["kernels"]


@pytest.mark.parametrize("src", ["cuda", "hip"])
def test_corpus_sample_gpu_to_bang_verified_or_refused(src, tmp_path):
    # The GPU lifts still carry the host's device copies (malloc'd buffers filled from the
    # parameters), which affine cannot trace: until a canonicalisation step removes them
    # task_bind must refuse (never emit an unverified translation).
    rep = _corpus(src, "add_18_128", tmp_path)
    if rep.status == "verified":
        return
    assert not rep.written
    step = next(s for s in rep.steps if s.name == "task_bind")
    assert step.status == "refused" and "XP-TASK-BIND-" in step.message, step.to_json()


@pytest.mark.slow
@pytest.mark.parametrize("src", ["vnni", "cuda", "hip"])
def test_corpus_sweep_to_bang(src, tmp_path):
    import statistics
    import time

    files = sorted(p for p in (CORPUS / src).glob(f"*{SUFFIX[src]}")
                   if p.with_suffix(".json").exists())
    ok, times = 0, []
    for f in files:
        t0 = time.perf_counter()
        rep = _corpus(src, f.stem, tmp_path)
        times.append(time.perf_counter() - t0)
        ok += rep.status == "verified"
        assert rep.written == (rep.status == "verified"), f.name
    print(f"{src}->bang: {ok}/{len(files)} verified, median {statistics.median(times):.1f} s, "
          f"max {max(times):.1f} s")


# ------------------------------------------------------------------------------ regressions
def _task_bind_verified(name: str, tmp_path, **opts) -> bool:
    """task_bind alone on ``data_bang/<name>.cpp`` (already canonical C), its output run in
    strict mode on the case file's inputs against the source: one build instead of a whole
    pipeline's."""
    from xpiler.run import run_kernel
    from xpiler.translate import _copy, _inputs, _verify
    from xpiler.parse import parse_source
    from xpiler.verify import compare_arrays

    src = DATA / f"{name}.cpp"
    prog = parse_file(src)
    args, how, _ = _inputs(prog, src, {}, None, 0, False)
    assert args is not None, how
    reference = _copy(args)
    run_kernel(src, args=reference, program=prog, timeout=60)
    out = run_pass("task_bind", prog, **opts)
    text = platforms.module("bang", "backend").emit(out)
    ok, outputs, message = _verify(text, out, tmp_path / f"{name}.mlu", prog, args, reference,
                                   True, 60, run_kernel, parse_source, compare_arrays)
    assert ok, (message, outputs)
    return ok


def test_extent_one_loop_variable_is_declared_in_the_kernel(tmp_path):
    # the kernel binds the inner loop; the window of x names the extent-1 loop's variable
    _, out, text = _lower("unit_outer")
    kernel = text.split('extern "C"')[0]
    assert kernel.index("int o = 0;") < kernel.index("__xp_w0_x")
    assert _task_bind_verified("unit_outer", tmp_path)


def test_privatised_array_gets_one_copy_per_task(tmp_path):
    _, out, text = _lower("private_tmp")
    kernel = text.split('extern "C"')[0]
    assert "float tmp[16];" in kernel and "__xp_d_tmp" not in text
    assert _task_bind_verified("private_tmp", tmp_path)


def test_static_host_array_becomes_a_gdram_buffer_copied_back(tmp_path):
    _, out, text = _lower("static_scratch")
    host = text.split('extern "C"')[1]
    assert "cnrtMalloc((void **) (&__xp_d_q), sizeof(q));" in host
    back = host.index("cnrtMemcpy((void *) q, __xp_d_q, sizeof(q), CNRT_MEM_TRANS_DIR_DEV2HOST)")
    assert host.index("static_scratch_kernel_k1<<<") < back < host.index("cnrtFree(__xp_d_q)")
    # one-dimensional: staged in NRAM like a pointer parameter (written densely by k0)
    assert "static_scratch_kernel_k0:q" in out.facts["task_bind"]["staged"]
    assert "__memcpy(q + __xp_w0_q, __xp_q_n" in text
    assert _task_bind_verified("static_scratch", tmp_path)


def test_refusal_codes_are_specific():
    assert _refusal("add", extents="x") == "XP-TASK-BIND-004"
    assert _refusal("add", profile="no_such_chip") == "XP-TASK-BIND-004"


def test_host_pointer_local_is_rebased_onto_the_device_buffer(tmp_path):
    _, out, text = _lower("alias_offset")
    host = text.split('extern "C"')[1]
    assert "alias_offset_k0<<<dim, ktype, queue>>>(d_x, (float *) (d_out + 8));" in host
    assert _task_bind_verified("alias_offset", tmp_path)


def test_declared_count_caps_an_over_approximated_extent(tmp_path):
    _, out, text = _lower("concat_guarded", extents="a:32 b:16 out:48")
    host = text.split('extern "C"')[1]
    assert "cnrtMalloc((void **) (&d_a), 32 * sizeof(float));" in host
    assert _task_bind_verified("concat_guarded", tmp_path, extents="a:32 b:16 out:48")


@pytest.mark.slow
@pytest.mark.parametrize("src,stem", [
    ("vnni", "max_6_7_40"),            # extent-1 loop around the bound loop (OUTER = 1)
    ("vnni", "gemv_77_100"),           # function-scope static packing arrays -> GDRAM buffers
    ("cuda", "gemm_32_128_128"),       # host pointer local (compute = C) rebased onto d_C
    ("cuda", "concat_8_12_16"),        # guarded subscripts: declared counts cap the copies
    ("hip", "maxpool_2_12_12_16_3_3_1_1"),   # recorded extent over folded host constants
])
def test_corpus_kernels_of_the_fixed_classes_verify(src, stem, tmp_path):
    rep = _corpus(src, stem, tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert [s.status for s in rep.steps if s.name == "task_bind"] == ["verified"]


def test_guarded_row_index_bounds_the_extent_by_rows_times_row_length(tmp_path):
    # in[r * inner + k] with r = b * 32 + t < outer over a 2 x 32 grid: the guard scaled by the
    # row length gives outer * inner (the caller's 50 x 70 buffer), where 64 * inner and
    # 64 * inner + outer - 64 made the host entry copy past its end; the 64 rows of the grid
    # bound it too: the smaller of the two
    from passes.analysis import affine

    prog = parse_file(DATA / "mean_guarded_rows.cpp")
    assert affine.extents(affine.analyze(prog)) == {
        "in": "((64 * inner) < (inner * outer) ? (64 * inner) : (inner * outer))",
        "out": "((64) < (outer) ? (64) : (outer))"}
    _, out, text = _lower("mean_guarded_rows")
    host = text.split('extern "C"')[1]
    assert "cnrtMalloc((void **) (&d_in), ((64 * inner < inner * outer) ? (64 * inner) : " \
        "(inner * outer)) * sizeof(float));" in host
    assert _task_bind_verified("mean_guarded_rows", tmp_path)


def test_half_and_half2_element_types_are_staged_and_spelled_half(tmp_path):
    # __half (typedef of _Float16) and __half2 (aligned struct of two) have MLU sizes 2 and 4;
    # the output spells binary16 `half` (BANG C's type) and drops the lift's typedefs of it
    _, out, text = _lower("half2_add")
    assert sorted(out.facts["task_bind"]["staged"]) == ["half2_add_k0:a", "half2_add_k0:out",
                                                        "half2_add_k0:s"]
    assert "_Float16" not in text and "__half " not in text and "typedef half" not in text
    assert "half x;" in text and "const half *s" in text.replace("* ", "*")
    assert _task_bind_verified("half2_add", tmp_path)


def test_type_sizes_follow_typedefs_and_struct_layout():
    from pycparser import c_ast as ca

    prog = parse_file(DATA / "half2_add.cpp")
    sizes = task_bind.type_sizes(prog.ast)
    assert sizes["__half"] == (2, 2) and sizes["__half2"] == (4, 4)
    # natural layout: char then float -> 8 bytes; aligned(16) raises it; packed is unknown
    fields = [ca.Decl(n, [], [], [], [], ca.TypeDecl(n, [], None, ca.IdentifierType([t])),
                      None, None) for n, t in (("c", "char"), ("f", "float"))]
    assert task_bind._struct_layout(ca.Struct(None, fields), sizes) == (8, 4)
    big = ca.Struct(None, fields)
    big.attributes = [ca.AttributeSpecifier([ca.Attribute("aligned", "gnu", "16")])]
    assert task_bind._struct_layout(big, sizes) == (16, 16)
    big.attributes = [ca.AttributeSpecifier([ca.Attribute("packed", "gnu", None)])]
    assert task_bind._struct_layout(big, sizes) is None


def test_per_row_heap_buffer_becomes_a_per_task_gdram_slice(tmp_path):
    # calloc'd in the row loop, freed at its end (dynamic shared memory after the lift): a
    # local array for the dependence test, then, its size being symbolic, a slice
    # taskId * count of one GDRAM buffer for all tasks, zero-filled per row as calloc did
    _, out, text = _lower("dyn_rows")
    kernel, host = text.split('extern "C"')
    # the byte buffer is used as floats only: a float array (no casts, aligned for floats)
    assert "float *__xp_heap_buf" in kernel and "calloc" not in text
    assert "float *buf = __xp_heap_buf + ((long long) taskId) *" in kernel
    assert "(float *) buf" not in kernel
    assert "buf[__xp_z] = 0;" in kernel and "free(" not in text
    assert "cnrtMalloc((void **) (&__xp_heap_buf), ((size_t) 16) *" in host
    assert host.index("cnrtFree(__xp_heap_buf)") > host.index("dyn_rows_k0<<<")
    assert _task_bind_verified("dyn_rows", tmp_path)


def test_heap_buffer_passed_to_a_call_is_left_alone():
    from passes.lower.heap_locals import heap_locals as _heap_locals

    src = (DATA / "dyn_rows.cpp").read_text().replace("free(buf);", "free(buf);\n    (void) 0;")
    src = src.replace("float s = 0.f;", "float s = 0.f; memset(buf, 0, 4);")
    from xpiler.parse import parse_source
    prog = parse_source(src, "vnni", "d.cpp")
    assert _heap_locals(prog)[1] == {}


def test_early_continue_becomes_an_else_guard_bounding_the_extents(tmp_path):
    # if (i >= n) { done[t] = 1; continue; } rest  ->  if (i >= n) { done[t] = 1; } else { rest }:
    # x and y are bounded by n (the caller's 200) and by the 256 iterations of the grid, not
    # by the grid alone
    _, out, text = _lower("early_exit")
    host = text.split('extern "C"')[1]
    assert "cnrtMalloc((void **) (&d_x), ((256 < n) ? 256 : n) * sizeof(float));" in host
    assert "continue;" not in text and "else" in text.split('extern "C"')[0]
    assert _task_bind_verified("early_exit", tmp_path)


def test_heap_buffer_placement_by_size():
    # constant and small: a local array of the kernel; constant but large, or symbolic: a
    # per-task GDRAM slice
    from passes.lower.heap_locals import heap_locals as _heap_locals
    from xpiler.parse import parse_source

    src = (DATA / "dyn_rows.cpp").read_text()
    for size, local in (("(size_t) (16 * sizeof(float)) + 64", True),
                        ("(size_t) (8192 * sizeof(float))", False),
                        ("(size_t) (cols * sizeof(float)) + 64", False)):
        prog = parse_source(src.replace("(size_t) (cols * sizeof(float)) + 64", size), "vnni",
                            "d.cpp")
        heaps = list(_heap_locals(prog)[1].values())
        assert len(heaps) == 1 and heaps[0].const == local and heaps[0].host_ok, size


def test_heap_buffer_left_in_host_code_is_refused():
    # its loop is sequential (each pass reads out): a symbolic buffer in host code would be a
    # variable-length stack array there; refused with the buffer's name
    prog = parse_file(DATA / "heap_host.cpp")
    with pytest.raises(PassRefused) as exc:
        run_pass("task_bind", prog)
    d = exc.value.diagnostics[0]
    assert d.code == "XP-TASK-BIND-006" and "heap buffer 'tmp'" in d.message


def test_a_copy_between_device_buffers_runs_in_one_task(tmp_path):
    # loop_bind turns this memcpy into a device-to-device copy; task_bind keeps it a
    # single-task region (a plan made for loop_bind's copies must not reach task_bind)
    from xpiler.translate import translate

    src = Path(__file__).parent / "data" / "device_copy.cpp"
    out = run_pass("task_bind", parse_file(src))
    text = platforms.module("bang", "backend").emit(out)
    assert "if (taskId != 0)" in text and "memcpy(u, t, 16 * sizeof(uint32_t));" in text
    rep = translate(str(src), "bang", str(tmp_path / "device_copy.mlu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]


def test_heap_buffer_sized_by_a_host_local_gets_a_gdram_slice():
    # the lift's ``unsigned long xp_shmem = 2 * threads * sizeof(float);`` computed by the host
    # before the row loop (threads itself chosen by a loop): declared once at the entry's top
    # level and never assigned, so the host can size the slices at the launch
    from passes.lower.heap_locals import heap_locals as _heap_locals
    from xpiler.parse import parse_source

    src = (DATA / "dyn_rows.cpp").read_text().replace(
        "  for (int r = 0; r < rows; ++r) {",
        "  int threads = 1;\n  while (threads < cols) threads <<= 1;\n"
        "  unsigned long shmem = 2 * threads * sizeof(float);\n"
        "  for (int r = 0; r < rows; ++r) {").replace("(size_t) (cols * sizeof(float)) + 64", "shmem + 64")
    heaps = list(_heap_locals(parse_source(src, "vnni", "d.cpp"))[1].values())
    assert len(heaps) == 1 and heaps[0].host_ok
    # threads is assigned by the loop: a size naming it directly is not known to the host
    heaps = list(_heap_locals(parse_source(src.replace("shmem + 64", "threads * 8"), "vnni",
                                           "d.cpp"))[1].values())
    assert len(heaps) == 1 and not heaps[0].host_ok
