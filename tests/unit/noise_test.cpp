#include "results/noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace sb {
namespace {

namespace fs = std::filesystem;

TEST(MedianCi, RankFromTheBinomialTails) {
  double cov = 0;
  // 5 repetitions: no interval reaches 95%; the widest (min..max) covers 1 - 2/32.
  EXPECT_EQ(median_ci_rank(5, 0.95, &cov), 1);
  EXPECT_NEAR(cov, 1 - 2.0 / 32, 1e-12);
  // 10: [x2, x9], 1 - 2 * 11/1024.
  EXPECT_EQ(median_ci_rank(10, 0.95, &cov), 2);
  EXPECT_NEAR(cov, 1 - 22.0 / 1024, 1e-12);
  // 9: P(B <= 1) = 10/512 <= 0.025, P(B <= 2) = 46/512 > 0.025.
  EXPECT_EQ(median_ci_rank(9, 0.95, &cov), 2);
  // A lower level narrows the interval.
  EXPECT_GT(median_ci_rank(10, 0.5, &cov), 2);
  EXPECT_GE(cov, 0.5);
  // Large samples: the classic n/2 - 0.98 sqrt(n) rank.
  int k = median_ci_rank(400, 0.95, &cov);
  EXPECT_NEAR(k, 400 / 2 - 0.98 * 20, 2);
  EXPECT_GE(cov, 0.95);
  EXPECT_EQ(median_ci_rank(1, 0.95, &cov), 1);
}

TEST(Spread, QuietSampleIsNotNoisy) {
  Spread s = assess_spread({1.00, 1.01, 0.99, 1.02, 1.00});
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.median, 1.00);
  EXPECT_DOUBLE_EQ(s.ci_low, 0.99);
  EXPECT_DOUBLE_EQ(s.ci_high, 1.02);
  EXPECT_NEAR(s.ci_level, 0.9375, 1e-12);
  EXPECT_GT(s.cv, 0);
  EXPECT_LT(s.cv, 0.02);
  EXPECT_TRUE(s.judged);
  EXPECT_FALSE(s.noisy);
  EXPECT_TRUE(s.reasons.empty());
  EXPECT_EQ(describe_noise(s), "");
}

TEST(Spread, WideIntervalIsNoisy) {
  // min..max is 0.8..1.2: the median is known to +-20% only.
  Spread s = assess_spread({0.8, 0.95, 1.0, 1.05, 1.2});
  EXPECT_TRUE(s.noisy);
  EXPECT_NEAR(s.ci_half_width(), 0.2, 1e-12);
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_NE(s.reasons[0].find("±20%"), std::string::npos) << s.reasons[0];
  EXPECT_FALSE(s.bimodal);
  EXPECT_EQ(s.outliers, 0);
}

TEST(Spread, OutlierAndTwoClusters) {
  // The loaded-machine pattern of issue 17: 37 us and 23 ms alternating.
  Spread s = assess_spread({37e-6, 23e-3, 38e-6, 22e-3, 37e-6});
  EXPECT_TRUE(s.noisy);
  EXPECT_TRUE(s.bimodal);
  EXPECT_EQ(s.low_cluster, 3);
  EXPECT_EQ(s.outliers, 2);
  EXPECT_GT(s.worst_outlier, 500);
  std::string d = describe_noise(s);
  EXPECT_NE(d.find("two clusters: 3 of 5"), std::string::npos) << d;
  EXPECT_NE(d.find("2 outlier(s)"), std::string::npos) << d;

  // One slow repetition among ten: an outlier, no second cluster (one repetition alone), and
  // the interval [x2, x9] is not moved by it.
  Spread o = assess_spread({1, 1, 1.01, 1, 0.99, 1, 1.01, 1, 1, 3});
  EXPECT_EQ(o.outliers, 1);
  EXPECT_FALSE(o.bimodal);
  EXPECT_LT(o.ci_half_width(), 0.02);
  EXPECT_TRUE(o.noisy);
}

TEST(Spread, TooFewRepetitionsAreNotJudged) {
  Spread s = assess_spread({1.0, 5.0});
  EXPECT_FALSE(s.judged);
  EXPECT_FALSE(s.noisy);
  EXPECT_EQ(s.n, 2);
  Spread e = assess_spread({});
  EXPECT_EQ(e.n, 0);
  nlohmann::json j = spread_json(e);
  EXPECT_TRUE(j["median_ci"].is_null());
  EXPECT_TRUE(j["cv"].is_null());
  nlohmann::json k = spread_json(assess_spread({0.8, 0.95, 1.0, 1.05, 1.2}));
  EXPECT_EQ(k["repetitions"], 5);
  EXPECT_EQ(k["noisy"], true);
  EXPECT_EQ(k["median_ci"][0], 0.8);
  EXPECT_EQ(k["noise_reasons"].size(), 1u);
}

