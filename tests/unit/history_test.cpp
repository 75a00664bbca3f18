// The Mann-Whitney U test, compare verdicts, and reading results documents back (history.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "results/history.h"
#include "results/history_format.h"
#include "results/stats.h"

namespace {

// Two-sided permutation p-value of U by enumerating every split of the pooled values: an
// oracle independent of the rank arithmetic and the U distribution recurrence.
double brute_force_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pool = a;
  pool.insert(pool.end(), b.begin(), b.end());
  const size_t n = pool.size(), n1 = a.size();
  auto u_of = [&](const std::vector<bool>& in_a) {
    double u = 0;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (in_a[i] && !in_a[j]) u += pool[i] > pool[j] ? 1 : pool[i] == pool[j] ? 0.5 : 0;
    return u;
  };
  std::vector<bool> observed(n, false);
  std::fill(observed.begin(), observed.begin() + n1, true);
  const double u_obs = u_of(observed), mu = static_cast<double>(n1 * (n - n1)) / 2;
  std::vector<bool> mask(n, false);
  std::fill(mask.end() - n1, mask.end(), true);
  double total = 0, extreme = 0;
  do {
    ++total;
    if (std::fabs(u_of(mask) - mu) >= std::fabs(u_obs - mu) - 1e-9) ++extreme;
  } while (std::next_permutation(mask.begin(), mask.end()));
  return extreme / total;
}

