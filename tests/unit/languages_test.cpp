// Unit tests of the C++-against-other-languages comparison (analysis.h).
#include <gtest/gtest.h>

#include "results/analysis.h"
#include "cli/console.h"
#include "run/runner.h"

namespace sb {
namespace {

BenchRecord rec(const std::string& backend, const std::string& variant, const std::string& strategy,
                double seconds, double cv) {
  BenchRecord r;
  r.kernel = "k";
  r.sizes = "N=8";
  r.backend = backend;
  r.variant = variant;
  r.strategy = strategy;
  r.status = BenchStatus::Measured;
  r.seconds = seconds;
  r.cv = cv;
  return r;
}

TEST(LanguagesTest, BestAndMatchedRowsWithRatios) {
  std::vector<BenchRecord> rs = {
      rec("cpu", "naive", "loops", 4.0, 0.01), rec("cpu", "fast", "omp_simd", 1.0, 0.01),
      rec("mojo", "loops", "loops", 2.0, 0.01), rec("mojo", "vp", "vectorize_parallel", 2.0, 0.01)};
  auto rows = compare_languages(rs);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].kind, "best");
  EXPECT_EQ(rows[0].cpp_variant, "cpu/fast");
  EXPECT_DOUBLE_EQ(rows[0].ratio, 0.5);  // Mojo's best is twice as slow
  EXPECT_FALSE(rows[0].within_noise);
  EXPECT_EQ(rows[1].kind, "matched");
  EXPECT_EQ(rows[1].cpp_variant, "cpu/naive");
  EXPECT_EQ(rows[1].other_variant, "mojo/loops");
  EXPECT_DOUBLE_EQ(rows[1].ratio, 2.0);
  EXPECT_EQ(rows[2].other_variant, "mojo/vp");
}

TEST(LanguagesTest, BlockedMatmulIsMatchedWithMojosBlockedMatmul) {
  std::vector<BenchRecord> rs = {rec("cpu", "bm", "blocked_matmul", 1.0, 0.01),
                                 rec("mojo", "vp", "vectorize_parallel", 8.0, 0.01),
                                 rec("mojo", "mbm", "blocked_matmul", 1.25, 0.01)};
  auto rows = compare_languages(rs);
  ASSERT_EQ(rows.size(), 2u);  // best, and the one matched pair
  EXPECT_EQ(rows[1].kind, "matched");
  EXPECT_EQ(rows[1].cpp_variant, "cpu/bm");
  EXPECT_EQ(rows[1].other_variant, "mojo/mbm");
  EXPECT_DOUBLE_EQ(rows[1].ratio, 0.8);
}

TEST(LanguagesTest, NoisySideMarksTheRowAndTheTables) {
  // The loaded-machine pattern: mlir's repetitions alternate between two clusters.
  BenchRecord cpp = rec("cpu", "a", "omp_simd", 2e-3, 0.01);
  cpp.spread = assess_spread({2e-3, 2e-3, 2.01e-3, 1.99e-3, 2e-3});
  BenchRecord other = rec("mlir", "b", "openmp", 40e-6, 1.2);
  other.spread = assess_spread({37e-6, 23e-3, 38e-6, 22e-3, 37e-6});
  auto rows = compare_languages({cpp, other});
  ASSERT_FALSE(rows.empty());
  EXPECT_TRUE(rows[0].noisy);
  EXPECT_EQ(rows[0].noise.rfind("mlir: ", 0), 0u) << rows[0].noise;
  EXPECT_EQ(languages_json(rows)[0]["noisy"], true);
  BenchReport rep;
  rep.records = {cpp, other};
  rep.summary = summarize(rep.records);
  rep.languages = rows;
  std::string text = format_bench_summary(rep);
  EXPECT_NE(text.find("x (noisy)"), std::string::npos) << text;  // the language table
  EXPECT_NE(text.find("noisy: 1 of 2 measured cases"), std::string::npos) << text;
  EXPECT_NE(text.find("k/mlir/b"), std::string::npos) << text;
  EXPECT_NE(format_bench_summary_markdown(rep, "r.json").find("## Noisy cases"), std::string::npos);
}

TEST(LanguagesTest, SuspectRateIsFlaggedInTheSummary) {
  BenchRecord r = rec("cpu", "a", "loops", 1e-3, 0.01);
  r.bytes = 64.0 * (1 << 20);
  r.gbps = r.bytes / r.seconds * 1e-9;  // 67 GB/s
  r.roofline = {Bound::Memory, 0.1, 10.0};
  r.roofline_fraction = r.gbps / 10.0;
  r.suspect = suspect_of(r.roofline, r.gbps, 0, r.bytes, r.roofline_fraction, 32 << 20);
  ASSERT_NE(r.suspect, "");
  BenchReport rep;
  rep.records = {r};
  rep.summary = summarize(rep.records);
  ASSERT_EQ(rep.summary.size(), 1u);
  EXPECT_EQ(rep.summary[0].suspect, r.suspect);
  EXPECT_TRUE(summary_json(rep.summary)[0]["suspect"].is_string());
  std::string text = format_bench_summary(rep);
  EXPECT_NE(text.find("SUSPECT: 1 figure(s) that cannot be right"), std::string::npos) << text;
  EXPECT_NE(text.find("67.1 GB/s is 671% of the 10 GB/s limit"), std::string::npos) << text;
  std::string md = format_bench_summary_markdown(rep, "r.json");
  EXPECT_NE(md.find("## Suspect figures"), std::string::npos) << md;
  EXPECT_NE(md.find("| SUSPECT |"), std::string::npos) << md;  // the row's flags cell
}

TEST(LanguagesTest, SmallDifferenceIsWithinNoise) {
  std::vector<BenchRecord> rs = {rec("cpu", "a", "loops", 1.00, 0.05),
                                 rec("mojo", "b", "loops", 1.03, 0.01)};
  auto rows = compare_languages(rs);
  ASSERT_FALSE(rows.empty());
  EXPECT_TRUE(rows[0].within_noise);  // 0.03 s apart, noise 0.05 s
}

TEST(LanguagesTest, NoRowsWithoutBothLanguages) {
  std::vector<BenchRecord> rs = {rec("cpu", "a", "loops", 1.0, 0.0)};
  EXPECT_TRUE(compare_languages(rs).empty());
}

}  // namespace
}  // namespace sb
