// xp_coop.h - a minimal cooperative_groups (CUDA <cooperative_groups.h>, HIP
// <hip/hip_cooperative_groups.h>) on the virtual device's barrier and warp collectives:
// this_thread_block(), tiled_partition<N>() (N a power of two <= warpSize), tile shuffles/votes,
// cooperative_groups::reduce with plus/less/greater. Grid-wide sync is not emulated.
#pragma once
#include "xp_gpu_device.h"

namespace cooperative_groups {

inline unsigned __xp_linear_tid() { return threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y; }

struct thread_block {
  void sync() const { __syncthreads(); }
  unsigned thread_rank() const { return __xp_linear_tid(); }
  unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  unsigned num_threads() const { return size(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 group_dim() const { return blockDim; }
  dim3 dim_threads() const { return blockDim; }
};
inline thread_block this_thread_block() { return thread_block(); }
inline void sync(const thread_block &g) { g.sync(); }

template <unsigned N>
struct thread_block_tile {
  static_assert(N > 0 && N <= (unsigned)warpSize && (N & (N - 1)) == 0, "tile size must be a power of two <= warpSize");
  static unsigned lane() { return __xp_linear_tid() % (unsigned)warpSize; }
  static unsigned long long mask() {
    unsigned long long m = N == 64 ? ~0ull : ((1ull << N) - 1);
    return m << (lane() / N * N);
  }
  unsigned thread_rank() const { return lane() % N; }
  unsigned size() const { return N; }
  unsigned num_threads() const { return N; }
  unsigned meta_group_rank() const { return __xp_linear_tid() / N; }
  unsigned meta_group_size() const { return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N; }
  void sync() const { __syncwarp(mask()); }
  template <class T> T shfl(T v, int src) const { return xp::gpu::shfl(mask(), v, xp::gpu::SHFL_IDX, src, (int)N); }
  template <class T> T shfl_down(T v, unsigned d) const { return xp::gpu::shfl(mask(), v, xp::gpu::SHFL_DOWN, d, (int)N); }
  template <class T> T shfl_up(T v, unsigned d) const { return xp::gpu::shfl(mask(), v, xp::gpu::SHFL_UP, d, (int)N); }
  template <class T> T shfl_xor(T v, unsigned m) const { return xp::gpu::shfl(mask(), v, xp::gpu::SHFL_XOR, m, (int)N); }
  unsigned long long ballot(int p) const { return (xp::gpu::vote(mask(), p != 0, "tile.ballot").ballot & mask()) >> (lane() / N * N); }
  int any(int p) const { return ballot(p) != 0; }
  int all(int p) const { auto d = xp::gpu::vote(mask(), p != 0, "tile.all"); return d.ballot == d.arrived; }
};
template <unsigned N, class P>
inline thread_block_tile<N> tiled_partition(const P &) { return thread_block_tile<N>(); }
template <unsigned N>
inline void sync(const thread_block_tile<N> &g) { g.sync(); }

template <class T> struct plus { T operator()(const T &a, const T &b) const { return a + b; } };
template <class T> struct less { T operator()(const T &a, const T &b) const { return a < b ? a : b; } };
template <class T> struct greater { T operator()(const T &a, const T &b) const { return a > b ? a : b; } };
template <class T> struct bit_and { T operator()(const T &a, const T &b) const { return a & b; } };
template <class T> struct bit_or { T operator()(const T &a, const T &b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(const T &a, const T &b) const { return a ^ b; } };

template <unsigned N, class T, class Op>
inline T reduce(const thread_block_tile<N> &g, T v, Op op) {
  for (unsigned o = N / 2; o > 0; o /= 2) v = op(v, g.shfl_xor(v, o));
  return v;
}

struct grid_group {
  void sync() const { xp::fail(xp::FAIL_RUNTIME, "cooperative_groups grid sync is not emulated (blocks run one after another)"); }
  unsigned long long thread_rank() const {
    unsigned long long b = blockIdx.x + (unsigned long long)blockIdx.y * gridDim.x + (unsigned long long)blockIdx.z * gridDim.x * gridDim.y;
    return b * (blockDim.x * blockDim.y * blockDim.z) + __xp_linear_tid();
  }
  unsigned long long size() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z; }
  unsigned long long num_threads() const { return size(); }
};
inline grid_group this_grid() { return grid_group(); }

}  // namespace cooperative_groups
