// GELU (tanh approximation) the way ggml's ggml_vec_gelu_f32 computes it without the fp16
// table: a static inline scalar helper with the GELU_COEF_A / SQRT_2_OVER_PI constants,
// applied row by row (ggml_compute_forward_gelu splits rows over threads).
#include <immintrin.h>
#include <cmath>

static const float GELU_COEF_A = 0.044715f;
static const float SQRT_2_OVER_PI = 0.79788456080286535587989211986876f;

inline static float ggml_gelu_f32(float x) {
  return 0.5f * x * (1.0f + tanhf(SQRT_2_OVER_PI * x * (1.0f + GELU_COEF_A * x * x)));
}

inline static void ggml_vec_gelu_f32(const int n, float* y, const float* x) {
  for (int i = 0; i < n; ++i) y[i] = ggml_gelu_f32(x[i]);
}

extern "C" void gelu_rows(const float* src, float* dst, int nrows, int ncols) {
#pragma omp parallel for
  for (int i1 = 0; i1 < nrows; i1++) {
    ggml_vec_gelu_f32(ncols, dst + (size_t)i1 * ncols, src + (size_t)i1 * ncols);
  }
}
