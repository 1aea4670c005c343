#include <immintrin.h>
#include <math.h>
#include <float.h>
void softmax_rows(const float* in, float* out, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* x = in + (size_t)r * cols;
    float* y = out + (size_t)r * cols;
    __m512 vmax = _mm512_set1_ps(-FLT_MAX);
    int c = 0;
    for (; c + 16 <= cols; c += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + c));
    float mx = _mm512_reduce_max_ps(vmax);
    for (; c < cols; ++c) mx = fmaxf(mx, x[c]);
    float sum = 0.f;
    for (c = 0; c < cols; ++c) { y[c] = expf(x[c] - mx); sum += y[c]; }
    __m512 inv = _mm512_set1_ps(1.0f / sum);
    for (c = 0; c + 16 <= cols; c += 16) _mm512_storeu_ps(y + c, _mm512_mul_ps(_mm512_loadu_ps(y + c), inv));
    for (; c < cols; ++c) y[c] *= 1.0f / sum;
  }
}
