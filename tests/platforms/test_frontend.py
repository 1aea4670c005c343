"""Front-ends: Program facts per sample, the normalisation contract, coordinates, speed."""
from __future__ import annotations

import time

from _frontend_samples import SAMPLES, parse_sample, sample_ids  # first: fixes sys.path

import pytest
from pycparser import c_ast

from xpiler.ir.errors import SourceError
from xpiler.parse import parse_source

# sample -> (entry, entry kind, [(param, kind, dtype, role, size)])
PARAMS = {
    "cuda/add_tvm.cu": ("add_kernel", "host", [
        ("A", "pointer", "float32", "input", "n"), ("B", "pointer", "float32", "input", "n"),
        ("C", "pointer", "float32", "output", "n"), ("n", "scalar", "int32", "scalar", None)]),
    "cuda/gemm_wmma.cu": ("gemm_kernel", "host", [
        ("A", "pointer", "float16", "input", "M * K"), ("B", "pointer", "float16", "input", "K * N"),
        ("C", "pointer", "float32", "output", "M * N"), ("M", "scalar", "int32", "scalar", None),
        ("K", "scalar", "int32", "scalar", None), ("N", "scalar", "int32", "scalar", None)]),
    "cuda/sum_shared.cu": ("sum_kernel", "host", [
        ("x", "pointer", "float32", "input", "rows * cols"),
        ("out", "pointer", "float32", "output", "rows"),
        ("rows", "scalar", "int32", "scalar", None), ("cols", "scalar", "int32", "scalar", None)]),
    "cuda/softmax_dyn.cu": ("softmax", "host", [
        ("in", "pointer", "float32", "input", "((size_t) rows) * cols"),
        ("out", "pointer", "float32", "output", "((size_t) rows) * cols"),
        ("rows", "scalar", "int32", "scalar", None), ("cols", "scalar", "int32", "scalar", None)]),
    "cuda/relu_half.cu": ("relu_half_kernel", "kernel", [
        ("x", "pointer", "float16", "input", None), ("y", "pointer", "float16", "output", None),
        ("n", "scalar", "int32", "scalar", None)]),
    "cuda/layernorm_helpers.cu": ("layernorm", "host", [
        ("x", "pointer", "float32", "input", "((size_t) rows) * cols"),
        ("gamma", "pointer", "float32", "input", "cols"),
        ("beta", "pointer", "float32", "input", "cols"),
        ("y", "pointer", "float32", "output", "((size_t) rows) * cols"),
        ("rows", "scalar", "int32", "scalar", None), ("cols", "scalar", "int32", "scalar", None)]),
    "cuda/scale_two_pass.cu": ("scale_shift", "host", [
        ("data", "pointer", "float32", "inout", "n"), ("alpha", "scalar", "float32", "scalar", None),
        ("beta", "scalar", "float32", "scalar", None), ("n", "scalar", "int32", "scalar", None)]),
    "cuda/two_kernels.cu": ("copy_kernel", "kernel", [
        ("in", "pointer", "float32", "input", None), ("out", "pointer", "float32", "output", None),
        ("n", "scalar", "int32", "scalar", None)]),
    "cuda/misc_constructs.cu": ("launch", "host", [
        ("in", "pointer", "float32", "input", "n * 4"), ("out", "pointer", "float32", "output", "n"),
        ("n", "scalar", "int32", "scalar", None)]),
    "hip/add_hip.hip": ("add_kernel", "host", [
        ("a", "pointer", "float32", "input", "n"), ("b", "pointer", "float32", "input", "n"),
        ("c", "pointer", "float32", "output", "n"), ("n", "scalar", "int32", "scalar", None)]),
    "hip/gemm_mfma_f32.hip": ("gemm_kernel", "host", [
        ("A", "pointer", "float32", "input", "M * K"), ("B", "pointer", "float32", "input", "K * N"),
        ("C", "pointer", "float32", "output", "M * N"), ("M", "scalar", "int32", "scalar", None),
        ("K", "scalar", "int32", "scalar", None), ("N", "scalar", "int32", "scalar", None)]),
    "hip/gemm_mfma_f16.hip": ("gemm_kernel", "host", [
        ("A", "pointer", "float16", "input", "M * K"), ("B", "pointer", "float16", "input", "K * N"),
        ("C", "pointer", "float32", "output", "M * N"), ("M", "scalar", "int32", "scalar", None),
        ("K", "scalar", "int32", "scalar", None), ("N", "scalar", "int32", "scalar", None)]),
    "hip/reduce_hip.hip": ("sum_kernel", "host", [
        ("x", "pointer", "float32", "input", "n"), ("total", "pointer", "float32", "output", "1"),
        ("n", "scalar", "int32", "scalar", None)]),
    "hip/softmax_hip.hip": ("softmax_rows", "kernel", [
        ("in", "pointer", "float32", "input", None), ("out", "pointer", "float32", "output", None),
        ("cols", "scalar", "int32", "scalar", None)]),
    "hip/transpose_hip.hip": ("transpose", "host", [
        ("in", "pointer", "float32", "input", "((size_t) rows) * cols"),
        ("out", "pointer", "float32", "output", "((size_t) rows) * cols"),
        ("rows", "scalar", "int32", "scalar", None), ("cols", "scalar", "int32", "scalar", None)]),
    "bang/add_host.mlu": ("add_kernel", "host", [
        ("a", "pointer", "float32", "input", "N"), ("b", "pointer", "float32", "input", "N"),
        ("c", "pointer", "float32", "output", "N")]),
    "bang/dense_mlp.mlu": ("dense_kernel", "kernel", [
        ("X", "pointer", "int8", "input", None), ("W", "pointer", "int8", "input", None),
        ("bias", "pointer", "float32", "input", None), ("Y", "pointer", "float32", "output", None)]),
    "bang/softmax_sram.mlu": ("softmax_kernel", "kernel", [
        ("input", "pointer", "float16", "input", None),
        ("output", "pointer", "float16", "output", None)]),
    "bang/relu_block.mlu": ("relu", "host", [
        ("x", "pointer", "float32", "input", "n"), ("y", "pointer", "float32", "output", "n"),
        ("n", "scalar", "int32", "scalar", None)]),
    "bang/sum_async.mlu": ("sum_kernel", "kernel", [
        ("x", "pointer", "float16", "input", None), ("out", "pointer", "float16", "output", None)]),
    "bang/transpose_bang.mlu": ("transpose_kernel", "kernel", [
        ("src", "pointer", "float32", "input", None), ("dst", "pointer", "float32", "output", None)]),
    "vnni/gemm_dpbusd.cpp": ("gemm_u8s8", "host", [
        ("A", "pointer", "uint8", "input", None), ("Bp", "pointer", "int8", "input", None),
        ("C", "pointer", "int32", "output", None)]),
    "vnni/dot_dpwssd.cpp": ("dot_kernel", "host", [
        ("x", "pointer", "float32", "input", None), ("y", "pointer", "float32", "input", None),
        ("out", "pointer", "float32", "output", None), ("n", "scalar", "int32", "scalar", None)]),
    "vnni/gemv_vl.cpp": ("gemv_kernel", "host", [
        ("A", "pointer", "uint8", "input", None), ("x", "pointer", "int8", "input", None),
        ("y", "pointer", "int32", "output", None), ("rows", "scalar", "int32", "scalar", None),
        ("cols", "scalar", "int32", "scalar", None)]),
    "vnni/relu_plain.cpp": ("relu_kernel", "host", [
        ("in", "pointer", "float32", "input", None), ("out", "pointer", "float32", "output", None),
        ("n", "scalar", "int32", "scalar", None)]),
    "vnni/quant_pair.cpp": ("quantize_u8", "host", [
        ("x", "pointer", "float32", "input", None), ("q", "pointer", "uint8", "output", None),
        ("n", "scalar", "int32", "scalar", None), ("scale", "scalar", "float32", "scalar", None)]),
    "vnni/conv1d_vnni.cpp": ("conv1d_kernel", "host", [
        ("x", "pointer", "uint8", "input", None), ("w", "pointer", "int8", "input", None),
        ("y", "pointer", "int32", "output", None), ("out_len", "scalar", "int32", "scalar", None)]),
}

