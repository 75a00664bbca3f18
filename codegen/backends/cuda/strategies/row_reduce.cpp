// warp_per_row, block_per_row: row-wise reductions, and fused row groups.
#include "backends/cuda/strategies/strategy.h"

namespace sb::cuda {

namespace {

CudaStrategy row_strategy(const char* name, const char* doc, RowUnit unit, const char* algorithm) {
  const bool warp = unit == RowUnit::Warp;
  CudaStrategy s;
  s.info = {name, doc, {block_size_param()}, algorithm};
  s.needs =
      "an output of rank >= 1 reduced along a contiguous index, e.g. "
      "s[r] = sum(c in 0..C: x[r, c])";
  s.matches = [](const Spec& spec, const Statement& st, std::string* why) {
    ReduceMatch m;
    return match_row_reduce(spec, st, &m, why);
  };
  s.fuse.rows = unit;
  s.place = [warp](const Spec& spec, size_t k, const Statement& st) {
    GpuStep g = generic_step(k);
    std::string why;
    if (match_row_reduce(spec, st, &g.red, &why))
      g.kind = warp ? GpuKernel::WarpPerRow : GpuKernel::BlockPerRow;
    return g;
  };
  return s;
}

}  // namespace

void add_row_reduce_strategies(std::vector<CudaStrategy>& out) {
  out.push_back(row_strategy(
      "warp_per_row",
      "row-wise reductions: one warp per output element, lanes striding the reduction, a shuffle "
      "combine; a row group is one kernel, a warp owning a row, row temps in registers or shared "
      "memory",
      RowUnit::Warp, "warp_per_row"));
  out.push_back(row_strategy(
      "block_per_row",
      "row-wise reductions: one block per output element, a shared-memory tree; a row group is "
      "one kernel, a block owning a row (shuffle and shared-memory reductions), row temps in "
      "registers or shared memory, row-invariant reads staged once per block",
      RowUnit::Block, "block_per_row"));
}

}  // namespace sb::cuda
