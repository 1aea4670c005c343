// relu (exact in the descriptions) and sigmoid (only clamped/approximate forms exist)
#include <math.h>
extern "C" void act_kernel(const float* x, float* r, float* s) {
  for (int i = 0; i < 3000; ++i)
    r[i] = x[i] > 0.0f ? x[i] : 0.0f;
  for (int i = 0; i < 3000; ++i)
    s[i] = 1.0f / (1.0f + expf(-x[i]));
}
