#!/usr/bin/env python3
"""Generate the HIP corpus: xpiler/corpus/hip/<op>_<args>.hip + <op>_<args>.json.

Every operator of OPS.md, two or more shapes each, small enough that one emulated run stays
well under a second. The kernels are written the way HIP code for CDNA GPUs is written:

- ``#include <hip/hip_runtime.h>``, ``hipMalloc`` / ``hipMemcpy`` / ``hipFree`` host wrappers
  ``extern "C" void <op>_kernel(host pointers..., int sizes...)``, launched with
  ``hipLaunchKernelGGL`` or ``<<<>>>``; a few files are kernel-only (their case has a
  ``launch``), some use ``dim3`` 2-D blocks or dynamic shared memory (LDS);
- wavefront-size-aware reductions: ``warpSize`` (64 on CDNA), mask-less ``__shfl_down`` /
  ``__shfl_xor``, per-wave partials in LDS;
- matrix ops (gemm, bmm, dense, gatemlp, mha) with ``__builtin_amdgcn_mfma_f32_16x16x4f32``
  in 64-lane blocks: lane L supplies A[L%16][L/16] and B[L/16][L%16] and holds
  D[4*(L/16)+r][L%16], r < 4 (PLATFORMS.md section 4);
- some element-wise / layout kernels in TVM-generated style (CUDA codegen output, hipified).

Usage: .venv/bin/python tools/gen_corpus_hip.py [--check]
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus_gpu_common import (Buf, Entry, cdiv, fill, host_wrapper, main, prod, ptr,  # noqa: E402
                                scalar)

F32 = "float32"
HEAD = "#include <hip/hip_runtime.h>\n"
MFMA_TYPES = "typedef float floatx4 __attribute__((ext_vector_type(4)));\n"
BX, TX = "((int)blockIdx.x)", "((int)threadIdx.x)"


def nm(op, args):
    return op + "_" + "_".join(str(a) for a in args)


def wrap(fname, bufs, scalars, launch, **kw):
    return host_wrapper("hip", fname, bufs, scalars, launch, cast=True, **kw)


# ============================================================================ element-wise
def ew_expr(op: str, v: str, w: str = "", approximate: str = "tanh") -> str:
    return {
        "add": f"{v} + {w}",
        "sub": f"{v} - {w}",
        "sign": f"({v} > 0.0f) ? 1.0f : (({v} < 0.0f) ? -1.0f : 0.0f)",
        "sin": f"sinf({v})",
        "relu": f"fmaxf({v}, 0.0f)",
        "gelu": (f"0.5f * {v} * (1.0f + tanhf(0.7978845608f * ({v} + 0.044715f * {v} * {v} * {v})))"
                 if approximate == "tanh" else f"0.5f * {v} * (1.0f + erff({v} * 0.7071067812f))"),
        "sigmoid": f"1.0f / (1.0f + expf(-{v}))",
    }[op]


TVM_EW = {  # TVM source-codegen spelling of the same expressions (hipified)
    "add": lambda a: f"({a('A')} + {a('B')})",
    "sub": lambda a: f"({a('A')} - {a('B')})",
    "sign": lambda a: (f"((0.000000e+00f < {a('A')}) ? 1.000000e+00f : (({a('A')} < 0.000000e+00f) ? "
                       f"-1.000000e+00f : 0.000000e+00f))"),
    "sin": lambda a: f"sinf({a('A')})",
    "relu": lambda a: f"max({a('A')}, 0.000000e+00f)",
    "sigmoid": lambda a: f"(1.000000e+00f / (1.000000e+00f + __expf((0.000000e+00f - {a('A')}))))",
}


def elementwise(op: str, shape: list[int], variant: str, attrs: dict | None = None) -> Entry:
    """variant: ggl (hipLaunchKernelGGL, bounds check), stride (grid-stride loop, <<<>>>),
    kernel (kernel-only), tvm (hipified TVM output), 2d (dim3(64, 4) blocks over [rows, cols])."""
    attrs = attrs or {}
    n = prod(shape)
    binary = op in ("add", "sub")
    ins = ["x", "y"] if binary else ["x"]
    tens = {"x": "x", "y": "y"}
    approx = attrs.get("approximate", "tanh")
    kname = f"{op}_forward"
    cparams = ", ".join(f"const float* __restrict__ {a}" for a in ins)
    if variant == "tvm":
        T = 256
        i = f"(({BX} * {T}) + {TX})"
        expr = TVM_EW[op](lambda b: f"{b}[{i}]")
        body = f"  T_{op}[{i}] = {expr};"
        if n % T:
            body = f"  if ({i} < {n}) {{\n  {body}\n  }}"
        kp = [f"float* __restrict__ T_{op}"] + [f"float* __restrict__ {b}" for b in ("A", "B")[:len(ins)]]
        kern = (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                f'{", ".join(kp)}) {{\n{body}\n}}\n')
        bufs = [Buf(b, "float", str(n)) for b in ("A", "B")[:len(ins)]] + [Buf(f"T_{op}", "float", str(n), "output")]
        launch = (f"  hipLaunchKernelGGL(default_function_kernel, dim3({cdiv(n, T)}), dim3({T}), 0, 0, d_T_{op}, "
                  + ", ".join(f"d_{b}" for b in ("A", "B")[:len(ins)]) + ");")
        src = HEAD + "\n" + kern + "\n" + wrap(f"{op}_kernel", bufs, [], launch)
        params = [ptr(b, F32, "input", shape, t) for b, t in zip(("A", "B"), ins)]
        params.append(ptr(f"T_{op}", F32, "output", shape, "out"))
        return Entry(op, nm(op, shape), shape, src, f"{op}_kernel", params, attrs)
    if variant == "2d":
        R, C = prod(shape[:-1]), shape[-1]
        expr = ew_expr(op, "x[idx]", "y[idx]", approx)
        kern = fill("""// 2-D launch over [rows, cols]: dim3 block(64, 4), one wavefront per row segment.
__global__ void ${k}(${cp}, float* __restrict__ out, int rows, int cols) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) {
    const int idx = row * cols + col;
    out[idx] = ${expr};
  }
}
""", k=kname, cp=cparams, expr=expr)
        bufs = [Buf(a, "float", "rows * cols") for a in ins] + [Buf("out", "float", "rows * cols", "output")]
        launch = ("  dim3 block(64, 4);\n  dim3 grid((cols + 63) / 64, (rows + 3) / 4);\n"
                  f"  hipLaunchKernelGGL({kname}, grid, block, 0, 0, "
                  + ", ".join(f"d_{a}" for a in ins) + ", d_out, rows, cols);")
        src = HEAD + "\n" + kern + "\n" + wrap(f"{op}_kernel", bufs, [("rows", "int"), ("cols", "int")], launch)
        params = [ptr(a, F32, "input", shape, tens[a]) for a in ins]
        params += [ptr("out", F32, "output", shape, "out"), scalar("rows", R), scalar("cols", C)]
        return Entry(op, nm(op, shape), shape, src, f"{op}_kernel", params, attrs)
    if variant == "stride":
        expr = ew_expr(op, "x[i]", "y[i]", approx)
        kern = fill("""// grid-stride loop: any grid size covers all n elements
__global__ void ${k}(${cp}, float* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = ${expr};
  }
}
""", k=kname, cp=cparams, expr=expr)
        launch = f"  {kname}<<<4, 256>>>(" + ", ".join(f"d_{a}" for a in ins) + ", d_out, n);"
    else:
        expr = ew_expr(op, "x[i]", "y[i]", approx)
        kern = fill("""__global__ void ${k}(${cp}, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = ${expr};
  }
}
""", k=kname, cp=cparams, expr=expr)
        launch = (f"  const int block = 256;\n  const int grid = (n + block - 1) / block;\n"
                  f"  hipLaunchKernelGGL({kname}, dim3(grid), dim3(block), 0, 0, "
                  + ", ".join(f"d_{a}" for a in ins) + ", d_out, n);")
    if variant == "kernel":
        params = [ptr(a, F32, "input", shape, tens[a]) for a in ins]
        params += [ptr("out", F32, "output", shape, "out"), scalar("n", n)]
        return Entry(op, nm(op, shape), shape, HEAD + "\n" + kern, kname, params, attrs,
                     launch={"grid": [cdiv(n, 256), 1, 1], "block": [256, 1, 1], "shmem": 0})
    bufs = [Buf(a, "float", "n") for a in ins] + [Buf("out", "float", "n", "output")]
    src = HEAD + "\n" + kern + "\n" + wrap(f"{op}_kernel", bufs, [("n", "int")], launch)
    params = [ptr(a, F32, "input", shape, tens[a]) for a in ins]
    params += [ptr("out", F32, "output", shape, "out"), scalar("n", n)]
    return Entry(op, nm(op, shape), shape, src, f"{op}_kernel", params, attrs)


def elementwise_entries() -> list[Entry]:
    return [
        elementwise("add", [18, 128], "ggl"), elementwise("add", [4, 256], "tvm"),
        elementwise("sub", [18, 128], "stride"), elementwise("sub", [3, 100], "ggl"),
        elementwise("sign", [32, 64], "kernel"), elementwise("sign", [5, 77], "tvm"),
        elementwise("sin", [18, 128], "ggl"), elementwise("sin", [8, 8, 16], "tvm"),
        elementwise("relu", [18, 128], "2d"), elementwise("relu", [4, 256], "tvm"),
        elementwise("gelu", [16, 96], "ggl", {"approximate": "tanh"}),
        elementwise("gelu", [4, 256], "stride", {"approximate": "none"}),
        elementwise("sigmoid", [18, 128], "kernel"), elementwise("sigmoid", [2, 3, 50], "2d"),
    ]


# ============================================================================ reductions
RED = {  # op -> (identity, combine statement on acc/other, finalisation of the total)
    "sum": ("0.0f", "{a} += {b};", lambda t, n: t),
    "mean": ("0.0f", "{a} += {b};", lambda t, n: f"{t} / (float){n}"),
    "max": ("-FLT_MAX", "{a} = fmaxf({a}, {b});", lambda t, n: t),
    "min": ("FLT_MAX", "{a} = fminf({a}, {b});", lambda t, n: t),
}


def reduce_rows(op: str, shape: list[int]) -> Entry:
    """Last-axis reduction of [R, C]: one 256-thread block per row; wavefront reduction with
    __shfl_down (warpSize-aware), per-wave partials in LDS, first wave finishes."""
    R, C = shape
    ident, comb, fin = RED[op]
    c = lambda a, b: comb.format(a=a, b=b)  # noqa: E731
    src = "#include <cfloat>\n" + HEAD + "\n" + fill("""__device__ inline float wave_reduce(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
    const float other = __shfl_down(v, offset);
    $comb_v
  }
  return v;  // lane 0 of the wavefront holds the result
}

