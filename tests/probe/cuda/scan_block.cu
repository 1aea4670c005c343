#include <cuda_runtime.h>
// inclusive scan of each 256-element segment (Hillis-Steele in shared memory)
template <int BLOCK>
__global__ void segment_scan(const float* in, float* out, int n) {
    __shared__ float buf[2][BLOCK];
    int gid = blockIdx.x * BLOCK + threadIdx.x;
    int cur = 0;
    buf[cur][threadIdx.x] = gid < n ? in[gid] : 0.0f;
    __syncthreads();
    for (int off = 1; off < BLOCK; off <<= 1) {
        float v = buf[cur][threadIdx.x];
        if (threadIdx.x >= off) v += buf[cur][threadIdx.x - off];
        buf[1 - cur][threadIdx.x] = v;
        cur = 1 - cur;
        __syncthreads();
    }
    if (gid < n) out[gid] = buf[cur][threadIdx.x];
}
extern "C" void scan256(const float* in, float* out, int n) {
    float *di, *dout;
    cudaMalloc(&di, n * sizeof(float));
    cudaMalloc(&dout, n * sizeof(float));
    cudaMemcpy(di, in, n * sizeof(float), cudaMemcpyHostToDevice);
    segment_scan<256><<<(n + 255) / 256, 256>>>(di, dout, n);
    cudaMemcpy(out, dout, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(di); cudaFree(dout);
}
