// Orchestration: build every kernel x backend module, verify every variant against the reference,
// and benchmark the verified ones with Google Benchmark. Produces plain records (and the results
// document); printing them is console.h's job, writing them results.h's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/emitter.h"
#include "build/kernel_facts.h"
#include "build/occupancy.h"
#include "results/analysis.h"
#include "ir/ir.h"
#include "results/noise.h"
#include "run/probes.h"
#include "run/runtime.h"
#include "build/toolchain.h"

namespace sb {

inline constexpr const char* kSpecbenchVersion = "0.1.0";

// One progress line for the user (no trailing newline); callers print it to stderr.
using ProgressFn = std::function<void(const std::string&)>;

// One kernel on one backend: its generated file and the module built from it.
struct Target {
  const Spec* spec = nullptr;
  std::string backend;
  Runtime* runtime = nullptr;
  std::string source;  // <root>/generated/<kernel>/<backend>/<kernel>.<ext>
  BuildResult build;
  // The kernels the generated file launches, each with its block size (GeneratedFile::launches),
  // when the file is what its spec generates now; otherwise empty, and launches_unknown says why.
  std::vector<KernelLaunch> launches;
  std::string launches_unknown;
};

struct BuildSettings {
  std::string root;       // holds generated/
  std::string cache_dir;  // module cache
  ToolchainOptions tools;
  int jobs = 1;  // parallel compiles
};

// Builds the module of every spec for every backend in `backends` that the spec has variants
// for, in parallel. Progress lines look like "[3/10] nvcc conv1d 4.2s (ETA 8s)". A generated file
// that differs from what its spec generates now (hand edit or stale) is built as is, with a note.
// Build failures are recorded in Target::build (never thrown); the caller shows the errors.
std::vector<Target> build_targets(const std::vector<const Spec*>& specs,
                                  const std::vector<std::string>& backends,
                                  const BuildSettings& settings, const ProgressFn& progress);

// One kernel of a built GPU module (build.kernel_facts) on one architecture: ptxas's facts, the
// block size its launcher uses and the theoretical occupancy at that size (occupancy.h).
struct KernelFactRow {
  std::string kernel;
  std::string backend;
  std::string variant;   // the variant whose launcher launches it; "" when none does (a library's)
  std::string function;  // readable_kernel_name(facts.symbol)
  KernelFacts facts;
  int64_t block_threads = 0;  // 0: not known statically; block_unknown says why
  std::string block_unknown;
  // A launch adds dynamic shared memory, whose amount the sizes decide: the occupancy is then
  // computed with the static shared memory alone, an upper bound.
  bool dynamic_shared = false;
  std::optional<Occupancy> occupancy;  // nullopt: unknown, occupancy_unknown says why
  std::string occupancy_unknown;
};

// The rows of every target with kernel facts, in target order then ptxas's report order; a
// kernel launched only by variants narrowed away (--variant, --filter) is left out.
std::vector<KernelFactRow> kernel_fact_rows(const std::vector<Target>& targets);
// The rows as the results document's "kernel_facts" list (results/README.md).
nlohmann::json kernel_facts_json(const std::vector<KernelFactRow>& rows);

// "R=64,C=1024": the spec's size names with the point's values, in spec order.
std::string format_sizes(const Spec& spec, const SizePoint& sizes);

// ---------------------------------------------------------------------------------------------
// Verification

enum class Outcome { Pass, Fail, Skipped };
const char* outcome_name(Outcome o);  // "pass", "FAIL", "skipped"

// One check: a variant at one size point with one input set. Records that cover a whole variant
// (build failure, unavailable backend) have sizes and inputs "-".
struct VerifyRecord {
  std::string kernel;
  std::string backend;
  std::string variant;
  std::string sizes;   // "R=3,C=7"
  std::string inputs;  // "seed 1", "zeros", "large"
  Outcome outcome = Outcome::Pass;
  double max_abs_err = 0;  // over every Out tensor
  double max_rel_err = 0;
  std::string detail;  // Fail: what went wrong (describe_failure's text); Skipped: the reason
  // Set on one passing check per variant, for runtimes that count global-memory traffic (the
  // simulator): the first input set in the first schedule at the verify size that moves the most
  // bytes. spec_bytes is what the spec implies at those sizes (bytes_moved in metrics.h).
  std::optional<MemoryTraffic> traffic;
  int64_t spec_bytes = 0;
};

struct VerifyOptions {
  int seeds = 3;  // random input sets with seeds 1..seeds; Zeros and Large are always added
};

// The outputs verify compares, in spec order: each output's storage once, under the name the
// statement that writes it uses (the output itself or one of its views).
std::vector<int> out_tensors(const Spec& spec);

// The bytes of every tensor of `spec` at `sizes` (what the spec declares).
int64_t tensor_bytes(const Spec& spec, const SizePoint& sizes);
// The peak memory verify needs for one check at `sizes`: twice the declared tensor bytes (the
// host tensors and the runtime's copy) plus the reference's memos (reference.h:
// reference_memory_bytes; none for a spec whose outputs no statement reads).
int64_t verify_memory_estimate(const Spec& spec, const SizePoint& sizes);
// The memory verify may use: $SPECBENCH_VERIFY_MEMORY (bytes) when set, else MemAvailable of
// /proc/meminfo; nullopt when neither is known. A size whose estimate exceeds it is not run:
// its check fails with a message naming the spec, the sizes, the estimate and what is available.
std::optional<int64_t> verify_memory_available();


// Full (every element) comparison at each of the spec's verify sizes.
std::vector<VerifyRecord> verify(const std::vector<Target>& targets, const VerifyOptions& opt,
                                 const ProgressFn& progress);

// "kernel/backend/variant" of each variant with at least one failed check.
std::set<std::string> failed_variants(const std::vector<VerifyRecord>& records);

// ---------------------------------------------------------------------------------------------
// Benchmarks

enum class BenchStatus { Measured, Skipped, Failed };

// One kernel/backend/variant at one size point.
struct BenchRecord {
  std::string kernel;
  std::string backend;
  std::string variant;
  std::string sizes;  // "R=64,C=1024"
  BenchStatus status = BenchStatus::Measured;
  bool verified = false;      // the sampled pre-timing check passed
  double max_error = 0;       // of that check (absolute)
  std::string reason;         // Skipped/Failed: why
  double seconds = 0;         // per iteration; the median over repetitions when there are several
  double gbps = 0;            // bytes_moved / time, 1e9 bytes/s; 0 when the spec moves none
  double gflops = 0;          // flops / time, 1e9/s; 0 when the spec has none
  double bytes = 0;           // per call, from metrics.h (bytes_moved)
  double flops = 0;           // per call, from metrics.h (flops)
  std::string strategy;       // the variant's lowering strategy
  double cv = 0;              // coefficient of variation of the time over repetitions (0: one)
  std::string naive_variant;  // the first variant the spec lists for this backend
  Roofline roofline;          // the bound and its limit (analysis.h), from the run's probes
  std::optional<double> roofline_fraction;  // Measured: the bound's rate over its limit
  Spread spread;                            // of the repetitions (noise.h); n = 0 if not measured
  std::string suspect;  // Measured: why the rate cannot be right (suspect_reason); "" if plausible
};

struct BenchOptions {
  bool verify_sizes = false;  // benchmark at the spec's verify sizes instead of its bench sizes
  int repetitions = 5;        // enough for compare's test at alpha 0.05 (it needs 4 a side)
  double min_time = 0.05;  // seconds per repetition (Google Benchmark's --benchmark_min_time)
  int64_t sample = 1000;   // elements checked per Out tensor before timing
  uint64_t sample_seed = 12345;
  bool display = true;            // Google Benchmark's console reporter on stdout
  std::set<std::string> exclude;  // "kernel/backend/variant" already failed: recorded, not run
  std::map<std::string, std::string> context;  // extra context (see run_context)
  ProbeResults probes;  // the machine probes of this run (run_probes); ran = false: none
  // When set, called once after the last case is timed to probe the machine again; the limits
  // then come from merge_probe_runs(probes, end_probes()), and every timed entry is annotated
  // with them (entries passed to `checkpoint` carry the limits of the start probes).
  std::function<ProbeResults()> end_probes;
  // Cases ("kernel/backend/variant/R=64,C=1024") measured by an earlier, interrupted run: neither
  // checked, timed nor recorded.
  std::set<std::string> done;
  // Called for each timed case (after the session of its kernel and size) with its name and its
  // entries as the document will hold them (every repetition and aggregate, annotated), e.g. to
  // save them for a resume.
  std::function<void(const std::string& case_name, const nlohmann::json& entries)> checkpoint;
};

struct BenchReport {
  nlohmann::json doc;  // the results document (see results.h)
  std::vector<BenchRecord> records;
  ProbeResults probes;                 // opt.probes, merged with the end probes when taken
  MachineLimits limits;                // from the probes
  std::vector<SummaryRow> summary;     // summarize(records)
  std::vector<LanguageRow> languages;  // compare_languages(records)
  MachineLoad load;                    // while the cases were timed (noise.h)
  int64_t llc_bytes = 0;               // the last-level cache the suspect flags were judged by
};

// Before timing, each case runs once on Random inputs (seed 1) and is compared at a fixed sample
// of elements; a case that fails is recorded as Failed with the error and never timed. Cases of
// an unavailable backend are Skipped with its reason. Benchmarks are named
// "kernel/backend/variant/R=64,C=1024" and report counters "bytes" and "flops" as rates (when
// the spec implies any). The cases of one kernel at one size share a Google Benchmark session
// whose repetitions are randomly interleaved; the document keeps every repetition and the
// aggregates, in case order. Every case is put against the limit that
// bounds it (analysis.h) from opt.probes; the document's context carries "probes" and "limits", and
// its "summary" the summary rows. Returns an error only when Google Benchmark's output cannot be
// parsed.
Result<BenchReport> bench(const std::vector<Target>& targets, const BenchOptions& opt,
                          const ProgressFn& progress);

// The fastest measured variant for each kernel/backend/size (in first-seen order), followed by
// every Skipped and Failed record. Input of the summary table.
std::vector<BenchRecord> best_per_size(const std::vector<BenchRecord>& records);

// Context for results files: git_commit, git_modified ("true" when tracked files differ from
// that commit, "false", or "unknown"), cxx, nvcc, cpu_model, gpu, mojo, specbench_version,
// generator_hash (FNV-1a-64 over <root>/codegen's files, subfolders included).
std::map<std::string, std::string> run_context(const std::string& root,
                                               const ToolchainOptions& tools);

}  // namespace sb