// ${op} over the last axis: out[row] = ${op}(in[row, 0:cols]); one block per row.
__global__ void ${op}_rows(const float* __restrict__ in, float* __restrict__ out, int cols) {
  __shared__ float partial[32];  // one slot per wavefront (>= 1024 / warpSize)
  const float* row = in + (size_t)blockIdx.x * cols;
  float acc = $ident;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    $comb_row
  }
  acc = wave_reduce(acc);
  const int lane = threadIdx.x % warpSize;
  const int wave = threadIdx.x / warpSize;
  if (lane == 0) partial[wave] = acc;
  __syncthreads();
  if (wave == 0) {
    const int waves = blockDim.x / warpSize;
    acc = (lane < waves) ? partial[lane] : $ident;
    acc = wave_reduce(acc);
    if (lane == 0) out[blockIdx.x] = $res;
  }
}
""", op=op, ident=ident, comb_v=c("v", "other"), comb_row=c("acc", "row[j]"), res=fin("acc", "cols"))
    bufs = [Buf("x", "float", "rows * cols"), Buf("out", "float", "rows", "output")]
    launch = f"  hipLaunchKernelGGL({op}_rows, dim3(rows), dim3(256), 0, 0, d_x, d_out, cols);"
    src += "\n" + wrap(f"{op}_kernel", bufs, [("rows", "int"), ("cols", "int")], launch)
    params = [ptr("x", F32, "input", shape, "x"), ptr("out", F32, "output", [R], "out"),
              scalar("rows", R), scalar("cols", C)]
    return Entry(op, nm(op, shape), shape, src, f"{op}_kernel", params, {"axis": -1})


def reduce_middle(op: str, shape: list[int], axis: int) -> Entry:
    """Reduction over a middle/leading axis: one thread per (outer, inner) output, serial over
    the reduced axis; consecutive threads read consecutive inner elements."""
    axis %= len(shape)
    A_, B_, C_ = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
    ident, comb, fin = RED[op]
    src = "#include <cfloat>\n" + HEAD + "\n" + fill("""// in: [outer, len, inner] -> out: [outer, inner], reducing the middle axis
__global__ void ${op}_axis(const float* __restrict__ in, float* __restrict__ out, int outer, int len, int inner) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= outer * inner) return;
  const int o = idx / inner;
  const int i = idx % inner;
  const float* p = in + (size_t)o * len * inner + i;
  float acc = $ident;
  for (int k = 0; k < len; ++k) {
    $comb
  }
  out[idx] = $res;
}
""", op=op, ident=ident, comb=comb.format(a="acc", b="p[k * inner]"), res=fin("acc", "len"))
    bufs = [Buf("x", "float", "outer * len * inner"), Buf("out", "float", "outer * inner", "output")]
    launch = (f"  const int total = outer * inner;\n"
              f"  {op}_axis<<<(total + 127) / 128, 128>>>(d_x, d_out, outer, len, inner);")
    src += "\n" + wrap(f"{op}_kernel", bufs, [("outer", "int"), ("len", "int"), ("inner", "int")], launch)
    oshape = [s for i, s in enumerate(shape) if i != axis]
    params = [ptr("x", F32, "input", shape, "x"), ptr("out", F32, "output", oshape, "out"),
              scalar("outer", A_), scalar("len", B_), scalar("inner", C_)]
    return Entry(op, nm(op, shape), shape, src, f"{op}_kernel", params, {"axis": axis})


def reduction_entries() -> list[Entry]:
    return [
        reduce_rows("sum", [64, 256]), reduce_middle("sum", [8, 64, 32], 1),
        reduce_rows("mean", [32, 512]), reduce_middle("mean", [16, 48, 8], 1),
        reduce_rows("max", [64, 256]), reduce_middle("max", [96, 128], 0),
        reduce_rows("min", [32, 200]), reduce_middle("min", [8, 64, 32], 1),
    ]


# ============================================================================ matrix (MFMA)
def gemm_wave(M: int, K: int, N: int) -> Entry:
    """One wavefront per 16x16 tile, launched as dim3(16, 4) (lane = x + 16 y), operands read
    straight from global memory, one mfma_f32_16x16x4f32 per K step of 4."""
    assert M % 16 == 0 and N % 16 == 0 and K % 4 == 0
    src = HEAD + "\n" + MFMA_TYPES + """
// C[M, N] = A[M, K] * B[K, N], row-major float. Block dim3(16, 4) = one wavefront:
// lane (x, y) feeds A[row0 + x][k + y] and B[k + y][col0 + x]; it receives C[row0 + 4y + i][col0 + x].
__global__ void __launch_bounds__(64) gemm_mfma_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                       float* __restrict__ C, int M, int N, int K) {
  const int row0 = blockIdx.y * 16;
  const int col0 = blockIdx.x * 16;
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < K; k += 4) {
    const float a = A[(row0 + threadIdx.x) * K + k + threadIdx.y];
    const float b = B[(k + threadIdx.y) * N + col0 + threadIdx.x];
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, acc, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) {
    C[(row0 + 4 * threadIdx.y + i) * N + col0 + threadIdx.x] = acc[i];
  }
}
"""
    bufs = [Buf("A", "float", "M * K"), Buf("B", "float", "K * N"), Buf("C", "float", "M * N", "output")]
    launch = ("  dim3 grid(N / 16, M / 16);\n  dim3 block(16, 4);\n"
              "  hipLaunchKernelGGL(gemm_mfma_kernel, grid, block, 0, 0, d_A, d_B, d_C, M, N, K);")
    src += "\n" + wrap("gemm_kernel", bufs, [("M", "int"), ("K", "int"), ("N", "int")], launch)
    params = [ptr("A", F32, "input", [M, K], "A"), ptr("B", F32, "input", [K, N], "B"),
              ptr("C", F32, "output", [M, N], "C"), scalar("M", M), scalar("K", K), scalar("N", N)]
    return Entry("gemm", nm("gemm", [M, K, N]), [M, K, N], src, "gemm_kernel", params)


def gemm_lds(M: int, K: int, N: int) -> Entry:
    """32x32 block tile, 4 wavefronts (256 threads), K tiles of 16 staged in LDS; each wave
    owns one 16x16 quadrant and issues 4 MFMAs per tile. Sizes baked in."""
    assert M % 32 == 0 and N % 32 == 0 and K % 16 == 0
    src = HEAD + "\n" + MFMA_TYPES + fill("""
#define M_SIZE $M
#define N_SIZE $N
#define K_SIZE $K
#define TILE 32
#define KT 16

__global__ void __launch_bounds__(256) gemm_lds_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                       float* __restrict__ C) {
  __shared__ float a_lds[TILE][KT + 1];
  __shared__ float b_lds[KT][TILE + 1];
  const int tid = threadIdx.x;
  const int wave = tid / 64;
  const int lane = tid % 64;
  const int wm = (wave / 2) * 16;  // quadrant of the 32x32 tile
  const int wn = (wave % 2) * 16;
  const int row0 = blockIdx.y * TILE;
  const int col0 = blockIdx.x * TILE;
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k0 = 0; k0 < K_SIZE; k0 += KT) {
    for (int e = tid; e < TILE * KT; e += 256) {
      a_lds[e / KT][e % KT] = A[(row0 + e / KT) * K_SIZE + k0 + e % KT];
      b_lds[e / TILE][e % TILE] = B[(k0 + e / TILE) * N_SIZE + col0 + e % TILE];
    }
    __syncthreads();
    for (int kk = 0; kk < KT; kk += 4) {
      const float a = a_lds[wm + lane % 16][kk + lane / 16];
      const float b = b_lds[kk + lane / 16][wn + lane % 16];
      acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, acc, 0, 0, 0);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    C[(row0 + wm + 4 * (lane / 16) + i) * N_SIZE + col0 + wn + lane % 16] = acc[i];
  }
}
""", M=M, N=N, K=K)
    bufs = [Buf("A", "float", "M_SIZE * K_SIZE"), Buf("B", "float", "K_SIZE * N_SIZE"),
            Buf("C", "float", "M_SIZE * N_SIZE", "output")]
    launch = ("  dim3 grid(N_SIZE / TILE, M_SIZE / TILE);\n"
              "  gemm_lds_kernel<<<grid, 256>>>(d_A, d_B, d_C);")
    src += "\n" + wrap("gemm_kernel", bufs, [], launch, sync=True)
    params = [ptr("A", F32, "input", [M, K], "A"), ptr("B", F32, "input", [K, N], "B"),
              ptr("C", F32, "output", [M, N], "C")]
    return Entry("gemm", nm("gemm", [M, K, N]), [M, K, N], src, "gemm_kernel", params)


def bmm(Bt: int, I: int, J: int, K: int) -> Entry:
    """Batched MFMA GEMM: one 64-thread wavefront per 16x16 tile, grid (K/16, I/16, batch)."""
    assert I % 16 == 0 and K % 16 == 0 and J % 4 == 0
    src = HEAD + "\n" + MFMA_TYPES + """
// C[b] = A[b] (I x J) * B[b] (J x K)
__global__ void __launch_bounds__(64) bmm_mfma_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                      float* __restrict__ C, int I, int J, int K) {
  const int lane = threadIdx.x;
  const float* a_base = A + (size_t)blockIdx.z * I * J + (blockIdx.y * 16 + lane % 16) * J;
  const float* b_base = B + (size_t)blockIdx.z * J * K + blockIdx.x * 16 + lane % 16;
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < J; k += 4) {
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a_base[k + lane / 16], b_base[(k + lane / 16) * K], acc, 0, 0, 0);
  }
  float* c_base = C + (size_t)blockIdx.z * I * K + (blockIdx.y * 16 + 4 * (lane / 16)) * K + blockIdx.x * 16 + lane % 16;
  for (int i = 0; i < 4; ++i) c_base[i * K] = acc[i];
}
"""
    bufs = [Buf("A", "float", "batch * I * J"), Buf("B", "float", "batch * J * K"),
            Buf("C", "float", "batch * I * K", "output")]
    launch = ("  hipLaunchKernelGGL(bmm_mfma_kernel, dim3(K / 16, I / 16, batch), dim3(64), 0, 0,\n"
              "                     d_A, d_B, d_C, I, J, K);")
    src += "\n" + wrap("bmm_kernel", bufs, [("batch", "int"), ("I", "int"), ("J", "int"), ("K", "int")], launch)
    params = [ptr("A", F32, "input", [Bt, I, J], "A"), ptr("B", F32, "input", [Bt, J, K], "B"),
              ptr("C", F32, "output", [Bt, I, K], "C"), scalar("batch", Bt), scalar("I", I),
              scalar("J", J), scalar("K", K)]
    return Entry("bmm", nm("bmm", [Bt, I, J, K]), [Bt, I, J, K], src, "bmm_kernel", params)


def dense(M: int, K: int, N: int) -> Entry:
    """out = X W^T + bias with MFMA: B operand W^T[k][n] = W[n][k]; the accumulator starts at
    the bias (column L%16 of every D element a lane holds)."""
    assert M % 16 == 0 and N % 16 == 0 and K % 4 == 0
    src = HEAD + "\n" + MFMA_TYPES + """
