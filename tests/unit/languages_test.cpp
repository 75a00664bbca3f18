// Unit tests of the C++-against-other-languages comparison (analysis.h).
#include <gtest/gtest.h>

#include "analysis.h"
#include "runner.h"

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
