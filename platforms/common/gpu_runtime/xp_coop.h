// xp_coop.h - cooperative_groups on the virtual device: CUDA <cooperative_groups.h> (+ reduce.h,
// scan.h, memcpy_async.h) and HIP <hip/hip_cooperative_groups.h>, after CUDA 12's headers.
//
// Every collective is a warp collective of the scheduler (xp_gpu_sched.h): a lane deposits its
// operands and sleeps until the other members of its group arrive, so divergence, exited lanes and
// masks behave as on hardware (a member that never arrives is a deadlock, reported; reading a lane
// that did not take part is a strict-mode violation).
//
//   * thread_block (this_thread_block()): sync = __syncthreads; ranks, dims, barrier_arrive/wait.
//   * thread_block_tile<N, Parent> (tiled_partition<N>(block or tile)), N a power of two <= warpSize
//     (32 CUDA, 64 HIP): sync, shfl*, any/all/ballot, match_*, meta_group_rank/size, all on the
//     tile's lane mask (lanes [lane & ~(N-1), +N) of the warp).
//   * coalesced_threads(): the lanes of the warp that reach the call together: an active-set
//     collective keyed by the call site (warp_collective_active). It completes once every live
//     lane of the warp is there, or, when nothing else can run, with the lanes that came (the
//     others took another branch and wait elsewhere: SIMT divergence). Its shuffles follow CUDA's
//     rank -> lane rules (__fns); HIP's srcRank wraps modulo size().
//   * tiled_partition(parent, n) (dynamic): thread_group / coalesced_group as CUDA builds them.
//   * reduce / inclusive_scan / exclusive_scan: CUDA's algorithms (butterfly for tiles and full
//     warps, rank-space Hillis-Steele scan for partial coalesced groups), so the order of the
//     floating-point operations is the hardware's. thread_block is not a valid reduce group (as in
//     CUDA: "This group does not exclusively represent a tile").
//   * labeled_partition / binary_partition: match_any over the parent's mask.
//   * memcpy_async / wait / wait_prior: the copy is done at the call (each member its share, rank-
//     strided like CUDA's inline copy); wait = group sync.
//   * this_grid(): ranks and dims are exact; grid.sync() is exact for a grid of one block launched
//     cooperatively (cudaLaunchCooperativeKernel / hipLaunchCooperativeKernel, or a kernel entry
//     run by the driver) and otherwise a runtime error naming it: blocks run one after another,
//     so a barrier across blocks cannot complete (and a non-cooperative launch traps on hardware).
//   * Not emulated: multi-warp tiles (thread_block_tile<64..1024> on CUDA; static_assert),
//     cluster_group, multi_grid_group, reduce_update_async / reduce_store_async, invoke_one.
#pragma once
#include <type_traits>
#include <utility>
#include "xp_gpu_device.h"

