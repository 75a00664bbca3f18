// Unit tests of the cuda strategy registry (codegen/backends/cuda/strategies/strategy.h): every
// strategy is one record with a schedule, a fit check where it has a shape, parameters whose
// defaults lie in their ranges, and the emitter's strategy list is the registry's.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "backends/cuda/emit_cuda.h"
#include "backends/cuda/strategies/strategy.h"
#include "driver.h"

namespace sb {
namespace {

namespace fs = std::filesystem;

TEST(CudaStrategyRegistry, NamesAreUniqueAndTheEmitterListsThemInOrder) {
  const auto& reg = cuda::strategy_registry();
  const std::vector<StrategyInfo> listed = cuda_emitter().strategies();
  ASSERT_EQ(listed.size(), reg.size());
  EXPECT_EQ(reg.size(), 14u);
  std::set<std::string> names;
  for (size_t i = 0; i < reg.size(); ++i) {
    EXPECT_TRUE(names.insert(reg[i].info.name).second) << reg[i].info.name << " twice";
    EXPECT_EQ(listed[i].name, reg[i].info.name);
    EXPECT_EQ(listed[i].doc, reg[i].info.doc);
    EXPECT_EQ(listed[i].params.size(), reg[i].info.params.size());
    EXPECT_EQ(cuda::find_cuda_strategy(reg[i].info.name), &reg[i]);
  }
  EXPECT_EQ(cuda::find_cuda_strategy("no_such_strategy"), nullptr);
}

TEST(CudaStrategyRegistry, EveryStrategyHasAPlacementAndAFitCheckUnlessItFitsEverything) {
  for (const cuda::CudaStrategy& s : cuda::strategy_registry()) {
    EXPECT_TRUE(static_cast<bool>(s.place)) << s.info.name;
    EXPECT_FALSE(s.info.doc.empty()) << s.info.name;
    const bool everywhere = s.info.name == "thread_per_output" || s.info.name == "grid_stride";
    EXPECT_EQ(static_cast<bool>(s.matches), !everywhere) << s.info.name;
    EXPECT_EQ(s.needs.empty(), everywhere) << s.info.name;
  }
}

TEST(CudaStrategyRegistry, ParameterDefaultsLieInTheirRanges) {
  for (const cuda::CudaStrategy& s : cuda::strategy_registry()) {
    std::set<std::string> names;
    for (const ParamInfo& p : s.info.params) {
      const std::string who = s.info.name + "." + p.name;
      EXPECT_TRUE(names.insert(p.name).second) << who << " twice";
      EXPECT_LE(p.min, p.def) << who;
      EXPECT_LE(p.def, p.max) << who;
      EXPECT_FALSE(p.doc.empty()) << who;
      if (p.power_of_two) {
        for (int64_t x : {p.min, p.def, p.max}) EXPECT_EQ(x & (x - 1), 0) << who << ": " << x;
      }
    }
  }
}

TEST(CudaStrategyRegistry, OnlyTheRowStrategiesFuseRows) {
  for (const cuda::CudaStrategy& s : cuda::strategy_registry()) {
    const RowUnit want = s.info.name == "warp_per_row"    ? RowUnit::Warp
                               : s.info.name == "block_per_row" ? RowUnit::Block
                                                                : RowUnit::None;
    EXPECT_EQ(s.fuse.rows, want) << s.info.name;
  }
}

TEST(CudaStrategyRegistry, OnlyFlashAttentionFusesAttention) {
  for (const cuda::CudaStrategy& s : cuda::strategy_registry())
    EXPECT_EQ(s.fuse.attention, s.info.name == "flash_attention") << s.info.name;
}

// The fit check of each record, called directly on a vector add: the elementwise strategies fit
// it, every other one gives a located error that names the strategy and what it needs.
TEST(CudaStrategyRegistry, FitChecksOfAVectorAdd) {
  const fs::path dir =
      fs::temp_directory_path() / ("sb_cuda_strategies_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / "vadd.yaml";
  std::ofstream(path) << "name: vadd\ndoc: test\nsizes:\n  N: {bench: [64], verify: [1, 7]}\n"
                         "tensors:\n  a: {type: f32, shape: [N], role: in}\n"
                         "  b: {type: f32, shape: [N], role: out}\n"
                         "compute: |\n  b[i] = a[i] * 2.0\n"
                         "variants:\n  cuda:\n    - {name: v, strategy: vectorized}\n";
  Result<Spec> r = load_and_check(path.string());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Spec& spec = r.value();
  ASSERT_EQ(spec.variants.at("cuda").size(), 1u);
  for (const cuda::CudaStrategy& s : cuda::strategy_registry()) {
    Variant v = spec.variants.at("cuda")[0];
    v.name = "x";
    v.strategy = s.info.name;
    const Status st = cuda::check_fit(s, spec, v, s.info);
    const bool fits = s.info.name == "thread_per_output" || s.info.name == "grid_stride" ||
                      s.info.name == "vectorized";
    ASSERT_EQ(st.ok(), fits) << s.info.name;
    if (fits) continue;
    EXPECT_EQ(st.error().loc.line, v.loc.line) << s.info.name;
    EXPECT_NE(st.error().message.find("strategy '" + s.info.name + "' of variant 'x' fits no"),
              std::string::npos)
        << st.error().message;
    EXPECT_NE(st.error().message.find(s.needs), std::string::npos) << st.error().message;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sb
