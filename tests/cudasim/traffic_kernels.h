// Host launchers of the traffic-counting test kernels (traffic_kernels.cpp). Buffers come from
// sb::sim::alloc; every launch uses one-dimensional blocks of `block` threads.
#pragma once

// out[i] = in[i] for i < n.
void launch_copy_coalesced(const float* in, float* out, int n, int block);
// out[i] = in[i * stride] for i < n (in holds n * stride floats).
void launch_gather_strided(const float* in, float* out, int n, int stride, int block);
// Copies n4 float4 values (4 * n4 floats, 16-byte aligned) with one vector load and store each.
void launch_copy_float4(const float* in, float* out, int n4, int block);
// One warp copies `rows` rows of `cols` floats, row by row: lane l handles columns l, l + 32, ...
// of each row, then the warp meets at __syncwarp() before the next row (as the fused row kernels
// do). When cols is not a multiple of 32 the low lanes run one iteration more than the others.
void launch_copy_rows_one_warp(const float* in, float* out, int rows, int cols);
