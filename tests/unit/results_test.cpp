// The results document, its atomic writer, and the runner's skipped / failed / measured paths.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "driver.h"
#include "results/results.h"
#include "run/runner.h"
#include "run/runtime.h"
#include "build/toolchain.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() /
               ("specbench_results_test_" + std::to_string(getpid()) + "_" + tag);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Results, WrittenAtomicallyAndParseable) {
  fs::path dir = fresh_dir("atomic");
  std::string path = (dir / "host" / "r.json").string();  // parent folder does not exist yet
  nlohmann::json doc = {{"benchmarks", nlohmann::json::array()}, {"note", "first"}};
  ASSERT_TRUE(sb::write_results(path, doc).ok());
  doc["note"] = "second \xff byte";  // invalid UTF-8 must not make the writer throw
  ASSERT_TRUE(sb::write_results(path, doc).ok());
  nlohmann::json back = nlohmann::json::parse(slurp(path), nullptr, false);
  ASSERT_FALSE(back.is_discarded());
  EXPECT_EQ(back["note"].get<std::string>().substr(0, 6), "second");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir / "host")) {
    ++files;
    EXPECT_EQ(e.path().filename(), "r.json") << "left behind: " << e.path();
  }
  EXPECT_EQ(files, 1u);
  fs::remove_all(dir);
}

TEST(Results, UnwritablePathIsAnError) {
  EXPECT_FALSE(
      sb::write_results("/proc/specbench/cannot/write.json", nlohmann::json::object()).ok());
}

TEST(Results, DefaultPathIsHostAndUtcStamp) {
  EXPECT_EQ(sb::utc_stamp(0), "19700101T000000Z");
  std::string p = sb::default_results_path("/r", 86400 + 3661);
  EXPECT_EQ(p, "/r/results/" + sb::host_name() + "/19700102T010101Z.json");
}

// SPECBENCH_HOST names the results folder when it is a plain folder name, and is a user error
// (never a path) otherwise.
TEST(Results, HostNameOverride) {
  const char* saved = std::getenv("SPECBENCH_HOST");
  std::string keep = saved ? saved : "";
  setenv("SPECBENCH_HOST", "h200-lab_1.a", 1);
  EXPECT_EQ(sb::host_name_override_error(), "");
  EXPECT_EQ(sb::host_name(), "h200-lab_1.a");
  EXPECT_EQ(sb::default_results_path("/r", 0), "/r/results/h200-lab_1.a/19700101T000000Z.json");
  // The results file says the same host as its folder, whatever Google Benchmark found.
  auto doc = sb::make_results_document(R"({"context": {"host_name": "vm"}, "benchmarks": []})",
                                       {}, {}, {}, {});
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc.value()["context"]["host_name"], "h200-lab_1.a");
  for (const char* bad : {"", "..", ".hidden", "-x", "a/b", "a b", "x\n",
                          "0123456789012345678901234567890123456789012345678901234567890123456"}) {
    setenv("SPECBENCH_HOST", bad, 1);
    EXPECT_NE(sb::host_name_override_error(), "") << bad;
    EXPECT_NE(sb::host_name(), bad) << bad;
  }
  if (saved) setenv("SPECBENCH_HOST", keep.c_str(), 1); else unsetenv("SPECBENCH_HOST");
  EXPECT_EQ(sb::host_name_override_error(), "");
}

