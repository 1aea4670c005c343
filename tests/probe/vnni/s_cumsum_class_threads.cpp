// Row-wise cumulative sum (inclusive or exclusive), plain scalar C++.
// A class with static inline members, constexpr chunking through a local buffer
// (memcpy in/out so in == out is allowed), __restrict, int64_t strides, and a
// manual deterministic row partition from omp_get_thread_num().
#include <omp.h>
#include <algorithm>
#include <cstdint>
#include <cstring>

class CumsumKernel {
 public:
  static constexpr int kChunk = 64;

  static inline void split(int total, int nth, int tid, int& begin, int& end) {
    const int q = total / nth, r = total % nth;
    begin = tid * q + std::min(tid, r);
    end = begin + q + (tid < r ? 1 : 0);
  }

  static inline void row(const float* src, float* dst, int64_t n, bool exclusive) {
    float buf[kChunk];
    float acc = 0.0f;
    for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
      const int len = static_cast<int>(std::min<int64_t>(kChunk, n - c0));
      std::memcpy(buf, src + c0, len * sizeof(float));
      scan(buf, len, acc, exclusive);
      std::memcpy(dst + c0, buf, len * sizeof(float));
    }
  }

 private:
  static inline void scan(float* __restrict v, int len, float& acc, bool exclusive) {
    for (int i = 0; i < len; ++i) {
      const float x = v[i];
      v[i] = exclusive ? acc : acc + x;
      acc += x;
    }
  }
};

extern "C" void cumsum_rows(const float* in, float* out, int rows, int cols, int exclusive) {
  const int64_t stride = cols;
#pragma omp parallel
  {
    int r0 = 0, r1 = 0;
    CumsumKernel::split(rows, omp_get_num_threads(), omp_get_thread_num(), r0, r1);
    for (int r = r0; r < r1; ++r)
      CumsumKernel::row(in + r * stride, out + r * stride, cols, exclusive != 0);
  }
}