// out[M, N] = X[M, K] * W[N, K]^T + bias[N]; 2 wavefronts per block (128 threads), one 16x16 tile each.
__global__ void __launch_bounds__(128) dense_mfma_kernel(const float* __restrict__ X, const float* __restrict__ W,
                                                         const float* __restrict__ bias, float* __restrict__ out,
                                                         int M, int N, int K) {
  const int wave = threadIdx.x / 64;
  const int lane = threadIdx.x % 64;
  const int row0 = blockIdx.y * 16;
  const int col0 = (blockIdx.x * 2 + wave) * 16;
  if (col0 >= N) return;  // the whole wavefront leaves
  const float bv = bias[col0 + lane % 16];
  floatx4 acc = {bv, bv, bv, bv};
  const float* x_row = X + (row0 + lane % 16) * K;
  const float* w_row = W + (col0 + lane % 16) * K;
  for (int k = 0; k < K; k += 4) {
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(x_row[k + lane / 16], w_row[k + lane / 16], acc, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) {
    out[(row0 + 4 * (lane / 16) + i) * N + col0 + lane % 16] = acc[i];
  }
}
"""
    bufs = [Buf("X", "float", "M * K"), Buf("W", "float", "N * K"), Buf("bias", "float", "N"),
            Buf("out", "float", "M * N", "output")]
    launch = ("  dim3 grid((N / 16 + 1) / 2, M / 16);\n"
              "  hipLaunchKernelGGL(dense_mfma_kernel, grid, dim3(128), 0, 0, d_X, d_W, d_bias, d_out, M, N, K);")
    src += "\n" + wrap("dense_kernel", bufs, [("M", "int"), ("K", "int"), ("N", "int")], launch)
    params = [ptr("X", F32, "input", [M, K], "X"), ptr("W", F32, "input", [N, K], "W"),
              ptr("bias", F32, "input", [N], "bias"), ptr("out", F32, "output", [M, N], "out"),
              scalar("M", M), scalar("K", K), scalar("N", N)]
    return Entry("dense", nm("dense", [M, K, N]), [M, K, N], src, "dense_kernel", params)


def gemv(M: int, N: int, rows_per_block: int) -> Entry:
    """One wavefront per row (warpSize lanes stride the row), __shfl_xor butterfly."""
    src = HEAD + "\n" + """// y[M] = A[M, N] * x[N]; blockDim.x / warpSize rows per block.
__global__ void gemv_wave_kernel(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                                 int M, int N) {
  const int lane = threadIdx.x % warpSize;
  const int row = blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize;
  if (row >= M) return;
  float sum = 0.0f;
  for (int j = lane; j < N; j += warpSize) sum += A[(size_t)row * N + j] * x[j];
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) sum += __shfl_xor(sum, mask);
  if (lane == 0) y[row] = sum;
}
"""
    T = 64 * rows_per_block
    bufs = [Buf("A", "float", "M * N"), Buf("x", "float", "N"), Buf("y", "float", "M", "output")]
    launch = (f"  const int rows_per_block = {rows_per_block};\n"
              f"  hipLaunchKernelGGL(gemv_wave_kernel, dim3((M + rows_per_block - 1) / rows_per_block), "
              f"dim3({T}), 0, 0, d_A, d_x, d_y, M, N);")
    src += "\n" + wrap("gemv_kernel", bufs, [("M", "int"), ("N", "int")], launch)
    params = [ptr("A", F32, "input", [M, N], "A"), ptr("x", F32, "input", [N], "x"),
              ptr("y", F32, "output", [M], "y"), scalar("M", M), scalar("N", N)]
    return Entry("gemv", nm("gemv", [M, N]), [M, N], src, "gemv_kernel", params)


def matrix_entries() -> list[Entry]:
    return [gemm_wave(32, 128, 128), gemm_lds(64, 256, 64), gemm_wave(48, 64, 80),
            bmm(2, 32, 64, 32), bmm(4, 16, 36, 48),
            dense(16, 128, 64), dense(32, 64, 48),
            gemv(128, 256, 4), gemv(96, 200, 2)]


# ============================================================================ convolution
def conv1d(OUT: int, IN: int) -> Entry:
    """Valid 1-D correlation, one thread per output, filter taps in registers from global."""
    KS = IN - OUT + 1
    src = HEAD + "\n" + """// out[i] = sum_k x[i + k] * w[k], i < out_len, k < in_len - out_len + 1
__global__ void conv1d_valid(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out,
                             int out_len, int taps) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= out_len) return;
  float acc = 0.0f;
  for (int k = 0; k < taps; ++k) acc = fmaf(x[i + k], w[k], acc);
  out[i] = acc;
}
"""
    bufs = [Buf("x", "float", "in_len"), Buf("w", "float", "in_len - out_len + 1"),
            Buf("out", "float", "out_len", "output")]
    launch = ("  const int taps = in_len - out_len + 1;\n"
              "  hipLaunchKernelGGL(conv1d_valid, dim3((out_len + 127) / 128), dim3(128), 0, 0, d_x, d_w, d_out, out_len, taps);")
    src += "\n" + wrap("conv1d_kernel", bufs, [("out_len", "int"), ("in_len", "int")], launch)
    params = [ptr("x", F32, "input", [IN], "x"), ptr("w", F32, "input", [KS], "w"),
              ptr("out", F32, "output", [OUT], "out"), scalar("out_len", OUT), scalar("in_len", IN)]
    return Entry("conv1d", nm("conv1d", [OUT, IN]), [OUT, IN], src, "conv1d_kernel", params)


def conv2d_nhwc(N, H, W, C, OC, KH, KW, IC, stride, pad) -> Entry:
    """NHWC / OHWI direct convolution with groups = C / IC: thread per output element,
    consecutive threads = consecutive output channels."""
    OH = (H + 2 * pad - KH) // stride + 1
    OW = (W + 2 * pad - KW) // stride + 1
    src = HEAD + "\n" + """typedef struct {
  int N, H, W, C, OC, KH, KW, IC, stride, pad, OH, OW;
} ConvParams;

// output[n][oh][ow][oc] = sum_{kh,kw,ic} input[n][ih][iw][g*IC + ic] * weight[oc][kh][kw][ic], g = oc / (OC / groups)
__global__ void conv2d_nhwc_direct(const float* __restrict__ input, const float* __restrict__ weight,
                                   float* __restrict__ output, ConvParams p) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const int total = p.N * p.OH * p.OW * p.OC;
  if (idx >= total) return;
  const int oc = idx % p.OC;
  const int ow = (idx / p.OC) % p.OW;
  const int oh = (idx / (p.OC * p.OW)) % p.OH;
  const int n = idx / (p.OC * p.OW * p.OH);
  const int groups = p.C / p.IC;
  const int g = oc / (p.OC / groups);
  const float* wp = weight + (size_t)oc * p.KH * p.KW * p.IC;
  float acc = 0.0f;
  for (int kh = 0; kh < p.KH; ++kh) {
    const int ih = oh * p.stride - p.pad + kh;
    if (ih < 0 || ih >= p.H) continue;
    for (int kw = 0; kw < p.KW; ++kw) {
      const int iw = ow * p.stride - p.pad + kw;
      if (iw < 0 || iw >= p.W) continue;
      const float* ip = input + (((size_t)n * p.H + ih) * p.W + iw) * p.C + g * p.IC;
      const float* wk = wp + (kh * p.KW + kw) * p.IC;
      for (int ic = 0; ic < p.IC; ++ic) acc += ip[ic] * wk[ic];
    }
  }
  output[idx] = acc;
}
"""
    bufs = [Buf("input", "float", "N * H * W * C"), Buf("weight", "float", "OC * KH * KW * IC"),
            Buf("output", "float", "N * OH * OW * OC", "output")]
    launch = ("  ConvParams p;\n"
              "  p.N = N; p.H = H; p.W = W; p.C = C; p.OC = OC; p.KH = KH; p.KW = KW; p.IC = IC;\n"
              "  p.stride = stride; p.pad = pad; p.OH = OH; p.OW = OW;\n"
              "  const int total = N * OH * OW * OC;\n"
              "  hipLaunchKernelGGL(conv2d_nhwc_direct, dim3((total + 255) / 256), dim3(256), 0, 0, d_input, d_weight, d_output, p);")
    names = ("N", "H", "W", "C", "OC", "KH", "KW", "IC", "stride", "pad")
    wrapper = wrap("conv2d_kernel", bufs, [(s, "int") for s in names], launch)
    head, rest = wrapper.split("{\n", 1)
    wrapper = (head + "{\n  const int OH = (H + 2 * pad - KH) / stride + 1;\n"
               "  const int OW = (W + 2 * pad - KW) / stride + 1;\n" + rest)
    src += "\n" + wrapper
    args = [N, H, W, C, OC, KH, KW, IC, stride, pad]
    params = [ptr("input", F32, "input", [N, H, W, C], "input"),
              ptr("weight", F32, "input", [OC, KH, KW, IC], "weight"),
              ptr("output", F32, "output", [N, OH, OW, OC], "output")]
    params += [scalar(s, v) for s, v in zip(names, args)]
    return Entry("conv2d", nm("conv2d", args), args, src, "conv2d_kernel", params)


def conv2d_nchw(N, C, H, W, OC, IC, KH, KW, stride, pad) -> Entry:
    """NCHW / OIHW: 2-D thread blocks over the output plane (dim3(16, 16)), grid z = n * OC;
    the filter of the block's output channel is staged in LDS. Sizes baked in as constants."""
    OH = (H + 2 * pad - KH) // stride + 1
    OW = (W + 2 * pad - KW) // stride + 1
    src = HEAD + "\n" + fill("""constexpr int N_ = $N, C_ = $C, H_ = $H, W_ = $W, OC_ = $OC, KH_ = $KH, KW_ = $KW;
constexpr int STRIDE = $stride, PAD = $pad, OH_ = $OH, OW_ = $OW;

__global__ void __launch_bounds__(256) conv2d_nchw_tiled(const float* __restrict__ input, const float* __restrict__ weight,
                                                         float* __restrict__ output) {
  __shared__ float w_lds[C_ * KH_ * KW_];
  const int n = blockIdx.z / OC_;
  const int oc = blockIdx.z % OC_;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  for (int i = tid; i < C_ * KH_ * KW_; i += blockDim.x * blockDim.y) w_lds[i] = weight[oc * C_ * KH_ * KW_ + i];
  __syncthreads();
  const int ow = blockIdx.x * blockDim.x + threadIdx.x;
  const int oh = blockIdx.y * blockDim.y + threadIdx.y;
  if (oh >= OH_ || ow >= OW_) return;
  float acc = 0.0f;
  for (int ic = 0; ic < C_; ++ic) {
    for (int kh = 0; kh < KH_; ++kh) {
      const int ih = oh * STRIDE - PAD + kh;
      for (int kw = 0; kw < KW_; ++kw) {
        const int iw = ow * STRIDE - PAD + kw;
        const bool inside = ih >= 0 && ih < H_ && iw >= 0 && iw < W_;
        const float v = inside ? input[((n * C_ + ic) * H_ + ih) * W_ + iw] : 0.0f;
        acc += v * w_lds[(ic * KH_ + kh) * KW_ + kw];
      }
    }
  }
  output[((n * OC_ + oc) * OH_ + oh) * OW_ + ow] = acc;
}
""", N=N, C=C, H=H, W=W, OC=OC, KH=KH, KW=KW, stride=stride, pad=pad, OH=OH, OW=OW)
    bufs = [Buf("input", "float", "N_ * C_ * H_ * W_"), Buf("weight", "float", "OC_ * C_ * KH_ * KW_"),
            Buf("output", "float", "N_ * OC_ * OH_ * OW_", "output")]
    launch = ("  dim3 block(16, 16);\n  dim3 grid((OW_ + 15) / 16, (OH_ + 15) / 16, N_ * OC_);\n"
              "  hipLaunchKernelGGL(conv2d_nchw_tiled, grid, block, 0, 0, d_input, d_weight, d_output);")
    src += "\n" + wrap("conv2dnchw_kernel", bufs, [], launch)
    args = [N, C, H, W, OC, IC, KH, KW, stride, pad]
    params = [ptr("input", F32, "input", [N, C, H, W], "input"),
              ptr("weight", F32, "input", [OC, IC, KH, KW], "weight"),
              ptr("output", F32, "output", [N, OC, OH, OW], "output")]
    return Entry("conv2dnchw", nm("conv2dnchw", args), args, src, "conv2dnchw_kernel", params)