namespace xp { namespace gpu { namespace cg {

inline unsigned linear_tid() { return threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y; }
inline unsigned block_threads() { return blockDim.x * blockDim.y * blockDim.z; }
inline unsigned lane() { return linear_tid() % (unsigned)kWarp; }
inline lanemask_t lanemask_lt() { return (1ull << lane()) - 1; }
inline unsigned popc(lanemask_t m) { return (unsigned)__builtin_popcountll(m); }
inline lanemask_t warp_full() { return kWarp == 64 ? ~0ull : 0xffffffffull; }
// n-th member (1-based, counted from `base` inclusive; negative: downwards) of a lane mask
inline unsigned fns(lanemask_t mask, unsigned base, int offset) { return __xp_fns(mask, base, offset, kWarp); }
// CUDA's _packLanes: lane bits of `lanes` as bits of member ranks of `mask`
inline lanemask_t pack_lanes(lanemask_t mask, lanemask_t lanes) {
  lanemask_t out = 0;
  unsigned r = 0;
  for (int b = 0; b < kWarp; ++b)
    if (mask >> b & 1) {
      if (lanes >> b & 1) out |= 1ull << r;
      ++r;
    }
  return out;
}

struct ActiveLane { lanemask_t members; };
inline void active_resolve(WarpGroup &g) {
  for (int l = 0; l < kWarp; ++l)
    if (g.arrived >> l & 1) static_cast<ActiveLane *>(g.data[l])->members = g.arrived;
}
inline lanemask_t active_lanes(const char *file, int line) {
  ActiveLane d{0};
  warp_collective_active(&active_resolve, "cooperative_groups::coalesced_threads()", &d, file, line);
  return d.members;
}

inline void group_sync(lanemask_t mask, const char *what) {
  warp_collective(mask, &syncwarp_resolve, what, nullptr);
}
inline lanemask_t group_ballot(lanemask_t mask, int pred, const char *what) { return vote(mask, pred != 0, what).ballot; }
template <class T>
inline lanemask_t group_match(lanemask_t mask, T v, const char *what, bool *all) {
  MatchLane d{0, 0, false};
  memcpy(&d.v, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  warp_collective(mask, &match_resolve, what, &d);
  if (all) *all = d.all;
  return d.out;
}

#ifdef XP_PLATFORM_HIP
#define XP_COOP_LAUNCH "hipLaunchCooperativeKernel"
#else
#define XP_COOP_LAUNCH "cudaLaunchCooperativeKernel"
#endif

inline void grid_sync() {
  const char *what = "cooperative_groups::grid_group::sync() (grid.sync())";
  require_device(what);
  LaunchState &L = launch_state();
  unsigned long long nb = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
  if (nb > 1)
    fail(FAIL_RUNTIME, "%s in kernel %s: a grid-wide barrier across %llu blocks cannot run on the virtual device, "
         "which executes the blocks of a grid one after another (it would never complete); it is exact only for "
         "a grid of one block. Split the kernel at the barrier into two launches%s", what, L.name, nb,
         L.cooperative ? "" : " (also: the kernel was not launched with " XP_COOP_LAUNCH
         ", so this_grid().is_valid() is false and the barrier traps on hardware)");
  if (!L.cooperative)
    fail(FAIL_RUNTIME, "%s in kernel %s: the kernel was not launched with " XP_COOP_LAUNCH
         " (this_grid().is_valid() is false; hardware traps here)", what, L.name);
  block_barrier(1);
}

}}}  // namespace xp::gpu::cg

namespace cooperative_groups {

namespace details {
enum : unsigned { coalesced_group_id = 1, grid_group_id, thread_block_id, multi_grid_group_id, cluster_group_id };
template <class T> using remove_qual = typename std::remove_cv<typename std::remove_reference<T>::type>::type;
}  // namespace details

#ifdef XP_PLATFORM_HIP
namespace internal {
enum group_type { cg_multi_grid, cg_grid, cg_workgroup, cg_tiled_group, cg_coalesced_group };
}
#endif

class thread_group;
class coalesced_group;
thread_group tiled_partition(const thread_group &parent, unsigned int tilesz);

// The type-erased group (CUDA's thread_group; HIP's too): any group converts to it.
class thread_group {
 protected:
  unsigned type_;
  xp::gpu::lanemask_t mask_ = 0;   // tiles and coalesced groups: the member lanes of the warp
  unsigned size_ = 0, meta_rank_ = 0, meta_size_ = 1;
  bool tiled_ = false;
  explicit thread_group(unsigned type) : type_(type) {}
  friend thread_group tiled_partition(const thread_group &parent, unsigned int tilesz);
  friend class coalesced_group;