# sample -> [(kernel, grid, block, shmem, stream)] (CUDA/HIP) or [(kernel, dim, ktype, queue)]
LAUNCHES = {
    "cuda/add_tvm.cu": [("default_function_kernel",
                         ("(n + BLOCK_THREADS - 1) / BLOCK_THREADS", "1", "1"),
                         ("BLOCK_THREADS", "1", "1"), None, None)],
    "cuda/gemm_wmma.cu": [("gemm_wmma_kernel", ("N / WMMA_N", "M / WMMA_M", "1"), ("32", "1", "1"),
                           "0", "stream")],
    "cuda/sum_shared.cu": [("row_sum_kernel",
                            ("std::max(1, std::min(DIV_UP(cols, THREADS), 64))", "rows", "1"),
                            ("THREADS", "1", "1"), None, None)],
    "cuda/softmax_dyn.cu": [("softmax_kernel", ("rows", "1", "1"), ("128", "1", "1"),
                             "cols * sizeof(float)", None)],
    "cuda/layernorm_helpers.cu": [("layernorm_kernel", ("rows", "1", "1"), ("1", "1", "1"),
                                   None, None)],
    "cuda/scale_two_pass.cu": [
        ("scale_kernel", ("(n + 127) / 128", "1", "1"), ("128", "1", "1"), None, None),
        ("shift_kernel", ("(n + 127) / 128", "1", "1"), ("128", "1", "1"), None, None)],
    "cuda/misc_constructs.cu": [("k", ("(n + 255) / 256", "1", "1"), ("256", "1", "1"), "0",
                                 "s")],
    "hip/add_hip.hip": [("add_kernel_device", ("(n + 255) / 256", "1", "1"), ("256", "1", "1"),
                         "0", "0")],
    "hip/gemm_mfma_f32.hip": [("gemm_mfma_kernel", ("N / 16", "M / 16", "1"), ("16", "4", "1"),
                               "0", "0")],
    "hip/gemm_mfma_f16.hip": [("gemm_f16_kernel", ("N / 16", "M / 16", "1"), ("64", "1", "1"),
                               "0", "stream")],
    "hip/reduce_hip.hip": [("reduce_kernel", ("std::min((n + 255) / 256, 1024)", "1", "1"),
                            ("256", "1", "1"), "0", "0")],
    "hip/transpose_hip.hip": [("transpose_kernel", ("(cols + TILE - 1) / TILE",
                                                    "(rows + TILE - 1) / TILE", "1"),
                               ("TILE", "8", "1"), None, None)],
    "bang/add_host.mlu": [("add_kernel_mlu", ("4", "1", "1"), "CNRT_FUNC_TYPE_UNION1", "queue")],
    "bang/relu_block.mlu": [("relu_kernel", ("1", "1", "1"), "cnrtFuncTypeBlock", "q")],
}

