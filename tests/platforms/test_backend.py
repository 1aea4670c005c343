"""Back-ends: round trip on the sample corpus, reversal of the normalisation, host entries,
and the emitted code compiled by the real toolchains where present (nvcc, hipcc, g++)."""
from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

from _frontend_samples import ENTRY, SAMPLES, parse_sample, sample_ids, structure  # noqa: I001

import pytest

import platforms
from xpiler.ir.errors import UsageError
from xpiler.ir.program import Launch, Param
from xpiler.parse import parse_source


def emit(program) -> str:
    return platforms.module(program.platform, "backend").emit(program)


@pytest.mark.parametrize("sample", sample_ids())
def test_round_trip(sample):
    """parse -> emit -> parse gives the same AST (coordinates aside) and the same facts;
    printing again gives the same text."""
    first = parse_sample(sample)
    text = emit(first)
    entry = ENTRY.get(sample.split("/")[1])
    second = parse_source(text, first.platform, path=sample + ".emitted", entry=entry)
    assert structure(second.ast) == structure(first.ast)
    assert emit(second) == text
    keep = ("entry", "params", "launch", "allocations", "buffers", "intrinsics", "kernels")
    assert {k: second.summary()[k] for k in keep} == {k: first.summary()[k] for k in keep}


@pytest.mark.parametrize("sample, fragments", [
    ("cuda/add_tvm.cu", ['extern "C" __global__ void __launch_bounds__(256) '
                         'default_function_kernel(float * __restrict__ A',
                         "default_function_kernel<<<grid, block>>>(d_A, d_B, d_C, n);",
                         "dim3 grid(blocks);", "#define BLOCK_THREADS 256",
                         '#include <cuda_runtime.h>', 'extern "C" void add_kernel(']),
    ("cuda/gemm_wmma.cu", ["using namespace nvcuda;", "constexpr int WMMA_M = 16;",
                           "acc_frag_t &acc", "gemm_wmma_kernel<<<grid, block, 0, stream>>>",
                           "typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc_frag_t;",
                           "wmma::store_matrix_sync(C + tile_m * N + tile_n, acc, N, "
                           "wmma::mem_row_major);"]),
    ("cuda/layernorm_helpers.cu", ["using index_t = int;", "float &mean", "alignas(16) float",
                                   "reinterpret_cast<const float4 *>(", "static_cast<float>(cols)",
                                   "const_cast<float *>(y)", '__constant__ float c_eps[1]',
                                   'extern "C" void layernorm(', "gamma != nullptr",
                                   "layernorm_kernel<<<dim3(rows), dim3(1)>>>"]),
    ("cuda/sum_shared.cu", ["#pragma unroll", "#define DIV_UP(a, b) (((a) + (b) - 1) / (b))",
                            "std::max(1, std::min(DIV_UP(cols, THREADS), 64))",
                            "__shared__ float partial[THREADS / 32];",
                            "row_sum_kernel<<<grid, THREADS>>>"]),
    ("cuda/softmax_dyn.cu", ["extern __shared__ float row_buf[];",
                             "std::numeric_limits<float>::lowest()",
                             "softmax_kernel<<<rows, 128, cols * sizeof(float)>>>"]),
    ("cuda/misc_constructs.cu", ["HOST_DEVICE inline float sq(float v)", "int &ref = pairs[0].b;",
                                 "Pair *pairs", "#pragma unroll 4", "auto lane = tid % WARP;",
                                 "k<<<(n + 255) / 256, 256, 0, s>>>(d_in, d_out, d_p, n, 42ULL);"]),
    ("cuda/scale_two_pass.cu", ["dim3 block{128};", "dim3 grid{(n + 127) / 128};"]),
    ("hip/gemm_mfma_f32.hip", ["typedef float floatx4 __attribute__((ext_vector_type(4)));",
                               "__builtin_amdgcn_mfma_f32_16x16x4f32(a, b, acc, 0, 0, 0)",
                               "hipLaunchKernelGGL(gemm_mfma_kernel, grid, block, 0, 0,"]),
    ("hip/gemm_mfma_f16.hip", ["using half4 = _Float16 __attribute__((ext_vector_type(4)));",
                               "gemm_f16_kernel<<<dim3(N / 16, M / 16), dim3(64), 0, stream>>>"]),
    ("hip/reduce_hip.hip", ["__global__ void __launch_bounds__(256, 2) reduce_kernel("]),
    ("bang/add_host.mlu", ["__mlu_global__ void add_kernel_mlu(float *a, float *b, float *c)",
                           "__nram__ float a_nram[PER_TASK];",
                           "add_kernel_mlu<<<dim, ktype, queue>>>(d_a, d_b, d_c);",
                           "cnrtDim3_t dim = {4, 1, 1};"]),
    ("bang/dense_mlp.mlu", ["__mlu_entry__ void dense_kernel(", "__wram__ int8_t w_wram[NOUT * K];",
                            "__bang_mlp(y_nram, x_nram, w_wram, NOUT, K, 0);"]),
    ("bang/softmax_sram.mlu", ["__mlu_shared__ float row_sram[ROWS * COLS];",
                               "__mlu_func__ float row_sum("]),
    ("bang/relu_block.mlu", ["__mlu_device__ float g_scale[1];", "__ldram__ float spill[LEN];",
                             "__mlu_const__ float c_zero[1] = {0.0f};",
                             "relu_kernel<<<dim, cnrtFuncTypeBlock, q>>>(dx, dy, n);"]),
    ("vnni/gemv_vl.cpp", ["using float4_ = float __attribute__((__vector_size__(16)));",
                          "typedef int int4_ __attribute__((vector_size(16)));"]),
    ("vnni/dot_dpwssd.cpp", ["alignas(64) static int16_t yq[32];", "std::max(-32768.0f,",
                             "static_cast<int16_t>(q)", "reinterpret_cast<const void *>(xq)"]),
    ("vnni/conv1d_vnni.cpp", ["#pragma omp parallel for", "int32_t &dst",
                              "constexpr int TAPS = 8;", "uint8_t * __restrict__ x"]),
])
def test_emitted_text_restores_original_constructs(sample, fragments):
    text = emit(parse_sample(sample))
    for fragment in fragments:
        assert fragment in text, fragment
    assert "__xp_" not in text


