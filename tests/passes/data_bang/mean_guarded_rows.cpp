// one row per (block, thread) pair of a lifted CUDA grid (2 x 32) guarded by r < outer, row
// start r * inner: the extent of `in` is outer * inner (not 64 * inner, nor the unit-
// coefficient guard bound 64 * inner + outer - 64: both read past a 50 x 70 buffer)
#include <stdint.h>
extern "C" void mean_guarded_rows(const float* in, float* out, int64_t outer, int64_t inner) {
  for (unsigned int b = 0; b < 2u; ++b)
    for (unsigned int t = 0; t < 32u; ++t)
      if ((int64_t) (b * 32u + t) < outer) {
        float acc = 0.f;
        for (int64_t k = 0; k < inner; ++k) acc += in[(int64_t) (b * 32u + t) * inner + k];
        out[(int64_t) (b * 32u + t)] = acc / (float) inner;
      }
}
