// kernel-only: 1-D 3-point stencil with halo in shared memory, fixed block of 128
#define BS 128
__global__ void stencil3(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float s[BS + 2];
  int g = blockIdx.x * BS + threadIdx.x;
  int l = threadIdx.x + 1;
  s[l] = g < n ? in[g] : 0.f;
  if (threadIdx.x == 0) s[0] = (g > 0 && g - 1 < n) ? in[g - 1] : 0.f;
  if (threadIdx.x == BS - 1) s[BS + 1] = (g + 1 < n) ? in[g + 1] : 0.f;
  __syncthreads();
  if (g < n) out[g] = 0.25f * s[l - 1] + 0.5f * s[l] + 0.25f * s[l + 1];
}
