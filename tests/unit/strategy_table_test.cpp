// The language reference's strategy table (specs/README.md) is the registry's: every backend's
// strategies with their parameters, defaults, ranges and docs, as strategy_table_markdown()
// prints them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "backends/emitter.h"

namespace sb {
namespace {

TEST(StrategyTable, LanguageReferenceListsEveryStrategyOfEveryBackend) {
  std::ifstream in(std::string(SB_TESTS_DIR) + "/../specs/README.md");
  ASSERT_TRUE(in) << "specs/README.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string table = strategy_table_markdown();
  EXPECT_NE(ss.str().find(table), std::string::npos)
      << "specs/README.md's strategy table differs from the strategies the emitters register; "
         "replace it with:\n"
      << table;
}

TEST(StrategyTable, HasARowPerStrategy) {
  const std::string table = strategy_table_markdown();
  size_t rows = 0, strategies = 0;
  for (char c : table) rows += c == '\n';
  // A derived backend (mojo_gpu) has its source's strategies, listed once, under the source.
  for (const Emitter* e : all_emitters())
    if (e->derived_from().empty()) strategies += e->strategies().size();
  EXPECT_EQ(rows, strategies + 2);  // the header and its rule
  EXPECT_EQ(table.find("`mojo_gpu`"), std::string::npos);
  EXPECT_NE(table.find("| `cuda` | `register_blocked_matmul` | `register_blocked_gemm` | `bm`: 64 "
                       "(16..256, power of 2)"),
            std::string::npos);
  // A host backend's record, with its algorithm class.
  EXPECT_NE(table.find("| `mojo` | `loops` | `naive` | — |"), std::string::npos);
  EXPECT_NE(table.find("| `mojo` | `vectorize_parallel` | `parallel_simd` | `tile`: 512 "),
            std::string::npos);
}

}  // namespace
}  // namespace sb