# -- host entries ------------------------------------------------------------------------------
def _entry_params():
    return parse_sample("cuda/gemm_wmma.cu").params


def test_cuda_host_entry_structure():
    from platforms.cuda.backend import emit_host_entry

    program = parse_sample("cuda/gemm_wmma.cu")
    text = emit_host_entry("gemm_entry", program.params, "gemm_wmma_kernel", program.launches[0])
    for fragment in ["#include <cuda_runtime.h>", "#include <cuda_fp16.h>",
                     'extern "C" void gemm_entry(const half *A, const half *B, float *C, int M, '
                     "int K, int N)",
                     "cudaMalloc((void **)&d_A, (M * K) * sizeof(half));",
                     "cudaMemcpy(d_A, A, (M * K) * sizeof(half), cudaMemcpyHostToDevice);",
                     "dim3 grid(N / WMMA_N, M / WMMA_M, 1);", "dim3 block(32, 1, 1);",
                     "gemm_wmma_kernel<<<grid, block, 0>>>(d_A, d_B, d_C, M, K, N);",
                     # default kernel arguments: the entry's parameters in order
                     "cudaMemcpy(C, d_C, (M * N) * sizeof(float), cudaMemcpyDeviceToHost);",
                     "cudaFree(d_C);"]:
        assert fragment in text, fragment
    assert "cudaMemcpy(A, d_A" not in text        # inputs are not copied back
    mapped = emit_host_entry("gemm_entry", program.params, "gemm_wmma_kernel",
                             program.launches[0], kernel_args=["A", "B + 0", "C", "M", "N", "K"])
    assert "gemm_wmma_kernel<<<grid, block, 0>>>(d_A, d_B + 0, d_C, M, N, K);" in mapped