def depthwise(H: int, K: int, C: int, kernel_only: bool) -> Entry:
    """HWC depthwise (valid): grid (O, O), one thread per channel, filter taps from global."""
    O = H - K + 1
    src = HEAD + "\n" + """// out[i][j][c] = sum_{p,q} x[i+p][j+q][c] * w[p][q][c]
__global__ void depthwise_hwc(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out,
                              int H, int K, int C) {
  const int c = threadIdx.x;
  const int j = blockIdx.x;
  const int i = blockIdx.y;
  const int O = H - K + 1;
  if (c >= C) return;
  float acc = 0.0f;
  for (int p = 0; p < K; ++p) {
    for (int q = 0; q < K; ++q) {
      acc += x[((i + p) * H + (j + q)) * C + c] * w[(p * K + q) * C + c];
    }
  }
  out[(i * O + j) * C + c] = acc;
}
"""
    if kernel_only:
        params = [ptr("x", F32, "input", [H, H, C], "x"), ptr("w", F32, "input", [K, K, C], "w"),
                  ptr("out", F32, "output", [O, O, C], "out"), scalar("H", H), scalar("K", K), scalar("C", C)]
        return Entry("depthwiseconv", nm("depthwiseconv", [H, K, C]), [H, K, C], src, "depthwise_hwc", params,
                     launch={"grid": [O, O, 1], "block": [C, 1, 1], "shmem": 0})
    bufs = [Buf("x", "float", "H * H * C"), Buf("w", "float", "K * K * C"),
            Buf("out", "float", "(H - K + 1) * (H - K + 1) * C", "output")]
    launch = ("  const int O = H - K + 1;\n"
              "  hipLaunchKernelGGL(depthwise_hwc, dim3(O, O), dim3(C), 0, 0, d_x, d_w, d_out, H, K, C);")
    src += "\n" + wrap("depthwiseconv_kernel", bufs, [("H", "int"), ("K", "int"), ("C", "int")], launch)
    params = [ptr("x", F32, "input", [H, H, C], "x"), ptr("w", F32, "input", [K, K, C], "w"),
              ptr("out", F32, "output", [O, O, C], "out"), scalar("H", H), scalar("K", K), scalar("C", C)]
    return Entry("depthwiseconv", nm("depthwiseconv", [H, K, C]), [H, K, C], src, "depthwiseconv_kernel", params)


def conv_entries() -> list[Entry]:
    return [conv1d(256, 260), conv1d(300, 307),
            conv2d_nhwc(1, 14, 14, 16, 32, 3, 3, 16, 1, 1), conv2d_nhwc(2, 9, 9, 8, 16, 3, 3, 4, 2, 0),
            conv2d_nchw(1, 8, 16, 16, 16, 8, 3, 3, 1, 1), conv2d_nchw(2, 4, 12, 12, 8, 4, 3, 3, 2, 1),
            depthwise(16, 3, 32, False), depthwise(10, 5, 16, True)]


# ============================================================================ normalisation
WAVE_SUM = """__device__ inline float wave_sum(float v) {
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) v += __shfl_xor(v, mask);
  return v;  // every lane holds the wavefront total
}

// block-wide sum, result in every thread; `lds` needs one float per wavefront
__device__ float block_sum(float v, float* lds) {
  const int lane = threadIdx.x % warpSize;
  const int wave = threadIdx.x / warpSize;
  const int waves = (blockDim.x + warpSize - 1) / warpSize;
  v = wave_sum(v);
  if (lane == 0) lds[wave] = v;
  __syncthreads();
  float total = 0.0f;
  for (int i = 0; i < waves; ++i) total += lds[i];
  __syncthreads();
  return total;
}
"""


def batchnorm_infer(N, C, H, W) -> Entry:
    """Inference batch norm with running statistics: per-channel scale/shift folded in the
    kernel, one thread per element, 2-D grid (HW blocks, N*C planes)."""
    src = HEAD + "\n" + """__global__ void batchnorm_inference(const float* __restrict__ x, const float* __restrict__ mean,
                                    const float* __restrict__ var, const float* __restrict__ gamma,
                                    const float* __restrict__ beta, float* __restrict__ y, int C, int HW, float eps) {
  const int plane = blockIdx.y;  // n * C + c
  const int c = plane % C;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= HW) return;
  const float scale = gamma[c] / sqrtf(var[c] + eps);
  const float shift = beta[c] - mean[c] * scale;
  y[(size_t)plane * HW + i] = x[(size_t)plane * HW + i] * scale + shift;
}
"""
    bufs = [Buf("x", "float", "N * C * H * W"), Buf("mean", "float", "C"), Buf("var", "float", "C"),
            Buf("gamma", "float", "C"), Buf("beta", "float", "C"), Buf("out", "float", "N * C * H * W", "output")]
    launch = ("  const int HW = H * W;\n"
              "  hipLaunchKernelGGL(batchnorm_inference, dim3((HW + 63) / 64, N * C), dim3(64), 0, 0,\n"
              "                     d_x, d_mean, d_var, d_gamma, d_beta, d_out, C, HW, 1e-5f);")
    src += "\n" + wrap("batchnorm_kernel", bufs, [("N", "int"), ("C", "int"), ("H", "int"), ("W", "int")], launch)
    args = [N, C, H, W]
    params = [ptr("x", F32, "input", args, "x"), ptr("mean", F32, "input", [C], "mean"),
              ptr("var", F32, "input", [C], "var"), ptr("gamma", F32, "input", [C], "gamma"),
              ptr("beta", F32, "input", [C], "beta"), ptr("out", F32, "output", args, "out"),
              scalar("N", N), scalar("C", C), scalar("H", H), scalar("W", W)]
    return Entry("batchnorm", nm("batchnorm", args), args, src, "batchnorm_kernel", params,
                 {"eps": 1e-5, "layout": "NCHW"})


def batchnorm_train(N, C, H, W) -> Entry:
    """Training-mode batch norm (batch statistics): one 256-thread block per channel,
    wavefront + LDS reductions for the mean and the centred variance."""
    src = HEAD + "\n" + WAVE_SUM + """
__global__ void __launch_bounds__(256) batchnorm_training(const float* __restrict__ x, const float* __restrict__ gamma,
                                                          const float* __restrict__ beta, float* __restrict__ y,
                                                          int N, int C, int HW, float eps) {
  __shared__ float lds[32];
  const int c = blockIdx.x;
  const int count = N * HW;
  float s = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s += x[((i / HW) * C + c) * HW + i % HW];
  const float mean = block_sum(s, lds) / count;
  float q = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const float d = x[((i / HW) * C + c) * HW + i % HW] - mean;
    q += d * d;
  }
  const float var = block_sum(q, lds) / count;
  const float scale = gamma[c] * rsqrtf(var + eps);
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const int idx = ((i / HW) * C + c) * HW + i % HW;
    y[idx] = (x[idx] - mean) * scale + beta[c];
  }
}
"""
    bufs = [Buf("x", "float", "N * C * H * W"), Buf("gamma", "float", "C"), Buf("beta", "float", "C"),
            Buf("out", "float", "N * C * H * W", "output")]
    launch = "  batchnorm_training<<<C, 256>>>(d_x, d_gamma, d_beta, d_out, N, C, H * W, 1e-5f);"
    src += "\n" + wrap("batchnorm_kernel", bufs, [("N", "int"), ("C", "int"), ("H", "int"), ("W", "int")], launch)
    args = [N, C, H, W]
    params = [ptr("x", F32, "input", args, "x"), ptr("gamma", F32, "input", [C], "gamma"),
              ptr("beta", F32, "input", [C], "beta"), ptr("out", F32, "output", args, "out"),
              scalar("N", N), scalar("C", C), scalar("H", H), scalar("W", W)]
    return Entry("batchnorm", nm("batchnorm", args), args, src, "batchnorm_kernel", params,
                 {"eps": 1e-5, "layout": "NCHW"})


