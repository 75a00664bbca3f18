// The vendor_cuda strategy registry (strategy.h): the records in order, lookup, and the fit
// check every strategy shares.
#include <set>

#include "backends/vendor_cuda/strategies/strategy.h"

namespace sb::vendor_cuda {

const std::vector<VendorCudaStrategy>& strategy_registry() {
  static const std::vector<VendorCudaStrategy> kRegistry = [] {
    std::vector<VendorCudaStrategy> out = {cublas_strategy(), cub_reduce_strategy(),
                                           cub_scan_strategy()};
    std::set<std::string> names;
    for (const VendorCudaStrategy& s : out) {
      const std::string who = "vendor_cuda strategy " + s.info.name;
      SB_ASSERT(names.insert(s.info.name).second, who + " registered twice");
      SB_ASSERT(!s.info.doc.empty(), who + " without a doc");
      SB_ASSERT(!s.info.algorithm.empty(), who + " without an algorithm class");
      SB_ASSERT(s.shape != nullptr && static_cast<bool>(s.matches), who + " without a fit check");
      SB_ASSERT(static_cast<bool>(s.lower), who + " without a lowering");
    }
    return out;
  }();
  return kRegistry;
}

std::vector<StrategyInfo> strategy_infos() {
  std::vector<StrategyInfo> out;
  for (const VendorCudaStrategy& s : strategy_registry()) out.push_back(s.info);
  return out;
}

const VendorCudaStrategy* find_strategy(const std::string& name) {
  for (const VendorCudaStrategy& s : strategy_registry())
    if (s.info.name == name) return &s;
  return nullptr;
}

const VendorCudaStrategy& strategy_of(const Variant& v) {
  const VendorCudaStrategy* s = find_strategy(v.strategy);
  SB_ASSERT(s != nullptr, "unknown vendor_cuda strategy " + v.strategy);
  return *s;
}

Status check_fit(const VendorCudaStrategy& s, const Spec& spec, const Variant& v) {
  for (const Statement& st : spec.stmts) {
    if (s.matches(spec, st)) continue;
    return make_error(v.loc, "variant '" + v.name + "' (strategy " + s.info.name +
                                 ") needs every statement to have the shape " + s.shape +
                                 "; statement '" + source_text(st, spec) + "' (line " +
                                 std::to_string(st.loc.line) + ") does not");
  }
  return {};
}

}  // namespace sb::vendor_cuda