TEST(MannWhitney, ExactSmallSamples) {
  // Complete separation: the only arrangement as extreme, each side: p = 2 / C(n1 + n2, n1).
  auto r = sb::mann_whitney_u({1, 2, 3}, {4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 0);
  EXPECT_NEAR(r.p, 2.0 / 20, 1e-12);
  r = sb::mann_whitney_u({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_EQ(r.u, 25);
  EXPECT_NEAR(r.p, 2.0 / 252, 1e-12);
  // A textbook example (two samples of 5 and 4): U = 17, exact two-sided p = 14/126.
  r = sb::mann_whitney_u({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_EQ(r.u, 17);
  EXPECT_NEAR(r.p, 14.0 / 126, 1e-12);
}

TEST(MannWhitney, ExactAgreesWithEnumeration) {
  const std::vector<double> a{3.1, 0.4, 7.7, 2.2, 9.9, 5.0}, b{1.5, 6.6, 8.8, 0.1, 4.4, 2.9, 7.0};
  auto r = sb::mann_whitney_u(a, b);
  ASSERT_TRUE(r.exact);
  // For symmetric U distributions the two-tailed "as far from the mean" count equals
  // 2 min(P(U <= u), P(U >= u)).
  EXPECT_NEAR(r.p, brute_force_p(a, b), 1e-12);
}

TEST(MannWhitney, NormalApproximationKnownValue) {
  // Same textbook data: mu = 10, var = 5 * 4 * 10 / 12, z = (17 - 10 - 0.5) / sqrt(var):
  // p = erfc(z / sqrt 2) = 0.111347 (no ties, so no tie correction).
  auto r = sb::mann_whitney_u({19, 22, 16, 29, 24}, {20, 11, 17, 12}, /*exact_allowed=*/false);
  EXPECT_FALSE(r.exact);
  EXPECT_NEAR(r.p, 0.1113469, 1e-6);
  // Ten against ten, completely separated: z = (50 - 0.5) / sqrt(175), p = 1.8267e-4.
  std::vector<double> lo, hi;
  for (int i = 1; i <= 10; ++i) {
    lo.push_back(i);
    hi.push_back(10 + i);
  }
  r = sb::mann_whitney_u(lo, hi, false);
  EXPECT_NEAR(r.p, 1.8267e-4, 1e-7);
}

TEST(MannWhitney, TiesUseTheCorrectedNormalApproximation) {
  const std::vector<double> a{1, 2, 2, 3, 3, 3, 5, 8}, b{2, 3, 4, 4, 5, 6, 6, 9};
  auto r = sb::mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  double u = 0;  // U by counting pairs, ties as 1/2
  for (double x : a)
    for (double y : b) u += x > y ? 1 : x == y ? 0.5 : 0;
  EXPECT_EQ(r.u, u);
  // The approximation is close to the permutation distribution of the tied data.
  EXPECT_NEAR(r.p, brute_force_p(a, b), 0.02);
  // Everything tied: no evidence at all.
  EXPECT_EQ(sb::mann_whitney_u({2, 2, 2}, {2, 2, 2, 2}).p, 1.0);
}

TEST(MannWhitney, SmallestReachablePValue) {
  EXPECT_NEAR(sb::min_p_value(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(sb::min_p_value(4, 4), 2.0 / 70, 1e-12);
  EXPECT_NEAR(sb::min_p_value(1, 1), 1.0, 1e-12);
  EXPECT_EQ(sb::repetitions_needed(0.05), 4);   // 2/20 = 0.1 is not below 0.05; 2/70 is
  EXPECT_EQ(sb::repetitions_needed(0.002), 7);  // 2/C(12,6) = 0.0022 is not; 2/C(14,7) = 0.00058
  EXPECT_EQ(sb::median({3, 1, 2}), 2);
  EXPECT_EQ(sb::median({4, 1, 2, 3}), 2.5);
}

// A stored run with one benchmark per (name, samples) pair, for verdict tests.
sb::StoredRun run_of(const std::vector<std::pair<std::string, std::vector<double>>>& cases) {
  sb::StoredRun run;
  for (const auto& [variant, samples] : cases) {
    sb::StoredBenchmark b;
    b.record.kernel = "k";
    b.record.backend = "cpu";
    b.record.variant = variant;
    b.record.sizes = "N=8";
    b.record.status = sb::BenchStatus::Measured;
    b.record.seconds = sb::median(samples);
    b.samples = samples;
    b.name = "k/cpu/" + variant + "/N=8";
    b.key = sb::match_key("k", "cpu", variant, "N=8");
    run.benchmarks.push_back(b);
  }
  return run;
}

// A failed case of kernel k on cpu at N=8, as a run's problems list holds it.
sb::BenchRecord failed_case(const std::string& variant, const std::string& reason) {
  sb::BenchRecord f;
  f.kernel = "k";
  f.backend = "cpu";
  f.variant = variant;
  f.sizes = "N=8";
  f.status = sb::BenchStatus::Failed;
  f.reason = reason;
  return f;
}

const sb::CompareRow& row(const sb::Comparison& c, const std::string& variant) {
  for (const auto& r : c.rows)
    if (r.variant == variant) return r;
  ADD_FAILURE() << "no row for " << variant;
  static sb::CompareRow none;
  return none;
}

TEST(Compare, VerdictNeedsSignificanceAndEffect) {
  std::vector<double> base, later, slightly, noisy_base, noisy_new;
  for (int i = 0; i < 10; ++i) {
    base.push_back(100 + i);
    later.push_back(110 + i);     // every sample slower: p tiny, medians +9.6%
    slightly.push_back(103 + i);  // overlapping: medians +2.9%
  }
  noisy_base = {1, 5, 9, 13, 17};
  noisy_new = {2, 6, 10, 14, 40};  // medians +11%, but no evidence
  auto b = run_of({{"slow", base}, {"small", base}, {"noisy", noisy_base}, {"gone", base}});
  auto n = run_of({{"slow", later}, {"small", slightly}, {"noisy", noisy_new}, {"added", base}});
  sb::Comparison c = sb::compare_runs(b, n, {});
  EXPECT_EQ(row(c, "slow").verdict, sb::Verdict::Slower);
  EXPECT_LT(*row(c, "slow").p, 0.05);
  EXPECT_EQ(row(c, "small").verdict, sb::Verdict::Same);
  EXPECT_EQ(row(c, "noisy").verdict, sb::Verdict::Same);
  EXPECT_GT(*row(c, "noisy").p, 0.05);
  EXPECT_EQ(row(c, "gone").verdict, sb::Verdict::Missing);
  EXPECT_EQ(row(c, "added").verdict, sb::Verdict::New);
  EXPECT_EQ(sb::compare_exit_code(c), 1);
  // The spread-out pair is marked noisy, with a warning; the others are not.
  EXPECT_TRUE(row(c, "noisy").noisy);
  EXPECT_NE(row(c, "noisy").noise.find("base noisy: median known to"), std::string::npos)
      << row(c, "noisy").noise;
  EXPECT_FALSE(row(c, "slow").noisy);
  EXPECT_FALSE(row(c, "small").noisy);
  EXPECT_EQ(c.noisy, 1);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("1 benchmark(s) are noisy"), std::string::npos) << c.warnings[0];

  // The same data the other way round is faster; a 10% minimum effect hides a 9.6% change.
  sb::Comparison back = sb::compare_runs(n, b, {});
  EXPECT_EQ(row(back, "slow").verdict, sb::Verdict::Faster);
  EXPECT_EQ(sb::compare_exit_code(back), 0);
  sb::CompareOptions strict;
  strict.min_effect = 0.10;
  EXPECT_EQ(row(sb::compare_runs(b, n, strict), "slow").verdict, sb::Verdict::Same);
}

TEST(Compare, WarnsWhenRepetitionsCannotReachSignificance) {
  auto b = run_of({{"v", {1, 1.01, 0.99}}});
  auto n = run_of({{"v", {2, 2.01, 1.99}}});  // twice as slow, but three repetitions each
  sb::Comparison c = sb::compare_runs(b, n, {});
  EXPECT_EQ(row(c, "v").verdict, sb::Verdict::Same);
  EXPECT_FALSE(row(c, "v").testable);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("too few repetitions"), std::string::npos);
}

TEST(Compare, FailedCaseAndFailedVerificationFail) {
  auto b = run_of({{"v", {1, 2, 3, 4, 5}}});
  auto n = run_of({{"v", {1, 2, 3, 4, 5}}});
  n.problems.push_back(failed_case("w", "max abs error 2"));
  sb::Comparison c = sb::compare_runs(b, n, {});
  EXPECT_EQ(row(c, "w").verdict, sb::Verdict::Failed);
  EXPECT_EQ(c.failed, 1);
  EXPECT_EQ(sb::compare_exit_code(c), 1);

  auto n2 = run_of({{"v", {1, 2, 3, 4, 5}}});
  n2.verification = {{"checks", 4}, {"passed", 3}, {"failed", 1}, {"skipped", 0}};
  c = sb::compare_runs(b, n2, {});
  EXPECT_TRUE(c.verification_failed);
  EXPECT_EQ(sb::compare_exit_code(c), 1);
}

TEST(ResultsReader, ReadsRepetitionsOfTheFixture) {
  auto r = sb::load_results(std::string(SB_TESTS_DIR) + "/history/data/base.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().schema_version, 1);
  ASSERT_EQ(r.value().benchmarks.size(), 3u);
  const auto& b = r.value().benchmarks[0];
  EXPECT_EQ(b.name, "saxpy/cpu/loops/N=1024");
  EXPECT_EQ(b.samples.size(), 10u);
  EXPECT_NEAR(b.record.seconds, sb::median(b.samples), 1e-15);
  EXPECT_GT(b.record.gbps, 0);
}

TEST(ResultsReader, BadFilesAreErrorsNamingTheFile) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "truncated or corrupt"},
      {"{\"schema_version\": 1, \"context\": {", "truncated or corrupt"},
      {"[1, 2]", "not an object"},
      {"{\"schema_version\": 2, \"context\": {}, \"benchmarks\": []}", "schema_version 2"},
      {"{\"schema_version\": \"1\", \"context\": {}, \"benchmarks\": []}", "not an integer"},
      {"{\"schema_version\": 1, \"context\": {}}", "'benchmarks' is missing"},
      {"{\"schema_version\": 1, \"context\": {}, \"benchmarks\": [7]}", "benchmarks[0]"},
      {"{\"schema_version\": 1, \"context\": {}, \"benchmarks\": [{\"name\": \"k/cpu/v/N=1\", "
       "\"kernel\": \"k\", \"backend\": \"cpu\", \"variant\": \"v\", \"real_time\": null}]}",
       "'real_time' is missing"},
      {"{\"schema_version\": 1, \"context\": {}, \"benchmarks\": [], \"failed\": [{\"kernel\": "
       "1}]}",
       "failed[0]: 'kernel' is not a string"},
      {"{\"hello\": 1}", "not a specbench results file"},
      {"{\"schema_version\": 1, \"context\": {}, \"benchmarks\": [], \"kernel_facts\": {}}",
       "'kernel_facts' is not an array"},
      {"{\"schema_version\": 1, \"context\": {}, \"benchmarks\": [], \"kernel_facts\": "
       "[{\"kernel\": \"k\", \"backend\": \"cuda\", \"function\": 3, \"arch\": \"sm_80\"}]}",
       "kernel_facts[0]: 'function' is not a string"},
  };
  for (const auto& c : cases) {
    auto r = sb::parse_results(c.text, "dir/run.json");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().loc.file, "dir/run.json");
    EXPECT_NE(r.error().message.find(c.message), std::string::npos)
        << c.text << " -> " << r.error().message;
  }
}

}  // namespace

namespace {

TEST(ReportData, TrendMarksTheRegressionOfTheBestVariant) {
  std::vector<sb::StoredRun> runs;
  // Given newest first: report_data orders runs by date.
  for (const char* f : {"slower.json", "same.json", "base.json"}) {
    auto r = sb::load_results(std::string(SB_TESTS_DIR) + "/history/data/" + f);
    ASSERT_TRUE(r.ok()) << r.error().message;
    runs.push_back(std::move(r.value()));
  }
  nlohmann::json d = sb::report_data(runs, {});
  ASSERT_EQ(d["runs"].size(), 3u);
  EXPECT_LT(d["runs"][0]["date"].get<std::string>(), d["runs"][2]["date"].get<std::string>());
  ASSERT_EQ(d["comparisons"].size(), 2u);
  EXPECT_FALSE(d["comparisons"][0]["regressed"].get<bool>());
  EXPECT_TRUE(d["comparisons"][1]["regressed"].get<bool>());
  const auto& saxpy = d["kernels"]["saxpy"];
  ASSERT_EQ(saxpy["trend"].size(), 1u);
  const auto& points = saxpy["trend"][0]["points"];
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0]["verdict"], "");
  EXPECT_EQ(points[1]["verdict"], "same");
  EXPECT_EQ(points[2]["verdict"], "slower");
  EXPECT_GT(points[2]["seconds"].get<double>(), points[0]["seconds"].get<double>());
  // The latest run's points and verification status.
  ASSERT_EQ(saxpy["points"].size(), 1u);
  EXPECT_EQ(saxpy["points"][0]["unit"], "GB/s");
  EXPECT_EQ(saxpy["variants"][0]["status"], "verified");
}

}  // namespace