def layernorm(shape: list[int]) -> Entry:
    """Layer norm over the last axis, one wavefront per row: the host asks the device for its
    wavefront size (hipDeviceProp_t::warpSize) and launches that many threads per block; two-pass
    statistics with __shfl_xor; the row stays in registers (cols <= 32 * 8 covers wave32 too)."""
    rows, cols = prod(shape[:-1]), shape[-1]
    per = cdiv(cols, 32)
    assert per <= 8
    src = HEAD + "\n" + fill("""#define COLS $cols
#define MAX_VALS_PER_LANE $per  // for a 32-lane wavefront; a 64-lane one uses half

// blockDim.x == warpSize: one wavefront per row
__global__ void layernorm_wave(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y, float eps) {
  const int lane = threadIdx.x;
  const float* xr = x + (size_t)blockIdx.x * COLS;
  float* yr = y + (size_t)blockIdx.x * COLS;
  float v[MAX_VALS_PER_LANE];
  float s = 0.0f;
  for (int i = 0; i < MAX_VALS_PER_LANE; ++i) {
    const int j = lane + i * warpSize;
    v[i] = (j < COLS) ? xr[j] : 0.0f;
    s += v[i];
  }
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) s += __shfl_xor(s, mask);
  const float mean = s / COLS;
  float q = 0.0f;
  for (int i = 0; i < MAX_VALS_PER_LANE; ++i) {
    const int j = lane + i * warpSize;
    const float d = (j < COLS) ? v[i] - mean : 0.0f;
    q += d * d;
  }
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) q += __shfl_xor(q, mask);
  const float rstd = rsqrtf(q / COLS + eps);
  for (int i = 0; i < MAX_VALS_PER_LANE; ++i) {
    const int j = lane + i * warpSize;
    if (j < COLS) yr[j] = (v[i] - mean) * rstd * gamma[j] + beta[j];
  }
}
""", cols=cols, per=per)
    bufs = [Buf("x", "float", "rows * COLS"), Buf("gamma", "float", "COLS"), Buf("beta", "float", "COLS"),
            Buf("out", "float", "rows * COLS", "output")]
    launch = ("  hipDeviceProp_t prop;\n  hipGetDeviceProperties(&prop, 0);\n"
              "  hipLaunchKernelGGL(layernorm_wave, dim3(rows), dim3(prop.warpSize), 0, 0, d_x, d_gamma, d_beta, d_out, 1e-5f);")
    src += "\n" + wrap("layernorm_kernel", bufs, [("rows", "int")], launch)
    params = [ptr("x", F32, "input", shape, "x"), ptr("gamma", F32, "input", [cols], "gamma"),
              ptr("beta", F32, "input", [cols], "beta"), ptr("out", F32, "output", shape, "out"),
              scalar("rows", rows)]
    return Entry("layernorm", nm("layernorm", shape), shape, src, "layernorm_kernel", params,
                 {"axis": -1, "eps": 1e-5})


def rmsnorm(R: int, Cn: int) -> Entry:
    """RMSNorm: one 256-thread block per row, sum of squares by wavefront + LDS, row cached in
    dynamic LDS (extern __shared__)."""
    src = HEAD + "\n" + WAVE_SUM + """
__global__ void rmsnorm_rows(const float* __restrict__ x, const float* __restrict__ weight, float* __restrict__ y,
                             int cols, float eps) {
  extern __shared__ float row_lds[];          // cols floats, then 32 partials
  float* partial = row_lds + cols;
  const float* xr = x + (size_t)blockIdx.x * cols;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = xr[j];
    row_lds[j] = v;
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss, partial) / cols + eps);
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    y[(size_t)blockIdx.x * cols + j] = row_lds[j] * inv * weight[j];
  }
}
"""
    bufs = [Buf("x", "float", "rows * cols"), Buf("weight", "float", "cols"), Buf("out", "float", "rows * cols", "output")]
    launch = ("  const size_t lds_bytes = (cols + 32) * sizeof(float);\n"
              "  hipLaunchKernelGGL(rmsnorm_rows, dim3(rows), dim3(256), lds_bytes, 0, d_x, d_weight, d_out, cols, 1e-5f);")
    src += "\n" + wrap("rmsnorm_kernel", bufs, [("rows", "int"), ("cols", "int")], launch)
    params = [ptr("x", F32, "input", [R, Cn], "x"), ptr("weight", F32, "input", [Cn], "weight"),
              ptr("out", F32, "output", [R, Cn], "out"), scalar("rows", R), scalar("cols", Cn)]
    return Entry("rmsnorm", nm("rmsnorm", [R, Cn]), [R, Cn], src, "rmsnorm_kernel", params, {"eps": 1e-5})


def instancenorm(N, C, H, W) -> Entry:
    """Instance norm: one block per (n, c) plane, block_sum helper, gamma/beta per channel."""
    src = HEAD + "\n" + WAVE_SUM + """
__global__ void __launch_bounds__(128) instancenorm_planes(const float* __restrict__ x, const float* __restrict__ gamma,
                                                           const float* __restrict__ beta, float* __restrict__ y,
                                                           int C, int HW, float eps) {
  __shared__ float lds[32];
  const int c = blockIdx.x % C;
  const float* xp = x + (size_t)blockIdx.x * HW;
  float* yp = y + (size_t)blockIdx.x * HW;
  float s = 0.0f;
  for (int i = threadIdx.x; i < HW; i += blockDim.x) s += xp[i];
  const float mean = block_sum(s, lds) / HW;
  float q = 0.0f;
  for (int i = threadIdx.x; i < HW; i += blockDim.x) {
    const float d = xp[i] - mean;
    q += d * d;
  }
  const float rstd = rsqrtf(block_sum(q, lds) / HW + eps);
  for (int i = threadIdx.x; i < HW; i += blockDim.x) yp[i] = (xp[i] - mean) * rstd * gamma[c] + beta[c];
}
"""
    bufs = [Buf("x", "float", "N * C * H * W"), Buf("gamma", "float", "C"), Buf("beta", "float", "C"),
            Buf("out", "float", "N * C * H * W", "output")]
    launch = "  hipLaunchKernelGGL(instancenorm_planes, dim3(N * C), dim3(128), 0, 0, d_x, d_gamma, d_beta, d_out, C, H * W, 1e-5f);"
    src += "\n" + wrap("instancenorm_kernel", bufs, [("N", "int"), ("C", "int"), ("H", "int"), ("W", "int")], launch)
    args = [N, C, H, W]
    params = [ptr("x", F32, "input", args, "x"), ptr("gamma", F32, "input", [C], "gamma"),
              ptr("beta", F32, "input", [C], "beta"), ptr("out", F32, "output", args, "out"),
              scalar("N", N), scalar("C", C), scalar("H", H), scalar("W", W)]
    return Entry("instancenorm", nm("instancenorm", args), args, src, "instancenorm_kernel", params,
                 {"eps": 1e-5, "layout": "NCHW"})


def softmax_wave(shape: list[int]) -> Entry:
    """Row softmax, one wavefront per row (4 rows per 256-thread block), strided lanes,
    __shfl_xor max/sum."""
    rows, cols = prod(shape[:-1]), shape[-1]
    src = "#include <cfloat>\n" + HEAD + "\n" + """__global__ void __launch_bounds__(256) softmax_rows_wave(const float* __restrict__ x, float* __restrict__ y,
                                                         int rows, int cols) {
  const int waves_per_block = blockDim.x / warpSize;
  const int row = blockIdx.x * waves_per_block + threadIdx.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float* yr = y + (size_t)row * cols;
  float m = -FLT_MAX;
  for (int j = lane; j < cols; j += warpSize) m = fmaxf(m, xr[j]);
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) m = fmaxf(m, __shfl_xor(m, mask));
  float s = 0.0f;
  for (int j = lane; j < cols; j += warpSize) s += expf(xr[j] - m);
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) s += __shfl_xor(s, mask);
  const float inv = 1.0f / s;
  for (int j = lane; j < cols; j += warpSize) yr[j] = expf(xr[j] - m) * inv;
}
"""
    bufs = [Buf("x", "float", "rows * cols"), Buf("out", "float", "rows * cols", "output")]
    launch = "  hipLaunchKernelGGL(softmax_rows_wave, dim3((rows + 3) / 4), dim3(256), 0, 0, d_x, d_out, rows, cols);"
    src += "\n" + wrap("softmax_kernel", bufs, [("rows", "int"), ("cols", "int")], launch)
    params = [ptr("x", F32, "input", shape, "x"), ptr("out", F32, "output", shape, "out"),
              scalar("rows", rows), scalar("cols", cols)]
    return Entry("softmax", nm("softmax", shape), shape, src, "softmax_kernel", params, {"axis": -1})


def softmax_block(shape: list[int]) -> Entry:
    """Row softmax, one block per row with the row in dynamic LDS; block max / sum through a
    shared tree reduction (kernel-only file: the case carries the launch)."""
    rows, cols = prod(shape[:-1]), shape[-1]
    T = 128
    src = HEAD + "\n" + """// dynamic LDS: cols floats of the row + blockDim.x floats of scratch
__global__ void softmax_block_lds(const float* __restrict__ x, float* __restrict__ y, int cols) {
  extern __shared__ float lds[];
  float* row = lds;
  float* red = lds + cols;
  const int tid = threadIdx.x;
  float m = -3.402823466e+38f;
  for (int j = tid; j < cols; j += blockDim.x) {
    row[j] = x[(size_t)blockIdx.x * cols + j];
    m = fmaxf(m, row[j]);
  }
  red[tid] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int j = tid; j < cols; j += blockDim.x) {
    row[j] = __expf(row[j] - m);
    sum += row[j];
  }
  red[tid] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  const float inv = 1.0f / red[0];
  for (int j = tid; j < cols; j += blockDim.x) y[(size_t)blockIdx.x * cols + j] = row[j] * inv;
}
"""
    params = [ptr("x", F32, "input", shape, "x"), ptr("y", F32, "output", shape, "out"), scalar("cols", cols)]
    return Entry("softmax", nm("softmax", shape), shape, src, "softmax_block_lds", params, {"axis": -1},
                 launch={"grid": [rows, 1, 1], "block": [T, 1, 1], "shmem": (cols + T) * 4})


def norm_entries() -> list[Entry]:
    return [batchnorm_infer(2, 16, 8, 8), batchnorm_train(4, 8, 6, 6),
            layernorm([32, 128]), layernorm([4, 16, 96]),
            rmsnorm(32, 256), rmsnorm(16, 320),
            instancenorm(2, 8, 16, 16), instancenorm(1, 16, 10, 10),
            softmax_wave([64, 128]), softmax_block([8, 16, 100]), softmax_wave([4, 6, 200])]


