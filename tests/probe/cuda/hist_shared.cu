#include <cuda_runtime.h>
#define NBINS 64
__global__ void histogram_smem(const int* __restrict__ data, int n, int* __restrict__ hist) {
    __shared__ int local[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int v = data[i];
        int bin = ((v % NBINS) + NBINS) % NBINS;
        atomicAdd(&local[bin], 1);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x) atomicAdd(&hist[b], local[b]);
}
extern "C" void histogram(const int* data, int n, int* hist) {
    int *dd, *dh;
    cudaMalloc(&dd, n * sizeof(int));
    cudaMalloc(&dh, NBINS * sizeof(int));
    cudaMemcpy(dd, data, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(dh, 0, NBINS * sizeof(int));
    histogram_smem<<<8, 128>>>(dd, n, dh);
    cudaMemcpy(hist, dh, NBINS * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(dd); cudaFree(dh);
}
