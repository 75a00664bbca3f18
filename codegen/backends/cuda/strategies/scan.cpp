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
  s.place = [](const Spec& spec, size_t k, const Statement& st) {
    GpuStep g = generic_step(k);
    std::string why;
    if (match_scan(spec, st, &g.scan, &why)) g.kind = GpuKernel::Scan;
    return g;
  };
  out.push_back(std::move(s));
}

}  // namespace sb::cuda
