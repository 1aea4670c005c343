// sigmoid only: the activation table form clamps beyond +-7.75, so it must not be used
#include <math.h>
extern "C" void sigmoid_kernel(const float* x, float* s) {
  for (int i = 0; i < 3000; ++i)
    s[i] = 1.0f / (1.0f + expf(-x[i]));
}
