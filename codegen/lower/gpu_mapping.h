// Lowering pass: GPU mapping. How a GPU strategy (the cuda strategies, backends/cuda/strategies/)
// maps a spec onto kernels: a list of steps, each one kernel (or one launch sequence) for one
// statement, or for a row group (lower/row_fusion.h) that the strategy fuses into one kernel with
// a worker (a warp or a block) owning a row. A step names its kind and carries the shape match
// (lower/patterns.h) it lowers from; for a fused group, the plan of where each tensor of the
// group lives (RowPlan). This is the one home of those decisions: a GPU printer (cuda; a Mojo GPU
// printer next) prints the steps in order and decides nothing about the mapping itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "lower/patterns.h"
#include "lower/row_fusion.h"

namespace sb {

// The kernel forms a step may take.
enum class GpuKernel {
  ThreadPerElement,  // one thread per output element (one thread for a scalar)
  GridStride,        // a bounded grid whose threads stride over the output elements
  Vectorized,        // grid-stride over 16-byte vectors of the contiguous reads and the output
  TreeReduce,        // a scalar: per-block shared-memory trees, then one block over the partials
  WarpReduce,        // a scalar: warp shuffles, then one block over the partials
  AtomicReduce,      // a scalar: warp shuffles, then one atomic per warp into the output
  WarpPerRow,        // a row reduction: one warp per output element
  BlockPerRow,       // a row reduction: one block per output element
  TiledMatmul,       // shared-memory tiles of both operands
  RegisterBlocked,   // shared-memory tiles and a register block of outputs per thread
  TiledTranspose,    // a shared-memory tile, read and written along rows
  TiledStencil,      // a shared-memory tile with its halo
  Scan,              // three phases: block scans, a scan of the block totals, the offsets
  FusedRows,         // a row group as one kernel, a worker owning a row
  FusedAttention,    // an attention group as one kernel: blocks of keys, an online softmax
};
const char* gpu_kernel_name(GpuKernel k);  // "thread_per_element", ..., "fused_rows"

// Which unit owns a row when a strategy fuses row groups into one kernel.
enum class RowUnit { None, Warp, Block };
const char* row_unit_name(RowUnit u);  // "none", "warp", "block"

// A fused row group as a GPU kernel lowers it: where each tensor of the group lives. The tensors
// are classified from the statements' shapes alone.
struct RowPlan {
  size_t first = 0, last = 0;
  // Rank-1 tensors the group writes (rowmax[r], mean[r]): one value per thread, every thread of
  // the worker holding it; outputs are also written to memory by one thread.
  std::vector<int> regs;
  // Rank-2 temps that live only as the current row (e[r, c]): a row in shared memory, or, when
  // the rows do not fit there, recomputed from their statement wherever they are read.
  std::vector<int> rows;
  // Rank-2 tensors the group only reads, at its own row, more than once (softmax's x): the row
  // is staged in shared memory once, so that memory is read once.
  std::vector<int> cached;
  // Tensors the group only reads, with subscripts that do not use the row index (layernorm's
  // weight[c]): staged in shared memory once per block, for all the rows the block processes.
  std::vector<int> bcast;
  DType type = DType::F32;     // the element type of the shared-memory arrays
  std::vector<int> row_local;  // RowGroup::row_local
  // The regs that are outputs stored to memory (not row_local): the worker's i-th row's value is
  // kept by thread i % lanes and stored every `lanes` rows, so that every thread stores alike.
  std::vector<int> kept;
  // The first rank-2 output stored to memory (-1: none). Every loop along the row that covers
  // this tensor's row visits its elements in segment order: the whole kRowSegmentBytes segments
  // first, then the partial head and tail together. A warp's stores then cover whole sectors, and
  // a thread reads the same elements of a staged row in every statement.
  int anchor = -1;
  // The value types of the group's row reductions. Under a block per row, every thread combines
  // the block's warps' values of a reduction through one shared array per type, one value per
  // warp.
  std::set<DType> reduce_types;
};

// A fused row group runs on a grid of blocks that each process at least this many rows, so that
// what a block stages once (tensors every row reads alike) serves that many rows: every
// block_per_row group, and a warp_per_row group that stages such tensors (one without them takes
// one row per warp of the block); the grid is also capped at SMs * blocks_per_sm blocks.
constexpr int64_t kMinRowsPerBlock = 16;

// Dynamic shared memory a fused row group's kernel may use (the default limit without opting in);
// larger rows take the kernel that reads global memory instead.
constexpr int64_t kMaxRowSmem = 48 * 1024;

// The memory segment that the visiting order along a row (RowPlan::anchor) and the staging copies
// align to: a warp's 32 lanes touch one such segment, or a row's two partial ones.
constexpr int kRowSegmentBytes = 128;

// Whether group `p` has a kernel that holds rows in shared memory (anything staged or shared).
// Such a group also has the kernel that reads global memory, which the launch takes when the
// shared memory exceeds kMaxRowSmem.
bool stages_rows(const RowPlan& p);

// The rank-2 tensors of which each worker holds its current row in shared memory, in the order
// of their slots: p.cached, then p.rows. The broadcast tensors (p.bcast) come first, once per
// block, in their own order.
std::vector<int> worker_rows(const RowPlan& p);

// The fewest rows a block of `block_size` threads processes under `unit`: kMinRowsPerBlock for a
// block per row, or for a warp per row that stages broadcast tensors; one per warp otherwise.
int64_t rows_per_block(const RowPlan& p, RowUnit unit, int64_t block_size);

// Where a fused row kernel reads tensor `t` from: its `staged` kernel (shared memory), or the one
// reading global memory.
enum class RowRead {
  Global,       // the tensor in global memory, as written
  Register,     // a per-row value (p.regs) every thread of the worker holds
  SharedRow,    // the worker's row in shared memory (p.cached, p.rows), at the read's column
  SharedBlock,  // the block's copy in shared memory (p.bcast), at the read's flat index
  Recompute,    // a row temp (p.rows) without shared memory: its statement at the read's subscripts
};
RowRead row_read(const RowPlan& p, int t, bool staged);

// A read of a row temp that the kernel reading global memory computes again (RowRead::
// Recompute): the temp's statement in the group, and each index variable node of its right-hand
// side paired with the subscript of the read it stands for.
struct Recompute {
  const Statement* producer = nullptr;
  std::vector<std::pair<const Expr*, const Expr*>> binds;
};
Recompute recompute(const Spec& spec, const RowPlan& p, const Expr& read);

// Whether the worker's threads meet at a barrier after statement `k` of group `p`: before the
// group's next statement, which may read what other threads of the worker wrote; and, in the
// `staged` kernel, after the last one too, before the next row's staging overwrites shared memory.
bool barrier_after(const RowPlan& p, size_t k, bool staged);

// What the fused kernel of `p` keeps where, as one sentence for the kernel's comment: the
// `staged` kernel (shared memory) or the one reading global memory.
std::string describe(const RowPlan& p, const Spec& spec, RowUnit unit, bool staged);

// Whether the statements of `g` lower as one kernel (filling `p`): rank 1 (elementwise, or one
// outer reduction along a contiguous index, as match_row_reduce) or rank 2 (elementwise), outputs
// without a boundary rule, and every row temp of rank 2 computable again from its own statement.
bool plan_rows(const Spec& spec, const RowGroup& g, RowPlan* p);

// One step of a mapping. `first`..`last` are the statements (equal except for FusedRows and
// FusedAttention); only the match of the step's kind is set: `vec` (Vectorized), `red` (the
// reductions, the row reductions), `mm` (the matmuls), `tr`, `sten`, `scan`, `rows` and `unit`
// (FusedRows), `att` (FusedAttention).
struct GpuStep {
  GpuKernel kind = GpuKernel::ThreadPerElement;
  size_t first = 0, last = 0;
  VectorizeMatch vec;
  ReduceMatch red;
  MatmulMatch mm;
  TransposeMatch tr;
  StencilMatch sten;
  ScanMatch scan;
  RowPlan rows;
  RowUnit unit = RowUnit::None;
  Attention att;
};

struct GpuMapping {
  std::vector<GpuStep> steps;
};

// A strategy's placement of statement k (outside the groups it fuses): its own kernel where the
// statement has the strategy's shape, a generic one otherwise.
using GpuPlace = std::function<GpuStep(const Spec& spec, size_t k, const Statement& st)>;

// What a strategy fuses across statements: row groups (with the unit owning a row; None: no
// row fusion) and attention groups.
struct GpuFusion {
  RowUnit rows = RowUnit::None;
  bool attention = false;
};

// The mapping of every statement of a lowered `spec` (after the row_fusion and fuse_attention
// passes): under `fuse.attention`, each attention group of spec.schedule.attention_groups is one
// FusedAttention step; under `fuse.rows` (not None), each row group of spec.schedule.row_groups
// that plan_rows() accepts is one FusedRows step; every other statement is placed by `place`.
GpuMapping gpu_mapping(const Spec& spec, GpuFusion fuse, const GpuPlace& place);

// The mapping as text, one step per line, for `gen --dump-ir gpu_mapping` and tests, e.g.
// "kernel 0: stmts 0..3 fused_rows, a warp per row; registers rowmax, rowsum; shared rows e;
// staged rows x; rows in the segment order of y".
std::string dump(const GpuMapping& m, const Spec& spec);

}  // namespace sb
