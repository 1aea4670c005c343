#include <cmath>
static double l2_norm(const float* x, int n) {
  double sum = 0.0;
#pragma omp parallel for reduction(+:sum)
  for (int i = 0; i < n; ++i) sum += (double)x[i] * x[i];
  return std::sqrt(sum);
}
extern "C" void normalize(const float* x, float* y, int n) {
  double nrm = l2_norm(x, n);
  float inv = nrm > 0 ? (float)(1.0 / nrm) : 0.f;
  for (int i = 0; i < n; ++i) y[i] = x[i] * inv;
}
