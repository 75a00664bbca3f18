// Kernels for the traffic-counting tests, compiled with the access hooks on (see CMakeLists.txt:
// the flags of the cudasim runtime's modules), and host functions that launch them.
#include "traffic_kernels.h"

#include <cuda_runtime.h>

namespace {

__global__ void copy_coalesced(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// Thread i reads in[i * stride]: every lane of a warp in another sector when stride >= 8.
__global__ void gather_strided(const float* in, float* out, int n, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[static_cast<long long>(i) * stride];
}

__global__ void copy_float4(const float4* in, float4* out, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

__global__ void copy_rows_one_warp(const float* in, float* out, int rows, int cols) {
  const int lane = threadIdx.x % 32;
  for (int r = 0; r < rows; ++r) {
    for (int c = lane; c < cols; c += 32) out[r * cols + c] = in[r * cols + c];
    __syncwarp();
  }
}

}  // namespace

void launch_copy_coalesced(const float* in, float* out, int n, int block) {
  SB_LAUNCH(copy_coalesced, dim3((n + block - 1) / block), dim3(block), 0, nullptr, in, out, n);
}

void launch_gather_strided(const float* in, float* out, int n, int stride, int block) {
  SB_LAUNCH(gather_strided, dim3((n + block - 1) / block), dim3(block), 0, nullptr, in, out, n,
            stride);
}

void launch_copy_float4(const float* in, float* out, int n4, int block) {
  SB_LAUNCH(copy_float4, dim3((n4 + block - 1) / block), dim3(block), 0, nullptr,
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4);
}

void launch_copy_rows_one_warp(const float* in, float* out, int rows, int cols) {
  SB_LAUNCH(copy_rows_one_warp, dim3(1), dim3(32), 0, nullptr, in, out, rows, cols);
}
