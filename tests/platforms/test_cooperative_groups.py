"""Cooperative groups on the virtual device (platforms/common/gpu_runtime/xp_coop.h), CUDA and HIP.

Each kernel runs with ``xpiler.run_kernel`` and is checked against numpy; floating-point sums are
compared bit for bit with numpy replaying CUDA's algorithm (cg::reduce is a shfl_xor butterfly),
so the order of the operations is the hardware's. Every collective is a warp collective of the
scheduler: tiles of 4/8/16 followed by a warp-wide operation (which the old runtime merged into
one collective), coalesced_threads() inside divergent branches, exited lanes in strict mode.

The files are parsed for their entry's signature only (``program=``): the C front-end does not
read ``namespace cg = cooperative_groups;``, and what is tested here is the runtime. Each source
holds several kernels and is built once (cached by content).
"""
from __future__ import annotations

import numpy as np
import pytest

from xpiler.ir import errors
from xpiler.parse import parse_source
from xpiler.run import run_kernel

CUDA = r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;

// block reduce: tiles of 32 reduce, their leaders meet in shared memory, tile 0 reduces again
__global__ void block_reduce(const float *x, float *sum, float *mx, int n) {
  __shared__ float part[32];
  __shared__ float pmax[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  unsigned i = blockIdx.x * block.num_threads() + block.thread_rank();
  float v = i < (unsigned)n ? x[i] : 0.0f;
  float s = cg::reduce(tile, v, cg::plus<float>());
  float m = cg::reduce(tile, v, cg::greater<float>());
  if (tile.thread_rank() == 0) { part[tile.meta_group_rank()] = s; pmax[tile.meta_group_rank()] = m; }
  cg::thread_group g = block;          // type-erased: its sync is the block barrier
  g.sync();
  if (tile.meta_group_rank() == 0) {
    unsigned r = tile.thread_rank();
    float a = r < tile.meta_group_size() ? part[r] : 0.0f;
    float b = r < tile.meta_group_size() ? pmax[r] : -1e30f;
    a = cg::reduce(tile, a, [](float p, float q) { return p + q; });
    b = cg::reduce(tile, b, cg::greater<float>());
    if (r == 0) { sum[blockIdx.x] = a; mx[blockIdx.x] = b; }
  }
}

template <unsigned N>
__device__ float tile_sum_down(cg::thread_block_tile<N> t, float v) {
  for (unsigned o = N / 2; o > 0; o /= 2) v += t.shfl_down(v, o);
  return v;
}

// shfl_down reductions in tiles of 4, 8 and 16, each followed at once by a warp-wide shuffle
__global__ void tile_sums(const float *x, float *s4, float *s8, float *s16, float *lead4, float *lead16) {
  cg::thread_block block = cg::this_thread_block();
  unsigned i = block.thread_rank();
  auto t4 = cg::tiled_partition<4>(block);
  auto t8 = cg::tiled_partition<8>(block);
  auto t16 = cg::tiled_partition<16>(block);
  auto warp = cg::tiled_partition<32>(block);
  float a = tile_sum_down<4>(t4, x[i]);
  lead4[i] = warp.shfl(a, warp.thread_rank() & ~3u);
  float b = tile_sum_down<8>(t8, x[i]);
  float c = tile_sum_down<16>(t16, x[i]);
  lead16[i] = warp.shfl_xor(c, 16);
  if (t4.thread_rank() == 0) s4[t4.meta_group_rank()] = a;
  if (t8.thread_rank() == 0) s8[t8.meta_group_rank()] = b;
  if (t16.thread_rank() == 0) s16[t16.meta_group_rank()] = c;
}

// meta_group_rank / meta_group_size of tiles of the block and of a tile; dynamic tiles
__global__ void meta_ranks(const float *x, int *out, float *oct_sum) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::thread_block_tile<8> oct = cg::tiled_partition<8>(warp);
  auto sixteen = cg::tiled_partition<16>(block);
  cg::thread_group dyn = cg::tiled_partition(block, 8);
  unsigned i = block.thread_rank();
  out[i * 8 + 0] = warp.meta_group_rank();
  out[i * 8 + 1] = warp.meta_group_size();
  out[i * 8 + 2] = oct.meta_group_rank();
  out[i * 8 + 3] = oct.meta_group_size();
  out[i * 8 + 4] = sixteen.meta_group_rank();
  out[i * 8 + 5] = sixteen.meta_group_size();
  out[i * 8 + 6] = (int)dyn.thread_rank();
  out[i * 8 + 7] = (int)dyn.size();
  dyn.sync();
  float s = cg::reduce(oct, x[i], cg::plus<float>());
  if (oct.thread_rank() == 0) oct_sum[warp.meta_group_rank() * oct.meta_group_size() + oct.meta_group_rank()] = s;
}