# sample -> [(name, space, dtype, shape, bytes, function)]
BUFFERS = {
    "cuda/sum_shared.cu": [("partial", "shared", "float32", ("THREADS / 32",), 32,
                            "row_sum_kernel")],
    "cuda/softmax_dyn.cu": [("row_buf", "shared", "float32", ("?",), None, "softmax_kernel"),
                            ("red", "shared", "float32", ("2",), 8, "softmax_kernel")],
    "cuda/misc_constructs.cu": [("g_table", "gdram", "float32", ("WARP",), 128, None)],
    "cuda/layernorm_helpers.cu": [("c_eps", "constant", "float32", ("1",), 4, None)],
    "hip/transpose_hip.hip": [("tile", "shared", "float32", ("TILE", "TILE + 1"), 4224,
                               "transpose_kernel")],
    "hip/reduce_hip.hip": [("waves", "shared", "float32", ("256 / WAVE",), 16, "reduce_kernel")],
    "bang/add_host.mlu": [("a_nram", "nram", "float32", ("PER_TASK",), 1024, "add_kernel_mlu"),
                          ("b_nram", "nram", "float32", ("PER_TASK",), 1024, "add_kernel_mlu")],
    "bang/dense_mlp.mlu": [("x_nram", "nram", "int8", ("K",), 256, "dense_kernel"),
                           ("y_nram", "nram", "float32", ("NOUT",), 512, "dense_kernel"),
                           ("b_nram", "nram", "float32", ("NOUT",), 512, "dense_kernel"),
                           ("w_wram", "wram", "int8", ("NOUT * K",), 32768, "dense_kernel")],
    "bang/softmax_sram.mlu": [("row_sram", "sram", "float32", ("ROWS * COLS",), 16384, None),
                              ("x_nram", "nram", "float32", ("COLS",), 4096, "softmax_kernel"),
                              ("tmp_nram", "nram", "float32", ("COLS",), 4096, "softmax_kernel"),
                              ("h_nram", "nram", "float16", ("COLS",), 2048, "softmax_kernel")],
    "bang/relu_block.mlu": [("g_scale", "gdram", "float32", ("1",), 4, None),
                            ("c_zero", "constant", "float32", ("1",), 4, None),
                            ("buf", "nram", "float32", ("LEN",), 1024, "relu_kernel"),
                            ("spill", "ldram", "float32", ("LEN",), 1024, "relu_kernel")],
    "bang/transpose_bang.mlu": [("in_nram", "nram", "float32", ("H * W",), 32768,
                                 "transpose_kernel"),
                                ("out_nram", "nram", "float32", ("W * H",), 32768,
                                 "transpose_kernel")],
}

