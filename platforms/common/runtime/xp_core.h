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
//   * guarded device memory: every device allocation ends at a PROT_NONE page, so reading or
//     writing past its end faults and is reported as an out-of-bounds access naming the
//     allocation; the <= 15 slack bytes before the guard hold a canary checked after each run.
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
                           1 << 30, 4, 4};
  return o;
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
struct Region {
  char *map; size_t map_len;   // whole mapping incl. guard page
  char *user; size_t size;     // what the program sees
  int id; const char *what;    // "device allocation" / "fiber stack" / ...
  bool live;
};

inline std::vector<Region> &regions() {
  static std::vector<Region> r;
  return r;
}

constexpr unsigned char kCanary = 0xA5;
// Start alignment of device allocations: 32 bytes covers every vector type and wmma's 256-bit
// pointer rule (hardware gives 256; a larger value would widen the unguarded slack).
constexpr size_t kDeviceAlign = 32;

inline size_t page_size() {
  static size_t p = (size_t)sysconf(_SC_PAGESIZE);
  return p;
}

// Allocate `size` bytes ending right before a PROT_NONE guard page (start aligned to `align`).
inline void *guarded_alloc(size_t size, const char *what, size_t align = 16, bool poison = false) {
  size_t ps = page_size();
  size_t padded = (size + align - 1) / align * align;
  if (padded == 0) padded = align;
  size_t body = (padded + ps - 1) / ps * ps;
  size_t len = body + ps;
  void *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) fail(FAIL_MEMORY, "cannot allocate %zu bytes of %s", size, what);
  char *map = (char *)m;
  mprotect(map + body, ps, PROT_NONE);
  char *user = map + body - padded;
  if (poison) memset(user, 0xFF, padded);  // NaN for float/half, -1 for integers
  memset(user + size, kCanary, padded - size);
  int id = (int)regions().size();
  regions().push_back({map, len, user, size, id, what, true});
  return user;
}

inline Region *find_region(const void *p) {
  for (auto &r : regions())
    if (r.live && (const char *)p >= r.map && (const char *)p < r.map + r.map_len) return &r;
  return nullptr;
}

inline void guarded_free(void *p) {
  Region *r = find_region(p);
  if (!r || r->user != (char *)p) fail(FAIL_RUNTIME, "free of a pointer that was not allocated on the device (%p)", p);
  // the slack is checked now: after munmap an overrun of a freed buffer would go unseen
  char *guard = r->map + r->map_len - page_size();
  for (char *q = r->user + r->size; q < guard; ++q)
    if ((unsigned char)*q != kCanary)
      fail(FAIL_OOB, "out-of-bounds write: %zu byte(s) past the end of %s #%d (%zu bytes), found when it was freed",
           (size_t)(q - (r->user + r->size)) + 1, r->what, r->id, r->size);
  munmap(r->map, r->map_len);
  r->live = false;
}

// Writes into the slack between the end of an allocation and its guard page.
inline void check_canaries() {
  for (auto &r : regions()) {
    if (!r.live) continue;
    size_t ps = page_size();
    char *guard = r.map + r.map_len - ps;
    for (char *q = r.user + r.size; q < guard; ++q)
      if ((unsigned char)*q != kCanary)
        fail(FAIL_OOB, "out-of-bounds write: %zu byte(s) past the end of %s #%d (%zu bytes)",
             (size_t)(q - (r.user + r.size)) + 1, r.what, r.id, r.size);
  }
}

inline void segv_handler(int sig, siginfo_t *info, void *) {
  const char *addr = (const char *)info->si_addr;
  for (auto &r : regions()) {
    if (!r.live) continue;
    const char *guard = r.map + r.map_len - page_size();
    if (addr >= guard && addr < r.map + r.map_len)
      fail(FAIL_OOB, "out-of-bounds access: %zu byte(s) past the end of %s #%d (%zu bytes)",
           (size_t)(addr - (r.user + r.size)) + 1, r.what, r.id, r.size);
  }
  if ((uintptr_t)addr < 65536)
    fail(FAIL_ABORT, "null pointer dereference at address %p (a failed allocation?)", info->si_addr);
  fail(FAIL_ABORT, "%s at address %p (invalid memory access)", sig == SIGBUS ? "bus error" : "segmentation fault",
       info->si_addr);
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
    void *p = guarded_alloc(size, "fiber stack (kernel locals)", 64);
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
}
XP_EXPORT void *__xp_device_alloc(unsigned long long bytes) {
  xp::install_handlers();
  return xp::guarded_alloc((size_t)bytes, "device allocation", xp::kDeviceAlign, xp::options().strict != 0);
}
XP_EXPORT void __xp_device_free(void *p) { xp::guarded_free(p); }
XP_EXPORT void __xp_check_canaries() { xp::check_canaries(); }

// Host buffers the driver places in guarded shared memory (entry arguments): registered so an
// out-of-bounds access through them names the argument.
XP_EXPORT void __xp_register_buffer(void *map, unsigned long long map_len, void *user,
                                    unsigned long long size, const char *name) {
  xp::install_handlers();
  static std::deque<std::string> names;  // deque: c_str() stays valid
  names.emplace_back(std::string("argument '") + name + "'");
  int id = (int)xp::regions().size();
  xp::regions().push_back({(char *)map, (size_t)map_len, (char *)user, (size_t)size, id, names.back().c_str(), true});
}

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