// coalesced_threads() in both branches of a divergent if; a warp-aggregated atomic
__global__ void coalesced(const int *x, int *rank, int *size, int *sum, int *lead, int *ctr, int *packed) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = x[i];
  if (v > 0) {
    cg::coalesced_group g = cg::coalesced_threads();
    rank[i] = g.thread_rank();
    size[i] = g.size();
    sum[i] = cg::reduce(g, v, cg::plus<int>());
    lead[i] = g.shfl(v, 0);
    int base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(ctr, (int)g.size());
    base = g.shfl(base, 0);
    packed[base + g.thread_rank()] = (int)i;
  } else {
    cg::coalesced_group g = cg::coalesced_threads();
    rank[i] = 1000 + (int)g.thread_rank();
    size[i] = 1000 + (int)g.size();
    sum[i] = g.ballot(v < -5);
    lead[i] = g.shfl_down(v, 1);
  }
  __syncthreads();
}

// memcpy_async into shared memory, then scans over tiles of 16
__global__ void stage_scan(const int *x, int *inc, int *exc, int *exmax) {
  __shared__ int buf[128];
  cg::thread_block block = cg::this_thread_block();
  cg::memcpy_async(block, buf, x + blockIdx.x * 128, sizeof(int) * 128);
  cg::wait(block);
  auto t = cg::tiled_partition<16>(block);
  unsigned i = blockIdx.x * 128 + block.thread_rank();
  int v = buf[block.thread_rank()];
  inc[i] = cg::inclusive_scan(t, v);
  exc[i] = cg::exclusive_scan(t, v);
  exmax[i] = cg::exclusive_scan(t, v, cg::greater<int>());
}

// a grid-wide barrier: exact for one block launched cooperatively, an error otherwise
__global__ void grid_step(float *x, float *y, int n) {
  cg::grid_group grid = cg::this_grid();
  unsigned i = grid.thread_rank();
  if (i < (unsigned)n) x[i] = x[i] * 2.0f;
  grid.sync();
  if (i < (unsigned)n) y[i] = x[(i + 1) % n] + (grid.is_valid() ? 0.0f : 1000.0f);
}

// a lane of the tile has exited before the tile's reduce
__global__ void exited_lane(const float *x, float *out) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(block);
  if (block.thread_rank() == 5) return;
  float s = cg::reduce(tile, x[block.thread_rank()], cg::plus<float>());
  out[block.thread_rank()] = s;
}

extern "C" void grid_host(float *x, float *y, int n, int cooperative) {
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  if (cooperative) {
    void *args[] = {&dx, &dy, &n};
    cudaError_t e = cudaLaunchCooperativeKernel((void *)grid_step, dim3(1), dim3(n), args, 0, 0);
    if (e != cudaSuccess) { cudaFree(dx); cudaFree(dy); return; }
  } else {
    grid_step<<<1, n>>>(dx, dy, n);
  }
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}
'''

HIP = r'''
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;

// 64-lane tiles on a wavefront: reduce, ballot, halves, and tiles of 16 then the whole wave
__global__ void wave_ops(const float *x, float *wsum, float *hsum, unsigned long long *ballot, float *lead16) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<64> wave = cg::tiled_partition<64>(block);
  auto half = cg::tiled_partition<32>(block);
  auto t16 = cg::tiled_partition<16>(block);
  unsigned i = block.thread_rank();
  float v = x[i];
  float s = cg::reduce(wave, v, cg::plus<float>());
  float h = v;
  for (unsigned o = 16; o > 0; o /= 2) h += half.shfl_down(h, o);
  float q = v;
  for (unsigned o = 8; o > 0; o /= 2) q += t16.shfl_down(q, o);
  lead16[i] = wave.shfl(q, wave.thread_rank() & ~15u);
  unsigned long long b = wave.ballot(v > 0.5f);
  if (wave.thread_rank() == 0) { wsum[wave.meta_group_rank()] = s; ballot[wave.meta_group_rank()] = b; }
  if (half.thread_rank() == 0) hsum[half.meta_group_rank()] = h;
}

