// The backend records (harness/backends/backend_record.h) against the emitter registry and the
// runtimes, and the decisions the harness takes from them.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "backends/backend_record.h"
#include "backends/emitter.h"
#include "results/analysis.h"
#include "results/history.h"
#include "run/runner.h"
#include "run/runtime.h"

namespace sb {
namespace {

TEST(BackendRecords, EveryEmitterHasExactlyOneRecordAndViceVersa) {
  // An emitter backend is a record of the same name whose source is itself...
  for (const Emitter* e : all_emitters()) {
    int n = 0;
    for (const BackendRecord& r : backend_records())
      if (r.name == e->backend()) ++n;
    EXPECT_EQ(n, 1) << "emitter " << e->backend();
    const BackendRecord* r = find_backend(e->backend());
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->source, e->backend());
  }
  // ...and every record runs one emitter's files: its own, or its twin's for a simulator.
  std::set<std::string> names;
  for (const BackendRecord& r : backend_records()) {
    EXPECT_TRUE(names.insert(r.name).second) << "two records named " << r.name;
    EXPECT_NE(find_emitter(r.source), nullptr) << r.name << " runs '" << r.source << "'";
    if (r.source != r.name) {
      const BackendRecord* twin = find_backend(r.source);
      ASSERT_NE(twin, nullptr) << r.name;
      EXPECT_EQ(twin->simulator, r.name) << r.name << " runs " << r.source
                                         << "'s files, which does not name it its simulator";
    }
  }
}

TEST(BackendRecords, RecordsAreConsistent) {
  for (const BackendRecord& r : backend_records()) {
    EXPECT_FALSE(r.language.empty()) << r.name;
    EXPECT_FALSE(r.colormap.empty()) << r.name;
    ASSERT_NE(r.make_runtime, nullptr) << r.name;
    if (!r.simulator.empty()) {
      const BackendRecord* sim = find_backend(r.simulator);
      ASSERT_NE(sim, nullptr) << r.name << "'s simulator " << r.simulator;
      EXPECT_EQ(sim->source, r.name);
      EXPECT_FALSE(sim->timed) << "a simulator is never timed";
      EXPECT_EQ(sim->device, r.device);
    }
    if (!r.baseline.empty()) {
      const BackendRecord* base = find_backend(r.baseline);
      ASSERT_NE(base, nullptr) << r.name << "'s baseline " << r.baseline;
      EXPECT_EQ(base->device, r.device) << "compared on the same kind of device";
      EXPECT_TRUE(base->timed);
    }
  }
  for (Device d : {Device::Cpu, Device::Gpu}) {
    int n = 0;
    for (const BackendRecord& r : backend_records())
      if (r.native && r.device == d) ++n;
    EXPECT_EQ(n, 1) << device_name(d);
  }
  EXPECT_EQ(native_backend(Device::Cpu).name, "cpu");
  EXPECT_EQ(native_backend(Device::Gpu).name, "cuda");
}

TEST(BackendRecords, RuntimesComeFromTheRecordsInTheirOrder) {
  const auto& rts = all_runtimes();
  ASSERT_EQ(rts.size(), backend_records().size());
  for (size_t i = 0; i < rts.size(); ++i) {
    const BackendRecord& r = backend_records()[i];
    EXPECT_EQ(rts[i]->backend(), r.name);
    EXPECT_EQ(&rts[i]->record(), &r);
    EXPECT_EQ(rts[i]->source_backend(), r.source);
    EXPECT_EQ(rts[i]->timed(), r.timed);
    EXPECT_EQ(find_runtime(r.name), rts[i]);
  }
  EXPECT_EQ(find_runtime("cudasim")->source_backend(), "cuda");
  EXPECT_FALSE(find_runtime("cudasim")->timed());
}

TEST(BackendRecords, DevicesAndFamiliesComeFromTheRecords) {
  EXPECT_EQ(device_of("cuda"), Device::Gpu);
  EXPECT_EQ(device_of("vendor_cuda"), Device::Gpu);
  EXPECT_EQ(device_of("cudasim"), Device::Gpu);
  EXPECT_EQ(device_of("mojo"), Device::Cpu);
  EXPECT_EQ(device_of("no_such_backend"), Device::Cpu);
  EXPECT_TRUE(is_gpu_backend("vendor_cuda"));
  EXPECT_FALSE(is_gpu_backend("mlir"));
  EXPECT_TRUE(is_vendor_backend("vendor_cpu"));
  EXPECT_FALSE(is_vendor_backend("mojo"));
  EXPECT_FALSE(is_vendor_backend("no_such_backend"));
  std::vector<std::string> compared;
  for (const BackendRecord* r : compared_backends())
    compared.push_back(r->name + ":" + r->baseline);
  EXPECT_EQ(compared, (std::vector<std::string>{"mojo:cpu", "mojo_gpu:cuda", "mlir:cpu"}));
  EXPECT_EQ(device_of("mojo_gpu"), Device::Gpu);
  EXPECT_EQ(device_of("mojo_gpusim"), Device::Gpu);
  EXPECT_EQ(find_backend("mojo_gpusim")->source, "mojo_gpu");
  EXPECT_FALSE(find_backend("mojo_gpusim")->timed);
  EXPECT_EQ(find_backend("mojo_gpu")->simulator, "mojo_gpusim");
}

TEST(BackendRecords, JsonTableMatchesTheReportsFallbackFile) {
  // make_report.py reads the records from the report data; for data without them it reads
  // harness/report/backends.json, written from this table by `specbench list --backends-json`.
  nlohmann::json j = backends_json();
  ASSERT_EQ(j.size(), backend_records().size());
  EXPECT_EQ(j[0]["name"], "cpu");
  EXPECT_EQ(j[1]["device"], "gpu");
  EXPECT_EQ(j[2]["source"], "cuda");
  EXPECT_EQ(j[2]["timed"], false);
  std::ifstream in(SB_TESTS_DIR "/../harness/report/backends.json");
  ASSERT_TRUE(in) << "harness/report/backends.json is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(nlohmann::json::parse(ss.str()), j)
      << "regenerate it: build/bin/specbench list --backends-json > harness/report/backends.json";
}

TEST(BackendRecords, ReportDataCarriesTheRecords) {
  nlohmann::json data = report_data({}, CompareOptions{});
  EXPECT_EQ(data["backends"], backends_json());
}

TEST(BackendRecords, LanguageRowsFollowTheBaselines) {
  auto rec = [](const std::string& backend, double seconds) {
    BenchRecord r;
    r.kernel = "k";
    r.sizes = "N=8";
    r.backend = backend;
    r.variant = "v";
    r.strategy = "s";
    r.status = BenchStatus::Measured;
    r.seconds = seconds;
    return r;
  };
  // mlir and mojo are put against cpu, in the records' order (mojo first); vendor_cpu and cuda
  // have no baseline, so they give no row.
  auto rows = compare_languages({rec("mlir", 2.0), rec("cpu", 1.0), rec("vendor_cpu", 0.5),
                                 rec("mojo", 4.0), rec("cuda", 0.1)});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].language, "mojo");
  EXPECT_EQ(rows[0].cpp_variant, "cpu/v");
  EXPECT_DOUBLE_EQ(rows[0].ratio, 0.25);
  EXPECT_EQ(rows[1].language, "mlir");
  EXPECT_DOUBLE_EQ(rows[1].ratio, 0.5);
}

}  // namespace
}  // namespace sb
