// Unit tests of the host strategy registries (codegen/backends/common/host_strategy.h and
// backends/<name>/strategies.cpp): every strategy is one record with an algorithm class, typed
// parameters whose defaults lie in their ranges, a fit check where it has a shape, and the
// schedule facts the printers read; each emitter's strategy list is its registry's; and the
// harness's matched comparison pairs (analysis.h) are derived from the algorithm classes.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/emit_cpu.h"
#include "backends/cpu/strategies.h"
#include "backends/mlir/emit_mlir.h"
#include "backends/mlir/mlir_pipelines.h"
#include "backends/mlir/strategies.h"
#include "backends/mojo/emit_mojo.h"
#include "backends/mojo/strategies.h"
#include "backends/vendor_cpu/emit_vendor_cpu.h"
#include "backends/vendor_cpu/strategies.h"
#include "cli/console.h"
#include "driver.h"
#include "results/analysis.h"

namespace sb {
namespace {

namespace fs = std::filesystem;

struct Backend {
  const Emitter& emitter;
  const host::HostRegistry& registry;
};

std::vector<Backend> host_backends() {
  return {{cpu_emitter(), cpu_strategies()},
          {mojo_emitter(), mojo_strategies()},
          {mlir_emitter(), mlir_strategies()},
          {vendor_cpu_emitter(), vendor_cpu_strategies()}};
}

TEST(HostStrategyRegistry, EachEmitterListsItsRegistryInOrder) {
  for (const Backend& b : host_backends()) {
    EXPECT_EQ(b.registry.backend(), b.emitter.backend());
    const std::vector<StrategyInfo> listed = b.emitter.strategies();
    ASSERT_EQ(listed.size(), b.registry.all().size()) << b.emitter.backend();
    for (size_t i = 0; i < listed.size(); ++i) {
      const host::HostStrategy& s = b.registry.all()[i];
      EXPECT_EQ(listed[i].name, s.info.name);
      EXPECT_EQ(listed[i].doc, s.info.doc);
      EXPECT_EQ(listed[i].algorithm, s.info.algorithm);
      EXPECT_EQ(listed[i].params.size(), s.info.params.size());
      EXPECT_EQ(b.registry.find(s.info.name), &s);
    }
    EXPECT_EQ(b.registry.find("no_such_strategy"), nullptr);
  }
}

TEST(HostStrategyRegistry, RecordsHaveAClassDocsAndParametersInRange) {
  for (const Backend& b : host_backends()) {
    for (const host::HostStrategy& s : b.registry.all()) {
      const std::string who = b.emitter.backend() + "/" + s.info.name;
      EXPECT_FALSE(s.info.algorithm.empty()) << who;
      EXPECT_FALSE(s.info.doc.empty()) << who;
      EXPECT_EQ(static_cast<bool>(s.matches), !s.needs.empty()) << who;
      std::set<std::string> names;
      for (const ParamInfo& p : s.info.params) {
        EXPECT_TRUE(names.insert(p.name).second) << who << "." << p.name << " twice";
        EXPECT_LE(p.min, p.def) << who << "." << p.name;
        EXPECT_LE(p.def, p.max) << who << "." << p.name;
        EXPECT_FALSE(p.doc.empty()) << who << "." << p.name;
      }
      // approx_math is a fact exactly when the record has the parameter the printer reads.
      EXPECT_EQ(s.schedule.approx_math, names.count("approx_math") == 1) << who;
      // Only mlir's variants are pass pipelines.
      EXPECT_EQ(static_cast<bool>(s.schedule.pipeline), b.emitter.backend() == "mlir") << who;
    }
  }
}

// Every strategy of every backend (host and cuda) has an algorithm class.
TEST(HostStrategyRegistry, EveryStrategyOfEveryBackendHasAnAlgorithmClass) {
  for (const Emitter* e : all_emitters())
    for (const StrategyInfo& s : e->strategies())
      EXPECT_FALSE(s.algorithm.empty()) << e->backend() << "/" << s.name;
}

// The facts the printers read, record by record: what each strategy name used to select.
TEST(HostStrategyRegistry, ScheduleFactsOfEachStrategy) {
  struct Want {
    const host::HostRegistry& reg;
    const char* name;
    bool parallel, simd, fuse_rows, reassociate;
    host::Gemm gemm;
    const char* algorithm;
    bool im2col = false;
    bool attention = false;
  };
  using host::Gemm;
  const std::vector<Want> wants = {
      {cpu_strategies(), "loops", false, false, false, false, Gemm::None, "naive"},
      {cpu_strategies(), "omp_simd", true, true, true, true, Gemm::None, "parallel_simd"},
      {cpu_strategies(), "blocked_matmul", true, true, false, true, Gemm::Blocked, "blocked_gemm"},
      {cpu_strategies(), "im2col", true, true, false, true, Gemm::Blocked, "im2col_gemm", true},
      {cpu_strategies(), "flash_attention", true, true, false, true, Gemm::Blocked,
       "online_softmax_attention", false, true},
      {mojo_strategies(), "loops", false, false, false, false, Gemm::None, "naive"},
      {mojo_strategies(), "vectorize_parallel", true, true, true, true, Gemm::None,
       "parallel_simd"},
      {mojo_strategies(), "blocked_matmul", true, true, false, true, Gemm::Blocked, "blocked_gemm"},
      {mojo_strategies(), "im2col", true, true, false, true, Gemm::Blocked, "im2col_gemm", true},
      {mlir_strategies(), "loops", false, false, false, false, Gemm::None, "naive"},
      {mlir_strategies(), "tiled_vector", false, true, false, true, Gemm::None, "tiled_simd"},
      {mlir_strategies(), "openmp", true, true, true, true, Gemm::None, "parallel_simd"},
      {mlir_strategies(), "blocked_matmul", true, true, true, true, Gemm::Transform,
       "transform_gemm"},
      {mlir_strategies(), "im2col", true, true, true, true, Gemm::Transform,
       "im2col_transform_gemm", true},
      {vendor_cpu_strategies(), "blas", true, true, false, true, Gemm::Vendor, "vendor_gemm"},
      {vendor_cpu_strategies(), "im2col", true, true, false, true, Gemm::Vendor, "im2col_gemm",
       true},
  };
  size_t total = 0;
  for (const Backend& b : host_backends()) total += b.registry.all().size();
  EXPECT_EQ(wants.size(), total) << "a record without a row here";
  for (const Want& w : wants) {
    const host::HostStrategy* s = w.reg.find(w.name);
    ASSERT_NE(s, nullptr) << w.reg.backend() << "/" << w.name;
    const std::string who = w.reg.backend() + "/" + w.name;
    EXPECT_EQ(s->schedule.parallel, w.parallel) << who;
    EXPECT_EQ(s->schedule.simd, w.simd) << who;
    EXPECT_EQ(s->schedule.fuse_rows, w.fuse_rows) << who;
    EXPECT_EQ(s->schedule.reassociate, w.reassociate) << who;
    EXPECT_EQ(s->schedule.gemm, w.gemm) << who;
    EXPECT_EQ(s->info.algorithm, w.algorithm) << who;
    EXPECT_EQ(s->schedule.im2col, w.im2col) << who;
    EXPECT_EQ(s->schedule.attention, w.attention) << who;
  }
}

TEST(HostStrategyRegistry, MlirRecordsNameTheirPipelines) {
  const host::HostRegistry& reg = mlir_strategies();
  host::PipelineFacts plain, loops, strided;
  loops.explicit_loops = true;
  strided.strided_inner = true;
  EXPECT_EQ(reg.find("loops")->schedule.pipeline({}, plain), mlir_loops_pipeline());
  EXPECT_EQ(reg.find("tiled_vector")->schedule.pipeline({{"tile", 32}, {"vector", 4}}, plain),
            mlir_tiled_vector_pipeline(32, 4));
  // A strided innermost read: tiled, not vectorised (MLIR 19 reads it as contiguous).
  const std::string tiled =
      reg.find("tiled_vector")->schedule.pipeline({{"tile", 32}, {"vector", 4}}, strided);
  EXPECT_EQ(tiled, mlir_tiled_vector_pipeline(32, 4, false));
  EXPECT_EQ(tiled.find("affine-super-vectorize"), std::string::npos);
  EXPECT_NE(tiled.find("tile-size=32 "), std::string::npos);
  EXPECT_NE(mlir_tiled_vector_pipeline(32, 4).find("virtual-vector-size=4 "), std::string::npos);
  EXPECT_NE(mlir_tiled_vector_pipeline(32, 4).find("tile-size=32 "), std::string::npos);
  EXPECT_EQ(reg.find("openmp")->schedule.pipeline({}, loops), mlir_openmp_pipeline(true));
  EXPECT_EQ(mlir_openmp_pipeline(true).rfind("--transform-interpreter ", 0), 0u);
  EXPECT_EQ(mlir_openmp_pipeline(false).find("--transform-interpreter"), std::string::npos);
}

// blocked_matmul's default register tiles follow the native vector width: the pipeline names
// the schedule for the host's width by a token the runtime replaces, and a thread's rows are a
// multiple of every native tile's rows. Tiles given in the variant keep the default entry point.
TEST(HostStrategyRegistry, MlirNativeTilesNameTheirScheduleByWidth) {
  EXPECT_EQ(mlir_blocked_matmul_pipeline(true).rfind(
                "--transform-interpreter=entry-point=sb_schedule_simd@simd_bytes@ ", 0),
            0u);
  EXPECT_EQ(mlir_blocked_matmul_pipeline(false).rfind("--transform-interpreter ", 0), 0u);
  EXPECT_TRUE(mlir_native_tiles_wanted(0, 0));
  EXPECT_TRUE(mlir_native_tiles_wanted(0, 64));
  EXPECT_TRUE(mlir_native_tiles_wanted(4, 0));
  EXPECT_FALSE(mlir_native_tiles_wanted(4, 64));
  EXPECT_EQ(mlir_gemm_row_multiple(5), 5);
  const int64_t rows = mlir_gemm_row_multiple(0);
  EXPECT_GT(mlir_native_tiles().size(), 1u);
  for (const MlirNativeTile& t : mlir_native_tiles()) EXPECT_EQ(rows % t.mr, 0) << t.simd_bytes;
}

// A module with bf16 memory: every pipeline expands the bf16 conversions right before the arith
// lowering (no __truncsfbf2 call), once.
TEST(HostStrategyRegistry, MlirBf16PipelinesExpandConversions) {
  const std::string at = "--arith-expand=include-bf16=true --convert-arith-to-llvm ";
  for (const std::string& p :
       {mlir_loops_pipeline(), mlir_tiled_vector_pipeline(32, 4), mlir_openmp_pipeline(true),
        mlir_openmp_pipeline(false), mlir_blocked_matmul_pipeline(false),
        mlir_blocked_matmul_pipeline(true)}) {
    const std::string b = mlir_bf16_pipeline(p);
    EXPECT_NE(b.find(at), std::string::npos) << b;
    EXPECT_EQ(b.find("--arith-expand"), b.rfind("--arith-expand")) << b;
    EXPECT_EQ(b.size(), p.size() + std::string("--arith-expand=include-bf16=true ").size());
  }
}

// `specbench list --strategies` is the registries': one line per strategy with its backend (on
// the strategy's first line), name and algorithm class.
TEST(HostStrategyRegistry, ListStrategiesShowsEveryRecordWithItsClass) {
  const std::string text = format_strategies();
  for (const Emitter* e : all_emitters()) {
    for (const StrategyInfo& s : e->strategies()) {
      bool found = false;
      size_t pos = 0;
      while (!found && pos < text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        const std::string line = text.substr(pos, nl - pos);
        found = line.rfind(e->backend() + " ", 0) == 0 &&
                line.find(" " + s.name + " ") != std::string::npos &&
                line.find(" " + s.algorithm + " ") != std::string::npos;
        pos = nl + 1;
      }
      EXPECT_TRUE(found) << e->backend() << "/" << s.name << " (" << s.algorithm << ") in:\n"
                         << text;
    }
  }
}

// The fit check of each record, called on a vector add: only the contraction strategies
// (blocked_matmul, blas) need a shape, and they give an error at the variant naming it.
TEST(HostStrategyRegistry, FitChecksOfAVectorAddAndAMatmul) {
  const fs::path dir =
      fs::temp_directory_path() / ("sb_host_strategies_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "vadd.yaml") << "name: vadd\ndoc: test\nsizes:\n  N: {bench: [64], verify: "
                                      "[1, 7]}\n"
                                      "tensors:\n  a: {type: f32, shape: [N], role: in}\n"
                                      "  b: {type: f32, shape: [N], role: out}\n"
                                      "compute: |\n  b[i] = a[i] * 2.0\n"
                                      "variants:\n  cpu:\n    - {name: v, strategy: loops}\n";
  std::ofstream(dir / "mm.yaml")
      << "name: mm\ndoc: test\nsizes:\n  N: {bench: [64], verify: [1, 7]}\n"
         "tensors:\n  a: {type: f32, shape: [N, N], role: in}\n"
         "  b: {type: f32, shape: [N, N], role: in}\n"
         "  c: {type: f32, shape: [N, N], role: out}\n"
         "compute: |\n  c[i, j] = sum(k in 0..N: a[i, k] * b[k, j])\n"
         "variants:\n  cpu:\n    - {name: v, strategy: loops}\n";
  // A convolution, which only im2col needs (it runs contractions as blas does, so a matmul alone
  // does not fit it).
  std::ofstream(dir / "conv.yaml")
      << "name: conv\ndoc: test\nsizes:\n  N: {bench: [64], verify: [1, 7]}\n"
         "tensors:\n  x: {type: f32, shape: [N, N], role: in, boundary: zero}\n"
         "  w: {type: f32, shape: [N, N, 3], role: in}\n"
         "  y: {type: f32, shape: [N, N], role: out}\n"
         "compute: |\n  y[o, i] = sum(c in 0..N: sum(t in 0..3: w[o, c, t] * x[c, i + t - 1]))\n"
         "variants:\n  cpu:\n    - {name: v, strategy: loops}\n";
  Result<Spec> conv = load_and_check((dir / "conv.yaml").string());
  ASSERT_TRUE(conv.ok()) << conv.error().message;
  Result<Spec> vadd = load_and_check((dir / "vadd.yaml").string());
  ASSERT_TRUE(vadd.ok()) << vadd.error().message;
  Result<Spec> mm = load_and_check((dir / "mm.yaml").string());
  ASSERT_TRUE(mm.ok()) << mm.error().message;
  size_t shaped = 0;
  for (const Backend& b : host_backends()) {
    for (const host::HostStrategy& s : b.registry.all()) {
      Variant v = vadd.value().variants.at("cpu")[0];
      v.name = "x";
      v.strategy = s.info.name;
      const std::string who = b.emitter.backend() + "/" + s.info.name;
      // Through the emitter, as variant_check calls it.
      const bool im2col = s.schedule.im2col, attention = s.schedule.attention;
      EXPECT_EQ(b.emitter.check_variant(mm.value(), v).ok(), !im2col && !attention) << who;
      EXPECT_EQ(b.emitter.check_variant(conv.value(), v).ok(), !s.matches || im2col) << who;
      const Status st = b.emitter.check_variant(vadd.value(), v);
      ASSERT_EQ(st.ok(), !s.matches) << who;
      if (st.ok()) continue;
      ++shaped;
      EXPECT_EQ(st.error().loc.line, v.loc.line) << who;
      EXPECT_EQ(st.error().message, "variant 'x' (strategy " + s.info.name + ") needs " + s.needs +
                                        "; no statement of 'vadd' has that shape")
          << who;
    }
  }
  EXPECT_EQ(shaped, 9u);  // cpu, mojo and mlir blocked_matmul, vendor_cpu blas; cpu, mojo, mlir
                          // and vendor_cpu im2col; cpu flash_attention
  fs::remove_all(dir);
}

// A product of bf16 operands into f32: the blocked GEMMs of cpu and mojo (which widen while they
// pack), mlir's blocked_matmul (which widens while it copies the blocks its block products read)
// and vendor_cpu's blas (sgemm on widened copies) fit it; every host backend takes the
// spec's bf16 tensors (check_storage), vendor_cpu as the operands of that product.
TEST(HostStrategyRegistry, FitChecksOfABf16Matmul) {
  const fs::path dir =
      fs::temp_directory_path() / ("sb_host_strategies_bf16_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "mm16.yaml")
      << "name: mm16\ndoc: test\nsizes:\n  N: {bench: [64], verify: [1, 7]}\n"
         "tensors:\n  a: {type: bf16, shape: [N, N], role: in}\n"
         "  b: {type: bf16, shape: [N, N], role: in}\n"
         "  c: {type: f32, shape: [N, N], role: out}\n"
         "compute: |\n  c[i, j] = sum(k in 0..N: a[i, k] * b[k, j])\n"
         "variants:\n  cpu:\n    - {name: v, strategy: loops}\n";
  Result<Spec> mm = load_and_check((dir / "mm16.yaml").string());
  ASSERT_TRUE(mm.ok()) << mm.error().message;
  std::set<std::string> fit;
  for (const Backend& b : host_backends()) {
    EXPECT_TRUE(b.emitter.check_storage(mm.value(), Loc{}).ok()) << b.emitter.backend();
    for (const host::HostStrategy& s : b.registry.all()) {
      if (!s.matches) continue;
      Variant v = mm.value().variants.at("cpu")[0];
      v.strategy = s.info.name;
      if (b.emitter.check_variant(mm.value(), v).ok())
        fit.insert(b.emitter.backend() + "/" + s.info.name);
    }
  }
  EXPECT_EQ(fit, (std::set<std::string>{"cpu/blocked_matmul", "mojo/blocked_matmul",
                                        "mlir/blocked_matmul", "vendor_cpu/blas"}));
  fs::remove_all(dir);
}

// The matched comparison rows pair strategies of the same algorithm class. For the current
// registries the derived pairs are exactly the ones the harness used to name, and im2col's.
TEST(MatchedStrategies, DerivedFromAlgorithmClassesEqualTheFormerList) {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(matched_strategies("cpu", "mojo"), (Pairs{{"loops", "loops"},
                                                      {"omp_simd", "vectorize_parallel"},
                                                      {"blocked_matmul", "blocked_matmul"},
                                                      {"im2col", "im2col"}}));
  EXPECT_EQ(matched_strategies("cpu", "mlir"), (Pairs{{"loops", "loops"}, {"omp_simd", "openmp"}}));
  // The former list, one for every compared backend: the union of the derived pairs.
  const std::set<std::pair<std::string, std::string>> former = {
      {"loops", "loops"},
      {"omp_simd", "vectorize_parallel"},
      {"omp_simd", "openmp"},
      {"blocked_matmul", "blocked_matmul"},
      {"im2col", "im2col"}};
  std::set<std::pair<std::string, std::string>> derived;
  for (const BackendRecord* lang : compared_backends()) {
    if (lang->device != Device::Cpu) continue;
    for (const auto& p : matched_strategies(lang->baseline, lang->name)) derived.insert(p);
  }
  EXPECT_EQ(derived, former);
  EXPECT_TRUE(matched_strategies("cpu", "no_such_backend").empty());
}

}  // namespace
}  // namespace sb
