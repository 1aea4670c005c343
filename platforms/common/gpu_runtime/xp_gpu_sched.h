// xp_gpu_sched.h - the block scheduler of the CUDA/HIP virtual device.
//
// Execution model (design choices, documented in platforms/cuda/intrinsics/warp.toml):
//   * blocks run one after another (blockIdx.x fastest, then y, then z);
//   * the threads of a block are fibers on one OS thread, started in linear-id order
//     (x + y*Dx + z*Dx*Dy) and run round-robin; a thread runs until it reaches a barrier, a warp
//     collective, or its end. A thread that never synchronises runs start to finish in one go.
//   * __syncthreads(): released when every thread of the block has either arrived or exited
//     (exited threads count as arrived, as on hardware for early-return guards). If no thread
//     can run and the barrier cannot be released (threads wait at different collectives), the
//     run stops with a "deadlock" runtime error instead of hanging.
//   * warp collectives (shuffles, votes, __syncwarp, wmma, mfma): a lane deposits its operands and
//     sleeps; the last lane of the participant set (mask ∩ live lanes of the warp) computes the
//     results for all lanes and everybody continues (a mask-less HIP collective completes with the
//     lanes that reached it once every other lane waits elsewhere: SIMT divergence, see
//     resolve_divergent_groups). warp = linear id / warpSize,
//     lane = linear id % warpSize (warpSize 32 CUDA, 64 HIP).
//   * __shared__ arrays are static objects shared by all fibers (function scope: guarded storage,
//     shared_static, so out-of-bounds accesses fault); prepare() registers each one
//     (shared_var) so the static shared size of a launch is known and, in strict mode, poisoned
//     (0xFF) at the start of every block. Dynamic shared memory is a guarded allocation of exactly
//     the launch's size, so out-of-bounds accesses fault like global ones.
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>
#include "xp_core.h"
#include "xp_gpu_types.h"

