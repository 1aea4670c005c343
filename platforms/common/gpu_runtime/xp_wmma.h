// xp_wmma.h - nvcuda::wmma (CUDA <mma.h>) on the virtual device. Facts and the per-lane element
// mapping live in platforms/cuda/intrinsics/wmma.toml (tests check this file against it).
//
// Per-lane mapping (design choice; the hardware one is unspecified): a fragment holds a
// rows x cols matrix (matrix_a: m x k, matrix_b: k x n, accumulator: m x n); lane L of the warp
// owns the E = rows*cols/32 consecutive row-major elements [L*E, (L+1)*E): x[e] is element
// (i / cols, i % cols) with i = L*E + e. The Layout parameter only says how load_matrix_sync
// reads memory, never how elements sit in x[].
//
// load/store/mma are warp collectives: every lane of the warp must call them (else: runtime
// error); the last lane to arrive does the whole operation for all 32 lanes, so memory written by
// any lane before the call is visible to it, and the whole tile is written when any lane resumes.
// Strict mode: ldm*sizeof(T) % 16 == 0, pointer 32-byte (256-bit) aligned, identical arguments.
#pragma once
#include <cfloat>
#include <cstdint>
#include "xp_gpu_sched.h"
#include "xp_gpu_half.h"

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
struct u4 {};
struct s4 {};
struct b1 {};
}  // namespace precision
namespace experimental { namespace precision { using namespace ::nvcuda::wmma::precision; } }

namespace detail {
template <class T> struct storage { typedef T type; };
template <> struct storage<precision::tf32> { typedef float type; };
template <class Use, int M, int N, int K> struct shape;
template <int M, int N, int K> struct shape<matrix_a, M, N, K> { enum { rows = M, cols = K }; };
template <int M, int N, int K> struct shape<matrix_b, M, N, K> { enum { rows = K, cols = N }; };
template <int M, int N, int K> struct shape<accumulator, M, N, K> { enum { rows = M, cols = N }; };
template <class L> struct is_col { enum { value = 0 }; };
template <> struct is_col<col_major> { enum { value = 1 }; };
}  // namespace detail

template <class Use, int m, int n, int k, class T, class Layout = void>
class fragment {
 public:
  typedef T element_type;
  typedef typename detail::storage<T>::type storage_element_type;
  enum { rows = detail::shape<Use, m, n, k>::rows, cols = detail::shape<Use, m, n, k>::cols };
  static_assert((m == 16 && n == 16 && (k == 16 || k == 8)) || (m == 32 && n == 8 && k == 16) ||
                    (m == 8 && n == 32 && k == 16) || (m == 8 && n == 8 && k == 4),
                "wmma: unsupported shape (m16n16k16, m32n8k16, m8n32k16, m16n16k8 tf32, m8n8k4 double)");
  enum { num_elements = rows * cols / 32 };
  storage_element_type x[num_elements];
};

