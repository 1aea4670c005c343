// xp_core.h - shared core of xpiler's CPU virtual device (CUDA, HIP and BANG emulators).
//
// What lives here (and nowhere else):
//   * the C ABI the Python driver (xpiler/run.py) calls: xp_options_t, xp_launch_t,
//     __xp_configure, __xp_device_alloc/free, __xp_check_canaries, and the per-kernel launcher
//     stub __xp_kernel_<name>(const xp_launch_t*, void** args) built by XP_KERNEL_STUB(name);
//   * error reporting: one line "__XPILER_ERROR__ {json}" on stderr, then _exit(code), so the
//     driver can raise the matching typed exception (kind: runtime | oob | strict | memory | abort);
//   * fibers (x86-64 context switch) used to run the threads of a block / the tasks of a BANG
//     launch with true barrier semantics on one OS thread (deterministic);
//   * guarded memory: every buffer (argument, device allocation, shared memory, fiber stack)
//     has a slot of its own in one reserved arena, between PROT_NONE guards of >= 4 GiB, so an
//     access before or past it faults and is reported as an out-of-bounds access naming it (see
//     "guarded allocations" below); the slack bytes next to the data hold a canary checked after
//     each run.
//
// Everything is header-only and `static`/`inline`: each emulated translation unit is one .so.
#pragma once
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <sys/mman.h>
#include <ucontext.h>
#include <algorithm>
#include <unistd.h>
#include <type_traits>
#include <utility>
#include <string>
#include <vector>

extern "C" {
// Options the driver passes before each run (mirrors xpiler/run.py::_Options).
typedef struct xp_options {
  int strict;                 // 1: enforce target rules, poison fresh device memory
  int max_threads_per_block;  // CUDA/HIP
  long long shared_mem_bytes; // CUDA/HIP static + dynamic shared memory per block
  int warp_size;              // 32 (CUDA) or 64 (HIP)
  long long nram_bytes, wram_bytes, sram_bytes, ldram_bytes;  // BANG per core / cluster
  int clusters, cores_per_cluster;                            // BANG device profile
  int fresh_fill;             // 0: fresh memory as strict decides; k > 0: filled with byte k - 1
  int reverse_blocks;         // 1: CUDA/HIP blocks and the threads of a block / BANG tasks run in reverse order (order-dependent results)
} xp_options_t;

// Launch configuration for calling a device kernel directly (kernel entry).
typedef struct xp_launch {
  unsigned grid[3], block[3];
  unsigned long long shmem;
  unsigned dim[3];   // BANG task dims
  int ktype;         // BANG: number of cores of the function type (1 BLOCK, 4 UNION1, 8 UNION2, ...)
} xp_launch_t;
}

namespace xp {

inline xp_options_t &options() {
  static xp_options_t o = {0, 1024, 48 * 1024, 32, 512 * 1024, 512 * 1024, 2048 * 1024,
                           1 << 30, 4, 4, 0};
  return o;
}

// The byte fresh device and on-chip memory is filled with, or -1 for none (zeros from the
// kernel): options().fresh_fill - 1 when the driver sets it (a second run of a source with
// another fill finds the outputs that depend on uninitialised memory), else 0xFF in strict
// mode (poison: NaN for float / half, -1 for integers).
inline int fresh_fill() {
  const xp_options_t &o = options();
  return o.fresh_fill > 0 ? o.fresh_fill - 1 : (o.strict ? 0xFF : -1);
}

// Name of the kernel currently running (for error messages).
inline const char *&current_kernel() {
  static const char *k = nullptr;
  return k;
}

// ---------------------------------------------------------------- error reporting
inline void json_escape(char *out, size_t cap, const char *s) {
  size_t n = 0;
  for (; *s && n + 7 < cap; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') { out[n++] = '\\'; out[n++] = (char)c; }
    else if (c == '\n') { out[n++] = '\\'; out[n++] = 'n'; }
    else if (c < 0x20) { n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c); }
    else out[n++] = (char)c;
  }
  out[n] = 0;
}

