#!/usr/bin/env python3
"""Generate the CUDA corpus: xpiler/corpus/cuda/<op>_<args>.cu + <op>_<args>.json.

Every operator of OPS.md, two or more shapes each, small enough that one emulated run stays
well under a second. Styles follow real code of each kind:

- element-wise / reduction / layout / pooling / conv: TVM-generated kernels
  (``extern "C" __global__ void __launch_bounds__(N) default_function_kernel``,
  ``((int)blockIdx.x)``, ``T_*`` names, ``1.000000e+00f`` literals, ``*_outer`` loops,
  shuffle + staging cross-thread reductions);
- normalisations, softmax, gemv, attention: hand-written kernels (warp shuffles, shared memory,
  dynamic shared memory);
- gemm, bmm, dense, gatemlp, mha: ``nvcuda::wmma`` m16n16k16, half inputs, float accumulate.

Most files carry an ``extern "C" void <op>_kernel(host pointers..., int sizes...)`` wrapper
(cudaMalloc, cudaMemcpy, one ``<<<grid, block>>>`` launch, copy back, cudaFree); a few are
kernel-only (their case has a ``launch``), some use ``dim3 b(x, y)``, dynamic shared memory or
several launches, so that the corpus exercises the front-end.

Usage: .venv/bin/python tools/gen_corpus_cuda.py [--check]
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus_gpu_common import (Buf, Entry, cdiv, flit, fill, host_wrapper, main, prod, ptr,  # noqa: E402
                                scalar)

BX, BY, BZ = "((int)blockIdx.x)", "((int)blockIdx.y)", "((int)blockIdx.z)"
TX, TY, TZ = "((int)threadIdx.x)", "((int)threadIdx.y)", "((int)threadIdx.z)"
F32, F16 = "float32", "float16"

HEAD = "#include <cuda_runtime.h>\n"
HEAD_FP16 = "#include <cuda_fp16.h>\n#include <cuda_runtime.h>\n"
HEAD_WMMA = "#include <cuda_fp16.h>\n#include <cuda_runtime.h>\n#include <mma.h>\n"


def nm(op, args):
    return op + "_" + "_".join(str(a) for a in args)


# ============================================================================ element-wise
EW_OUT = {"add": "T_add", "sub": "T_subtract", "sign": "T_sign", "sin": "compute",
          "relu": "compute", "gelu": "T_multiply", "sigmoid": "compute"}


def ew_expr(op: str, i: str, approximate: str = "tanh") -> str:
    a, b = f"A[{i}]", f"B[{i}]"
    if op == "add":
        return f"({a} + {b})"
    if op == "sub":
        return f"({a} - {b})"
    if op == "sign":
        return (f"((0.000000e+00f < {a}) ? 1.000000e+00f : (({a} < 0.000000e+00f) ? "
                f"-1.000000e+00f : 0.000000e+00f))")
    if op == "sin":
        return f"sinf({a})"
    if op == "relu":
        return f"max({a}, 0.000000e+00f)"
    if op == "gelu" and approximate == "tanh":
        c = flit(math.sqrt(2.0 / math.pi))
        return (f"((5.000000e-01f * {a}) * (1.000000e+00f + tanhf(({c} * ({a} + "
                f"(4.471500e-02f * (({a} * {a}) * {a})))))))")
    if op == "gelu":
        return f"(({a} * 5.000000e-01f) * (1.000000e+00f + erff(({a} * {flit(1 / math.sqrt(2))}))))"
    if op == "sigmoid":
        return f"(1.000000e+00f / (1.000000e+00f + __expf((0.000000e+00f - {a}))))"
    raise KeyError(op)


def elementwise(op: str, shape: list[int], variant: str, attrs: dict | None = None) -> Entry:
    """variant: 'sized' (wrapper takes int size), 'baked' (no size), 'kernel' (kernel only),
    '2d' (dim3 b(32, 8) block)."""
    attrs = attrs or {}
    n = prod(shape)
    binary = op in ("add", "sub")
    out = EW_OUT[op]
    if variant == "2d":
        T = 256
        idx = f"(((({BX} * 256) + ({TY} * 32)) + {TX}))"
    else:
        T = 1024 if n >= 2048 else 256
        idx = f"(({BX} * {T}) + {TX})"
    grid = cdiv(n, T)
    expr = ew_expr(op, idx, attrs.get("approximate", "tanh"))
    body = f"  {out}[{idx}] = {expr};"
    if n % T:
        body = f"  if ({idx} < {n}) {{\n  {body}\n  }}"
    kparams = [f"float* __restrict__ {out}", "float* __restrict__ A"]
    if binary:
        kparams.append("float* __restrict__ B")
    src = HEAD + "\n"
    src += (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
            f'{", ".join(kparams)}) {{\n{body}\n}}\n')
    tin = [("A", "x")] + ([("B", "y")] if binary else [])
    if variant == "kernel":
        params = [ptr(out, F32, "output", shape, "out")]
        params += [ptr(a, F32, "input", shape, t) for a, t in tin]
        return Entry(op, nm(op, shape), shape, src, "default_function_kernel", params, attrs,
                     launch={"grid": [grid, 1, 1], "block": [T, 1, 1], "shmem": 0})
    sized = variant in ("sized", "2d")
    cnt = "size" if sized else str(n)
    bufs = [Buf(a, "float", cnt) for a, _ in tin] + [Buf(out, "float", cnt, "output")]
    kargs = ", ".join([f"d_{out}"] + [f"d_{a}" for a, _ in tin])
    if variant == "2d":
        launch = (f"  dim3 b(32, 8);\n  dim3 g((size + 255) / 256);\n"
                  f"  default_function_kernel<<<g, b>>>({kargs});")
    elif sized:
        launch = (f"  dim3 grid((size + {T - 1}) / {T});\n  dim3 block({T});\n"
                  f"  default_function_kernel<<<grid, block>>>({kargs});")
    else:
        launch = f"  default_function_kernel<<<{grid}, {T}>>>({kargs});"
    src += "\n" + host_wrapper("cuda", f"{op}_kernel", bufs, [("size", "int")] if sized else [],
                               launch, cast=variant == "baked")
    params = [ptr(a, F32, "input", shape, t) for a, t in tin] + [ptr(out, F32, "output", shape, "out")]
    if sized:
        params.append(scalar("size", n))
    return Entry(op, nm(op, shape), shape, src, f"{op}_kernel", params, attrs)


def elementwise_entries() -> list[Entry]:
    return [
        elementwise("add", [18, 128], "sized"), elementwise("add", [4, 256], "sized"),
        elementwise("sub", [18, 128], "sized"), elementwise("sub", [3, 100], "baked"),
        elementwise("sign", [32, 64], "kernel"), elementwise("sign", [5, 77], "kernel"),
        elementwise("sin", [18, 128], "baked"), elementwise("sin", [8, 8, 16], "baked"),
        elementwise("relu", [18, 128], "2d"), elementwise("relu", [4, 256], "sized"),
        elementwise("gelu", [16, 96], "sized", {"approximate": "tanh"}),
        elementwise("gelu", [4, 256], "sized", {"approximate": "none"}),
        elementwise("sigmoid", [18, 128], "sized"), elementwise("sigmoid", [2, 3, 50], "baked"),
    ]


# ============================================================================ reductions
RED = {  # op -> (identity, combine(a, b), output name)
    "sum": ("0.000000e+00f", "({a} + {b})", "A_red"),
    "mean": ("0.000000e+00f", "({a} + {b})", "T_divide"),
    "max": ("-3.402823e+38f", "max({a}, {b})", "A_red"),
    "min": ("3.402823e+38f", "min({a}, {b})", "A_red"),
}


def reduce_rows(op: str, shape: list[int]) -> Entry:
    """Reduce the last axis of [R, C]: one block (128 threads) per row, TVM cross-thread
    reduction: per-thread partial over k1_outer, warp shuffle, staging in shared memory."""
    R, C = shape
    T = 128
    W = T // 32
    ident, comb, out = RED[op]
    c = lambda a, b: comb.format(a=a, b=b)  # noqa: E731
    kout = cdiv(C, T)
    load = f"A[((({BX} * {C}) + (k1_outer * {T})) + {TX})]"
    acc = f"  for (int k1_outer = 0; k1_outer < {kout}; ++k1_outer) {{\n"
    if C % T:
        acc += f"    if (((k1_outer * {T}) + {TX}) < {C}) {{\n  "
    acc += f"    normal_reduce_temp0[0] = {c('normal_reduce_temp0[0]', load)};\n"
    if C % T:
        acc += "    }\n"
    acc += "  }\n"
    lines = []
    if op in ("sum", "mean"):   # TVM: __shfl_down_sync under the active mask
        lines.append("  mask[0] = __activemask();")
        for off in (16, 8, 4, 2, 1):
            lines.append(f"  t0[0] = __shfl_down_sync(mask[0], red_buf0[0], {off}, 32);")
            lines.append(f"  red_buf0[0] = {c('red_buf0[0]', 't0[0]')};")
    else:                       # butterfly: every lane ends with the warp's value
        lines.append("  mask[0] = 0xffffffffu;")
        for off in (16, 8, 4, 2, 1):
            lines.append(f"  t0[0] = __shfl_xor_sync(mask[0], red_buf0[0], {off}, 32);")
            lines.append(f"  red_buf0[0] = {c('red_buf0[0]', 't0[0]')};")
    stage1 = "\n".join(lines)
    fin = [f"    red_buf0[0] = (({TX} < {W}) ? red_buf_staging[{TX}] : {ident});"]
    off = W // 2
    while off >= 1:
        fin.append(f"    t0[0] = __shfl_down_sync(0xffffffffu, red_buf0[0], {off}, 32);")
        fin.append(f"    red_buf0[0] = {c('red_buf0[0]', 't0[0]')};")
        off //= 2
    res = "red_buf0[0]" if op != "mean" else f"(red_buf0[0] / {flit(C)})"
    fin.append(f"    if ({TX} == 0) {{\n      {out}[{BX}] = {res};\n    }}")
    src = HEAD + "\n" + fill("""extern "C" __global__ void __launch_bounds__($T) default_function_kernel(float* __restrict__ A, float* __restrict__ $out) {
  float normal_reduce_temp0[1];
  __shared__ float red_buf_staging[$W];
  float red_buf0[1];
  unsigned mask[1];
  float t0[1];
  normal_reduce_temp0[0] = $ident;
$acc  red_buf0[0] = normal_reduce_temp0[0];
$stage1
  if (($TX & 31) == 0) {
    red_buf_staging[($TX >> 5)] = red_buf0[0];
  }
  __syncthreads();
  if ($TX < 32) {
$fin
  }
}
""", T=T, W=W, out=out, ident=ident, acc=acc, stage1=stage1, TX=TX, fin="\n".join(fin))
    bufs = [Buf("A", "float", "rows * cols"), Buf(out, "float", "rows", "output")]
    launch = f"  default_function_kernel<<<rows, {T}>>>(d_A, d_{out});"
    src += "\n" + host_wrapper("cuda", f"{op}_kernel", bufs, [("rows", "int"), ("cols", "int")], launch)
    params = [ptr("A", F32, "input", shape, "x"), ptr(out, F32, "output", [R], "out"),
              scalar("rows", R), scalar("cols", C)]
    return Entry(op, nm(op, shape), shape, src, f"{op}_kernel", params, {"axis": -1})


def reduce_middle(op: str, shape: list[int], axis: int) -> Entry:
    """Reduce a non-innermost axis: one thread per output element, serial loop (TVM default
    schedule when the reduction axis is not bound to threads; reads stay coalesced)."""
    nd = len(shape)
    axis %= nd
    A_ = prod(shape[:axis])
    B_ = shape[axis]
    C_ = prod(shape[axis + 1:])
    total = A_ * C_
    T = min(256, total)
    ident, comb, out = RED[op]
    o = f"(({BX} * {T}) + {TX})"
    load = f"A[((((({o} / {C_}) * {B_ * C_}) + (k{axis} * {C_})) + ({o} % {C_})))]"
    res = f"{out}_local[0]" if op != "mean" else f"({out}_local[0] / {flit(B_)})"
    guard = total % T != 0
    i = "    " if guard else "  "
    body = (f"{i}{out}_local[0] = {ident};\n"
            f"{i}for (int k{axis} = 0; k{axis} < {B_}; ++k{axis}) {{\n"
            f"{i}  {out}_local[0] = {comb.format(a=out + '_local[0]', b=load)};\n{i}}}\n"
            f"{i}{out}[{o}] = {res};\n")
    if guard:
        body = f"  if ({o} < {total}) {{\n{body}  }}\n"
    src = HEAD + "\n" + (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                         f'float* __restrict__ A, float* __restrict__ {out}) {{\n'
                         f"  float {out}_local[1];\n{body}}}\n")
    oshape = [s for i, s in enumerate(shape) if i != axis]
    bufs = [Buf("A", "float", str(prod(shape))), Buf(out, "float", str(total), "output")]
    launch = f"  default_function_kernel<<<{cdiv(total, T)}, {T}>>>(d_A, d_{out});"
    src += "\n" + host_wrapper("cuda", f"{op}_kernel", bufs, [], launch, cast=True)
    params = [ptr("A", F32, "input", shape, "x"), ptr(out, F32, "output", oshape, "out")]
    return Entry(op, nm(op, shape), shape, src, f"{op}_kernel", params, {"axis": axis})


def reduction_entries() -> list[Entry]:
    return [
        reduce_rows("sum", [64, 256]), reduce_middle("sum", [8, 64, 32], 1),
        reduce_rows("mean", [32, 512]), reduce_middle("mean", [16, 48, 8], 1),
        reduce_rows("max", [64, 256]), reduce_middle("max", [96, 128], 0),
        reduce_rows("min", [32, 200]), reduce_middle("min", [8, 64, 32], 1),
    ]


# ============================================================================ matrix (wmma)
WM = "nvcuda::wmma"


def gemm_tvm(M: int, K: int, N: int) -> Entry:
    """TVM wmma schedule: 32x32 block tile, 2x2 warps (block (32, 2, 2)), K step 32 staged in
    shared memory (row pitch 40 halves), two m16n16k16 steps per stage."""
    assert M % 32 == 0 and N % 32 == 0 and K % 32 == 0
    src = HEAD_WMMA + "\n" + fill("""extern "C" __global__ void __launch_bounds__(128) default_function_kernel(half* __restrict__ A, half* __restrict__ B, float* __restrict__ compute) {
  $WM::fragment<$WM::accumulator, 16, 16, 16, float> compute_wmma_accumulator[1];
  __shared__ half A_shared[1280];
  __shared__ half B_shared[1280];
  $WM::fragment<$WM::matrix_a, 16, 16, 16, half, $WM::row_major> A_shared_wmma_matrix_a[1];
  $WM::fragment<$WM::matrix_b, 16, 16, 16, half, $WM::row_major> B_shared_wmma_matrix_b[1];
  $WM::fill_fragment(compute_wmma_accumulator[0], 0.000000e+00f);
  for (int k_outer = 0; k_outer < $KO; ++k_outer) {
    __syncthreads();
    for (int ax0_ax1_fused_outer = 0; ax0_ax1_fused_outer < 8; ++ax0_ax1_fused_outer) {
      A_shared[((((ax0_ax1_fused_outer * 160) + ($TZ * 80)) + ($TY * 40)) + $TX)] = A[(((((($BY * $AROW) + (ax0_ax1_fused_outer * $A4)) + ($TZ * $A2)) + ($TY * $K)) + (k_outer * 32)) + $TX)];
    }
    for (int ax0_ax1_fused_outer_1 = 0; ax0_ax1_fused_outer_1 < 8; ++ax0_ax1_fused_outer_1) {
      B_shared[((((ax0_ax1_fused_outer_1 * 160) + ($TZ * 80)) + ($TY * 40)) + $TX)] = B[((((((k_outer * $BROW) + (ax0_ax1_fused_outer_1 * $B4)) + ($TZ * $B2)) + ($TY * $N)) + ($BX * 32)) + $TX)];
    }
    __syncthreads();
    for (int k_inner = 0; k_inner < 2; ++k_inner) {
      $WM::load_matrix_sync(A_shared_wmma_matrix_a[0], (&(A_shared[(($TY * 640) + (k_inner * 16))])), 40);
      $WM::load_matrix_sync(B_shared_wmma_matrix_b[0], (&(B_shared[((k_inner * 640) + ($TZ * 16))])), 40);
      $WM::mma_sync(compute_wmma_accumulator[0], A_shared_wmma_matrix_a[0], B_shared_wmma_matrix_b[0], compute_wmma_accumulator[0]);
    }
  }
  $WM::store_matrix_sync((&(compute[(((($BY * $CROW) + ($TY * $C16)) + ($BX * 32)) + ($TZ * 16))])), compute_wmma_accumulator[0], $N, $WM::mem_row_major);
}
""", WM=WM, KO=K // 32, AROW=32 * K, A4=4 * K, A2=2 * K, K=K, BROW=32 * N, B4=4 * N, B2=2 * N,
        N=N, CROW=32 * N, C16=16 * N, BX=BX, BY=BY, TX=TX, TY=TY, TZ=TZ)
    bufs = [Buf("A", "half", "M * K"), Buf("B", "half", "K * N"), Buf("C", "float", "M * N", "output")]
    launch = ("  dim3 grid(N / 32, M / 32);\n  dim3 block(32, 2, 2);\n"
              "  default_function_kernel<<<grid, block>>>(d_A, d_B, d_C);")
    src += "\n" + host_wrapper("cuda", "gemm_kernel", bufs, [("M", "int"), ("K", "int"), ("N", "int")],
                               launch)
    params = [ptr("A", F16, "input", [M, K], "A"), ptr("B", F16, "input", [K, N], "B"),
              ptr("C", F32, "output", [M, N], "C"), scalar("M", M), scalar("K", K), scalar("N", N)]
    return Entry("gemm", nm("gemm", [M, K, N]), [M, K, N], src, "gemm_kernel", params)


def gemm_sample(M: int, K: int, N: int) -> Entry:
    """Hand-written wmma GEMM (CUDA samples style): one warp per 16x16 tile straight from
    global memory, 128x4 threads per block, ``using namespace nvcuda``, sizes at run time."""
    src = HEAD_WMMA + """
