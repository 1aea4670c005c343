"""Lifted CUDA kernels reaching task_bind (issue 16, cuda -> bang on real kernels): the shapes
of the clean-up input that kept the lifted kernel a call or its grid-stride loop sequential.
Each test runs the cuda -> bang plan's passes up to task_bind, without verification."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import PassRefused, apply_pass, parse_pipeline, run_pass
from passes.plans import load_passes
from xpiler.parse import parse_source
from xpiler.run import run_kernel
from xpiler.translate import PLANS

load_passes()

# mmcv's launch helper and 1-D kernel loop, with an early return inside the loop
KERNEL_LOOP = r"""
#include <cuda_runtime.h>
#define CUDA_1D_KERNEL_LOOP(i, n) \
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
#define THREADS_PER_BLOCK 256
inline int GET_BLOCKS(const int N, const int num_threads = THREADS_PER_BLOCK) {
  int optimal_block_num = (N + num_threads - 1) / num_threads;
  int max_block_num = 4096;
  return min(optimal_block_num, max_block_num);
}
"""

EARLY_RETURN = KERNEL_LOOP + r"""
template <typename T>
__global__ void gather_kernel(int b, int m, const T *x, const int *idx, T *out) {
  int bs_idx = blockIdx.y;
  CUDA_1D_KERNEL_LOOP(pt_idx, m) {
    if (bs_idx >= b) return;
    out[bs_idx * m + pt_idx] = x[idx[bs_idx * m + pt_idx]] * 2.0f;
  }
}
extern "C" void gather(const float *x, const int *idx, float *out, int b, int m) {
  float *d_x; int *d_idx; float *d_out;
  cudaMalloc(&d_x, (size_t) (b * m) * sizeof(float));
  cudaMalloc(&d_idx, (size_t) (b * m) * sizeof(int));
  cudaMalloc(&d_out, (size_t) (b * m) * sizeof(float));
  cudaMemcpy(d_x, x, (size_t) (b * m) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_idx, idx, (size_t) (b * m) * sizeof(int), cudaMemcpyHostToDevice);
  dim3 blocks(GET_BLOCKS(m, THREADS_PER_BLOCK), b);
  dim3 threads(THREADS_PER_BLOCK);
  gather_kernel<float><<<blocks, threads>>>(b, m, d_x, d_idx, d_out);
  cudaMemcpy(out, d_out, (size_t) (b * m) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x); cudaFree(d_idx); cudaFree(d_out);
}
"""

OPTIONAL_WEIGHT = KERNEL_LOOP + r"""
template <typename T>
__global__ void scale_kernel(const int nthreads, const T *input, const int *target,
                             const T *weight, T *output, const int num_classes) {
  CUDA_1D_KERNEL_LOOP(index, nthreads) {
    int n = index / num_classes;
    int t = target[n];
    output[index] = input[index] * 0.5f;
    if (weight != NULL) {
      output[index] *= weight[t];
    }
  }
}
extern "C" void scale(const float *input, const int *target, const float *weight, float *output,
                      int num_samples, int num_classes) {
  float *d_input; int *d_target; float *d_weight; float *d_output;
  int total = num_samples * num_classes;
  cudaMalloc(&d_input, (size_t) total * sizeof(float));
  cudaMalloc(&d_target, (size_t) num_samples * sizeof(int));
  cudaMalloc(&d_weight, (size_t) num_classes * sizeof(float));
  cudaMalloc(&d_output, (size_t) total * sizeof(float));
  cudaMemcpy(d_input, input, (size_t) total * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_target, target, (size_t) num_samples * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_weight, weight, (size_t) num_classes * sizeof(float), cudaMemcpyHostToDevice);
  scale_kernel<float><<<GET_BLOCKS(total), THREADS_PER_BLOCK>>>(total, d_input, d_target,
                                                                d_weight, d_output, num_classes);
  cudaMemcpy(output, d_output, (size_t) total * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_input); cudaFree(d_target); cudaFree(d_weight); cudaFree(d_output);
}
"""


def _until(prog, last: str):
    """The cuda -> bang plan's passes applied up to ``last`` (refused steps skipped, as the
    driver continues from the last program)."""
    plan = PLANS[("cuda", "bang")]
    for name, opts in parse_pipeline(plan if isinstance(plan, str) else plan[-1]):
        try:
            prog = apply_pass(name, prog, **opts).program
        except PassRefused:
            if name == last:
                raise
        if name == last:
            return prog
    raise AssertionError(f"{last} is not in the plan")


def _emit(prog) -> str:
    return platforms.module(prog.platform, "backend").emit(prog)


def test_early_return_in_grid_stride_loop_becomes_break_and_the_kernel_is_inlined(tmp_path):
    """``if (c) return;`` inside mmcv's CUDA_1D_KERNEL_LOOP: the lift's ``goto xp_skipN`` leaves
    the grid-stride loop, which ends the thread body; it was left a goto, so inline kept the
    lifted kernel a call and task_bind refused it (XP-TASK-BIND-006 call to
    'gather_kernel_float' whose effects are unknown)."""
    src = parse_source(EARLY_RETURN, "cuda", "g.cu")
    lifted = run_pass("loop_recovery", src)
    assert "goto xp_skip" in _emit(lifted)
    out = run_pass("goto_continue", lifted)
    text = _emit(out)
    assert "goto" not in text and "break;" in text
    inl = run_pass("inline", out)
    assert "gather_kernel_float(" not in _emit(inl).split('extern "C"')[1]
    b, m = 3, 300
    x = np.linspace(-1, 1, b * m).astype(np.float32)
    idx = np.random.default_rng(0).integers(0, b * m, b * m).astype(np.int32)
    want = [x, idx, np.zeros(b * m, np.float32), b, m]
    run_kernel(tmp_path / "a.cu", args=want, source=EARLY_RETURN, program=src)
    np.testing.assert_array_equal(want[2], x[idx] * 2.0)
    for k, prog in enumerate((out, inl)):
        got = [x, idx, np.zeros(b * m, np.float32), b, m]
        run_kernel(tmp_path / f"b{k}.cpp", args=got, source=_emit(prog), program=prog)
        np.testing.assert_array_equal(got[2], want[2])


def test_goto_out_of_a_loop_that_does_not_end_the_body_stays():
    text = r"""