namespace xp { namespace gpu {

typedef unsigned long long lanemask_t;
constexpr int kWarp = XP_WARP_SIZE;
static_assert(kWarp == 32 || kWarp == 64, "warp size must be 32 or 64");

enum ThreadState : unsigned char { TS_NEW, TS_READY, TS_BARRIER, TS_WARP, TS_DONE };

struct WarpGroup;
typedef void (*Resolver)(WarpGroup &);

struct WarpGroup {
  bool used = false;
  // active-set collective (cooperative_groups::coalesced_threads()): its members are the lanes
  // that reach the same call site together; it never conflicts with another collective
  bool active = false;
  lanemask_t mask = 0, arrived = 0;
  Resolver resolve = nullptr;
  const char *what = nullptr;
  const char *site_file = nullptr;
  int site_line = 0;
  int warp = 0;
  // data[lane]: the operands of each arrived lane (valid for arrived lanes only). The array is the
  // warp's (WarpRec::lane_data): a lane waits in one collective at a time.
  void **data = nullptr;
};

struct ThreadRec {
  Fiber fib;
  uint3 tid;
  int warp, lane;
  unsigned char st;
  int bar_pred, bar_count, bar_total;
  int stack_idx;
};

struct WarpRec {
  lanemask_t live = 0, exists = 0;
  // pending collectives: each has a waiting lane, so at most one per lane (tiles of 2 lanes: 16 or
  // 32 of them); nused counts them so the common case (none pending) skips the searches
  int nused = 0;
  void *lane_data[64] = {};
  WarpGroup groups[kWarp];
};

struct SharedVar { void *p; size_t n; };

struct LaunchState {
  bool active = false;
  const char *name = "";
  dim3 grid, block;
  size_t dyn_bytes = 0;
  char *dyn = nullptr;
  size_t static_bytes = 0;
  std::vector<SharedVar> shared;
  bool entered = false, warned_shared = false, warned_lanes = false;
  // launched as a cooperative kernel (cudaLaunchCooperativeKernel / hipLaunchCooperativeKernel, or
  // a kernel entry run by the driver): cooperative_groups::this_grid().is_valid()
  bool cooperative = false;
  void (*invoke)(void *) = nullptr;
  void *body = nullptr;
};

struct BlockState {
  std::vector<ThreadRec> th;
  std::vector<WarpRec> warps;
  int n = 0, done = 0, at_barrier = 0, bar_count = 0;
  int cur = 0;
  void *sched_sp = nullptr;
  // Fiber stacks are handed out when a thread starts and returned when it exits, so threads that
  // never block run one after another on the same (cache-hot) stack.
  std::vector<int> free_stacks;
};

inline LaunchState &launch_state() { static LaunchState s; return s; }
inline BlockState &block_state() { static BlockState b; return b; }
inline size_t &fiber_stack_bytes() { static size_t s = 256 * 1024; return s; }
// cudaFuncSetAttribute(MaxDynamicSharedMemorySize): largest opt-in seen (per-kernel keys are
// not tracked: a documented simplification).
inline long long &dyn_shared_optin() { static long long v = 0; return v; }
#ifndef XP_SHARED_OPTIN_BYTES
#define XP_SHARED_OPTIN_BYTES 0
#endif
#ifndef XP_GRID_LIMIT_X
#define XP_GRID_LIMIT_X 2147483647LL
#define XP_GRID_LIMIT_Y 65535LL
#define XP_GRID_LIMIT_Z 65535LL
#endif
#ifndef XP_BLOCK_LIMIT_X
#define XP_BLOCK_LIMIT_X 1024
#define XP_BLOCK_LIMIT_Y 1024
#define XP_BLOCK_LIMIT_Z 64
#endif

// How the next launch was requested: -1 not said (a <<<>>> launch: not cooperative), 0 plain,
// 1 cooperative. launch_erased consumes it.
inline int &pending_cooperative() { static int v = -1; return v; }

inline bool in_kernel() { return launch_state().active; }

inline void require_device(const char *what) {
  if (!in_kernel()) fail(FAIL_RUNTIME, "%s called outside a kernel (host code)", what);
}

inline ThreadRec &cur_thread() { BlockState &b = block_state(); return b.th[b.cur]; }

// Switch from the running thread back to the scheduler; returns when resumed.
__attribute__((noinline)) inline void yield_to_scheduler() {
  BlockState &b = block_state();
  xp_ctx_switch(&b.th[b.cur].fib.sp, b.sched_sp);
}

// A barrier completed because the threads that did not reach it had exited: CUDA and HIP
// require every thread of the block to reach each __syncthreads (compute-sanitizer's synccheck
// reports this as barrier divergence; hardware behaviour is undefined). Strict mode stops the run
// unless the driver relaxed the rule (a translation whose source does the same); lenient mode
// warns once.
inline void barrier_divergence() {
  BlockState &b = block_state();
  int first = -1;
  for (int i = 0; i < b.n && first < 0; ++i)
    if (b.th[i].st == TS_DONE) first = i;
  if (first < 0) return;
  const uint3 t = b.th[first].tid;
  const char *fmt = "barrier divergence in block (%u,%u,%u): __syncthreads was reached by %d of %d threads; "
                    "%d exited without reaching it (first: thread (%u,%u,%u)); every thread of a block must "
                    "reach each barrier";
  if (options().strict && !(relaxed_rules() & RULE_BARRIER_DIVERGENCE))
    fail(FAIL_STRICT, fmt, g_bid.x, g_bid.y, g_bid.z, b.at_barrier, b.n, b.done, t.x, t.y, t.z);
  static bool warned = false;
  if (!warned) {
    warned = true;
    warn(fmt, g_bid.x, g_bid.y, g_bid.z, b.at_barrier, b.n, b.done, t.x, t.y, t.z);
  }
}

inline void release_barrier() {
  BlockState &b = block_state();
  if (b.done > 0) barrier_divergence();
  int total = b.at_barrier;
  for (auto &t : b.th)
    if (t.st == TS_BARRIER) { t.st = TS_READY; t.bar_count = b.bar_count; t.bar_total = total; }
  b.at_barrier = 0;
  b.bar_count = 0;
}

// __syncthreads family; returns the number of arrived threads whose predicate was non-zero.
inline int block_barrier(int pred, int *total = nullptr) {
  require_device("__syncthreads");
  BlockState &b = block_state();
  ThreadRec &t = b.th[b.cur];
  t.st = TS_BARRIER;
  b.at_barrier++;
  if (pred) b.bar_count++;
  if (b.at_barrier + b.done == b.n) release_barrier();
  else yield_to_scheduler();
  ThreadRec &me = block_state().th[block_state().cur];
  if (total) *total = me.bar_total;
  return me.bar_count;
}

inline void resolve_group(WarpGroup &g) {
  BlockState &b = block_state();
  g.resolve(g);
  int base = g.warp * kWarp;
  for (int l = 0; l < kWarp; ++l)
    if (g.arrived >> l & 1) b.th[base + l].st = TS_READY;
  g.used = false;
  b.warps[g.warp].nused--;
}

inline bool group_complete(const WarpGroup &g, const WarpRec &w) {
  return (g.mask & w.live & ~g.arrived) == 0;
}

// A lane of the current warp joins a collective. `data` stays valid while the lane sleeps (it is
// on the lane's own stack). Lanes not in `mask` and exited lanes are not waited for.
inline void warp_collective(lanemask_t mask, Resolver resolve, const char *what, void *data) {
  require_device(what);
  BlockState &b = block_state();
  ThreadRec &t = b.th[b.cur];
  WarpRec &w = b.warps[t.warp];
  lanemask_t me = 1ull << t.lane;
  // (~0: a mask-less HIP collective; otherwise only the warp's lanes count: `-1` == 0xffffffff)
  if (mask != ~0ull && kWarp == 32) mask &= 0xffffffffull;
  bool outside = !(mask & me);
  if (outside) {
    XP_RULE(false, "%s: the calling lane %d is not in the mask 0x%llx", what, t.lane, (unsigned long long)mask);
    mask |= me;
  }
  // A lane joins the pending collective with the same mask: all lanes of a collective name the
  // same mask (CUDA-PG). One with an overlapping but different mask is another collective: a lane
  // that completed a tile's collective runs on and may reach a warp-wide one before the lanes of
  // the next tile reach theirs.
  WarpGroup *g = nullptr;
  if (w.nused)
  for (auto &c : w.groups)
    if (c.used && !c.active && c.mask == mask) {
      if (c.resolve != resolve)
        fail(FAIL_RUNTIME, "warp %d: lanes reached different warp-collective operations (%s vs %s) "
             "(divergent control flow around a warp collective)", t.warp, c.what, what);
      g = &c;
      break;
    }
  // (lenient mode, a lane outside its own mask, e.g. a 32-bit mask on a 64-lane wavefront: it
  // joins the pending collective of the same operation that its mask overlaps)
  if (!g && outside && w.nused)
    for (auto &c : w.groups)
      if (c.used && !c.active && c.resolve == resolve && (c.mask & mask)) { g = &c; break; }
  if (!g) {
    for (auto &c : w.groups)
      if (!c.used) { g = &c; break; }
    if (!g) fail(FAIL_RUNTIME, "warp %d: too many concurrent partial-warp collectives", t.warp);
    w.nused++;
    g->used = true; g->active = false; g->mask = 0; g->arrived = 0; g->resolve = resolve; g->what = what;
    g->warp = t.warp;
    g->data = w.lane_data;
  }
  g->mask |= mask;
  g->arrived |= me;
  g->data[t.lane] = data;
  t.st = TS_WARP;
  if (group_complete(*g, w)) {
    resolve_group(*g);
    return;
  }
  yield_to_scheduler();
}

// A lane joins the *active set* of its warp at one call site (file, line): the lanes that are
// converged there, as cooperative_groups::coalesced_threads() sees them on hardware. The group
// completes when every live lane of the warp has joined, or, once no thread can run, with the
// lanes that reached it (the others wait at a barrier, another collective or another branch:
// under SIMT divergence they are not active here; see resolve_divergent_groups). Lanes at a
// different call site form their own group; an active-set group never conflicts with another
// collective. The resolver sees g.arrived, the members.
inline void warp_collective_active(Resolver resolve, const char *what, void *data, const char *file, int line) {
  require_device(what);
  BlockState &b = block_state();
  ThreadRec &t = b.th[b.cur];
  WarpRec &w = b.warps[t.warp];
  WarpGroup *g = nullptr;
  if (w.nused)
  for (auto &c : w.groups)
    if (c.used && c.active && c.resolve == resolve && c.site_line == line &&
        (c.site_file == file || (c.site_file && file && strcmp(c.site_file, file) == 0))) {
      g = &c;
      break;
    }
  if (!g) {
    for (auto &c : w.groups)
      if (!c.used) { g = &c; break; }
    if (!g) fail(FAIL_RUNTIME, "warp %d: too many concurrent partial-warp collectives (%s)", t.warp, what);
    w.nused++;
    g->used = true; g->active = true; g->mask = ~0ull; g->arrived = 0; g->resolve = resolve; g->what = what;
    g->site_file = file; g->site_line = line; g->warp = t.warp;
    g->data = w.lane_data;
  }
  g->arrived |= 1ull << t.lane;
  g->data[t.lane] = data;
  t.st = TS_WARP;
  if (group_complete(*g, w)) {
    resolve_group(*g);
    return;
  }
  yield_to_scheduler();
}

inline void syncwarp_resolve(WarpGroup &) {}

[[noreturn]] inline void thread_exit() {
  BlockState &b = block_state();
  ThreadRec &t = b.th[b.cur];
  t.st = TS_DONE;
  b.done++;
  WarpRec &w = b.warps[t.warp];
  w.live &= ~(1ull << t.lane);
  if (w.nused)
    for (auto &g : w.groups)
      if (g.used && group_complete(g, w)) resolve_group(g);
  if (b.at_barrier > 0 && b.at_barrier + b.done == b.n) release_barrier();
  b.free_stacks.push_back(t.stack_idx);  // reused only after the switch below completes
  xp_ctx_switch(&t.fib.sp, b.sched_sp);
  __builtin_unreachable();
}

inline void thread_main(void *) {
  LaunchState &L = launch_state();
  L.invoke(L.body);
  thread_exit();
}

[[noreturn]] inline void report_deadlock() {
  BlockState &b = block_state();
  int warp_waiters = 0;
  const char *what = "";
  for (auto &t : b.th)
    if (t.st == TS_WARP) warp_waiters++;
  for (auto &w : b.warps)
    for (auto &g : w.groups)
      if (g.used) { what = g.what; break; }
  fail(FAIL_RUNTIME, "deadlock in block (%u,%u,%u): %d thread(s) wait at __syncthreads, %d at a warp "
       "collective (%s), %d exited; a barrier or warp collective is not reached by every thread",
       g_bid.x, g_bid.y, g_bid.z, b.at_barrier, warp_waiters, what, b.done);
}

// Mask-less collectives (HIP __shfl*/__ballot..., pre-Volta CUDA __shfl: mask ~0) act on the lanes
// that are active. When no thread can run, the live lanes of a warp that have not reached such a
// collective wait at another point (a barrier, another branch): under SIMT divergence they are
// inactive for it, so it completes with the lanes that arrived (reads of the others follow the
// resolver's rule for lanes that did not take part). Returns whether any group completed.
inline bool resolve_divergent_groups() {
  BlockState &b = block_state();
  bool any = false;
  for (auto &w : b.warps)
    for (auto &g : w.groups)
      if (g.used && g.mask == ~0ull && g.arrived) {
        g.mask = g.arrived;
        resolve_group(g);
        any = true;
      }
  return any;
}

inline void run_block() {
  BlockState &b = block_state();
  LaunchState &L = launch_state();
  const int n = b.n;
  if (options().strict)
    for (auto &v : L.shared) memset(v.p, 0xFF, v.n);
  for (auto &w : b.warps) {
    w.live = w.exists;
    if (w.nused)
      for (auto &g : w.groups) g.used = false;
    w.nused = 0;
  }
  for (int i = 0; i < n; ++i) b.th[i].st = TS_NEW;
  b.free_stacks.clear();
  for (int i = n - 1; i >= 0; --i) b.free_stacks.push_back(i);
  const size_t ss = fiber_stack_bytes();
  b.done = 0;
  b.at_barrier = 0;
  b.bar_count = 0;
  // threads run one after another between barriers; the driver may reverse their order
  // (options().reverse_blocks) to find output elements that depend on it: a data race (a shared
  // slot written by one thread in the interval another reads it) gives another value
  const bool reverse = options().reverse_blocks != 0;
  for (;;) {
    bool ran = false;
    for (int j = 0; j < n; ++j) {
      const int i = reverse ? n - 1 - j : j;
      ThreadRec &t = b.th[i];
      if (t.st == TS_NEW) {
        int si = b.free_stacks.back();
        b.free_stacks.pop_back();
        t.stack_idx = si;
        t.fib.stack = fiber_stack((size_t)si, ss);
        // stagger the stack tops (cache colouring): identical page offsets would make the hot
        // stack lines of all fibers collide in the same cache sets
        t.fib.stack_size = ss - (size_t)(si % 61) * 192;
        t.fib.prepare(thread_main, nullptr);
      } else if (t.st != TS_READY) {
        continue;
      }
      b.cur = i;
      g_tid = t.tid;
      xp_ctx_switch(&b.sched_sp, t.fib.sp);
      ran = true;
    }
    if (b.done == n) break;
    if (!ran && !resolve_divergent_groups()) report_deadlock();
  }
}

inline void config_rule(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
inline void config_rule(bool ok, const char *fmt, ...) {
  if (ok) return;
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (options().strict) fail(FAIL_STRICT, "%s", msg);
  warn("%s (lenient mode: running anyway)", msg);
}

// Static + dynamic shared memory a block of a kernel with `static_bytes` may use. The opt-in
// attribute bounds the dynamic part (CUDA: "the sum of this value and sharedSizeBytes cannot
// exceed cudaDevAttrMaxSharedMemoryPerBlockOptin").
inline long long shared_limit_total(long long static_bytes) {
  long long base = options().shared_mem_bytes;
  long long optin = dyn_shared_optin();
  long long cap = XP_SHARED_OPTIN_BYTES > 0 ? (long long)XP_SHARED_OPTIN_BYTES : base;
  if (optin > base - static_bytes) base = std::max(base, std::min(static_bytes + optin, cap));
  return base;
}

inline void check_shared_limits() {
  LaunchState &L = launch_state();
  if (L.warned_shared) return;
  long long base = options().shared_mem_bytes;
  long long total = (long long)L.static_bytes + (long long)L.dyn_bytes;
  bool ok_static = (long long)L.static_bytes <= base;
  bool ok_total = total <= shared_limit_total((long long)L.static_bytes);
  if (!ok_static || !ok_total) {
    L.warned_shared = true;
    config_rule(false, "kernel %s uses %zu bytes of static + %zu bytes of dynamic shared memory per block; "
                "the device allows %lld bytes (static <= %lld%s)", L.name, L.static_bytes, L.dyn_bytes,
                shared_limit_total((long long)L.static_bytes), base,
                XP_SHARED_OPTIN_BYTES > 0 ? "; more dynamic memory needs cudaFuncSetAttribute(MaxDynamicSharedMemorySize)" : "");
  }
}

// Storage of a function-scope static __shared__ variable (prepare() binds a static reference to
// it once per declaration): a guarded allocation ending at a PROT_NONE page, so an access past
// its end faults (and writes into the alignment slack are caught by the canary check) instead of
// silently hitting a neighbouring object, like global and dynamic shared memory.
template <class T>
inline T *shared_static(const char *what) {
  size_t align = alignof(T) > kDeviceAlign ? alignof(T) : kDeviceAlign;
  return static_cast<T *>(guarded_alloc(sizeof(T), what, align, -1));
}

// Called by prepare()-inserted code after each __shared__ declaration inside a function.
inline void shared_var(void *p, size_t n) {
  LaunchState &L = launch_state();
  if (!L.active) return;
  for (auto &v : L.shared)
    if (v.p == p) return;
  L.shared.push_back({p, n});
  L.static_bytes += n;
  if (fresh_fill() >= 0) memset(p, fresh_fill(), n);
  check_shared_limits();
}

// Inserted by prepare() as the first statement of every __global__ function body.
inline void kernel_enter(const char *name, long long max_threads) {
  LaunchState &L = launch_state();
  if (L.entered || !L.active) return;
  L.entered = true;
  L.name = name;
  current_kernel() = name;
  long long nt = (long long)L.block.x * L.block.y * L.block.z;
  if (max_threads > 0)
    config_rule(nt <= max_threads, "kernel %s is launched with %lld threads per block but declares "
                "__launch_bounds__(%lld)", name, nt, max_threads);
}

inline void *dyn_shared() {
  require_device("extern __shared__ (dynamic shared memory)");
  return launch_state().dyn;
}

// Launch `body` (a callable running the kernel for the current thread) on the grid.
inline int launch_erased(const char *name, dim3 grid, dim3 block, size_t shmem, void (*invoke)(void *), void *body) {
  install_handlers();
  LaunchState &L = launch_state();
  if (L.active) fail(FAIL_RUNTIME, "kernel %s launched from device code (dynamic parallelism is not emulated)", name);
  long long nt = (long long)block.x * block.y * block.z;
  long long nb = (long long)grid.x * grid.y * grid.z;
  const char *saved_kernel = current_kernel();
  current_kernel() = name;
  if (nt == 0 || nb == 0) {
    if (options().strict) fail(FAIL_STRICT, "kernel %s launched with an empty grid or block (%ux%ux%u, %ux%ux%u)",
                               name, grid.x, grid.y, grid.z, block.x, block.y, block.z);
    warn("kernel %s launched with an empty grid or block: invalid configuration, not run", name);
    current_kernel() = saved_kernel;
    pending_cooperative() = -1;
    return 9;  // cudaErrorInvalidConfiguration / hipErrorInvalidConfiguration
  }
  config_rule(nt <= options().max_threads_per_block, "kernel %s launched with %lld threads per block "
              "(block %ux%ux%u); the device allows %d", name, nt, block.x, block.y, block.z,
              options().max_threads_per_block);
  config_rule(block.x <= XP_BLOCK_LIMIT_X && block.y <= XP_BLOCK_LIMIT_Y && block.z <= XP_BLOCK_LIMIT_Z,
              "kernel %s: block dimensions %ux%ux%u exceed the device limits (%d, %d, %d)", name, block.x,
              block.y, block.z, XP_BLOCK_LIMIT_X, XP_BLOCK_LIMIT_Y, XP_BLOCK_LIMIT_Z);
  config_rule(grid.x <= XP_GRID_LIMIT_X && grid.y <= XP_GRID_LIMIT_Y && grid.z <= XP_GRID_LIMIT_Z,
              "kernel %s: grid dimensions %ux%ux%u exceed the device limits (%lld, %lld, %lld)", name, grid.x,
              grid.y, grid.z, XP_GRID_LIMIT_X, XP_GRID_LIMIT_Y, XP_GRID_LIMIT_Z);
  if (nt > 65536) fail(FAIL_RUNTIME, "kernel %s: %lld threads per block is too many to emulate", name, nt);

  L.active = true;
  L.name = name;
  L.grid = grid;
  L.block = block;
  L.dyn_bytes = shmem;
  L.static_bytes = 0;
  L.shared.clear();
  L.entered = false;
  L.warned_shared = false;
  L.warned_lanes = false;
  L.invoke = invoke;
  L.body = body;
  L.cooperative = pending_cooperative() == 1;
  pending_cooperative() = -1;
  L.dyn = (char *)guarded_alloc(shmem, "dynamic shared memory", kDeviceAlign, fresh_fill());
  check_shared_limits();

  BlockState &b = block_state();
  b.n = (int)nt;
  if ((int)b.th.size() < b.n) b.th.resize(b.n);
  int nwarps = (b.n + kWarp - 1) / kWarp;
  if ((int)b.warps.size() < nwarps) b.warps.resize(nwarps);
  for (int w = 0; w < nwarps; ++w) {
    int lanes = std::min(kWarp, b.n - w * kWarp);
    b.warps[w].exists = lanes == 64 ? ~0ull : ((1ull << lanes) - 1);
  }
  b.warps.resize(nwarps);
  for (int i = 0; i < b.n; ++i) {
    ThreadRec &t = b.th[i];
    t.tid = uint3{(unsigned)(i % block.x), (unsigned)((i / block.x) % block.y), (unsigned)(i / (block.x * block.y))};
    t.warp = i / kWarp;
    t.lane = i % kWarp;
  }
  g_gdim = grid;
  g_bdim = block;
  // blocks run one after another; the driver may reverse the order (options().reverse_blocks)
  // to find output elements whose value depends on it (blocks writing the same element)
  const bool reverse = options().reverse_blocks != 0;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        g_bid = reverse ? uint3{grid.x - 1 - x, grid.y - 1 - y, grid.z - 1 - z} : uint3{x, y, z};
        run_block();
      }
  g_tid = uint3{0, 0, 0};
  g_bid = uint3{0, 0, 0};
  // dynamic shared memory: report writes into its slack, then release it
  Region *r = find_region(L.dyn);
  if (r) {
    char *guard = r->map + r->map_len - page_size();
    for (char *q = r->user + r->size; q < guard; ++q)
      if ((unsigned char)*q != kCanary)
        fail(FAIL_OOB, "out-of-bounds write: %zu byte(s) past the end of dynamic shared memory (%zu bytes)",
             (size_t)(q - r->user) - r->size + 1, r->size);
    guarded_free(L.dyn);
  }
  L.dyn = nullptr;
  L.active = false;
  current_kernel() = saved_kernel;
  return 0;
}

template <class F>
inline int launch(const char *name, dim3 grid, dim3 block, size_t shmem, const void *stream, F &&body) {
  (void)stream;
  typedef std::remove_reference_t<F> FT;
  return launch_erased(name, grid, block, shmem, [](void *p) { (*static_cast<FT *>(p))(); },
                       (void *)&body);
}

// The __xp_kernel_<name> stubs call this.
// (Called by the driver for a kernel entry, which stands in for the host: such a launch counts as
// cooperative; cudaLaunchKernel(const void *) reaches it with pending_cooperative() already 0.)
template <class... P>
inline void launch_stub(const char *name, const xp_launch_t *cfg, void (*k)(P...), void **args) {
  if (pending_cooperative() < 0) pending_cooperative() = 1;
  auto body = [k, args]() { ::xp::call_with_args(k, args); };
  launch(name, dim3(cfg->grid[0], cfg->grid[1], cfg->grid[2]), dim3(cfg->block[0], cfg->block[1], cfg->block[2]),
         (size_t)cfg->shmem, nullptr, body);
}

// Kernel address -> its __xp_kernel_<name> stub (registered by the generated stubs), so an
// untyped cudaLaunchKernel((void*)k, ...) can run it.
typedef void (*StubFn)(const xp_launch_t *, void **);
inline std::vector<std::pair<const void *, StubFn>> &kernel_registry() {
  static std::vector<std::pair<const void *, StubFn>> r;
  return r;
}
inline int register_kernel(const void *k, StubFn stub) {
  kernel_registry().push_back({k, stub});
  return (int)kernel_registry().size();
}
inline StubFn find_stub(const void *k) {
  for (auto &e : kernel_registry())
    if (e.first == k) return e.second;
  return nullptr;
}
inline int launch_untyped(const void *k, dim3 grid, dim3 block, void **args, size_t shmem, bool cooperative = false) {
  StubFn s = find_stub(k);
  pending_cooperative() = cooperative ? 1 : 0;
  if (!s) {
    pending_cooperative() = -1;
    warn("launch of %p: not a kernel of this file (templates need a typed launch)", k);
    return 98;  // cudaErrorInvalidDeviceFunction
  }
  xp_launch_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.grid[0] = grid.x; cfg.grid[1] = grid.y; cfg.grid[2] = grid.z;
  cfg.block[0] = block.x; cfg.block[1] = block.y; cfg.block[2] = block.z;
  cfg.shmem = shmem;
  s(&cfg, args);
  return 0;
}

// File-scope `extern __shared__ T name[];` becomes a DynShared<T> object.
template <class T>
struct DynShared {
  operator T *() const { return static_cast<T *>(dyn_shared()); }
  T &operator[](long long i) const { return static_cast<T *>(dyn_shared())[i]; }
};

}}  // namespace xp::gpu

inline void __syncthreads() { xp::gpu::block_barrier(1); }
inline int __syncthreads_count(int p) { return xp::gpu::block_barrier(p); }
inline int __syncthreads_and(int p) { int t = 0; int c = xp::gpu::block_barrier(p, &t); return c == t; }
inline int __syncthreads_or(int p) { return xp::gpu::block_barrier(p) != 0; }
