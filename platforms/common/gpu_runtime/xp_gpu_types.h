// xp_gpu_types.h - CUDA/HIP language surface that is plain data: qualifiers, dim3, the vector
// types (float4, int2, uchar4, ...) and the thread/block built-in variables.
//
// Built-ins are *variables*, never macros: `threadIdx`, `blockIdx`, `blockDim`, `gridDim` are
// namespace-scope references to scheduler-owned globals, so a host local named `gridDim`
// simply shadows them (PLATFORMS.md §3; issue item 8).
#pragma once
#include <cstddef>
#include <cstdint>

// ---------------------------------------------------------------- qualifiers
// The C++ front-end (platforms/common/cxx) parses sources with clang in CUDA mode against these
// headers: it defines XP_CLANG_PARSE and the qualifiers as clang's CUDA attributes first.
#ifndef XP_CLANG_PARSE
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#endif
#define __forceinline__   // (no `inline`: CUDA code also writes `inline __forceinline__`)
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__
// `__shared__` outside what prepare() rewrites (e.g. in headers it did not see): a static
// object, shared by all fibers of a block (blocks run one after another). Aligned like the
// hardware's shared-memory allocations in practice (wmma tiles need 32 bytes).
#define XP_SHARED_ALIGN __attribute__((aligned(128)))
#ifndef XP_CLANG_PARSE
#define __shared__ static XP_SHARED_ALIGN
#endif
#ifndef __CUDACC_RTC__
#define __CUDACC_RTC_UNUSED__
#endif

// ---------------------------------------------------------------- dim3 / uint3
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ---------------------------------------------------------------- vector types
#define XP_VEC1(N, T, A) struct __attribute__((aligned(A))) N##1 { T x; }; \
  inline constexpr N##1 make_##N##1(T x) { return N##1{x}; }
#define XP_VEC2(N, T, A) struct __attribute__((aligned(A))) N##2 { T x, y; }; \
  inline constexpr N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define XP_VEC3(N, T, A) struct __attribute__((aligned(A))) N##3 { T x, y, z; }; \
  inline constexpr N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define XP_VEC4(N, T, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \
  inline constexpr N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
// alignments as in CUDA's vector_types.h
XP_VEC1(char, signed char, 1) XP_VEC2(char, signed char, 2) XP_VEC3(char, signed char, 1) XP_VEC4(char, signed char, 4)
XP_VEC1(uchar, unsigned char, 1) XP_VEC2(uchar, unsigned char, 2) XP_VEC3(uchar, unsigned char, 1) XP_VEC4(uchar, unsigned char, 4)
XP_VEC1(short, short, 2) XP_VEC2(short, short, 4) XP_VEC3(short, short, 2) XP_VEC4(short, short, 8)
XP_VEC1(ushort, unsigned short, 2) XP_VEC2(ushort, unsigned short, 4) XP_VEC3(ushort, unsigned short, 2) XP_VEC4(ushort, unsigned short, 8)
XP_VEC1(int, int, 4) XP_VEC2(int, int, 8) XP_VEC3(int, int, 4) XP_VEC4(int, int, 16)
XP_VEC1(uint, unsigned int, 4) XP_VEC2(uint, unsigned int, 8) XP_VEC4(uint, unsigned int, 16)
inline constexpr uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
XP_VEC1(long, long, 8) XP_VEC2(long, long, 16) XP_VEC3(long, long, 8) XP_VEC4(long, long, 16)
XP_VEC1(ulong, unsigned long, 8) XP_VEC2(ulong, unsigned long, 16) XP_VEC3(ulong, unsigned long, 8) XP_VEC4(ulong, unsigned long, 16)
XP_VEC1(longlong, long long, 8) XP_VEC2(longlong, long long, 16) XP_VEC3(longlong, long long, 8) XP_VEC4(longlong, long long, 16)
XP_VEC1(ulonglong, unsigned long long, 8) XP_VEC2(ulonglong, unsigned long long, 16) XP_VEC3(ulonglong, unsigned long long, 8) XP_VEC4(ulonglong, unsigned long long, 16)
XP_VEC1(float, float, 4) XP_VEC2(float, float, 8) XP_VEC3(float, float, 4) XP_VEC4(float, float, 16)
XP_VEC1(double, double, 8) XP_VEC2(double, double, 16) XP_VEC3(double, double, 8) XP_VEC4(double, double, 16)
#undef XP_VEC1
#undef XP_VEC2
#undef XP_VEC3
#undef XP_VEC4

#ifdef XP_PLATFORM_HIP
// HIP's vector types carry element-wise operators (CUDA's do not: helper_math.h defines them,
// so defining them for CUDA would clash with user code).
#define XP_VOPS(V, ...)                                                                         \
  inline V operator+(V a, V b) { V r; for (int i = 0; i < (int)(sizeof(V) / sizeof(a.x)); ++i) (&r.x)[i] = (&a.x)[i] + (&b.x)[i]; return r; } \
  inline V operator-(V a, V b) { V r; for (int i = 0; i < (int)(sizeof(V) / sizeof(a.x)); ++i) (&r.x)[i] = (&a.x)[i] - (&b.x)[i]; return r; } \
  inline V operator*(V a, V b) { V r; for (int i = 0; i < (int)(sizeof(V) / sizeof(a.x)); ++i) (&r.x)[i] = (&a.x)[i] * (&b.x)[i]; return r; } \
  inline V operator/(V a, V b) { V r; for (int i = 0; i < (int)(sizeof(V) / sizeof(a.x)); ++i) (&r.x)[i] = (&a.x)[i] / (&b.x)[i]; return r; } \
  inline V &operator+=(V &a, V b) { return a = a + b; } \
  inline V &operator-=(V &a, V b) { return a = a - b; } \
  inline V &operator*=(V &a, V b) { return a = a * b; } \
  inline V &operator/=(V &a, V b) { return a = a / b; }
XP_VOPS(float2) XP_VOPS(float4) XP_VOPS(int2) XP_VOPS(int4) XP_VOPS(double2)
#undef XP_VOPS
#endif

// ---------------------------------------------------------------- built-in variables
namespace xp { namespace gpu {
inline uint3 g_tid = {0, 0, 0};   // set by the scheduler before it resumes a thread (fiber)
inline uint3 g_bid = {0, 0, 0};
inline dim3 g_bdim = dim3(1, 1, 1);
inline dim3 g_gdim = dim3(1, 1, 1);
}}  // namespace xp::gpu

inline const uint3 &threadIdx = xp::gpu::g_tid;
inline const uint3 &blockIdx = xp::gpu::g_bid;
inline const dim3 &blockDim = xp::gpu::g_bdim;
inline const dim3 &gridDim = xp::gpu::g_gdim;
#ifndef XP_WARP_SIZE
#define XP_WARP_SIZE 32
#endif
constexpr int warpSize = XP_WARP_SIZE;
