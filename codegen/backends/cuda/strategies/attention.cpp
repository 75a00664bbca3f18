// flash_attention: an attention group (lower/patterns.h: match_attention) as one kernel with an
// online softmax over blocks of keys, the score matrix never written (FlashAttention).
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/strategies/strategy.h"
#include "lower/gpu_bodies.h"

namespace sb::cuda {

namespace {

// The shared memory of the kernel (cuda_kernels.cpp, Gen::attention): a chunk of
// kAttentionDepthChunk depths of the block's queries and keys (rows padded by one), the block's
// scores [bq][bk + 1], its values [bk][ec], and three values per query.
int64_t shared_elements(int64_t bq, int64_t bk, int64_t ec) {
  const int64_t dc = kAttentionDepthChunk;
  return bq * (dc + 1) + bk * (dc + 1) + bq * (bk + 1) + bk * ec + 3 * bq;
}

Status check_params(const Spec&, const Variant& v, const StrategyInfo& info) {
  auto p = [&](const std::string& name) { return param(v, info, name); };
  const std::string who = "variant '" + v.name + "'";
  const int64_t threads = p("block_size");
  // Every thread holds bq * bk / block_size scores and bq * ec / block_size outputs, and a
  // thread per query runs the softmax.
  for (const auto& [what, n] : {std::pair<const char*, int64_t>{"bq * bk", p("bq") * p("bk")},
                                {"bq * ec", p("bq") * p("ec")}}) {
    if (threads > n)
      return make_error(param_loc(v, "block_size"),
                        "parameter 'block_size' of " + who + " is " + std::to_string(threads) +
                            ", more than " + what + " = " + std::to_string(n) +
                            ": each thread computes at least one score and one output");
  }
  if (threads < p("bq"))
    return make_error(param_loc(v, "block_size"),
                      "parameter 'block_size' of " + who + " is " + std::to_string(threads) +
                          ", fewer than bq = " + std::to_string(p("bq")) +
                          ": the softmax takes a thread per query");
  return {};
}

Status check_target(const Spec& spec, const Statement& st, const Variant& v,
                    const StrategyInfo& info) {
  auto p = [&](const std::string& name) { return param(v, info, name); };
  const int64_t bytes = shared_elements(p("bq"), p("bk"), p("ec")) *
                        dtype_bytes(spec.tensors[st.out].type);
  if (bytes > 48 * 1024)
    return make_error(v.loc, "variant '" + v.name + "' needs " + std::to_string(bytes) +
                                 " bytes of shared memory for its tiles, more than 48 KiB");
  return {};
}

}  // namespace

void add_attention_strategies(std::vector<CudaStrategy>& out) {
  CudaStrategy s;
  s.info = {"flash_attention",
            "attention (scores, row max, exponentials, row sum, weighted sum) as one kernel: "
            "a block per bq queries and ec value columns, an online softmax over blocks of bk "
            "keys, q and k staged through shared memory by chunks of the depth, the score "
            "matrix never written; other statements grid-stride",
            {pow2_param("bq", 32, 8, 64, "queries per block"),
             pow2_param("bk", 32, 8, 64, "keys per block of the online softmax"),
             pow2_param("ec", 64, 8, 128,
                        "value columns per block (wider values take more blocks, each "
                        "computing the scores again)"),
             {"block_size", 128, 32, 1024, true, "threads per block"}},
            "online_softmax_attention"};
  s.needs = std::string("an attention group, ") + kAttentionShape;
  s.matches = [](const Spec& spec, const Statement& st, std::string* why) {
    if (starts_attention(spec, st)) return true;
    *why = "it does not start an attention group";
    return false;
  };
  s.check_params = check_params;
  s.check_target = check_target;
  s.fuse.attention = true;
  s.place = [](const Spec&, size_t k, const Statement&) { return generic_step(k); };
  out.push_back(std::move(s));
}

}  // namespace sb::cuda
