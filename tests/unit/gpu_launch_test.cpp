// Unit tests of the GPU launch plan (codegen/backends/common/gpu_launch.h): the grids both GPU
// printers' launchers print, and the scan's shift.
#include <gtest/gtest.h>

#include <string>

#include "backends/common/gpu_launch.h"
#include "lower/patterns.h"
#include "rc_spec.h"

namespace sb {
namespace {

const char* kVec =
    "  u: {type: f32, shape: [C], role: in}\n"
    "  w: {type: f32, shape: [C], role: out}\n";
const char* kScalar =
    "  u: {type: f32, shape: [C], role: in}\n"
    "  d: {type: f32, shape: [], role: out}\n";

TEST(GpuLaunch, ElementGridsCapOnlyAGridStrideLoop) {
  const Spec spec = load_rc_spec(kVec, "  w[i] = u[i] * 2.0\n");
  HelperSet h;
  StmtLowering H(spec, spec.stmts[0], &h);
  CodeWriter once, stride;
  EXPECT_FALSE(element_grid(spec.stmts[0], 128, false, H, once));
  EXPECT_EQ(once.str(),
            "const int64_t sb_total = C;\n"
            "const unsigned sb_grid = (unsigned)((sb_total + 127) / 128);\n");
  EXPECT_TRUE(element_grid(spec.stmts[0], 256, true, H, stride));
  EXPECT_NE(stride.str().find("sb_blocks < sb_max_grid ? sb_blocks : sb_max_grid"),
            std::string::npos)
      << stride.str();
  CodeWriter vec;
  EXPECT_TRUE(vector_grid(spec.stmts[0], 4, 256, H, vec));
  EXPECT_NE(vec.str().find("const int64_t sb_vectors = (C + 3) / 4;\n"), std::string::npos)
      << vec.str();
}

TEST(GpuLaunch, AReductionsBlocksFitItsPartialsBuffer) {
  const Spec spec = load_rc_spec(kScalar, "  d = sum(i in 1..C: u[i])\n");
  const Statement& st = spec.stmts[0];
  const IndexVar& var = st.vars[0];
  HelperSet h;
  StmtLowering H(spec, st, &h);
  CodeWriter part, atomic;
  EXPECT_TRUE(reduce_blocks(var, 256, "sb_part", H, part));
  EXPECT_NE(part.str().find("const int64_t sb_n = C - 1;  // reduction length\n"),
            std::string::npos)
      << part.str();
  EXPECT_NE(part.str().find("if (sb_blocks > " + std::to_string(kMaxPartials) + ") sb_blocks = " +
                            std::to_string(kMaxPartials) + ";  // the size of sb_part\n"),
            std::string::npos)
      << part.str();
  EXPECT_TRUE(reduce_blocks(var, 256, "", H, atomic));  // atomics: no buffer to fit
  EXPECT_EQ(atomic.str().find(std::to_string(kMaxPartials)), std::string::npos) << atomic.str();
}

TEST(GpuLaunch, AScansShiftIsKnownForLiteralBounds) {
  auto shift = [](const std::string& compute) {
    const Spec spec = load_rc_spec(kVec, compute);
    ScanMatch m;
    std::string why;
    EXPECT_TRUE(match_scan(spec, spec.stmts[0], &m, &why)) << why;
    return m.red ? scan_shift(spec.stmts[0], m) : std::nullopt;
  };
  EXPECT_EQ(shift("  w[i] = sum(k in 0..i + 1: u[k])\n"), 0);  // inclusive
  EXPECT_EQ(shift("  w[i] = sum(k in 0..i: u[k])\n"), 1);      // exclusive
  EXPECT_EQ(shift("  w[i] = sum(k in 2..i + 1: u[k])\n"), 2);  // from 2
  EXPECT_EQ(shift("  w[i] = sum(k in C - C..i + 1: u[k])\n"), std::nullopt);  // lo not a literal
}

TEST(GpuLaunch, StencilBlocksSplitTheThreadsAlongTheOutputsDimensions) {
  EXPECT_EQ(stencil_block(1, 256, 0, 0), std::vector<int64_t>{256});
  EXPECT_EQ(stencil_block(2, 256, 32, 0), (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(stencil_block(3, 256, 8, 4), (std::vector<int64_t>{8, 4, 8}));
}

TEST(GpuLaunch, AStencilsHaloIsKnownNowOrBoundedAtRunTime) {
  auto lines = [](const std::string& compute) {
    const Spec spec = load_rc_spec(
        "  x: {type: f32, shape: [C], role: in, boundary: zero}\n"
        "  y: {type: f32, shape: [C], role: out}\n",
        compute);
    StencilMatch m;
    std::string why;
    EXPECT_TRUE(match_stencil(spec, spec.stmts[0], &m, &why)) << why;
    HelperSet h;
    StmtLowering H(spec, spec.stmts[0], &h);
    CodeWriter w;
    c_halo_lets(spec.stmts[0], m, H, w);
    return w.str();
  };
  EXPECT_EQ(lines("  y[i] = x[i - 1] + x[i + 2]\n"),
            "// Offsets of dimension 0 lie in [sb_lo0, sb_hi0].\n"
            "const int64_t sb_lo0 = -1;\n"
            "const int64_t sb_hi0 = 2;\n");
  const std::string window = lines("  y[i] = sum(k in 0..C: x[i + k])\n");
  EXPECT_NE(window.find("int64_t sb_lo0 = 0;\nint64_t sb_hi0 = 0;\n"), std::string::npos) << window;
  EXPECT_NE(window.find("sb_hi0 = sb_hi0 > C - 1 ? sb_hi0 : C - 1;"), std::string::npos) << window;
}

}  // namespace
}  // namespace sb
