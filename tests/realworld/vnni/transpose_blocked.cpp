// Out-of-place 2-D transpose (MLAS MlasTranspose-like fallback): 16 x 16 tiles so both the
// reads and the writes stay inside a few cache lines, tile rows/columns clipped at the edges;
// tiles in parallel with OpenMP.
#include <cstddef>
#include <algorithm>

template <typename T, int TILE>
static void transpose_tiled(const T* __restrict input, T* __restrict output, size_t rows, size_t cols) {
  const long tiles_r = (long)((rows + TILE - 1) / TILE);
  const long tiles_c = (long)((cols + TILE - 1) / TILE);
#pragma omp parallel for collapse(2)
  for (long tr = 0; tr < tiles_r; ++tr)
    for (long tc = 0; tc < tiles_c; ++tc) {
      const size_t r0 = (size_t)tr * TILE, c0 = (size_t)tc * TILE;
      const size_t r1 = std::min(rows, r0 + TILE), c1 = std::min(cols, c0 + TILE);
      for (size_t r = r0; r < r1; ++r)
        for (size_t c = c0; c < c1; ++c) output[c * rows + r] = input[r * cols + c];
    }
}

extern "C" void transpose_f32(const float* input, float* output, size_t rows, size_t cols) {
  transpose_tiled<float, 16>(input, output, rows, cols);
}
