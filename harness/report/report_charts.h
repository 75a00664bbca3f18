// The chart data of the published report, beyond report_data()'s tables: the index's
// cross-kernel roofline, heat map and language ratios with confidence intervals, and per kernel
// the working-set throughput with repetition bands, speed-ups, distributions and the history of
// every variant at every size. Computed here, drawn by harness/report/make_report.py. Shape in
// results/README.md ("report data").
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/history.h"

namespace sb {

// The ratio of medians a / b with a percentile bootstrap interval (resampling each side with
// replacement, `resamples` times, from a fixed seed so that a report is reproducible).
struct RatioInterval {
  double ratio = 0;  // median(a) / median(b)
  double lo = 0;     // the interval at `level` (0.95: the 2.5% and 97.5% percentiles)
  double hi = 0;
};
// a and b non-empty with positive values (SB_ASSERT otherwise).
RatioInterval ratio_of_medians(const std::vector<double>& a, const std::vector<double>& b,
                               double level = 0.95, int resamples = 2000, uint64_t seed = 1);

// The q-quantile (0..1) of a non-empty sample, by linear interpolation between order statistics.
double quantile(std::vector<double> v, double q);

// Adds to `data` (report_data's document, runs sorted oldest first as in data["runs"]):
//   data["caches"]: the latest run's data and unified caches [{level, type, bytes}];
//   data["overview"]: {"best": per kernel and backend the fastest variant at its largest size,
//                      "languages": per kernel and pair (mojo/cpu, mlir/cpu, mojo_gpu/cuda) the
//                      ratio of medians C++ (or CUDA) / other with a 95% bootstrap interval};
//   per kernel k: every point gets working_set_bytes, samples, rate_lo/rate_hi (the rate at the
//   repetitions' 75% and 25% times), vs_naive and vs_cpp; k["distribution"] (the repetitions of
//   every variant at the largest size); k["history"] (per backend/variant and size, every run's
//   median with its quartiles and the verdict against the previous run of that same case).
void add_chart_data(nlohmann::json& data, const std::vector<const StoredRun*>& runs,
                    const CompareOptions& opt);

}  // namespace sb