 public:
  unsigned long long size() const;
  unsigned long long num_threads() const { return size(); }
  unsigned long long thread_rank() const;
  void sync() const;
  unsigned get_type() const { return type_; }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  bool is_valid() const;
#ifdef XP_PLATFORM_HIP
  internal::group_type cg_type() const {
    switch (type_) {
      case details::grid_group_id: return internal::cg_grid;
      case details::thread_block_id: return internal::cg_workgroup;
      default: return tiled_ ? internal::cg_tiled_group : internal::cg_coalesced_group;
    }
  }
#endif
};

// ------------------------------------------------------------------ grid
class grid_group : public thread_group {
 public:
  grid_group() : thread_group(details::grid_group_id) {}
  bool is_valid() const { return xp::gpu::launch_state().cooperative; }
  void sync() const { xp::gpu::cg::grid_sync(); }
  static unsigned long long num_blocks() { return (unsigned long long)gridDim.x * (gridDim.y * gridDim.z); }
  static unsigned long long num_threads() { return num_blocks() * xp::gpu::cg::block_threads(); }
  static unsigned long long size() { return num_threads(); }
  static unsigned long long block_rank() {
    return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  }
  static unsigned long long thread_rank() { return block_rank() * xp::gpu::cg::block_threads() + xp::gpu::cg::linear_tid(); }
  static dim3 dim_blocks() { return dim3(gridDim.x, gridDim.y, gridDim.z); }
  static dim3 grid_dim() { return dim_blocks(); }
  static dim3 group_dim() { return dim_blocks(); }
  static dim3 block_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 dim_threads() { return dim3(gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z); }
  static dim3 thread_index() {
    return dim3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y,
                blockIdx.z * blockDim.z + threadIdx.z);
  }
};
inline grid_group this_grid() {
  xp::gpu::require_device("cooperative_groups::this_grid()");
  return grid_group();
}

// ------------------------------------------------------------------ block
class thread_block : public thread_group {
 public:
  thread_block() : thread_group(details::thread_block_id) {}
  static void sync() { __syncthreads(); }
  static unsigned size() { return xp::gpu::cg::block_threads(); }
  static unsigned num_threads() { return size(); }
  static unsigned thread_rank() { return xp::gpu::cg::linear_tid(); }
  static dim3 group_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 thread_index() { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  static dim3 group_dim() { return blockDim; }
  static dim3 dim_threads() { return blockDim; }
  struct arrival_token {};
  // split barrier: the arrival is implied by the wait (every thread arrives before it waits)
  arrival_token barrier_arrive() const { return arrival_token(); }
  void barrier_wait(arrival_token &&) const { __syncthreads(); }
};
inline thread_block this_thread_block() { return thread_block(); }

// ------------------------------------------------------------------ coalesced groups
class coalesced_group : public thread_group {
 public:
  explicit coalesced_group(xp::gpu::lanemask_t mask) : thread_group(details::coalesced_group_id) {
    mask_ = mask;
    size_ = xp::gpu::cg::popc(mask);
  }
  xp::gpu::lanemask_t __xp_mask() const { return mask_; }
  unsigned num_threads() const { return size_; }
  unsigned size() const { return size_; }
  unsigned thread_rank() const { return xp::gpu::cg::popc(mask_ & xp::gpu::cg::lanemask_lt()); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  void sync() const { xp::gpu::cg::group_sync(mask_, "coalesced_group::sync"); }

  template <class T>
  details::remove_qual<T> shfl(T &&v, int srcRank) const {
    using xp::gpu::cg::fns;
#ifdef XP_PLATFORM_HIP
    if (size_) srcRank = (int)((unsigned)srcRank % size_);
    unsigned lane = fns(mask_, 0, srcRank + 1);
#else
    unsigned lane = srcRank == 0 ? (unsigned)__builtin_ctzll(mask_ ? mask_ : 1)
                    : size_ == (unsigned)xp::gpu::kWarp ? (unsigned)srcRank : fns(mask_, 0, srcRank + 1);
#endif
    return xp::gpu::shfl(mask_, details::remove_qual<T>(v), xp::gpu::SHFL_IDX, lane, xp::gpu::kWarp,
                         "coalesced_group::shfl");
  }
  template <class T>
  details::remove_qual<T> shfl_down(T &&v, unsigned delta) const {
    if (size_ == (unsigned)xp::gpu::kWarp)
      return xp::gpu::shfl(mask_, details::remove_qual<T>(v), xp::gpu::SHFL_DOWN, delta, xp::gpu::kWarp,
                           "coalesced_group::shfl_down");
    unsigned me = xp::gpu::cg::lane(), lane = xp::gpu::cg::fns(mask_, me, (int)delta + 1);
    if (lane >= (unsigned)xp::gpu::kWarp) lane = me;
    return xp::gpu::shfl(mask_, details::remove_qual<T>(v), xp::gpu::SHFL_IDX, lane, xp::gpu::kWarp,
                         "coalesced_group::shfl_down");
  }
  template <class T>
  details::remove_qual<T> shfl_up(T &&v, int delta) const {
    if (size_ == (unsigned)xp::gpu::kWarp)
      return xp::gpu::shfl(mask_, details::remove_qual<T>(v), xp::gpu::SHFL_UP, delta, xp::gpu::kWarp,
                           "coalesced_group::shfl_up");
    unsigned me = xp::gpu::cg::lane(), lane = xp::gpu::cg::fns(mask_, me, -(delta + 1));
    if (lane >= (unsigned)xp::gpu::kWarp) lane = me;
    return xp::gpu::shfl(mask_, details::remove_qual<T>(v), xp::gpu::SHFL_IDX, lane, xp::gpu::kWarp,
                         "coalesced_group::shfl_up");
  }
  int any(int pred) const { return xp::gpu::cg::group_ballot(mask_, pred, "coalesced_group::any") != 0; }
  int all(int pred) const { return xp::gpu::cg::group_ballot(mask_, pred, "coalesced_group::all") == mask_; }
  xp::gpu::ballot_t ballot(int pred) const {
    xp::gpu::lanemask_t b = xp::gpu::cg::group_ballot(mask_, pred, "coalesced_group::ballot");
    return (xp::gpu::ballot_t)(size_ == (unsigned)xp::gpu::kWarp ? b : xp::gpu::cg::pack_lanes(mask_, b));
  }
  template <class T> xp::gpu::ballot_t match_any(T v) const {
    return (xp::gpu::ballot_t)xp::gpu::cg::pack_lanes(mask_, xp::gpu::cg::group_match(mask_, v, "coalesced_group::match_any", nullptr));
  }
  template <class T> xp::gpu::ballot_t match_all(T v, int &pred) const {
    bool all = false;
    xp::gpu::lanemask_t m = xp::gpu::cg::group_match(mask_, v, "coalesced_group::match_all", &all);
    pred = all;
    return all ? (xp::gpu::ballot_t)xp::gpu::cg::pack_lanes(mask_, m) : 0;
  }
};

// The lanes of the calling warp that reach this call together (see the file comment).
inline coalesced_group coalesced_threads(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  return coalesced_group(xp::gpu::cg::active_lanes(file, line));
}

// ------------------------------------------------------------------ static tiles
template <unsigned int Size, class ParentT = void> class thread_block_tile;

namespace details {
template <unsigned int Size>
class tile_base : public thread_group {
  static_assert(Size > 0 && (Size & (Size - 1)) == 0, "thread_block_tile<N>: N must be a power of two");
  static_assert(Size <= XP_WARP_SIZE, "thread_block_tile<N> with N > warpSize (a multi-warp tile) is not emulated by "
                                      "the virtual device: use a tile of at most warpSize threads");

