// block_reduce, warp_reduce, atomic_reduce: reductions to a scalar output.
#include "backends/cuda/strategies/strategy.h"

namespace sb::cuda {

namespace {

// kind: 't' (shared-memory trees), 'w' (warp shuffles) or 'a' (atomics, which need the
// output's own type; match_scalar_reduce's `atomic`).
CudaStrategy scalar_reduce_strategy(const char* name, const char* doc, char kind,
                                    const char* algorithm) {
  const bool atomic = kind == 'a';
  CudaStrategy s;
  s.info = {name, doc, {block_size_param(), blocks_per_sm_param()}, algorithm};
  s.needs = atomic ? "a scalar output reduced by one sum, prod, max or min of its own type, e.g. "
                     "d = sum(i in 0..N: x[i] * y[i])"
                   : "a scalar output reduced by one sum, prod, max or min, e.g. "
                     "d = sum(i in 0..N: x[i] * y[i])";
  s.matches = [atomic](const Spec& spec, const Statement& st, std::string* why) {
    ReduceMatch m;
    return match_scalar_reduce(spec, st, atomic, &m, why);
  };
  const GpuKernel form = kind == 't'   ? GpuKernel::TreeReduce
                         : kind == 'w' ? GpuKernel::WarpReduce
                                       : GpuKernel::AtomicReduce;
  s.place = [atomic, form](const Spec& spec, size_t k, const Statement& st) {
    GpuStep g = generic_step(k);
    std::string why;
    if (match_scalar_reduce(spec, st, atomic, &g.red, &why)) g.kind = form;
    return g;
  };
  return s;
}

}  // namespace

void add_scalar_reduce_strategies(std::vector<CudaStrategy>& out) {
  out.push_back(scalar_reduce_strategy(
      "block_reduce",
      "a reduction to a scalar: per-block shared-memory trees, then one block over the partial "
      "results",
      't', "shared_tree_reduce"));
  out.push_back(scalar_reduce_strategy(
      "warp_reduce",
      "a reduction to a scalar: warp shuffles and one value per warp in shared memory, then one "
      "block over the partial results",
      'w', "warp_shuffle_reduce"));
  out.push_back(scalar_reduce_strategy(
      "atomic_reduce",
      "a reduction to a scalar: per-block warp-shuffle reductions combined atomically into the "
      "output",
      'a', "atomic_reduce"));
}

}  // namespace sb::cuda