using namespace nvcuda;

#define WMMA_M 16
#define WMMA_N 16
#define WMMA_K 16

// C[M, N] = A[M, K] * B[K, N]; A and B row-major half, C row-major float.
// Each warp computes one WMMA_M x WMMA_N tile; M, N, K are multiples of 16.
__global__ void wmma_gemm_kernel(const half* __restrict__ a, const half* __restrict__ b, float* __restrict__ c,
                                 int M, int N, int K) {
  int warpM = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
  int warpN = blockIdx.y * blockDim.y + threadIdx.y;

  wmma::fragment<wmma::matrix_a, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> b_frag;
  wmma::fragment<wmma::accumulator, WMMA_M, WMMA_N, WMMA_K, float> acc_frag;
  wmma::fill_fragment(acc_frag, 0.0f);

  int aRow = warpM * WMMA_M;
  int bCol = warpN * WMMA_N;
  if (aRow < M && bCol < N) {  // warp-uniform
    for (int k = 0; k < K; k += WMMA_K) {
      wmma::load_matrix_sync(a_frag, a + aRow * K + k, K);
      wmma::load_matrix_sync(b_frag, b + k * N + bCol, N);
      wmma::mma_sync(acc_frag, a_frag, b_frag, acc_frag);
    }
    wmma::store_matrix_sync(c + aRow * N + bCol, acc_frag, N, wmma::mem_row_major);
  }
}
"""
    bufs = [Buf("A", "half", "M * K"), Buf("B", "half", "K * N"), Buf("C", "float", "M * N", "output")]
    launch = ("  dim3 blockDim(128, 4);\n"
              "  dim3 gridDim((M + (WMMA_M * blockDim.x / 32 - 1)) / (WMMA_M * blockDim.x / 32),\n"
              "               (N + WMMA_N * blockDim.y - 1) / (WMMA_N * blockDim.y));\n"
              "  wmma_gemm_kernel<<<gridDim, blockDim>>>(d_A, d_B, d_C, M, N, K);")
    src += "\n" + host_wrapper("cuda", "gemm_kernel", bufs, [("M", "int"), ("K", "int"), ("N", "int")],
                               launch, cast=True, sync=True)
    params = [ptr("A", F16, "input", [M, K], "A"), ptr("B", F16, "input", [K, N], "B"),
              ptr("C", F32, "output", [M, N], "C"), scalar("M", M), scalar("K", K), scalar("N", N)]
    return Entry("gemm", nm("gemm", [M, K, N]), [M, K, N], src, "gemm_kernel", params)


def bmm(Bt: int, I: int, J: int, K: int) -> Entry:
    """A[B,I,J] @ B[B,J,K]: one warp per 16x16 output tile, grid (K/16, I/16, B)."""
    assert I % 16 == 0 and J % 16 == 0 and K % 16 == 0
    src = HEAD_WMMA + "\n" + fill("""extern "C" __global__ void __launch_bounds__(32) default_function_kernel(half* __restrict__ A, half* __restrict__ B, float* __restrict__ T_batch_matmul_NN) {
  $WM::fragment<$WM::accumulator, 16, 16, 16, float> T_batch_matmul_NN_wmma_accumulator[1];
  $WM::fragment<$WM::matrix_a, 16, 16, 16, half, $WM::row_major> A_wmma_matrix_a[1];
  $WM::fragment<$WM::matrix_b, 16, 16, 16, half, $WM::row_major> B_wmma_matrix_b[1];
  $WM::fill_fragment(T_batch_matmul_NN_wmma_accumulator[0], 0.000000e+00f);
  for (int k_outer = 0; k_outer < $JO; ++k_outer) {
    $WM::load_matrix_sync(A_wmma_matrix_a[0], (&(A[((($BZ * $IJ) + ($BY * $J16)) + (k_outer * 16))])), $J);
    $WM::load_matrix_sync(B_wmma_matrix_b[0], (&(B[((($BZ * $JK) + (k_outer * $K16)) + ($BX * 16))])), $K);
    $WM::mma_sync(T_batch_matmul_NN_wmma_accumulator[0], A_wmma_matrix_a[0], B_wmma_matrix_b[0], T_batch_matmul_NN_wmma_accumulator[0]);
  }
  $WM::store_matrix_sync((&(T_batch_matmul_NN[((($BZ * $IK) + ($BY * $K16)) + ($BX * 16))])), T_batch_matmul_NN_wmma_accumulator[0], $K, $WM::mem_row_major);
}
""", WM=WM, JO=J // 16, IJ=I * J, J16=16 * J, J=J, JK=J * K, K16=16 * K, K=K, IK=I * K,
        BX=BX, BY=BY, BZ=BZ)
    bufs = [Buf("A", "half", "batch * I * J"), Buf("B", "half", "batch * J * K"),
            Buf("C", "float", "batch * I * K", "output")]
    launch = ("  dim3 grid(K / 16, I / 16, batch);\n"
              "  default_function_kernel<<<grid, 32>>>(d_A, d_B, d_C);")
    src += "\n" + host_wrapper("cuda", "bmm_kernel", bufs,
                               [("batch", "int"), ("I", "int"), ("J", "int"), ("K", "int")], launch)
    params = [ptr("A", F16, "input", [Bt, I, J], "A"), ptr("B", F16, "input", [Bt, J, K], "B"),
              ptr("C", F32, "output", [Bt, I, K], "C"), scalar("batch", Bt), scalar("I", I),
              scalar("J", J), scalar("K", K)]
    return Entry("bmm", nm("bmm", [Bt, I, J, K]), [Bt, I, J, K], src, "bmm_kernel", params)


def dense(M: int, K: int, N: int) -> Entry:
    """out = X[M,K] @ W[N,K]^T + bias[N]. Block (32, 4): 4 warps side by side (16x64 tile). W
    is read as a col-major matrix_b; the bias enters as the accumulator's initial value,
    loaded from a 16x16 broadcast tile in shared memory."""
    assert M % 16 == 0 and N % 64 == 0 and K % 16 == 0
    src = HEAD_WMMA + "\n" + fill("""extern "C" __global__ void __launch_bounds__(128) default_function_kernel(half* __restrict__ X, half* __restrict__ W, float* __restrict__ bias, float* __restrict__ T_add) {
  __shared__ float bias_shared[1024];
  $WM::fragment<$WM::accumulator, 16, 16, 16, float> T_matmul_NT_wmma_accumulator[1];
  $WM::fragment<$WM::matrix_a, 16, 16, 16, half, $WM::row_major> X_wmma_matrix_a[1];
  $WM::fragment<$WM::matrix_b, 16, 16, 16, half, $WM::col_major> W_wmma_matrix_b[1];
  for (int ax0_ax1_fused_outer = 0; ax0_ax1_fused_outer < 8; ++ax0_ax1_fused_outer) {
    bias_shared[((($TY * 256) + (ax0_ax1_fused_outer * 32)) + $TX)] = bias[((($BX * 64) + ($TY * 16)) + ($TX & 15))];
  }
  __syncthreads();
  $WM::load_matrix_sync(T_matmul_NT_wmma_accumulator[0], (&(bias_shared[($TY * 256)])), 16, $WM::mem_row_major);
  for (int k_outer = 0; k_outer < $KO; ++k_outer) {
    $WM::load_matrix_sync(X_wmma_matrix_a[0], (&(X[(($BY * $K16) + (k_outer * 16))])), $K);
    $WM::load_matrix_sync(W_wmma_matrix_b[0], (&(W[(((($BX * 64) + ($TY * 16)) * $K) + (k_outer * 16))])), $K);
    $WM::mma_sync(T_matmul_NT_wmma_accumulator[0], X_wmma_matrix_a[0], W_wmma_matrix_b[0], T_matmul_NT_wmma_accumulator[0]);
  }
  $WM::store_matrix_sync((&(T_add[((($BY * $N16) + ($BX * 64)) + ($TY * 16))])), T_matmul_NT_wmma_accumulator[0], $N, $WM::mem_row_major);
}
""", WM=WM, KO=K // 16, K16=16 * K, K=K, N16=16 * N, N=N, BX=BX, BY=BY, TX=TX, TY=TY)
    bufs = [Buf("X", "half", "M * K"), Buf("W", "half", "N * K"), Buf("bias", "float", "N"),
            Buf("out", "float", "M * N", "output")]
    launch = ("  dim3 grid(N / 64, M / 16);\n  dim3 block(32, 4);\n"
              "  default_function_kernel<<<grid, block>>>(d_X, d_W, d_bias, d_out);")
    src += "\n" + host_wrapper("cuda", "dense_kernel", bufs, [("M", "int"), ("K", "int"), ("N", "int")],
                               launch)
    params = [ptr("X", F16, "input", [M, K], "X"), ptr("W", F16, "input", [N, K], "W"),
              ptr("bias", F32, "input", [N], "bias"), ptr("out", F32, "output", [M, N], "out"),
              scalar("M", M), scalar("K", K), scalar("N", N)]
    return Entry("dense", nm("dense", [M, K, N]), [M, K, N], src, "dense_kernel", params)


def gemv(M: int, N: int, staged: bool) -> Entry:
    """y = A[M,N] @ x[N]: one warp per row, lanes stride the row, __shfl_xor_sync butterfly.
    ``staged``: x is first copied into dynamic shared memory by the whole block."""
    if not staged:
        kern = """// y[M] = A[M, N] * x[N]; one warp per row.
