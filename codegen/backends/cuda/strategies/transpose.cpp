// tiled_transpose: transposed reads through padded shared-memory tiles.
#include "backends/cuda/strategies/strategy.h"

namespace sb::cuda {

namespace {

Status check_transpose_params(const Spec&, const Variant& v, const StrategyInfo& info) {
  auto p = [&](const std::string& name) { return param(v, info, name); };
  const std::string who = "variant '" + v.name + "'";
  if (p("block_rows") > p("tile"))
    return make_error(param_loc(v, "block_rows"),
                      "parameter 'block_rows' of " + who + " is " +
                          std::to_string(p("block_rows")) +
                          ", more than tile = " + std::to_string(p("tile")));
  if (p("tile") * p("block_rows") > 1024)
    return make_error(v.loc, who + " would run tile * block_rows = " +
                                 std::to_string(p("tile") * p("block_rows")) +
                                 " threads per block, more than 1024");
  return {};
}

// One padded tile per transposed read must fit in 48 KiB of shared memory.
Status check_transpose_target(const Spec& spec, const Statement& st, const Variant& v,
                              const StrategyInfo& info) {
  auto p = [&](const std::string& name) { return param(v, info, name); };
  TransposeMatch tm;
  std::string why;
  SB_ASSERT(match_transpose(spec, st, &tm, &why), "target that does not match");
  int64_t bytes = 0;
  for (const Expr* r : tm.reads)
    bytes += p("tile") * (p("tile") + 1) * dtype_bytes(spec.tensors[r->ref].type);
  if (bytes > 48 * 1024)
    return make_error(v.loc, "variant '" + v.name + "' needs " + std::to_string(bytes) +
                                 " bytes of shared memory for its tiles, more than 48 KiB");
  return {};
}

}  // namespace

void add_transpose_strategies(std::vector<CudaStrategy>& out) {
  CudaStrategy s;
  s.info = {"tiled_transpose",
            "transposed reads through padded shared-memory tiles ([tile][tile + 1])",
            {pow2_param("tile", 32, 8, 64, "tile edge"),
             pow2_param("block_rows", 8, 1, 64,
                        "thread rows per block; each does tile / block_rows rows")},
            "shared_tiled_transpose"};
  s.needs = "a rank-2 elementwise statement such as b[j, i] = a[i, j]";
  s.matches = [](const Spec& spec, const Statement& st, std::string* why) {
    TransposeMatch m;
    return match_transpose(spec, st, &m, why);
  };
  s.check_params = check_transpose_params;
  s.check_target = check_transpose_target;
  s.place = [](const Spec& spec, size_t k, const Statement& st) {
    GpuStep g = generic_step(k);
    std::string why;
    if (match_transpose(spec, st, &g.tr, &why)) g.kind = GpuKernel::TiledTranspose;
    return g;
  };
  out.push_back(std::move(s));
}

}  // namespace sb::cuda