def test_hip_host_entry_uses_hip_runtime():
    from platforms.hip.backend import emit_host_entry

    program = parse_sample("hip/add_hip.hip")
    text = emit_host_entry("add_entry", program.params, "add_kernel_device",
                           {"grid": ("(n + 255) / 256",), "block": (256,)})
    assert "#include <hip/hip_runtime.h>" in text
    assert "hipMalloc((void **)&d_a, (n) * sizeof(float));" in text
    assert "hipMemcpy(c, d_c, (n) * sizeof(float), hipMemcpyDeviceToHost);" in text
    assert "dim3 grid((n + 255) / 256, 1, 1);" in text
    assert "cuda" not in text


def test_bang_host_entry_uses_cnrt():
    from platforms.bang.backend import emit_host_entry

    program = parse_sample("bang/add_host.mlu")
    text = emit_host_entry("add_entry", program.params, "add_kernel_mlu", program.launches[0])
    order = ["#include <cnrt.h>", "cnrtQueueCreate(&queue);",
             "cnrtMalloc((void **)&d_a, (N) * sizeof(float));",
             "cnrtMemcpy(d_a, (void *)a, (N) * sizeof(float), CNRT_MEM_TRANS_DIR_HOST2DEV);",
             "cnrtDim3_t dim = {4, 1, 1};", "cnrtFunctionType_t ktype = CNRT_FUNC_TYPE_UNION1;",
             "add_kernel_mlu<<<dim, ktype, queue>>>(d_a, d_b, d_c);", "cnrtQueueSync(queue);",
             "cnrtMemcpy((void *)c, d_c, (N) * sizeof(float), CNRT_MEM_TRANS_DIR_DEV2HOST);",
             "cnrtFree(d_c);", "cnrtQueueDestroy(queue);"]
    positions = [text.index(fragment) for fragment in order]
    assert positions == sorted(positions)
    # a kernel-only BANG file: defaults for dim / ktype, sizes given by the caller
    kernel = parse_sample("bang/dense_mlp.mlu")
    text = emit_host_entry("dense", kernel.params, "dense_kernel", None,
                           sizes={"X": "16 * 256", "W": "128 * 256", "bias": "128",
                                  "Y": "16 * 128"})
    assert "dense_kernel<<<dim, ktype, queue>>>(d_X, d_W, d_bias, d_Y);" in text
    assert "cnrtMemcpy((void *)Y, d_Y" in text and "cnrtMemcpy((void *)X, d_X" not in text


def test_bang_host_entry_locals_do_not_shadow_parameters():
    """An entry parameter named dim / queue / ktype keeps its name; the wrapper's locals move."""
    from platforms.bang.backend import emit_host_entry

    params = [Param("x", "float *", "pointer", "float32", "inout", "n"),
              Param("n", "int", "scalar", "int32", "scalar"), Param("dim", "int", "scalar", "int32", "scalar")]
    text = emit_host_entry("k", params, "k_mlu", None)
    assert "cnrtDim3_t __xp_dim = {4, 1, 1};" in text and "cnrtQueue_t queue;" in text
    assert "k_mlu<<<__xp_dim, ktype, queue>>>(d_x, n, dim);" in text
    assert parse_source(text, "bang", "<t>.mlu").entry.name == "k"


def test_host_entry_needs_sizes():
    from platforms.cuda.backend import emit_host_entry

    params = (Param("x", "float *", "pointer", "float32", "input"),)
    with pytest.raises(UsageError, match="element count"):
        emit_host_entry("e", params, "k", Launch(kernel="k", caller="e", grid=("1",),
                                                 block=("1",)))


def test_vnni_host_entry_is_a_call():
    from platforms.vnni.backend import emit_host_entry

    program = parse_sample("vnni/relu_plain.cpp")
    text = emit_host_entry("relu_entry", program.params, "relu_kernel", None)
    assert 'extern "C" void relu_entry(const float *in, float *out, int n)' in text
    assert "relu_kernel(in, out, n);" in text