__global__ void __launch_bounds__(128) gemv_warp_kernel(const float* __restrict__ A, const float* __restrict__ x,
                                                        float* __restrict__ y, int M, int N) {
  const int row = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= M) return;  // whole warps leave together
  float sum = 0.0f;
  for (int j = lane; j < N; j += 32) {
    sum += A[row * N + j] * x[j];
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    sum += __shfl_xor_sync(0xffffffff, sum, offset);
  }
  if (lane == 0) y[row] = sum;
}
"""
        launch = "  gemv_warp_kernel<<<(M + 3) / 4, 128>>>(d_A, d_x, d_y, M, N);"
    else:
        kern = """// y[M] = A[M, N] * x[N]; x staged in dynamic shared memory, one warp per row.
__global__ void __launch_bounds__(256) gemv_smem_kernel(const float* __restrict__ A, const float* __restrict__ x,
                                                        float* __restrict__ y, int M, int N) {
  extern __shared__ float x_shared[];
  for (int j = threadIdx.x; j < N; j += blockDim.x) {
    x_shared[j] = x[j];
  }
  __syncthreads();
  const int warps = blockDim.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  for (int row = blockIdx.x * warps + threadIdx.x / warpSize; row < M; row += gridDim.x * warps) {
    const float* a_row = A + (size_t)row * N;
    float sum = 0.0f;
    for (int j = lane; j < N; j += warpSize) {
      sum = fmaf(a_row[j], x_shared[j], sum);
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
      sum += __shfl_down_sync(0xffffffff, sum, offset);
    }
    if (lane == 0) y[row] = sum;
  }
}
"""
        launch = ("  const int threads = 256;\n  const int blocks = 8;\n"
                  "  gemv_smem_kernel<<<blocks, threads, N * sizeof(float)>>>(d_A, d_x, d_y, M, N);")
    bufs = [Buf("A", "float", "M * N"), Buf("x", "float", "N"), Buf("y", "float", "M", "output")]
    src = HEAD + "\n" + kern + "\n" + host_wrapper("cuda", "gemv_kernel", bufs,
                                                   [("M", "int"), ("N", "int")], launch, sync=staged)
    params = [ptr("A", F32, "input", [M, N], "A"), ptr("x", F32, "input", [N], "x"),
              ptr("y", F32, "output", [M], "y"), scalar("M", M), scalar("N", N)]
    return Entry("gemv", nm("gemv", [M, N]), [M, N], src, "gemv_kernel", params)


def matrix_entries() -> list[Entry]:
    return [gemm_tvm(32, 128, 128), gemm_sample(64, 256, 64), gemm_tvm(64, 64, 96),
            bmm(2, 32, 64, 32), bmm(4, 16, 32, 48),
            dense(16, 128, 64), dense(32, 64, 128),
            gemv(128, 256, False), gemv(96, 200, True)]


# ============================================================================ convolution
def conv1d(OUT: int, IN: int) -> Entry:
    """Valid 1-D correlation, TVM schedule with the input window and the kernel cached in
    shared memory (128 outputs per block)."""
    KS = IN - OUT + 1
    T = 128
    win = T + KS - 1
    grid = cdiv(OUT, T)
    src = HEAD + "\n" + fill("""extern "C" __global__ void __launch_bounds__($T) default_function_kernel(float* __restrict__ conv1d, float* __restrict__ data, float* __restrict__ kernel) {
  float conv1d_local[1];
  __shared__ float data_shared[$WIN];
  __shared__ float kernel_shared[$KS];
  for (int ax0_outer = 0; ax0_outer < $WO; ++ax0_outer) {
    if (((ax0_outer * $T) + $TX) < $WIN) {
      if (((($BX * $T) + (ax0_outer * $T)) + $TX) < $IN) {
        data_shared[((ax0_outer * $T) + $TX)] = data[((($BX * $T) + (ax0_outer * $T)) + $TX)];
      }
    }
  }
  if ($TX < $KS) {
    kernel_shared[$TX] = kernel[$TX];
  }
  __syncthreads();
  conv1d_local[0] = 0.000000e+00f;
  for (int rk = 0; rk < $KS; ++rk) {
    conv1d_local[0] = (conv1d_local[0] + (data_shared[($TX + rk)] * kernel_shared[rk]));
  }
  if ((($BX * $T) + $TX) < $OUT) {
    conv1d[(($BX * $T) + $TX)] = conv1d_local[0];
  }
}
""", T=T, WIN=win, KS=KS, WO=cdiv(win, T), IN=IN, OUT=OUT, BX=BX, TX=TX)
    bufs = [Buf("x", "float", "in_len"), Buf("w", "float", "in_len - out_len + 1"),
            Buf("out", "float", "out_len", "output")]
    launch = f"  default_function_kernel<<<{grid}, {T}>>>(d_out, d_x, d_w);"
    src += "\n" + host_wrapper("cuda", "conv1d_kernel", bufs, [("out_len", "int"), ("in_len", "int")],
                               launch)
    params = [ptr("x", F32, "input", [IN], "x"), ptr("w", F32, "input", [KS], "w"),
              ptr("out", F32, "output", [OUT], "out"), scalar("out_len", OUT), scalar("in_len", IN)]
    return Entry("conv1d", nm("conv1d", [OUT, IN]), [OUT, IN], src, "conv1d_kernel", params)


def conv2d_nhwc(N, H, W, C, OC, KH, KW, IC, stride, pad) -> Entry:
    """NHWC x OHWI, zero padding, groups = C // IC: TVM direct schedule, one thread per output
    element (fused n, oh, ow, oc), padding folded into the load condition."""
    groups = C // IC
    OH = (H + 2 * pad - KH) // stride + 1
    OW = (W + 2 * pad - KW) // stride + 1
    total = N * OH * OW * OC
    T = 64
    o = f"(({BX} * {T}) + {TX})"
    oc = f"({o} % {OC})"
    ow = f"(({o} % {OW * OC}) / {OC})"
    oh = f"(({o} % {OH * OW * OC}) / {OW * OC})"
    n = f"({o} / {OH * OW * OC})"
    ih = f"(({oh} * {stride}) + ry)" if stride != 1 else f"({oh} + ry)"
    iw = f"(({ow} * {stride}) + rx)" if stride != 1 else f"({ow} + rx)"
    chan = "rc" if groups == 1 else f"((({oc} / {OC // groups}) * {IC}) + rc)"
    addr = f"(((((({n} * {H * W * C}) + ({ih} * {W * C})) + ({iw} * {C})) + {chan}) - {pad * W * C + pad * C}))"
    load = f"data[{addr}]"
    if pad:
        cond = f"(((({pad} <= {ih}) && ({ih} < {H + pad})) && ({pad} <= {iw})) && ({iw} < {W + pad}))"
        load = f"({cond} ? {load} : 0.000000e+00f)"
    wgt = f"kernel[(((({oc} * {KH * KW * IC}) + (ry * {KW * IC})) + (rx * {IC})) + rc)]"
    body = fill("""  float conv2d_nhwc_local[1];
  conv2d_nhwc_local[0] = 0.000000e+00f;
  for (int ry = 0; ry < $KH; ++ry) {
    for (int rx = 0; rx < $KW; ++rx) {
      for (int rc = 0; rc < $IC; ++rc) {
        conv2d_nhwc_local[0] = (conv2d_nhwc_local[0] + ($load * $wgt));
      }
    }
  }
  conv2d_nhwc[$o] = conv2d_nhwc_local[0];
""", KH=KH, KW=KW, IC=IC, load=load, wgt=wgt, o=o)
    if total % T:
        body = f"  if ({o} < {total}) {{\n" + "".join("  " + l + "\n" for l in body.splitlines()) + "  }\n"
    src = HEAD + "\n" + (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                         f'float* __restrict__ conv2d_nhwc, float* __restrict__ data, '
                         f'float* __restrict__ kernel) {{\n{body}}}\n')
    bufs = [Buf("input", "float", str(N * H * W * C)), Buf("weight", "float", str(OC * KH * KW * IC)),
            Buf("output", "float", str(total), "output")]
    launch = f"  default_function_kernel<<<{cdiv(total, T)}, {T}>>>(d_output, d_input, d_weight);"
    src += "\n" + host_wrapper("cuda", "conv2d_kernel", bufs, [], launch)
    args = [N, H, W, C, OC, KH, KW, IC, stride, pad]
    params = [ptr("input", F32, "input", [N, H, W, C], "input"),
              ptr("weight", F32, "input", [OC, KH, KW, IC], "weight"),
              ptr("output", F32, "output", [N, OH, OW, OC], "output")]
    return Entry("conv2d", nm("conv2d", args), args, src, "conv2d_kernel", params)


def conv2d_nchw(N, C, H, W, OC, IC, KH, KW, stride, pad) -> Entry:
    """NCHW x OIHW: one block per (oc, n), one thread per output pixel; the filter of ``oc``
    is staged in dynamic shared memory. Sizes are run-time arguments."""
    assert C == IC
    OH = (H + 2 * pad - KH) // stride + 1
    OW = (W + 2 * pad - KW) // stride + 1
    assert OH * OW <= 1024
    kern = """// output[n][oc][oh][ow] = sum_{ic,kh,kw} input[n][ic][oh*stride-pad+kh][ow*stride-pad+kw] * weight[oc][ic][kh][kw]
