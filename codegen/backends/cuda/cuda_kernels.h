// Lowering of one cuda variant: its __global__ kernels and its launcher, for every strategy.
// Used by the cuda emitter (emit_cuda.cpp), which assembles the file; the strategies are records
// in strategies/ (strategy.h), whose schedules call the lowerings implemented here, and the
// shapes each strategy targets are decided in lower/patterns.h.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>

#include "backends/common/emit_common.h"
#include "backends/cuda/strategies/strategy.h"
#include "backends/emitter.h"
#include "ir/ir.h"
#include "lower/gpu_mapping.h"

namespace sb::cuda {

// The largest grid of a first pass whose per-block partial results go to a static __device__
// buffer (block_reduce, warp_reduce, scan): the buffer has this many elements, and the pass
// covers any size with a grid-stride (or chunked) loop.
constexpr int64_t kMaxPartials = 1024;

// Dynamic shared memory a tiled_stencil launch may use; larger halos take the untiled kernel.
constexpr int64_t kMaxStencilSmem = 48 * 1024;

// The depths of the scores' dot products that a flash_attention block stages through shared
// memory at a time (its q and k tiles hold this many depths of each query and key).
constexpr int64_t kAttentionDepthChunk = 32;

// The launch grid of flash_attention's kernel for attention group `a`, as launcher lines
// (C++, the cuda file's and the mojo_gpu launcher's alike): sb_qblocks, the blocks of `bq`
// queries per batch element, and `dim3 sb_grid` of batch * sb_qblocks by ceil(columns / ec)
// blocks. `H` lowers the group's last statement (its extents' sizes are recorded there).
void attention_grid(const Spec& spec, const Attention& a, int64_t bq, int64_t ec,
                    StmtLowering& H, CodeWriter& w);

// The launch grid of a tiled matrix product c[(h,) i, j] (tiled_matmul, register_blocked_matmul)
// with `bm` x `bn` output tiles, as launcher lines (C++, the cuda file's and the mojo_gpu
// launcher's alike): `dim3 sb_grid` of ceil(columns / bn) by ceil(rows / bm) blocks, and for a
// batch (`batched`) sb_nb, the products, along z up to kMaxGridZ. `H` lowers the statement.
void matmul_grid(const Statement& st, bool batched, int64_t bm, int64_t bn, StmtLowering& H,
                 CodeWriter& w);

// The launch of fused row group `p` (gpu_mapping.h) under `unit`, with blocks of `bs` threads, as
// launcher lines (C++, the cuda file's and the mojo_gpu launcher's alike): sb_blocks,
// ceil(rows / rows_per_block) capped at sb_max_grid; and for a group that stages rows
// (stages_rows), sb_smem, the bytes of its shared memory in the layout of worker_rows, with the
// staged kernel launched when they fit in kMaxRowSmem and the global one otherwise.
// `launch(w, staged)` prints one launch into `w`. `H` lowers the group's first statement.
void fused_rows_launch(const Spec& spec, const RowPlan& p, RowUnit unit, int64_t bs,
                       StmtLowering& H, CodeWriter& w,
                       const std::function<void(CodeWriter&, bool staged)>& launch);

// One operand of register_blocked_matmul's shared-memory tiles, as both GPU printers load it: a
// tile of X rows (or columns) by bk values of k, stored [k][x], consecutive threads loading along
// the operand's contiguous subscript, W = 16 bytes of elements at a time where `vec`.
struct TileOperand {
  const Expr* read;
  const Tensor* t;
  bool k_inner;  // k is the operand's contiguous (last) subscript
  bool batched;  // read with the batch index first; else shared by the products
  std::string xv, lim, base, tile, flag;  // its index variable and bound, the kernel's names
  int64_t X;
  int W;     // elements in 16 bytes
  bool vec;  // loads vectors: no boundary rule, not f16/bf16 (those load one at a time,
             // widened), and the tile's contiguous extent a multiple of W
  // Where it loads vectors, whether they start aligned at every tile without a check of k's lower
  // bound: k is not contiguous, or the bound is a literal multiple of W. The kernel checks the
  // base address and that the rows are whole vectors either way.
  bool lo_aligned;
};

// The two operands, a then b, of product `m` (statement `st`, its index variables `iv`, `jv` and
// their bounds `M`, `N` as the printer spells them) with bm x bk and bk x bn tiles.
std::array<TileOperand, 2> tile_operands(const Spec& spec, const Statement& st,
                                         const MatmulMatch& m, int64_t bm, int64_t bn, int64_t bk,
                                         const std::string& iv, const std::string& jv,
                                         const std::string& M, const std::string& N);

// The largest grid z dimension of a launch (CUDA's limit); a kernel covers more along z with a
// grid-stride loop.
constexpr int64_t kMaxGridZ = 65535;

// File-level pieces shared by every variant of one generated file.
struct FileParts {
  HelperSet helpers;                                  // portable helpers (emit_common.h)
  std::map<std::string, std::string> device_helpers;  // CUDA-only helpers: name -> definition
  std::string globals;                                // static __device__ scratch buffers
  bool needs_string_h = false;                        // a helper calls memcpy
};

struct VariantCode {
  std::string kernels;   // the variant's __global__ functions with their comments
  std::string launcher;  // `static int sb_variant_<name>(const sb_args* sb_a) {...}`
  std::vector<KernelLaunch> launches;  // every kernel the launcher launches, with its block size
};

// Lowers every statement of `spec` for variant `v` under strategy `s` (strategies/strategy.h):
// the row groups the strategy fuses are one kernel each, and every other statement takes the
// strategy's schedule (its lowering where the statement fits, the generic one otherwise).
VariantCode lower_variant(const Spec& spec, const Variant& v, const CudaStrategy& s,
                          FileParts& file);

}  // namespace sb::cuda
