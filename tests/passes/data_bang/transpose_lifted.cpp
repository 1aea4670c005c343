// the shape of a lifted CUDA kernel: block and thread loops, a flat index, a guard
extern "C" void transpose_kernel(const float* in, float* out) {
  for (int bx = 0; bx < 3; ++bx) {
    for (int tx = 0; tx < 1024; ++tx) {
      int idx = bx * 1024 + tx;
      if (idx < 2304) {
        int r = idx / 48;
        int c = idx % 48;
        out[c * 48 + r] = in[idx];
      }
    }
  }
}
