// element-wise expression trees: a chain of instructions each (scale-and-shift, axpy, relu of
// a scaled sum), and one whose destination is read again after it is rewritten
#include <stdint.h>
extern "C" void chains_kernel(const float* x, const float* y, float* ss, float* axpy,
                              float* rs, float* inplace, float a, float b, int n) {
  for (int i = 0; i < n; ++i)
    ss[i] = x[i] * a + b;
  for (int i = 0; i < n; ++i)
    axpy[i] = a * x[i] + y[i];
  for (int i = 0; i < n; ++i) {
    float t = (x[i] + y[i]) * 0.5f;
    rs[i] = t > 0.0f ? t : 0.0f;
  }
  for (int i = 0; i < n; ++i)
    inplace[i] = inplace[i] * a + inplace[i];
}
