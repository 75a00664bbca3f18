// Unit tests of the row_fusion pass (codegen/lower/row_fusion.h): which statements run as one
// loop over rows, which temps are held one row at a time, and its `--dump-ir row_fusion` text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver.h"
#include "lower/pipeline.h"
#include "lower/row_fusion.h"
#include "rc_spec.h"

namespace sb {
namespace {

Spec fused(const std::string& tensors, const std::string& compute) {
  Spec spec = load_rc_spec(tensors, compute);
  row_fusion(spec);
  return spec;
}

std::vector<std::string> names(const Spec& spec, const std::vector<int>& ts) {
  std::vector<std::string> out;
  for (int t : ts) out.push_back(spec.tensors[t].name);
  return out;
}

const char* kSoftmaxTensors =
    "  x: {type: f32, shape: [R, C], role: in}\n"
    "  m: {type: f32, shape: [R], role: temp}\n"
    "  e: {type: f32, shape: [R, C], role: temp}\n"
    "  s: {type: f32, shape: [R], role: temp}\n"
    "  y: {type: f32, shape: [R, C], role: out}\n";
// The same and v, an output of another first extent (C).
const std::string kSoftmaxTensorsV =
    std::string(kSoftmaxTensors) + "  v: {type: f32, shape: [C], role: out}\n";

const char* kSoftmax =
    "  m[r] = max(c in 0..C: x[r, c])\n"
    "  e[r, c] = exp(x[r, c] - m[r])\n"
    "  s[r] = sum(c in 0..C: e[r, c])\n"
    "  y[r, c] = e[r, c] / s[r]\n";

TEST(RowFusion, SoftmaxIsOneGroupWithItsTempsRowLocal) {
  const Spec spec = fused(kSoftmaxTensorsV, std::string(kSoftmax) + "  v[c] = x[0, c] * 2\n");
  EXPECT_TRUE(spec.schedule.row_fusion_done);
  ASSERT_EQ(spec.schedule.row_groups.size(), 1u);
  const RowGroup& g = spec.schedule.row_groups[0];
  EXPECT_EQ(g.first, 0u);
  EXPECT_EQ(g.last, 3u);  // v has another first extent (C): not in the group
  EXPECT_EQ(names(spec, g.row_local), (std::vector<std::string>{"m", "e", "s"}));
}

TEST(RowFusion, ATempReadOutsideTheGroupStaysInMemory) {
  // e is read again by v, after the group: it must be in memory.
  const Spec spec = fused(kSoftmaxTensorsV, std::string(kSoftmax) + "  v[c] = e[0, c] * 2\n");
  ASSERT_EQ(spec.schedule.row_groups.size(), 1u);
  EXPECT_EQ(spec.schedule.row_groups[0].last, 3u);
  EXPECT_EQ(names(spec, spec.schedule.row_groups[0].row_local),
            (std::vector<std::string>{"m", "s"}));
}

TEST(RowFusion, OutputsAreNeverRowLocal) {
  const Spec spec = fused(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  m: {type: f32, shape: [R], role: out}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  m[r] = max(c in 0..C: x[r, c])\n"
      "  y[r, c] = x[r, c] - m[r]\n");
  ASSERT_EQ(spec.schedule.row_groups.size(), 1u);
  EXPECT_EQ(spec.schedule.row_groups[0].first, 0u);
  EXPECT_EQ(spec.schedule.row_groups[0].last, 1u);
  EXPECT_TRUE(spec.schedule.row_groups[0].row_local.empty());
}

TEST(RowFusion, NoGroupWithoutOwnRowReadsOrLongRows) {
  // A read of another row than the statement's own breaks the group.
  EXPECT_TRUE(fused("  x: {type: f32, shape: [R, C], role: in}\n"
                    "  m: {type: f32, shape: [R], role: temp}\n"
                    "  y: {type: f32, shape: [R, C], role: out}\n",
                    "  m[r] = max(c in 0..C: x[r, c])\n"
                    "  y[r, c] = x[r, c] - m[0]\n")
                  .schedule.row_groups.empty());
  // Elementwise statements of rank 1 are left to the streaming form.
  EXPECT_TRUE(fused("  x: {type: f32, shape: [R], role: in}\n"
                    "  t: {type: f32, shape: [R], role: temp}\n"
                    "  y: {type: f32, shape: [R], role: out}\n",
                    "  t[r] = x[r] * 2\n"
                    "  y[r] = t[r] + 1\n")
                  .schedule.row_groups.empty());
}

TEST(RowFusion, LowerFillsTheGroups) {
  Spec spec = fused(kSoftmaxTensors, kSoftmax);
  spec.schedule = Schedule{};  // as loaded: no decisions yet
  const Spec lowered = lower(spec, [](Fn) { return true; });
  ASSERT_EQ(lowered.schedule.row_groups.size(), 1u);
  EXPECT_EQ(lowered.schedule.row_groups[0].last, 3u);
}

TEST(RowFusion, DumpListsGroupsAndRowLocalTemps) {
  const Spec spec = lower(fused(kSoftmaxTensors, kSoftmax), [](Fn) { return true; });
  EXPECT_EQ(dump_row_fusion(spec),
            "row group stmts 0..3, row-local: m, e, s\n"
            "  stmt 0: m[r] = max(c in 0..C: x[r, c])\n"
            "  stmt 1: e[r, c] = exp(x[r, c] - m[r])\n"
            "  stmt 2: s[r] = sum(c in 0..C: e[r, c])\n"
            "  stmt 3: y[r, c] = e[r, c] / s[r]\n");
  const Spec none = lower(fused("  x: {type: f32, shape: [R], role: in}\n"
                                "  y: {type: f32, shape: [R], role: out}\n",
                                "  y[r] = x[r] * 2\n"),
                          [](Fn) { return true; });
  EXPECT_EQ(dump_row_fusion(none), "no row groups\n");
}

}  // namespace
}  // namespace sb