TEST(Suspect, AboveWhatTheCacheCanLiftBeyondIt) {
  const int64_t llc = 32 << 20;
  // 4692x the limit with 64 MiB of tensors: suspect (the cache can at most halve the traffic).
  std::string r = suspect_reason(4692.0, 64.0 * (1 << 20), llc, "1.8e+05 GB/s", "38 GB/s");
  EXPECT_NE(r.find("4692x the 38 GB/s limit"), std::string::npos) << r;
  EXPECT_NE(r.find("64 MiB working set"), std::string::npos) << r;
  EXPECT_NE(r.find("2x the 32 MiB last-level cache"), std::string::npos) << r;
  EXPECT_NE(r.find("at most 200% is possible"), std::string::npos) << r;
  // Inside the cache, above the limit: plausible (the limit is main memory's).
  EXPECT_EQ(suspect_reason(3.0, 1 << 20, llc, "a", "b"), "");
  EXPECT_EQ(suspect_reason(50.0, 32.0 * (1 << 20), llc, "a", "b"), "");
  // Just beyond the cache, the cache still serves most of it: far above the limit is possible.
  EXPECT_EQ(suspect_reason(20.0, 33.0 * (1 << 20), llc, "a", "b"), "");
  // At twice the cache, up to 2 x 1.1 of the limit passes.
  EXPECT_EQ(suspect_reason(2.19, 64.0 * (1 << 20), llc, "a", "b"), "");
  EXPECT_NE(suspect_reason(2.21, 64.0 * (1 << 20), llc, "a", "b"), "");
  // relu at N = 2^25 (256 MiB, 8x the cache): 124% of the limit is possible (at most 114%
  // from the cache, 1.1 x that), 130% is not.
  EXPECT_EQ(suspect_reason(1.24, 256.0 * (1 << 20), llc, "a", "b"), "");
  r = suspect_reason(1.30, 256.0 * (1 << 20), llc, "a", "b");
  EXPECT_NE(r.find("a is 130% of the b limit"), std::string::npos) << r;
  EXPECT_NE(r.find("8x the 32 MiB last-level cache"), std::string::npos) << r;
  EXPECT_NE(r.find("at most 114% is possible"), std::string::npos) << r;
  // Far beyond the cache the bound tends to 1.1 x the limit.
  EXPECT_EQ(suspect_reason(1.1, 1e12, llc, "a", "b"), "");
  EXPECT_NE(suspect_reason(1.11, 1e12, llc, "a", "b"), "");
  // Unknown fraction or cache: nothing flagged.
  EXPECT_EQ(suspect_reason(std::nullopt, 1e9, llc, "a", "b"), "");
  EXPECT_EQ(suspect_reason(5.0, 1e9, 0, "a", "b"), "");
}

TEST(Suspect, CacheLift) {
  const int64_t llc = 32 << 20;
  EXPECT_DOUBLE_EQ(cache_lift(64.0 * (1 << 20), llc), 2.0);
  EXPECT_DOUBLE_EQ(cache_lift(256.0 * (1 << 20), llc), 256.0 / 224.0);
  EXPECT_TRUE(std::isinf(cache_lift(32.0 * (1 << 20), llc)));
  EXPECT_EQ(cache_lift(1e9, 0), 0);
}

TEST(Suspect, AboveTheComputeLimitAtAnySize) {
  // No cache serves flops: 23.5x the peak is impossible even for a tiny working set.
  const std::string r = suspect_compute_reason(23.5, "4.27e+03 GFLOP/s", "182 GFLOP/s");
  EXPECT_NE(r.find("4.27e+03 GFLOP/s is 24x the 182 GFLOP/s compute limit"), std::string::npos)
      << r;
  EXPECT_NE(suspect_compute_reason(1.2, "a", "b").find("a is 120% of the b compute limit"),
            std::string::npos);
  EXPECT_EQ(suspect_compute_reason(1.1, "a", "b"), "");
  EXPECT_EQ(suspect_compute_reason(0.5, "a", "b"), "");
  EXPECT_EQ(suspect_compute_reason(std::nullopt, "a", "b"), "");
}

