// The machine probes: they build, run and give sane numbers (positive, finite; speeds are never
// asserted), and a probe that cannot run is recorded with a reason instead of stopping the run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "run/probes.h"
#include "run/runtime.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& tag) {
  fs::path d =
      fs::temp_directory_path() / ("specbench_probes_test_" + std::to_string(getpid()) + "_" + tag);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Small sizes: the point is that every probe works, not what it measures.
sb::ProbeOptions small_options(const fs::path& cache) {
  sb::ProbeOptions o;
  o.tools = sb::default_toolchain_options();
  o.cache_dir = cache.string();
  o.triad_mib = 8;
  o.triad_reps = 2;
  o.fma_min_seconds = 0.005;
  o.fma_reps = 2;
  o.sgemm_n = 256;
  o.sgemm_reps = 2;
  o.gpu_triad_mib = 8;
  o.gpu_triad_reps = 2;
  o.gpu_sgemm_n = 512;
  o.gpu_sgemm_reps = 2;
  return o;
}

TEST(Probes, CpuProbesGiveSaneNumbersAndGpuProbesAReason) {
  fs::path dir = fresh_dir("sane");
  std::vector<std::string> lines;
  sb::ProbeResults r =
      sb::run_probes(small_options(dir), [&](const std::string& l) { lines.push_back(l); });
  EXPECT_TRUE(r.ran);
  EXPECT_GT(r.seconds, 0);
  for (const char* name : {"triad", "triad_nt", "copy_nt", "read", "fma", "sgemm"}) {
    const sb::ProbeResult* p = r.find("cpu", name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_TRUE(p->ok) << name << ": " << p->reason;
    EXPECT_TRUE(std::isfinite(p->rate) && p->rate > 0) << name << ": " << p->rate;
    EXPECT_TRUE(std::isfinite(p->seconds) && p->seconds > 0) << name;
    EXPECT_GT(p->reps, 0) << name;
    EXPECT_FALSE(p->detail.empty()) << name;
  }
  EXPECT_EQ(r.find("cpu", "triad")->unit, "GB/s");
  EXPECT_EQ(r.find("cpu", "sgemm")->unit, "GFLOP/s");
  EXPECT_EQ(r.find("cpu", "triad")->params["elements"], 8 * 1024 * 1024 / 8);
  EXPECT_EQ(r.find("cpu", "triad")->params["stores"], "plain");
  EXPECT_EQ(r.find("cpu", "triad_nt")->unit, "GB/s");
  EXPECT_EQ(r.find("cpu", "triad_nt")->params["stores"], "non-temporal");
  EXPECT_EQ(r.find("cpu", "triad_nt")->params["elements"], 8 * 1024 * 1024 / 8);
  EXPECT_EQ(r.find("cpu", "copy_nt")->unit, "GB/s");
  EXPECT_EQ(r.find("cpu", "copy_nt")->params["stores"], "non-temporal");
  EXPECT_EQ(r.find("cpu", "copy_nt")->params["arrays"], 2);
  EXPECT_EQ(r.find("cpu", "copy_nt")->params["elements"], 2 * 8 * 1024 * 1024 / 8);
  EXPECT_EQ(r.find("cpu", "read")->unit, "GB/s");
  EXPECT_EQ(r.find("cpu", "read")->params["arrays"], 2);
  EXPECT_EQ(r.find("cpu", "read")->params["elements"], 8 * 1024 * 1024 / 8);
  EXPECT_EQ(r.find("cpu", "sgemm")->params["n"], 256);

  sb::Availability gpu = sb::find_runtime("cuda")->availability();
  for (const char* name : {"triad", "sgemm"}) {
    const sb::ProbeResult* p = r.find("gpu", name);
    ASSERT_NE(p, nullptr) << name;
    if (gpu.ok) {
      EXPECT_TRUE(p->ok) << name << ": " << p->reason;
      EXPECT_TRUE(std::isfinite(p->rate) && p->rate > 0) << name;
    } else {
      EXPECT_FALSE(p->ok);
      EXPECT_NE(p->reason.find(gpu.reason), std::string::npos) << p->reason;
    }
  }
  // One progress line per cpu probe at least, each naming its probe.
  int cpu_lines = 0;
  for (const auto& l : lines) cpu_lines += l.rfind("probe cpu ", 0) == 0;
  EXPECT_GE(cpu_lines, 6);

  nlohmann::json j = sb::probes_json(r);
  EXPECT_EQ(j["ran"], true);
  EXPECT_GT(j["cpu"]["triad"]["gbps"].get<double>(), 0);
  EXPECT_GT(j["cpu"]["triad_nt"]["gbps"].get<double>(), 0);
  EXPECT_GT(j["cpu"]["copy_nt"]["gbps"].get<double>(), 0);
  EXPECT_GT(j["cpu"]["read"]["gbps"].get<double>(), 0);
  EXPECT_GT(j["cpu"]["sgemm"]["gflops"].get<double>(), 0);
  EXPECT_GT(j["cpu"]["fma"]["gflops"].get<double>(), 0);
  EXPECT_EQ(j["cpu"]["triad"]["ok"], true);
  if (!gpu.ok) {
    EXPECT_EQ(j["gpu"]["triad"]["ok"], false);
    EXPECT_FALSE(j["gpu"]["triad"]["reason"].get<std::string>().empty());
  }
  fs::remove_all(dir);
}

TEST(Probes, AProbeThatCannotBeBuiltIsRecordedNotThrown) {
  fs::path dir = fresh_dir("missing");
  sb::ProbeOptions o = small_options(dir);
  o.source_dir = (dir / "no_such_folder").string();
  o.gpu = false;
  sb::ProbeResults r = sb::run_probes(o, {});
  // cpu triad, triad_nt, copy_nt, read, fma, sgemm; gpu triad, memory_peak, sgemm
  ASSERT_EQ(r.probes.size(), 9u);
  for (const auto& p : r.probes) {
    EXPECT_FALSE(p.ok) << p.device << " " << p.name;
    EXPECT_FALSE(p.reason.empty()) << p.device << " " << p.name;
    EXPECT_EQ(p.rate, 0);
  }
  for (const char* name : {"triad", "triad_nt", "copy_nt", "read"})
    EXPECT_NE(r.find("cpu", name)->reason.find("build failed"), std::string::npos)
        << r.find("cpu", name)->reason;
  EXPECT_EQ(sb::describe_probe(*r.find("gpu", "sgemm")), "skipped: gpu probes not asked for");
  EXPECT_EQ(sb::describe_probe(*r.find("gpu", "memory_peak")),
            "skipped: gpu probes not asked for");
  fs::remove_all(dir);
}

// The gpu probes run only on a machine with a GPU; their sources must compile everywhere nvcc
// does. The cache folder is shared between runs (content-hashed), so this costs nvcc once.
TEST(Probes, GpuProbeSourcesCompile) {
  sb::ProbeOptions o;
  o.tools = sb::default_toolchain_options();
  if (o.tools.nvcc.empty()) GTEST_SKIP() << "no nvcc";
  o.tools.cuda_archs = {90};
  o.cache_dir = (fs::temp_directory_path() / "specbench_probes_test_cache").string();
  int built = 0;
  for (const sb::ProbeModule& m : sb::probe_modules(o.tools)) {
    if (m.backend != "cuda") continue;
    sb::BuildResult b = sb::build_probe(o, m);
    EXPECT_TRUE(b.ok) << m.name << ": " << b.error;
    ++built;
  }
  EXPECT_EQ(built, 2);
}

TEST(Probes, NotRunIsDescribed) {
  sb::ProbeResults r;
  r.reason = "--no-probes";
  nlohmann::json j = sb::probes_json(r);
  EXPECT_EQ(j["ran"], false);
  EXPECT_EQ(j["reason"], "--no-probes");
  EXPECT_EQ(r.find("cpu", "triad"), nullptr);
}

sb::ProbeResult probe(const std::string& name, bool ok, double rate) {
  sb::ProbeResult p;
  p.device = "cpu";
  p.name = name;
  p.unit = name == "triad" ? "GB/s" : "GFLOP/s";
  p.ok = ok;
  p.rate = ok ? rate : 0;
  p.reason = ok ? "" : "failed";
  p.detail = name;
  if (ok) p.runs = {rate};
  return p;
}

TEST(Probes, StartAndEndRunsKeepTheBetterRateAndBoth) {
  sb::ProbeResults start, end;
  start.ran = end.ran = true;
  start.seconds = 1.5;
  end.seconds = 2.0;
  start.probes = {probe("triad", true, 35.1), probe("fma", true, 230), probe("sgemm", false, 0)};
  end.probes = {probe("triad", true, 48.0), probe("fma", true, 210), probe("sgemm", true, 190),
                probe("extra", true, 1)};
  const sb::ProbeResults m = sb::merge_probe_runs(start, end);
  EXPECT_DOUBLE_EQ(m.seconds, 3.5);
  const sb::ProbeResult* triad = m.find("cpu", "triad");
  ASSERT_NE(triad, nullptr);
  EXPECT_DOUBLE_EQ(triad->rate, 48.0);  // the end was better
  EXPECT_EQ(triad->runs, (std::vector<double>{35.1, 48.0}));
  EXPECT_EQ(triad->detail, "triad; start 35.1, end 48.0");
  const sb::ProbeResult* fma = m.find("cpu", "fma");
  ASSERT_NE(fma, nullptr);
  EXPECT_DOUBLE_EQ(fma->rate, 230.0);  // the start was better
  EXPECT_EQ(fma->runs, (std::vector<double>{230.0, 210.0}));
  const sb::ProbeResult* sgemm = m.find("cpu", "sgemm");  // failed at the start only
  ASSERT_NE(sgemm, nullptr);
  EXPECT_TRUE(sgemm->ok);
  EXPECT_DOUBLE_EQ(sgemm->rate, 190.0);
  EXPECT_EQ(sgemm->runs, (std::vector<double>{190.0}));
  EXPECT_NE(m.find("cpu", "extra"), nullptr);
  const nlohmann::json j = sb::probes_json(m);
  EXPECT_EQ(j["cpu"]["triad"]["runs"], nlohmann::json({35.1, 48.0}));
  EXPECT_DOUBLE_EQ(j["cpu"]["triad"]["gbps"].get<double>(), 48.0);

  sb::ProbeResults none;
  none.reason = "--no-probes";
  EXPECT_EQ(sb::merge_probe_runs(none, end).probes.size(), end.probes.size());
  EXPECT_EQ(sb::merge_probe_runs(start, none).probes.size(), start.probes.size());
}

}  // namespace
