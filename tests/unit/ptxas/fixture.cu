// Kernels whose ptxas -v report is a test fixture of the ptxas report parser.
#include <cstdint>

// Registers capped at 32 (1024 threads, 2 blocks per SM) with 64 live values: spills.
extern "C" __global__ void __launch_bounds__(1024, 2) fx_spills(const float* __restrict__ x,
                                                                 float* __restrict__ y, int n) {
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = x[threadIdx.x + i * n];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = acc[i] * acc[(i + r + 1) % 64] + 1.0f;
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; ++i) s += acc[i] * x[i];
  y[threadIdx.x] = s;
}

// 4 KiB of static shared memory.
template <typename T>
__global__ void fx_shared(const T* __restrict__ x, T* __restrict__ y) {
  __shared__ T tile[1024];
  tile[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  y[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
template __global__ void fx_shared<float>(const float*, float*);

// A local array indexed at run time: a stack frame, no spills; calls a function kept apart.
__device__ __noinline__ float fx_helper(const float* v, int k) {
  float t[16];
  for (int i = 0; i < 16; ++i) t[i] = v[i] * i;
  return t[k & 15];
}
__global__ void fx_stack(const float* __restrict__ x, float* __restrict__ y, int k) {
  float t[32];
  for (int i = 0; i < 32; ++i) t[i] = x[i + threadIdx.x];
  y[threadIdx.x] = t[(k + threadIdx.x) & 31] + fx_helper(x, k);
}
