// The host strategy registries' shared code (host_strategy.h): checks, lookup, the fit check,
// and the records more than one backend registers.
#include "backends/common/host_strategy.h"

#include <set>
#include <utility>

#include "lower/patterns.h"

namespace sb::host {

HostRegistry::HostRegistry(std::string backend, std::vector<HostStrategy> strategies)
    : backend_(std::move(backend)), strategies_(std::move(strategies)) {
  std::set<std::string> names;
  for (const HostStrategy& s : strategies_) {
    const std::string who = backend_ + " strategy " + s.info.name;
    SB_ASSERT(names.insert(s.info.name).second, who + " registered twice");
    SB_ASSERT(!s.info.doc.empty(), who + " without a doc");
    SB_ASSERT(!s.info.algorithm.empty(), who + " without an algorithm class");
    SB_ASSERT(static_cast<bool>(s.matches) == !s.needs.empty(),
              who + " with a shape but no needs text (or the reverse)");
    for (const ParamInfo& p : s.info.params)
      SB_ASSERT(p.min <= p.def && p.def <= p.max, who + ": default of " + p.name + " out of range");
  }
}

std::vector<StrategyInfo> HostRegistry::infos() const {
  std::vector<StrategyInfo> out;
  out.reserve(strategies_.size());
  for (const HostStrategy& s : strategies_) out.push_back(s.info);
  return out;
}

const HostStrategy* HostRegistry::find(const std::string& name) const {
  for (const HostStrategy& s : strategies_)
    if (s.info.name == name) return &s;
  return nullptr;
}

const HostStrategy& HostRegistry::of(const Variant& v) const {
  const HostStrategy* s = find(v.strategy);
  SB_ASSERT(s != nullptr, "unknown " + backend_ + " strategy " + v.strategy);
  return *s;
}

Status HostRegistry::check_fit(const Spec& spec, const Variant& v) const {
  const HostStrategy& s = of(v);
  if (!s.matches) return {};
  for (const Statement& st : spec.stmts)
    if (s.matches(spec, st)) return {};
  return make_error(v.loc, "variant '" + v.name + "' (strategy " + s.info.name + ") needs " +
                               s.needs + "; no statement of '" + spec.name + "' has that shape");
}

HostStrategy loops_strategy(const std::string& doc) {
  HostStrategy s;
  s.info = {"loops", doc, {}, "naive"};
  return s;
}

bool is_contraction(const Spec& spec, const Statement& st) {
  return match_contraction(spec, st).has_value();
}

std::string contraction_needs() {
  return std::string("a contraction statement, ") + kBatchedContractionShape;
}

bool is_gathered_gemm(const Spec& spec, const Statement& st) {
  return !is_contraction(spec, st) && match_gathered_gemm(spec, st).has_value();
}

std::string gathered_gemm_needs() {
  return std::string("a statement ") + kGatheredGemmShape +
         " that is not a contraction (contractions run as contractions)";
}

std::string attention_needs() {
  return std::string("an attention group of one element type (f32 or f64, no f16 or bf16 operand), ") +
         kAttentionShape;
}

// The default blocking was tuned on a 2-core AVX-512 EPYC (Zen 4, 1 MiB L2 per core) at n = 2048.
std::vector<ParamInfo> tile_params() {
  const Tiles d;
  return {
      {"tile", d.outer, 1, 1 << 16, false,
       "elements of a tile along the outer output dimension of an elementwise statement that "
       "reads across rows (a transpose: lower/tile_transposes.h)"},
      {"tile_inner", d.inner, 1, 1 << 16, false,
       "elements of such a tile along the innermost output dimension"},
  };
}

Tiles variant_tiles(const Variant& v, const StrategyInfo& info) {
  const Tiles d;
  return {param_or(v, info, "tile", d.outer), param_or(v, info, "tile_inner", d.inner)};
}

HostStrategy blocked_matmul_strategy(const std::string& others) {
  HostStrategy s;
  s.info = {"blocked_matmul",
            "contractions as a cache-blocked GEMM with packed panels and a register-blocked "
            "micro-kernel, one call per product of a batch (products too small for every thread "
            "side by side); other statements as " +
                others,
            {
                {"mc", 128, 1, 1 << 16, false, "rows of the A block packed per thread (L2)"},
                {"kc", 512, 1, 1 << 16, false, "depth of the packed panels"},
                {"nc", 4096, 1, 1 << 20, false, "columns of the packed B panel (L3)"},
            },
            "blocked_gemm"};
  s.needs = contraction_needs();
  s.matches = is_contraction;
  s.schedule.parallel = true;
  s.schedule.simd = true;
  s.schedule.reassociate = true;
  s.schedule.gemm = Gemm::Blocked;
  return s;
}

namespace {

// A strategy that lowers one more shape its own way (`needs`, `matches`) and everything else as
// blocked_matmul does.
HostStrategy beside_blocked_matmul(const std::string& others, const char* name, const char* doc,
                                   const char* algorithm, std::string needs,
                                   bool (*matches)(const Spec&, const Statement&)) {
  HostStrategy s = blocked_matmul_strategy(others);
  s.info.name = name;
  s.info.doc = doc;
  s.info.algorithm = algorithm;
  s.needs = std::move(needs);
  s.matches = matches;
  return s;
}

}  // namespace

HostStrategy im2col_strategy(const std::string& others) {
  HostStrategy s = beside_blocked_matmul(
      others, "im2col",
      "convolutions (weights times gathered columns) as an im2col gather into a K x N buffer, "
      "then one call of blocked_matmul's GEMM per batch element; contractions and other "
      "statements as blocked_matmul",
      "im2col_gemm", gathered_gemm_needs(), is_gathered_gemm);
  s.schedule.im2col = true;
  return s;
}

HostStrategy flash_attention_strategy(const std::string& others) {
  HostStrategy s = beside_blocked_matmul(
      others, "flash_attention",
      "attention (scores, row max, exponentials, row sum, weighted sum) as one pass over blocks "
      "of keys with an online softmax (FlashAttention), the score matrix never written, both "
      "products by blocked_matmul's packing and micro-kernel; contractions and other statements "
      "as blocked_matmul",
      "online_softmax_attention", attention_needs(), starts_attention);
  s.info.params.push_back({"bk", 256, 1, 1 << 14, false,
                           "keys per block (rounded up to whole micro-kernel tiles); the queries "
                           "go in strips of one tile's width"});
  s.info.params.push_back({"approx_math", 0, 0, 1, false,
                           "1: f32 exp as the inline polynomial form (within 4 ulp) instead of "
                           "libmvec, in the softmax and in the other statements"});
  s.schedule.approx_math = true;
  s.schedule.attention = true;
  return s;
}

}  // namespace sb::host
