// the lifted form of CUDA __half / __half2 code (gpu_lift_support's typedefs): binary16 and a
// 4-byte struct of two; staged on NRAM with the element sizes the typedefs give, spelled half
#include <stdint.h>
typedef _Float16 __half;
typedef struct __attribute__((aligned(4))) { _Float16 x; _Float16 y; } __half2;
extern "C" void half2_add(const __half2* a, const __half* s, __half2* out, int n) {
  for (int i = 0; i < n; ++i) {
    __half2 v = a[i];
    float f = (float) s[i];
    v.x = (__half) ((float) v.x + f);
    v.y = (__half) ((float) v.y - f);
    out[i] = v;
  }
}
