// row softmax with baked-in shapes and a file-scope constant
#include <math.h>
#define ROWS 12
static const int COLS = 40;
static const float LOG2E = 1.4426950408889634f;
static inline float fast_exp(float v) { return exp2f(v * LOG2E); }
extern "C" void softmax_kernel(const float* in, float* out) {
  #pragma omp parallel for
  for (int r = 0; r < ROWS; ++r) {
    const float* row = in + r * COLS;
    float* dst = out + r * COLS;
    float m = row[0];
    for (int c = 1; c < COLS; ++c) m = fmaxf(m, row[c]);
    float sum = 0.0f;
    for (int c = 0; c < COLS; ++c) { float e = fast_exp(row[c] - m); dst[c] = e; sum += e; }
    for (int c = 0; c < COLS; ++c) dst[c] = dst[c] / sum;
  }
}