namespace {

TEST(ReportData, KernelFactsGoBesideTheKernel) {
  const char* text = R"({
    "schema_version": 1, "context": {},
    "benchmarks": [],
    "skipped": [{"kernel": "k", "backend": "cuda", "variant": "v", "sizes": {"N": 4},
                 "reason": "no GPU"}],
    "kernel_facts": [
      {"kernel": "k", "backend": "cuda", "variant": "v", "function": "sb_v_s0",
       "symbol": "_Z7sb_v_s0Pf", "arch": "sm_90", "registers": 32, "barriers": 0,
       "shared_bytes": 0, "stack_bytes": 8, "spill_store_bytes": 8, "spill_load_bytes": 4,
       "block_threads": 256, "dynamic_shared": true, "occupancy": 1.0,
       "occupancy_is_upper_bound": true, "limited_by": "warps+registers"},
      {"kernel": "k2", "backend": "vendor_cuda", "variant": null, "function": "cub::K<…>",
       "symbol": "_ZN3cub1KIiEEvv", "arch": "sm_80", "registers": 40, "block_threads": null,
       "occupancy": null, "occupancy_unknown": "block size unknown"}]})";
  auto r = sb::parse_results(text, "facts.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  nlohmann::json d = sb::report_data({r.value()}, {});
  const auto& f = d["kernels"]["k"]["gpu_facts"];
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0]["function"], "sb_v_s0");
  EXPECT_EQ(f[0]["arch"], "sm_90");
  EXPECT_EQ(f[0]["spill_store_bytes"], 8);
  EXPECT_EQ(f[0]["block_threads"], 256);
  EXPECT_EQ(f[0]["occupancy_is_upper_bound"], true);
  const auto& g = d["kernels"]["k2"]["gpu_facts"];
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(g[0]["occupancy"].is_null());
  EXPECT_TRUE(g[0]["variant"].is_null());
  EXPECT_TRUE(g[0]["stack_bytes"].is_null());  // absent stays null
}

