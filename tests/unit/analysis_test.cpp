// Roofline bound selection and fractions, the summary's comparisons (x vs naive, x vs vendor),
// and the results document carrying them; all on hand-made records and probes (nothing timed is
// asserted).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/analysis.h"
#include "cli/console.h"
#include "driver.h"
#include "results/results.h"
#include "run/runner.h"

namespace fs = std::filesystem;

namespace {

sb::ProbeResult probe(const std::string& device, const std::string& name, double rate) {
  sb::ProbeResult p;
  p.device = device;
  p.name = name;
  p.unit = name.rfind("triad", 0) == 0 || name == "copy_nt" ? "GB/s" : "GFLOP/s";
  p.ok = rate > 0;
  p.rate = rate;
  p.reason = rate > 0 ? "" : "no GPU: test";
  p.detail = "test";
  p.seconds = 1;
  p.reps = 1;
  return p;
}

// cpu: 40 GB/s, compute max(sgemm 180, fma 220) = 220 -> balance 5.5; gpu absent.
sb::ProbeResults cpu_only_probes() {
  sb::ProbeResults r;
  r.ran = true;
  r.probes = {probe("cpu", "triad", 40), probe("cpu", "fma", 220), probe("cpu", "sgemm", 180),
              probe("gpu", "triad", 0), probe("gpu", "sgemm", 0)};
  return r;
}

sb::DeviceLimits limits(double gbps, double gflops) {
  sb::DeviceLimits d;
  d.bandwidth_gbps = gbps;
  d.compute_gflops = gflops;
  return d;
}

TEST(Analysis, LimitsFromProbes) {
  sb::MachineLimits m = sb::limits_from_probes(cpu_only_probes());
  EXPECT_DOUBLE_EQ(m.cpu.bandwidth_gbps, 40);
  EXPECT_DOUBLE_EQ(m.cpu.compute_gflops, 220);  // the better of sgemm and fma
  EXPECT_EQ(m.cpu.compute_probe, "fma");
  EXPECT_EQ(m.cpu.bandwidth_probe, "triad");
  EXPECT_DOUBLE_EQ(m.cpu.balance(), 5.5);
  EXPECT_TRUE(m.cpu.missing.empty());
  EXPECT_EQ(m.gpu.bandwidth_gbps, 0);
  EXPECT_EQ(m.gpu.compute_gflops, 0);
  EXPECT_EQ(m.gpu.balance(), 0);
  EXPECT_EQ(m.gpu.missing, "no GPU: test");

  sb::ProbeResults none;
  none.reason = "--no-probes";
  sb::MachineLimits n = sb::limits_from_probes(none);
  EXPECT_EQ(n.cpu.balance(), 0);
  EXPECT_EQ(n.cpu.missing, "--no-probes");
}

TEST(Analysis, TheBandwidthLimitIsTheBetterTriad) {
  // The non-temporal triad skips the read for ownership: where it is faster it is the limit,
  // where it failed or is slower the plain one is.
  sb::ProbeResults r = cpu_only_probes();
  r.probes.push_back(probe("cpu", "triad_nt", 55));
  sb::MachineLimits m = sb::limits_from_probes(r);
  EXPECT_DOUBLE_EQ(m.cpu.bandwidth_gbps, 55);
  EXPECT_EQ(m.cpu.bandwidth_probe, "triad_nt");
  EXPECT_TRUE(m.cpu.missing.empty());

  r.probes.back().rate = 30;
  m = sb::limits_from_probes(r);
  EXPECT_DOUBLE_EQ(m.cpu.bandwidth_gbps, 40);
  EXPECT_EQ(m.cpu.bandwidth_probe, "triad");

  r.probes.back() = probe("cpu", "triad_nt", 0);  // failed
  r.probes.front() = probe("cpu", "triad", 0);
  r.probes.front().reason = "triad result is wrong";
  m = sb::limits_from_probes(r);
  EXPECT_EQ(m.cpu.bandwidth_gbps, 0);
  EXPECT_EQ(m.cpu.bandwidth_probe, "");
  EXPECT_EQ(m.cpu.missing, "triad result is wrong");
}

TEST(Analysis, TheBandwidthLimitIsTheBestStreamingProbe) {
  // The non-temporal copy counts with the triads: the best of the three is the limit, and a
  // failed copy leaves the better triad.
  sb::ProbeResults r = cpu_only_probes();
  r.probes.push_back(probe("cpu", "triad_nt", 55));
  r.probes.push_back(probe("cpu", "copy_nt", 70));
  sb::MachineLimits m = sb::limits_from_probes(r);
  EXPECT_DOUBLE_EQ(m.cpu.bandwidth_gbps, 70);
  EXPECT_EQ(m.cpu.bandwidth_probe, "copy_nt");
  EXPECT_EQ(sb::limits_json(m)["cpu"]["bandwidth_probe"], "copy_nt");

  r.probes.back().rate = 50;  // slower than the non-temporal triad
  m = sb::limits_from_probes(r);
  EXPECT_DOUBLE_EQ(m.cpu.bandwidth_gbps, 55);
  EXPECT_EQ(m.cpu.bandwidth_probe, "triad_nt");

  r.probes.back() = probe("cpu", "copy_nt", 0);  // failed
  m = sb::limits_from_probes(r);
  EXPECT_DOUBLE_EQ(m.cpu.bandwidth_gbps, 55);
  EXPECT_EQ(m.cpu.bandwidth_probe, "triad_nt");
}

TEST(Analysis, ALimitProbeThatMovedDuringTheRunMarksItUnsteady) {
  // The probes run at the start and at the end (merge_probe_runs keeps both rates). A limit that
  // moved by more than kProbeDriftLimit is reported, since every fraction of it is uncertain.
  sb::ProbeResults r = cpu_only_probes();
  r.probes.push_back(probe("cpu", "copy_nt", 89.6));
  r.probes.back().runs = {89.6, 52.1};
  r.probes[0].runs = {40, 39};  // the triad held
  sb::MachineLimits m = sb::limits_from_probes(r);
  EXPECT_EQ(m.cpu.bandwidth_probe, "copy_nt");
  EXPECT_EQ(m.cpu.bandwidth_runs, (std::vector<double>{89.6, 52.1}));
  EXPECT_NEAR(m.cpu.bandwidth_drift(), (89.6 - 52.1) / 89.6, 1e-12);
  EXPECT_EQ(m.cpu.compute_drift(), 0);  // ran once
  EXPECT_TRUE(m.cpu.unsteady());
  EXPECT_FALSE(m.gpu.unsteady());
  nlohmann::json j = sb::limits_json(m);
  EXPECT_EQ(j["cpu"]["unsteady"], true);
  EXPECT_EQ(j["cpu"]["bandwidth_runs"], nlohmann::json({89.6, 52.1}));
  EXPECT_NEAR(j["cpu"]["bandwidth_drift"].get<double>(), 0.4185, 1e-3);
  EXPECT_EQ(j["gpu"]["unsteady"], false);
  std::string text = sb::format_probes(r, m);
  EXPECT_NE(text.find("UNSTEADY: copy_nt read 89.6 GB/s at the start and 52.1 GB/s at the end "
                      "(42% apart)"),
            std::string::npos)
      << text;

  sb::BenchReport rep;
  rep.probes = r;
  rep.limits = m;
  EXPECT_NE(sb::format_bench_summary_markdown(rep, "r.json")
                .find("**UNSTEADY: the cpu limit probes moved during the run"),
            std::string::npos);

  // Within the limit in both directions: steady, and nothing is said.
  r.probes.back().runs = {89.6, 82.0};
  m = sb::limits_from_probes(r);
  EXPECT_FALSE(m.cpu.unsteady());
  EXPECT_EQ(sb::format_probes(r, m).find("UNSTEADY"), std::string::npos);
  r.probes.back().runs = {82.0, 89.6};
  EXPECT_FALSE(sb::limits_from_probes(r).cpu.unsteady());
  // A compute probe that moved counts as well.
  r.probes[1].runs = {220, 150};
  m = sb::limits_from_probes(r);
  EXPECT_TRUE(m.cpu.unsteady());
  EXPECT_NE(sb::format_probes(r, m).find("fma read 220.0 GFLOP/s at the start"), std::string::npos)
      << sb::format_probes(r, m);
}

TEST(Analysis, TheReadProbeIsShownBesideTheLimitNotAsIt) {
  // Loads only: even where it is faster than both triads, the limit stays the better triad.
  sb::ProbeResults r = cpu_only_probes();
  sb::ProbeResult read = probe("cpu", "read", 70);
  read.unit = "GB/s";
  r.probes.push_back(read);
  sb::MachineLimits m = sb::limits_from_probes(r);
  EXPECT_DOUBLE_EQ(m.cpu.bandwidth_gbps, 40);
  EXPECT_EQ(m.cpu.bandwidth_probe, "triad");
  EXPECT_DOUBLE_EQ(m.cpu.read_gbps, 70);
  EXPECT_DOUBLE_EQ(sb::limits_json(m)["cpu"]["read_gbps"].get<double>(), 70);
  EXPECT_TRUE(sb::limits_json(m)["gpu"]["read_gbps"].is_null());

  r.probes.back() = probe("cpu", "read", 0);  // failed: not shown
  m = sb::limits_from_probes(r);
  EXPECT_EQ(m.cpu.read_gbps, 0);
  EXPECT_TRUE(sb::limits_json(m)["cpu"]["read_gbps"].is_null());
}

TEST(Analysis, BackendFamilies) {
  // From the backend records: a name no record has is a cpu backend and no vendor library.
  EXPECT_TRUE(sb::is_gpu_backend("cuda"));
  EXPECT_TRUE(sb::is_gpu_backend("vendor_cuda"));
  EXPECT_FALSE(sb::is_gpu_backend("cpu"));
  EXPECT_FALSE(sb::is_gpu_backend("vendor_cpu"));
  EXPECT_FALSE(sb::is_gpu_backend("my_cuda_port"));
  EXPECT_TRUE(sb::is_vendor_backend("vendor_cpu"));
  EXPECT_TRUE(sb::is_vendor_backend("vendor_cuda"));
  EXPECT_FALSE(sb::is_vendor_backend("cpu"));
  EXPECT_FALSE(sb::is_vendor_backend("vendor_unknown"));
  sb::MachineLimits m{limits(40, 200), limits(3000, 50000)};
  EXPECT_DOUBLE_EQ(sb::limits_for(m, "cuda").bandwidth_gbps, 3000);
  EXPECT_DOUBLE_EQ(sb::limits_for(m, "vendor_cuda").bandwidth_gbps, 3000);
  EXPECT_DOUBLE_EQ(sb::limits_for(m, "cpu").bandwidth_gbps, 40);
  EXPECT_DOUBLE_EQ(sb::limits_for(m, "vendor_cpu").compute_gflops, 200);
}

TEST(Analysis, BoundFollowsIntensityAgainstBalance) {
  sb::DeviceLimits cpu = limits(40, 200);  // balance 5 flop/byte
  // saxpy-like: 2 flops per 12 bytes.
  sb::Roofline saxpy = sb::choose_bound(12e6, 2e6, cpu);
  EXPECT_EQ(saxpy.bound, sb::Bound::Memory);
  EXPECT_DOUBLE_EQ(saxpy.limit, 40);
  EXPECT_NEAR(saxpy.intensity, 1.0 / 6, 1e-12);
  // matmul-like: intensity far above the balance.
  sb::Roofline mm = sb::choose_bound(3.0 * 4 * 512 * 512, 2.0 * 512 * 512 * 512, cpu);
  EXPECT_EQ(mm.bound, sb::Bound::Compute);
  EXPECT_DOUBLE_EQ(mm.limit, 200);
  // Exactly at the balance counts as compute-bound; just below as memory-bound.
  EXPECT_EQ(sb::choose_bound(100, 500, cpu).bound, sb::Bound::Compute);
  EXPECT_EQ(sb::choose_bound(100, 499, cpu).bound, sb::Bound::Memory);
  // No flops: memory. No bytes: compute. Neither: unknown.
  EXPECT_EQ(sb::choose_bound(100, 0, cpu).bound, sb::Bound::Memory);
  EXPECT_EQ(sb::choose_bound(0, 100, cpu).bound, sb::Bound::Compute);
  EXPECT_EQ(sb::choose_bound(0, 0, cpu).bound, sb::Bound::Unknown);
  // Without probes only the trivial cases are decided, and no limit is known.
  sb::DeviceLimits none;
  EXPECT_EQ(sb::choose_bound(12, 2, none).bound, sb::Bound::Unknown);
  sb::Roofline copy = sb::choose_bound(8, 0, none);
  EXPECT_EQ(copy.bound, sb::Bound::Memory);
  EXPECT_EQ(copy.limit, 0);
  EXPECT_FALSE(sb::roofline_fraction(copy, 10, 0).has_value());
}

TEST(Analysis, FractionIsTheBoundsRateOverItsLimit) {
  sb::DeviceLimits cpu = limits(40, 200);
  sb::Roofline mem = sb::choose_bound(12, 2, cpu);
  auto f = sb::roofline_fraction(mem, 20, 3.3);
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(*f, 0.5);
  sb::Roofline comp = sb::choose_bound(1, 1000, cpu);
  f = sb::roofline_fraction(comp, 0.15, 150);
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(*f, 0.75);
  EXPECT_FALSE(sb::roofline_fraction(sb::Roofline{}, 20, 150).has_value());
  std::string unit;
  EXPECT_DOUBLE_EQ(sb::bound_rate(sb::Bound::Compute, 1, 150, 8, &unit), 150);
  EXPECT_EQ(unit, "GFLOP/s");
  EXPECT_DOUBLE_EQ(sb::bound_rate(sb::Bound::Unknown, 20, 150, 8, &unit), 20);
  EXPECT_EQ(unit, "GB/s");
  EXPECT_EQ(std::string(sb::bound_name(sb::Bound::Memory)), "memory");
  EXPECT_EQ(std::string(sb::bound_name(sb::Bound::Compute)), "compute");
}

sb::BenchRecord rec(const std::string& backend, const std::string& variant, double seconds,
                    const std::string& naive, const std::string& sizes = "N=8") {
  sb::BenchRecord r;
  r.kernel = "k";
  r.backend = backend;
  r.variant = variant;
  r.sizes = sizes;
  r.status = sb::BenchStatus::Measured;
  r.verified = true;
  r.seconds = seconds;
  r.bytes = 1e9;
  r.flops = 1e8;
  r.gbps = r.bytes / seconds * 1e-9;
  r.gflops = r.flops / seconds * 1e-9;
  r.naive_variant = naive;
  r.roofline = sb::choose_bound(r.bytes, r.flops, limits(40, 200));
  return r;
}

TEST(Analysis, SummaryComparesWithNaiveAndVendor) {
  std::vector<sb::BenchRecord> records{
      rec("cpu", "loops", 0.4, "loops"),
      rec("cpu", "tiled", 0.1, "loops"),
      rec("vendor_cpu", "sgemm", 0.2, "sgemm"),
      rec("cuda", "naive", 0.01, "naive"),
      rec("cuda", "smem", 0.004, "naive"),
      rec("vendor_cuda", "cublas", 0.002, "cublas"),
      rec("cpu", "tiled", 0.05, "loops", "N=16"),  // naive not measured at N=16
  };
  sb::BenchRecord failed = rec("cpu", "loops", 0, "loops", "N=16");
  failed.status = sb::BenchStatus::Failed;
  records.push_back(failed);

  auto rows = sb::summarize(records);
  ASSERT_EQ(rows.size(), 5u);
  const sb::SummaryRow& cpu = rows[0];
  EXPECT_EQ(cpu.backend, "cpu");
  EXPECT_EQ(cpu.variant, "tiled");
  EXPECT_EQ(cpu.naive_variant, "loops");
  ASSERT_TRUE(cpu.vs_naive.has_value());
  EXPECT_DOUBLE_EQ(*cpu.vs_naive, 4.0);
  ASSERT_TRUE(cpu.vs_vendor.has_value());
  EXPECT_DOUBLE_EQ(*cpu.vs_vendor, 2.0);  // vendor 0.2 s / best 0.1 s
  EXPECT_EQ(cpu.vendor, "vendor_cpu/sgemm");
  EXPECT_EQ(cpu.roofline.bound, sb::Bound::Memory);  // intensity 0.1 < balance 5
  EXPECT_EQ(cpu.unit, "GB/s");
  EXPECT_DOUBLE_EQ(cpu.rate, 10);
  ASSERT_TRUE(cpu.fraction.has_value());
  EXPECT_DOUBLE_EQ(*cpu.fraction, 0.25);  // 10 GB/s of 40

  const sb::SummaryRow& vendor = rows[1];
  EXPECT_EQ(vendor.backend, "vendor_cpu");
  EXPECT_DOUBLE_EQ(*vendor.vs_naive, 1.0);  // its own first variant
  EXPECT_FALSE(vendor.vs_vendor.has_value());

  // The cuda row is compared with the gpu vendor only, never with the cpu one.
  const sb::SummaryRow& cuda = rows[2];
  EXPECT_EQ(cuda.variant, "smem");
  EXPECT_DOUBLE_EQ(*cuda.vs_naive, 2.5);
  EXPECT_EQ(cuda.vendor, "vendor_cuda/cublas");
  EXPECT_DOUBLE_EQ(*cuda.vs_vendor, 0.5);

  const sb::SummaryRow& n16 = rows[4];
  EXPECT_EQ(n16.sizes, "N=16");
  EXPECT_FALSE(n16.vs_naive.has_value());
  EXPECT_FALSE(n16.vs_vendor.has_value());

  nlohmann::json j = sb::summary_json(rows);
  ASSERT_EQ(j.size(), 5u);
  EXPECT_EQ(j[0]["bound"], "memory");
  EXPECT_DOUBLE_EQ(j[0]["vs_naive"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j[0]["vs_vendor"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j[0]["roofline_fraction"].get<double>(), 0.25);
  EXPECT_TRUE(j[4]["vs_naive"].is_null());
  EXPECT_TRUE(j[1]["vendor"].is_null());
}

TEST(Analysis, ResultsEntriesCarryBoundAndFraction) {
  const char* gb = R"({
    "context": {"date": "x", "host_name": "h"},
    "benchmarks": [
      {"name": "k/cpu/v/N=8/real_time_median", "run_name": "k/cpu/v/N=8/real_time",
       "run_type": "aggregate", "aggregate_name": "median", "aggregate_unit": "time",
       "real_time": 10.0, "time_unit": "ns", "bytes": 2.0e10, "flops": 5.0e8},
      {"name": "k/cpu/v/N=8/real_time_cv", "run_name": "k/cpu/v/N=8/real_time",
       "run_type": "aggregate", "aggregate_name": "cv", "aggregate_unit": "percentage",
       "real_time": 0.01, "time_unit": "ns", "bytes": 0.02, "flops": 0.02},
      {"name": "m/cuda/v/N=8/manual_time", "run_name": "m/cuda/v/N=8/manual_time",
       "run_type": "iteration", "real_time": 10.0, "time_unit": "ns", "bytes": 1.0e9,
       "flops": 1.0e12}
    ]})";
  sb::MachineLimits m{limits(40, 200), sb::DeviceLimits{}};
  // One case per device: named fields, the rest default.
  auto make_case = [](const std::string& name, const std::string& kernel,
                      const std::string& backend, sb::Roofline roofline) {
    sb::ResultCase c;
    c.name = name;
    c.kernel = kernel;
    c.backend = backend;
    c.variant = "v";
    c.sizes = {{"N", 8}};
    c.roofline = roofline;
    return c;
  };
  const sb::ResultCase memory =
      make_case("k/cpu/v/N=8", "k", "cpu", sb::choose_bound(8, 0.2, m.cpu));
  const sb::ResultCase gpu =
      make_case("m/cuda/v/N=8", "m", "cuda", sb::choose_bound(8, 8000, sb::limits_for(m, "cuda")));
  auto doc = sb::make_results_document(gb, {memory, gpu}, {}, {}, {});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const auto& b = doc.value()["benchmarks"];
  EXPECT_EQ(b[0]["kernel"], "k");
  EXPECT_EQ(b[0]["backend"], "cpu");
  EXPECT_EQ(b[0]["variant"], "v");
  EXPECT_EQ(b[0]["sizes"]["N"], 8);
  EXPECT_EQ(b[0]["verified"], true);
  EXPECT_DOUBLE_EQ(b[0]["gbps"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(b[0]["gflops"].get<double>(), 0.5);
  EXPECT_EQ(b[0]["bound"], "memory");
  EXPECT_DOUBLE_EQ(b[0]["arithmetic_intensity"].get<double>(), 0.025);
  EXPECT_DOUBLE_EQ(b[0]["roofline_limit"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(b[0]["roofline_fraction"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(b[1]["roofline_fraction"].get<double>(), 0.02);  // cv of the fraction
  // A cuda-family case without gpu probes: no bound, no limit, no fraction; still its rates.
  EXPECT_TRUE(b[2]["bound"].is_null());
  EXPECT_TRUE(b[2]["roofline_limit"].is_null());
  EXPECT_TRUE(b[2]["roofline_fraction"].is_null());
  EXPECT_DOUBLE_EQ(b[2]["gflops"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(b[2]["arithmetic_intensity"].get<double>(), 1000);

  EXPECT_EQ(sb::markdown_path("/r/host/20250101T000000Z.json"), "/r/host/20250101T000000Z.md");
  EXPECT_EQ(sb::markdown_path("/tmp/out"), "/tmp/out.md");
}

// ---------------------------------------------------------------------------------------------
// The runner end to end on a tiny spec with a hand-written module and hand-made probes.

const char* kSpec = R"(name: toyscale
doc: y = 2 x, for the analysis tests.
sizes:
  N: {bench: [4096], verify: [1, 7]}
tensors:
  x: {type: f32, shape: [N], role: in}
  y: {type: f32, shape: [N], role: out}
compute: |
  y[i] = 2.0 * x[i]
variants:
  cpu:
    - {name: first, strategy: loops}
    - {name: second, strategy: loops}
)";

const char* kModule = R"(#include "specbench_abi.h"
static int scale(const sb_args* s) {
  const float* x = (const float*)s->tensors[0];
  float* y = (float*)s->tensors[1];
  for (int64_t i = 0; i < s->sizes[0]; ++i) y[i] = 2.0f * x[i];
  return 0;
}
static const sb_variant variants[] = {{"first", scale}, {"second", scale}};
static const sb_module module = {SPECBENCH_ABI_VERSION, "toyscale", "cpu", 2, 1, 2, variants};
extern "C" const sb_module* specbench_module(void) { return &module; }
)";

TEST(Analysis, BenchRecordsDocumentAndSummaryCarryTheLimits) {
  fs::path dir =
      fs::temp_directory_path() / ("specbench_analysis_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "toyscale.yaml") << kSpec;
  std::ofstream(dir / "toyscale.cpp") << kModule;
  auto spec = sb::load_and_check((dir / "toyscale.yaml").string());
  ASSERT_TRUE(spec.ok()) << sb::format_error(spec.error());
  sb::ToolchainOptions tools = sb::default_toolchain_options();
  sb::Target t;
  t.spec = &spec.value();
  t.backend = "cpu";
  t.runtime = sb::find_runtime("cpu");
  t.source = (dir / "toyscale.cpp").string();
  sb::BuildJob j{"toyscale", "cpu", t.source, tools.abi_dir + "/specbench_abi.h",
                 t.runtime->compile_command(tools)};
  t.build = sb::build_module(j, (dir / "cache").string());
  ASSERT_TRUE(t.build.ok) << t.build.error;

  sb::BenchOptions bo;
  bo.display = false;
  bo.repetitions = 1;
  bo.min_time = 0.01;
  bo.probes = cpu_only_probes();
  auto report = sb::bench({t}, bo, {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  const auto& rep = report.value();

  ASSERT_EQ(rep.records.size(), 2u);
  for (const auto& r : rep.records) {
    EXPECT_EQ(r.status, sb::BenchStatus::Measured);
    EXPECT_EQ(r.naive_variant, "first");
    EXPECT_EQ(r.roofline.bound, sb::Bound::Memory);  // 1 flop per 8 bytes
    EXPECT_DOUBLE_EQ(r.roofline.limit, 40);
    ASSERT_TRUE(r.roofline_fraction.has_value());
    EXPECT_DOUBLE_EQ(*r.roofline_fraction, r.gbps / 40);
  }
  const auto& doc = rep.doc;
  EXPECT_EQ(doc["context"]["probes"]["ran"], true);
  EXPECT_DOUBLE_EQ(doc["context"]["probes"]["cpu"]["triad"]["gbps"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(doc["context"]["limits"]["cpu"]["compute_gflops"].get<double>(), 220);
  EXPECT_EQ(doc["context"]["limits"]["cpu"]["compute_probe"], "fma");
  EXPECT_TRUE(doc["context"]["limits"]["gpu"]["bandwidth_gbps"].is_null());
  ASSERT_FALSE(doc["benchmarks"].empty());
  for (const auto& e : doc["benchmarks"]) {
    for (const char* k : {"kernel", "backend", "variant", "sizes", "verified", "gbps", "gflops",
                          "bound", "roofline_fraction"})
      EXPECT_TRUE(e.contains(k)) << k;
    EXPECT_EQ(e["bound"], "memory");
    EXPECT_GT(e["roofline_fraction"].get<double>(), 0);
  }
  ASSERT_EQ(doc["summary"].size(), 1u);
  EXPECT_EQ(doc["summary"][0]["naive_variant"], "first");
  EXPECT_GT(doc["summary"][0]["vs_naive"].get<double>(), 0);
  ASSERT_EQ(rep.summary.size(), 1u);

  // The reporters only format: the text and Markdown summaries show the same row.
  std::string text = sb::format_bench_summary(rep);
  EXPECT_NE(text.find("× vs naive"), std::string::npos) << text;
  EXPECT_NE(text.find("toyscale"), std::string::npos) << text;
  EXPECT_NE(text.find("40.0 GB/s (triad)"), std::string::npos) << text;
  std::string md = sb::format_bench_summary_markdown(rep, "r.json");
  EXPECT_NE(md.find("| kernel | size | backend | best variant |"), std::string::npos) << md;
  EXPECT_NE(md.find("| toyscale | N=4096 | cpu |"), std::string::npos) << md;
  EXPECT_NE(md.find("naive = the first variant"), std::string::npos) << md;
  fs::remove_all(dir);
}

}  // namespace
