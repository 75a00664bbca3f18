// What the measurements mean: the limit that bounds each kernel (a roofline decision from the
// spec's arithmetic intensity and the machine probes), the fraction of it achieved, and the
// summary comparisons (x vs naive, x vs vendor). Plain numbers in, plain numbers out; printing is
// console.h's job.
//
// Roofline: a kernel that does `flops` floating-point operations and moves `bytes` bytes (both
// from metrics.h) has arithmetic intensity I = flops / bytes. The device's balance is
// B = compute limit / bandwidth limit (flop per byte). I < B: memory-bound, and the fraction is
// GB/s over the bandwidth probe; I >= B: compute-bound, GFLOP/s over the compute probe. (Both are
// the achieved rate over min(compute, I x bandwidth), the roofline.)
//
// Limits per device: bandwidth = the best of the triad, non-temporal triad and non-temporal copy
// probes; compute = the higher of the sgemm (vendor) and fma (peak loop) probes, i.e. the best
// rate the machine demonstrably reaches. A backend whose record (harness/backends) says it runs on the GPU is put
// against the gpu probes, every other backend against the cpu probes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend_record.h"
#include "run/probes.h"

namespace sb {

struct BenchRecord;  // runner.h

// The limits of one device, from its probes. A rate of 0 means not measured.
struct DeviceLimits {
  double bandwidth_gbps = 0;
  double compute_gflops = 0;
  std::string bandwidth_probe;  // "triad", "triad_nt", "copy_nt" or "" when not measured
  std::string compute_probe;    // "sgemm" or "fma", "" when not measured
  std::string missing;          // why a limit is not measured, "" when both are
  // The read probe's rate (loads only; cpu): not a limit, shown beside it, since a kernel that
  // mostly reads reaches this rather than the triad's. 0 when not measured.
  double read_gbps = 0;
  // Each limit probe's rate at the start and at the end of the run (ProbeResult::runs); one entry
  // when it ran once, none when not measured.
  std::vector<double> bandwidth_runs;
  std::vector<double> compute_runs;

