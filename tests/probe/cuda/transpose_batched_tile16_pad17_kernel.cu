// Kernel only. Batched transpose of the last two axes: in[B, R, C] -> out[B, C, R].
// Launch: block = dim3(16, 4), grid = dim3(ceil(C/16), ceil(R/16), B).
// Each block moves a 16x16 tile through shared memory padded to 16x17 (no bank conflicts);
// each thread handles 4 rows of the tile (BLOCK_ROWS = 4). Bounds-checked on both sides.
#define TT 16
#define BLOCK_ROWS 4

__global__ void transpose_batched_tile16(const float* __restrict__ in, float* __restrict__ out,
                                         int R, int C) {
  __shared__ float tile[TT][TT + 1];
  const size_t boff = (size_t)blockIdx.z * R * C;
  int x = blockIdx.x * TT + threadIdx.x;  // column in input
  int y = blockIdx.y * TT + threadIdx.y;  // row in input
  for (int j = 0; j < TT; j += BLOCK_ROWS)
    if (x < C && y + j < R) tile[threadIdx.y + j][threadIdx.x] = in[boff + (size_t)(y + j) * C + x];
  __syncthreads();
  x = blockIdx.y * TT + threadIdx.x;  // column in output (= input row)
  y = blockIdx.x * TT + threadIdx.y;  // row in output (= input column)
  for (int j = 0; j < TT; j += BLOCK_ROWS)
    if (x < R && y + j < C) out[boff + (size_t)(y + j) * R + x] = tile[threadIdx.x][threadIdx.y + j];
}
