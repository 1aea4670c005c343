// a heap buffer in a sequential loop that stays on the host (each pass reads the previous
// one's out): task_bind refuses it (XP-TASK-BIND-006) rather than a host stack array
#include <stdlib.h>
extern "C" void heap_host(const float* x, float* out, int n) {
  for (int it = 0; it < 3; ++it) {
    float* tmp = (float*) calloc(n, sizeof(float));
    tmp[0] = (float) it;
    for (int i = 0; i < n; ++i) out[i] = out[i] * 0.5f + x[i];
    out[0] += tmp[0];
    free(tmp);
  }
}
