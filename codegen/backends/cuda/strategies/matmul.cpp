// tiled_matmul, register_blocked_matmul: matrix products.
#include "backends/cuda/strategies/strategy.h"

namespace sb::cuda {

namespace {

bool matches_batched_matmul(const Spec& spec, const Statement& st, std::string* why) {
  MatmulMatch m;
  return match_batched_matmul(spec, st, &m, why);
}

const char* const kBatchedNeeds =
    "a matrix product c[i, j] = sum(k in 0..K: a[i, k] * b[k, j]), or a batch of them c[h, i, "
    "j] = sum(k in 0..K: a[h, i, k] * b[h, k, j]) (an operand may lack h), possibly inside an "
    "elementwise expression";

Status check_register_blocked_params(const Spec&, const Variant& v, const StrategyInfo& info) {
  auto p = [&](const std::string& name) { return param(v, info, name); };
  const std::string who = "variant '" + v.name + "'";
  for (const auto& [t, b] : {std::pair<const char*, const char*>{"tm", "bm"}, {"tn", "bn"}}) {
    if (p(t) > p(b))
      return make_error(param_loc(v, t), std::string("parameter '") + t + "' of " + who + " is " +
                                             std::to_string(p(t)) + ", more than " + b + " = " +
                                             std::to_string(p(b)));
  }
  const int64_t threads = (p("bm") / p("tm")) * (p("bn") / p("tn"));
  if (threads < 32 || threads > 1024)
    return make_error(v.loc, who + " would run (bm / tm) * (bn / tn) = " +
                                 std::to_string(threads) +
                                 " threads per block; it must be between 32 and 1024");
  return {};
}

// The shared-memory tiles of a and b for one stage must fit in 48 KiB.
Status check_register_blocked_target(const Spec& spec, const Statement& st, const Variant& v,
                                     const StrategyInfo& info) {
  auto p = [&](const std::string& name) { return param(v, info, name); };
  MatmulMatch mm;
  std::string why;
  SB_ASSERT(match_batched_matmul(spec, st, &mm, &why), "target that does not match");
  const int64_t bytes = p("bk") * (p("bm") * dtype_bytes(spec.tensors[mm.a->ref].type) +
                                   p("bn") * dtype_bytes(spec.tensors[mm.b->ref].type));
  if (bytes > 48 * 1024)
    return make_error(v.loc, "variant '" + v.name + "' needs " + std::to_string(bytes) +
                                 " bytes of shared memory for its tiles, more than 48 KiB");
  return {};
}

}  // namespace

void add_matmul_strategies(std::vector<CudaStrategy>& out) {
  {
    CudaStrategy s;
    s.info = {"tiled_matmul",
              "matrix products, and batches of them: tile x tile output tiles, with a and b "
              "staged through shared memory, the batch along the grid's z",
              {pow2_param("tile", 16, 8, 32, "output tile edge; the block is tile x tile threads")},
              "shared_tiled_gemm"};
    s.needs = kBatchedNeeds;
    s.matches = matches_batched_matmul;
    s.place = [](const Spec& spec, size_t k, const Statement& st) {
      GpuStep g = generic_step(k);
      std::string why;
      if (match_batched_matmul(spec, st, &g.mm, &why)) g.kind = GpuKernel::TiledMatmul;
      return g;
    };
    out.push_back(std::move(s));
  }
  {
    CudaStrategy s;
    s.info = {"register_blocked_matmul",
              "matrix products, and batches of them: bm x bn output tiles, tm x tn outputs per "
              "thread in registers, vector loads of a and b where aligned, the batch along the "
              "grid's z",
              {pow2_param("bm", 64, 16, 256, "rows of the block's output tile"),
               pow2_param("bn", 64, 16, 256, "columns of the block's output tile"),
               pow2_param("bk", 8, 4, 64, "k values per shared-memory stage"),
               pow2_param("tm", 4, 1, 16, "rows per thread"),
               pow2_param("tn", 4, 1, 16, "columns per thread")},
              "register_blocked_gemm"};
    s.needs = kBatchedNeeds;
    s.matches = matches_batched_matmul;
    s.check_params = check_register_blocked_params;
    s.check_target = check_register_blocked_target;
    s.place = [](const Spec& spec, size_t k, const Statement& st) {
      GpuStep g = generic_step(k);
      std::string why;
      if (match_batched_matmul(spec, st, &g.mm, &why)) g.kind = GpuKernel::RegisterBlocked;
      return g;
    };
    out.push_back(std::move(s));
  }
}

}  // namespace sb::cuda