INTRINSICS = {
    "cuda/gemm_wmma.cu": ["wmma::fill_fragment", "wmma::load_matrix_sync", "wmma::mma_sync",
                          "wmma::store_matrix_sync"],
    "cuda/sum_shared.cu": ["__shfl_down_sync", "atomicAdd"],
    "cuda/softmax_dyn.cu": ["atomicAdd", "atomicMax"],
    "cuda/add_tvm.cu": [],
    "cuda/misc_constructs.cu": ["__shfl_xor_sync"],
    "hip/gemm_mfma_f32.hip": ["__builtin_amdgcn_mfma_f32_16x16x4f32"],
    "hip/gemm_mfma_f16.hip": ["__builtin_amdgcn_mfma_f32_16x16x16f16"],
    "hip/reduce_hip.hip": ["__shfl_down", "atomicAdd"],
    "bang/add_host.mlu": ["__bang_add", "__memcpy"],
    "bang/dense_mlp.mlu": ["__bang_add", "__bang_mlp", "__memcpy"],
    "bang/sum_async.mlu": ["__bang_add", "__bang_reduce_sum", "__bang_write_zero",
                           "__memcpy_async"],
    "bang/softmax_sram.mlu": ["__bang_active_exp", "__bang_float2half_rn", "__bang_half2float",
                              "__bang_mul_scalar", "__bang_reduce_sum", "__memcpy"],
    "bang/transpose_bang.mlu": ["__bang_transpose", "__memcpy"],
    "vnni/gemm_dpbusd.cpp": ["_mm512_dpbusd_epi32"],
    "vnni/dot_dpwssd.cpp": ["_mm512_dpwssds_epi32"],
    "vnni/gemv_vl.cpp": ["_mm_dpbusds_epi32"],
    "vnni/conv1d_vnni.cpp": ["_mm512_dpbusd_epi32"],
}


