// scan: prefix reductions in three phases.
#include "backends/cuda/strategies/strategy.h"

namespace sb::cuda {

void add_scan_strategies(std::vector<CudaStrategy>& out) {
  CudaStrategy s;
  s.info = {"scan",
            "prefix reductions in three phases: per-block totals, their scan in one block, and "
            "a block scan of each chunk from its carry",
            {block_size_param()},
            "three_phase_scan"};
  s.needs = "a prefix reduction y[i] = sum(j in 0..i + 1: x[j]) (or max, min)";
  s.matches = [](const Spec& spec, const Statement& st, std::string* why) {
    ScanMatch m;
    return match_scan(spec, st, &m, why);
  };
  s.schedule = [](Lowering& L, size_t k, const Statement& st) {
    ScanMatch m;
    std::string why;
    if (match_scan(L.spec(), st, &m, &why)) {
      L.scan(k, st, m);
    } else {
      L.generic(k, st, true);
    }
  };
  out.push_back(std::move(s));
}

}  // namespace sb::cuda