__global__ void conv2d_nchw_kernel(const float* __restrict__ input, const float* __restrict__ weight,
                                   float* __restrict__ output, int C, int H, int W, int OC, int KH, int KW,
                                   int stride, int pad, int OH, int OW) {
  extern __shared__ float w_s[];
  const int oc = blockIdx.x;
  const int n = blockIdx.y;
  const int filter_size = C * KH * KW;
  for (int i = threadIdx.x; i < filter_size; i += blockDim.x) {
    w_s[i] = weight[oc * filter_size + i];
  }
  __syncthreads();
  const int oh = threadIdx.x / OW;
  const int ow = threadIdx.x % OW;
  if (oh >= OH) return;
  float acc = 0.0f;
  for (int ic = 0; ic < C; ++ic) {
    const float* in_c = input + ((size_t)n * C + ic) * H * W;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = oh * stride - pad + kh;
      if (ih < 0 || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int iw = ow * stride - pad + kw;
        if (iw < 0 || iw >= W) continue;
        acc += in_c[ih * W + iw] * w_s[(ic * KH + kh) * KW + kw];
      }
    }
  }
  output[(((size_t)n * OC + oc) * OH + oh) * OW + ow] = acc;
}
"""
    bufs = [Buf("input", "float", "N * C * H * W"), Buf("weight", "float", "OC * C * KH * KW"),
            Buf("output", "float", "N * OC * OH * OW", "output")]
    launch = ("  dim3 grid(OC, N);\n  dim3 block(OH * OW);\n"
              "  size_t smem = C * KH * KW * sizeof(float);\n"
              "  conv2d_nchw_kernel<<<grid, block, smem>>>(d_input, d_weight, d_output, C, H, W, OC, KH, KW,\n"
              "                                            stride, pad, OH, OW);")
    wrapper = host_wrapper("cuda", "conv2dnchw_kernel", bufs,
                           [("N", "int"), ("C", "int"), ("H", "int"), ("W", "int"), ("OC", "int"),
                            ("KH", "int"), ("KW", "int"), ("stride", "int"), ("pad", "int")], launch)
    head, rest = wrapper.split("{\n", 1)   # the output size needs OH, OW before the allocations
    wrapper = (head + "{\n  const int OH = (H + 2 * pad - KH) / stride + 1;\n"
               "  const int OW = (W + 2 * pad - KW) / stride + 1;\n" + rest)
    src = HEAD + "\n" + kern + "\n" + wrapper
    args = [N, C, H, W, OC, IC, KH, KW, stride, pad]
    params = [ptr("input", F32, "input", [N, C, H, W], "input"),
              ptr("weight", F32, "input", [OC, IC, KH, KW], "weight"),
              ptr("output", F32, "output", [N, OC, OH, OW], "output"),
              scalar("N", N), scalar("C", C), scalar("H", H), scalar("W", W), scalar("OC", OC),
              scalar("KH", KH), scalar("KW", KW), scalar("stride", stride), scalar("pad", pad)]
    return Entry("conv2dnchw", nm("conv2dnchw", args), args, src, "conv2dnchw_kernel", params)


def depthwise(H: int, K: int, C: int) -> Entry:
    """HWC depthwise, valid: TVM DepthwiseConv2d, one thread per output element."""
    O = H - K + 1
    total = O * O * C
    T = 64
    o = f"(({BX} * {T}) + {TX})"
    c = f"({o} % {C})"
    ow = f"(({o} % {O * C}) / {C})"
    oh = f"({o} / {O * C})"
    body = fill("""  float DepthwiseConv2d_local[1];
  DepthwiseConv2d_local[0] = 0.000000e+00f;
  for (int di = 0; di < $K; ++di) {
    for (int dj = 0; dj < $K; ++dj) {
      DepthwiseConv2d_local[0] = (DepthwiseConv2d_local[0] + (data[(((($oh + di) * $HC) + (($ow + dj) * $C)) + $c)] * kernel[(((di * $KC) + (dj * $C)) + $c)]));
    }
  }
  DepthwiseConv2d[$o] = DepthwiseConv2d_local[0];
""", K=K, HC=H * C, C=C, KC=K * C, o=o, oh=oh, ow=ow, c=c)
    assert total % T == 0
    src = HEAD + "\n" + (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                         f'float* __restrict__ data, float* __restrict__ kernel, '
                         f'float* __restrict__ DepthwiseConv2d) {{\n{body}}}\n')
    bufs = [Buf("x", "float", "H * H * C"), Buf("w", "float", "K * K * C"),
            Buf("out", "float", "(H - K + 1) * (H - K + 1) * C", "output")]
    launch = (f"  int out_size = (H - K + 1) * (H - K + 1) * C;\n"
              f"  default_function_kernel<<<(out_size + {T - 1}) / {T}, {T}>>>(d_x, d_w, d_out);")
    src += "\n" + host_wrapper("cuda", "depthwiseconv_kernel", bufs, [("H", "int"), ("K", "int"), ("C", "int")],
                               launch)
    params = [ptr("x", F32, "input", [H, H, C], "x"), ptr("w", F32, "input", [K, K, C], "w"),
              ptr("out", F32, "output", [O, O, C], "out"), scalar("H", H), scalar("K", K), scalar("C", C)]
    return Entry("depthwiseconv", nm("depthwiseconv", [H, K, C]), [H, K, C], src,
                 "depthwiseconv_kernel", params)


def conv_entries() -> list[Entry]:
    return [conv1d(256, 260), conv1d(300, 307),
            conv2d_nhwc(1, 14, 14, 16, 32, 3, 3, 16, 1, 1), conv2d_nhwc(2, 9, 9, 8, 16, 3, 3, 4, 2, 0),
            conv2d_nchw(1, 8, 16, 16, 16, 8, 3, 3, 1, 1), conv2d_nchw(2, 4, 12, 12, 8, 4, 3, 3, 2, 1),
            depthwise(16, 3, 32), depthwise(10, 5, 16)]


# ============================================================================ normalisation
WARP_REDUCE = """__device__ __forceinline__ float warp_reduce_sum(float val) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    val += __shfl_xor_sync(0xffffffff, val, offset);
  }
  return val;
}

// Sum over the block; every thread gets the result. `shared` holds one float per warp.
__device__ float block_reduce_sum(float val, float* shared) {
  const int lane = threadIdx.x & 31;
  const int wid = threadIdx.x >> 5;
  val = warp_reduce_sum(val);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (lane < (blockDim.x >> 5)) ? shared[lane] : 0.0f;
  val = warp_reduce_sum(val);
  __syncthreads();  // `shared` may be reused right away
  return val;
}
"""


def batchnorm_infer(N, C, H, W) -> Entry:
    """Inference batch norm, NCHW, running statistics as inputs: TVM fused element-wise kernel."""
    total = N * C * H * W
    T = 256
    o = f"(({BX} * {T}) + {TX})"
    c = f"(({o} % {C * H * W}) / {H * W})"
    src = HEAD + "\n" + fill("""extern "C" __global__ void __launch_bounds__($T) default_function_kernel(float* __restrict__ T_add, float* __restrict__ data, float* __restrict__ moving_mean, float* __restrict__ moving_var, float* __restrict__ gamma, float* __restrict__ beta) {
  T_add[$o] = ((((data[$o] - moving_mean[$c]) / sqrtf((moving_var[$c] + 1.000000e-05f))) * gamma[$c]) + beta[$c]);
}
""", T=T, o=o, c=c)
    assert total % T == 0
    bufs = [Buf("x", "float", "N * C * H * W"), Buf("mean", "float", "C"), Buf("var", "float", "C"),
            Buf("gamma", "float", "C"), Buf("beta", "float", "C"),
            Buf("out", "float", "N * C * H * W", "output")]
    launch = (f"  default_function_kernel<<<(N * C * H * W) / {T}, {T}>>>(d_out, d_x, d_mean, d_var, "
              f"d_gamma, d_beta);")
    src += "\n" + host_wrapper("cuda", "batchnorm_kernel", bufs,
                               [("N", "int"), ("C", "int"), ("H", "int"), ("W", "int")], launch)
    args = [N, C, H, W]
    params = [ptr("x", F32, "input", args, "x"), ptr("mean", F32, "input", [C], "mean"),
              ptr("var", F32, "input", [C], "var"), ptr("gamma", F32, "input", [C], "gamma"),
              ptr("beta", F32, "input", [C], "beta"), ptr("out", F32, "output", args, "out"),
              scalar("N", N), scalar("C", C), scalar("H", H), scalar("W", W)]
    return Entry("batchnorm", nm("batchnorm", args), args, src, "batchnorm_kernel", params,
                 {"eps": 1e-5, "layout": "NCHW"})


def batchnorm_train(N, C, H, W) -> Entry:
    """Training-mode batch norm (batch statistics, biased variance): one block per channel,
    two shared-memory tree reductions (mean, then centred variance)."""
    src = HEAD + "\n" + """#define BN_THREADS 128

// One block per channel c: statistics over N, H, W, then normalise.
__global__ void __launch_bounds__(BN_THREADS) batchnorm_train_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                                                     const float* __restrict__ beta, float* __restrict__ y,
                                                                     int N, int C, int HW, float eps) {
  __shared__ float s_buf[BN_THREADS];
  const int c = blockIdx.x;
  const int tid = threadIdx.x;
  const int count = N * HW;

  float local = 0.0f;
  for (int i = tid; i < count; i += BN_THREADS) {
    local += x[((i / HW) * C + c) * HW + i % HW];
  }
  s_buf[tid] = local;
  __syncthreads();
  for (int s = BN_THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) s_buf[tid] += s_buf[tid + s];
    __syncthreads();
  }
  const float mean = s_buf[0] / count;
  __syncthreads();

  local = 0.0f;
  for (int i = tid; i < count; i += BN_THREADS) {
    const float d = x[((i / HW) * C + c) * HW + i % HW] - mean;
    local += d * d;
  }
  s_buf[tid] = local;
  __syncthreads();
  for (int s = BN_THREADS / 2; s > 0; s >>= 1) {
    if (tid < s) s_buf[tid] += s_buf[tid + s];
    __syncthreads();
  }
  const float inv_std = rsqrtf(s_buf[0] / count + eps);
  const float g = gamma[c] * inv_std;
  const float b = beta[c] - mean * g;
  for (int i = tid; i < count; i += BN_THREADS) {
    const int idx = ((i / HW) * C + c) * HW + i % HW;
    y[idx] = x[idx] * g + b;
  }
}
"""
    bufs = [Buf("x", "float", "N * C * H * W"), Buf("gamma", "float", "C"), Buf("beta", "float", "C"),
            Buf("out", "float", "N * C * H * W", "output")]
    launch = "  batchnorm_train_kernel<<<C, BN_THREADS>>>(d_x, d_gamma, d_beta, d_out, N, C, H * W, 1e-5f);"
    src += "\n" + host_wrapper("cuda", "batchnorm_kernel", bufs,
                               [("N", "int"), ("C", "int"), ("H", "int"), ("W", "int")], launch)
    args = [N, C, H, W]
    params = [ptr("x", F32, "input", args, "x"), ptr("gamma", F32, "input", [C], "gamma"),
              ptr("beta", F32, "input", [C], "beta"), ptr("out", F32, "output", args, "out"),
              scalar("N", N), scalar("C", C), scalar("H", H), scalar("W", W)]
    return Entry("batchnorm", nm("batchnorm", args), args, src, "batchnorm_kernel", params,
                 {"eps": 1e-5, "layout": "NCHW"})


def layernorm(shape: list[int]) -> Entry:
    """Last-axis layer norm, one block (128 threads) per row; the row is cached in dynamic
    shared memory, mean and centred variance by warp shuffles + per-warp partials."""
    rows, cols = prod(shape[:-1]), shape[-1]
    src = HEAD + "\n" + WARP_REDUCE + """
// y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of length `cols`.
// Dynamic shared memory: cols floats (row cache) + 32 floats (warp partials).
__global__ void layernorm_kernel_dev(const float* __restrict__ x, const float* __restrict__ gamma,
                                     const float* __restrict__ beta, float* __restrict__ y, int cols, float eps) {
  extern __shared__ float smem[];
  float* row_cache = smem;
  float* partial = smem + cols;
  const float* xr = x + (size_t)blockIdx.x * cols;
  float* yr = y + (size_t)blockIdx.x * cols;

  float sum = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = xr[j];
    row_cache[j] = v;
    sum += v;
  }
  const float mean = block_reduce_sum(sum, partial) / cols;

  float sq = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = row_cache[j] - mean;
    sq += d * d;
  }
  const float var = block_reduce_sum(sq, partial) / cols;
  const float inv_std = rsqrtf(var + eps);

  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    yr[j] = (row_cache[j] - mean) * inv_std * gamma[j] + beta[j];
  }
}
"""
    bufs = [Buf("x", "float", "rows * cols"), Buf("gamma", "float", "cols"), Buf("beta", "float", "cols"),
            Buf("out", "float", "rows * cols", "output")]
    launch = ("  size_t smem = (cols + 32) * sizeof(float);\n"
              "  layernorm_kernel_dev<<<rows, 128, smem>>>(d_x, d_gamma, d_beta, d_out, cols, 1e-5f);")
    src += "\n" + host_wrapper("cuda", "layernorm_kernel", bufs, [("rows", "int"), ("cols", "int")], launch)
    params = [ptr("x", F32, "input", shape, "x"), ptr("gamma", F32, "input", [cols], "gamma"),
              ptr("beta", F32, "input", [cols], "beta"), ptr("out", F32, "output", shape, "out"),
              scalar("rows", rows), scalar("cols", cols)]
    return Entry("layernorm", nm("layernorm", shape), shape, src, "layernorm_kernel", params,
                 {"axis": -1, "eps": 1e-5})


def rmsnorm(R: int, Cn: int) -> Entry:
    """RMSNorm: one block per row, sum of squares with warp shuffles and a static staging
    array; sizes are baked in (kernel generated for one shape)."""
    T = 128
    src = HEAD + "\n" + fill("""// out[r][j] = x[r][j] * rsqrt(mean_j(x[r][j]^2) + eps) * weight[j]   (R = $R, C = $C)
