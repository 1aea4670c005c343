// Plain scalar row softmax: lambda for the row max with a std::array<float,16>
// of partial maxima, numeric_limits::lowest(), std::exp, omp parallel-for with
// an if() clause, and an omp simd normalisation loop.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

extern "C" void softmax_rows_scalar(const float* in, float* out, int rows, int cols) {
  auto row_max = [](const float* x, int n) {
    std::array<float, 16> part;
    part.fill(std::numeric_limits<float>::lowest());
    for (int i = 0; i < n; ++i) part[i & 15] = std::max(part[i & 15], x[i]);
    float m = std::numeric_limits<float>::lowest();
    for (float p : part) m = std::max(m, p);
    return m;
  };

#pragma omp parallel for if (static_cast<int64_t>(rows) * cols > 4096) schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* x = in + static_cast<int64_t>(r) * cols;
    float* y = out + static_cast<int64_t>(r) * cols;
    const float m = row_max(x, cols);
    float sum = 0.0f;
    for (int i = 0; i < cols; ++i) {
      const float e = std::exp(x[i] - m);
      y[i] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (int i = 0; i < cols; ++i) y[i] *= inv;
  }
}
