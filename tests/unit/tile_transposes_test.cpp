// Unit tests of the tile_transposes pass (codegen/lower/tile_transposes.h): which elementwise
// statements a parallel strategy runs in tiles, and over which output dimensions.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

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

TEST(TileTransposes, APlainFourByteReadAcrossRowsMovesInBlocks) {
  // y[r, c] = t[c, r]: the read's subscript 0 uses the innermost index c.
  const Spec mixed = planned({"a", "t", "y"}, "  y[r, c] = t[c, r] * 2 + a[r, c]\n");
  ASSERT_EQ(mixed.schedule.tiles.size(), 1u);
  EXPECT_EQ(mixed.schedule.tiles[0].dim, 0);
  EXPECT_EQ(mixed.schedule.tiles[0].block_axis, 0);
  // Offsets keep the blocks; a rank-3 read with an index between the tiled ones too.
  Spec o = load_rc_spec(
      "  u: {type: i32, shape: [C + 1, R + 2], role: in}\n"
      "  y: {type: i32, shape: [R, C], role: out}\n",
      "  y[r, c] = u[c + 1, r + 2]\n");
  tile_transposes(o);
  EXPECT_EQ(o.schedule.tiles[0].block_axis, 0);
  Spec rank3 = load_rc_spec(
      "  u: {type: f32, shape: [C, 3, R], role: in}\n"
      "  y: {type: f32, shape: [R, 3, C], role: out}\n",
      "  y[r, e, c] = u[c, e, r]\n");
  tile_transposes(rank3);
  EXPECT_EQ(rank3.schedule.tiles[0].dim, 0);
  EXPECT_EQ(rank3.schedule.tiles[0].block_axis, 0);
}

TEST(TileTransposes, OtherElementSizesBoundariesAndStridesDoNotMoveInBlocks) {
  for (const auto& [tensors, compute] : std::vector<std::pair<std::string, std::string>>{
           // 8-byte elements
           {"  u: {type: f64, shape: [C, R], role: in}\n"
            "  y: {type: f64, shape: [R, C], role: out}\n",
            "  y[r, c] = u[c, r]\n"},
           // a boundary rule
           {"  u: {type: f32, shape: [C, R], role: in, boundary: clamp}\n"
            "  y: {type: f32, shape: [R, C], role: out}\n",
            "  y[r, c] = u[c, r - 1]\n"},
           // a stride of 2 along the innermost index
           {"  u: {type: f32, shape: [2 * C, R], role: in}\n"
            "  y: {type: f32, shape: [R, C], role: out}\n",
            "  y[r, c] = u[2 * c, r]\n"},
           // the innermost index in two subscripts
           {"  u: {type: f32, shape: [C, C, R], role: in}\n"
            "  y: {type: f32, shape: [R, C], role: out}\n",
            "  y[r, c] = u[c, c, r]\n"},
           // the tiled index in an earlier subscript too
           {"  u: {type: f32, shape: [C, R, R], role: in}\n"
            "  y: {type: f32, shape: [R, C], role: out}\n",
            "  y[r, c] = u[c, r, r]\n"},
       }) {
    Spec s = load_rc_spec(tensors, compute);
    tile_transposes(s);
    ASSERT_EQ(s.schedule.tiles.size(), 1u) << compute;
    EXPECT_EQ(s.schedule.tiles[0].dim, 0) << compute;
    EXPECT_EQ(s.schedule.tiles[0].block_axis, -1) << compute;
  }
}

TEST(TileTransposes, TheShuffleNetworkTransposesEightRowsOfEight) {
  // Run the printers' network on lane values 10 * row + column.
  const TransposeNetwork& net = transpose_8x8_network();
  std::vector<std::array<int, 8>> v(8);
  for (int p = 0; p < 8; ++p)
    for (int l = 0; l < 8; ++l) v[p][l] = 10 * p + l;
  for (const Shuffle& sh : net.steps) {
    ASSERT_LT(sh.a, static_cast<int>(v.size()));
    ASSERT_LT(sh.b, static_cast<int>(v.size()));
    std::array<int, 8> out{};
    for (int l = 0; l < 8; ++l) {
      const int m = sh.mask[l];
      ASSERT_TRUE(m >= 0 && m < 16);
      out[l] = m < 8 ? v[sh.a][m] : v[sh.b][m - 8];
    }
    v.push_back(out);
  }
  EXPECT_EQ(net.steps.size(), 24u);  // 3 rounds of 8
  for (int q = 0; q < 8; ++q)
    for (int p = 0; p < 8; ++p) EXPECT_EQ(v.at(net.rows_out[q])[p], 10 * p + q) << q << " " << p;
}

TEST(TileTransposes, LowerRunsItAndItDumps) {
  const Spec s = load_rc_spec(rc_tensors({"a", "t", "y", "s"}),
                              "  y[r, c] = t[c, r]\n  s[r] = a[r, 0]\n");
  const Spec lowered = lower(s, [](Fn) { return true; });
  EXPECT_EQ(dump_tile_transposes(lowered),
            "stmt 0 (y[r, c] = t[c, r]): tiles r and c (read t[c, r]); the read in blocks\n"
            "stmt 1 (s[r] = a[r, 0]): no\n");
}

}  // namespace
}  // namespace sb