def test_every_sample_has_expectations():
    assert set(sample_ids()) == set(PARAMS)
    per_dialect = {d: sum(1 for s in PARAMS if s.startswith(d + "/"))
                   for d in ("cuda", "hip", "bang", "vnni")}
    assert all(n >= 6 for n in per_dialect.values()), per_dialect


@pytest.mark.parametrize("sample", sorted(PARAMS))
def test_entry_and_params(sample):
    program = parse_sample(sample)
    entry, kind, params = PARAMS[sample]
    assert program.entry.name == entry
    assert program.summary()["entry"]["kind"] == kind
    got = [(p.name, p.kind, p.dtype, p.role, p.size) for p in program.params]
    assert got == params
    assert len(program.params) == len(params)


@pytest.mark.parametrize("sample", sorted(LAUNCHES))
def test_launch_configuration(sample):
    program = parse_sample(sample)
    if program.platform == "bang":
        got = [(l.kernel, l.dim, l.ktype, l.stream) for l in program.launches]
    else:
        got = [(l.kernel, l.grid, l.block, l.shmem, l.stream) for l in program.launches]
    assert got == LAUNCHES[sample]
    assert all(l.caller == program.entry.name for l in program.launches)


@pytest.mark.parametrize("sample", sorted(BUFFERS))
def test_buffers(sample):
    program = parse_sample(sample)
    got = [(b.name, b.space, b.dtype, b.shape, b.bytes, b.function) for b in program.buffers]
    assert got == BUFFERS[sample]


@pytest.mark.parametrize("sample", sorted(INTRINSICS))
def test_intrinsics(sample):
    assert parse_sample(sample).intrinsics == INTRINSICS[sample]


def test_allocations_of_host_code():
    program = parse_sample("cuda/gemm_wmma.cu")
    assert [(a.name, a.bytes, a.function) for a in program.allocations] == [
        ("d_A", "sizeof(half) * M * K", "gemm_kernel"),
        ("d_B", "sizeof(half) * K * N", "gemm_kernel"),
        ("d_C", "sizeof(float) * M * N", "gemm_kernel")]
    bang = parse_sample("bang/relu_block.mlu")
    assert [(a.name, a.bytes) for a in bang.allocations] == [("dx", "n * sizeof(float)"),
                                                             ("dy", "n * sizeof(float)")]


def test_function_kinds_and_qualifiers():
    program = parse_sample("cuda/layernorm_helpers.cu")
    kinds = {f.name: f.kind for f in program.functions}
    assert kinds == {"welford": "device", "row_offset": "device", "layernorm_kernel": "kernel",
                     "layernorm": "host"}
    assert program.function("welford").qualifiers == ("__device__", "__noinline__")
    assert program.function("layernorm").extern_c
    bang = parse_sample("bang/softmax_sram.mlu")
    assert {f.name: f.kind for f in bang.functions} == {"row_sum": "device",
                                                        "softmax_kernel": "kernel"}


def test_summary_is_json_ready():
    import json

    summary = parse_sample("cuda/gemm_wmma.cu").summary()
    assert json.loads(json.dumps(summary)) == summary
    assert set(summary) >= {"platform", "entry", "params", "launch", "allocations", "buffers",
                            "intrinsics", "diagnostics"}


# -- the normalisation contract -------------------------------------------------------------
def find(node, kind):
    out = []

    class Finder(c_ast.NodeVisitor):
        def generic_visit(self, n):
            if isinstance(n, kind):
                out.append(n)
            super().generic_visit(n)

    Finder().visit(node)
    return out