# ============================================================================ pooling
def pool(kind: str, args: list[int], style: str) -> Entry:
    """NHWC pooling without padding. style: 'flat' (thread per output element, sizes as
    arguments), 'block' (grid (OW, OH, N), one thread per channel), 'kernel' (flat, kernel-only)."""
    N, H, W, C, KH, KW, SH, SW = args
    OH, OW = (H - KH) // SH + 1, (W - KW) // SW + 1
    init = {"max": "-FLT_MAX", "min": "FLT_MAX", "avg": "0.0f", "sum": "0.0f"}[kind]
    upd = {"max": "acc = fmaxf(acc, v);", "min": "acc = fminf(acc, v);", "avg": "acc += v;", "sum": "acc += v;"}[kind]
    res = "acc / (float)(KH * KW)" if kind == "avg" else "acc"
    op = f"{kind}pool"
    kname = f"{kind}_pool2d_nhwc"
    if style == "block":
        src = "#include <cfloat>\n" + HEAD + "\n" + fill("""// grid (OW, OH, N), block C threads: out[n][oh][ow][c] = $kind over the KH x KW window
__global__ void ${k}(const float* __restrict__ in, float* __restrict__ out, int H, int W, int C,
                    int KH, int KW, int SH, int SW) {
  const int c = threadIdx.x;
  const int ow = blockIdx.x, oh = blockIdx.y, n = blockIdx.z;
  const int OW = gridDim.x, OH = gridDim.y;
  float acc = $init;
  for (int kh = 0; kh < KH; ++kh) {
    for (int kw = 0; kw < KW; ++kw) {
      const float v = in[(((size_t)n * H + oh * SH + kh) * W + ow * SW + kw) * C + c];
      $upd
    }
  }
  out[(((size_t)n * OH + oh) * OW + ow) * C + c] = $res;
}
""", k=kname, kind=kind, init=init, upd=upd, res=res)
        launch = (f"  dim3 grid(OW, OH, N);\n"
                  f"  hipLaunchKernelGGL({kname}, grid, dim3(C), 0, 0, d_x, d_out, H, W, C, KH, KW, SH, SW);")
    else:
        src = "#include <cfloat>\n" + HEAD + "\n" + fill("""__global__ void ${k}(const float* __restrict__ in, float* __restrict__ out, int N, int H, int W, int C,
                    int KH, int KW, int SH, int SW, int OH, int OW) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= N * OH * OW * C) return;
  const int c = idx % C;
  const int ow = (idx / C) % OW;
  const int oh = (idx / (C * OW)) % OH;
  const int n = idx / (C * OW * OH);
  float acc = $init;
  for (int kh = 0; kh < KH; ++kh) {
    for (int kw = 0; kw < KW; ++kw) {
      const float v = in[((n * H + oh * SH + kh) * W + ow * SW + kw) * C + c];
      $upd
    }
  }
  out[idx] = $res;
}
""", k=kname, init=init, upd=upd, res=res)
        launch = (f"  const int total = N * OH * OW * C;\n"
                  f"  {kname}<<<(total + 255) / 256, 256>>>(d_x, d_out, N, H, W, C, KH, KW, SH, SW, OH, OW);")
    names = ("N", "H", "W", "C", "KH", "KW", "SH", "SW")
    if style == "kernel":
        total = N * OH * OW * C
        params = [ptr("in", F32, "input", [N, H, W, C], "x"), ptr("out", F32, "output", [N, OH, OW, C], "out")]
        params += [scalar(s, v) for s, v in zip(names, args)] + [scalar("OH", OH), scalar("OW", OW)]
        return Entry(op, nm(op, args), args, src, kname, params,
                     launch={"grid": [cdiv(total, 256), 1, 1], "block": [256, 1, 1], "shmem": 0})
    bufs = [Buf("x", "float", "N * H * W * C"), Buf("out", "float", "N * OH * OW * C", "output")]
    wrapper = wrap(f"{op}_kernel", bufs, [(s, "int") for s in names], launch)
    head, rest = wrapper.split("{\n", 1)
    wrapper = head + "{\n  const int OH = (H - KH) / SH + 1;\n  const int OW = (W - KW) / SW + 1;\n" + rest
    src += "\n" + wrapper
    params = [ptr("x", F32, "input", [N, H, W, C], "x"), ptr("out", F32, "output", [N, OH, OW, C], "out")]
    params += [scalar(s, v) for s, v in zip(names, args)]
    return Entry(op, nm(op, args), args, src, f"{op}_kernel", params)


def pool_entries() -> list[Entry]:
    a1, a2 = [1, 16, 16, 32, 2, 2, 2, 2], [2, 12, 12, 16, 3, 3, 1, 1]
    return [pool("max", a1, "block"), pool("max", a2, "flat"),
            pool("avg", a1, "flat"), pool("avg", a2, "block"),
            pool("min", a1, "kernel"), pool("min", a2, "block"),
            pool("sum", a1, "flat"), pool("sum", [1, 9, 9, 24, 3, 3, 2, 2], "block")]


# ============================================================================ layout
def gather(shape: list[int], axis: int, k: int, idx64: bool) -> Entry:
    """index_select along ``axis``: out[o][i][p] = data[o][indices[i]][p]."""
    pre, dim, post = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
    it = "int64_t" if idx64 else "int"
    src = ("#include <stdint.h>\n" if idx64 else "") + HEAD + "\n" + fill("""__global__ void gather_rows(const float* __restrict__ data, const $it* __restrict__ indices, float* __restrict__ out,
                            int outer, int dim, int num, int inner) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= outer * num * inner) return;
  const int p = idx % inner;
  const int i = (idx / inner) % num;
  const int o = idx / (inner * num);
  const $it src_row = indices[i];
  out[idx] = data[((size_t)o * dim + src_row) * inner + p];
}
""", it=it)
    oshape = shape[:axis] + [k] + shape[axis + 1:]
    bufs = [Buf("data", "float", "outer * dim * inner"), Buf("indices", it, "num"),
            Buf("out", "float", "outer * num * inner", "output")]
    launch = ("  const int total = outer * num * inner;\n"
              "  hipLaunchKernelGGL(gather_rows, dim3((total + 255) / 256), dim3(256), 0, 0, d_data, d_indices, d_out, outer, dim, num, inner);")
    src += "\n" + wrap("gather_kernel", bufs, [("outer", "int"), ("dim", "int"), ("num", "int"), ("inner", "int")], launch)
    params = [ptr("data", F32, "input", shape, "data"),
              ptr("indices", "int64" if idx64 else "int32", "input", [k], "indices"),
              ptr("out", F32, "output", oshape, "out"),
              scalar("outer", pre), scalar("dim", dim), scalar("num", k), scalar("inner", post)]
    return Entry("gather", nm("gather", shape), shape, src, "gather_kernel", params,
                 {"axis": axis, "mode": "take", "num_indices": k})


def scatter(shape: list[int], axis: int, k: int) -> Entry:
    """Index copy: hipMemcpy device-to-device of data into out, then one thread per update."""
    pre, dim, post = prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])
    src = HEAD + "\n" + """// out[o][indices[i]][p] = updates[o][i][p]  (out already holds data)
__global__ void scatter_updates(const int* __restrict__ indices, const float* __restrict__ updates,
                                float* __restrict__ out, int outer, int dim, int num, int inner) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= outer * num * inner) return;
  const int p = idx % inner;
  const int i = (idx / inner) % num;
  const int o = idx / (inner * num);
  out[((size_t)o * dim + indices[i]) * inner + p] = updates[idx];
}
"""
    ushape = shape[:axis] + [k] + shape[axis + 1:]
    bufs = [Buf("data", "float", "outer * dim * inner"), Buf("indices", "int", "num"),
            Buf("updates", "float", "outer * num * inner"), Buf("out", "float", "outer * dim * inner", "output")]
    launch = ("  hipMemcpy(d_out, d_data, outer * dim * inner * sizeof(float), hipMemcpyDeviceToDevice);\n"
              "  const int total = outer * num * inner;\n"
              "  hipLaunchKernelGGL(scatter_updates, dim3((total + 127) / 128), dim3(128), 0, 0, d_indices, d_updates, d_out, outer, dim, num, inner);")
    src += "\n" + wrap("scatter_kernel", bufs, [("outer", "int"), ("dim", "int"), ("num", "int"), ("inner", "int")], launch)
    params = [ptr("data", F32, "input", shape, "data"), ptr("indices", "int32", "input", [k], "indices"),
              ptr("updates", F32, "input", ushape, "updates"), ptr("out", F32, "output", shape, "out"),
              scalar("outer", pre), scalar("dim", dim), scalar("num", k), scalar("inner", post)]
    return Entry("scatter", nm("scatter", shape), shape, src, "scatter_kernel", params,
                 {"axis": axis, "mode": "take", "num_indices": k})


def concat(shape: list[int], axis: int, sizes: list[int], style: str) -> Entry:
    """style 'copy': one launch per input writing its slab at an offset; 'tvm': TVM-generated,
    single kernel with selects."""
    pre, post = prod(shape[:axis]), prod(shape[axis + 1:])
    tot_ax = sum(sizes)
    total = pre * tot_ax * post
    ishapes = []
    for s in sizes:
        e = list(shape)
        e[axis] = s
        ishapes.append(e)
    oshape = list(shape)
    oshape[axis] = tot_ax
    attrs = {"axis": axis, "num_inputs": len(sizes)}
    if any(s != shape[axis] for s in sizes):
        attrs["sizes"] = sizes
    if style == "tvm":
        T = 256
        o = f"(({BX} * {T}) + {TX})"
        pos = f"(({o} % {tot_ax * post}) / {post})"
        starts = [sum(sizes[:i]) for i in range(len(sizes))]

        def load(i):
            return f"x{i}[((({o} / {tot_ax * post}) * {sizes[i] * post}) + ((({pos} - {starts[i]}) * {post}) + ({o} % {post})))]"
        expr = load(len(sizes) - 1)
        for i in range(len(sizes) - 2, -1, -1):
            expr = f"(({pos} < {starts[i + 1]}) ? {load(i)} : {expr})"
        stmt = f"T_concat[{o}] = {expr};"
        body = f"  if ({o} < {total}) {{\n    {stmt}\n  }}\n" if total % T else f"  {stmt}\n"
        ins = ", ".join(f"float* __restrict__ x{i}" for i in range(len(sizes)))
        src = HEAD + "\n" + (f'extern "C" __global__ void __launch_bounds__({T}) default_function_kernel('
                             f'float* __restrict__ T_concat, {ins}) {{\n{body}}}\n')
        bufs = [Buf(f"x{i}", "float", str(prod(e))) for i, e in enumerate(ishapes)]
        bufs.append(Buf("out", "float", str(total), "output"))
        launch = (f"  hipLaunchKernelGGL(default_function_kernel, dim3({cdiv(total, T)}), dim3({T}), 0, 0, d_out, "
                  + ", ".join(f"d_x{i}" for i in range(len(sizes))) + ");")
        src += "\n" + wrap("concat_kernel", bufs, [], launch)
    else:
        src = HEAD + "\n" + """// copy one input [outer, len, inner] into out [outer, total_len, inner] at axis offset `offset`
__global__ void concat_slab(const float* __restrict__ in, float* __restrict__ out, int outer, int len, int inner,
                            int total_len, int offset) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= outer * len * inner) return;
  const int p = idx % inner;
  const int j = (idx / inner) % len;
  const int o = idx / (inner * len);
  out[((size_t)o * total_len + offset + j) * inner + p] = in[idx];
}
"""
        bufs = [Buf(f"x{i}", "float", str(prod(e))) for i, e in enumerate(ishapes)]
        bufs.append(Buf("out", "float", str(total), "output"))
        lines = []
        off = 0
        for i, s in enumerate(sizes):
            n = pre * s * post
            lines.append(f"  hipLaunchKernelGGL(concat_slab, dim3({cdiv(n, 128)}), dim3(128), 0, 0, d_x{i}, d_out, "
                         f"{pre}, {s}, {post}, {tot_ax}, {off});")
            off += s
        src += "\n" + wrap("concat_kernel", bufs, [], "\n".join(lines), sync=True)
    params = [ptr(f"x{i}", F32, "input", e, f"x{i}") for i, e in enumerate(ishapes)]
    params.append(ptr("out", F32, "output", oshape, "out"))
    return Entry("concat", nm("concat", shape), shape, src, "concat_kernel", params, attrs)


