// Hand-written CUDA kernels for the simulator's own tests: features it must reproduce and
// mutations it must catch. The same text compiles with nvcc (see the cuda-compile label).
#pragma once

#include <cuda_runtime.h>

#ifndef SB_LAUNCH
#define SB_LAUNCH(kernel, grid, block, smem, stream, ...) \
  kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#endif
#ifndef SB_SHARED_ARRAY
#define SB_SHARED_ARRAY(T, name, n) __shared__ T name[n]
#define SB_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#endif

// Writes each thread's global 3D coordinates, linearised, into out.
__global__ void coords3d(int* out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = x + 1000 * y + 1000000 * z;
}

// Block-wide tree reduction in shared memory; one partial sum per block.
template <bool kDropSync>
__global__ void reduce_shared(const float* in, float* partial, int n) {
  SB_SHARED_ARRAY(float, s, 256);
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    if (!kDropSync) __syncthreads();  // the mutation removes this barrier
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

// Scales x by 2; the mutation's guard lets thread n through.
template <bool kOffByOne>
__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (kOffByOne ? i > n : i >= n) return;
  x[i] *= 2.0f;
}

// Warp 0 reduces the per-warp sums with shuffles inside `if (warp == 0)`.
template <unsigned kMask>
__global__ void warp_sum(const float* in, float* out, int n) {
  SB_SHARED_ARRAY(float, warp_sums, 32);
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  float v = i < n ? in[i] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  int warp = t / 32, lane = t % 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int nwarps = blockDim.x / 32;
    float w = lane < nwarps ? float(warp_sums[lane]) : 0.0f;
    for (int o = 16; o > 0; o >>= 1) w += __shfl_down_sync(kMask, w, o);
    if (lane == 0) atomicAdd(out, w);
  }
}

// Thread 0 leaves before the barrier that the others wait at (the mutation).
template <bool kEarlyReturn>
__global__ void early_exit(float* x, int n) {
  SB_SHARED_ARRAY(float, s, 128);
  int t = threadIdx.x;
  if (kEarlyReturn && t == 0) return;
  s[t] = t < n ? x[t] : 0.0f;
  __syncthreads();
  if (t < n) x[t] = s[(t + 1) % blockDim.x];
}

// Dynamic shared memory: reverse within a block.
__global__ void reverse_block(float* x, int n) {
  SB_DYNAMIC_SHARED(float, s);
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? x[i] : 0.0f;
  __syncthreads();
  int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - t);
  if (j < n && i < n) x[i] = s[blockDim.x - 1 - t];
}

// Atomics on global memory: a histogram of x mod bins, and the maximum.
__global__ void histogram(const int* x, int* bins, int* maxv, int n, int nbins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&bins[x[i] % nbins], 1);
  atomicMax(maxv, x[i]);
}

// A read that depends on thread order: thread t reads what thread t-1 wrote to global memory
// without any barrier. Correct only if lower threads run first.
__global__ void order_dependent(float* x, int n) {
  int t = threadIdx.x;
  if (t >= n) return;
  if (t > 0) x[t] = x[t - 1] + 1.0f;
}

// One warp: lane t writes the cell of lane t + 1, and after a warp barrier (left out by the
// mutation) each lane reads its own cell twice, as a statement reading one element twice does.
template <bool kMissingSync>
__global__ void read_twice_after_syncwarp(float* x) {
  SB_SHARED_ARRAY(float, s, 32);
  int t = threadIdx.x;
  s[(t + 1) % 32] = x[t];
  if (!kMissingSync) __syncwarp();
  float a = s[t];
  float b = s[t];
  x[t] = a + b;
}
