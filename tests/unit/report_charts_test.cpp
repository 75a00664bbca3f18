// The report's chart data (report_charts.h) and the CSV export (export.h).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "results/export.h"
#include "results/history.h"
#include "report/report_charts.h"

namespace {

using json = nlohmann::json;

// A results document with the given cases: kernel, backend, variant, N, samples (seconds).
struct Case {
  std::string kernel, backend, variant;
  int n;
  std::vector<double> samples;
};

sb::StoredRun run_of(const std::string& date, const std::vector<Case>& cases,
                     const std::string& path = "r.json") {
  json doc = {{"schema_version", 1},
              {"context",
               {{"date", date},
                {"host_name", "h"},
                {"caches", json::array({{{"level", 1}, {"type", "Data"}, {"size", 32768}},
                                        {{"level", 1}, {"type", "Instruction"}, {"size", 32768}},
                                        {{"level", 2}, {"type", "Unified"}, {"size", 1048576}}})},
                {"limits", {{"cpu", {{"bandwidth_gbps", 40.0}, {"compute_gflops", 200.0}}}}}}},
              {"benchmarks", json::array()}};
  for (const Case& c : cases) {
    std::string name = c.kernel + "/" + c.backend + "/" + c.variant + "/N=" + std::to_string(c.n);
    for (size_t i = 0; i < c.samples.size(); ++i)
      doc["benchmarks"].push_back({{"name", name + "/real_time"},
                                   {"run_name", name + "/real_time"},
                                   {"run_type", "iteration"},
                                   {"kernel", c.kernel},
                                   {"backend", c.backend},
                                   {"variant", c.variant},
                                   {"strategy", c.variant},
                                   {"naive_variant", "loops"},
                                   {"bytes_per_call", 12.0 * c.n},
                                   {"flops_per_call", 2.0 * c.n},
                                   {"bound", "memory"},
                                   {"time_unit", "s"},
                                   {"real_time", c.samples[i]}});
  }
  auto r = sb::parse_results(doc.dump(), path);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.value();
}

std::vector<double> times(double t, int n = 6) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(t * (1 + 0.01 * (i % 3)));
  return v;
}

