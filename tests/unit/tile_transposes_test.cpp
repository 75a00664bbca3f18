// Unit tests of the tile_transposes pass (codegen/lower/tile_transposes.h): which elementwise
// statements a parallel strategy runs in tiles, and over which output dimensions.
#include <gtest/gtest.h>

#include <string>

#include "lower/pipeline.h"
#include "lower/tile_transposes.h"
#include "rc_spec.h"

namespace sb {
namespace {

Spec planned(const std::vector<std::string>& tensors, const std::string& compute) {
  Spec s = load_rc_spec(rc_tensors(tensors), compute);
  tile_transposes(s);
  return s;
}

TEST(TileTransposes, AReadAcrossRowsTilesTheDimensionOfItsLastSubscript) {
  const Spec plain = planned({"t", "y"}, "  y[r, c] = t[c, r]\n");
  ASSERT_EQ(plain.schedule.tiles.size(), 1u);
  EXPECT_EQ(plain.schedule.tiles[0].dim, 0);
  EXPECT_EQ(plain.schedule.tiles[0].read, 0);
  EXPECT_EQ(tile_choice(plain, plain.stmts[0]).dim, 0);
  // The second read decides.
  const Spec mixed = planned({"a", "t", "y"}, "  y[r, c] = a[r, c] * t[c, r]\n");
  ASSERT_EQ(mixed.schedule.tiles.size(), 1u);
  EXPECT_EQ(mixed.schedule.tiles[0].dim, 0);
  EXPECT_EQ(mixed.schedule.tiles[0].read, 1);
}

TEST(TileTransposes, RowReadsColumnReadsReductionsAndRankOneDoNot) {
  for (const char* compute : {
           "  y[r, c] = a[r, c] + x[c]\n",                // contiguous along c
           "  y[r, c] = t[c, 0]\n",                       // across rows, but r unused: no tile
           "  y[r, c] = sum(k in 0..R: t[c, k]) + a[r, c]\n",  // a reduction
           "  v[c] = t[c, 0]\n",                          // rank 1
       }) {
    const Spec spec = planned({"a", "t", "x", compute[2] == 'v' ? "v" : "y"}, compute);
    ASSERT_EQ(spec.schedule.tiles.size(), 1u) << compute;
    EXPECT_EQ(spec.schedule.tiles[0].dim, -1) << compute;
  }
}

TEST(TileTransposes, LowerRunsItAndItDumps) {
  const Spec s = load_rc_spec(rc_tensors({"a", "t", "y", "s"}),
                              "  y[r, c] = t[c, r]\n  s[r] = a[r, 0]\n");
  const Spec lowered = lower(s, [](Fn) { return true; });
  EXPECT_EQ(dump_tile_transposes(lowered),
            "stmt 0 (y[r, c] = t[c, r]): tiles r and c (read t[c, r])\n"
            "stmt 1 (s[r] = a[r, 0]): no\n");
}

}  // namespace
}  // namespace sb
