// Reduce-max along the middle axis of x[A, R, Bn] -> out[A, Bn] (torch.amax(x, dim=1)),
// plain C++ with OpenMP collapse(2) over (a, column block). NaN propagates (as in PyTorch).
// Columns are processed in blocks of 32 so the inner loop walks rows contiguously per block.
#include <math.h>
#include <stddef.h>

extern "C" void reduce_max_axis1(const float* x, float* out, int A, int R, int Bn) {
  const int CB = 32;
  const int nb = (Bn + CB - 1) / CB;
#pragma omp parallel for collapse(2) schedule(static)
  for (int a = 0; a < A; ++a)
    for (int cb = 0; cb < nb; ++cb) {
      const int c0 = cb * CB, c1 = c0 + CB < Bn ? c0 + CB : Bn;
      float m[32];
      for (int c = c0; c < c1; ++c) m[c - c0] = -INFINITY;
      for (int r = 0; r < R; ++r) {
        const float* xr = x + ((size_t)a * R + r) * Bn;
        for (int c = c0; c < c1; ++c) {
          const float v = xr[c];
          float cur = m[c - c0];
          m[c - c0] = (v > cur || v != v) ? v : cur;
        }
      }
      for (int c = c0; c < c1; ++c) out[(size_t)a * Bn + c] = m[c - c0];
    }
}
