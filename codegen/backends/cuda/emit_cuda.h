// The `cuda` backend: one CUDA translation unit per spec, generated/<spec>/cuda/<spec>.cu, built
// by the harness with nvcc (sm_80, sm_90) -Xcompiler -fPIC -shared -cudart shared.
//
// Strategies. Each optimised strategy targets statements by their shape (lower/patterns.h), never
// by name; in a multi-statement spec the statements it does not target take the generic
// grid-stride form (one thread for a scalar output), and a strategy that targets no statement
// at all is an error from check_variant at the variant, saying why (cuda_kernels.h).
//   thread_per_output  (block_size, default 256): one __global__ kernel per statement, one thread
//                      per output element (flat index de-linearised row-major), guarded by
//                      `if (sb_t >= sb_total) return;`, grid = ceil(total / block_size).
//   grid_stride        (block_size 256, blocks_per_sm 4): the same kernels with a grid-stride
//                      loop; grid = min(ceil(total / block_size), SMs * blocks_per_sm), the SM
//                      count queried once per call with cudaDeviceGetAttribute.
//   vectorized         (block_size, blocks_per_sm): elementwise statements. Reads of tensors of
//                      the output's shape at the output's own indices, and the write, move as
//                      16-byte vectors (float4, double2, int4; float2/int2 beside an f64) in a
//                      grid-stride loop over vectors, then a scalar tail; when any of those
//                      buffers is not 16-byte aligned the scalar loop does everything.
//   block_reduce       (block_size, blocks_per_sm): a scalar output whose rhs holds one outer
//                      sum/prod/max/min, possibly inside an epilogue (sqrt(sum(...))). Pass 1: a
//                      grid-stride share per thread, a shared-memory tree per block, the block's
//                      value in a static __device__ buffer of kMaxPartials (1024) elements (the
//                      grid is capped there); pass 2: one block combines them and applies the
//                      epilogue.
//   warp_reduce        (block_size, blocks_per_sm): as block_reduce, combining per block with
//                      __shfl_xor_sync butterflies and one value per warp in shared memory.
//   atomic_reduce      (block_size, blocks_per_sm): an init kernel sets the output to the
//                      identity, each block combines as warp_reduce and thread 0 adds its value
//                      with atomicAdd/atomicMax/atomicMin (f32/f64 max and min, and products, by
//                      a CAS loop on the bits); an epilogue runs in place in a last one-thread
//                      kernel. Needs an f32, f64 or i32 reduction of the output's own type.
//   warp_per_row       (block_size): outputs of rank >= 1 whose rhs holds one outer reduction
//                      over an index contiguous in its reads (row sums, softmax's max and sum,
//                      layernorm): one warp per output element, lanes striding the reduction,
//                      a shuffle combine, lane 0 applying the epilogue.
//   block_per_row      (block_size): the same statements, one block per output element
//                      (grid-stride over elements, grid <= 65535) with a shared-memory tree.
//   Row groups under warp_per_row and block_per_row: the statements that lower/row_fusion.h
//                      groups into one loop over rows (rank 1 and 2, see plan_rows in
//                      cuda_kernels.cpp) are one kernel, in which a warp (or a block) owns a row
//                      at a time, rows grid-stride over a grid of at most SMs * 4 blocks (at
//                      least one row per warp, or 16 rows per block). Per-row values (rowmax,
//                      mean) stay in registers, every thread holding them after a warp (or
//                      block: shuffles plus one value per warp in shared memory) all-reduce;
//                      row temps (e[r, c]), rows read more than once, and tensors read with no
//                      row index (weight[c], once per block) live in dynamic shared memory. Loops
//                      along a row visit whole 128-byte segments first, then the partial head and
//                      tail; per-row outputs are stored in batches, one row per thread. When the
//                      shared memory exceeds kMaxRowSmem (48 KiB), a second kernel reads global
//                      memory instead and recomputes row temps where they are read.
//   tiled_matmul       (tile 8..32, default 16): c[i, j] = epilogue(red(k: f(a[i, k], b[k, j])))
//                      with either operand possibly transposed (a[k, i], b[j, k]): tile x tile
//                      blocks, both operands staged through padded shared tiles [k][tile + 1],
//                      loaded along their contiguous subscript; ragged M, N, K guarded.
//   register_blocked_matmul (bm 64, bn 64, bk 8, tm 4, tn 4): the same statements, bm x bn
//                      output tiles, (bm / tm) * (bn / tn) threads each holding tm x tn
//                      accumulators, bk-deep shared tiles loaded with 16-byte vectors along the
//                      contiguous subscript when the base is aligned and the row length a
//                      multiple of the vector, scalar guarded loads otherwise. Both take a
//                      batch of products c[h, i, j] too (each operand read with h first or
//                      shared), the products along the grid's z (a grid-stride loop past 65535).
//   tiled_transpose    (tile 32, block_rows 8): rank-2 elementwise statements reading x[j, i]
//                      for output [i, j]: such reads go through [tile][tile + 1] shared tiles
//                      so that loads and stores are both coalesced; other reads are direct.
//   tiled_stencil      (block_size 256, tile_x 32, tile_y 4): rank-1/2/3 outputs reading one
//                      tensor at offsets of the output index (constants and reduction variables
//                      with fixed ranges: conv1d, pooling, 5- and 7-point stencils). Each block
//                      stages its window plus halo in dynamic shared memory, honouring the
//                      tensor's boundary rule (zero, clamp); 2D blocks are tile_x x block_size /
//                      tile_x, 3D blocks tile_x x tile_y x block_size / (tile_x * tile_y) (an
//                      error when tile_x * tile_y > block_size). Halos over 48 KiB fall back to
//                      an untiled grid-stride kernel.
//   scan               (block_size): y[i] = epilogue(red(j in lo..i + c: f(j))), rank 1, c and lo
//                      free of indices (inclusive for c = 1, exclusive for c = 0): three phases
//                      (per-block chunk totals, their inclusive scan in one block, then a block
//                      scan of each chunk from its carry) with warp-shuffle block scans; the
//                      totals live in a static __device__ buffer of 1024 elements (chunks grow
//                      so that any N fits).
// A scalar (rank-0) output is computed by one thread (grid 1, block 1) outside the reduction
// strategies. Static __device__ scratch buffers make a variant non-reentrant: one launch of a
// variant at a time per device.
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
//   - Shared memory is declared only through SB_SHARED_ARRAY(T, name, n) and
//     SB_DYNAMIC_SHARED(T, name), defined under #ifndef as `__shared__ T name[n]` and
//     `extern __shared__ T name[]` (the simulator instruments them); warp shuffles use the full
//     mask only where all 32 lanes of the warp take part (block sizes are multiples of 32).
#pragma once

#include "backends/emitter.h"

namespace sb {

// The cuda emitter (stateless; lives for the whole program).
const Emitter& cuda_emitter();

}  // namespace sb
