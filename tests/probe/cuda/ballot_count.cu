#include <cuda_runtime.h>
__global__ void count_positive(const float* x, int n, unsigned int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool pos = (i < n) && (x[i] > 0.0f);
    unsigned int mask = __ballot_sync(0xffffffffu, pos);
    if ((threadIdx.x & 31) == 0) atomicAdd(count, __popc(mask));
}
extern "C" void count_pos(const float* x, int n, unsigned int* out) {
    float* dx; unsigned int* dc;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dc, sizeof(unsigned int));
    cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(dc, 0, sizeof(unsigned int));
    count_positive<<<(n + 255) / 256, 256>>>(dx, n, dc);
    cudaMemcpy(out, dc, sizeof(unsigned int), cudaMemcpyDeviceToHost);
    cudaFree(dx); cudaFree(dc);
}