TEST(ReportCharts, QuantileInterpolatesBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(sb::quantile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(sb::quantile({4, 1, 3, 2}, 1), 4);
  EXPECT_DOUBLE_EQ(sb::quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(sb::quantile({7}, 0.25), 7);
}

TEST(ReportCharts, RatioOfMediansHasAnIntervalAroundIt) {
  std::vector<double> b = times(1.0, 10), a = times(2.0, 10);
  sb::RatioInterval r = sb::ratio_of_medians(a, b);
  EXPECT_NEAR(r.ratio, 2.0, 1e-12);
  EXPECT_LE(r.lo, r.ratio);
  EXPECT_GE(r.hi, r.ratio);
  EXPECT_GT(r.lo, 1.9);  // tight samples: a tight interval
  EXPECT_LT(r.hi, 2.1);
  // Reproducible: the same seed gives the same interval.
  sb::RatioInterval again = sb::ratio_of_medians(a, b);
  EXPECT_EQ(r.lo, again.lo);
  EXPECT_EQ(r.hi, again.hi);
  // A noisy side widens it.
  std::vector<double> noisy = {1, 3, 1, 3, 1, 3, 1, 3};
  sb::RatioInterval wide = sb::ratio_of_medians(noisy, b);
  EXPECT_GT(wide.hi / wide.lo, 2.0);
}

TEST(ReportCharts, PointsOverviewDistributionAndHistory) {
  sb::StoredRun old_run = run_of("2026-01-01T00:00:00+00:00",
                                 {{"k", "cpu", "loops", 1024, times(1e-3)},
                                  {"k", "cpu", "omp", 1024, times(5e-4)}},
                                 "results/old.json");
  sb::StoredRun new_run = run_of("2026-01-02T00:00:00+00:00",
                                 {{"k", "cpu", "loops", 1024, times(2e-3)},  // 2x slower
                                  {"k", "cpu", "omp", 1024, times(5e-4)},
                                  {"k", "cpu", "loops", 65536, times(6e-2)},
                                  {"k", "cpu", "omp", 65536, times(3e-2)},
                                  {"k", "mojo", "loops", 65536, times(1.5e-2)}},
                                 "results/new.json");
  json d = sb::report_data({new_run, old_run}, {});
  ASSERT_EQ(d["caches"].size(), 2u);  // the instruction cache is left out
  EXPECT_EQ(d["caches"][1]["bytes"], 1048576.0);
  const json& k = d["kernels"]["k"];
  bool saw = false;
  for (const auto& p : k["points"]) {
    if (p["backend"] == "cpu" && p["variant"] == "omp" && p["sizes"] == "N=65536") {
      saw = true;
      EXPECT_EQ(p["working_set_bytes"], 12.0 * 65536);
      EXPECT_NEAR(p["vs_naive"].get<double>(), 2.0, 0.05);
      EXPECT_NEAR(p["vs_cpp"].get<double>(), 1.0, 1e-12);  // it is the cpu backend's best
      EXPECT_EQ(p["samples"].size(), 6u);
      EXPECT_LE(p["rate_lo"].get<double>(), p["rate"].get<double>());
      EXPECT_GE(p["rate_hi"].get<double>(), p["rate"].get<double>());
    }
    if (p["backend"] == "mojo") {
      EXPECT_NEAR(p["vs_cpp"].get<double>(), 2.0, 0.05);
    }
  }
  EXPECT_TRUE(saw);
  // Overview: the best of each backend at its largest size; mojo against C++ with an interval.
  ASSERT_EQ(d["overview"]["best"].size(), 2u);
  EXPECT_EQ(d["overview"]["best"][0]["variant"], "omp");
  EXPECT_EQ(d["overview"]["best"][0]["sizes"], "N=65536");
  ASSERT_EQ(d["overview"]["languages"].size(), 1u);
  const json& lang = d["overview"]["languages"][0];
  EXPECT_EQ(lang["language"], "mojo");
  EXPECT_EQ(lang["against"], "cpu");
  EXPECT_NEAR(lang["ratio"].get<double>(), 2.0, 0.05);
  EXPECT_LE(lang["lo"].get<double>(), lang["ratio"].get<double>());
  EXPECT_GE(lang["hi"].get<double>(), lang["ratio"].get<double>());
  // Distribution at the largest size: the three variants measured there.
  EXPECT_EQ(k["distribution"]["sizes"], "N=65536");
  EXPECT_EQ(k["distribution"]["rows"].size(), 3u);
  // History: per variant, per size; cpu/loops at N=1024 regressed in the second run.
  bool regression = false;
  for (const auto& h : k["history"]) {
    if (h["backend"] != "cpu" || h["variant"] != "loops") continue;
    ASSERT_EQ(h["series"].size(), 2u);
    EXPECT_EQ(h["series"][0]["sizes"], "N=1024");  // smallest working set first
    const json& pts = h["series"][0]["points"];
    ASSERT_EQ(pts.size(), 2u);
    EXPECT_EQ(pts[0]["run"], 0);
    EXPECT_EQ(pts[1]["verdict"], "slower");
    regression = true;
  }
  EXPECT_TRUE(regression);
}

TEST(Export, OneCsvRowPerRepetitionWithQuotedFields) {
  sb::StoredRun r = run_of("2026-01-02T00:00:00+00:00",
                           {{"k", "cpu", "loops", 1024, times(1e-3, 5)},
                            {"k", "cpu", "a,\"b\"", 8, times(2e-3, 3)}},
                           "results/vm/20260102T000000Z.json");
  std::string csv = sb::results_csv({r});
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 5u + 3u);
  EXPECT_EQ(lines[0].rfind("run,date,host,git_commit,kernel,backend,variant", 0), 0u);
  EXPECT_NE(lines[1].find("20260102T000000Z,2026-01-02T00:00:00+00:00,h,"), std::string::npos);
  EXPECT_NE(lines[6].find(",\"a,\"\"b\"\"\","), std::string::npos) << lines[6];
  EXPECT_NE(lines[3].find(",2,5,"), std::string::npos) << lines[3];  // repetition 2 of 5
  EXPECT_EQ(sb::csv_field("plain"), "plain");
  EXPECT_EQ(sb::csv_field("x\ny"), "\"x\ny\"");
}

}  // namespace