def test_launch_is_a_call_of_a_call():
    program = parse_sample("bang/add_host.mlu")
    launches = [c for c in find(program.ast, c_ast.FuncCall) if isinstance(c.name, c_ast.FuncCall)]
    assert len(launches) == 1
    inner = launches[0].name
    assert inner.name.name == "__xp_launch"
    assert [getattr(e, "name", None) for e in inner.args.exprs] == [
        "add_kernel_mlu", "dim", "ktype", "queue"]
    assert [a.name for a in launches[0].args.exprs] == ["d_a", "d_b", "d_c"]


def test_qualifiers_live_in_funcspec_and_storage():
    program = parse_sample("cuda/add_tvm.cu")
    kernel = program.ast.ext[0].decl
    assert kernel.funcspec == ["__global__", "__launch_bounds__(256)"]
    params = kernel.type.args.params
    assert params[0].type.quals == ["__restrict__"]
    bang = parse_sample("bang/dense_mlp.mlu")
    decls = find(bang.ast, c_ast.Decl)
    assert next(d for d in decls if d.name == "w_wram").storage == ["__wram__"]
    assert bang.ast.ext[0].decl.funcspec == ["__mlu_entry__"]


def test_casts_templates_aliases_and_references_are_recorded():
    program = parse_sample("cuda/layernorm_helpers.cu")
    facts = program.facts
    assert sorted(set(facts["casts"].values())) == ["const_cast", "reinterpret_cast",
                                                    "static_cast"]
    assert facts["using_aliases"] == ["index_t"]
    assert facts["extern_c"] == ["layernorm"]
    welford = program.ast.ext[3].decl
    mean = welford.type.args.params[1]
    assert isinstance(mean.type, c_ast.PtrDecl) and mean.type.quals == ["__xp_ref"]
    wmma = parse_sample("cuda/gemm_wmma.cu").facts
    spelling = "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, WMMA_M, WMMA_N, WMMA_K, half, " \
               "nvcuda::wmma::row_major>"
    assert wmma["cxx_types"][spelling] == {
        "template": "nvcuda::wmma::fragment",
        "args": ["nvcuda::wmma::matrix_a", "WMMA_M", "WMMA_N", "WMMA_K", "half",
                 "nvcuda::wmma::row_major"]}
    assert wmma["namespaces"] == ["nvcuda"]
    assert "using namespace nvcuda;" in wmma["preamble"]


def test_constants_from_defines_and_constexpr():
    facts = parse_sample("cuda/gemm_wmma.cu").facts
    assert facts["constants"]["WMMA_M"] == 16
    bang = parse_sample("bang/dense_mlp.mlu").facts
    assert bang["constants"]["ROWS_PER_CORE"] == 1
    assert bang["defines"]["NOUT"]["body"] == "128"


def test_vector_typedef_attribute_is_structured():
    program = parse_sample("hip/gemm_mfma_f32.hip")
    typedef = program.ast.ext[0]
    attr = typedef.type.attributes[0].attributes[0]
    assert (typedef.name, attr.namespace, attr.name, attr.arguments) == (
        "floatx4", "gnu", "ext_vector_type", "4")


@pytest.mark.parametrize("sample", sample_ids())
def test_coordinates_are_those_of_the_original_file(sample):
    """Every identifier and constant sits at its original line:column."""
    program = parse_sample(sample)
    lines = (SAMPLES / sample).read_text().splitlines()
    checked = 0
    for node in find(program.ast, (c_ast.ID, c_ast.Constant)):
        text = node.name if isinstance(node, c_ast.ID) else node.value
        if text.startswith("__xp_") or node.coord is None:
            continue
        line = lines[node.coord.line - 1]
        assert line[node.coord.column - 1:].startswith(text), (node.coord, text)
        checked += 1
    assert checked > 3