namespace detail {

inline float to_f(float v) { return v; }
inline float to_f(__half v) { return __half2float(v); }
inline float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
inline double to_d(double v) { return v; }

// Values read by the tensor core from a tf32 operand: the top 19 bits (low 13 mantissa bits ignored).
inline float tf32_trunc(float v) { uint32_t u = xp::gpu::float_to_bits(v); return xp::gpu::bits_to_float(u & 0xffffe000u); }

struct LoadLane { void *frag; const void *p; unsigned ldm; int col; };

inline void check_ptr(const char *what, const void *p, unsigned ldm, size_t esz) {
  XP_RULE(((uintptr_t)p & 31) == 0, "%s: pointer %p is not 256-bit (32-byte) aligned", what, p);
  XP_RULE((ldm * esz) % 16 == 0, "%s: ldm = %u elements (%zu bytes) is not a multiple of 16 bytes (%zu elements)",
          what, ldm, ldm * esz, 16 / esz);
}

inline void check_full_warp(xp::gpu::WarpGroup &g, const char *what) {
  if (g.arrived != 0xffffffffull)
    xp::fail(xp::FAIL_RUNTIME, "%s executed by only %d of the 32 lanes of warp %d (all lanes must call it)", what,
             __builtin_popcountll(g.arrived), g.warp);
}

inline void check_uniform(xp::gpu::WarpGroup &g, const char *what) {
  LoadLane *l0 = static_cast<LoadLane *>(g.data[0]);
  for (int l = 1; l < 32; ++l) {
    LoadLane *d = static_cast<LoadLane *>(g.data[l]);
    XP_RULE(d->p == l0->p && d->ldm == l0->ldm && d->col == l0->col,
            "%s: lane %d passes different arguments than lane 0 (all lanes must pass the same pointer, ldm, layout)",
            what, l);
  }
}

template <class Frag, class P>
inline void load_resolve(xp::gpu::WarpGroup &g) {
  check_full_warp(g, "wmma::load_matrix_sync");
  check_uniform(g, "wmma::load_matrix_sync");
  const int E = Frag::num_elements;
  for (int l = 0; l < 32; ++l) {
    LoadLane *d = static_cast<LoadLane *>(g.data[l]);
    check_ptr("wmma::load_matrix_sync", d->p, d->ldm, sizeof(P));
    Frag &f = *static_cast<Frag *>(d->frag);
    const P *p = static_cast<const P *>(d->p);
    for (int e = 0; e < E; ++e) {
      int i = l * E + e, r = i / Frag::cols, c = i % Frag::cols;
      f.x[e] = p[d->col ? (size_t)c * d->ldm + r : (size_t)r * d->ldm + c];
    }
  }
}

template <class Frag, class P>
inline void store_resolve(xp::gpu::WarpGroup &g) {
  check_full_warp(g, "wmma::store_matrix_sync");
  check_uniform(g, "wmma::store_matrix_sync");
  const int E = Frag::num_elements;
  for (int l = 0; l < 32; ++l) {
    LoadLane *d = static_cast<LoadLane *>(g.data[l]);
    check_ptr("wmma::store_matrix_sync", d->p, d->ldm, sizeof(P));
    const Frag &f = *static_cast<const Frag *>(d->frag);
    P *p = const_cast<P *>(static_cast<const P *>(d->p));
    for (int e = 0; e < E; ++e) {
      int i = l * E + e, r = i / Frag::cols, c = i % Frag::cols;
      p[d->col ? (size_t)c * d->ldm + r : (size_t)r * d->ldm + c] = f.x[e];
    }
  }
}

struct MmaLane { void *d; const void *a, *b, *c; bool satf; };

template <class T> struct acc_traits;
template <> struct acc_traits<float> { typedef float acc; static float max_norm() { return FLT_MAX; } };
template <> struct acc_traits<__half> { typedef float acc; static float max_norm() { return 65504.0f; } };
template <> struct acc_traits<int> { typedef long long acc; };
template <> struct acc_traits<double> { typedef double acc; };

template <class T> inline float in_val(T v) { return to_f(v); }
template <> inline float in_val<float>(float v) { return v; }
inline long long in_int(signed char v) { return v; }
inline long long in_int(unsigned char v) { return v; }

template <class FD, class FA, class FB, class FC>
inline void mma_resolve(xp::gpu::WarpGroup &g) {
  check_full_warp(g, "wmma::mma_sync");
  constexpr int M = FA::rows, K = FA::cols, N = FB::cols;
  static_assert(FB::rows == K && FD::rows == M && FD::cols == N && FC::rows == M && FC::cols == N, "wmma: shape mismatch");
  typedef typename FA::storage_element_type TA;
  typedef typename FD::storage_element_type TD;
  typedef typename acc_traits<TD>::acc ACC;
  constexpr bool tf32 = std::is_same<typename FA::element_type, precision::tf32>::value;
  ACC A[M][K], B[K][N], D[M][N];
  const int EA = FA::num_elements, EB = FB::num_elements, EC = FC::num_elements;
  bool satf = false;
  for (int l = 0; l < 32; ++l) {
    MmaLane *d = static_cast<MmaLane *>(g.data[l]);
    satf = satf || d->satf;
    const FA &fa = *static_cast<const FA *>(d->a);
    const FB &fb = *static_cast<const FB *>(d->b);
    const FC &fc = *static_cast<const FC *>(d->c);
    for (int e = 0; e < EA; ++e) {
      int i = l * EA + e;
      TA v = fa.x[e];
      if constexpr (std::is_integral<TA>::value) A[i / K][i % K] = (ACC)v;
      else if constexpr (tf32) A[i / K][i % K] = tf32_trunc(v);
      else A[i / K][i % K] = (ACC)in_val(v);
    }
    for (int e = 0; e < EB; ++e) {
      int i = l * EB + e;
      auto v = fb.x[e];
      if constexpr (std::is_integral<TA>::value) B[i / N][i % N] = (ACC)v;
      else if constexpr (tf32) B[i / N][i % N] = tf32_trunc(v);
      else B[i / N][i % N] = (ACC)in_val(v);
    }
    for (int e = 0; e < EC; ++e) {
      int i = l * EC + e;
      if constexpr (std::is_integral<TD>::value || std::is_same<TD, double>::value) D[i / N][i % N] = (ACC)fc.x[e];
      else D[i / N][i % N] = (ACC)to_f(fc.x[e]);
    }
  }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      ACC acc = D[i][j];
      for (int kk = 0; kk < K; ++kk) acc += A[i][kk] * B[kk][j];
      D[i][j] = acc;
    }
  const int ED = FD::num_elements;
  for (int l = 0; l < 32; ++l) {
    MmaLane *d = static_cast<MmaLane *>(g.data[l]);
    FD &fd = *static_cast<FD *>(d->d);
    for (int e = 0; e < ED; ++e) {
      int i = l * ED + e;
      ACC v = D[i / N][i % N];
      if constexpr (std::is_integral<TD>::value) {
        if (satf) v = v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : v);
        fd.x[e] = (TD)(int32_t)(uint32_t)(unsigned long long)v;
      } else if constexpr (std::is_same<TD, double>::value) {
        fd.x[e] = v;
      } else {
        TD r = TD(v);   // float, or one RNE rounding to half
        if (satf) {
          float rf = to_f(r);
          if (rf != rf) r = TD(0.0f);
          else if (std::isinf(rf)) r = TD(rf > 0 ? acc_traits<TD>::max_norm() : -acc_traits<TD>::max_norm());
        }
        fd.x[e] = r;
      }
    }
  }
}

}  // namespace detail

template <class Use, int m, int n, int k, class T, class L, class P>
inline void load_matrix_sync(fragment<Use, m, n, k, T, L> &a, const P *p, unsigned ldm) {
  static_assert(!std::is_same<Use, accumulator>::value, "wmma: accumulator loads need a layout_t argument");
  typedef fragment<Use, m, n, k, T, L> F;
  static_assert(sizeof(P) == sizeof(typename F::storage_element_type), "wmma::load_matrix_sync: pointer type does not match the fragment");
  detail::LoadLane d{&a, p, ldm, detail::is_col<L>::value};
  xp::gpu::warp_collective(0xffffffffull, &detail::load_resolve<F, typename F::storage_element_type>,
                           "wmma::load_matrix_sync", &d);
}

template <int m, int n, int k, class T, class P>
inline void load_matrix_sync(fragment<accumulator, m, n, k, T, void> &a, const P *p, unsigned ldm, layout_t layout) {
  typedef fragment<accumulator, m, n, k, T, void> F;
  static_assert(sizeof(P) == sizeof(typename F::storage_element_type), "wmma::load_matrix_sync: pointer type does not match the fragment");
  detail::LoadLane d{&a, p, ldm, layout == mem_col_major};
  xp::gpu::warp_collective(0xffffffffull, &detail::load_resolve<F, typename F::storage_element_type>,
                           "wmma::load_matrix_sync", &d);
}

template <int m, int n, int k, class T, class P>
inline void store_matrix_sync(P *p, const fragment<accumulator, m, n, k, T, void> &a, unsigned ldm, layout_t layout) {
  typedef fragment<accumulator, m, n, k, T, void> F;
  static_assert(sizeof(P) == sizeof(typename F::storage_element_type), "wmma::store_matrix_sync: pointer type does not match the fragment");
  detail::LoadLane d{const_cast<F *>(&a), p, ldm, layout == mem_col_major};
  xp::gpu::warp_collective(0xffffffffull, &detail::store_resolve<F, typename F::storage_element_type>,
                           "wmma::store_matrix_sync", &d);
}

template <class Use, int m, int n, int k, class T, class L, class V>
inline void fill_fragment(fragment<Use, m, n, k, T, L> &a, const V &v) {
  typedef typename fragment<Use, m, n, k, T, L>::storage_element_type S;
  S s = S(v);
  for (int i = 0; i < fragment<Use, m, n, k, T, L>::num_elements; ++i) a.x[i] = s;
}

template <int m, int n, int k, class TD, class TA, class LA, class TB, class LB, class TC>
inline void mma_sync(fragment<accumulator, m, n, k, TD, void> &d, const fragment<matrix_a, m, n, k, TA, LA> &a,
                     const fragment<matrix_b, m, n, k, TB, LB> &b, const fragment<accumulator, m, n, k, TC, void> &c,
                     bool satf = false) {
  typedef fragment<accumulator, m, n, k, TD, void> FD;
  typedef fragment<matrix_a, m, n, k, TA, LA> FA;
  typedef fragment<matrix_b, m, n, k, TB, LB> FB;
  typedef fragment<accumulator, m, n, k, TC, void> FC;
  detail::MmaLane ln{&d, &a, &b, &c, satf};
  xp::gpu::warp_collective(0xffffffffull, &detail::mma_resolve<FD, FA, FB, FC>, "wmma::mma_sync", &ln);
}

}  // namespace wmma
}  // namespace nvcuda

inline float __float_to_tf32(float v) {   // cvt.rna.tf32.f32: round to nearest, ties away from zero
  uint32_t u = xp::gpu::float_to_bits(v);
  if ((u & 0x7f800000u) == 0x7f800000u) return v;
  u = (u + 0x1000u) & 0xffffe000u;
  return xp::gpu::bits_to_float(u);
}