def transpose_lds(R: int, Cc: int) -> Entry:
    """2-D transpose through a padded LDS tile (64 x 65: one wavefront wide), block dim3(64, 4)."""
    src = HEAD + "\n" + """#define TILE 64
#define ROWS_PER_PASS 4

__global__ void transpose_lds_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
    if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}
"""
    bufs = [Buf("x", "float", "rows * cols"), Buf("out", "float", "rows * cols", "output")]
    launch = ("  dim3 block(TILE, ROWS_PER_PASS);\n"
              "  dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);\n"
              "  hipLaunchKernelGGL(transpose_lds_kernel, grid, block, 0, 0, d_x, d_out, rows, cols);")
    src += "\n" + wrap("transpose_kernel", bufs, [("rows", "int"), ("cols", "int")], launch)
    params = [ptr("x", F32, "input", [R, Cc], "x"), ptr("out", F32, "output", [Cc, R], "out"),
              scalar("rows", R), scalar("cols", Cc)]
    return Entry("transpose", nm("transpose", [R, Cc]), [R, Cc], src, "transpose_kernel", params, {"perm": [1, 0]})


def transpose_nd(shape: list[int], perm: list[int], kernel_only: bool) -> Entry:
    """General permutation of a rank-3/4 tensor: strides passed in a struct by value, one
    thread per output element."""
    nd = len(shape)
    assert nd <= 4
    oshape = [shape[p] for p in perm]
    total = prod(shape)
    istr = [prod(shape[i + 1:]) for i in range(nd)]
    src = HEAD + "\n" + """struct PermuteArgs {
  int rank;
  int out_dims[4];
  int in_strides[4];  // input stride of the axis that becomes output axis i
};

__global__ void permute_kernel(const float* __restrict__ in, float* __restrict__ out, int total, PermuteArgs a) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  int rem = idx;
  int src = 0;
  for (int d = a.rank - 1; d >= 0; --d) {
    const int coord = rem % a.out_dims[d];
    rem /= a.out_dims[d];
    src += coord * a.in_strides[d];
  }
  out[idx] = in[src];
}
"""
    fill_lines = "  PermuteArgs a;\n" + f"  a.rank = {nd};\n"
    for i in range(4):
        fill_lines += (f"  a.out_dims[{i}] = {oshape[i] if i < nd else 1};"
                       f" a.in_strides[{i}] = {istr[perm[i]] if i < nd else 0};\n")
    name = nm("transpose", shape)
    if kernel_only:
        raise ValueError("permute_kernel takes a struct: give it a host wrapper")
    bufs = [Buf("x", "float", str(total)), Buf("out", "float", str(total), "output")]
    launch = fill_lines + f"  permute_kernel<<<{cdiv(total, 256)}, 256>>>(d_x, d_out, {total}, a);"
    src += "\n" + wrap("transpose_kernel", bufs, [], launch)
    params = [ptr("x", F32, "input", shape, "x"), ptr("out", F32, "output", oshape, "out")]
    return Entry("transpose", name, shape, src, "transpose_kernel", params, {"perm": perm})


def layout_entries() -> list[Entry]:
    return [gather([64, 32], 0, 20, False), gather([8, 16, 32], 1, 6, True),
            scatter([32, 16], 0, 8), scatter([4, 24, 8], 1, 5),
            concat([16, 32], 1, [32, 32], "copy"), concat([8, 12, 16], 1, [12, 4, 8], "tvm"),
            concat([6, 40], 0, [6, 6], "copy"),
            transpose_lds(64, 96), transpose_nd([8, 16, 32], [2, 0, 1], False),
            transpose_nd([4, 8, 16, 8], [0, 2, 1, 3], False)]


# ============================================================================ LLM
def mha(B: int, H: int, S: int, D: int) -> Entry:
    """Attention with MFMA: one wavefront per (batch*head, 16 query rows). Scores by
    16x16x4 MFMAs (B operand = K^T read from K rows), scaled scores in LDS, row softmax with
    4 lanes per row (__shfl_xor 16 / 32), then O = P V by MFMAs reading P from LDS."""
    assert S % 16 == 0 and D % 16 == 0
    src = "#include <cfloat>\n" + HEAD + "\n" + MFMA_TYPES + fill("""
#define SEQ $S
#define HEAD_DIM $D

// Q, K, V, O: [B * H, SEQ, HEAD_DIM] float. Grid (SEQ / 16, B * H), block = one wavefront (64).
__global__ void __launch_bounds__(64) mha_mfma_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                                      const float* __restrict__ V, float* __restrict__ O, float scale) {
  __shared__ float p_lds[16][SEQ + 1];
  const int lane = threadIdx.x;
  const int bh = blockIdx.y;
  const int q0 = blockIdx.x * 16;
  const float* q = Q + ((size_t)bh * SEQ + q0) * HEAD_DIM;
  const float* k = K + (size_t)bh * SEQ * HEAD_DIM;
  const float* v = V + (size_t)bh * SEQ * HEAD_DIM;

  for (int n0 = 0; n0 < SEQ; n0 += 16) {
    floatx4 s = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int kk = 0; kk < HEAD_DIM; kk += 4) {
      const float a = q[(lane % 16) * HEAD_DIM + kk + lane / 16];
      const float b = k[(n0 + lane % 16) * HEAD_DIM + kk + lane / 16];  // (K^T)[kk + lane/16][n0 + lane%16]
      s = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, s, 0, 0, 0);
    }
    for (int i = 0; i < 4; ++i) p_lds[4 * (lane / 16) + i][n0 + lane % 16] = s[i] * scale;
  }
  __syncthreads();

  const int r = lane % 16;
  const int part = lane / 16;
  float m = -FLT_MAX;
  for (int j = part; j < SEQ; j += 4) m = fmaxf(m, p_lds[r][j]);
  m = fmaxf(m, __shfl_xor(m, 16));
  m = fmaxf(m, __shfl_xor(m, 32));
  float sum = 0.0f;
  for (int j = part; j < SEQ; j += 4) {
    const float e = expf(p_lds[r][j] - m);
    p_lds[r][j] = e;
    sum += e;
  }
  sum += __shfl_xor(sum, 16);
  sum += __shfl_xor(sum, 32);
  const float inv = 1.0f / sum;
  for (int j = part; j < SEQ; j += 4) p_lds[r][j] *= inv;
  __syncthreads();

  for (int d0 = 0; d0 < HEAD_DIM; d0 += 16) {
    floatx4 o = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int n = 0; n < SEQ; n += 4) {
      o = __builtin_amdgcn_mfma_f32_16x16x4f32(p_lds[lane % 16][n + lane / 16],
                                               v[(n + lane / 16) * HEAD_DIM + d0 + lane % 16], o, 0, 0, 0);
    }
    for (int i = 0; i < 4; ++i) {
      O[((size_t)bh * SEQ + q0 + 4 * (lane / 16) + i) * HEAD_DIM + d0 + lane % 16] = o[i];
    }
  }
}
""", S=S, D=D)
    cnt = "batch * heads * SEQ * HEAD_DIM"
    bufs = [Buf("Q", "float", cnt), Buf("K", "float", cnt), Buf("V", "float", cnt), Buf("out", "float", cnt, "output")]
    launch = ("  const float scale = 1.0f / sqrtf((float)HEAD_DIM);\n"
              "  hipLaunchKernelGGL(mha_mfma_kernel, dim3(SEQ / 16, batch * heads), dim3(64), 0, 0, d_Q, d_K, d_V, d_out, scale);")
    src += "\n" + wrap("mha_kernel", bufs, [("batch", "int"), ("heads", "int")], launch)
    shp = [B, H, S, D]
    params = [ptr("Q", F32, "input", shp, "Q"), ptr("K", F32, "input", shp, "K"), ptr("V", F32, "input", shp, "V"),
              ptr("out", F32, "output", shp, "out"), scalar("batch", B), scalar("heads", H)]
    return Entry("mha", nm("mha", shp), shp, src, "mha_kernel", params)