def test_preprocessor_conditionals_and_macros():
    src = """#define USE_FAST 1
#if USE_FAST && defined(__CUDACC__)
#define SCALE 2
#else
#define SCALE 3
#endif
#define DEVFN __device__ __forceinline__
#define REAL float
DEVFN REAL twice(REAL x) { return SCALE * x; }
__global__ void k(REAL* y) { y[0] = twice(y[0]); }
"""
    program = parse_source(src, "cuda", path="m.cu")
    assert program.facts["constants"]["SCALE"] == 2
    assert {f.name: f.kind for f in program.functions} == {"twice": "device", "k": "kernel"}
    assert [(p.name, p.dtype, p.role) for p in program.params] == [("y", "float32", "inout")]
    assert program.ast.ext[0].decl.coord.line == 9


def test_kernel_entry_through_device_helpers_and_intrinsic_stores():
    src = """__device__ void put(float* dst, float v) { *dst = v; }
__device__ float get(const float* src) { return src[0]; }
__global__ void k(const float* a, float* b, float* c, float* d) {
  put(b + threadIdx.x, get(a));
  atomicAdd(c, 1.0f);
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> f;
  nvcuda::wmma::store_matrix_sync(d, f, 16, nvcuda::wmma::mem_row_major);
}
"""
    program = parse_source(src, "cuda", path="h.cu")
    assert [(p.name, p.role) for p in program.params] == [
        ("a", "input"), ("b", "output"), ("c", "inout"), ("d", "output")]
    assert program.intrinsics == ["atomicAdd", "wmma::store_matrix_sync"]


def test_entry_selection():
    with pytest.raises(SourceError) as err:
        parse_source((SAMPLES / "cuda/two_kernels.cu").read_text(), "cuda", path="t.cu")
    assert err.value.diagnostics[0].code == "XP1141"
    assert "fill_kernel, copy_kernel" in err.value.diagnostics[0].message
    program = parse_source((SAMPLES / "cuda/two_kernels.cu").read_text(), "cuda", path="t.cu",
                           entry="fill_kernel")
    assert program.entry.name == "fill_kernel"
    assert [(p.name, p.role) for p in program.params] == [
        ("out", "output"), ("value", "scalar"), ("n", "scalar")]


def test_platform_detection_routes_to_each_frontend():
    for sample, platform in [("hip/softmax_hip.hip", "hip"), ("bang/sum_async.mlu", "bang"),
                             ("vnni/relu_plain.cpp", "vnni"), ("cuda/relu_half.cu", "cuda")]:
        assert parse_sample(sample).platform == platform


def test_parse_is_fast():
    text = (SAMPLES / "cuda/gemm_wmma.cu").read_text()
    parse_source(text, "cuda", path="warm.cu")
    start = time.perf_counter()
    for _ in range(5):
        parse_source(text, "cuda", path="t.cu")
    assert (time.perf_counter() - start) / 5 < 0.2


def test_cxx_literals_and_hip_kernel_name():
    src = """#include <hip/hip_runtime.h>
__global__ void k(bool* flags, float* out, int n) {
  bool on = true;
  float* none = nullptr;
  if (threadIdx.x < n) flags[threadIdx.x] = on && none == nullptr ? false : true;
  out[0] = 1.0f;
}
extern "C" void run(bool* flags, float* out, int n) {
  bool* d_f; float* d_o;
  hipMalloc((void**)&d_f, n * sizeof(bool));
  hipMalloc((void**)&d_o, sizeof(float));
  hipLaunchKernelGGL(HIP_KERNEL_NAME(k), dim3(1), dim3(n), 0, 0, d_f, d_o, n);
  hipMemcpy(flags, d_f, n * sizeof(bool), hipMemcpyDeviceToHost);
  hipMemcpy(out, d_o, sizeof(float), hipMemcpyDeviceToHost);
}
"""
    program = parse_source(src, "hip", path="lit.hip")
    assert [(p.name, p.dtype, p.role, p.size) for p in program.params] == [
        ("flags", "bool", "output", "n"), ("out", "float32", "output", "1"),
        ("n", "int32", "scalar", None)]
    assert [(l.kernel, l.grid, l.block) for l in program.launches] == [
        ("k", ("1", "1", "1"), ("n", "1", "1"))]
    consts = [c for c in find(program.ast, c_ast.Constant) if c.type in ("bool", "nullptr_t")]
    assert [c.value for c in consts] == ["true", "nullptr", "nullptr", "false", "true"]