__global__ void __launch_bounds__($T) rmsnorm_kernel_dev(const float* __restrict__ x, const float* __restrict__ weight,
                                                         float* __restrict__ out) {
  __shared__ float warp_sums[$W];
  __shared__ float inv_rms;
  const float* xr = x + blockIdx.x * $C;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < $C; j += $T) {
    const float v = xr[j];
    ss += v * v;
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    ss += __shfl_down_sync(0xffffffff, ss, offset);
  }
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < $W; ++w) total += warp_sums[w];
    inv_rms = rsqrtf(total / $Cf + 1e-5f);
  }
  __syncthreads();
  for (int j = threadIdx.x; j < $C; j += $T) {
    out[blockIdx.x * $C + j] = xr[j] * inv_rms * weight[j];
  }
}
""", T=T, W=T // 32, R=R, C=Cn, Cf=f"{float(Cn)}f")
    bufs = [Buf("x", "float", f"{R * Cn}"), Buf("weight", "float", f"{Cn}"),
            Buf("out", "float", f"{R * Cn}", "output")]
    launch = f"  rmsnorm_kernel_dev<<<{R}, {T}>>>(d_x, d_weight, d_out);"
    src += "\n" + host_wrapper("cuda", "rmsnorm_kernel", bufs, [], launch)
    params = [ptr("x", F32, "input", [R, Cn], "x"), ptr("weight", F32, "input", [Cn], "weight"),
              ptr("out", F32, "output", [R, Cn], "out")]
    return Entry("rmsnorm", nm("rmsnorm", [R, Cn]), [R, Cn], src, "rmsnorm_kernel", params, {"eps": 1e-5})


def instancenorm(N, C, H, W) -> Entry:
    """Instance norm NCHW: one block per (n, c) plane, two-pass block reductions."""
    src = HEAD + "\n" + WARP_REDUCE + """
// One block per (n, c) plane of HW elements.
__global__ void __launch_bounds__(128) instancenorm_kernel_dev(const float* __restrict__ x, const float* __restrict__ gamma,
                                                               const float* __restrict__ beta, float* __restrict__ y,
                                                               int C, int HW, float eps) {
  __shared__ float partial[32];
  const int c = blockIdx.x % C;
  const float* xp = x + (size_t)blockIdx.x * HW;
  float* yp = y + (size_t)blockIdx.x * HW;
  float s = 0.0f;
  for (int i = threadIdx.x; i < HW; i += blockDim.x) s += xp[i];
  const float mean = block_reduce_sum(s, partial) / HW;
  float sq = 0.0f;
  for (int i = threadIdx.x; i < HW; i += blockDim.x) {
    const float d = xp[i] - mean;
    sq += d * d;
  }
  const float var = block_reduce_sum(sq, partial) / HW;
  const float scale = gamma[c] * rsqrtf(var + eps);
  const float shift = beta[c] - mean * scale;
  for (int i = threadIdx.x; i < HW; i += blockDim.x) yp[i] = xp[i] * scale + shift;
}
"""
    bufs = [Buf("x", "float", "N * C * H * W"), Buf("gamma", "float", "C"), Buf("beta", "float", "C"),
            Buf("out", "float", "N * C * H * W", "output")]
    launch = "  instancenorm_kernel_dev<<<N * C, 128>>>(d_x, d_gamma, d_beta, d_out, C, H * W, 1e-5f);"
    src += "\n" + host_wrapper("cuda", "instancenorm_kernel", bufs,
                               [("N", "int"), ("C", "int"), ("H", "int"), ("W", "int")], launch)
    args = [N, C, H, W]
    params = [ptr("x", F32, "input", args, "x"), ptr("gamma", F32, "input", [C], "gamma"),
              ptr("beta", F32, "input", [C], "beta"), ptr("out", F32, "output", args, "out"),
              scalar("N", N), scalar("C", C), scalar("H", H), scalar("W", W)]
    return Entry("instancenorm", nm("instancenorm", args), args, src, "instancenorm_kernel", params,
                 {"eps": 1e-5, "layout": "NCHW"})


def softmax_warp(shape: list[int]) -> Entry:
    """Row softmax, one warp per row (4 rows per block), row kept in registers
    (cols <= 32 * 8), max and sum by __shfl_xor_sync."""
    rows, cols = prod(shape[:-1]), shape[-1]
    per = cdiv(cols, 32)
    assert per <= 8
    src = HEAD + "\n" + fill("""#define COLS $cols
#define PER_LANE $per

// softmax over the last axis; one warp per row, PER_LANE values per lane in registers.
__global__ void __launch_bounds__(128) softmax_warp_kernel(const float* __restrict__ x, float* __restrict__ y, int rows) {
  const int row = blockIdx.x * 4 + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* xr = x + row * COLS;
  float v[PER_LANE];
  float m = -INFINITY;
#pragma unroll
  for (int i = 0; i < PER_LANE; ++i) {
    const int j = lane + i * 32;
    v[i] = (j < COLS) ? xr[j] : -INFINITY;
    m = fmaxf(m, v[i]);
  }
  for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, offset));
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < PER_LANE; ++i) {
    v[i] = (lane + i * 32 < COLS) ? __expf(v[i] - m) : 0.0f;
    s += v[i];
  }
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffff, s, offset);
  const float inv = 1.0f / s;
#pragma unroll
  for (int i = 0; i < PER_LANE; ++i) {
    const int j = lane + i * 32;
    if (j < COLS) y[row * COLS + j] = v[i] * inv;
  }
}
""", cols=cols, per=per)
    bufs = [Buf("x", "float", "rows * COLS"), Buf("out", "float", "rows * COLS", "output")]
    launch = "  softmax_warp_kernel<<<(rows + 3) / 4, 128>>>(d_x, d_out, rows);"
    src = src.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\n#include <math.h>\n", 1)
    src += "\n" + host_wrapper("cuda", "softmax_kernel", bufs, [("rows", "int")], launch)
    params = [ptr("x", F32, "input", shape, "x"), ptr("out", F32, "output", shape, "out"),
              scalar("rows", rows)]
    return Entry("softmax", nm("softmax", shape), shape, src, "softmax_kernel", params, {"axis": -1})


def softmax_tvm(shape: list[int]) -> Entry:
    """TVM's unfused softmax: four kernels (max, exp, sum, normalise) and device temporaries."""
    rows, cols = prod(shape[:-1]), shape[-1]
    total = rows * cols
    TR = min(rows, 128)
    TE = 1024
    ge = cdiv(total, TE)
    r = f"(({BX} * {TR}) + {TX})"
    e = f"(({BX} * {TE}) + {TX})"
    guard = total % TE != 0

    def ew(stmt):
        return f"  if ({e} < {total}) {{\n    {stmt}\n  }}" if guard else f"  {stmt}"
    src = HEAD + "\n" + fill("""extern "C" __global__ void __launch_bounds__($TR) default_function_kernel(float* __restrict__ A, float* __restrict__ T_softmax_maxelem) {
  T_softmax_maxelem[$r] = -3.402823e+38f;
  for (int k = 0; k < $cols; ++k) {
    T_softmax_maxelem[$r] = max(T_softmax_maxelem[$r], A[(($r * $cols) + k)]);
  }
}

extern "C" __global__ void __launch_bounds__($TE) default_function_kernel_1(float* __restrict__ A, float* __restrict__ T_softmax_exp, float* __restrict__ T_softmax_maxelem) {
$exp
}

extern "C" __global__ void __launch_bounds__($TR) default_function_kernel_2(float* __restrict__ T_softmax_exp, float* __restrict__ T_softmax_expsum) {
  T_softmax_expsum[$r] = 0.000000e+00f;
  for (int k = 0; k < $cols; ++k) {
    T_softmax_expsum[$r] = (T_softmax_expsum[$r] + T_softmax_exp[(($r * $cols) + k)]);
  }
}

extern "C" __global__ void __launch_bounds__($TE) default_function_kernel_3(float* __restrict__ T_softmax_exp, float* __restrict__ T_softmax_expsum, float* __restrict__ T_softmax_norm) {
$norm
}
""", TR=TR, TE=TE, r=r, cols=cols,
        exp=ew(f"T_softmax_exp[{e}] = __expf((A[{e}] - T_softmax_maxelem[({e} / {cols})]));"),
        norm=ew(f"T_softmax_norm[{e}] = (T_softmax_exp[{e}] / T_softmax_expsum[({e} / {cols})]);"))
    assert rows % TR == 0
    bufs = [Buf("x", "float", str(total)), Buf("out", "float", str(total), "output"),
            Buf("maxelem", "float", str(rows), "temp"), Buf("expv", "float", str(total), "temp"),
            Buf("expsum", "float", str(rows), "temp")]
    launch = (f"  default_function_kernel<<<{rows // TR}, {TR}>>>(d_x, d_maxelem);\n"
              f"  default_function_kernel_1<<<{ge}, {TE}>>>(d_x, d_expv, d_maxelem);\n"
              f"  default_function_kernel_2<<<{rows // TR}, {TR}>>>(d_expv, d_expsum);\n"
              f"  default_function_kernel_3<<<{ge}, {TE}>>>(d_expv, d_expsum, d_out);")
    src += "\n" + host_wrapper("cuda", "softmax_kernel", bufs, [], launch)
    params = [ptr("x", F32, "input", shape, "x"), ptr("out", F32, "output", shape, "out")]
    return Entry("softmax", nm("softmax", shape), shape, src, "softmax_kernel", params, {"axis": -1})


def norm_entries() -> list[Entry]:
    return [batchnorm_infer(2, 16, 8, 8), batchnorm_train(4, 8, 6, 6),
            layernorm([32, 128]), layernorm([4, 16, 96]),
            rmsnorm(32, 256), rmsnorm(16, 320),
            instancenorm(2, 8, 16, 16), instancenorm(1, 16, 10, 10),
            softmax_warp([64, 128]), softmax_tvm([8, 16, 100]), softmax_warp([4, 6, 200])]


# ============================================================================ pooling
POOL = {  # kind -> (TVM buffer, init, update(acc, v), finish(acc, kh*kw))
    "max": ("pool_max", "-3.402823e+38f", "max({a}, {v})", lambda a, n: a),
    "min": ("pool_min", "3.402823e+38f", "min({a}, {v})", lambda a, n: a),
    "avg": ("pool_avg", "0.000000e+00f", "({a} + {v})", lambda a, n: f"({a} / {flit(n)})"),
    "sum": ("pool_sum", "0.000000e+00f", "({a} + {v})", lambda a, n: a),
}


