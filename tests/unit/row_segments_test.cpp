// Unit tests of the segment order of fused row kernels (codegen/backends/common/row_segments.h),
// spelled in a C-like test syntax.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/common/row_segments.h"

namespace sb {
namespace {

const SegmentSyntax kTest{
    [](const std::string& n, const std::string& v) { return n + " := " + v; },
    [](const std::string& c, const std::string& a, const std::string& b) {
      return c + " ? " + a + " : " + b;
    },
    "div",
    [](const std::string& ptr, const std::string& off, int bytes) {
      return "addr(" + ptr + ", " + off + ") / " + std::to_string(bytes);
    },
    [](const std::string& n, const std::string& v, DType t) {
      return n + " := widen<" + std::string(t == DType::F16 ? "f16" : "f32") + ">(" + v + ")";
    },
    [](const std::string& a, const std::string& i) { return a + "[" + i + "]"; },
    [](const std::string& v, const std::string& lo, const std::string& hi, const std::string& step) {
      return "for " + v + " from " + lo + " below " + hi + " by " + step;
    },
    [](const std::string& c) { return "if " + c; },
    [](const std::string& stmt, const std::string& comment) {
      return stmt + (comment.empty() ? "" : "  -- " + comment);
    }};

// The staging copy's lines, two spaces per block.
std::string copy(const std::string& lanes) {
  std::string out;
  int depth = 0;
  const SegmentWriter w{[&](const std::string& l) { out += std::string(2 * depth, ' ') + l + "\n"; },
                        [&](const std::string& h) {
                          out += std::string(2 * depth, ' ') + h + "\n";
                          ++depth;
                        },
                        [&] { --depth; }};
  staging_copy(kTest, w, "_x", "x", "r * C", "C", "rows", "off", "lane", lanes, DType::F16);
  EXPECT_EQ(depth, 0);
  return out;
}

TEST(RowSegments, SegmentsAre128BytesOfTheRowsElements) {
  const std::vector<std::string> f32 = segment_lines(kTest, "_t", "x", "r * C", "C", DType::F32);
  ASSERT_EQ(f32.size(), 3u);
  EXPECT_EQ(f32[0], "sb_lead_t := addr(x, r * C) / 4 % 32");
  EXPECT_EQ(f32[1], "sb_head_t := sb_lead_t == 0 ? 0 : (32 - sb_lead_t < C ? 32 - sb_lead_t : C)");
  EXPECT_EQ(f32[2], "sb_body_t := (C - sb_head_t) div 32 * 32");
  // A segment of f16 holds 64 elements, of f64 16.
  EXPECT_EQ(segment_lines(kTest, "", "h", "0", "C", DType::F16)[0], "sb_lead := addr(h, 0) / 2 % 64");
  EXPECT_EQ(segment_lines(kTest, "", "d", "0", "C", DType::F64)[0], "sb_lead := addr(d, 0) / 8 % 16");
}

TEST(RowSegments, SlotsVisitTheWholeSegmentsFirstThenTheHeadAndTail) {
  EXPECT_EQ(segment_element(kTest, "", "j"),
            "j < sb_body ? sb_head + j : (j < sb_body + sb_head ? j - sb_body : j)");
}

TEST(RowSegments, TheStagingCopyLoadsWithEveryLaneAndStoresOnlyRealSlots) {
  const std::string warp = copy("32");
  EXPECT_EQ(warp,
            "sb_lead_x := addr(x, r * C) / 2 % 64\n"
            "sb_head_x := sb_lead_x == 0 ? 0 : (64 - sb_lead_x < C ? 64 - sb_lead_x : C)\n"
            "sb_body_x := (C - sb_head_x) div 64 * 64\n"
            "for sb_j0 from 0 below C by 32\n"
            "  sb_j := sb_j0 + lane < C ? sb_j0 + lane : C - 1\n"
            "  sb_c := sb_j < sb_body_x ? sb_head_x + sb_j : (sb_j < sb_body_x + sb_head_x ? sb_j "
            "- sb_body_x : sb_j)\n"
            "  sb_v := widen<f16>(x[r * C + sb_c])\n"
            "  if sb_j == sb_j0 + lane\n"
            "    rows[off + sb_c] = sb_v\n");
  // A block of several warps: a warp whose first slot is past the row's end skips the pass.
  const std::string block = copy("256");
  EXPECT_NE(block.find("for sb_j0 from 0 below C by 256\n"
                       "  if sb_j0 + lane div 32 * 32 >= C\n"
                       "    continue  -- no slot for this warp\n"),
            std::string::npos)
      << block;
}

}  // namespace
}  // namespace sb