TEST(ResultsReader, OddTypesInOptionalFieldsNeverThrow) {
  // Valid enough to read; every optional field has a surprising type.
  const char* text = R"({
    "schema_version": 1,
    "context": {"date": 5, "host_name": ["x"], "limits": {"cpu": {"bandwidth_gbps": "fast"}},
                "cpu_model": null},
    "nightly": {"state": 7},
    "benchmarks": [
      {"name": "k/cpu/v/N=4/real_time", "run_name": "k/cpu/v/N=4/real_time",
       "kernel": "k", "backend": "cpu", "variant": "v", "run_type": "iteration",
       "real_time": 10, "time_unit": "ns"},
      {"name": "k/cpu/w/N=4/real_time", "kernel": "k", "backend": "cpu", "variant": "w",
       "error_occurred": true, "error_message": 42}
    ]})";
  auto r = sb::parse_results(text, "odd.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r.value().partial);
  ASSERT_EQ(r.value().benchmarks.size(), 2u);
  EXPECT_EQ(r.value().benchmarks[1].record.status, sb::BenchStatus::Failed);
  EXPECT_EQ(r.value().benchmarks[1].record.reason, "error");
  nlohmann::json d = sb::report_data({r.value()}, {});
  EXPECT_EQ(d["runs"][0]["host"], "");
  EXPECT_TRUE(d["limits"]["cpu"]["bandwidth_gbps"].is_null());
  EXPECT_EQ(d["limits"]["cpu"]["unsteady"], false);
  EXPECT_EQ(d["limits"]["cpu"]["bandwidth_drift"], 0.0);
  EXPECT_EQ(d["kernels"]["k"]["variants"][1]["status"], "failed");
}