  // Machine balance in flops per byte; 0 when either limit is unknown.
  double balance() const;
  // How far a limit probe moved during the run: (highest - lowest) / highest of its runs; 0 when
  // it ran once.
  double bandwidth_drift() const;
  double compute_drift() const;
  // Either limit moved by more than kProbeDriftLimit: the machine changed during the run, so every
  // fraction of a limit in it is uncertain by about as much.
  bool unsteady() const;
};

// The largest start-to-end change of a limit probe that still counts as a steady machine.
constexpr double kProbeDriftLimit = 0.10;

struct MachineLimits {
  DeviceLimits cpu;
  DeviceLimits gpu;
};

MachineLimits limits_from_probes(const ProbeResults& probes);

// From the backend records (backends/backend_record.h); false for a name with no record.
bool is_gpu_backend(const std::string& backend);     // its record's device is the gpu
bool is_vendor_backend(const std::string& backend);  // its record is a vendor library
const DeviceLimits& limits_for(const MachineLimits& limits, const std::string& backend);

enum class Bound { Unknown, Memory, Compute };
const char* bound_name(Bound b);  // "memory", "compute", "unknown"

struct Roofline {
  Bound bound = Bound::Unknown;
  double intensity = 0;  // flops per byte; 0 when the kernel moves no bytes
  double limit = 0;      // the bounding probe's rate (GB/s or GFLOP/s); 0 when not measured
};

// The bound of a kernel moving `bytes` and doing `flops` per call. Moves bytes but does no flops:
// memory. Does flops but moves no bytes: compute. Both: decided against the balance, Unknown when
// the balance is (no probes).
Roofline choose_bound(double bytes, double flops, const DeviceLimits& limits);

// The achieved rate of the bound over its limit; nullopt when the bound or the limit is unknown.
std::optional<double> roofline_fraction(const Roofline& r, double gbps, double gflops);

// The rate that matters for a bound: GB/s for Memory, GFLOP/s for Compute; for Unknown, GB/s when
// the kernel moves bytes, else GFLOP/s. `unit` receives "GB/s" or "GFLOP/s".
double bound_rate(Bound b, double gbps, double gflops, double bytes, std::string* unit);

// Why a measured rate cannot be right (noise.h: a memory-bound rate above 110% of what the
// bandwidth limit allows a working set of `bytes` with a last-level cache of `llc_bytes`,
// suspect_reason;
// a compute-bound one above 110% of the compute limit at any size, suspect_compute_reason); ""
// when plausible or when the bound, the limit or (for memory) the cache size is unknown.
std::string suspect_of(const Roofline& r, double gbps, double gflops, double bytes,
                       std::optional<double> fraction, int64_t llc_bytes);

// One row of the summary: the fastest verified variant of a kernel on a backend at one size.
struct SummaryRow {
  std::string kernel;
  std::string sizes;
  std::string backend;
  std::string variant;
  double seconds = 0;
  double gbps = 0;
  double gflops = 0;
  Roofline roofline;
  double rate = 0;   // bound_rate()
  std::string unit;  // its unit
  std::optional<double> fraction;
  // Naive: the backend's first-listed variant in the spec. vs_naive = naive time / this time
  // (so > 1 is faster than naive); nullopt when naive was not measured at this size.
  std::string naive_variant;
  std::optional<double> vs_naive;
  // Vendor: the fastest measured variant of any vendor_* backend on the same kind of device
  // (cpu or gpu) for the same kernel and size. vs_vendor = vendor time / this time; nullopt when
  // there is none, and for vendor backends themselves.
  std::string vendor;  // "backend/variant"
  std::optional<double> vs_vendor;
  bool noisy = false;   // the best variant's repetitions are noisy (noise.h)
  std::string noise;    // why (describe_noise)
  std::string suspect;  // the best variant's rate cannot be right (suspect_of); "" if plausible
};

// Summary rows in first-seen kernel/backend/size order, from every record of a benchmark run
// (Skipped and Failed records are ignored here).
std::vector<SummaryRow> summarize(const std::vector<BenchRecord>& records);

// One row of the language comparison: the same kernel at the same size in a backend with a
// baseline in its record (`mojo`, `mlir`) and in that baseline (`cpu`, C++), from one benchmark
// run; one backend after another in the records' order.
//   kind "best":    the fastest verified variant of each backend;
//   kind "matched": the same schedule in both languages: one row per pair of strategies with the
//                   same algorithm class (StrategyInfo::algorithm; matched_strategies), today
//                   loops with loops, omp_simd with mojo's vectorize_parallel and with
//                   mlir's openmp, blocked_matmul with mojo's blocked_matmul;
//   kind "gpu":     the same as "best", for a backend whose device is the gpu (its baseline
//                   `cuda`); no matched rows there.
// ratio = C++ time / other time, so > 1 means the other language is faster. within_noise: the
// difference is no larger than the larger of the two runs' spreads (cv x time), nvbench's rule.
struct LanguageRow {
  std::string kernel;
  std::string sizes;
  std::string kind;
  std::string language;  // the other backend: "mojo"
  std::string cpp_variant;
  std::string other_variant;
  double cpp_seconds = 0;
  double other_seconds = 0;
  double ratio = 0;
  bool within_noise = false;
  bool noisy = false;  // either side's repetitions are noisy (noise.h)
  std::string noise;   // "C++: why; mojo: why"
};

// Pairs (baseline's strategy, other's strategy) that are the same schedule in two backends: the
// strategies of `other`'s emitter whose algorithm class (StrategyInfo::algorithm) is that of a
// strategy of `baseline`'s emitter, in the baseline's registry order, then the other's. Empty for a
// backend without an emitter.
std::vector<std::pair<std::string, std::string>> matched_strategies(const std::string& baseline,
                                                                    const std::string& other);

// Comparison rows for every kernel and size measured on `cpu` and on a comparison backend
// (mojo, mlir), in first-seen order: "best" first, then "matched" pairs, then "gpu".
std::vector<LanguageRow> compare_languages(const std::vector<BenchRecord>& records);
nlohmann::json languages_json(const std::vector<LanguageRow>& rows);

// The limits as stored in the results context: {"cpu": {"bandwidth_gbps", "compute_gflops",
// "bandwidth_probe", "compute_probe", "balance_flops_per_byte", "missing"}, "gpu": {...}}, with
// null for what is not measured.
nlohmann::json limits_json(const MachineLimits& limits);
// The summary as stored in the results document (same fields as SummaryRow, null for nullopt).
nlohmann::json summary_json(const std::vector<SummaryRow>& rows);

}  // namespace sb
