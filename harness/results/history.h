// Results documents read back (results.h writes them; results/README.md is the schema), compared
// run against run, and gathered into the data of the published report. Plain data in and out:
// formatting is history_format.h's job (and harness/report/make_report.py's for the site).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/diag.h"
#include "run/runner.h"

namespace sb {

// The oldest and newest schema versions this specbench reads. Version 0 is the format before
// "schema_version" existed (aggregates only, no per-call bytes and flops).
inline constexpr int kOldestReadableSchema = 0;

// One benchmark of a stored run: its repetitions and the record the summary is built from.
struct StoredBenchmark {
  std::string name;             // "kernel/backend/variant/R=64,C=1024" (sizes in spec order)
  std::string key;              // match_key(): the same case in another run
  std::vector<double> samples;  // seconds per iteration, one per repetition
  BenchRecord record;           // status Measured, or Failed when Google Benchmark reported an
                                // error; seconds is the median
};

struct StoredRun {
  std::string path;
  int schema_version = 0;
  nlohmann::json context;  // as stored
  std::vector<StoredBenchmark> benchmarks;
  std::vector<BenchRecord> problems;  // "skipped" and "failed" entries (status Skipped/Failed)
  nlohmann::json verification;        // {"checks", "passed", "failed", "skipped"}; null if absent
  nlohmann::json kernel_facts;        // the GPU kernels' facts (runner.h: kernel_facts_json), as
                                      // stored: an array of objects; null if absent
  bool partial = false;               // an interrupted nightly run's checkpoint

  std::string date() const;  // context.date, "" when absent
  // Every record: the measured benchmarks, then the problems (input of summarize()).
  std::vector<BenchRecord> records() const;
};

// The same case in any run: "kernel/backend/variant/" and the sizes sorted by name.
// "N=1024,C=7" -> "C=7,N=1024": the same sizes whatever the order of the names.
std::string sorted_sizes(const std::string& sizes);

std::string match_key(const std::string& kernel, const std::string& backend,
                      const std::string& variant, const std::string& sizes);

// The limits of every results file specbench reads (README "Results files"): at most
// kMaxResultsBytes bytes (the largest committed run, results/vm, is about 8 MB), and arrays and
// objects nested at most kMaxResultsDepth deep (the committed runs nest 6 levels). Past either
// the file is refused, a user error, before any JSON value is built.
inline constexpr size_t kMaxResultsBytes = size_t{128} << 20;  // 128 MiB
inline constexpr int kMaxResultsDepth = 64;

// The JSON text of a results file (or of a nightly checkpoint) parsed within those limits; errors
// name `path` (with line and column for too deep a nesting). read_results_json reads the file
// with read_regular_file (safe_io.h): FIFOs, devices and folders are refused, never read.
Result<nlohmann::json> parse_results_json(const std::string& text, const std::string& path);
Result<nlohmann::json> read_results_json(const std::string& path);

// Reads and checks a results document. Every problem is a user error naming `path`: not JSON
// (truncated, corrupt), nested too deep, larger than kMaxResultsBytes, not a regular file, not
// an object, an unsupported schema_version (newer than kResultsSchemaVersion, or not a number),
// a missing or ill-typed field. Text quoted from the file in a message has its control bytes
// escaped.
Result<StoredRun> parse_results(const std::string& text, const std::string& path);
Result<StoredRun> load_results(const std::string& path);
// The same checks on a document already parsed (by parse_results_json).
Result<StoredRun> results_from_json(const nlohmann::json& doc, const std::string& path);

// ---------------------------------------------------------------------------------------------
// Comparing two runs

enum class Verdict { Faster, Slower, Same, New, Missing, Failed };
const char* verdict_name(Verdict v);  // "faster", "SLOWER", "same", "new", "missing", "FAILED"

struct CompareOptions {
  double alpha = 0.05;       // significance level of the Mann-Whitney U test
  double min_effect = 0.05;  // smallest change in median time that counts (0.05: 5%)
};

struct CompareRow {
  std::string name;  // as in the new run (the base run for Missing)
  std::string kernel, backend, variant, sizes;
  Verdict verdict = Verdict::Same;
  double base_seconds = 0;  // medians; 0 when absent
  double new_seconds = 0;
  double ratio = 0;  // new / base median time (> 1: slower); 0 when either is absent
  int base_n = 0;    // repetitions
  int new_n = 0;
  std::optional<double> p;  // of the test, when both sides have samples
  bool testable = false;    // the test can reach p < alpha with these repetition counts
  bool noisy = false;       // either side's repetitions are noisy (noise.h): a weak verdict
  std::string noise;        // "base noisy: why; new noisy: why"
  std::string note;         // why a case failed, or that the test was impossible
};

struct Comparison {
  std::string base_path;
  std::string new_path;
  CompareOptions options;
  std::vector<CompareRow> rows;       // the new run's order, then the missing ones
  std::vector<std::string> warnings;  // e.g. too few repetitions
  int slower = 0, faster = 0, same = 0, added = 0, missing = 0, failed = 0;
  int noisy = 0;  // rows compared on both sides with noisy repetitions on either
  std::optional<double> geomean_ratio;  // over rows compared on both sides
  bool verification_failed = false;     // the new run's verification reports failures
};

// The verdict on two samples of times (each non-empty; SB_ASSERT otherwise): Slower when the
// Mann-Whitney U test gives p < alpha and median(now) / median(base) >= 1 + min_effect, Faster
// when p < alpha and the ratio <= 1 / (1 + min_effect), else Same.
struct SampleVerdict {
  Verdict verdict = Verdict::Same;
  double ratio = 0;  // median(now) / median(base)
  double p = 1;
  bool testable = false;  // the sample sizes allow p < alpha at all
};
SampleVerdict judge_samples(const std::vector<double>& base, const std::vector<double>& now,
                            const CompareOptions& opt);

// Verdict per benchmark (judge_samples on the repetitions). Faster/Slower need both p < alpha
// and a median change of at least
// min_effect: slower when new/base >= 1 + min_effect, faster when new/base <= 1/(1 + min_effect).
// A case of the new run that failed (verification, build, Google Benchmark error) is Failed.
Comparison compare_runs(const StoredRun& base, const StoredRun& now, const CompareOptions& opt);

// 1 when something is slower, failed, or the new run's verification failed; else 0.
int compare_exit_code(const Comparison& c);

// The repetitions per side needed for the test to be able to reach p < alpha.
int repetitions_needed(double alpha);

nlohmann::json comparison_json(const Comparison& c);

// ---------------------------------------------------------------------------------------------
// Report data

// Everything the report site shows, computed here so that make_report.py only draws and formats:
// runs (sorted by date, oldest first), per kernel the latest run's points, summary and language
// rows, verification status, problems, and the trend of each backend's best variant at its
// largest size across runs with the verdict of its time against the previous run's best (which
// may be another variant), and the latest comparison's changes. Shape documented in
// results/README.md ("report data").
nlohmann::json report_data(const std::vector<StoredRun>& runs, const CompareOptions& opt);

}  // namespace sb