static void kern(const float *x, float *o, int n) {
  for (int t = 0; t < 64; ++t) {
    for (int q = 0; q < 2; ++q) {
      if (t >= n) goto skip;
    }
    o[t] = x[t] * 2.0f;
    skip:
    ;
  }
}
extern "C" void k(const float *x, float *o, int n) { kern(x, o, n); }
"""
    prog = parse_source(text, "vnni", "t.cpp")
    out = apply_pass("goto_continue", prog)
    assert not out.changed and out.reason.code == "XP-GOTO-CONTINUE-002"


def test_min_of_the_launch_helper_and_a_null_weight_test_keep_the_loop_parallel():
    """mmcv's GET_BLOCKS returns the overloaded ``min(int, int)`` of the lift, which stayed a
    call in the grid extent (the normalised loop's bound was not an expression the analysis
    reads), and ``weight != NULL`` counted as an escape of the weight buffer: task_bind found no
    parallel loop (XP-TASK-BIND-001, loop 'xp_bx__iN' is not in canonical form)."""
    prog = _until(parse_source(OPTIONAL_WEIGHT, "cuda", "s.cu"), "loop_normalize")
    body = _emit(prog).split('extern "C"')[1]
    assert "min(" not in body and "xp_bx" not in body       # one counted loop 0..total
    out = run_pass("task_bind", prog)
    assert out.platform == "bang" and out.facts["task_bind"]["kernels"] >= 1


MACRO_GRID = r"""
#include <cuda_runtime.h>
#define THREADS 128
#define BLOCKS(N) (N + THREADS - 1) / THREADS
template <typename T>
__global__ void twice_kernel(const T *x, T *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * 2.0f;
}
extern "C" void twice(const float *x, float *y, int n) {
  float *d_x; float *d_y;
  cudaMalloc(&d_x, (size_t) n * sizeof(float));
  cudaMalloc(&d_y, (size_t) n * sizeof(float));
  cudaMemcpy(d_x, x, (size_t) n * sizeof(float), cudaMemcpyHostToDevice);
  twice_kernel<float><<<BLOCKS(n), THREADS>>>(d_x, d_y, n);
  cudaMemcpy(y, d_y, (size_t) n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x); cudaFree(d_y);
}
"""


def test_function_like_macro_in_the_launch_is_expanded():
    """``<<<BLOCKS(n), THREADS>>>`` with a function-like macro: the call stayed a call of
    unknown effects in the host code (XP-TASK-BIND-006 call to 'BLOCKS')."""
    prog = _until(parse_source(MACRO_GRID, "cuda", "m.cu"), "inline")
    body = _emit(prog).split('extern "C"')[1]
    assert "BLOCKS(" not in body and "(n + THREADS - 1) / THREADS" in body
    out = run_pass("task_bind", _until(parse_source(MACRO_GRID, "cuda", "m.cu"), "loop_normalize"))
    assert out.platform == "bang"


def test_macro_expansion_is_textual(tmp_path):
    """The body replaces the call as the preprocessor does (no parentheses added): with
    ``#define HALF(N) N / 2``, ``1000 / HALF(n)`` is ``1000 / n / 2``."""
    text = r"""
#define HALF(N) N / 2
#define STR(a) #a
static int scale(int v) { return v + 1; }
extern "C" void k(int *o, int n) {
  o[0] = 1000 / HALF(n);
  o[1] = scale(HALF(n + 4));
}
"""
    prog = parse_source(text, "vnni", "t.cpp")
    out = run_pass("inline", prog)
    body = _emit(out).split('extern "C"')[1]
    assert "HALF(" not in body and "scale(" not in body
    want, got = [np.zeros(2, np.int32), 10], [np.zeros(2, np.int32), 10]
    run_kernel(tmp_path / "a.cpp", args=want, source=text, program=prog)
    run_kernel(tmp_path / "b.cpp", args=got, source=_emit(out), program=out)
    assert list(want[0]) == [1000 // 10 // 2, 10 + 4 // 2 + 1]
    np.testing.assert_array_equal(got[0], want[0])


POINTER_WALK = r"""
extern "C" void im2col(const float *x, float *out, int n) {
  for (int r = 0; r < n; ++r) {
    float *o = out + r * 12;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) {
        if (j < 2)
          *o = x[r * 12 + i * 4 + j] * 2.0f;
        else
          *o = 0.0f;
        o += 1;
      }
    }
  }
}
"""


def test_pointer_walked_per_innermost_iteration_is_traced(tmp_path):
    """mmcv masked_im2col's ``*data_col_ptr = ..; data_col_ptr += mask_cnt;``: a local pointer
    advanced by a step at the end of the innermost body was an untraceable store
    (XP-TASK-BIND-006); each use now reads it at the closed-form offset."""
    from xpiler.translate import _copy, _verify
    from xpiler.verify import compare_arrays

    src = tmp_path / "w.cpp"
    src.write_text(POINTER_WALK)
    prog = parse_source(POINTER_WALK, "vnni", str(src))
    out = run_pass("task_bind", prog)
    text = platforms.module("bang", "backend").emit(out)
    assert "o += 1" not in text and out.facts["task_bind"]["kernels"] == 1
    n = 37
    args = [np.linspace(-1, 1, n * 12).astype(np.float32), np.full(n * 12, 7, np.float32), n]
    reference = _copy(args)
    run_kernel(src, args=reference, program=prog, timeout=60)
    ok, outputs, message = _verify(text, out, tmp_path / "w.mlu", prog, args, reference,
                                   True, 60, run_kernel, parse_source, compare_arrays)
    assert ok, (message, outputs)


ADVANCED_PARAMS = KERNEL_LOOP + r"""
template <typename T>
__global__ void pairs_kernel(int b, int n, const T *x, T *y) {
  int bs_idx = blockIdx.y;
  CUDA_1D_KERNEL_LOOP(pt_idx, n) {
    if (bs_idx >= b) return;
    x += bs_idx * n + pt_idx;
    y += bs_idx * n * 2 + pt_idx * 2;
    y[0] = x[0] * 2.0f;
    y[1] = x[0] + 1.0f;
  }
}
extern "C" void pairs(const float *x, float *y, int b, int n) {
  float *d_x; float *d_y;
  cudaMalloc(&d_x, (size_t) (b * n) * sizeof(float));
  cudaMalloc(&d_y, (size_t) (b * n * 2) * sizeof(float));
  cudaMemcpy(d_x, x, (size_t) (b * n) * sizeof(float), cudaMemcpyHostToDevice);
  dim3 blocks(GET_BLOCKS(n, THREADS_PER_BLOCK), b);
  dim3 threads(THREADS_PER_BLOCK);
  pairs_kernel<float><<<blocks, threads>>>(b, n, d_x, d_y);
  cudaMemcpy(y, d_y, (size_t) (b * n * 2) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x); cudaFree(d_y);
}
"""


def test_pointer_parameters_advanced_in_the_grid_stride_loop_are_traced(tmp_path):
    """mmcv's point-cloud kernels (three_nn, gather_points, ball_query) advance their pointer
    parameters at the top of CUDA_1D_KERNEL_LOOP (``x += bs_idx * n + pt_idx;``); after the
    lift each is a per-thread pointer local changed inside the grid-stride loop, a load
    task_bind could not trace (XP-TASK-BIND-006). The plan's pointer_offsets reads it as its
    buffer at an integer offset the loop advances (one per thread, so the accumulation across
    grid-stride iterations is kept)."""
    from xpiler.translate import _copy, _verify
    from xpiler.verify import compare_arrays

    src = tmp_path / "p.cu"
    src.write_text(ADVANCED_PARAMS)
    prog = parse_source(ADVANCED_PARAMS, "cuda", str(src))
    lowered = _until(prog, "loop_normalize")
    body = _emit(lowered).split('extern "C"')[1]
    assert "__xp_off_x" in body and "__xp_off_y" in body
    out = run_pass("task_bind", lowered)
    text = platforms.module("bang", "backend").emit(out)
    assert out.platform == "bang" and out.facts["task_bind"]["kernels"] >= 1
    b, n = 3, 300
    args = [np.linspace(-1, 1, b * n).astype(np.float32), np.full(b * n * 2, 7, np.float32), b, n]
    reference = _copy(args)
    run_kernel(src, args=reference, program=prog, timeout=60)
    np.testing.assert_array_equal(reference[1][0::2], args[0] * 2.0)
    ok, outputs, message = _verify(text, out, tmp_path / "p.mlu", prog, args, reference,
                                   True, 60, run_kernel, parse_source, compare_arrays)
    assert ok, (message, outputs)