def pool_tvm(kind: str, args: list[int], kernel_only: bool) -> Entry:
    """TVM pool2d NHWC: one thread per output element, fused index, window loops rv0/rv1."""
    N, H, W, C, KH, KW, SH, SW = args
    OH, OW = (H - KH) // SH + 1, (W - KW) // SW + 1
    total = N * OH * OW * C
    T = 256 if total >= 256 else total
    name, init, upd, fin = POOL[kind]
    o = f"(({BX} * {T}) + {TX})"
    c = f"({o} % {C})"
    ow = f"(({o} % {OW * C}) / {C})"
    oh = f"(({o} % {OH * OW * C}) / {OW * C})"
    n = f"({o} / {OH * OW * C})"
    ih = f"(({oh} * {SH}) + rv0)" if SH != 1 else f"({oh} + rv0)"
    iw = f"(({ow} * {SW}) + rv1)" if SW != 1 else f"({ow} + rv1)"
    v = f"data[(((({n} * {H * W * C}) + ({ih} * {W * C})) + ({iw} * {C})) + {c})]"
    i = "    " if total % T else "  "
    body = (f"{i}{name}_local[0] = {init};\n"
            f"{i}for (int rv0 = 0; rv0 < {KH}; ++rv0) {{\n"
            f"{i}  for (int rv1 = 0; rv1 < {KW}; ++rv1) {{\n"
            f"{i}    {name}_local[0] = {upd.format(a=name + '_local[0]', v=v)};\n"
            f"{i}  }}\n{i}}}\n"
            f"{i}{name}[{o}] = {fin(name + '_local[0]', KH * KW)};\n")
    if total % T:
        body = f"  if ({o} < {total}) {{\n{body}  }}\n"
    src = HEAD + "\n" + (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                         f'float* __restrict__ data, float* __restrict__ {name}) {{\n'
                         f"  float {name}_local[1];\n{body}}}\n")
    op = f"{kind}pool"
    ishape, oshape = [N, H, W, C], [N, OH, OW, C]
    if kernel_only:
        params = [ptr("data", F32, "input", ishape, "x"), ptr(name, F32, "output", oshape, "out")]
        return Entry(op, nm(op, args), args, src, "default_function_kernel", params,
                     launch={"grid": [cdiv(total, T), 1, 1], "block": [T, 1, 1], "shmem": 0})
    bufs = [Buf("x", "float", str(N * H * W * C)), Buf("out", "float", str(total), "output")]
    launch = f"  default_function_kernel<<<{cdiv(total, T)}, {T}>>>(d_x, d_out);"
    src += "\n" + host_wrapper("cuda", f"{op}_kernel", bufs, [], launch)
    params = [ptr("x", F32, "input", ishape, "x"), ptr("out", F32, "output", oshape, "out")]
    return Entry(op, nm(op, args), args, src, f"{op}_kernel", params)


def pool_2d_block(kind: str, args: list[int]) -> Entry:
    """Hand-written NHWC pooling: grid (OH, N), block dim3(C, OW): threadIdx.x = channel
    (coalesced), threadIdx.y = output column."""
    N, H, W, C, KH, KW, SH, SW = args
    OH, OW = (H - KH) // SH + 1, (W - KW) // SW + 1
    assert C * OW <= 1024
    upd = {"max": "acc = fmaxf(acc, v);", "min": "acc = fminf(acc, v);",
           "avg": "acc += v;", "sum": "acc += v;"}[kind]
    init = {"max": "-FLT_MAX", "min": "FLT_MAX", "avg": "0.0f", "sum": "0.0f"}[kind]
    res = "acc / (KH * KW)" if kind == "avg" else "acc"
    src = "#include <cfloat>\n" + HEAD + "\n" + fill("""// $kind pooling, NHWC, no padding; out[n][oh][ow][c]
__global__ void ${kind}pool2d_nhwc(const float* __restrict__ in, float* __restrict__ out,
                                 int H, int W, int C, int KH, int KW, int SH, int SW, int OH, int OW) {
  const int c = threadIdx.x;
  const int ow = threadIdx.y;
  const int oh = blockIdx.x;
  const int n = blockIdx.y;
  const float* base = in + ((size_t)n * H * W) * C + c;
  float acc = $init;
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = oh * SH + kh;
    for (int kw = 0; kw < KW; ++kw) {
      const int iw = ow * SW + kw;
      const float v = base[(ih * W + iw) * C];
      $upd
    }
  }
  out[(((size_t)n * OH + oh) * OW + ow) * C + c] = $res;
}
""", kind=kind, init=init, upd=upd, res=res)
    bufs = [Buf("x", "float", "N * H * W * C"), Buf("out", "float", "N * OH * OW * C", "output")]
    launch = ("  dim3 b(C, OW);\n  dim3 g(OH, N);\n"
              f"  {kind}pool2d_nhwc<<<g, b>>>(d_x, d_out, H, W, C, KH, KW, SH, SW, OH, OW);")
    wrapper = host_wrapper("cuda", f"{kind}pool_kernel", bufs,
                           [(s, "int") for s in ("N", "H", "W", "C", "KH", "KW", "SH", "SW")], launch)
    head, rest = wrapper.split("{\n", 1)
    wrapper = head + "{\n  const int OH = (H - KH) / SH + 1;\n  const int OW = (W - KW) / SW + 1;\n" + rest
    src += "\n" + wrapper
    op = f"{kind}pool"
    params = [ptr("x", F32, "input", [N, H, W, C], "x"), ptr("out", F32, "output", [N, OH, OW, C], "out")]
    params += [scalar(s, v) for s, v in zip(("N", "H", "W", "C", "KH", "KW", "SH", "SW"), args)]
    return Entry(op, nm(op, args), args, src, f"{op}_kernel", params)


def pool_entries() -> list[Entry]:
    a1, a2 = [1, 16, 16, 32, 2, 2, 2, 2], [2, 12, 12, 16, 3, 3, 1, 1]
    return [pool_tvm("max", a1, False), pool_2d_block("max", a2),
            pool_2d_block("avg", a1), pool_tvm("avg", a2, False),
            pool_tvm("min", a1, True), pool_tvm("min", a2, False),
            pool_2d_block("sum", a1), pool_tvm("sum", [1, 9, 9, 24, 3, 3, 2, 2], False)]


# ============================================================================ layout
def gather(shape: list[int], axis: int, k: int, clip: bool) -> Entry:
    """TVM take: out = take(data, indices, axis); one thread per output element. ``clip``:
    TVM mode="clip" (indices clamped into range)."""
    nd = len(shape)
    pre, dim, post = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
    total = pre * k * post
    T = 256 if total >= 256 else total
    o = f"(({BX} * {T}) + {TX})"
    idx = f"indices[(({o} % {k * post}) / {post})]"
    if clip:
        idx = f"min(max(0, {idx}), {dim - 1})"
    src_i = f"(((({o} / {k * post}) * {dim * post}) + ({idx} * {post})) + ({o} % {post}))"
    stmt = f"T_take[{o}] = data[{src_i}];"
    body = f"  if ({o} < {total}) {{\n    {stmt}\n  }}\n" if total % T else f"  {stmt}\n"
    src = HEAD + "\n" + (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                         f'float* __restrict__ T_take, float* __restrict__ data, int* __restrict__ indices) '
                         f'{{\n{body}}}\n')
    oshape = shape[:axis] + [k] + shape[axis + 1:]
    bufs = [Buf("data", "float", str(prod(shape))), Buf("indices", "int", str(k)),
            Buf("out", "float", str(total), "output")]
    launch = f"  default_function_kernel<<<{cdiv(total, T)}, {T}>>>(d_out, d_data, d_indices);"
    src += "\n" + host_wrapper("cuda", "gather_kernel", bufs, [], launch)
    params = [ptr("data", F32, "input", shape, "data"), ptr("indices", "int32", "input", [k], "indices"),
              ptr("out", F32, "output", oshape, "out")]
    return Entry("gather", nm("gather", shape), shape, src, "gather_kernel", params,
                 {"axis": axis, "mode": "take", "num_indices": k})


def scatter_single(shape: list[int], axis: int, k: int) -> Entry:
    """Index copy along ``axis`` in one pass: each output element looks its slice up in the
    (duplicate-free) index list and takes updates or data."""
    pre, dim, post = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
    total = pre * dim * post
    src = HEAD + "\n" + fill("""// out = data; out[.., indices[i], ..] = updates[.., i, ..] along axis $axis.
__global__ void scatter_lookup_kernel(const float* __restrict__ data, const int* __restrict__ indices,
                                      const float* __restrict__ updates, float* __restrict__ out) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= $total) return;
  const int inner = idx % $post;
  const int pos = (idx / $post) % $dim;
  const int outer = idx / ($dim * $post);
  float v = data[idx];
  for (int i = 0; i < $k; ++i) {
    if (indices[i] == pos) {
      v = updates[(outer * $k + i) * $post + inner];
    }
  }
  out[idx] = v;
}
""", axis=axis, total=total, post=post, dim=dim, k=k)
    ushape = shape[:axis] + [k] + shape[axis + 1:]
    bufs = [Buf("data", "float", str(total)), Buf("indices", "int", str(k)),
            Buf("updates", "float", str(prod(ushape))), Buf("out", "float", str(total), "output")]
    launch = f"  scatter_lookup_kernel<<<{cdiv(total, 128)}, 128>>>(d_data, d_indices, d_updates, d_out);"
    src += "\n" + host_wrapper("cuda", "scatter_kernel", bufs, [], launch)
    params = [ptr("data", F32, "input", shape, "data"), ptr("indices", "int32", "input", [k], "indices"),
              ptr("updates", F32, "input", ushape, "updates"), ptr("out", F32, "output", shape, "out")]
    return Entry("scatter", nm("scatter", shape), shape, src, "scatter_kernel", params,
                 {"axis": axis, "mode": "take", "num_indices": k})


def scatter_two_pass(shape: list[int], axis: int, k: int) -> Entry:
    """Copy data into out, then a second launch writes the updates (the usual two-kernel form)."""
    pre, dim, post = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
    total = pre * dim * post
    utotal = pre * k * post
    src = HEAD + "\n" + """__global__ void copy_kernel(const float* __restrict__ src, float* __restrict__ dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// out[o][indices[i]][p] = updates[o][i][p]
__global__ void scatter_rows_kernel(const int* __restrict__ indices, const float* __restrict__ updates,
                                    float* __restrict__ out, int outer, int dim, int num, int inner) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= outer * num * inner) return;
  int p = i % inner;
  int j = (i / inner) % num;
  int o = i / (inner * num);
  out[(o * dim + indices[j]) * inner + p] = updates[i];
}
"""
    ushape = shape[:axis] + [k] + shape[axis + 1:]
    bufs = [Buf("data", "float", "outer * dim * inner"), Buf("indices", "int", "num"),
            Buf("updates", "float", "outer * num * inner"),
            Buf("out", "float", "outer * dim * inner", "output")]
    launch = ("  int n = outer * dim * inner;\n"
              "  copy_kernel<<<(n + 255) / 256, 256>>>(d_data, d_out, n);\n"
              "  int m = outer * num * inner;\n"
              "  scatter_rows_kernel<<<(m + 127) / 128, 128>>>(d_indices, d_updates, d_out, outer, dim, num, inner);")
    src += "\n" + host_wrapper("cuda", "scatter_kernel", bufs,
                               [("outer", "int"), ("dim", "int"), ("num", "int"), ("inner", "int")],
                               launch, sync=True)
    params = [ptr("data", F32, "input", shape, "data"), ptr("indices", "int32", "input", [k], "indices"),
              ptr("updates", F32, "input", ushape, "updates"), ptr("out", F32, "output", shape, "out"),
              scalar("outer", pre), scalar("dim", dim), scalar("num", k), scalar("inner", post)]
    assert utotal > 0
    return Entry("scatter", nm("scatter", shape), shape, src, "scatter_kernel", params,
                 {"axis": axis, "mode": "take", "num_indices": k})


def concat(shape: list[int], axis: int, sizes: list[int], kernel_only: bool) -> Entry:
    """TVM concatenate: one thread per output element, nested selects on the axis position."""
    pre, post = prod(shape[:axis]), prod(shape[axis + 1:])
    tot_ax = sum(sizes)
    total = pre * tot_ax * post
    T = 256 if total >= 256 else total
    o = f"(({BX} * {T}) + {TX})"
    pos = f"(({o} % {tot_ax * post}) / {post})"
    outer = f"({o} / {tot_ax * post})"
    inner = f"({o} % {post})"
    starts = [sum(sizes[:i]) for i in range(len(sizes))]

    def load(i):
        return f"x{i}[((({outer} * {sizes[i] * post}) + (({pos} - {starts[i]}) * {post})) + {inner})]"
    expr = load(len(sizes) - 1)
    for i in range(len(sizes) - 2, -1, -1):
        expr = f"(({pos} < {starts[i + 1]}) ? {load(i)} : {expr})"
    stmt = f"T_concat[{o}] = {expr};"
    body = f"  if ({o} < {total}) {{\n    {stmt}\n  }}\n" if total % T else f"  {stmt}\n"
    ins = [f"float* __restrict__ x{i}" for i in range(len(sizes))]
    src = HEAD + "\n" + (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                         f'float* __restrict__ T_concat, {", ".join(ins)}) {{\n{body}}}\n')
    oshape = list(shape)
    oshape[axis] = tot_ax
    ishapes = []
    for s in sizes:
        e = list(shape)
        e[axis] = s
        ishapes.append(e)
    attrs = {"axis": axis, "num_inputs": len(sizes)}
    if any(s != shape[axis] for s in sizes):
        attrs["sizes"] = sizes
    if kernel_only:
        params = [ptr("T_concat", F32, "output", oshape, "out")]
        params += [ptr(f"x{i}", F32, "input", e, f"x{i}") for i, e in enumerate(ishapes)]
        return Entry("concat", nm("concat", shape), shape, src, "default_function_kernel", params, attrs,
                     launch={"grid": [cdiv(total, T), 1, 1], "block": [T, 1, 1], "shmem": 0})
    bufs = [Buf(f"x{i}", "float", str(prod(e))) for i, e in enumerate(ishapes)]
    bufs.append(Buf("out", "float", str(total), "output"))
    launch = (f"  default_function_kernel<<<{cdiv(total, T)}, {T}>>>(d_out, "
              + ", ".join(f"d_x{i}" for i in range(len(sizes))) + ");")
    src += "\n" + host_wrapper("cuda", "concat_kernel", bufs, [], launch)
    params = [ptr(f"x{i}", F32, "input", e, f"x{i}") for i, e in enumerate(ishapes)]
    params.append(ptr("out", F32, "output", oshape, "out"))
    return Entry("concat", nm("concat", shape), shape, src, "concat_kernel", params, attrs)