__global__ void wave_coalesced(const int *x, int *rank, int *size, int *sum) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = x[i];
  rank[i] = -1;
  if (v > 0) {
    cg::coalesced_group g = cg::coalesced_threads();
    rank[i] = g.thread_rank();
    size[i] = g.size();
    sum[i] = cg::reduce(g, v, cg::plus<int>());
  }
  __syncthreads();
}
'''


def _run(tmp_path, name, text, signature, args, **kw):
    """run_kernel on ``text`` with the entry ``signature`` parsed alone. The path is a fixed name
    (the source is passed as text): the build, keyed by the unit's text, is then cached."""
    del tmp_path
    path = f"test_cooperative_groups/{name}"
    platform = "hip" if name.endswith(".hip") else "cuda"
    stub = parse_source(signature, platform, path)
    return run_kernel(path, args=args, program=stub, source=text, **kw)


def _butterfly(v, width):
    """CUDA's tile reduce (coalesced_reduce): out = op(out, shfl_xor(out, m)), m = width/2 .. 1."""
    v = v.reshape(-1, width).astype(np.float32)
    lanes = np.arange(width)
    m = width // 2
    while m:
        v = (v + v[:, lanes ^ m]).astype(np.float32)
        m //= 2
    return v[:, 0]


def _shfl_down_sum(v, width):
    """tile.shfl_down loop (source out of the tile: the lane's own value); rank 0's result."""
    v = v.reshape(-1, width).astype(np.float32)
    lanes = np.arange(width)
    o = width // 2
    while o:
        src = np.where(lanes + o < width, lanes + o, lanes)
        v = (v + v[:, src]).astype(np.float32)
        o //= 2
    return v[:, 0]


def test_block_reduce_with_tiles_of_32(tmp_path):
    n = 700
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    sums, mx = np.zeros(3, np.float32), np.zeros(3, np.float32)
    _run(tmp_path, "cg.cu", CUDA, "__global__ void block_reduce(const float *x, float *sum, float *mx, int n) {}",
         [x, sums, mx, n], launch={"grid": (3, 1, 1), "block": (16, 16, 1)}, strict=True)
    xp = np.zeros(768, np.float32)
    xp[:n] = x
    parts = _butterfly(xp, 32).reshape(3, 8)
    second = np.zeros((3, 32), np.float32)
    second[:, :8] = parts
    np.testing.assert_array_equal(sums, _butterfly(second, 32))       # CUDA's order, bit for bit
    np.testing.assert_array_equal(mx, xp.reshape(3, 256).max(1))


def test_shfl_down_in_tiles_of_4_8_16_then_warp_wide(tmp_path):
    x = np.random.default_rng(2).random(128, dtype=np.float32)
    s4, s8, s16 = np.zeros(32, np.float32), np.zeros(16, np.float32), np.zeros(8, np.float32)
    lead4, lead16 = np.zeros(128, np.float32), np.zeros(128, np.float32)
    res = _run(tmp_path, "cg.cu", CUDA, "__global__ void tile_sums(const float *x, float *s4, float *s8, float *s16, "
               "float *lead4, float *lead16) {}", [x, s4, s8, s16, lead4, lead16],
               launch={"grid": (1, 1, 1), "block": (128, 1, 1)}, strict=True)
    assert not res.warnings
    np.testing.assert_array_equal(s4, _shfl_down_sum(x, 4))
    np.testing.assert_array_equal(s8, _shfl_down_sum(x, 8))
    np.testing.assert_array_equal(s16, _shfl_down_sum(x, 16))
    np.testing.assert_array_equal(lead4, np.repeat(s4, 4))
    # lane l of a warp reads lane l ^ 16: rank 0 of the other tile of 16 holds that tile's sum
    lanes = np.arange(128)
    np.testing.assert_array_equal(lead16[lanes % 16 == 0], s16.reshape(4, 2)[:, ::-1].reshape(-1))


def test_meta_group_rank_indexing_of_tiles_of_a_tile(tmp_path):
    x = np.random.default_rng(3).random(100, dtype=np.float32)
    out = np.zeros(100 * 8, np.int32)
    oct_sum = np.zeros(16, np.float32)
    _run(tmp_path, "cg.cu", CUDA, "__global__ void meta_ranks(const float *x, int *out, float *oct_sum) {}",
         [x, out, oct_sum], launch={"grid": (1, 1, 1), "block": (10, 10, 1)})
    out = out.reshape(100, 8)
    i = np.arange(100)
    np.testing.assert_array_equal(out[:, 0], i // 32)
    assert (out[:, 1] == 4).all()                  # ceil(100 / 32)
    np.testing.assert_array_equal(out[:, 2], (i % 32) // 8)   # rank within the parent tile of 32
    assert (out[:, 3] == 4).all()                  # 32 / 8
    np.testing.assert_array_equal(out[:, 4], i // 16)
    assert (out[:, 5] == 7).all()                  # ceil(100 / 16)
    np.testing.assert_array_equal(out[:, 6], i % 8)
    np.testing.assert_array_equal(out[:, 7], np.where(i >= 96, 4, 8))   # the last dynamic tile is partial
    # (the 13th tile of 8 has 4 threads: its reduce reads lanes that do not exist, undefined)
    np.testing.assert_array_equal(oct_sum[:12], _butterfly(x[:96], 8))


def test_coalesced_threads_in_divergent_branches(tmp_path):
    rng = np.random.default_rng(4)
    x = rng.integers(-9, 10, 128).astype(np.int32)
    x[64:96] = np.abs(x[64:96]) + 1               # warp 2: every lane takes the branch (a full group)
    x[96:] = -np.abs(x[96:]) - 1                  # warp 3: none does
    rank, size, total, lead = (np.full(128, -7, np.int32) for _ in range(4))
    ctr, packed = np.zeros(1, np.int32), np.full(128, -1, np.int32)
    _run(tmp_path, "cg.cu", CUDA, "__global__ void coalesced(const int *x, int *rank, int *size, int *sum, "
         "int *lead, int *ctr, int *packed) {}", [x, rank, size, total, lead, ctr, packed],
         launch={"grid": (2, 1, 1), "block": (64, 1, 1)}, strict=True)
    for w in range(4):
        lanes = np.arange(w * 32, w * 32 + 32)
        pos = lanes[x[lanes] > 0]
        neg = lanes[x[lanes] <= 0]
        np.testing.assert_array_equal(rank[pos], np.arange(len(pos)))
        assert (size[pos] == len(pos)).all()
        assert (total[pos] == x[pos].sum()).all()
        if len(pos):
            assert (lead[pos] == x[pos[0]]).all()
        np.testing.assert_array_equal(rank[neg], 1000 + np.arange(len(neg)))
        assert (size[neg] == 1000 + len(neg)).all()
        ballot = sum(1 << k for k, j in enumerate(neg) if x[j] < -5)
        assert (total[neg].astype(np.uint32) == ballot).all()
        # shfl_down(v, 1) in the group: the next member's value; the last member keeps its own
        np.testing.assert_array_equal(lead[neg], x[np.append(neg[1:], neg[-1:])] if len(neg) else [])
    count = int((x > 0).sum())
    assert ctr[0] == count
    assert sorted(packed[:count]) == list(np.flatnonzero(x > 0)) and (packed[count:] == -1).all()


def test_memcpy_async_and_tile_scans(tmp_path):
    x = np.random.default_rng(5).integers(-50, 50, 256).astype(np.int32)
    inc, exc, exmax = (np.zeros(256, np.int32) for _ in range(3))
    _run(tmp_path, "cg.cu", CUDA, "__global__ void stage_scan(const int *x, int *inc, int *exc, int *exmax) {}",
         [x, inc, exc, exmax], launch={"grid": (2, 1, 1), "block": (128, 1, 1)}, strict=True)
    t = x.reshape(-1, 16)
    np.testing.assert_array_equal(inc, np.cumsum(t, 1).reshape(-1))
    np.testing.assert_array_equal(exc, (np.cumsum(t, 1) - t).reshape(-1))
    runmax = np.maximum.accumulate(t, 1)
    want = np.concatenate([np.zeros((16, 1), np.int32), runmax[:, :-1]], 1)   # rank 0: int{}
    np.testing.assert_array_equal(exmax, want.reshape(-1))


def test_grid_sync_across_blocks_is_a_runtime_error_naming_it(tmp_path):
    x, y = np.ones(128, np.float32), np.zeros(128, np.float32)
    with pytest.raises(errors.KernelRuntimeError) as exc:
        _run(tmp_path, "cg.cu", CUDA, "__global__ void grid_step(float *x, float *y, int n) {}", [x, y, 128],
             launch={"grid": (2, 1, 1), "block": (64, 1, 1)}, timeout=20)
    msg = exc.value.message
    assert "grid_group::sync() (grid.sync())" in msg and "across 2 blocks" in msg, msg
    assert "one after another" in msg, msg


def test_grid_sync_of_one_block_is_exact_when_launched_cooperatively(tmp_path):
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    _run(tmp_path, "cg.cu", CUDA, "__global__ void grid_step(float *x, float *y, int n) {}", [x, y, 64],
         launch={"grid": (1, 1, 1), "block": (64, 1, 1)}, strict=True)   # a kernel entry: the driver's launch
    np.testing.assert_array_equal(y, np.roll(np.arange(64, dtype=np.float32) * 2, -1))
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    sig = 'extern "C" void grid_host(float *x, float *y, int n, int cooperative) {}'
    _run(tmp_path, "cg.cu", CUDA, sig, [x, y, 64, 1], strict=True)
    np.testing.assert_array_equal(y, np.roll(np.arange(64, dtype=np.float32) * 2, -1))
    with pytest.raises(errors.KernelRuntimeError, match=r"grid\.sync\(\)\) in kernel grid_step: the kernel was not "
                       r"launched with cudaLaunchCooperativeKernel"):
        _run(tmp_path, "cg.cu", CUDA, sig, [np.ones(64, np.float32), y, 64, 0])


def test_a_tile_collective_reading_an_exited_lane_is_named_in_strict_mode(tmp_path):
    x = np.ones(32, np.float32)
    out = np.zeros(32, np.float32)
    with pytest.raises(errors.XpilerError, match=r"thread_block_tile::shfl_xor: lane 21 reads lane 5, which did not "
                       r"take part"):
        _run(tmp_path, "cg.cu", CUDA, "__global__ void exited_lane(const float *x, float *out) {}", [x, out],
             launch={"grid": (1, 1, 1), "block": (32, 1, 1)}, strict=True)


def test_hip_64_lane_tiles(tmp_path):
    x = np.random.default_rng(6).random(128, dtype=np.float32)
    wsum, hsum = np.zeros(2, np.float32), np.zeros(4, np.float32)
    ballot, lead16 = np.zeros(2, np.uint64), np.zeros(128, np.float32)
    res = _run(tmp_path, "cg.hip", HIP, "__global__ void wave_ops(const float *x, float *wsum, float *hsum, "
               "unsigned long long *ballot, float *lead16) {}", [x, wsum, hsum, ballot, lead16],
               launch={"grid": (1, 1, 1), "block": (128, 1, 1)}, strict=True)
    assert not res.warnings
    np.testing.assert_array_equal(wsum, _butterfly(x, 64))
    np.testing.assert_array_equal(hsum, _shfl_down_sum(x, 32))
    np.testing.assert_array_equal(lead16, np.repeat(_shfl_down_sum(x, 16), 16))
    want = [sum(1 << k for k in range(64) if x[w * 64 + k] > 0.5) for w in range(2)]
    assert [int(b) for b in ballot] == want


def test_hip_coalesced_threads_on_a_64_lane_wavefront(tmp_path):
    x = np.random.default_rng(7).integers(-9, 10, 128).astype(np.int32)
    rank, size, total = (np.full(128, -7, np.int32) for _ in range(3))
    _run(tmp_path, "cg.hip", HIP, "__global__ void wave_coalesced(const int *x, int *rank, int *size, int *sum) {}",
         [x, rank, size, total], launch={"grid": (1, 1, 1), "block": (128, 1, 1)}, strict=True)
    for w in range(2):
        lanes = np.arange(w * 64, w * 64 + 64)
        pos = lanes[x[lanes] > 0]
        np.testing.assert_array_equal(rank[pos], np.arange(len(pos)))
        assert (size[pos] == len(pos)).all()
        assert (total[pos] == x[pos].sum()).all()
        assert (rank[lanes[x[lanes] <= 0]] == -1).all()
