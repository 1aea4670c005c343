"""passes/lower/loop_bind/__init__.py: canonical C -> CUDA/HIP (golden structure, refusals, verified runs)."""
from __future__ import annotations

import copy
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pytest

import platforms
from passes.lower import loop_bind  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_file, parse_source

DATA = Path(__file__).parent / "data"
VERIFIED = ["add", "rowsum", "softmax", "transpose_lifted", "phases", "timesteps", "conv2d", "gemm",
            "scratch", "batch_alias", "byte_view", "device_copy"]


def _lower(name: str, to: str = "cuda", **opts):
    prog = parse_file(DATA / f"{name}.cpp")
    out = run_pass("loop_bind", prog, to=to, **opts)
    return prog, out, platforms.module(to, "backend").emit(out)


def test_elementwise_golden():
    _, out, text = _lower("add")
    assert out.platform == "cuda"
    assert [k.name for k in out.kernels] == ["add_kernel_k0"]
    assert out.entry.name == "add_kernel" and [p.name for p in out.entry.params] == \
        ["x", "y", "out", "n"]
    assert "((long long) blockIdx.x) * blockDim.x + threadIdx.x" in text
    assert "if (__xp_t < __xp_n)" in text                 # one int loop: guard, no stride
    assert "add_kernel_k0<<<dim3((unsigned) __xp_g0), dim3(256)>>>(d_x, d_y, d_out, n)" in text
    assert "cudaMemcpy(out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost)" in text
    assert "#pragma omp" not in text


def test_gemm_fuses_two_parallel_loops_and_keeps_k_sequential():
    _, out, text = _lower("gemm")
    kernel = text.split('extern "C"')[0]
    assert "int i = (int) (__xp_t / __xp_e1);" in kernel
    assert "int j = (int) (__xp_t % __xp_e1);" in kernel
    assert "for (int k = 0; k < K; ++k)" in kernel
    assert "gridDim.x" in kernel                          # M*N may exceed int: grid-stride


def test_reduction_along_inner_loop_stays_in_the_thread():
    _, _, text = _lower("rowsum")
    assert "for (int j = 0; j < N; ++j)" in text and "s += x[i * N + j]" in text
    assert "__xp_e1" not in text                          # j is not bound (reduction)


def test_constant_trip_count_gets_a_small_block():
    _, out, text = _lower("softmax")
    assert "dim3(32)" in text                             # 12 rows -> one warp
    assert "static constexpr int COLS = 10" not in text and "constexpr" in text
    assert "__host__ __device__" in text                  # helper called from the kernel


def test_host_loop_phases_and_single_thread_fixup():
    _, out, text = _lower("phases")
    assert len(out.kernels) == 4                          # 3 nests + y[0] fix-up
    assert "<<<dim3(1), dim3(1)>>>" in text
    _, out, text = _lower("timesteps")
    host = text.split('extern "C"')[1]
    assert "for (int t = 0; t < T; ++t)" in host          # sequential loop stays on the host


def test_hip_target_uses_the_hip_runtime():
    _, out, text = _lower("gemm", to="hip")
    assert out.platform == "hip"
    assert "hipMalloc" in text and "hipMemcpyDeviceToHost" in text and "cuda" not in text


def test_input_program_is_not_mutated():
    prog = parse_file(DATA / "gemm.cpp")
    before = copy.deepcopy(prog.ast)
    run_pass("loop_bind", prog, to="cuda")
    from platforms.vnni.backend import emit
    assert emit(prog) == emit(type(prog)(**{**prog.__dict__, "ast": before}))


def _refusal(src: str, **opts):
    prog = parse_source(src, "vnni", "<t>.cpp")
    with pytest.raises(PassRefused) as exc:
        run_pass("loop_bind", prog, to="cuda", **opts)
    return exc.value.diagnostics[0]


def test_recurrence_is_refused_with_its_code():
    d = _refusal((DATA / "prefix.cpp").read_text())
    assert d.code == "XP-BIND-001" and "out" in d.message and d.coord.line == 5


def test_uncomputable_extent_is_refused():
    d = _refusal('extern "C" void k(const float* x, float* o, int n) '
                 '{ for (int i = 0; i < n; ++i) o[i * i] = x[i]; }')
    assert d.code == "XP-BIND-002" and "'o'" in d.message


def test_intrinsics_and_bad_block_are_refused():
    d = _refusal('#include <immintrin.h>\nextern "C" void k(const float* x, float* o, int n) '
                 '{ for (int i = 0; i < n; i += 16) _mm512_storeu_ps(o + i, _mm512_loadu_ps(x + i)); }')
    assert d.code == "XP-BIND-003" and "detensorize" in d.message
    d = _refusal((DATA / "add.cpp").read_text(), block=2048)
    assert d.code == "XP-BIND-004"


