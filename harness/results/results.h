// The results document of `specbench bench` / `specbench run`, and writing it.
//
// It is Google Benchmark's JSON output, extended; results/README.md documents the schema and its
// versions. Version kResultsSchemaVersion:
//   {
//     "schema_version": 1,
//     "context": { Google Benchmark's (date, host_name, num_cpus, caches, ...) plus git_commit,
//                  git_modified, cxx, nvcc, cpu_model, gpu, specbench_version and the rest of
//                  run_context (runner.h); "probes": the machine probes
//                  of the run (probes_json in probes.h); "limits": the limits derived from
//                  them per device (limits_json in analysis.h) },
//     "benchmarks": [ each Google Benchmark entry: every repetition (run_type "iteration",
//                     repetition_index) and, with several, the aggregates (run_type "aggregate",
//                     aggregate_name mean/median/stddev/cv); fields name, run_name, run_type,
//                     real_time, cpu_time, time_unit, iterations, counters "bytes" and "flops"
//                     in units per second, error_occurred, ...) plus
//                     "kernel", "backend", "variant", "sizes" {"N": 65536, ...}, "strategy",
//                     "naive_variant" (the backend's first variant in the spec),
//                     "bytes_per_call" and "flops_per_call" (metrics.h),
//                     "verified" (true: only verified cases are timed), "max_error" (absolute, of
//                     the sampled pre-timing check), "gbps" and "gflops" (1e9 per second; for the
//                     "cv" aggregate they hold the coefficient of variation instead; null when the
//                     spec moves no bytes / does no flops),
//                     "bound" ("memory" | "compute"; null when unknown: no probes),
//                     "arithmetic_intensity" (flops per byte of the spec at these sizes; null when
//                     it moves no bytes), "roofline_limit" (the bounding probe's rate, GB/s or
//                     GFLOP/s; null when not measured), "roofline_fraction" (gbps or gflops,
//                     whichever is the bound, over roofline_limit; for "stddev" the standard
//                     deviation of that fraction, for "cv" its coefficient of variation; null
//                     when the bound or limit is unknown) ],
//     "skipped": [ {"kernel", "backend", "variant", "sizes", "reason", "verified": false} ]
//                 the backend cannot run here (e.g. no GPU): not a failure
//     "failed":  [ {"kernel", "backend", "variant", "sizes", "reason", "verified": false,
//                   "max_error"} ]
//                 build failures, modules that do not load, failed verification: never timed
//     "summary": [ the summary table's rows (summary_json in analysis.h): the fastest variant
//                  per kernel/backend/size with "bound", "rate", "unit", "roofline_fraction",
//                  "naive_variant", "vs_naive", "vendor", "vs_vendor" ]
//   }
// `specbench bench` and `run` also write the summary as Markdown beside the JSON file
// (markdown_path).
#pragma once

#include <cstdint>
#include <ctime>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/analysis.h"
#include "support/diag.h"
#include "results/noise.h"

namespace sb {

using SizeValues = std::vector<std::pair<std::string, int64_t>>;  // spec order

// The version of the results document written by make_results_document.
inline constexpr int kResultsSchemaVersion = 1;

// A timed case: `name` is the name it was registered with in Google Benchmark.
struct ResultCase {
  std::string name;
  std::string kernel;
  std::string backend;
  std::string variant;
  SizeValues sizes;
  bool verified = true;
  double max_error = 0;
  Roofline roofline;  // the bound of this case and its limit (analysis.h)
  std::string strategy;
  std::string naive_variant;
  double bytes = 0;  // per call
  double flops = 0;  // per call
};

// A case that was not timed.
struct ResultProblem {
  std::string kernel;
  std::string backend;
  std::string variant;
  SizeValues sizes;
  std::string reason;
  double max_error = 0;
};

// Whether a Google Benchmark JSON entry belongs to the benchmark registered as `name` (its
// run_name is `name` or `name` followed by "/..." such as "/real_time" or "/manual_time").
bool entry_is_of(const nlohmann::json& entry, const std::string& name);

// Sets an entry's "bound", "arithmetic_intensity", "roofline_limit" and "roofline_fraction" from
// `r` and the entry's "gbps" and "gflops" (make_results_document does this for every case).
void annotate_roofline(nlohmann::json& entry, const Roofline& r);

// One case's entries (its repetitions and aggregates, as annotate_roofline left them): sets
// "noise" (spread_json of the repetitions' real times, noise.h) and "suspect" (suspect_of in
// analysis.h; null when plausible; never for cuda-family backends, whose cache is not the host's)
// on the entry that stands for the case, its median aggregate or else its only repetition.
// Returns the spread; entries with an error are left alone.
Spread annotate_trust(nlohmann::json& case_entries, int64_t llc_bytes);

// Builds the document from Google Benchmark's JSON text (may be empty when nothing was timed:
// then "benchmarks" is empty and the context holds date and host_name only besides `context`).
// Entries that match no case are kept unchanged. Error when the text is not valid JSON.
Result<nlohmann::json> make_results_document(const std::string& gbench_json,
                                             const std::vector<ResultCase>& cases,
                                             const std::vector<ResultProblem>& skipped,
                                             const std::vector<ResultProblem>& failed,
                                             const std::map<std::string, std::string>& context);

// <root>/results/<hostname>/<UTC yyyymmddThhmmssZ>.json for time `when`.
std::string default_results_path(const std::string& root, std::time_t when);
std::string utc_stamp(std::time_t when);  // "20250101T120000Z"
std::string host_name();  // $SPECBENCH_HOST when valid, else gethostname(), "unknown" on failure
// Why $SPECBENCH_HOST is not a valid results folder name; "" when unset or valid.
std::string host_name_override_error();
// The summary file beside a results file: "x.json" -> "x.md"; other names get ".md" appended.
std::string markdown_path(const std::string& results_path);

// Writes `doc` (indented, newline-terminated) atomically: a temporary file in the same folder
// (<path>.tmp.<pid>), flushed with fsync, then rename, so a reader sees the old file or the whole
// new one. Creates parent folders. Errors name the path and say why (strerror of errno).
Status write_results(const std::string& path, const nlohmann::json& doc);

// Where the results of a run went when the file asked for could not be written.
struct ResultsWrite {
  std::string path;                // the file written; "" when every try failed
  bool fallback = false;           // `path` is a fallback, not the file asked for
  std::vector<Error> errors;       // every failed try, in order (the first: the file asked for)
};
// Writes `doc` to `path`, and when that fails, so that no measurement is lost, to
// <dir>/specbench-<file name of path> for dir in $TMPDIR (else /tmp), then the current folder
// (a file already there is not replaced: "-<pid>" is added to the name). The caller prints the
// errors and, when every try failed, the document itself on stdout.
ResultsWrite write_results_with_fallback(const std::string& path, const nlohmann::json& doc);

// Removes temporaries of earlier writers in `dir` (<name>.tmp.<pid>, as write_results makes them)
// whose process is gone: a writer killed between write and rename leaves one. Returns how many.
int remove_stale_temporaries(const std::string& dir);

}  // namespace sb
