// The bodies of GPU kernels, written once as loop IR (lower/loop_ir.h) for both GPU printers
// (backends/cuda, backends/mojo_gpu), which print them through their loop IR printers with their
// own spelling of the spec's leaves and the GPU nodes (backends/common/loop_leaves.h). Each
// printer keeps the kernel's frame: its signature, its description and its launch
// (backends/common/gpu_launch.h).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/gpu_mapping.h"
#include "lower/loop_ir.h"
#include "lower/patterns.h"

namespace sb {

// The tiled transpose (GpuKernel::TiledTranspose) of statement `st`: `tile` x `tile` blocks of
// the output through padded shared-memory tiles ([tile][tile + 1], one per transposed read,
// sb_tile<q>), loaded along the source's last dimension and stored along the output's; blocks
// of tile x `rows` threads, each looping over the tile's rows in steps of `rows`; a 2-D grid,
// x over output dimension 1, y over dimension 0 (transpose_grid).
loops::Block transpose_tile(const Spec& spec, const Statement& st, const TransposeMatch& m,
                            int64_t tile, int64_t rows);

// The tiled matrix product (GpuKernel::TiledMatmul) `m` of statement `st`: `tile` x `tile`
// output tiles, a block of tile x tile threads (x along the columns) per tile, the reduction's
// range in steps of `tile` through shared-memory tiles of both operands (sb_ta, sb_tb) stored
// [k][row or column] with rows padded to tile + 1, zero outside the operands; a batch of products
// (m.batched, the batch index first) along the grid's z, every thread of a block walking the same
// products. The thread at row sb_row and column sb_col folds its output's terms in sb_acc.
loops::Block matmul_tile(const Spec& spec, const Statement& st, const MatmulMatch& m, int64_t tile);

// The register-blocked matrix product (GpuKernel::RegisterBlocked) `m` of statement `st`:
// bm x bn output tiles, a block of (bm / tm) * (bn / tn) threads per tile, each thread holding
// tm x tn outputs in registers (sb_acc; rows sb_tr + m * bm / tm, columns sb_tc + n * bn / tn);
// the reduction's range in steps of bk through shared-memory tiles of both operands (sb_ta,
// sb_tb) stored [k][row or column], loaded by the block's threads in turn, as 16-byte vectors
// where the operand allows (no boundary rule, not f16 or bf16, the tile's contiguous extent a
// multiple of them) and its address, rows and k's lower bound are aligned (checked at run time),
// else one element at a time, zero outside the operand; a batch of products (m.batched) along
// the grid's z, every thread of a block walking the same products.
struct RegisterTile {
  int64_t bm, bn, bk, tm, tn;
};
loops::Block register_blocked_body(const Spec& spec, const Statement& st, const MatmulMatch& m,
                                   const RegisterTile& t);

// One thread per output element of statement `st` (GpuKernel::ThreadPerElement; a scalar output:
// the one thread of a <<<1, 1>>> launch), or under `grid_stride` (GpuKernel::GridStride) a loop
// of each thread over the flat outputs, a grid's threads apart.
loops::Block element_body(const Spec& spec, const Statement& st, bool grid_stride);

// The reduction `red` of statement `st`'s scalar output (`kind`: GpuKernel::TreeReduce,
// WarpReduce or AtomicReduce), for blocks of `block_size` threads:
// - partial: a grid-stride share of the reduction per thread, folded per block (a shared-memory
//   tree, or warp shuffles and one value per warp), then stored to global array `part`[block] (tree, warp) or folded atomically
//   into the output (atomic);
// - final (tree, warp): one block folds part[0, sb_parts) and its thread 0 applies the rest of
//   the statement. The atomic form's output starts at the identity and the rest of the statement
//   is applied after; both stay in the printers.
struct ScalarReduceBodies {
  loops::Block partial, final;
};
ScalarReduceBodies scalar_reduce_bodies(const Spec& spec, const Statement& st, const Expr& red,
                                        GpuKernel kind, int64_t block_size,
                                        const std::string& part);

// The vectorized grid-stride loop (GpuKernel::Vectorized) of elementwise statement `st`
// (match_vectorized `m`): where the output and every tensor of m.contiguous are 16-byte aligned,
// each thread loops over vectors of 16 / (the widest of their elements) lanes, loading those
// tensors' vectors (sb_vec_<name>) and computing each lane of the output's vector from them
// (sb_res), then storing it; where also the output's rows hold whole vectors and the reads of
// m.row_contiguous of that width are aligned, those load as vectors too (sb_row<i>, at lane 0's
// indices). The output indices a lane needs beyond those loads are bound per lane. A scalar
// grid-stride loop does the elements past the last vector, and all of them when not aligned.
loops::Block vectorized_body(const Spec& spec, const Statement& st, const VectorizeMatch& m);
// Its lanes: 16 bytes of the widest element of the output and the tensors of m.contiguous.
int vector_lanes(const Spec& spec, const Statement& st, const VectorizeMatch& m);

// The row reduction `red` of statement `st` (GpuKernel::WarpPerRow under `warp`, else
// BlockPerRow): one warp (one block) per output element, its lanes (threads) striding the
// reduction, folded by warp shuffles (a shared-memory tree); lane (thread) 0 applies the rest of
// the statement.
loops::Block row_reduce_body(const Spec& spec, const Statement& st, const Expr& red, bool warp,
                             int64_t block_size);

// The halo of stencil `m` (match_stencil) of statement `st`: per output dimension d, the Lets of
// sb_lo<d> <= 0 <= sb_hi<d>, the least and greatest offsets of the reads' subscripts along d, for
// the kernel and its launcher (literal offsets as constants, others as the min and max of each
// offset form's bounds over the reduction ranges).
loops::Block halo_lets(const Spec& spec, const Statement& st, const StencilMatch& m);

// The tiled stencil (GpuKernel::TiledStencil) of statement `st` (match_stencil `m`) for blocks
// of edges `block` (stencil_block, the last dimension along x): each block stages the window of
// the stencil's tensor its outputs read (halo included) in dynamic shared memory, its threads
// loading the window in row-major order (outside the tensor: zero, or clamped, by its boundary
// rule), then computes its outputs from the window.
loops::Block stencil_tile(const Spec& spec, const Statement& st, const StencilMatch& m,
                          const std::vector<int64_t>& block);

// The three kernels of the scan (GpuKernel::Scan) of statement `st` (match_scan `m`), for blocks
// of `block_size` threads and the per-block totals in global array `part`:
// - partial: each block folds its chunk of the scanned elements (sb_chunk of sb_len; element p
//   is the reduction variable at lo + p) into part[block];
// - carry: one block turns part[0, sb_parts) into its inclusive scan;
// - offsets: each block scans its chunk again, from the total of the chunks before it, and
//   stores output p + sb_shift for element p; `shift` is sb_shift where it is known when
//   generating (gpu_launch.h: scan_shift), and outputs below sb_shift get the identity.
// The block-wide scan (one value per warp in shared memory, sb_ws) continues from sb_carry.
struct ScanBodies {
  loops::Block partial, carry, offsets;
};
ScanBodies scan_bodies(const Spec& spec, const Statement& st, const ScanMatch& m,
                       int64_t block_size, const std::string& part, std::optional<int64_t> shift);

// The kernel of fused row group `p` (GpuKernel::FusedRows) under `unit` (a warp or a block owning
// a row), for blocks of `block_size` threads (lower/fused_rows_body.cpp): each worker loops over
// its rows (sb_row), computing the group's statements in order along the row, its lanes
// (sb_lane) a worker's width apart, in the segment order of the anchor's row where a loop covers
// it (RowPlan::anchor; segment_lets in fused_rows_body.cpp). A rank-1 statement's reduction folds
// per lane, then over the warp (and the block's warps through sb_warps_<type>); its value stays in
// a register (sb_row_<name>), and one the group stores is kept by thread i % width for the worker's
// i-th row and stored every width rows. The `staged` kernel holds rows in dynamic shared memory
// (sb_rows_<type>: the broadcast tensors once per block, then the worker's cached rows and row
// temps), copied in segment order; the other reads global memory and computes row temps again where
// they are read (RowRead). `outs`: the tensors it writes.
struct FusedRowsBody {
  loops::Block body;
  std::set<int> outs;
};
FusedRowsBody fused_rows_body(const Spec& spec, const RowPlan& p, RowUnit unit, bool staged,
                              int64_t block_size);

// The depths of the scores' dot products that a flash_attention block stages through shared
// memory at a time (its q and k tiles hold this many depths of each query and key).
constexpr int64_t kAttentionDepthChunk = 32;

// The kernel of attention group `a` (GpuKernel::FusedAttention, the flash_attention strategy)
// for blocks of `block_size` threads (lower/attention_body.cpp), FlashAttention's algorithm with
// the parallelism of a GPU block: a block owns bq queries of one batch element (block x, over
// the batch times sb_qblocks, a kernel parameter) and ec columns of the output (block y), and
// walks the keys in blocks of bk. For each block of keys it computes the bq x bk scores (q and k
// staged through shared memory kAttentionDepthChunk depths at a time, each thread holding
// bq * bk / block_size dot products in registers), then a thread per query folds the block into
// its running max and sum and turns the scores into weights, and every thread rescales its
// bq * ec / block_size outputs and adds the weights times the staged values. The scores exist
// one block at a time in shared memory; s, m, p and l are never written. The kernel's own
// statement (its Compute, its index variables) is the group's last, the weighted sum.
struct AttentionTile {
  int64_t bq, bk, ec;
};
loops::Block attention_body(const Spec& spec, const Attention& a, const AttentionTile& t,
                            int64_t block_size);

}  // namespace sb