TEST(Results, AnnotatesGoogleBenchmarkEntries) {
  const char* gb = R"({
    "context": {"date": "x", "host_name": "h"},
    "benchmarks": [
      {"name": "k/cpu/v/N=8/real_time_median", "run_name": "k/cpu/v/N=8/real_time",
       "run_type": "aggregate", "aggregate_name": "median", "aggregate_unit": "time",
       "real_time": 10.0, "time_unit": "ns", "bytes": 2.0e9, "flops": 5.0e8},
      {"name": "k/cpu/v/N=8/real_time_cv", "run_name": "k/cpu/v/N=8/real_time",
       "run_type": "aggregate", "aggregate_name": "cv", "aggregate_unit": "percentage",
       "real_time": 0.01, "time_unit": "ns", "bytes": 0.02},
      {"name": "k/cpu/v/N=80/real_time", "run_name": "k/cpu/v/N=80/real_time",
       "run_type": "iteration", "real_time": 10.0, "time_unit": "ns"},
      {"name": "other", "run_name": "other", "real_time": 1.0}
    ]})";
  std::vector<sb::ResultCase> cases(2);
  for (int i = 0; i < 2; ++i) {
    const int n = i == 0 ? 8 : 80;
    cases[i].name = "k/cpu/v/N=" + std::to_string(n);
    cases[i].kernel = "k";
    cases[i].backend = "cpu";
    cases[i].variant = "v";
    cases[i].sizes = {{"N", n}};
  }
  cases[0].max_error = 1e-7;
  std::vector<sb::ResultProblem> skipped{{"k", "cuda", "naive", {{"N", 8}}, "no GPU", 0}};
  std::vector<sb::ResultProblem> failed{{"k", "cpu", "bad", {{"N", 8}}, "y[0] wrong", 0.5}};
  auto doc = sb::make_results_document(gb, cases, skipped, failed, {{"git_commit", "abc"}});
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  const auto& j = doc.value();
  EXPECT_EQ(j["context"]["git_commit"], "abc");
  EXPECT_EQ(j["context"]["host_name"], sb::host_name());  // ours, over Google Benchmark's "h"
  const auto& b = j["benchmarks"];
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0]["kernel"], "k");
  EXPECT_EQ(b[0]["backend"], "cpu");
  EXPECT_EQ(b[0]["variant"], "v");
  EXPECT_EQ(b[0]["sizes"]["N"], 8);
  EXPECT_EQ(b[0]["verified"], true);
  EXPECT_DOUBLE_EQ(b[0]["max_error"].get<double>(), 1e-7);
  EXPECT_DOUBLE_EQ(b[0]["gbps"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(b[0]["gflops"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(b[1]["gbps"].get<double>(), 0.02);  // cv stays a ratio
  EXPECT_EQ(b[2]["sizes"]["N"], 80);                   // N=8 must not claim N=80
  EXPECT_TRUE(b[2]["gbps"].is_null());
  EXPECT_FALSE(b[3].contains("kernel"));
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_EQ(j["skipped"][0]["reason"], "no GPU");
  EXPECT_EQ(j["skipped"][0]["sizes"]["N"], 8);
  ASSERT_EQ(j["failed"].size(), 1u);
  EXPECT_EQ(j["failed"][0]["variant"], "bad");
  EXPECT_EQ(j["failed"][0]["verified"], false);
  EXPECT_DOUBLE_EQ(j["failed"][0]["max_error"].get<double>(), 0.5);
}

TEST(Results, NothingTimedStillMakesADocument) {
  auto doc = sb::make_results_document("", {}, {}, {}, {{"gpu", "none"}});
  ASSERT_TRUE(doc.ok());
  EXPECT_TRUE(doc.value()["benchmarks"].is_array());
  EXPECT_TRUE(doc.value()["benchmarks"].empty());
  EXPECT_EQ(doc.value()["context"]["gpu"], "none");
  EXPECT_TRUE(doc.value()["context"].contains("date"));
  EXPECT_FALSE(sb::make_results_document("{not json", {}, {}, {}, {}).ok());
}

// ---------------------------------------------------------------------------------------------
// The runner on a tiny spec with a hand-written module.

const char* kSpec = R"(name: toyadd
doc: c = a + b, for the harness tests.
sizes:
  N: {bench: [4096], verify: [1, 7]}
tensors:
  a: {type: f32, shape: [N], role: in}
  b: {type: f32, shape: [N], role: in}
  c: {type: f32, shape: [N], role: out}
compute: |
  c[i] = a[i] + b[i]
variants:
  cpu:
    - {name: right, strategy: loops}
    - {name: wrong, strategy: loops}
  cuda:
    - {name: naive, strategy: thread_per_output}
)";

const char* kModule = R"(#include "specbench_abi.h"
static int right(const sb_args* s) {
  const float* a = (const float*)s->tensors[0];
  const float* b = (const float*)s->tensors[1];
  float* c = (float*)s->tensors[2];
  for (int64_t i = 0; i < s->sizes[0]; ++i) c[i] = a[i] + b[i];
  return 0;
}
static int wrong(const sb_args* s) {
  const float* a = (const float*)s->tensors[0];
  const float* b = (const float*)s->tensors[1];
  float* c = (float*)s->tensors[2];
  for (int64_t i = 0; i < s->sizes[0]; ++i) c[i] = a[i] - b[i];
  return 0;
}
static const sb_variant variants[] = {{"right", right}, {"wrong", wrong}};
static const sb_module module = {SPECBENCH_ABI_VERSION, "toyadd", "cpu", 3, 1, 2, variants};
extern "C" const sb_module* specbench_module(void) { return &module; }
)";

// As kModule, but `wrong` is right only where its output starts on a 64-byte boundary: a kernel
// whose path for unaligned buffers is broken, which only the shifted input set reaches.
const char* kAlignedOnlyModule = R"(#include <stdint.h>
#include "specbench_abi.h"
static int right(const sb_args* s) {
  const float* a = (const float*)s->tensors[0];
  const float* b = (const float*)s->tensors[1];
  float* c = (float*)s->tensors[2];
  for (int64_t i = 0; i < s->sizes[0]; ++i) c[i] = a[i] + b[i];
  return 0;
}
static int wrong(const sb_args* s) {
  const float* a = (const float*)s->tensors[0];
  const float* b = (const float*)s->tensors[1];
  float* c = (float*)s->tensors[2];
  const int aligned = ((uintptr_t)c & 63) == 0;
  for (int64_t i = 0; i < s->sizes[0]; ++i) c[i] = aligned ? a[i] + b[i] : a[i] - b[i];
  return 0;
}
static const sb_variant variants[] = {{"right", right}, {"wrong", wrong}};
static const sb_module module = {SPECBENCH_ABI_VERSION, "toyadd", "cpu", 3, 1, 2, variants};
extern "C" const sb_module* specbench_module(void) { return &module; }
)";