TEST(ResultsReader, TheReportDataSaysWhichLimitsMovedDuringTheRun) {
  // limits_json's drift and verdict pass to the report, which warns; odd types read as steady.
  const char* text = R"({
    "schema_version": 1,
    "context": {"limits": {
      "cpu": {"bandwidth_gbps": 89.6, "bandwidth_drift": 0.42, "compute_drift": 0.01,
              "unsteady": true},
      "gpu": {"bandwidth_gbps": 3000, "bandwidth_drift": "a lot", "unsteady": "yes"}}},
    "benchmarks": []})";
  auto r = sb::parse_results(text, "drift.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  nlohmann::json d = sb::report_data({r.value()}, {});
  EXPECT_EQ(d["limits"]["cpu"]["unsteady"], true);
  EXPECT_DOUBLE_EQ(d["limits"]["cpu"]["bandwidth_drift"].get<double>(), 0.42);
  EXPECT_DOUBLE_EQ(d["limits"]["cpu"]["compute_drift"].get<double>(), 0.01);
  EXPECT_EQ(d["limits"]["gpu"]["unsteady"], false);
  EXPECT_EQ(d["limits"]["gpu"]["bandwidth_drift"], 0.0);
}

}  // namespace

namespace {

// Every truncation and a few hundred single-byte corruptions of a good file: each is read back
// or rejected with an error naming the file; what is read can be compared and reported.
TEST(ResultsReader, DamagedFilesAreReadOrRejectedNeverThrown) {
  std::ifstream in(std::string(SB_TESTS_DIR) + "/history/data/base.json", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string good = ss.str();
  auto base = sb::parse_results(good, "base.json");
  ASSERT_TRUE(base.ok());
  std::vector<std::string> damaged;
  for (size_t n = 0; n < good.size(); n += 61) damaged.push_back(good.substr(0, n));
  std::mt19937 rng(7);
  const std::string bytes = "{}[]\",:0123456789.-eE \ntrufalsn\xff";
  for (int i = 0; i < 400; ++i) {
    std::string s = good;
    s[rng() % s.size()] = bytes[rng() % bytes.size()];
    damaged.push_back(s);
  }
  int rejected = 0;
  for (const auto& text : damaged) {
    sb::Result<sb::StoredRun> r = sb::parse_results(text, "damaged.json");
    if (!r.ok()) {
      EXPECT_EQ(r.error().loc.file, "damaged.json");
      EXPECT_FALSE(r.error().message.empty());
      ++rejected;
      continue;
    }
    sb::Comparison c = sb::compare_runs(base.value(), r.value(), {});
    EXPECT_FALSE(sb::comparison_json(c).empty());
    EXPECT_TRUE(sb::report_data({base.value(), r.value()}, {}).contains("kernels"));
  }
  // Every truncation but the whole file is rejected; most corruptions are too.
  EXPECT_GE(rejected, static_cast<int>(good.size() / 61));
}

}  // namespace

namespace {

TEST(ReportData, TrendJudgesTheBestTimeEvenWhenTheBestVariantChanges) {
  std::vector<double> fast, slow;
  for (int i = 0; i < 10; ++i) {
    fast.push_back(1 + 0.01 * i);
    slow.push_back(5 + 0.01 * i);
  }
  sb::StoredRun before = run_of({{"a", fast}, {"b", slow}});
  before.context = {{"date", "2026-01-01T00:00:00Z"}};
  sb::StoredRun after = run_of({{"a", {9, 9.1, 9.2, 9.3, 9.4, 9.5, 9.6, 9.7, 9.8, 9.9}},
                                {"b", slow}});  // a lost its edge: b is now the best
  after.context = {{"date", "2026-01-02T00:00:00Z"}};
  nlohmann::json d = sb::report_data({after, before}, {});
  const auto& points = d["kernels"]["k"]["trend"][0]["points"];
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0]["variant"], "a");
  EXPECT_EQ(points[1]["variant"], "b");
  EXPECT_EQ(points[1]["verdict"], "slower");
  // The latest comparison's changes: a slower, b same (left out).
  const auto& changes = d["kernels"]["k"]["changes"];
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0]["variant"], "a");
  EXPECT_EQ(changes[0]["verdict"], "slower");
}

}  // namespace