// Exit codes of the emulated process; the driver maps them (and the JSON line) to exceptions.
enum FailKind { FAIL_RUNTIME = 0, FAIL_OOB = 1, FAIL_STRICT = 2, FAIL_MEMORY = 3, FAIL_ABORT = 4 };

[[noreturn]] inline void fail(FailKind kind, const char *fmt, ...) {
  static const char *names[] = {"runtime", "oob", "strict", "memory", "abort"};
  char msg[1024], esc[2048], kern[256], line[2600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  json_escape(esc, sizeof esc, msg);
  json_escape(kern, sizeof kern, current_kernel() ? current_kernel() : "");
  int n = snprintf(line, sizeof line, "\n__XPILER_ERROR__ {\"kind\": \"%s\", \"kernel\": \"%s\", \"message\": \"%s\"}\n",
                   names[kind], kern, esc);
  fflush(stdout);
  if (write(2, line, (size_t)n) < 0) {}
  _exit(40 + kind);
}

// A warning does not stop the run; the driver collects these lines into RunResult.warnings.
inline void warn(const char *fmt, ...) {
  char msg[1024], esc[2048], line[2200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  json_escape(esc, sizeof esc, msg);
  int n = snprintf(line, sizeof line, "\n__XPILER_WARNING__ {\"message\": \"%s\"}\n", esc);
  if (write(2, line, (size_t)n) < 0) {}
}

// Strict-mode rules the driver may relax for one run (__xp_relax_rules): a translation's output
// is held to a rule only where its source keeps it.
enum RelaxableRule : unsigned { RULE_BARRIER_DIVERGENCE = 1u };
inline unsigned &relaxed_rules() {
  static unsigned r = 0;
  return r;
}

// Strict-mode rule check: in strict mode a violation stops the run; in lenient mode it is a
// warning, reported once per rule site.
#define XP_RULE(cond, ...)                                                        \
  do {                                                                            \
    if (!(cond)) {                                                                \
      if (::xp::options().strict) ::xp::fail(::xp::FAIL_STRICT, __VA_ARGS__);     \
      static bool xp_rule_warned_ = false;                                        \
      if (!xp_rule_warned_) { xp_rule_warned_ = true; ::xp::warn(__VA_ARGS__); }  \
    }                                                                             \
  } while (0)

// ---------------------------------------------------------------- guarded allocations
// Every buffer the program can reach (entry arguments, device allocations, shared memory, fiber
// stacks) lives in its own slot of one reserved address range, the arena:
//
//   [ guard G ][ page-rounded body: slack | data ][ guard G ]
//
// The guards are PROT_NONE and at least kMinGuard bytes (4 GiB, or the buffer's own size when
// larger) on each side, and everything of the arena that is not a live body is PROT_NONE too, so
// an access up to G bytes past either end of a buffer faults inside that buffer's own slot and is
// reported naming it, whatever its distance. The data ends 16-byte aligned right before the upper
// guard; the few slack bytes after it and the slack before it (in the first page) hold a canary
// that is checked after each run (writes there are caught; reads of them are not). Reserving the
// arena costs address space only (PROT_NONE, MAP_NORESERVE); the driver's memory limit is applied
// to committed bodies by this allocator (the address-space rlimit cannot see inside a
// reservation).
struct Region {
  char *map; size_t map_len;   // the committed body (whole mapping when lo/hi are unset)
  char *user; size_t size;     // what the program sees
  int id; const char *what;    // class: "device allocation" / "fiber stack (kernel locals)" / ...
  bool live;
  const char *label = nullptr; // how errors name it: "argument 'out'", "device allocation 'd_x' (...)"
  char *lo = nullptr, *hi = nullptr;  // the slot: guards included (faults in it belong to this buffer)
  bool stack = false;          // a fiber stack: a fault in its lower guard is a stack overflow
};

inline std::vector<Region> &regions() {
  static std::vector<Region> r;
  return r;
}

constexpr unsigned char kCanary = 0xA5;
// Start alignment of device allocations: 32 bytes covers every vector type and wmma's 256-bit
// pointer rule (hardware gives 256; a larger value would widen the unguarded slack).
constexpr size_t kDeviceAlign = 32;
constexpr size_t kMinGuard = size_t(4) << 30;      // 4 GiB each side of a buffer
constexpr size_t kStackGuard = size_t(256) << 20;  // below (and above) a fiber stack

inline size_t page_size() {
  static size_t p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

inline size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Arena {
  char *base = nullptr;
  size_t len = 0, next = 0, guard = 0;
  size_t committed = 0, limit = 0;   // bytes of live bodies; limit 0 = none
  std::vector<std::pair<char *, size_t>> free_slots;  // released slots (reused once the arena is full)
};

inline Arena &arena() {
  static Arena a;
  static bool tried = false;
  if (!tried) {
    tried = true;
    // 32 TiB of address space when the system allows it; smaller reservations (with guards
    // scaled down) where an address-space limit forbids that
    for (int shift = 45; shift >= 34 && !a.base; shift -= 3) {
      size_t len = size_t(1) << shift;
      void *m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (m != MAP_FAILED) {
        a.base = (char *)m;
        a.len = len;
        a.guard = std::min(kMinGuard, len >> 8);
      }
    }
  }
  return a;
}

// Label strings live as long as the process (error messages may name a freed buffer).
inline const char *intern(const std::string &s) {
  static std::deque<std::string> names;
  names.push_back(s);
  return names.back().c_str();
}

inline const char *region_label(const Region &r) { return r.label ? r.label : r.what; }

// A slot of `body` bytes between guards of `guard` bytes; returns the body (nullptr: no arena room).
inline char *arena_slot(size_t body, size_t guard, char **lo, char **hi) {
  Arena &a = arena();
  if (!a.base) return nullptr;
  size_t need = guard + body + guard;
  char *slot = nullptr;
  if (need <= a.len - a.next) {
    slot = a.base + a.next;
    a.next += need;
  } else {
    for (auto it = a.free_slots.begin(); it != a.free_slots.end(); ++it)
      if (it->second >= need) {
        slot = it->first;
        need = it->second;
        a.free_slots.erase(it);
        break;
      }
    if (!slot) return nullptr;
    guard = (need - body) / 2 / page_size() * page_size();
  }
  *lo = slot;
  *hi = slot + need;
  return slot + guard;
}

inline void charge(size_t bytes, const char *what) {
  Arena &a = arena();
  if (a.limit && a.committed + bytes > a.limit)
    fail(FAIL_MEMORY, "cannot allocate %zu bytes of %s: the run's memory limit is %zu MiB (%zu MiB in use)",
         bytes, what, a.limit >> 20, a.committed >> 20);
  a.committed += bytes;
}

inline int push_region(Region r) {
  r.id = (int)regions().size();
  regions().push_back(r);
  return r.id;
}

// Allocate `size` bytes ending right before a guard (start aligned to `align`); `label` names
// the buffer in errors (nullptr: `what`).
inline void *guarded_alloc(size_t size, const char *what, size_t align = 16, int fill = -1,
                           const char *label = nullptr, bool stack = false) {
  size_t ps = page_size();
  size_t padded = round_up(size, align);
  if (padded == 0) padded = align;
  size_t body = round_up(padded, ps);
  Arena &a = arena();
  size_t guard = stack ? std::min(kStackGuard, a.guard) : std::max(a.guard, std::min(body, a.len >> 6));
  char *lo = nullptr, *hi = nullptr;
  char *map = arena_slot(body, guard, &lo, &hi);
  if (map) {
    charge(body, label ? label : what);
    if (mmap(map, body, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
      fail(FAIL_MEMORY, "cannot allocate %zu bytes of %s", size, label ? label : what);
  } else {  // no arena (or it is full): a mapping of its own with one guard page on each side
    void *m = mmap(nullptr, body + 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) fail(FAIL_MEMORY, "cannot allocate %zu bytes of %s", size, label ? label : what);
    lo = (char *)m;
    hi = lo + body + 2 * ps;
    mprotect(lo, ps, PROT_NONE);
    mprotect(hi - ps, ps, PROT_NONE);
    map = lo + ps;
  }
  char *user = map + body - padded;
  if (fill >= 0) memset(user, fill, padded);  // fresh_fill(): poison or a driver's pattern
  memset(user + size, kCanary, padded - size);
  memset(map, kCanary, (size_t)(user - map));
  Region r{map, body, user, size, 0, what, true};
  r.label = label;
  r.lo = lo;
  r.hi = hi;
  r.stack = stack;
  push_region(r);
  return user;
}

inline char *slot_lo(const Region &r) { return r.lo ? r.lo : r.map; }
inline char *slot_hi(const Region &r) { return r.hi ? r.hi : r.map + r.map_len; }

// The live buffer whose slot (guards included) holds p; nullptr when none.
inline Region *find_region(const void *p) {
  const char *c = (const char *)p;
  for (auto &r : regions())
    if (r.live && c >= slot_lo(r) && c < slot_hi(r)) return &r;
  return nullptr;
}

// Writes into the slack bytes around the data (between the data and the guards).
inline void check_slack(const Region &r, const char *when) {
  if (!r.lo) {  // a mapping placed by someone else (BANG on-chip arenas): only the upper slack
    char *guard = r.map + r.map_len - page_size();
    for (char *q = r.user + r.size; q < guard; ++q)
      if ((unsigned char)*q != kCanary)
        fail(FAIL_OOB, "out-of-bounds write of %s at byte offset %zu (it has %zu bytes: %zu byte(s) past its end)%s",
             region_label(r), (size_t)(q - r.user), r.size, (size_t)(q - r.user) - r.size, when);
    return;
  }
  for (char *q = r.map; q < r.user; ++q)
    if ((unsigned char)*q != kCanary)
      fail(FAIL_OOB, "out-of-bounds write of %s at byte offset -%zu (it has %zu bytes: %zu byte(s) before its start)%s",
           region_label(r), (size_t)(r.user - q), r.size, (size_t)(r.user - q), when);
  for (char *q = r.user + r.size; q < r.map + r.map_len; ++q)
    if ((unsigned char)*q != kCanary)
      fail(FAIL_OOB, "out-of-bounds write of %s at byte offset %zu (it has %zu bytes: %zu byte(s) past its end)%s",
           region_label(r), (size_t)(q - r.user), r.size, (size_t)(q - r.user) - r.size, when);
}

inline void guarded_free(void *p) {
  Region *r = find_region(p);
  if (!r || r->user != (char *)p) fail(FAIL_RUNTIME, "free of a pointer that was not allocated on the device (%p)", p);
  // the slack is checked now: after the release an overrun of a freed buffer would go unseen
  check_slack(*r, ", found when it was freed");
  r->live = false;
  if (r->lo) {
    // back to PROT_NONE: a later access through a dangling pointer faults and is reported as such
    mmap(r->map, r->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    Arena &a = arena();
    if (r->map >= a.base && r->map < a.base + a.len) {
      a.committed -= r->map_len;
      a.free_slots.push_back({r->lo, (size_t)(r->hi - r->lo)});
    }
  } else {
    munmap(r->map, r->map_len);
  }
}

inline void check_canaries() {
  for (auto &r : regions())
    if (r.live && r.what && !r.stack) check_slack(r, "");
}

// An entry argument the driver placed in shared memory ([map, map + map_len) ends at one guard
// page): moved into an arena slot of its own (the parent keeps its view of the same pages), so
// accesses far past it fault and name it. Returns the argument's address in this process.
inline void *adopt_buffer(char *map, size_t map_len, char *user, size_t size, const char *label) {
  size_t ps = page_size();
  size_t body = map_len - ps;
  char *lo = nullptr, *hi = nullptr;
  char *slot = arena_slot(body, std::max(arena().guard, std::min(body, arena().len >> 6)), &lo, &hi);
  char *at = map;
  if (slot) {
    void *m = mremap(map, body, body, MREMAP_MAYMOVE | MREMAP_FIXED, slot);
    if (m == MAP_FAILED) lo = hi = nullptr;
    else at = (char *)m;
  }
  Region r{at, body, at + (user - map), size, 0, "argument", true};
  r.label = label;
  if (lo && at == slot) {
    r.lo = lo;
    r.hi = hi;
    memset(at, kCanary, (size_t)(r.user - at));
  } else {
    r.map_len = map_len;  // left in place: its own guard page after it
  }
  push_region(r);
  return r.user;
}

// Where the program allocated a device buffer: the runtime's cudaMalloc / hipMalloc / cnrtMalloc
// macros pass the call's argument text and position (#line maps it to the user's file), so an
// out-of-bounds access names the variable: "device allocation 'd_out' (cudaMalloc at add.cu:12)".
struct AllocSite { const char *args; const char *file; int line; };

inline const char *site_label(const char *api, const AllocSite &s) {
  // the first top-level argument, e.g. "(void **)&d_out" or "reinterpret_cast<void**>(&d_out)"
  std::string first;
  int depth = 0;
  for (const char *c = s.args ? s.args : ""; *c; ++c) {
    if (*c == '(' || *c == '[' || *c == '<') depth++;
    else if (*c == ')' || *c == ']' || *c == '>') depth--;
    else if (*c == ',' && depth == 0) break;
    first += *c;
  }
  size_t amp = first.rfind('&');
  std::string name = amp == std::string::npos ? first : first.substr(amp + 1);
  size_t b = name.find_first_not_of(" \t(");
  size_t e = name.find_last_not_of(" \t)");
  name = b == std::string::npos ? std::string() : name.substr(b, e - b + 1);
  if (name.size() > 80) name = name.substr(0, 77) + "...";
  const char *file = s.file ? s.file : "";
  const char *slash = strrchr(file, '/');
  std::string where = std::string(slash ? slash + 1 : file) + ":" + std::to_string(s.line);
  return intern(name.empty() ? std::string("device allocation (") + api + " at " + where + ")"
                             : "device allocation '" + name + "' (" + api + " at " + where + ")");
}

// Which region a faulting address belongs to: a live slot first, then a freed one.
inline Region *fault_region(const char *addr, bool *freed) {
  *freed = false;
  if (Region *r = find_region(addr)) return r;
  for (auto it = regions().rbegin(); it != regions().rend(); ++it)
    if (!it->live && addr >= slot_lo(*it) && addr < slot_hi(*it)) { *freed = true; return &*it; }
  return nullptr;
}

inline const char *&current_access() {  // "read" / "write" of the faulting instruction
  static const char *a = "access";
  return a;
}

inline void report_fault(const char *addr, const char *sp) {
  const char *kind = current_access();
  bool freed = false;
  if (Region *r = fault_region(addr, &freed)) {
    long long off = (long long)(addr - r->user);
    if (r->stack && addr < r->map)
      fail(FAIL_ABORT, "stack overflow: a thread of the kernel used more than its %zu-byte stack "
           "(large local arrays or deep recursion)", r->size);
    if (freed)
      fail(FAIL_OOB, "%s of %s after it was freed (byte offset %lld of its %zu bytes)", kind, region_label(*r), off, r->size);
    if (off < 0)
      fail(FAIL_OOB, "out-of-bounds %s of %s at byte offset %lld (it has %zu bytes: %lld byte(s) before its start)",
           kind, region_label(*r), off, r->size, -off);
    if ((size_t)off == r->size)
      fail(FAIL_OOB, "out-of-bounds %s of %s at byte offset %lld (it has %zu bytes: the first byte past its end)",
           kind, region_label(*r), off, r->size);
    if ((size_t)off > r->size)
      fail(FAIL_OOB, "out-of-bounds %s of %s at byte offset %lld (it has %zu bytes: %lld byte(s) past its end)",
           kind, region_label(*r), off, r->size, off - (long long)r->size);
  }
  Arena &a = arena();
  if (a.base && addr >= a.base && addr < a.base + a.len)
    fail(FAIL_OOB, "%s at address %p: device address space outside every buffer (a wild pointer: more than "
         "%zu GiB past a buffer)", kind, (const void *)addr, a.guard >> 30);
  if ((uintptr_t)addr < 65536)
    fail(FAIL_ABORT, "null pointer dereference (%s at address %p; a failed allocation?)", kind, (const void *)addr);
  // the main thread's stack: the fault lies just below (or at) the stack pointer
  if (sp && addr <= sp + 65536 && addr + 65536 >= sp)
    fail(FAIL_ABORT, "stack overflow (%s at %p next to the stack pointer): the program's stack is exhausted "
         "(large local arrays or deep recursion)", kind, (const void *)addr);
  fail(FAIL_ABORT, "segmentation fault: %s at address %p (invalid memory access)", kind, (const void *)addr);
}

inline void segv_handler(int sig, siginfo_t *info, void *ctx) {
  const char *sp = nullptr;
#if defined(__x86_64__)
  ucontext_t *uc = (ucontext_t *)ctx;
  current_access() = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? "write" : "read";
  sp = (const char *)uc->uc_mcontext.gregs[REG_RSP];
#endif
  if (sig == SIGBUS && !find_region(info->si_addr))
    fail(FAIL_ABORT, "bus error at address %p", info->si_addr);
  report_fault((const char *)info->si_addr, sp);
}

inline void fpe_handler(int, siginfo_t *, void *) { fail(FAIL_ABORT, "arithmetic exception (integer division by zero?)"); }
inline void abort_handler(int, siginfo_t *, void *) { fail(FAIL_ABORT, "the program aborted (assertion failed?)"); }

inline void install_handlers() {
  static bool done = false;
  if (done) return;
  done = true;
  static char altstack[1 << 16];
  stack_t ss = {};
  ss.ss_sp = altstack;
  ss.ss_size = sizeof altstack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa = {};
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sa.sa_sigaction = segv_handler;
  sigaction(SIGSEGV, &sa, nullptr);
  sigaction(SIGBUS, &sa, nullptr);
  sa.sa_sigaction = fpe_handler;
  sigaction(SIGFPE, &sa, nullptr);
  sa.sa_sigaction = abort_handler;
  sigaction(SIGABRT, &sa, nullptr);
}

// ---------------------------------------------------------------- fibers
// Minimal x86-64 SysV context switch: saves callee-saved registers on the current stack,
// stores the stack pointer in *from, loads `to` and returns into the other fiber.
extern "C" void xp_ctx_switch(void **from, void *to);
extern "C" void xp_ctx_trampoline();
asm(R"(
.text
.globl xp_ctx_switch
.hidden xp_ctx_switch
.type xp_ctx_switch,@function
xp_ctx_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size xp_ctx_switch,.-xp_ctx_switch
.globl xp_ctx_trampoline
.hidden xp_ctx_trampoline
.type xp_ctx_trampoline,@function
xp_ctx_trampoline:
  movq %r13, %rdi
  subq $8, %rsp
  callq *%r12
  ud2
.size xp_ctx_trampoline,.-xp_ctx_trampoline
)");

// A fiber runs fn(arg) on its own guarded stack. fn must never return: it ends by switching
// back to the scheduler (Scheduler::finish()).
struct Fiber {
  void *sp = nullptr;
  char *stack = nullptr;
  size_t stack_size = 0;
  void prepare(void (*fn)(void *), void *arg) {
    uintptr_t top = ((uintptr_t)(stack + stack_size)) & ~(uintptr_t)15;
    void **s = (void **)top;
    *--s = nullptr;                          // alignment slot
    *--s = (void *)xp_ctx_trampoline;        // return address of xp_ctx_switch
    *--s = nullptr;                          // rbp
    *--s = nullptr;                          // rbx
    *--s = (void *)fn;                       // r12
    *--s = arg;                              // r13
    *--s = nullptr;                          // r14
    *--s = nullptr;                          // r15
    sp = s;
  }
};

// Stacks are reused across launches; each ends at a guard page so overflow is reported.
inline char *fiber_stack(size_t index, size_t size) {
  static std::vector<std::pair<char *, size_t>> pool;
  while (pool.size() <= index) pool.push_back({nullptr, 0});
  if (pool[index].second < size) {
    void *p = guarded_alloc(size, "fiber stack (kernel locals)", 64, -1, nullptr, true);
    pool[index] = {(char *)p, size};
  }
  return pool[index].first;
}

// Launcher stub support: call a kernel with arguments given as an array of pointers to values.
template <class... A, size_t... I>
inline void call_with_args(void (*k)(A...), void **args, std::index_sequence<I...>) {
  k(*static_cast<std::remove_reference_t<A> *>(args[I])...);
}
template <class... A>
inline void call_with_args(void (*k)(A...), void **args) {
  call_with_args(k, args, std::index_sequence_for<A...>{});
}

}  // namespace xp

#define XP_EXPORT extern "C" __attribute__((visibility("default"), used))
XP_EXPORT void __xp_configure(const xp_options_t *o) {
  xp::options() = *o;
  xp::install_handlers();
  xp::arena();  // reserve the address space now, before the driver sets the address-space rlimit
}
XP_EXPORT void __xp_relax_rules(unsigned mask) { xp::relaxed_rules() = mask; }
// Bytes of guarded buffers (device allocations, shared memory, stacks) the run may commit.
XP_EXPORT void __xp_set_memory_limit(unsigned long long bytes) { xp::arena().limit = (size_t)bytes; }
XP_EXPORT void *__xp_device_alloc(unsigned long long bytes) {
  xp::install_handlers();
  return xp::guarded_alloc((size_t)bytes, "device allocation", xp::kDeviceAlign, xp::fresh_fill());
}
// The driver's device copy of a kernel entry's argument: errors name the argument.
XP_EXPORT void *__xp_device_alloc_named(unsigned long long bytes, const char *name) {
  xp::install_handlers();
  return xp::guarded_alloc((size_t)bytes, "device allocation", xp::kDeviceAlign, xp::fresh_fill(),
                           xp::intern(std::string("argument '") + name + "'"));
}
XP_EXPORT void __xp_device_free(void *p) { xp::guarded_free(p); }
XP_EXPORT void __xp_check_canaries() { xp::check_canaries(); }

// Host buffers the driver places in guarded shared memory (entry arguments): moved into an arena
// slot and registered, so an out-of-bounds access through them names the argument. Returns the
// argument's address in this process.
XP_EXPORT void *__xp_register_buffer(void *map, unsigned long long map_len, void *user,
                                     unsigned long long size, const char *name) {
  xp::install_handlers();
  return xp::adopt_buffer((char *)map, (size_t)map_len, (char *)user, (size_t)size,
                          xp::intern(std::string("argument '") + name + "'"));
}

#ifndef XP_CLANG_PARSE  // (the C++ front-end parses with clang: the library's own operators then)
// Allocation failures in user C++ code (e.g. under the driver's memory limit) are reported as
// memory errors instead of an uncaught std::bad_alloc.
void *operator new(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) xp::fail(xp::FAIL_MEMORY, "out of memory: allocating %zu bytes failed (memory limit)", n);
  return p;
}
void *operator new[](size_t n) { return operator new(n); }
void operator delete(void *p) noexcept { free(p); }
void operator delete[](void *p) noexcept { free(p); }
void operator delete(void *p, size_t) noexcept { free(p); }
void operator delete[](void *p, size_t) noexcept { free(p); }
#endif