// The `right` variant and the tail of kModule, for the modules below.
const char* kToyaddRight = R"(static int right(const sb_args* s) {
  const float* a = (const float*)s->tensors[0];
  const float* b = (const float*)s->tensors[1];
  float* c = (float*)s->tensors[2];
  for (int64_t i = 0; i < s->sizes[0]; ++i) c[i] = a[i] + b[i];
  return 0;
}
)";
const char* kToyaddTail =
    R"(static const sb_variant variants[] = {{"right", right}, {"wrong", wrong}};
static const sb_module module = {SPECBENCH_ABI_VERSION, "toyadd", "cpu", 3, 1, 2, variants};
extern "C" const sb_module* specbench_module(void) { return &module; }
)";

// As kModule, but `wrong` reads one element before a and one past b, as a boundary check that is
// off by one would; in kOutOfBoundsWriteModule, `wrong` writes one element past c. Both touch
// only the memory next to the tensors, which verification guards.
const std::string kOutOfBoundsReadModule =
    std::string("#include \"specbench_abi.h\"\n") + kToyaddRight + R"(
static int wrong(const sb_args* s) {
  const float* a = (const float*)s->tensors[0];
  const float* b = (const float*)s->tensors[1];
  float* c = (float*)s->tensors[2];
  const int64_t n = s->sizes[0];
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  c[0] += a[-1] * 0.0f;        /* a zero-boundary read, taken as if inside */
  c[n - 1] += b[n] * 0.0f;
  return 0;
}
)" + kToyaddTail;
const std::string kOutOfBoundsWriteModule =
    std::string("#include \"specbench_abi.h\"\n") + kToyaddRight + R"(
static int wrong(const sb_args* s) {
  const float* a = (const float*)s->tensors[0];
  const float* b = (const float*)s->tensors[1];
  float* c = (float*)s->tensors[2];
  for (int64_t i = 0; i < s->sizes[0]; ++i) c[i] = a[i] + b[i];
  c[s->sizes[0]] = 0.0f;
  return 0;
}
)" + kToyaddTail;