def test_device_value_needed_later_becomes_a_one_element_device_buffer():
    src = ('extern "C" void k(const float* x, float* o, int n) { float m = x[0]; '
           'for (int i = 0; i < n; ++i) o[i] = x[i] - m; }')
    out = run_pass("loop_bind", parse_source(src, "vnni", "<t>.cpp"), to="cuda")
    text = platforms.module("cuda", "backend").emit(out)
    assert "float m[1];" in text and "m[0] = x[0];" in text and "- m[0]" in text


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("name", ["gemm", "softmax"])
def test_emitted_cuda_compiles_with_nvcc(name, tmp_path):
    _, _, text = _lower(name)
    src = tmp_path / f"{name}.cu"
    src.write_text(text)
    r = subprocess.run(["nvcc", "-c", "-arch=sm_80", str(src), "-o", str(tmp_path / "o.o")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def _translate(name: str, to: str, tmp_path):
    from xpiler.translate import translate

    t0 = time.perf_counter()
    rep = translate(str(DATA / f"{name}.cpp"), to, str(tmp_path / f"{name}.{to}"))
    return rep, time.perf_counter() - t0


def test_round_trip_add_verified_on_the_virtual_device(tmp_path):
    rep, _ = _translate("add", "cuda", tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert rep.pipeline.endswith("loop_bind{levels=2;to=cuda},host_heap")   # no inner loop: one level
    assert "__syncthreads" not in (tmp_path / "add.cuda").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("to", ["cuda", "hip"])
def test_sweep_canonical_c_sources(to, tmp_path):
    results = {}
    for name in VERIFIED:
        rep, secs = _translate(name, to, tmp_path)
        results[name] = (rep.status, round(secs, 1))
    times = [s for _, s in results.values()]
    print(f"vnni->{to}: {sum(st == 'verified' for st, _ in results.values())}/{len(results)} "
          f"verified, median {statistics.median(times)} s, max {max(times)} s: {results}")
    assert all(st == "verified" for st, _ in results.values()), results
    rep, _ = _translate("prefix", to, tmp_path)
    last = [s for s in rep.steps if s.name != "host_heap"][-1]        # host_heap: the finish stage
    assert rep.status == "failed" and last.name == "loop_bind" and last.status == "refused"
    assert "XP-BIND-001" in last.message


# -- host data on the device: scratch arrays, rebased pointer locals, asserted loops ---------
def test_static_scratch_array_becomes_a_device_buffer():
    _, out, text = _lower("scratch")
    assert len(out.kernels) == 2
    host = text.split('extern "C"')[1]
    assert "static float t[256];" in host
    assert "cudaMalloc((void **) (&__xp_d_t), sizeof(t));" in host
    assert "cudaMemcpy(__xp_d_t, t, sizeof(t), cudaMemcpyHostToDevice);" in host
    # a static array keeps its values between calls: copied back before the free
    back = host.index("cudaMemcpy(t, __xp_d_t, sizeof(t), cudaMemcpyDeviceToHost);")
    assert back < host.index("cudaFree(__xp_d_t);")
    assert "(float *) __xp_d_t" in host                 # kernels get the device buffer


def test_host_pointer_locals_are_rebased_onto_device_buffers():
    _, out, text = _lower("batch_alias", to="hip")
    host = text.split('extern "C"')[1]
    assert "for (int b = 0; b < B; ++b)" in host        # t is reused: the batch loop stays
    assert "(float *) (d_x + b * N)" in host and "(float *) (d_out + b * N)" in host
    assert "hipFree(__xp_d_t);" in host and "hipMemcpy(t, __xp_d_t" not in host   # not static
    assert len(out.kernels) == 3


def test_host_data_refusals_have_their_code():
    d = _refusal('extern "C" void k(const float* x, float* o, float** q) { float t[8]; '
                 'for (int i = 0; i < 8; ++i) t[i] = x[i]; '
                 'for (int i = 0; i < 8; ++i) o[i] = t[i] + (&t == (float (*)[8]) 0); }')
    assert d.code == "XP-BIND-005" and "'t'" in d.message and "'&'" in d.message
    d = _refusal('extern "C" void k(const float* x, float* o, int n, int m) { '
                 'const float* p = x + m; m = 0; for (int i = 0; i < n; ++i) o[i] = p[i]; }')
    assert d.code == "XP-BIND-005" and "'p'" in d.message and "'m'" in d.message


def test_sizeof_of_a_host_array_in_device_code_is_its_byte_count():
    # device code receives the array as a pointer: sizeof(t) is folded to 8 * sizeof(float)
    src = ('extern "C" void k(const float* x, float* o) { float t[8]; '
           'for (int i = 0; i < 8; ++i) t[i] = x[i]; '
           'for (int i = 0; i < 8; ++i) o[i] = t[i] * sizeof(t); }')
    out = run_pass("loop_bind", parse_source(src, "vnni", "<t>.cpp"), to="cuda")
    text = platforms.module("cuda", "backend").emit(out)
    assert "8 * sizeof(float)" in text and "sizeof(t)" not in text.split('extern "C"')[0]


def test_omp_parallel_for_is_trusted_without_atomics():
    # a permutation scatter: no proof from the subscripts, the pragma states independence;
    # the extent of o comes from the recorded host allocation (devcopy{extents=true})
    src = ('#pragma xpiler extent(o, (n) * (4))\n'
           'extern "C" void k(const float* x, const int* idx, float* o, int n) {\n'
           '  #pragma omp parallel for\n'
           '  for (int i = 0; i < n; ++i) o[idx[i]] = x[i];\n}\n')
    assert _refusal(src.replace("#pragma omp parallel for", "")).code == "XP-BIND-001"
    out = run_pass("loop_bind", parse_source(src, "vnni", "<t>.cpp"), to="cuda")
    assert len(out.kernels) == 1
    text = platforms.module("cuda", "backend").emit(out)
    assert "n * 4 / 4 * sizeof(float)" in text and "xpiler extent" not in text
    racy = src.replace("o[idx[i]] = x[i];", "{\n    #pragma omp atomic\n    o[idx[i]] += x[i];\n  }")
    assert _refusal(racy).code == "XP-BIND-001"
    shared = src.replace("o[idx[i]] = x[i];", "{ t = x[i]; o[idx[i]] = t; }").replace(
        "int n) {", "int n) { float t;")
    assert _refusal(shared).code in ("XP-BIND-001", "XP-BIND-003")   # t is shared: a race


@pytest.mark.parametrize("name", ["scratch", "byte_view"])
def test_scratch_and_byte_views_verified_on_the_virtual_device(name, tmp_path):
    rep, _ = _translate(name, "cuda", tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    last = [s for s in rep.steps if s.name != "host_heap"][-1]        # host_heap: the finish stage
    assert last.name == "loop_bind" and last.status == "verified"


@pytest.mark.parametrize("to,api", [("cuda", "cudaMemcpy"), ("hip", "hipMemcpy")])
def test_a_copy_between_device_buffers_stays_a_copy(to, api, tmp_path):
    _, out, text = _lower("device_copy", to=to)
    host = text.split('extern "C"')[1]
    assert len(out.kernels) == 2 and "<<<dim3(1), dim3(1)>>>" not in text
    kind = f"{api}DeviceToDevice"
    assert f"{api}((uint32_t *) __xp_d_u, (float *) __xp_d_t, 16 * sizeof(uint32_t), {kind});" in host
    assert f"{api}(d_sum, ((float *) __xp_d_t) + 8, 8 * sizeof(float), {kind});" in host
    if to == "cuda":
        rep, _ = _translate("device_copy", to, tmp_path)
        assert rep.status == "verified", [s.to_json() for s in rep.steps]


def test_privatised_scratch_is_declared_per_thread():
    src = ('extern "C" void k(const float* x, float* out, int n) {\n  static float p[16];\n'
           '  for (int i = 0; i < n; ++i) {\n'
           '    for (int j = 0; j < 16; ++j) p[j] = x[i * 16 + j] * 2.0f;\n'
           '    float s = 0.0f;\n    for (int j = 0; j < 16; ++j) s += p[15 - j] * p[j];\n'
           '    out[i] = s;\n  }\n}\n')
    out = run_pass("loop_bind", parse_source(src, "vnni", "<t>.cpp"), to="cuda")
    text = platforms.module("cuda", "backend").emit(out)
    kernel = text.split('extern "C"')[0]
    assert len(out.kernels) == 1 and "float p[16];" in kernel and "static" not in kernel
    assert "__xp_d_p" not in text                        # no shared device buffer


@pytest.mark.parametrize("ctype", ["half", "_Float16"])
def test_recorded_extent_of_a_half_buffer_counts_binary16_elements(ctype):
    # task_recovery{form=flat} spells BANG half as _Float16: the recorded host allocation
    # (bytes) still bounds the buffer in 2-byte elements
    src = (f'#pragma xpiler extent(x, num*2)\n'
           f'extern "C" void k(const {ctype} *x, {ctype} *y, int num) {{\n'
           f'  for (int i = 0; i < num; ++i) y[i] = x[i];\n}}\n')
    ext = loop_bind._recorded_extents(parse_source(src, "vnni", "<t>.cpp"))
    assert ext["x"].replace(" ", "") == "((num*2)/2)"


_GUARDED_ROWS = """
void f(const float *x, float *y) {
  for (int u = 0; u < 8; u += 1) {
    int n = u / 4;
    int oh = u % 4;
    for (int kh = 0; kh < 3; ++kh) {
      int r = oh - 1 + kh;
      if (r < 0 || r >= 4) continue;
      y[u * 3 + kh] = x[(n * 4 + r) * 2];
    }
  }
}
"""


def test_caller_known_count_caps_a_loose_constant_bound():
    # the analysis bounds n and r separately (x: 17 elements, a sound over-approximation);
    # the caller's buffer holds 15 (max index (4 + 3) * 2 = 14): copying 17 would read past it
    prog = parse_source(_GUARDED_ROWS, "vnni", "<t>.cpp")
    loose, _ = loop_bind.plan(prog)
    assert loop_bind.const_count(loose.sizes["x"]) >= 15
    capped, _ = loop_bind.plan(prog, extents={"x": "15", "y": "24"})
    assert loop_bind.const_count(capped.sizes["x"]) == 15
    # a caller count larger than the bound changes nothing
    wide, _ = loop_bind.plan(prog, extents={"x": "100", "y": "24"})
    assert loop_bind.const_count(wide.sizes["x"]) == loop_bind.const_count(loose.sizes["x"])


@pytest.mark.parametrize("qual", ["__restrict__", "__restrict", "restrict"])
def test_restrict_qualified_parameters_are_declared_without_the_qualifier(qual):
    src = (f"void f(const float *{qual} x, float *{qual} y, int n) {{\n"
           "  for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];\n}\n")
    out = run_pass("loop_bind", parse_source(src, "vnni", "<t>.cpp"), to="cuda")
    text = platforms.module("cuda", "backend").emit(out)
    assert "__global__" in text and "restrict" not in text.split("__global__", 1)[1].split("{", 1)[0]


def test_assert_in_a_parallel_loop_stays_on_the_device():
    # assert only reads its operand (a failed check aborts whatever the iteration order)
    src = ("#include <assert.h>\n"
           "void f(const int *ids, const float *x, float *y, int n, int nr) {\n"
           "  for (int i = 0; i < n; i++) { int r = ids[i]; assert(r >= 0 && r < nr); y[i] = x[i]; }\n}\n")
    out = run_pass("loop_bind", parse_source(src, "vnni", "<t>.cpp"), to="cuda")
    text = platforms.module("cuda", "backend").emit(out)
    kernel = text.split("__global__", 1)[1].split("\n}\n", 1)[0]
    assert "assert(" in kernel


HOST_IF = """extern "C" void axpby(const float *a, const float *b, int n, float alpha, float beta, float *r) {
  if (alpha == 1 && beta == 1) {
    for (int i = 0; i < n; ++i) r[i] = a[i] + b[i];
  } else if (beta == 0) {
    for (int i = 0; i < n; ++i) r[i] = alpha * a[i];
  } else {
    for (int i = 0; i < n; ++i) r[i] = alpha * a[i] + beta * b[i];
  }
}
"""


@pytest.mark.parametrize("alpha, beta", [(1.0, 1.0), (2.0, 0.0), (0.5, 3.0)])
def test_an_if_the_host_evaluates_launches_the_kernels_of_its_branches(tmp_path, alpha, beta):
    """Each branch of an if whose condition reads only host values is partitioned on its own:
    three parallel kernels under the host's if / else-if chain (one single-thread kernel
    holding the whole chain before)."""
    from xpiler.argspec import parse_arg_specs
    from xpiler.translate import translate

    src = tmp_path / "axpby.cpp"
    src.write_text(HOST_IF)
    out = tmp_path / "axpby.cu"
    args = ("a=random:300", "b=random:300", "n=300", f"alpha={alpha}", f"beta={beta}", "r=zeros:300")
    report = translate(str(src), "cuda", str(out), arg_specs=parse_arg_specs(args))
    assert report.status == "verified", report.message
    host = out.read_text().split('extern "C"')[1]
    assert host.count("<<<") == 3 and "if (alpha == 1 && beta == 1)" in host


def test_a_block_scope_typedef_is_spelled_out_in_the_kernels():
    # session 25 probe (BANG rmsnorm lifted: `typedef float F;` of an intrinsic's reference
    # body): a kernel outlined from the block, and its parameters, name the plain type
    src = ('extern "C" void k(const float* x, float* o, int n) {\n'
           '  typedef float F;\n  const F s = (F) 2;\n'
           '  for (int i = 0; i < n; ++i) ((F *) o)[i] = x[i] * s;\n}\n')
    out = run_pass("loop_bind", parse_source(src, "vnni", "<t>.cpp"), to="cuda")
    text = platforms.module("cuda", "backend").emit(out)
    kernel = text.split("__global__")[1].split('extern "C"')[0]
    assert "F" not in kernel.replace("float", "") and "(float *) o" in kernel
    assert "typedef float F" not in text