# -- real toolchains ---------------------------------------------------------------------------
def _compile_all(commands: list[list[str]], env=None) -> list[tuple[list[str], int, str]]:
    def run(cmd):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
        return cmd, proc.returncode, proc.stderr[-2000:]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(run, commands))


def _write_emitted(tmp_path, samples, suffix, host_entry=None):
    paths = []
    for sample in samples:
        program = parse_sample(sample)
        text = emit(program)
        if host_entry is not None:
            text += "\n" + host_entry(program)
        path = tmp_path / (sample.split("/")[1].rsplit(".", 1)[0] + suffix)
        path.write_text(text)
        paths.append(path)
    return paths


# kernel arguments of the first launch, over the entry's parameter names
KERNEL_ARGS = {
    "gemm_wmma": ["A", "B", "C", "M", "N", "K"],
    "layernorm_helpers": ["x", "gamma", "beta", "y", "cols"],
    "sum_shared": ["x", "out", "rows", "cols"],
    "softmax_dyn": ["in", "out", "cols", "-3.402823466e+38f"],
    "gemm_mfma_f32": ["A", "B", "C", "M", "N", "K"],
    "gemm_mfma_f16": ["A", "B", "C", "M", "N", "K"],
    "transpose_hip": ["in", "out", "rows", "cols"],
}


def _host_entry(backend: str):
    def build(program):
        from importlib import import_module

        launch = program.launches[0]
        stem = program.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if stem not in KERNEL_ARGS:
            return ""
        return import_module(f"platforms.{backend}.backend").emit_host_entry(
            program.entry.name + "_xp", program.params, launch.kernel, launch,
            kernel_args=KERNEL_ARGS[stem])
    return build


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_emitted_cuda_compiles_with_nvcc(tmp_path):
    samples = ["cuda/gemm_wmma.cu", "cuda/layernorm_helpers.cu", "cuda/sum_shared.cu",
               "cuda/softmax_dyn.cu", "cuda/misc_constructs.cu"]
    paths = _write_emitted(tmp_path, samples, ".cu", _host_entry("cuda"))
    results = _compile_all([["nvcc", "-c", "-arch=sm_80", str(p), "-o", str(p) + ".o"]
                            for p in paths])
    failures = [(cmd[3], err) for cmd, rc, err in results if rc != 0]
    assert not failures, failures


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")
def test_emitted_hip_compiles_with_hipcc(tmp_path):
    samples = ["hip/gemm_mfma_f32.hip", "hip/gemm_mfma_f16.hip", "hip/transpose_hip.hip"]
    paths = _write_emitted(tmp_path, samples, ".hip", _host_entry("hip"))
    env = dict(os.environ, HIP_PLATFORM="amd")
    results = _compile_all([["hipcc", "-c", "--offload-arch=gfx90a", str(p), "-o", str(p) + ".o"]
                            for p in paths], env=env)
    failures = [(cmd[-3], err) for cmd, rc, err in results if rc != 0]
    assert not failures, failures


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
def test_emitted_vnni_compiles_with_gxx(tmp_path):
    from platforms.vnni.backend import emit_host_entry

    def host(program):
        return emit_host_entry(program.entry.name + "_xp", program.params, program.entry.name)

    samples = [s for s in sample_ids() if s.startswith("vnni/")]
    paths = _write_emitted(tmp_path, samples, ".cpp", host)
    flags = ["-O1", "-march=native", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512vnni"]
    results = _compile_all([["g++", *flags, "-c", str(p), "-o", str(p) + ".o"] for p in paths])
    failures = [(cmd[-3], err) for cmd, rc, err in results if rc != 0]
    assert not failures, failures


def test_samples_directory_is_complete():
    assert {p.name for p in SAMPLES.iterdir()} == {"cuda", "hip", "bang", "vnni"}
