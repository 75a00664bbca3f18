// Unit tests of the vendor_cuda strategy registry (codegen/backends/vendor_cuda/strategies/):
// exactly the three library strategies, each one record whose fit check accepts the spec shape it
// lowers and gives the located error on every other, and the emitter lists and checks through the
// registry.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "backends/vendor_cuda/emit_vendor_cuda.h"
#include "backends/vendor_cuda/strategies/strategy.h"
#include "driver.h"
#include "lower/patterns.h"

namespace sb {
namespace {

Result<Spec> load(const std::string& file) {
  return load_and_check(std::string(SB_TESTS_DIR) + "/unit/specs/" + file);
}

// A vendor_cuda variant `x` of `spec` under `strategy`, located where the spec's first variant is.
Variant variant_of(const Spec& spec, const std::string& strategy) {
  Variant v = spec.variants.begin()->second.at(0);
  v.name = "x";
  v.strategy = strategy;
  v.params.clear();
  return v;
}

TEST(VendorCudaStrategyRegistry, HoldsExactlyTheThreeLibraryStrategiesInOrder) {
  const auto& reg = vendor_cuda::strategy_registry();
  ASSERT_EQ(reg.size(), 3u);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"cublas", "vendor_gemm"}, {"cub_reduce", "vendor_reduce"}, {"cub_scan", "vendor_scan"}};
  const std::vector<StrategyInfo> listed = vendor_cuda_emitter().strategies();
  ASSERT_EQ(listed.size(), reg.size());
  for (size_t i = 0; i < reg.size(); ++i) {
    EXPECT_EQ(reg[i].info.name, want[i].first);
    EXPECT_EQ(reg[i].info.algorithm, want[i].second);
    EXPECT_TRUE(reg[i].info.params.empty()) << reg[i].info.name;
    EXPECT_FALSE(reg[i].info.doc.empty()) << reg[i].info.name;
    EXPECT_TRUE(static_cast<bool>(reg[i].lower)) << reg[i].info.name;
    EXPECT_EQ(listed[i].name, reg[i].info.name);
    EXPECT_EQ(listed[i].doc, reg[i].info.doc);
    EXPECT_EQ(listed[i].algorithm, reg[i].info.algorithm);
    EXPECT_EQ(vendor_cuda::find_strategy(reg[i].info.name), &reg[i]);
  }
  EXPECT_EQ(vendor_cuda::find_strategy("no_such_strategy"), nullptr);
  // Only cublas opens its launcher with the handle and needs the cuBLAS header and macros.
  EXPECT_TRUE(static_cast<bool>(reg[0].launcher_setup));
  EXPECT_FALSE(static_cast<bool>(reg[1].launcher_setup));
  EXPECT_FALSE(static_cast<bool>(reg[2].launcher_setup));
  EXPECT_EQ(reg[0].library_includes, std::vector<std::string>{"cublas_v2.h"});
  EXPECT_NE(reg[0].macros.find("SB_CUBLAS_CHECK"), std::string::npos);
  EXPECT_TRUE(reg[1].macros.empty());
  EXPECT_TRUE(reg[2].macros.empty());
}

// Each record's fit check on a contraction (matmul), a scalar reduction (dot), a scan
// (prefix_sum) and an elementwise statement (vadd): it fits exactly the spec of its shape, and
// otherwise gives the error at the variant naming its shape and the statement that lacks it.
TEST(VendorCudaStrategyRegistry, FitChecksAcceptTheirShapeOnlyWithALocatedError) {
  const std::map<std::string, std::string> fitting_spec = {
      {"cublas", "matmul.yaml"}, {"cub_reduce", "dot.yaml"}, {"cub_scan", "prefix_sum.yaml"}};
  const std::map<std::string, std::string> shape = {{"cublas", kContractionShape},
                                                    {"cub_reduce", kScalarReductionShape},
                                                    {"cub_scan", kScanShape}};
  for (const std::string file : {"matmul.yaml", "dot.yaml", "prefix_sum.yaml", "vadd.yaml"}) {
    const Result<Spec> r = load(file);
    ASSERT_TRUE(r.ok()) << file << ": " << r.error().message;
    const Spec& spec = r.value();
    ASSERT_EQ(spec.stmts.size(), 1u) << file;
    for (const vendor_cuda::VendorCudaStrategy& s : vendor_cuda::strategy_registry()) {
      const Variant v = variant_of(spec, s.info.name);
      const Status st = vendor_cuda::check_fit(s, spec, v);
      // The emitter's check is the record's.
      const Status via_emitter = vendor_cuda_emitter().check_variant(spec, v);
      ASSERT_EQ(via_emitter.ok(), st.ok()) << s.info.name << " on " << file;
      const bool fits = fitting_spec.at(s.info.name) == file;
      ASSERT_EQ(st.ok(), fits) << s.info.name << " on " << file;
      if (fits) continue;
      EXPECT_EQ(st.error().loc.line, v.loc.line) << s.info.name << " on " << file;
      EXPECT_EQ(st.error().loc.col, v.loc.col) << s.info.name << " on " << file;
      const Statement& bad = spec.stmts[0];
      EXPECT_EQ(st.error().message,
                "variant 'x' (strategy " + s.info.name +
                    ") needs every statement to have the shape " + shape.at(s.info.name) +
                    "; statement '" + source_text(bad, spec) + "' (line " +
                    std::to_string(bad.loc.line) + ") does not");
      EXPECT_EQ(via_emitter.error().message, st.error().message);
    }
  }
}

}  // namespace
}  // namespace sb