def transpose_tiled(R: int, Cc: int) -> Entry:
    """2-D transpose through a padded 32x33 shared tile, block dim3(32, 8)."""
    src = HEAD + "\n" + """#define TILE_DIM 32
#define BLOCK_ROWS 8

// odata[cols][rows] = idata[rows][cols]^T; the +1 column avoids shared-memory bank conflicts.
__global__ void transpose_tile_kernel(float* __restrict__ odata, const float* __restrict__ idata, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < cols && y + j < rows) {
      tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * cols + x];
    }
  }
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < rows && y + j < cols) {
      odata[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
  }
}
"""
    bufs = [Buf("x", "float", "rows * cols"), Buf("out", "float", "rows * cols", "output")]
    launch = ("  dim3 b(TILE_DIM, BLOCK_ROWS);\n"
              "  dim3 g((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);\n"
              "  transpose_tile_kernel<<<g, b>>>(d_out, d_x, rows, cols);")
    src += "\n" + host_wrapper("cuda", "transpose_kernel", bufs, [("rows", "int"), ("cols", "int")], launch)
    params = [ptr("x", F32, "input", [R, Cc], "x"), ptr("out", F32, "output", [Cc, R], "out"),
              scalar("rows", R), scalar("cols", Cc)]
    return Entry("transpose", nm("transpose", [R, Cc]), [R, Cc], src, "transpose_kernel", params,
                 {"perm": [1, 0]})


def transpose_tvm(shape: list[int], perm: list[int], kernel_only: bool) -> Entry:
    """TVM transpose: one thread per output element, output index decomposed, input gathered."""
    nd = len(shape)
    oshape = [shape[p] for p in perm]
    total = prod(shape)
    T = 256 if total >= 256 else total
    o = f"(({BX} * {T}) + {TX})"
    istride = [prod(shape[i + 1:]) for i in range(nd)]
    terms = []
    for j in range(nd):      # output axis j has extent oshape[j] and reads input axis perm[j]
        inner = prod(oshape[j + 1:])
        coord = f"({o} / {inner})" if j == 0 else f"(({o} % {inner * oshape[j]}) / {inner})"
        if inner == 1:
            coord = f"({o} % {oshape[j]})"
        terms.append(f"({coord} * {istride[perm[j]]})" if istride[perm[j]] != 1 else coord)
    src_i = terms[0]
    for t in terms[1:]:
        src_i = f"({src_i} + {t})"
    stmt = f"T_transpose[{o}] = x[{src_i}];"
    body = f"  if ({o} < {total}) {{\n    {stmt}\n  }}\n" if total % T else f"  {stmt}\n"
    src = HEAD + "\n" + (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                         f'float* __restrict__ T_transpose, float* __restrict__ x) {{\n{body}}}\n')
    name = nm("transpose", shape)
    if kernel_only:
        params = [ptr("T_transpose", F32, "output", oshape, "out"), ptr("x", F32, "input", shape, "x")]
        return Entry("transpose", name, shape, src, "default_function_kernel", params, {"perm": perm},
                     launch={"grid": [cdiv(total, T), 1, 1], "block": [T, 1, 1], "shmem": 0})
    bufs = [Buf("x", "float", str(total)), Buf("out", "float", str(total), "output")]
    launch = f"  default_function_kernel<<<{cdiv(total, T)}, {T}>>>(d_out, d_x);"
    src += "\n" + host_wrapper("cuda", "transpose_kernel", bufs, [], launch)
    params = [ptr("x", F32, "input", shape, "x"), ptr("out", F32, "output", oshape, "out")]
    return Entry("transpose", name, shape, src, "transpose_kernel", params, {"perm": perm})


def layout_entries() -> list[Entry]:
    return [gather([64, 32], 0, 20, False), gather([8, 16, 32], 1, 6, True),
            scatter_single([32, 16], 0, 8), scatter_two_pass([4, 24, 8], 1, 5),
            concat([16, 32], 1, [32, 32], False), concat([8, 12, 16], 1, [12, 4, 8], True),
            concat([6, 40], 0, [6, 6], False),
            transpose_tiled(64, 96), transpose_tvm([8, 16, 32], [2, 0, 1], False),
            transpose_tvm([4, 8, 16, 8], [0, 2, 1, 3], True)]


# ============================================================================ LLM
def mha(B: int, H: int, S: int, D: int) -> Entry:
    """Attention with wmma: one warp per (batch*head, 16 query rows). S = Q K^T * scale by
    m16n16k16 (K read as col-major matrix_b), row softmax in shared memory (2 lanes per row),
    P rounded to half, O = P V by wmma again."""
    assert S % 16 == 0 and D % 16 == 0
    scale = 1.0 / math.sqrt(D)
    src = HEAD_WMMA + "\n" + fill("""using namespace nvcuda;

#define SEQ $S
#define HEAD_DIM $D

// Q, K, V: [B*H, SEQ, HEAD_DIM] half; O: float. Grid (SEQ / 16, B * H), one warp per block.
__global__ void __launch_bounds__(32) mha_wmma_kernel(const half* __restrict__ Q, const half* __restrict__ K,
                                                      const half* __restrict__ V, float* __restrict__ O, float scale) {
  __shared__ float s_tile[16 * SEQ];
  __shared__ half p_tile[16 * SEQ];
  const int bh = blockIdx.y;
  const int q0 = blockIdx.x * 16;
  const half* q = Q + ((size_t)bh * SEQ + q0) * HEAD_DIM;
  const half* k = K + (size_t)bh * SEQ * HEAD_DIM;
  const half* v = V + (size_t)bh * SEQ * HEAD_DIM;

  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> q_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> kt_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> s_frag;
  for (int n0 = 0; n0 < SEQ; n0 += 16) {
    wmma::fill_fragment(s_frag, 0.0f);
    for (int d0 = 0; d0 < HEAD_DIM; d0 += 16) {
      wmma::load_matrix_sync(q_frag, q + d0, HEAD_DIM);
      wmma::load_matrix_sync(kt_frag, k + n0 * HEAD_DIM + d0, HEAD_DIM);  // K^T as col-major
      wmma::mma_sync(s_frag, q_frag, kt_frag, s_frag);
    }
    wmma::store_matrix_sync(s_tile + n0, s_frag, SEQ, wmma::mem_row_major);
  }
  __syncwarp();

  // softmax of each of the 16 rows; lanes r and r + 16 share row r (even / odd columns)
  const int row = threadIdx.x & 15;
  const int part = threadIdx.x >> 4;
  float m = -INFINITY;
  for (int j = part; j < SEQ; j += 2) m = fmaxf(m, s_tile[row * SEQ + j] * scale);
  m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, 16));
  float sum = 0.0f;
  for (int j = part; j < SEQ; j += 2) {
    const float e = __expf(s_tile[row * SEQ + j] * scale - m);
    s_tile[row * SEQ + j] = e;
    sum += e;
  }
  sum += __shfl_xor_sync(0xffffffff, sum, 16);
  const float inv = 1.0f / sum;
  for (int j = part; j < SEQ; j += 2) p_tile[row * SEQ + j] = __float2half(s_tile[row * SEQ + j] * inv);
  __syncwarp();

  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> p_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> v_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> o_frag;
  for (int d0 = 0; d0 < HEAD_DIM; d0 += 16) {
    wmma::fill_fragment(o_frag, 0.0f);
    for (int n0 = 0; n0 < SEQ; n0 += 16) {
      wmma::load_matrix_sync(p_frag, p_tile + n0, SEQ);
      wmma::load_matrix_sync(v_frag, v + n0 * HEAD_DIM + d0, HEAD_DIM);
      wmma::mma_sync(o_frag, p_frag, v_frag, o_frag);
    }
    wmma::store_matrix_sync(O + ((size_t)bh * SEQ + q0) * HEAD_DIM + d0, o_frag, HEAD_DIM, wmma::mem_row_major);
  }
}
""", S=S, D=D)
    src = src.replace("#include <mma.h>\n", "#include <mma.h>\n#include <math.h>\n", 1)
    cnt = "batch * heads * SEQ * HEAD_DIM"
    bufs = [Buf("Q", "half", cnt), Buf("K", "half", cnt), Buf("V", "half", cnt), Buf("out", "float", cnt, "output")]
    launch = ("  dim3 grid(SEQ / 16, batch * heads);\n"
              f"  mha_wmma_kernel<<<grid, 32>>>(d_Q, d_K, d_V, d_out, {flit(scale)});")
    src += "\n" + host_wrapper("cuda", "mha_kernel", bufs, [("batch", "int"), ("heads", "int")], launch)
    shp = [B, H, S, D]
    params = [ptr("Q", F16, "input", shp, "Q"), ptr("K", F16, "input", shp, "K"),
              ptr("V", F16, "input", shp, "V"), ptr("out", F32, "output", shp, "out"),
              scalar("batch", B), scalar("heads", H)]
    return Entry("mha", nm("mha", shp), shp, src, "mha_kernel", params)