def gqa(B: int, H: int, M: int, Kd: int, N: int, G: int | None = None) -> Entry:
    """Grouped-query attention, float SIMT: one 256-thread block per (batch, head), each
    wavefront (warpSize lanes) takes query rows; lanes own keys (scores) and then head dims."""
    G = G or max(1, H // 4)
    assert Kd <= 64 and H % G == 0
    src = "#include <cfloat>\n" + HEAD + "\n" + fill("""#define NUM_KEYS $N
#define HEAD_DIM $Kd
#define BLOCK 256

__global__ void __launch_bounds__(BLOCK) gqa_wave_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                                             const float* __restrict__ V, float* __restrict__ out,
                                                             int heads, int kv_heads, int M, float scale) {
  __shared__ float p_lds[BLOCK / 32][NUM_KEYS];  // one row per wavefront (wave32 or wave64)
  const int b = blockIdx.y;
  const int h = blockIdx.x;
  const int g = h / (heads / kv_heads);
  const int wave = threadIdx.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  const int waves = blockDim.x / warpSize;
  const float* kg = K + (size_t)(b * kv_heads + g) * NUM_KEYS * HEAD_DIM;
  const float* vg = V + (size_t)(b * kv_heads + g) * NUM_KEYS * HEAD_DIM;
  // all waves run the same number of iterations, so the barriers below stay block-uniform
  for (int m0 = 0; m0 < M; m0 += waves) {
    const int m = m0 + wave;
    const bool active = m < M;
    const float* qr = Q + ((size_t)(b * heads + h) * M + (active ? m : 0)) * HEAD_DIM;
    float mx = -FLT_MAX;
    for (int j = lane; j < NUM_KEYS; j += warpSize) {
      float s = 0.0f;
      for (int d = 0; d < HEAD_DIM; ++d) s += qr[d] * kg[j * HEAD_DIM + d];
      s *= scale;
      p_lds[wave][j] = s;
      mx = fmaxf(mx, s);
    }
    for (int mask = warpSize / 2; mask > 0; mask >>= 1) mx = fmaxf(mx, __shfl_xor(mx, mask));
    float sum = 0.0f;
    for (int j = lane; j < NUM_KEYS; j += warpSize) {
      const float e = expf(p_lds[wave][j] - mx);
      p_lds[wave][j] = e;
      sum += e;
    }
    for (int mask = warpSize / 2; mask > 0; mask >>= 1) sum += __shfl_xor(sum, mask);
    __syncthreads();
    if (active) {
      for (int d = lane; d < HEAD_DIM; d += warpSize) {
        float acc = 0.0f;
        for (int j = 0; j < NUM_KEYS; ++j) acc += p_lds[wave][j] * vg[j * HEAD_DIM + d];
        out[((size_t)(b * heads + h) * M + m) * HEAD_DIM + d] = acc / sum;
      }
    }
    __syncthreads();
  }
}
""", N=N, Kd=Kd)
    bufs = [Buf("Q", "float", "batch * heads * M * HEAD_DIM"), Buf("K", "float", "batch * kv_heads * NUM_KEYS * HEAD_DIM"),
            Buf("V", "float", "batch * kv_heads * NUM_KEYS * HEAD_DIM"),
            Buf("out", "float", "batch * heads * M * HEAD_DIM", "output")]
    launch = ("  const float scale = 1.0f / sqrtf((float)HEAD_DIM);\n"
              "  hipLaunchKernelGGL(gqa_wave_kernel, dim3(heads, batch), dim3(BLOCK), 0, 0,\n"
              "                     d_Q, d_K, d_V, d_out, heads, kv_heads, M, scale);")
    src += "\n" + wrap("gqa_kernel", bufs, [("batch", "int"), ("heads", "int"), ("kv_heads", "int"), ("M", "int")], launch)
    args = [B, H, M, Kd, N]
    params = [ptr("Q", F32, "input", [B, H, M, Kd], "Q"), ptr("K", F32, "input", [B, G, N, Kd], "K"),
              ptr("V", F32, "input", [B, G, N, Kd], "V"), ptr("out", F32, "output", [B, H, M, Kd], "out"),
              scalar("batch", B), scalar("heads", H), scalar("kv_heads", G), scalar("M", M)]
    return Entry("gqa", nm("gqa", args), args, src, "gqa_kernel", params, {"kv_heads": G})


def gatemlp(Bm: int, K: int, N: int, waves: int) -> Entry:
    """out = silu(X A) * (X B) with two MFMA accumulators per wavefront sharing the X operand;
    ``waves`` wavefronts per block cover ``16 * waves`` output columns."""
    assert Bm % 16 == 0 and N % (16 * waves) == 0 and K % 4 == 0
    src = HEAD + "\n" + MFMA_TYPES + """
__global__ void gatemlp_mfma_kernel(const float* __restrict__ X, const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ out, int K, int N) {
  const int wave = threadIdx.x / 64;
  const int lane = threadIdx.x % 64;
  const int row0 = blockIdx.y * 16;
  const int col0 = (blockIdx.x * (blockDim.x / 64) + wave) * 16;
  floatx4 gate = {0.0f, 0.0f, 0.0f, 0.0f};
  floatx4 up = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < K; k += 4) {
    const float x = X[(row0 + lane % 16) * K + k + lane / 16];
    const float a = A[(k + lane / 16) * N + col0 + lane % 16];
    const float b = B[(k + lane / 16) * N + col0 + lane % 16];
    gate = __builtin_amdgcn_mfma_f32_16x16x4f32(x, a, gate, 0, 0, 0);
    up = __builtin_amdgcn_mfma_f32_16x16x4f32(x, b, up, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) {
    const float g = gate[i];
    out[(row0 + 4 * (lane / 16) + i) * N + col0 + lane % 16] = g / (1.0f + expf(-g)) * up[i];
  }
}
"""
    bufs = [Buf("X", "float", "batch * K"), Buf("A", "float", "K * N"), Buf("B", "float", "K * N"),
            Buf("out", "float", "batch * N", "output")]
    launch = (f"  const int waves = {waves};\n"
              "  dim3 grid(N / (16 * waves), batch / 16);\n"
              "  gatemlp_mfma_kernel<<<grid, dim3(64 * waves)>>>(d_X, d_A, d_B, d_out, K, N);")
    src += "\n" + wrap("gatemlp_kernel", bufs, [("batch", "int"), ("K", "int"), ("N", "int")], launch)
    args = [Bm, K, N]
    params = [ptr("X", F32, "input", [Bm, K], "X"), ptr("A", F32, "input", [K, N], "A"),
              ptr("B", F32, "input", [K, N], "B"), ptr("out", F32, "output", [Bm, N], "out"),
              scalar("batch", Bm), scalar("K", K), scalar("N", N)]
    return Entry("gatemlp", nm("gatemlp", args), args, src, "gatemlp_kernel", params)


DEFORM = """// Multi-scale deformable attention forward (Deformable DETR), HIP port.
__device__ inline float bilinear_sample(const float* __restrict__ value, int height, int width, int heads, int channels,
                                        float h, float w, int m, int c) {
  const int h0 = (int)floorf(h);
  const int w0 = (int)floorf(w);
  const float lh = h - h0;
  const float lw = w - w0;
  const int stride_w = heads * channels;
  const int stride_h = width * stride_w;
  const int base = m * channels + c;
  float acc = 0.0f;
  for (int dy = 0; dy < 2; ++dy) {
    const int y = h0 + dy;
    if (y < 0 || y >= height) continue;
    const float wy = dy ? lh : 1.0f - lh;
    for (int dx = 0; dx < 2; ++dx) {
      const int x = w0 + dx;
      if (x < 0 || x >= width) continue;
      const float wx = dx ? lw : 1.0f - lw;
      acc += wy * wx * value[y * stride_h + x * stride_w + base];
    }
  }
  return acc;
}

// value [N, S, M, D]; sampling_loc [N, Lq, M, L, P, 2] (x, y in [0, 1]); attn_weight [N, Lq, M, L, P]
// out [N, Lq, M * D]; one thread per output element.
__global__ void ms_deform_attn_forward(const float* __restrict__ value, const int64_t* __restrict__ spatial_shapes,
                                       const int64_t* __restrict__ level_start_index,
                                       const float* __restrict__ sampling_loc, const float* __restrict__ attn_weight,
                                       float* __restrict__ out, int batch, int spatial_size, int heads, int channels,
                                       int levels, int queries, int points) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= batch * queries * heads * channels) return;
  const int c = idx % channels;
  const int m = (idx / channels) % heads;
  const int q = (idx / (channels * heads)) % queries;
  const int b = idx / (channels * heads * queries);
  const float* value_b = value + (size_t)b * spatial_size * heads * channels;
  const int wbase = ((b * queries + q) * heads + m) * levels * points;
  float acc = 0.0f;
  for (int l = 0; l < levels; ++l) {
    const int H = (int)spatial_shapes[2 * l];
    const int W = (int)spatial_shapes[2 * l + 1];
    const float* value_l = value_b + (size_t)level_start_index[l] * heads * channels;
    for (int p = 0; p < points; ++p) {
      const int wi = wbase + l * points + p;
      const float x = sampling_loc[2 * wi] * W - 0.5f;
      const float y = sampling_loc[2 * wi + 1] * H - 0.5f;
      if (y > -1.0f && x > -1.0f && y < (float)H && x < (float)W) {
        acc += attn_weight[wi] * bilinear_sample(value_l, H, W, heads, channels, y, x, m, c);
      }
    }
  }
  out[idx] = acc;
}
"""


def deformable(N, M, D, Lq, L, P) -> Entry:
    shapes = [[2 ** (L + 1 - l)] * 2 for l in range(L)]
    S = sum(h * w for h, w in shapes)
    src = "#include <stdint.h>\n" + HEAD + "\n" + DEFORM
    bufs = [Buf("value", "float", "batch * spatial_size * heads * channels"),
            Buf("spatial_shapes", "int64_t", "levels * 2"), Buf("level_start_index", "int64_t", "levels"),
            Buf("sampling_loc", "float", "batch * queries * heads * levels * points * 2"),
            Buf("attn_weight", "float", "batch * queries * heads * levels * points"),
            Buf("out", "float", "batch * queries * heads * channels", "output")]
    launch = ("  const int total = batch * queries * heads * channels;\n"
              "  hipLaunchKernelGGL(ms_deform_attn_forward, dim3((total + 127) / 128), dim3(128), 0, 0,\n"
              "                     d_value, d_spatial_shapes, d_level_start_index, d_sampling_loc, d_attn_weight, d_out,\n"
              "                     batch, spatial_size, heads, channels, levels, queries, points);")
    names = ("batch", "spatial_size", "heads", "channels", "levels", "queries", "points")
    src += "\n" + wrap("deformable_kernel", bufs, [(s, "int") for s in names], launch)
    args = [N, M, D, Lq, L, P]
    params = [ptr("value", F32, "input", [N, S, M, D], "value"),
              ptr("spatial_shapes", "int64", "input", [L, 2], "spatial_shapes"),
              ptr("level_start_index", "int64", "input", [L], "level_start_index"),
              ptr("sampling_loc", F32, "input", [N, Lq, M, L, P, 2], "sampling_locations"),
              ptr("attn_weight", F32, "input", [N, Lq, M, L, P], "attention_weights"),
              ptr("out", F32, "output", [N, Lq, M * D], "out")]
    params += [scalar(s, v) for s, v in zip(names, (N, S, M, D, L, Lq, P))]
    return Entry("deformable", nm("deformable", args), args, src, "deformable_kernel", params,
                 {"spatial_shapes": shapes})


def llm_entries() -> list[Entry]:
    return [mha(1, 4, 32, 32), mha(2, 2, 64, 16),
            gqa(1, 8, 16, 32, 64), gqa(2, 4, 6, 64, 32),
            gatemlp(16, 64, 64, 1), gatemlp(32, 128, 64, 4),
            deformable(1, 4, 8, 16, 2, 4), deformable(2, 2, 16, 8, 3, 2)]


def build() -> list[Entry]:
    return (elementwise_entries() + reduction_entries() + matrix_entries() + conv_entries()
            + norm_entries() + pool_entries() + layout_entries() + llm_entries())


if __name__ == "__main__":
    sys.exit(main("hip", ".hip", build))
