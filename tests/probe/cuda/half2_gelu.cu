#include <cuda_runtime.h>
#include <cuda_fp16.h>
__device__ __forceinline__ float gelu_f(float x) {
    const float k = 0.7978845608028654f;
    return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}
__global__ void gelu_half2(const __half2* __restrict__ in, __half2* __restrict__ out, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        float2 v = __half22float2(in[i]);
        v.x = gelu_f(v.x);
        v.y = gelu_f(v.y);
        out[i] = __float22half2_rn(v);
    }
}
extern "C" void gelu_fp16(const __half* in, __half* out, int n) {
    __half *di, *dout;
    cudaMalloc(&di, n * sizeof(__half)); cudaMalloc(&dout, n * sizeof(__half));
    cudaMemcpy(di, in, n * sizeof(__half), cudaMemcpyHostToDevice);
    int n2 = n / 2;
    gelu_half2<<<(n2 + 255) / 256, 256>>>(reinterpret_cast<const __half2*>(di), reinterpret_cast<__half2*>(dout), n2);
    cudaMemcpy(out, dout, n * sizeof(__half), cudaMemcpyDeviceToHost);
    cudaFree(di); cudaFree(dout);
}