def gqa(B: int, H: int, M: int, Kd: int, N: int, G: int | None = None) -> Entry:
    """Grouped-query attention in float: one block (4 warps) per (batch, query head); the
    group's K and V are staged in shared memory (rows padded by one float); each warp takes
    query rows, lanes own keys for the scores and head dims for the output."""
    G = G or max(1, H // 4)
    assert H % G == 0 and Kd <= 64
    scale = 1.0 / math.sqrt(Kd)
    src = HEAD + "\n" + fill("""#include <math.h>

#define NUM_KEYS $N
#define HEAD_DIM $Kd
#define KV_PITCH (HEAD_DIM + 1)
#define WARPS 4

// Q, out: [B, H, M, HEAD_DIM]; K, V: [B, G, NUM_KEYS, HEAD_DIM]; query head h reads kv head h / (H / G).
__global__ void __launch_bounds__(WARPS * 32) gqa_kernel_dev(const float* __restrict__ Q, const float* __restrict__ K,
                                                             const float* __restrict__ V, float* __restrict__ out,
                                                             int H, int G, int M, float scale) {
  __shared__ float k_s[NUM_KEYS * KV_PITCH];
  __shared__ float v_s[NUM_KEYS * KV_PITCH];
  __shared__ float q_s[WARPS][HEAD_DIM];
  __shared__ float p_s[WARPS][NUM_KEYS];
  const int b = blockIdx.y;
  const int h = blockIdx.x;
  const int g = h / (H / G);
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const float* kg = K + ((size_t)(b * G + g) * NUM_KEYS) * HEAD_DIM;
  const float* vg = V + ((size_t)(b * G + g) * NUM_KEYS) * HEAD_DIM;
  for (int i = threadIdx.x; i < NUM_KEYS * HEAD_DIM; i += blockDim.x) {
    const int r = i / HEAD_DIM;
    const int c = i % HEAD_DIM;
    k_s[r * KV_PITCH + c] = kg[i];
    v_s[r * KV_PITCH + c] = vg[i];
  }
  __syncthreads();

  for (int m = warp; m < M; m += WARPS) {
    const float* qr = Q + ((size_t)(b * H + h) * M + m) * HEAD_DIM;
    for (int d = lane; d < HEAD_DIM; d += 32) q_s[warp][d] = qr[d] * scale;
    __syncwarp();
    float mx = -INFINITY;
    for (int j = lane; j < NUM_KEYS; j += 32) {
      float s = 0.0f;
      for (int d = 0; d < HEAD_DIM; ++d) s += q_s[warp][d] * k_s[j * KV_PITCH + d];
      p_s[warp][j] = s;
      mx = fmaxf(mx, s);
    }
    for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, off));
    float sum = 0.0f;
    for (int j = lane; j < NUM_KEYS; j += 32) {
      const float e = expf(p_s[warp][j] - mx);
      p_s[warp][j] = e;
      sum += e;
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, off);
    __syncwarp();
    const float inv = 1.0f / sum;
    float* orow = out + ((size_t)(b * H + h) * M + m) * HEAD_DIM;
    for (int d = lane; d < HEAD_DIM; d += 32) {
      float acc = 0.0f;
      for (int j = 0; j < NUM_KEYS; ++j) acc += p_s[warp][j] * v_s[j * KV_PITCH + d];
      orow[d] = acc * inv;
    }
    __syncwarp();
  }
}
""", N=N, Kd=Kd)
    bufs = [Buf("Q", "float", "batch * heads * M * HEAD_DIM"),
            Buf("K", "float", "batch * kv_heads * NUM_KEYS * HEAD_DIM"),
            Buf("V", "float", "batch * kv_heads * NUM_KEYS * HEAD_DIM"),
            Buf("out", "float", "batch * heads * M * HEAD_DIM", "output")]
    launch = ("  dim3 grid(heads, batch);\n"
              f"  gqa_kernel_dev<<<grid, WARPS * 32>>>(d_Q, d_K, d_V, d_out, heads, kv_heads, M, {flit(scale)});")
    src += "\n" + host_wrapper("cuda", "gqa_kernel", bufs,
                               [("batch", "int"), ("heads", "int"), ("kv_heads", "int"), ("M", "int")],
                               launch)
    args = [B, H, M, Kd, N]
    params = [ptr("Q", F32, "input", [B, H, M, Kd], "Q"), ptr("K", F32, "input", [B, G, N, Kd], "K"),
              ptr("V", F32, "input", [B, G, N, Kd], "V"), ptr("out", F32, "output", [B, H, M, Kd], "out"),
              scalar("batch", B), scalar("heads", H), scalar("kv_heads", G), scalar("M", M)]
    return Entry("gqa", nm("gqa", args), args, src, "gqa_kernel", params, {"kv_heads": G})


def gatemlp(Bm: int, K: int, N: int, staged: bool) -> Entry:
    """out = silu(X @ A) * (X @ B) with wmma: one warp per 16x16 output tile and two
    accumulators sharing the X fragment. The epilogue works on the accumulator elements
    directly (both fragments have the same element->lane map), or, ``staged``, through
    shared memory."""
    assert Bm % 16 == 0 and N % 32 == 0 and K % 16 == 0
    if not staged:
        epi = """  for (int i = 0; i < gate_frag.num_elements; ++i) {
    const float g = gate_frag.x[i];
    gate_frag.x[i] = g / (1.0f + __expf(-g)) * up_frag.x[i];
  }
  wmma::store_matrix_sync(out + row0 * N + col0, gate_frag, N, wmma::mem_row_major);"""
        shared = ""
    else:
        epi = """  wmma::store_matrix_sync(gate_s[threadIdx.y], gate_frag, 16, wmma::mem_row_major);
  wmma::store_matrix_sync(up_s[threadIdx.y], up_frag, 16, wmma::mem_row_major);
  __syncthreads();
  for (int e = threadIdx.x; e < 256; e += 32) {
    const float g = gate_s[threadIdx.y][e];
    out[(row0 + e / 16) * N + col0 + e % 16] = g / (1.0f + __expf(-g)) * up_s[threadIdx.y][e];
  }"""
        shared = "  __shared__ float gate_s[2][256];\n  __shared__ float up_s[2][256];\n"
    src = HEAD_WMMA + "\n" + fill("""using namespace nvcuda;

// X: [Bm, K], A, B: [K, N] half; out: [Bm, N] float. Block dim3(32, 2): two warps, two 16-column tiles.
__global__ void __launch_bounds__(64) gatemlp_wmma_kernel(const half* __restrict__ X, const half* __restrict__ A,
                                                          const half* __restrict__ B, float* __restrict__ out,
                                                          int K, int N) {
$shared  const int row0 = blockIdx.y * 16;
  const int col0 = (blockIdx.x * 2 + threadIdx.y) * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> x_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> gate_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> up_frag;
  wmma::fill_fragment(gate_frag, 0.0f);
  wmma::fill_fragment(up_frag, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(x_frag, X + row0 * K + k, K);
    wmma::load_matrix_sync(a_frag, A + k * N + col0, N);
    wmma::load_matrix_sync(b_frag, B + k * N + col0, N);
    wmma::mma_sync(gate_frag, x_frag, a_frag, gate_frag);
    wmma::mma_sync(up_frag, x_frag, b_frag, up_frag);
  }
$epi
}
""", shared=shared, epi=epi)
    bufs = [Buf("X", "half", "batch * K"), Buf("A", "half", "K * N"), Buf("B", "half", "K * N"),
            Buf("out", "float", "batch * N", "output")]
    launch = ("  dim3 block(32, 2);\n  dim3 grid(N / 32, batch / 16);\n"
              "  gatemlp_wmma_kernel<<<grid, block>>>(d_X, d_A, d_B, d_out, K, N);")
    src += "\n" + host_wrapper("cuda", "gatemlp_kernel", bufs, [("batch", "int"), ("K", "int"), ("N", "int")],
                               launch)
    args = [Bm, K, N]
    params = [ptr("X", F16, "input", [Bm, K], "X"), ptr("A", F16, "input", [K, N], "A"),
              ptr("B", F16, "input", [K, N], "B"), ptr("out", F32, "output", [Bm, N], "out"),
              scalar("batch", Bm), scalar("K", K), scalar("N", N)]
    return Entry("gatemlp", nm("gatemlp", args), args, src, "gatemlp_kernel", params)


DEFORM = """// Multi-scale deformable attention (Deformable DETR ms_deform_attn forward, im2col form).
__device__ float ms_deform_attn_im2col_bilinear(const float* bottom_data, const int height, const int width,
                                                const int nheads, const int channels, const float h, const float w,
                                                const int m, const int c) {
  const int h_low = floorf(h);
  const int w_low = floorf(w);
  const int h_high = h_low + 1;
  const int w_high = w_low + 1;
  const float lh = h - h_low;
  const float lw = w - w_low;
  const float hh = 1 - lh, hw = 1 - lw;
  const int w_stride = nheads * channels;
  const int h_stride = width * w_stride;
  const int h_low_ptr_offset = h_low * h_stride;
  const int h_high_ptr_offset = h_low_ptr_offset + h_stride;
  const int w_low_ptr_offset = w_low * w_stride;
  const int w_high_ptr_offset = w_low_ptr_offset + w_stride;
  const int base_ptr = m * channels + c;
  float v1 = 0;
  if (h_low >= 0 && w_low >= 0) v1 = bottom_data[h_low_ptr_offset + w_low_ptr_offset + base_ptr];
  float v2 = 0;
  if (h_low >= 0 && w_high <= width - 1) v2 = bottom_data[h_low_ptr_offset + w_high_ptr_offset + base_ptr];
  float v3 = 0;
  if (h_high <= height - 1 && w_low >= 0) v3 = bottom_data[h_high_ptr_offset + w_low_ptr_offset + base_ptr];
  float v4 = 0;
  if (h_high <= height - 1 && w_high <= width - 1) v4 = bottom_data[h_high_ptr_offset + w_high_ptr_offset + base_ptr];
  const float w1 = hh * hw, w2 = hh * lw, w3 = lh * hw, w4 = lh * lw;
  return (w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4);
}

// one thread per (batch, query, head, channel)
__global__ void ms_deformable_im2col_kernel(const int n, const float* data_value, const int64_t* data_spatial_shapes,
                                            const int64_t* data_level_start_index, const float* data_sampling_loc,
                                            const float* data_attn_weight, const int spatial_size, const int num_heads,
                                            const int channels, const int num_levels, const int num_query,
                                            const int num_point, float* data_col) {
  for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < n; index += blockDim.x * gridDim.x) {
    int _temp = index;
    const int c_col = _temp % channels;
    _temp /= channels;
    const int sampling_index = _temp;
    const int m_col = _temp % num_heads;
    _temp /= num_heads;
    _temp /= num_query;
    const int b_col = _temp;
    float* data_col_ptr = data_col + index;
    int data_weight_ptr = sampling_index * num_levels * num_point;
    int data_loc_w_ptr = data_weight_ptr << 1;
    const int qid_stride = num_heads * channels;
    const int data_value_ptr_init_offset = b_col * spatial_size * qid_stride;
    float col = 0;
    for (int l_col = 0; l_col < num_levels; ++l_col) {
      const int level_start_id = data_level_start_index[l_col];
      const int spatial_h_ptr = l_col << 1;
      const int spatial_h = data_spatial_shapes[spatial_h_ptr];
      const int spatial_w = data_spatial_shapes[spatial_h_ptr + 1];
      const float* data_value_ptr = data_value + (data_value_ptr_init_offset + level_start_id * qid_stride);
      for (int p_col = 0; p_col < num_point; ++p_col) {
        const float loc_w = data_sampling_loc[data_loc_w_ptr];
        const float loc_h = data_sampling_loc[data_loc_w_ptr + 1];
        const float weight = data_attn_weight[data_weight_ptr];
        const float h_im = loc_h * spatial_h - 0.5f;
        const float w_im = loc_w * spatial_w - 0.5f;
        if (h_im > -1 && w_im > -1 && h_im < spatial_h && w_im < spatial_w) {
          col += ms_deform_attn_im2col_bilinear(data_value_ptr, spatial_h, spatial_w, num_heads, channels, h_im, w_im,
                                                m_col, c_col) * weight;
        }
        data_weight_ptr += 1;
        data_loc_w_ptr += 2;
      }
    }
    *data_col_ptr = col;
  }
}
"""


def deformable(N, M, D, Lq, L, P) -> Entry:
    shapes = [[2 ** (L + 1 - l)] * 2 for l in range(L)]
    S = sum(h * w for h, w in shapes)
    src = "#include <stdint.h>\n" + HEAD + "\n" + DEFORM
    bufs = [Buf("value", "float", "batch * spatial_size * num_heads * channels"),
            Buf("spatial_shapes", "int64_t", "num_levels * 2"),
            Buf("level_start_index", "int64_t", "num_levels"),
            Buf("sampling_loc", "float", "batch * num_query * num_heads * num_levels * num_point * 2"),
            Buf("attn_weight", "float", "batch * num_query * num_heads * num_levels * num_point"),
            Buf("output", "float", "batch * num_query * num_heads * channels", "output")]
    launch = ("  const int num_kernels = batch * num_query * num_heads * channels;\n"
              "  const int num_threads = 256;\n"
              "  ms_deformable_im2col_kernel<<<(num_kernels + num_threads - 1) / num_threads, num_threads>>>(\n"
              "      num_kernels, d_value, d_spatial_shapes, d_level_start_index, d_sampling_loc, d_attn_weight,\n"
              "      spatial_size, num_heads, channels, num_levels, num_query, num_point, d_output);")
    src += "\n" + host_wrapper("cuda", "deformable_kernel", bufs,
                               [(s, "int") for s in ("batch", "spatial_size", "num_heads", "channels",
                                                     "num_levels", "num_query", "num_point")], launch)
    args = [N, M, D, Lq, L, P]
    params = [ptr("value", F32, "input", [N, S, M, D], "value"),
              ptr("spatial_shapes", "int64", "input", [L, 2], "spatial_shapes"),
              ptr("level_start_index", "int64", "input", [L], "level_start_index"),
              ptr("sampling_loc", F32, "input", [N, Lq, M, L, P, 2], "sampling_locations"),
              ptr("attn_weight", F32, "input", [N, Lq, M, L, P], "attention_weights"),
              ptr("output", F32, "output", [N, Lq, M * D], "out"),
              scalar("batch", N), scalar("spatial_size", S), scalar("num_heads", M), scalar("channels", D),
              scalar("num_levels", L), scalar("num_query", Lq), scalar("num_point", P)]
    return Entry("deformable", nm("deformable", args), args, src, "deformable_kernel", params,
                 {"spatial_shapes": shapes})


def llm_entries() -> list[Entry]:
    return [mha(1, 4, 32, 32), mha(2, 2, 64, 16),
            gqa(1, 8, 16, 32, 64), gqa(2, 4, 8, 64, 32),
            gatemlp(16, 64, 64, False), gatemlp(32, 128, 32, True),
            deformable(1, 4, 8, 16, 2, 4), deformable(2, 2, 16, 8, 3, 2)]


def build() -> list[Entry]:
    return (elementwise_entries() + reduction_entries() + matrix_entries() + conv_entries()
            + norm_entries() + pool_entries() + layout_entries() + llm_entries())


if __name__ == "__main__":
    sys.exit(main("cuda", ".cu", build))