 protected:
  tile_base(unsigned mrank, unsigned msize) : thread_group(coalesced_group_id) {
    mask_ = build_mask();
    size_ = Size;
    meta_rank_ = mrank;
    meta_size_ = msize;
    tiled_ = true;
  }

 public:
  static xp::gpu::lanemask_t build_mask() {
    if (Size == (unsigned)xp::gpu::kWarp) return xp::gpu::cg::warp_full();
    xp::gpu::lanemask_t m = (1ull << (Size % 64)) - 1;
    return m << (xp::gpu::cg::lane() & ~(Size - 1));
  }
  xp::gpu::lanemask_t __xp_mask() const { return build_mask(); }
  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  static unsigned thread_rank() { return xp::gpu::cg::linear_tid() & (Size - 1); }
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }
  static void sync() { xp::gpu::cg::group_sync(build_mask(), "thread_block_tile::sync"); }

  template <class T> remove_qual<T> shfl(T &&v, int srcRank) const {
    return xp::gpu::shfl(build_mask(), remove_qual<T>(v), xp::gpu::SHFL_IDX, srcRank, (int)Size, "thread_block_tile::shfl");
  }
  template <class T> remove_qual<T> shfl_down(T &&v, unsigned delta) const {
    return xp::gpu::shfl(build_mask(), remove_qual<T>(v), xp::gpu::SHFL_DOWN, delta, (int)Size, "thread_block_tile::shfl_down");
  }
  template <class T> remove_qual<T> shfl_up(T &&v, unsigned delta) const {
    return xp::gpu::shfl(build_mask(), remove_qual<T>(v), xp::gpu::SHFL_UP, delta, (int)Size, "thread_block_tile::shfl_up");
  }
  template <class T> remove_qual<T> shfl_xor(T &&v, unsigned laneMask) const {
    return xp::gpu::shfl(build_mask(), remove_qual<T>(v), xp::gpu::SHFL_XOR, laneMask, (int)Size, "thread_block_tile::shfl_xor");
  }
  int any(int pred) const { return xp::gpu::cg::group_ballot(build_mask(), pred, "thread_block_tile::any") != 0; }
  int all(int pred) const {
    auto d = xp::gpu::vote(build_mask(), pred != 0, "thread_block_tile::all");
    return d.ballot == d.arrived;
  }
  xp::gpu::ballot_t ballot(int pred) const {
    return (xp::gpu::ballot_t)(xp::gpu::cg::group_ballot(build_mask(), pred, "thread_block_tile::ballot") >>
                               (xp::gpu::cg::lane() & ~(Size - 1)));
  }
  template <class T> xp::gpu::ballot_t match_any(T v) const {
    return (xp::gpu::ballot_t)(xp::gpu::cg::group_match(build_mask(), v, "thread_block_tile::match_any", nullptr) >>
                               (xp::gpu::cg::lane() & ~(Size - 1)));
  }
  template <class T> xp::gpu::ballot_t match_all(T v, int &pred) const {
    bool all = false;
    xp::gpu::lanemask_t m = xp::gpu::cg::group_match(build_mask(), v, "thread_block_tile::match_all", &all);
    pred = all;
    return all ? (xp::gpu::ballot_t)(m >> (xp::gpu::cg::lane() & ~(Size - 1))) : 0;
  }
};

template <class P> struct is_tile_parent : std::false_type {};
template <> struct is_tile_parent<thread_block> : std::true_type {};
template <unsigned int S, class P> struct is_tile_parent<thread_block_tile<S, P>> : std::true_type {};
template <class P> struct parent_size { static constexpr unsigned value = 0xffffffffu; };
template <unsigned int S, class P> struct parent_size<thread_block_tile<S, P>> { static constexpr unsigned value = S; };
struct meta_tag {};
}  // namespace details

// thread_block_tile<Size, ParentT>: made by tiled_partition<Size>(parent); converts to
// thread_block_tile<Size> (ParentT = void) and to thread_group.
template <unsigned int Size, class ParentT>
class thread_block_tile : public details::tile_base<Size> {
  static_assert(details::is_tile_parent<ParentT>::value,
                "tiled_partition<N>(g): g must be a thread_block or a thread_block_tile");
  static_assert(Size < details::parent_size<ParentT>::value, "Tile size bigger or equal to the parent group size");

