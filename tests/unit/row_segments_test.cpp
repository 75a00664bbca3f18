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
    }};

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

}  // namespace
}  // namespace sb