def test_program_is_picklable():
    import pickle

    program = parse_sample("cuda/gemm_wmma.cu")
    again = pickle.loads(pickle.dumps(program))
    assert again.summary() == program.summary()


def test_host_main_with_std_containers():
    src = """#include <hip/hip_runtime.h>
#include <vector>
__global__ void k(const float* a, float* b) { b[threadIdx.x] = a[threadIdx.x]; }
int main() {
  std::vector<float> a_h(64), b_h{1.0f, 2.0f};
  float *a_d, *b_d;
  hipMalloc(&a_d, 64 * sizeof(float));
  hipMalloc(&b_d, 64 * sizeof(float));
  hipMemcpy(a_d, a_h.data(), 64 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, a_d, b_d);
  std::cout << "done" << std::endl;
  return 0;
}
"""
    program = parse_source(src, "hip", path="main.hip")
    assert program.entry.name == "k"                  # main is never the entry
    assert [(l.kernel, l.caller, l.block) for l in program.launches] == [
        ("k", "main", ("64", "1", "1"))]
    decl = next(d for d in find(program.ast, c_ast.Decl) if d.name == "a_h")
    assert decl.type.type.names == ["std::vector<float>"]
    assert program.facts["ctor_decls"]


def test_every_cuda_and_hip_vector_type_is_a_type_name():
    # uchar3 & co. come from the one table of vector types (platforms/common/gpu_vectors.py)
    for platform, suffix in (("cuda", "cu"), ("hip", "hip")):
        src = ("__global__ void gray(const uchar3 *rgb, unsigned char *g, const ushort2 *w, int n) {\n"
               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i < n) g[i] = (unsigned char)((rgb[i].x + rgb[i].y + rgb[i].z + w[i].x) / 4);\n}\n")
        prog = parse_source(src, platform, f"k.{suffix}")
        assert [p.name for p in prog.entry.params] == ["rgb", "g", "w", "n"]


def test_host_sizes_written_with_one_expression_functions():
    from xpiler.verify import evaluate_size

    src = ("__host__ __device__ inline int out_size(int in, int k, int stride, int pad) {\n"
           "  return (in + 2 * pad - k) / stride + 1;\n}\n"
           "__global__ void k(float *y, int n) { int i = threadIdx.x; if (i < n) y[i] = 0.f; }\n")
    prog = parse_source(src, "cuda", "k.cu")
    assert prog.facts["expression_functions"]["out_size"]["params"] == ["in", "k", "stride", "pad"]
    got = evaluate_size(prog, "((size_t) N) * out_size(H, R, 2, 1) * out_size(W, R, 2, 1)",
                        {"N": 2, "H": 9, "W": 7, "R": 3})
    assert got == 2 * 5 * 4
    # a function that is not one return of its integer parameters is not evaluated
    src2 = src.replace("int in, int k", "float in, int k")
    prog2 = parse_source(src2, "cuda", "k.cu")
    assert "out_size" not in prog2.facts["expression_functions"]
    assert evaluate_size(prog2, "out_size(H, R, 2, 1)", {"H": 9, "R": 3}) is None


def test_a_name_spelled_like_an_integer_suffix_is_a_name():
    # session 24: `cudaMalloc(&dQ, (size_t)L * D * sizeof(float))` (L the sequence length)
    # read as `(size_t) * D`: L was dropped as the suffix of a literal
    from platforms.common.consts import ConstantTable

    table = ConstantTable({}, lambda t: t)
    table.values.update({"L": 5, "D": 3, "u": 2})
    assert table.evaluate("(( L) * D)") == 15
    assert table.evaluate("16L * 2") == 32 and table.evaluate("0x10uL + u") == 18