namespace {

TEST(CompareFormat, MarkdownRowsSurviveNotesWithPipesAndNewlines) {
  auto b = run_of({{"v", {1, 2, 3, 4, 5}}});
  auto n = run_of({{"v", {1, 2, 3, 4, 5}}});
  n.problems.push_back(failed_case("w|x", "line one | a\nline two"));
  std::string md = sb::format_comparison_markdown(sb::compare_runs(b, n, {}));
  size_t row = md.find("| k/cpu/w\\|x/N=8 |");
  ASSERT_NE(row, std::string::npos) << md;
  std::string line = md.substr(row, md.find('\n', row) - row);
  EXPECT_NE(line.find("**FAILED**"), std::string::npos) << line;
  EXPECT_NE(line.find("line one \\| a line two"), std::string::npos) << line;
  // The terminal table shows the first line of the note only.
  std::string text = sb::format_comparison(sb::compare_runs(b, n, {}));
  EXPECT_NE(text.find("line one | a"), std::string::npos);
  EXPECT_EQ(text.find("line two"), std::string::npos);
}

}  // namespace

namespace {

// A version-1 results document with one case at N elements: `reps` repetitions of `seconds`,
// 8 bytes per element moved, a memory bound at 10 GB/s, on a machine whose caches are listed.
std::string one_case_doc(double n, const std::vector<double>& reps, int64_t llc) {
  nlohmann::json doc = {{"schema_version", 1},
                        {"context",
                         {{"date", "2026-12-01T00:00:00Z"},
                          {"caches", {{{"level", 3}, {"size", llc}, {"type", "Unified"}}}}}},
                        {"benchmarks", nlohmann::json::array()}};
  const std::string name = "k/cpu/v/N=" + std::to_string(static_cast<long>(n));
  for (double t : reps)
    doc["benchmarks"].push_back({{"name", name},
                                 {"run_name", name},
                                 {"run_type", "iteration"},
                                 {"real_time", t},
                                 {"time_unit", "s"},
                                 {"kernel", "k"},
                                 {"backend", "cpu"},
                                 {"variant", "v"},
                                 {"sizes", {{"N", n}}},
                                 {"bytes_per_call", 8 * n},
                                 {"flops_per_call", n},
                                 {"bound", "memory"},
                                 {"roofline_limit", 10.0}});
  return doc.dump();
}

TEST(ResultsReader, JudgesNoiseAndSuspectRatesOfAnyFile) {
  // 64 MiB moved in 1 ms: 67 GB/s against a 10 GB/s limit, beyond a 32 MiB cache: suspect.
  const double n = 8.0 * (1 << 20);
  auto r = sb::parse_results(one_case_doc(n, {1e-3, 1e-3, 1.001e-3, 0.999e-3, 1e-3}, 32 << 20),
                             "big.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const sb::BenchRecord& big = r.value().benchmarks[0].record;
  EXPECT_NE(big.suspect.find("the 10 GB/s limit with a 64 MiB working set, 2x the 32 MiB"),
            std::string::npos)
      << big.suspect;
  EXPECT_EQ(big.spread.n, 5);
  EXPECT_FALSE(big.spread.noisy);
  // The same rate inside a 1 GiB cache is not suspect (above a main-memory limit is expected).
  auto in_cache = sb::parse_results(one_case_doc(n, {1e-3, 1e-3, 1e-3}, 1 << 30), "c.json");
  ASSERT_TRUE(in_cache.ok());
  EXPECT_EQ(in_cache.value().benchmarks[0].record.suspect, "");

  // The summary, report data and the noisy flag of a spread-out case reach every consumer.
  auto noisy = sb::parse_results(one_case_doc(n, {1e-3, 3e-3, 1e-3, 3.1e-3, 1.01e-3}, 32 << 20),
                                 "noisy.json");
  ASSERT_TRUE(noisy.ok());
  EXPECT_TRUE(noisy.value().benchmarks[0].record.spread.noisy);
  auto summary = sb::summarize(noisy.value().records());
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_TRUE(summary[0].noisy);
  EXPECT_NE(summary[0].noise.find("two clusters"), std::string::npos) << summary[0].noise;
  EXPECT_NE(summary[0].suspect, "");
  nlohmann::json d = sb::report_data({r.value(), noisy.value()}, {});
  const auto& point = d["kernels"]["k"]["points"][0];
  EXPECT_EQ(point["noisy"], true);
  EXPECT_TRUE(point["suspect"].is_string());
  EXPECT_EQ(point["median_ci"].size(), 2u);
  EXPECT_EQ(d["kernels"]["k"]["summary"][0]["noisy"], true);
  EXPECT_TRUE(d["kernels"]["k"]["summary"][0]["suspect"].is_string());
  // The comparison of the quiet run with the noisy one is marked noisy, in the JSON too.
  sb::Comparison c = sb::compare_runs(r.value(), noisy.value(), {});
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_TRUE(c.rows[0].noisy);
  EXPECT_NE(c.rows[0].noise.find("new noisy:"), std::string::npos) << c.rows[0].noise;
  EXPECT_EQ(sb::comparison_json(c)["benchmarks"][0]["noisy"], true);
  EXPECT_EQ(sb::comparison_json(c)["counts"]["noisy"], 1);
  EXPECT_NE(sb::format_comparison(c).find("(noisy)"), std::string::npos);
  EXPECT_NE(sb::format_comparison_markdown(c).find("(noisy) |"), std::string::npos);
}

std::string nested_context(int depth) {
  // The context object is one level; `depth - 2` arrays inside it, below the document's level.
  return R"({"schema_version": 1, "context": {"deep": )" + std::string(depth - 2, '[') +
         std::string(depth - 2, ']') + R"(}, "benchmarks": []})";
}

// Issue 19: nesting past kMaxResultsDepth is refused before parsing (a 150,000-deep context
// crashed a recursive copy), with the line and column where the limit is crossed; brackets in
// strings do not count.
TEST(ResultsReader, NestingPastTheLimitIsAUserError) {
  auto ok = sb::parse_results(nested_context(sb::kMaxResultsDepth), "ok.json");
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  auto deep = sb::parse_results(nested_context(sb::kMaxResultsDepth + 1), "deep.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().loc.file, "deep.json");
  EXPECT_EQ(deep.error().loc.line, 1);
  EXPECT_GT(deep.error().loc.col, 0);
  EXPECT_NE(deep.error().message.find("deeper than 64 levels"), std::string::npos);
  auto huge = sb::parse_results(nested_context(150000), "huge.json");
  EXPECT_FALSE(huge.ok());
  std::string in_string = R"({"schema_version": 1, "context": {"s": ")" + std::string(1000, '[') +
                          R"(\"["}, "benchmarks": []})";
  auto s = sb::parse_results(in_string, "strings.json");
  EXPECT_TRUE(s.ok()) << s.error().message;
}

// Issue 19: a results file is read only when it is a regular file within kMaxResultsBytes.
TEST(ResultsReader, DevicesFifosAndFoldersAreRefused) {
  for (const char* p : {"/dev/zero", "/dev/null"}) {
    auto r = sb::load_results(p);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_EQ(r.error().loc.file, p);
    EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos)
        << r.error().message;
  }
  std::string fifo = ::testing::TempDir() + "specbench_history_fifo_" + std::to_string(getpid());
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = sb::load_results(fifo);  // would block forever without a writer
  ::unlink(fifo.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("FIFO"), std::string::npos) << r.error().message;
}

// Issue 19: text quoted from a results file in an error shows control bytes escaped.
TEST(ResultsReader, QuotedTextInErrorsIsEscaped) {
  std::string text = R"({"schema_version": 1, "context": {}, "benchmarks": [
      {"name": "k/cpu/v/N=4", "kernel": "k", "backend": "cpu", "variant": "v",
       "real_time": 1, "time_unit": "\u001b[2J\u0007"}]})";
  auto r = sb::parse_results(text, "ctl.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.find('\x1b'), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("\\x1b[2J\\x07"), std::string::npos) << r.error().message;
}

}  // namespace
