// The `cuda` backend: one CUDA translation unit per spec, generated/<spec>/cuda/<spec>.cu, built
// by the harness with nvcc (sm_80, sm_90) -Xcompiler -fPIC -shared -cudart shared.
//
// Strategies:
//   thread_per_output  (block_size, default 256): one __global__ kernel per statement, one thread
//                      per output element (flat index de-linearised row-major), guarded by
//                      `if (sb_t >= sb_total) return;`, grid = ceil(total / block_size).
//   grid_stride        (block_size 256, blocks_per_sm 4): the same kernels with a grid-stride
//                      loop; grid = min(ceil(total / block_size), SMs * blocks_per_sm), the SM
//                      count queried once per call with cudaDeviceGetAttribute.
// A scalar (rank-0) output is computed by one thread (grid 1, block 1).
//
// Generated-code contract:
//   - Kernels are `__global__ void sb_<variant>_s<k>(...)` with __restrict__ typed pointers and
//     const int64_t sizes; launchers are `static int sb_variant_<variant>(const sb_args*)`.
//   - Every launch is `SB_LAUNCH(kernel, grid, block, smem, stream, args...)`, defined in the file
//     as a triple-chevron launch under `#ifndef SB_LAUNCH`, so a CUDA simulator can predefine it
//     and compile the same text with a plain C++ compiler.
//   - Each launch is followed by `SB_CHECK_LAUNCH(kernel)` (cudaGetLastError) and every runtime
//     call is wrapped in `SB_CUDA_CHECK(call)`; on error they print file:line, the call text and
//     cudaGetErrorString to stderr and return the cudaError_t as int.
//   - Work goes to the stream in sb_args::stream; launchers never synchronise.
#pragma once

#include "emitter.h"

namespace sb {

// The cuda emitter (stateless; lives for the whole program).
const Emitter& cuda_emitter();

}  // namespace sb