// A backend that is never available, like CUDA on a machine without a GPU.
class NoDeviceRuntime : public sb::HostRuntime {
 public:
  std::string backend() const override { return "cuda"; }
  sb::CompileCommand compile_command(const sb::ToolchainOptions&) const override { return {}; }
  sb::Availability availability() override { return {false, "no CUDA-capable device is detected"}; }
  std::string device_name() override { return "none"; }
};

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "toyadd.yaml") << kSpec;
    auto s = sb::load_and_check((dir_ / "toyadd.yaml").string());
    ASSERT_TRUE(s.ok()) << sb::format_error(s.error());
    spec_ = std::move(s.value());
  }
  void TearDown() override { fs::remove_all(dir_); }

  sb::Target cpu_target(const char* module = kModule) {
    std::ofstream(dir_ / "toyadd.cpp") << module;
    sb::ToolchainOptions tools = sb::default_toolchain_options();
    sb::Target t;
    t.spec = &spec_;
    t.backend = "cpu";
    t.runtime = sb::find_runtime("cpu");
    t.source = (dir_ / "toyadd.cpp").string();
    sb::BuildJob j{"toyadd", "cpu", t.source, tools.abi_dir + "/specbench_abi.h",
                   t.runtime->compile_command(tools)};
    t.build = sb::build_module(j, (dir_ / "cache").string());
    return t;
  }

  sb::Target nodevice_target() {
    sb::Target t;
    t.spec = &spec_;
    t.backend = "cuda";
    t.runtime = &nodevice_;
    t.build.ok = true;  // compiled fine; the machine just cannot run it
    t.build.module_path = "/nonexistent.so";
    return t;
  }

  fs::path dir_;
  sb::Spec spec_;
  NoDeviceRuntime nodevice_;
};

TEST_F(RunnerTest, NoGpuPathYieldsSkippedNotFailed) {
  std::vector<sb::Target> targets{nodevice_target()};
  auto records = sb::verify(targets, sb::VerifyOptions{}, {});
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].outcome, sb::Outcome::Skipped);
  EXPECT_EQ(records[0].detail, "no CUDA-capable device is detected");
  EXPECT_TRUE(sb::failed_variants(records).empty());

  sb::BenchOptions bo;
  bo.display = false;
  auto report = sb::bench(targets, bo, {});
  ASSERT_TRUE(report.ok());
  const auto& doc = report.value().doc;
  EXPECT_TRUE(doc["benchmarks"].empty());
  EXPECT_TRUE(doc["failed"].empty());
  ASSERT_EQ(doc["skipped"].size(), 1u);
  EXPECT_EQ(doc["skipped"][0]["backend"], "cuda");
  EXPECT_EQ(doc["skipped"][0]["variant"], "naive");
  EXPECT_EQ(doc["skipped"][0]["sizes"]["N"], 4096);
  EXPECT_EQ(doc["skipped"][0]["reason"], "no CUDA-capable device is detected");
  ASSERT_EQ(report.value().records.size(), 1u);
  EXPECT_EQ(report.value().records[0].status, sb::BenchStatus::Skipped);
}

TEST_F(RunnerTest, RealCudaRuntimeWithoutGpuReportsAReason) {
  sb::Runtime* cuda = sb::find_runtime("cuda");
  ASSERT_NE(cuda, nullptr);
  sb::Availability a = cuda->availability();
  if (a.ok) GTEST_SKIP() << "a GPU is present: " << cuda->device_name();
  EXPECT_FALSE(a.reason.empty());
  EXPECT_EQ(cuda->device_name(), "none");
  sb::Target t = nodevice_target();
  t.runtime = cuda;
  auto records = sb::verify({t}, sb::VerifyOptions{}, {});
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].outcome, sb::Outcome::Skipped);
  EXPECT_EQ(records[0].detail, a.reason);
}

