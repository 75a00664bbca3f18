// The launch plan of every GPU kernel form (lower/gpu_mapping.h): how many blocks each form
// launches, with what shared memory, as launcher lines. The cuda file's launcher and the
// mojo_gpu launcher are both C++, so each form's grid is decided and printed here once, and both
// GPU printers call it: a printer prints the kernels and the launch calls, never a grid.
//
// Every function prints into `w` and spells sizes through `H`, a C++ lowering of the statement
// (the caller passes on the sizes it used). Those that return a bool return whether the lines
// read sb_max_grid (SMs * blocks per SM), which the launcher then declares.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/emit_common.h"
#include "ir/affine.h"
#include "ir/ir.h"
#include "lower/gpu_mapping.h"
#include "lower/patterns.h"

namespace sb {

// The largest grid of a first pass whose per-block partial results go to a buffer of this many
// elements (tree_reduce, warp_reduce, scan): the pass covers any size with a grid-stride (or
// chunked) loop.
constexpr int64_t kMaxPartials = 1024;

// Dynamic shared memory a tiled_stencil launch may use; larger halos take the untiled kernel.
constexpr int64_t kMaxStencilSmem = 48 * 1024;

// The largest grid y or z dimension of a launch (CUDA's limit): a kernel covers more along z
// with a grid-stride loop, and block_per_row's grid of one block per output is capped at it.
constexpr int64_t kMaxGridZ = 65535;

// The line declaring sb_max_grid, the largest grid of a grid-stride form: `blocks_per_sm` blocks
// on each of the device's sb_sm_count multiprocessors (which the launcher has read by then).
void max_grid_line(int64_t blocks_per_sm, CodeWriter& w);

// One thread per element of statement `st`'s output: sb_total, and sb_grid of ceil(total / bs)
// blocks; under `grid_stride`, at most sb_max_grid of them (the kernel strides over the rest).
bool element_grid(const Statement& st, int64_t bs, bool grid_stride, StmtLowering& H,
                  CodeWriter& w);

// A grid-stride loop over `n` items (a launcher variable or expression): sb_blocks, and sb_grid
// = min(sb_blocks, sb_max_grid).
bool grid_stride_grid(const std::string& n, int64_t bs, CodeWriter& w);

// vectorized: sb_vectors, the output's elements in vectors of `lanes`, and a grid-stride grid
// over them.
bool vector_grid(const Statement& st, int64_t lanes, int64_t bs, StmtLowering& H, CodeWriter& w);

// The first pass of a reduction to a scalar over variable `var`: sb_n, its trip count, and
// sb_blocks = ceil(n / bs) capped at sb_max_grid, and at kMaxPartials when the blocks' results
// go to the buffer named `partials` (none: empty), at least 1.
bool reduce_blocks(const IndexVar& var, int64_t bs, const std::string& partials, StmtLowering& H,
                   CodeWriter& w);

// A reduction per output element: sb_total, and sb_grid of one warp per element (ceil(total /
// warps per block) blocks) under `warp`, else one block per element, at most kMaxGridZ blocks
// (the kernel strides over the rest).
void row_reduce_grid(const Statement& st, int64_t bs, bool warp, StmtLowering& H, CodeWriter& w);

// The three-phase scan of statement `st` (match_scan `m`): element p of the scanned range
// (the reduction variable at lo + p) completes output p + shift. Known when lo is a literal and
// hi's part without the output index is a constant.
std::optional<int64_t> scan_shift(const Statement& st, const ScanMatch& m);

// The scan's launch: sb_shift (scan_shift, or its expression), sb_len, the outputs the scan
// completes, and the blocks: sb_parts chunks of sb_chunk elements, at most kMaxPartials.
void scan_grid(const Spec& spec, const Statement& st, const ScanMatch& m, int64_t bs,
               StmtLowering& H, CodeWriter& w);

// tiled_transpose with `t` x `t` tiles and blocks of `t` x `rows` threads: `dim3 sb_grid` of
// ceil(columns / t) by ceil(rows / t) blocks, and `dim3 sb_block`.
void transpose_grid(const Statement& st, int64_t t, int64_t rows, StmtLowering& H, CodeWriter& w);

// tiled_stencil's block edge along each output dimension, first dimension first. The last
// dimension runs along threadIdx.x, `tile_x` threads (the whole block at rank 1); at rank 3 the
// one before along y, `tile_y`; the first dimension takes the rest of the `bs` threads.
std::vector<int64_t> stencil_block(size_t rank, int64_t bs, int64_t tile_x, int64_t tile_y);

// C lines of the halo of stencil `m` (lower/gpu_bodies.h: halo_lets, sb_lo<d> <= 0 <= sb_hi<d>)
// through `H`, in the launchers of both GPU printers.
void c_halo_lets(const Statement& st, const StencilMatch& m, StmtLowering& H, CodeWriter& w);

// tiled_stencil's launch with blocks of edges `block` (stencil_block): the halo (c_halo_lets),
// sb_smem, the bytes of one block's window of the stencil's tensor held as `value`, and where they
// fit in kMaxStencilSmem, the tiled kernel on `sb_grid` of ceil(extent / edge) blocks per
// dimension (x first) and `sb_block` (both dim3s; numbers at rank 1); else the untiled kernel on an
// element_grid of blocks of `bs`. `launch(w, tiled, grid, block)` prints one launch. Returns
// whether the lines read sb_max_grid.
bool stencil_launch(const Statement& st, const StencilMatch& m, const std::vector<int64_t>& block,
                    DType value, int64_t bs, StmtLowering& H, CodeWriter& w,
                    const std::function<void(CodeWriter&, bool tiled, const std::string& grid,
                                             const std::string& block)>& launch);

// The launch grid of a tiled matrix product c[(h,) i, j] (tiled_matmul, register_blocked_matmul)
// with `bm` x `bn` output tiles: `dim3 sb_grid` of ceil(columns / bn) by ceil(rows / bm) blocks,
// and for a batch (`batched`) sb_nb, the products, along z up to kMaxGridZ.
void matmul_grid(const Statement& st, bool batched, int64_t bm, int64_t bn, StmtLowering& H,
                 CodeWriter& w);

// The launch grid of flash_attention's kernel for attention group `a`: sb_qblocks, the blocks of
// `bq` queries per batch element, and `dim3 sb_grid` of batch * sb_qblocks by ceil(columns / ec)
// blocks. `H` lowers the group's last statement.
void attention_grid(const Spec& spec, const Attention& a, int64_t bq, int64_t ec,
                    StmtLowering& H, CodeWriter& w);

// The launch of fused row group `p` under `unit`, with blocks of `bs` threads: sb_blocks,
// ceil(rows / rows_per_block) capped at sb_max_grid; and for a group that stages rows
// (stages_rows), sb_smem, the bytes of its shared memory in the layout of worker_rows, with the
// staged kernel launched when they fit in kMaxRowSmem and the global one otherwise.
// `launch(w, staged)` prints one launch into `w`. `H` lowers the group's first statement. Reads
// sb_max_grid: returns true.
bool fused_rows_launch(const Spec& spec, const RowPlan& p, RowUnit unit, int64_t bs,
                       StmtLowering& H, CodeWriter& w,
                       const std::function<void(CodeWriter&, bool staged)>& launch);

}  // namespace sb
