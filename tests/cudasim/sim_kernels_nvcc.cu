// Compiles the simulator's test kernels with nvcc, so the simulated text is real CUDA.
#include "sim_kernels.cuh"

template __global__ void reduce_shared<false>(const float*, float*, int);
template __global__ void reduce_shared<true>(const float*, float*, int);
template __global__ void scale<false>(float*, int);
template __global__ void scale<true>(float*, int);
template __global__ void warp_sum<0xffffffffu>(const float*, float*, int);
template __global__ void warp_sum<0x0000ffffu>(const float*, float*, int);
template __global__ void early_exit<false>(float*, int);
template __global__ void early_exit<true>(float*, int);