TEST_F(RunnerTest, VerifiesEveryInputSetAndCatchesAWrongVariant) {
  std::vector<sb::Target> targets{cpu_target()};
  ASSERT_TRUE(targets[0].build.ok) << targets[0].build.error;
  sb::VerifyOptions vo;
  vo.seeds = 2;
  auto records = sb::verify(targets, vo, {});
  // 2 variants x 2 sizes x (2 seeds + zeros + large + seed 1 on shifted buffers)
  ASSERT_EQ(records.size(), 20u);
  for (const auto& r : records) {
    if (r.variant == "right") {
      EXPECT_EQ(r.outcome, sb::Outcome::Pass) << r.sizes << " " << r.inputs << " " << r.detail;
    } else if (r.inputs != "zeros") {  // a - b == a + b when both are zero
      EXPECT_EQ(r.outcome, sb::Outcome::Fail) << r.sizes << " " << r.inputs;
      EXPECT_NE(r.detail.find("toyadd"), std::string::npos) << r.detail;
    }
  }
  auto failed = sb::failed_variants(records);
  EXPECT_EQ(failed, std::set<std::string>{"toyadd/cpu/wrong"});
}

TEST_F(RunnerTest, GuardedBuffersCatchReadsAndWritesPastATensor) {
  for (const std::string* module : {&kOutOfBoundsReadModule, &kOutOfBoundsWriteModule}) {
    const bool writes = module == &kOutOfBoundsWriteModule;
    std::vector<sb::Target> targets{cpu_target(module->c_str())};
    ASSERT_TRUE(targets[0].build.ok) << targets[0].build.error;
    auto records = sb::verify(targets, sb::VerifyOptions{}, {});
    ASSERT_FALSE(records.empty());
    for (const auto& r : records) {
      // Every input set: the guards read as NaN (0 * NaN is NaN), and a write there is seen.
      EXPECT_EQ(r.outcome, r.variant == "wrong" ? sb::Outcome::Fail : sb::Outcome::Pass)
          << r.variant << " " << r.sizes << " " << r.inputs << " " << r.detail;
      if (r.variant == "wrong" && writes) {
        EXPECT_EQ(r.detail,
                  "the variant wrote outside its tensors (c: 0 bytes before its start and 4 "
                  "after its end changed)");
      }
    }
    EXPECT_FALSE(targets[0].runtime->guarded());  // verify leaves the runtime unguarded
  }
}

TEST_F(RunnerTest, ShiftedBuffersCatchAVariantRightOnlyWhenAligned) {
  std::vector<sb::Target> targets{cpu_target(kAlignedOnlyModule)};
  ASSERT_TRUE(targets[0].build.ok) << targets[0].build.error;
  ASSERT_TRUE(targets[0].runtime->can_shift());
  auto records = sb::verify(targets, sb::VerifyOptions{}, {});
  int shifted = 0;
  for (const auto& r : records) {
    const bool is_shifted = r.inputs == "seed 1, buffers shifted";
    shifted += is_shifted;
    const bool fails = r.variant == "wrong" && is_shifted;
    EXPECT_EQ(r.outcome, fails ? sb::Outcome::Fail : sb::Outcome::Pass)
        << r.variant << " " << r.sizes << " " << r.inputs;
  }
  EXPECT_EQ(shifted, 4);  // 2 variants x 2 sizes
  EXPECT_EQ(sb::failed_variants(records), std::set<std::string>{"toyadd/cpu/wrong"});
  EXPECT_FALSE(targets[0].runtime->shifted());  // verify leaves the runtime unshifted
}

