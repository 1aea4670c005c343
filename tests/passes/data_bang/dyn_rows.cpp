// the lift of a block-per-row kernel with dynamic shared memory (extern __shared__ sized by
// the launch): a calloc'd per-row buffer of cols floats, freed at the end of the row
#include <stdlib.h>
extern "C" void dyn_rows(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    unsigned char* buf = (unsigned char*) calloc((size_t) (cols * sizeof(float)) + 64, 1);
    float s = 0.f;
    for (int j = 0; j < cols; ++j) {
      ((float*) buf)[j] = x[r * cols + j] * 2.0f;
      s += ((float*) buf)[j];
    }
    for (int j = 0; j < cols; ++j) y[r * cols + j] = ((float*) buf)[cols - 1 - j] - s;
    free(buf);
  }
}
