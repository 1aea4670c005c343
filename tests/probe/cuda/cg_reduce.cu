#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void row_sum_cg(const float* __restrict__ in, float* __restrict__ out, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x;
    float acc = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        acc += in[row * cols + c];
    for (int off = warp.size() / 2; off > 0; off /= 2)
        acc += warp.shfl_down(acc, off);
    __shared__ float partial[32];
    if (warp.thread_rank() == 0) partial[threadIdx.x / 32] = acc;
    block.sync();
    if (threadIdx.x == 0) {
        float s = 0.f;
        for (int w = 0; w < blockDim.x / 32; ++w) s += partial[w];
        out[row] = s;
    }
}

extern "C" void row_sum(const float* in, float* out, int rows, int cols) {
    float *din, *dout;
    cudaMalloc(&din, sizeof(float) * rows * cols);
    cudaMalloc(&dout, sizeof(float) * rows);
    cudaMemcpy(din, in, sizeof(float) * rows * cols, cudaMemcpyHostToDevice);
    row_sum_cg<<<rows, 128>>>(din, dout, cols);
    cudaMemcpy(out, dout, sizeof(float) * rows, cudaMemcpyDeviceToHost);
    cudaFree(din); cudaFree(dout);
}