TEST(Suspect, LastLevelCacheFromSysfsAndContext) {
  EXPECT_EQ(parse_cache_size("32768K\n"), 32LL << 20);
  EXPECT_EQ(parse_cache_size("8M"), 8LL << 20);
  EXPECT_EQ(parse_cache_size("1024"), 1024);
  EXPECT_EQ(parse_cache_size("lots"), 0);
  EXPECT_EQ(parse_cache_size(""), 0);

  fs::path dir = fs::temp_directory_path() / ("sb_noise_cache_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto index = [&](int i, const char* level, const char* type, const char* size) {
    fs::path d = dir / ("index" + std::to_string(i));
    fs::create_directories(d);
    std::ofstream(d / "level") << level << "\n";
    std::ofstream(d / "type") << type << "\n";
    std::ofstream(d / "size") << size << "\n";
  };
  index(0, "1", "Data", "32K");
  index(1, "1", "Instruction", "32K");
  index(2, "2", "Unified", "512K");
  index(3, "3", "Unified", "32768K");
  EXPECT_EQ(last_level_cache_bytes(dir.string()), 32LL << 20);
  fs::remove_all(dir / "index3");
  EXPECT_EQ(last_level_cache_bytes(dir.string()), 512LL << 10);
  fs::remove_all(dir);
  EXPECT_EQ(last_level_cache_bytes(dir.string()), 0);

  nlohmann::json ctx = {{"caches",
                         {{{"level", 1}, {"size", 32768}, {"type", "Data"}},
                          {{"level", 3}, {"size", 33554432}, {"type", "Unified"}},
                          {{"level", 4}, {"size", 999}, {"type", "Instruction"}}}}};
  EXPECT_EQ(last_level_cache_from_context(ctx), 33554432);
  EXPECT_EQ(last_level_cache_from_context(nlohmann::json::object()), 0);
}

TEST(MachineLoad, ParsesTheKernelsText) {
  CpuSnapshot s;
  ASSERT_TRUE(parse_loadavg("14.94 6.54 2.60 17/175 7693\n", s));
  EXPECT_DOUBLE_EQ(s.load[0], 14.94);
  EXPECT_DOUBLE_EQ(s.load[2], 2.60);
  EXPECT_EQ(s.runnable, 17);
  EXPECT_FALSE(parse_loadavg("garbage", s));
  ASSERT_TRUE(parse_proc_stat("cpu  100 20 30 5000 7 3 2 40 0 0\ncpu0 50 10 15 2500 3 1 1 20 0 0\n",
                              100, s));
  EXPECT_DOUBLE_EQ(s.busy_seconds, (100 + 20 + 30 + 3 + 2) / 100.0);
  EXPECT_DOUBLE_EQ(s.steal_seconds, 0.4);
  EXPECT_FALSE(parse_proc_stat("intr 1 2 3\n", 100, s));
  CpuSnapshot now = take_cpu_snapshot();
  EXPECT_TRUE(now.ok);  // Linux: /proc is there
}

TEST(MachineLoad, OtherProcessesAndLoadedStart) {
  CpuSnapshot a, b;
  a.ok = b.ok = true;
  a.load[0] = 3.5;
  a.wall_seconds = 100;
  b.wall_seconds = 110;  // 10 s on 2 cores: 20 CPU-seconds
  a.busy_seconds = 1000;
  b.busy_seconds = 1016;  // 16 busy, 10 of them ours
  a.own_cpu_seconds = 5;
  b.own_cpu_seconds = 15;
  b.steal_seconds = a.steal_seconds + 1;
  MachineLoad m = machine_load(a, b, 2);
  EXPECT_DOUBLE_EQ(m.other_cpu_seconds, 6);
  EXPECT_DOUBLE_EQ(m.other_fraction, 7.0 / 20);
  EXPECT_TRUE(m.contended);
  EXPECT_TRUE(m.loaded_at_start);
  EXPECT_NE(loaded_warning(a, 2).find("load average 3.50 (1 min) is above its 2 cores"),
            std::string::npos);
  nlohmann::json j = machine_load_json(m);
  EXPECT_EQ(j["cores"], 2);
  EXPECT_EQ(j["contended"], true);
  EXPECT_DOUBLE_EQ(j["other_cpu_seconds"].get<double>(), 6);
  EXPECT_EQ(j["start"]["load_avg"][0], 3.5);

  // Only our own work: not contended; a quiet start: no warning.
  b.busy_seconds = a.busy_seconds + 10;
  b.steal_seconds = a.steal_seconds;
  a.load[0] = 0.5;
  MachineLoad q = machine_load(a, b, 2);
  EXPECT_DOUBLE_EQ(q.other_cpu_seconds, 0);
  EXPECT_FALSE(q.contended);
  EXPECT_FALSE(q.loaded_at_start);
  EXPECT_EQ(loaded_warning(a, 2), "");
  // Unreadable /proc: nothing claimed.
  CpuSnapshot bad;
  MachineLoad u = machine_load(bad, b, 2);
  EXPECT_FALSE(u.contended);
  EXPECT_TRUE(machine_load_json(u)["other_fraction"].is_null());
}

}  // namespace
}  // namespace sb