TEST_F(RunnerTest, BenchTimesVerifiedCasesOnlyAndAnnotatesJson) {
  std::vector<sb::Target> targets{cpu_target(), nodevice_target()};
  ASSERT_TRUE(targets[0].build.ok) << targets[0].build.error;
  sb::BenchOptions bo;
  bo.display = false;
  bo.repetitions = 2;
  bo.min_time = 0.01;
  bo.context = {{"specbench_version", sb::kSpecbenchVersion}};
  auto report = sb::bench(targets, bo, {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  const auto& doc = report.value().doc;
  EXPECT_EQ(doc["context"]["specbench_version"], sb::kSpecbenchVersion);
  ASSERT_FALSE(doc["benchmarks"].empty());
  bool median = false;
  for (const auto& e : doc["benchmarks"]) {
    EXPECT_EQ(e["kernel"], "toyadd");
    EXPECT_EQ(e["variant"], "right");  // the wrong variant is never timed
    EXPECT_EQ(e["sizes"]["N"], 4096);
    EXPECT_EQ(e["verified"], true);
    EXPECT_EQ(e["name"].get<std::string>().rfind("toyadd/cpu/right/N=4096", 0), 0u);
    if (e.value("aggregate_name", "") == "median") {
      median = true;
      EXPECT_GT(e["gbps"].get<double>(), 0);
      EXPECT_GT(e["gflops"].get<double>(), 0);
      // The case's spread and plausibility stand on its median entry.
      ASSERT_TRUE(e.contains("noise")) << e.dump();
      EXPECT_EQ(e["noise"]["repetitions"], 2);
      EXPECT_EQ(e["noise"]["judged"], false);  // 2 repetitions: recorded, not judged
      EXPECT_EQ(e["noise"]["median_ci"].size(), 2u);
      EXPECT_TRUE(e.contains("suspect"));
    } else {
      EXPECT_FALSE(e.contains("noise"));
    }
  }
  EXPECT_TRUE(median);
  // The machine's load around the timing, and the cache the suspect flags are judged by.
  const auto& load = doc["context"]["machine_load"];
  ASSERT_TRUE(load.is_object()) << doc["context"].dump();
  EXPECT_GE(load["cores"].get<int>(), 1);
  EXPECT_TRUE(load["start"]["load_avg"].is_array());
  EXPECT_TRUE(load["other_fraction"].is_number());
  EXPECT_TRUE(load["contended"].is_boolean());
  EXPECT_TRUE(doc["context"].contains("llc_bytes"));
  EXPECT_TRUE(report.value().load.start.ok);
  ASSERT_EQ(doc["failed"].size(), 1u);
  EXPECT_EQ(doc["failed"][0]["variant"], "wrong");
  EXPECT_GT(doc["failed"][0]["max_error"].get<double>(), 0);
  ASSERT_EQ(doc["skipped"].size(), 1u);

  auto best = sb::best_per_size(report.value().records);
  ASSERT_GE(best.size(), 1u);
  EXPECT_EQ(best[0].status, sb::BenchStatus::Measured);
  EXPECT_EQ(best[0].variant, "right");
  EXPECT_GT(best[0].seconds, 0);
  EXPECT_GT(best[0].gbps, 0);
  EXPECT_EQ(best[0].spread.n, 2);
  EXPECT_GT(best[0].spread.median, 0);
}

TEST_F(RunnerTest, KeepsEveryRepetitionCheckpointsEachCaseAndSkipsDoneCases) {
  // Two bench sizes, so there are two cases of the right variant.
  std::string two_sizes = kSpec;
  two_sizes.replace(two_sizes.find("bench: [4096]"), 13, "bench: [1024, 4096]");
  std::ofstream(dir_ / "toyadd.yaml") << two_sizes;
  auto s = sb::load_and_check((dir_ / "toyadd.yaml").string());
  ASSERT_TRUE(s.ok()) << sb::format_error(s.error());
  spec_ = std::move(s.value());
  std::vector<sb::Target> targets{cpu_target()};
  ASSERT_TRUE(targets[0].build.ok) << targets[0].build.error;

  sb::BenchOptions bo;
  bo.display = false;
  bo.repetitions = 3;
  bo.min_time = 0.001;
  std::vector<std::string> checkpointed;  // case names, in order
  size_t checkpointed_entries = 0;
  bo.checkpoint = [&](const std::string& name, const nlohmann::json& entries) {
    checkpointed.push_back(name);
    checkpointed_entries += entries.size();
    int with_noise = 0;
    for (const auto& e : entries) {
      EXPECT_TRUE(sb::entry_is_of(e, name));
      EXPECT_EQ(e["kernel"], "toyadd");  // annotated already
      if (e.contains("noise")) {
        ++with_noise;
        EXPECT_EQ(e["aggregate_name"], "median");
        EXPECT_EQ(e["noise"]["repetitions"], 3);
        EXPECT_EQ(e["noise"]["judged"], true);
      }
    }
    EXPECT_EQ(with_noise, 1);  // a resumed run keeps the spread of what it measured before
  };
  auto report = sb::bench(targets, bo, {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  // A checkpoint after each of the 2 cases, with its 3 repetitions + mean, median, stddev, cv:
  // exactly the document's entries.
  EXPECT_EQ(checkpointed,
            (std::vector<std::string>{"toyadd/cpu/right/N=1024", "toyadd/cpu/right/N=4096"}));
  EXPECT_EQ(checkpointed_entries, 14u);
  EXPECT_EQ(report.value().doc["benchmarks"].size(), 14u);
  int iterations = 0;
  for (const auto& e : report.value().doc["benchmarks"]) {
    if (e["run_type"] == "iteration") {
      ++iterations;
      EXPECT_EQ(e["strategy"], "loops");
      EXPECT_EQ(e["naive_variant"], "right");
      EXPECT_EQ(e["bytes_per_call"].get<double>(), 3.0 * 4 * e["sizes"]["N"].get<double>());
    }
  }
  EXPECT_EQ(iterations, 6);

  // Resuming: a case measured before is neither checked, timed nor recorded.
  bo.done = {"toyadd/cpu/right/N=1024"};
  checkpointed.clear();
  auto resumed = sb::bench(targets, bo, {});
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(checkpointed, (std::vector<std::string>{"toyadd/cpu/right/N=4096"}));
  for (const auto& e : resumed.value().doc["benchmarks"]) EXPECT_EQ(e["sizes"]["N"], 4096);
  ASSERT_EQ(resumed.value().doc["failed"].size(), 2u);  // the wrong variant, at both sizes
}

TEST(RunContext, RecordsTheTransparentHugePageMode) {
  auto c = sb::run_context(SB_TESTS_DIR "/..", sb::default_toolchain_options());
  ASSERT_EQ(c.count("transparent_hugepages"), 1u);
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  if (std::getline(f, mode))
    EXPECT_EQ(c["transparent_hugepages"], mode);
  else
    EXPECT_EQ(c["transparent_hugepages"], "unknown");
}

TEST(RunContext, RecordsWhetherTrackedFilesDifferFromTheCommit) {
  const fs::path repo =
      fs::temp_directory_path() / ("sb_run_context_git_" + std::to_string(getpid()));
  fs::remove_all(repo);
  fs::create_directories(repo);
  auto git = [&](std::vector<std::string> args) {
    std::vector<std::string> argv{"git",         "-C", repo.string(),   "-c",
                                  "user.name=t", "-c", "user.email=t@t"};
    argv.insert(argv.end(), args.begin(), args.end());
    const sb::ProcessResult r = sb::run_process(argv);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  };
  git({"init", "-q"});
  std::ofstream(repo / "a.txt") << "one\n";
  git({"add", "a.txt"});
  git({"commit", "-q", "-m", "a"});
  std::ofstream(repo / "untracked.txt") << "not part of the commit's files\n";
  auto c = sb::run_context(repo.string(), sb::default_toolchain_options());
  EXPECT_NE(c["git_commit"], "unknown");
  EXPECT_EQ(c["git_modified"], "false");
  std::ofstream(repo / "a.txt") << "two\n";
  c = sb::run_context(repo.string(), sb::default_toolchain_options());
  EXPECT_EQ(c["git_modified"], "true");
  fs::remove_all(repo);
  c = sb::run_context(repo.string(), sb::default_toolchain_options());
  EXPECT_EQ(c["git_commit"], "unknown");
  EXPECT_EQ(c["git_modified"], "unknown");
}

// The cpu runtime, counting its uploads per tensor size in bytes (one per bench size here).
class CountingCpuRuntime : public sb::HostRuntime {
 public:
  std::string backend() const override { return "cpu"; }
  sb::CompileCommand compile_command(const sb::ToolchainOptions& t) const override {
    return sb::find_runtime("cpu")->compile_command(t);
  }
  sb::Result<std::unique_ptr<sb::DeviceTensors>> upload(const sb::HostTensors& host) override {
    ++uploads[host[0].bytes.size()];
    return sb::HostRuntime::upload(host);
  }
  std::map<size_t, int> uploads;
};

TEST_F(RunnerTest, InterleavesTheVariantsOfOneSizeAndKeepsTheirEntriesInCaseOrder) {
  std::string spec = kSpec;
  spec.replace(spec.find("bench: [4096]"), 13, "bench: [1024, 4096]");
  spec.replace(spec.find("- {name: wrong"), 14, "- {name: again");
  std::ofstream(dir_ / "toyadd.yaml") << spec;
  auto s = sb::load_and_check((dir_ / "toyadd.yaml").string());
  ASSERT_TRUE(s.ok()) << sb::format_error(s.error());
  spec_ = std::move(s.value());
  std::string module = kModule;
  module.replace(module.find("{\"wrong\", wrong}"), 16, "{\"again\", right}");
  std::ofstream(dir_ / "toyadd2.cpp") << module;
  sb::Target t = cpu_target();
  t.source = (dir_ / "toyadd2.cpp").string();
  sb::ToolchainOptions tools = sb::default_toolchain_options();
  t.build = sb::build_module({"toyadd", "cpu", t.source, tools.abi_dir + "/specbench_abi.h",
                              t.runtime->compile_command(tools)},
                             (dir_ / "cache").string());
  ASSERT_TRUE(t.build.ok) << t.build.error;
  CountingCpuRuntime counting;
  t.runtime = &counting;

  sb::BenchOptions bo;
  bo.display = false;
  bo.repetitions = 6;
  bo.min_time = 0.001;
  std::vector<std::string> checkpointed;
  bo.checkpoint = [&](const std::string& name, const nlohmann::json&) {
    checkpointed.push_back(name);
  };
  counting.uploads.clear();  // the checks before timing upload too
  auto report = sb::bench({t}, bo, {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  // Cases are grouped by size, in the order the spec lists variants within a size.
  EXPECT_EQ(checkpointed,
            (std::vector<std::string>{"toyadd/cpu/right/N=1024", "toyadd/cpu/again/N=1024",
                                      "toyadd/cpu/right/N=4096", "toyadd/cpu/again/N=4096"}));
  // Every case's 6 repetitions and 4 aggregates, contiguous in the document.
  const auto& b = report.value().doc["benchmarks"];
  ASSERT_EQ(b.size(), 40u);
  for (size_t i = 0; i < b.size(); ++i)
    EXPECT_TRUE(sb::entry_is_of(b[i], checkpointed[i / 10])) << i << " " << b[i]["name"];
  // Two cases in one session with their repetitions in random order. Without interleaving each
  // size would see 4 uploads: one per case for its check, one per case when its timing starts.
  // The chance that neither size is interleaved is (2/924)^2.
  int interleaved = 0;
  for (const auto& [bytes, n] : counting.uploads) interleaved += n > 2 + 2;
  EXPECT_GE(interleaved, 1);
}

}  // namespace

TEST(RunContext, GeneratorHashCoversCodegenSubfolders) {
  const fs::path root =
      fs::temp_directory_path() / ("sb_run_context_gen_" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "codegen" / "lower");
  std::ofstream(root / "codegen" / "a.cpp") << "top\n";
  std::ofstream(root / "codegen" / "lower" / "pass.cpp") << "one\n";
  const std::string before =
      sb::run_context(root.string(), sb::default_toolchain_options())["generator_hash"];
  std::ofstream(root / "codegen" / "lower" / "pass.cpp") << "two\n";
  const std::string after =
      sb::run_context(root.string(), sb::default_toolchain_options())["generator_hash"];
  EXPECT_NE(before, "unknown");
  EXPECT_NE(before, after) << "an edit in codegen/lower/ must change the hash";
  fs::remove_all(root);
}
