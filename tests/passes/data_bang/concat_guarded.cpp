// concatenation along the last axis with the source chosen by a condition: the access
// analysis bounds a[i * 8 + j] over every j < 12 (36 elements) though the caller's buffer
// holds 32; the caller-declared count caps the host copies
#include <stdint.h>
extern "C" void concat_guarded(const float* a, const float* b, float* out) {
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 12; ++j)
      out[i * 12 + j] = j < 8 ? a[i * 8 + j] : b[i * 4 + j - 8];
}
