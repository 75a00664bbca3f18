// The OpenBLAS core rule (harness/run/blas_core.h): a detected core narrower than the CPU's ISA is
// replaced by the core for that ISA; a right or unknown one is left alone.
#include "run/blas_core.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

using sb::VectorIsa;

TEST(BlasCore, FallbackCoresAreReplacedByTheHostsOwn) {
  EXPECT_EQ(sb::openblas_core_for("Prescott", VectorIsa::Avx512), "SkylakeX");
  EXPECT_EQ(sb::openblas_core_for("prescott", VectorIsa::Avx512), "SkylakeX");
  EXPECT_EQ(sb::openblas_core_for("Haswell", VectorIsa::Avx512), "SkylakeX");
  EXPECT_EQ(sb::openblas_core_for("Zen", VectorIsa::Avx512), "SkylakeX");
  EXPECT_EQ(sb::openblas_core_for("Nehalem", VectorIsa::Avx2), "Haswell");
  EXPECT_EQ(sb::openblas_core_for("Sandybridge", VectorIsa::Avx2), "Haswell");
  EXPECT_EQ(sb::openblas_core_for("Core2", VectorIsa::Avx), "Sandybridge");
}

TEST(BlasCore, RightOrUnknownCoresAreLeftAlone) {
  EXPECT_EQ(sb::openblas_core_for("SkylakeX", VectorIsa::Avx512), "");
  EXPECT_EQ(sb::openblas_core_for("SapphireRapids", VectorIsa::Avx512), "");
  EXPECT_EQ(sb::openblas_core_for("Cooperlake", VectorIsa::Avx2), "");
  EXPECT_EQ(sb::openblas_core_for("Haswell", VectorIsa::Avx2), "");
  EXPECT_EQ(sb::openblas_core_for("Zen", VectorIsa::Avx2), "");
  EXPECT_EQ(sb::openblas_core_for("Prescott", VectorIsa::Sse), "");
  // Names outside the table (another architecture, a newer core) are the library's business.
  EXPECT_EQ(sb::openblas_core_for("NeoverseN1", VectorIsa::Avx512), "");
  EXPECT_EQ(sb::openblas_core_for("", VectorIsa::Avx512), "");
  EXPECT_FALSE(sb::openblas_core_isa("Unknown").has_value());
}

TEST(BlasCore, NoLibraryNoChoice) {
  sb::BlasCoreChoice c = sb::choose_openblas_core("");
  EXPECT_TRUE(c.used.empty());
  EXPECT_TRUE(c.detected.empty());
}

// With the library this build found: it names a core, and afterwards it runs one that uses the
// CPU's widest ISA, unless it detected that already or the build lacks those kernels.
TEST(BlasCore, TheLibraryRunsTheHostsWidestCore) {
  const std::string lib = SPECBENCH_OPENBLAS_LIBRARY;
  if (lib.empty()) GTEST_SKIP() << "OpenBLAS was not found when specbench was built";
  ASSERT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr) << "the test needs the library's own pick";
  sb::BlasCoreChoice c = sb::choose_openblas_core(lib);
  ASSERT_FALSE(c.detected.empty()) << c.why;
  ASSERT_FALSE(c.used.empty()) << c.why;
  const VectorIsa host = sb::host_vector_isa();
  const std::string want = sb::openblas_core_for(c.detected, host);
  if (want.empty()) {
    EXPECT_EQ(c.used, c.detected) << c.why;
    EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr);
  } else if (c.why.find("does not run") == std::string::npos) {
    EXPECT_EQ(c.used, want) << c.why;
    ASSERT_NE(std::getenv("OPENBLAS_CORETYPE"), nullptr);
    EXPECT_EQ(std::string(std::getenv("OPENBLAS_CORETYPE")), want);
    EXPECT_NE(c.why.find("set by specbench"), std::string::npos) << c.why;
  }
  ::unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace
