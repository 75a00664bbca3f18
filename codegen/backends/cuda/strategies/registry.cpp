// The cuda strategy registry (strategy.h): the families in order, lookup, and the fit check
// every strategy shares.
#include <set>

#include "backends/cuda/strategies/strategy.h"

namespace sb::cuda {

ParamInfo block_size_param() { return {"block_size", 256, 32, 1024, true, "threads per block"}; }

ParamInfo blocks_per_sm_param() {
  return {"blocks_per_sm", 4, 1, 32, false, "grid size cap, in blocks per streaming multiprocessor"};
}

ParamInfo pow2_param(const char* name, int64_t def, int64_t lo, int64_t hi, const char* doc) {
  return {name, def, lo, hi, true, doc};
}

Loc param_loc(const Variant& v, const std::string& name) {
  auto it = v.param_locs.find(name);
  return it != v.param_locs.end() ? it->second : v.loc;
}

GpuStep generic_step(size_t k, GpuKernel kind) {
  SB_ASSERT(kind == GpuKernel::ThreadPerElement || kind == GpuKernel::GridStride,
            "a generic step is one thread per element or a grid-stride loop");
  GpuStep g;
  g.kind = kind;
  g.first = g.last = k;
  return g;
}

const std::vector<CudaStrategy>& strategy_registry() {
  static const std::vector<CudaStrategy> kRegistry = [] {
    std::vector<CudaStrategy> out;
    add_elementwise_strategies(out);
    add_scalar_reduce_strategies(out);
    add_row_reduce_strategies(out);
    add_matmul_strategies(out);
    add_transpose_strategies(out);
    add_stencil_strategies(out);
    add_scan_strategies(out);
    add_attention_strategies(out);
    std::set<std::string> names;
    for (const CudaStrategy& s : out) {
      SB_ASSERT(names.insert(s.info.name).second, "cuda strategy registered twice: " + s.info.name);
      SB_ASSERT(static_cast<bool>(s.place), "cuda strategy without a placement: " + s.info.name);
      SB_ASSERT(!s.info.algorithm.empty(),
                "cuda strategy without an algorithm class: " + s.info.name);
      SB_ASSERT(static_cast<bool>(s.matches) == !s.needs.empty(),
                "cuda strategy with a shape but no needs text (or the reverse): " + s.info.name);
    }
    return out;
  }();
  return kRegistry;
}

const CudaStrategy* find_cuda_strategy(const std::string& name) {
  for (const CudaStrategy& s : strategy_registry())
    if (s.info.name == name) return &s;
  return nullptr;
}

Status check_fit(const CudaStrategy& s, const Spec& spec, const Variant& v,
                 const StrategyInfo& info) {
  if (!s.matches) return {};  // applies to every statement
  if (s.check_params) SB_TRY(s.check_params(spec, v, info));

  // The strategy must target at least one statement.
  std::string first;
  size_t misses = 0;
  for (const Statement& st : spec.stmts) {
    std::string why;
    if (s.matches(spec, st, &why)) {
      if (s.check_target) SB_TRY(s.check_target(spec, st, v, info));
      continue;
    }
    if (first.empty()) first = "'" + source_text(st, spec) + "' does not fit: " + why;
    ++misses;
  }
  if (misses < spec.stmts.size()) return {};
  std::string more;
  if (misses > 1) more = " (nor do the other " + std::to_string(misses - 1) + " statements)";
  return make_error(v.loc, "strategy '" + s.info.name + "' of variant '" + v.name +
                               "' fits no statement of kernel '" + spec.name + "': it needs " +
                               s.needs + ", and " + first + more);
}

}  // namespace sb::cuda