 public:
  explicit thread_block_tile(const ParentT &g)
      : details::tile_base<Size>((unsigned)(g.thread_rank() / Size), (unsigned)((g.size() + Size - 1) / Size)) {}
};

template <unsigned int Size>
class thread_block_tile<Size, void> : public details::tile_base<Size> {
 public:
  thread_block_tile(details::meta_tag, unsigned mrank, unsigned msize) : details::tile_base<Size>(mrank, msize) {}
  template <class P>
  thread_block_tile(const thread_block_tile<Size, P> &g) : details::tile_base<Size>(g.meta_group_rank(), g.meta_group_size()) {}
};

template <unsigned int Size, class ParentT>
inline thread_block_tile<Size, ParentT> tiled_partition(const ParentT &g) {
  return thread_block_tile<Size, ParentT>(g);
}
inline thread_block_tile<1, void> this_thread() { return thread_block_tile<1, void>(details::meta_tag(), 0, 1); }

// ------------------------------------------------------------------ dynamic tiles (CUDA _get_tiled_threads)
inline thread_group tiled_partition(const thread_group &parent, unsigned int tilesz) {
  using namespace xp::gpu::cg;
  if (tilesz == 0 || tilesz > (unsigned)xp::gpu::kWarp || (tilesz & (tilesz - 1)))
    xp::fail(xp::FAIL_RUNTIME, "cooperative_groups::tiled_partition(parent, %u): the tile size must be a power of two "
             "<= %d (hardware aborts)", tilesz, xp::gpu::kWarp);
  if (parent.get_type() == details::thread_block_id) {
    unsigned rank = linear_tid(), n = block_threads();
    unsigned base = rank & ~(tilesz - 1), len = std::min(n - base, tilesz);
    thread_group t(details::coalesced_group_id);
    t.mask_ = (len >= 64 ? ~0ull : ((1ull << len) - 1)) << (lane() & ~(tilesz - 1));
    t.size_ = popc(t.mask_);
    t.meta_size_ = (n + tilesz - 1) / tilesz;
    t.meta_rank_ = rank / tilesz;
    t.tiled_ = true;
    return t;
  }
  if (parent.get_type() != details::coalesced_group_id)
    xp::fail(xp::FAIL_RUNTIME, "cooperative_groups::tiled_partition(parent, %u): only a thread_block, a tile or a "
             "coalesced group can be partitioned", tilesz);
  if (parent.size_ <= tilesz) return parent;
  unsigned prank = popc(parent.mask_ & lanemask_lt());
  thread_group t(details::coalesced_group_id);
  if (parent.tiled_) {
    unsigned base = prank & ~(tilesz - 1), len = std::min(parent.size_ - base, tilesz);
    t.mask_ = (len >= 64 ? ~0ull : ((1ull << len) - 1)) << (lane() & ~(tilesz - 1));
    t.meta_size_ = parent.size_ / tilesz;
    t.tiled_ = true;
  } else {
    unsigned first = prank / tilesz * tilesz, r = 0;
    for (int b = 0; b < xp::gpu::kWarp; ++b)
      if (parent.mask_ >> b & 1) {
        if (r >= first && r < first + tilesz) t.mask_ |= 1ull << b;
        ++r;
      }
    t.meta_size_ = (parent.size_ + tilesz - 1) / tilesz;
  }
  t.size_ = popc(t.mask_);
  t.meta_rank_ = prank / tilesz;
  return t;
}
inline thread_group tiled_partition(const thread_block &parent, unsigned int tilesz) {
  return tiled_partition(static_cast<const thread_group &>(parent), tilesz);
}
inline coalesced_group tiled_partition(const coalesced_group &parent, unsigned int tilesz) {
  thread_group t = tiled_partition(static_cast<const thread_group &>(parent), tilesz);
  coalesced_group c(static_cast<const coalesced_group &>(parent).__xp_mask());
  static_cast<thread_group &>(c) = t;
  return c;
}
#ifdef XP_PLATFORM_HIP
class tiled_group : public thread_group {
 public:
  tiled_group(const thread_group &g) : thread_group(g) {}
  unsigned size() const { return size_; }
  unsigned num_threads() const { return size_; }
  unsigned thread_rank() const { return xp::gpu::cg::popc(mask_ & xp::gpu::cg::lanemask_lt()); }
  void sync() const { xp::gpu::cg::group_sync(mask_, "tiled_group::sync"); }
};
inline tiled_group tiled_partition(const tiled_group &parent, unsigned int tilesz) {
  return tiled_group(tiled_partition(static_cast<const thread_group &>(parent), tilesz));
}
#endif

// labeled_partition(g, label): the members of g with the same label (CUDA 11+, sm_70+)
template <class G>
inline coalesced_group labeled_partition(const G &g, int label) {
  return coalesced_group(xp::gpu::cg::group_match(g.__xp_mask(), label, "cooperative_groups::labeled_partition", nullptr));
}
template <class G>
inline coalesced_group binary_partition(const G &g, bool pred) { return labeled_partition(g, pred ? 1 : 0); }

// ------------------------------------------------------------------ thread_group (type-erased)
inline unsigned long long thread_group::size() const {
  switch (type_) {
    case details::thread_block_id: return xp::gpu::cg::block_threads();
    case details::grid_group_id: return grid_group::num_threads();
    default: return size_;
  }
}
inline unsigned long long thread_group::thread_rank() const {
  switch (type_) {
    case details::thread_block_id: return xp::gpu::cg::linear_tid();
    case details::grid_group_id: return grid_group::thread_rank();
    default: return xp::gpu::cg::popc(mask_ & xp::gpu::cg::lanemask_lt());
  }
}
inline void thread_group::sync() const {
  switch (type_) {
    case details::thread_block_id: __syncthreads(); break;
    case details::grid_group_id: xp::gpu::cg::grid_sync(); break;
    default: xp::gpu::cg::group_sync(mask_, "thread_group::sync");
  }
}
inline bool thread_group::is_valid() const {
  return type_ != details::grid_group_id || xp::gpu::launch_state().cooperative;
}

template <class GroupT> inline void sync(const GroupT &g) { g.sync(); }
template <class GroupT> inline auto thread_rank(const GroupT &g) -> decltype(g.thread_rank()) { return g.thread_rank(); }
template <class GroupT> inline auto group_size(const GroupT &g) -> decltype(g.num_threads()) { return g.num_threads(); }

// ------------------------------------------------------------------ functors (CUDA functional.h)
template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return (b < a) ? b : a; } };
template <class T> struct greater { T operator()(T a, T b) const { return (a < b) ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

// ------------------------------------------------------------------ reduce / scan (CUDA reduce.h, scan.h)
namespace details {
template <class G> struct is_reduce_group : std::false_type {};
template <unsigned int S, class P> struct is_reduce_group<thread_block_tile<S, P>> : std::true_type {};
template <> struct is_reduce_group<coalesced_group> : std::true_type {};

template <class V, class Op> using op_result = remove_qual<decltype(std::declval<Op &>()(std::declval<V &>(), std::declval<V &>()))>;

template <unsigned int S, class P, class V, class Op>
inline op_result<V, Op> tile_reduce(const thread_block_tile<S, P> &g, V &&val, Op &op) {
  op_result<V, Op> out = val;
  for (int m = (int)S >> 1; m > 0; m >>= 1) out = op(out, g.shfl_xor(out, (unsigned)m));
  return out;
}
// rank-space form of CUDA's inclusive_scan_non_contiguous (same operands in the same order)
template <class V, class Op>
inline op_result<V, Op> scan_non_contiguous(const coalesced_group &g, V &&val, Op &op) {
  op_result<V, Op> out = val;
  unsigned rank = g.thread_rank(), n = g.size();
  for (unsigned i = 1; i < n; i <<= 1) {
    auto tmp = g.shfl(out, (int)(i <= rank ? rank - i : rank));
    if (i <= rank) out = op(out, tmp);
  }
  return out;
}
template <class G, class V, class Op>
inline op_result<V, Op> scan_contiguous(const G &g, V &&val, Op &op) {
  op_result<V, Op> out = val;
  for (unsigned m = 1; m < (unsigned)g.size(); m <<= 1) {
    auto tmp = g.shfl_up(out, m);
    if (m <= (unsigned)g.thread_rank()) out = op(out, tmp);
  }
  return out;
}
template <unsigned int S, class P, class V, class Op>
inline op_result<V, Op> do_reduce(const thread_block_tile<S, P> &g, V &&val, Op &op) { return tile_reduce(g, std::forward<V>(val), op); }
template <class V, class Op>
inline op_result<V, Op> do_reduce(const coalesced_group &g, V &&val, Op &op) {
  if (g.size() == (unsigned)xp::gpu::kWarp) {
    thread_block_tile<XP_WARP_SIZE, void> warp(meta_tag(), 0, 1);
    return tile_reduce(warp, std::forward<V>(val), op);
  }
  op_result<V, Op> r = scan_non_contiguous(g, std::forward<V>(val), op);
  unsigned last = 63 - (unsigned)__builtin_clzll(g.__xp_mask() ? g.__xp_mask() : 1);
  return xp::gpu::shfl(g.__xp_mask(), r, xp::gpu::SHFL_IDX, last, xp::gpu::kWarp, "cooperative_groups::reduce");
}
template <unsigned int S, class P, class V, class Op>
inline op_result<V, Op> do_scan(const thread_block_tile<S, P> &g, V &&val, Op &op) { return scan_contiguous(g, std::forward<V>(val), op); }
template <class V, class Op>
inline op_result<V, Op> do_scan(const coalesced_group &g, V &&val, Op &op) {
  if (g.size() == (unsigned)xp::gpu::kWarp) return scan_contiguous(g, std::forward<V>(val), op);
  return scan_non_contiguous(g, std::forward<V>(val), op);
}
template <class Op, class V> struct plus_integral : std::false_type {};
template <class V> struct plus_integral<cooperative_groups::plus<V>, V> : std::is_integral<V> {};
}  // namespace details

template <class G, class V, class Op>
inline auto reduce(const G &group, V &&val, Op &&op) -> details::op_result<V, Op> {
  static_assert(details::is_reduce_group<details::remove_qual<G>>::value,
                "This group does not exclusively represent a tile");
  return details::do_reduce(group, std::forward<V>(val), op);
}
template <class G, class V, class Op>
inline auto inclusive_scan(const G &group, V &&val, Op &&op) -> details::op_result<V, Op> {
  static_assert(details::is_reduce_group<details::remove_qual<G>>::value,
                "This group does not exclusively represent a tile");
  return details::do_scan(group, std::forward<V>(val), op);
}
template <class G, class V>
inline details::remove_qual<V> inclusive_scan(const G &group, V &&val) {
  return inclusive_scan(group, std::forward<V>(val), plus<details::remove_qual<V>>());
}
template <class G, class V, class Op>
inline auto exclusive_scan(const G &group, V &&val, Op &&op) -> details::op_result<V, Op> {
  using R = details::op_result<V, Op>;
  R v = val;
  R inc = inclusive_scan(group, v, op);
  if (details::plus_integral<details::remove_qual<Op>, details::remove_qual<V>>::value) return inc - v;
  R up = group.shfl_up(inc, 1);
  return group.thread_rank() == 0 ? R() : up;
}
template <class G, class V>
inline details::remove_qual<V> exclusive_scan(const G &group, V &&val) {
  return exclusive_scan(group, std::forward<V>(val), plus<details::remove_qual<V>>());
}

// ------------------------------------------------------------------ memcpy_async (done at the call)
namespace details {
template <class G>
inline void copy_share(const G &g, void *dst, const void *src, size_t bytes) {
  xp::gpu::require_device("cooperative_groups::memcpy_async");
  size_t rank = (size_t)g.thread_rank(), stride = (size_t)g.size();
  for (size_t i = rank * 16; i < bytes; i += stride * 16)
    memcpy((char *)dst + i, (const char *)src + i, std::min<size_t>(16, bytes - i));
}
}  // namespace details
template <class G, class T, class N>
inline void memcpy_async(const G &g, T *dst, const T *src, const N &bytes) { details::copy_share(g, dst, src, (size_t)bytes); }
template <class G, class T, class D, class S>
inline void memcpy_async(const G &g, T *dst, const D &dstCount, const T *src, const S &srcCount) {
  details::copy_share(g, dst, src, std::min((size_t)dstCount, (size_t)srcCount) * sizeof(T));
}
template <class G> inline void wait(const G &g) { g.sync(); }
template <unsigned int Stage, class G> inline void wait_prior(const G &g) { g.sync(); }

}  // namespace cooperative_groups

#ifndef XP_PLATFORM_HIP
namespace cuda {
// <cuda/barrier>'s alignment promise for memcpy_async sizes
template <std::size_t Align>
struct aligned_size_t {
  static constexpr std::size_t align = Align;
  std::size_t value;
  constexpr explicit aligned_size_t(std::size_t v) : value(v) {}
  constexpr operator std::size_t() const { return value; }
};
}  // namespace cuda
#endif
