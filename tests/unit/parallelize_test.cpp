// Unit tests of the parallelize pass (codegen/lower/parallelize.h): what a parallel strategy
// runs on threads in each statement, and which reductions can be computed apart.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "lower/parallelize.h"
#include "lower/patterns.h"
#include "lower/pipeline.h"
#include "rc_spec.h"

namespace sb {
namespace {

Spec planned(const std::string& tensors, const std::string& compute) {
  Spec s = load_rc_spec(tensors, compute);
  parallelize(s);
  return s;
}


int ref_of(const Statement& st, size_t i) { return top_reduces_of(*st.rhs).at(i)->ref; }

TEST(Parallelize, AnOutputRunsItsOutermostLoopInParallel) {
  const Spec spec = planned(rc_tensors({"a", "y", "v"}),
                            "  y[r, c] = a[r, c] * 2\n"
                            "  v[c] = sum(r in 0..R: a[r, c])\n");
  for (const ParallelChoice& c : spec.schedule.parallel) {
    EXPECT_EQ(c.loops, ParallelLoops::Outputs);
    EXPECT_TRUE(c.apart.empty());  // v's sum depends on c
  }
}

// Rank 4 and up: every output loop but the last two shares one parallel range, so that a batch
// of one still gives every thread work; ranks 1 to 3 keep the outermost loop alone.
TEST(Parallelize, OutputsOfRankFourOrMoreCollapseAllButTheirLastTwoLoops) {
  Spec s = load_rc_spec(
      "  a: {type: f32, shape: [R, C], role: in}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n"
      "  t: {type: f32, shape: [R, R, C], role: out}\n"
      "  q: {type: f32, shape: [R, C, R, C], role: out}\n"
      "  v: {type: f32, shape: [C], role: out}\n"
      "  p: {type: f32, shape: [R, C, R, R, C], role: out}\n",
      "  y[r, c] = a[r, c] * 2\n"
      "  t[i, r, c] = a[r, c] + a[i, c]\n"
      "  q[i, k, r, c] = sum(m in 0..C: a[r, m]) * a[i, k] + a[r, c]\n"
      "  v[c] = a[0, c]\n"
      "  p[h, i, k, r, c] = a[h, i] + a[k, c] + a[r, c]\n");
  parallelize(s);
  EXPECT_EQ(s.schedule.parallel[0].collapse, 1);
  EXPECT_EQ(s.schedule.parallel[1].collapse, 1);
  EXPECT_EQ(s.schedule.parallel[2].collapse, 2);
  EXPECT_EQ(s.schedule.parallel[3].collapse, 1);
  EXPECT_EQ(s.schedule.parallel[4].collapse, 3);
  for (const ParallelChoice& c : s.schedule.parallel) EXPECT_EQ(c.loops, ParallelLoops::Outputs);
  const std::string dump = dump_parallelize(s);
  EXPECT_NE(dump.find("stmt 2 (q[i, k, r, c] = "), std::string::npos) << dump;
  EXPECT_NE(dump.find("): outputs (2 loops collapsed)\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("): outputs (3 loops collapsed)\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("stmt 1 (t[i, r, c] = a[r, c] + a[i, c]): outputs\n"), std::string::npos)
      << dump;
}

TEST(Parallelize, AScalarSplitsItsTopLevelReductions) {
  const Spec spec = planned(rc_tensors({"a", "x", "z"}),
                            "  z = sum(c in 0..C: x[c]) * max(r in 0..R: sum(k in 0..C: a[r, k]))\n");
  const Statement& st = spec.stmts[0];
  const ParallelChoice& c = spec.schedule.parallel[0];
  EXPECT_EQ(c.loops, ParallelLoops::Reductions);
  // The two top-level reductions; the nested sum runs inside its thread.
  EXPECT_EQ(c.apart, (std::set<int>{ref_of(st, 0), ref_of(st, 1)}));
  const Spec plain = planned(rc_tensors({"x", "z"}), "  z = x[0] * 3\n");
  EXPECT_EQ(plain.schedule.parallel[0].loops, ParallelLoops::None);
  EXPECT_TRUE(plain.schedule.parallel[0].apart.empty());
}

TEST(Parallelize, AReductionNoOutputIndexReachesIsApart) {
  // The first sum depends on no output index; the second on r through its read, the third on c
  // through its range.
  const Spec spec = planned(rc_tensors({"a", "x", "y"}),
                            "  y[r, c] = sum(k in 0..C: x[k]) + sum(k in 0..C: a[r, k]) + "
                            "sum(k in 0..c: x[k])\n");
  const Statement& st = spec.stmts[0];
  const ParallelChoice& c = spec.schedule.parallel[0];
  EXPECT_EQ(c.loops, ParallelLoops::Outputs);
  EXPECT_EQ(c.apart, (std::set<int>{ref_of(st, 0)}));
}

TEST(Parallelize, TheRestOfAContractionHasItsOwnChoice) {
  const Spec spec = planned(
      rc_tensors({"a", "b", "bias", "y"}),
      "  y[i, j] = sum(k in 0..C: a[i, k] * b[k, j]) + bias[j]\n");
  const auto m = match_contraction(spec, spec.stmts[0]);
  ASSERT_TRUE(m && m->epilogue);
  const Statement epi = epilogue_statement(spec, spec.stmts[0], m->reduce);
  EXPECT_EQ(&parallel_choice(spec, epi), &spec.schedule.epilogue_parallel[0]);
  EXPECT_EQ(spec.schedule.epilogue_parallel[0].loops, ParallelLoops::Outputs);
}

TEST(Parallelize, LowerRunsItAndItDumps) {
  const Spec spec = load_rc_spec(rc_tensors({"x", "z"}), "  z = sum(c in 0..C: x[c])\n");
  EXPECT_FALSE(spec.schedule.parallelize_done);
  const Spec lowered = lower(spec, [](Fn) { return true; });
  ASSERT_TRUE(lowered.schedule.parallelize_done);
  EXPECT_EQ(dump_parallelize(lowered), "stmt 0 (z = sum(c in 0..C: x[c])): reductions; apart: c\n");
}

}  // namespace
}  // namespace sb
