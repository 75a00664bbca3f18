// Unit tests of the running_scans pass (codegen/lower/running_scans.h): which statements can be
// computed as a running accumulator along their innermost output index.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lower/pipeline.h"
#include "lower/running_scans.h"
#include "rc_spec.h"

namespace sb {
namespace {

Spec planned(const std::vector<std::string>& tensors, const std::string& compute) {
  Spec s = load_rc_spec(rc_tensors(tensors), compute);
  running_scans(s);
  return s;
}

int ref_of(const Statement& st) { return reduces_of(*st.rhs).front()->ref; }

TEST(RunningScans, InclusiveExclusiveAndRowWiseScansRun) {
  const Spec spec = planned({"a", "x", "y", "v"},
                            "  v[c] = sum(k in 0..c + 1: x[k])\n"
                            "  y[r, c] = 2 * max(k in 0..c: a[r, k] * a[r, k]) + 1\n");
  ASSERT_EQ(spec.schedule.running_scans.size(), 2u);
  EXPECT_EQ(spec.schedule.running_scans[0], ref_of(spec.stmts[0]));
  EXPECT_EQ(spec.schedule.running_scans[1], ref_of(spec.stmts[1]));  // inside an epilogue
  EXPECT_EQ(running_scan(spec, spec.stmts[1], /*rows=*/false), reduces_of(*spec.stmts[1].rhs).front());
  // Row by row, the rank-2 scan still runs along c; the rank-1 one would run along the row.
  EXPECT_EQ(running_scan(spec, spec.stmts[1], /*rows=*/true), reduces_of(*spec.stmts[1].rhs).front());
  EXPECT_EQ(running_scan(spec, spec.stmts[0], /*rows=*/true), nullptr);
}

TEST(RunningScans, ShapesWhoseRangesDoNotGrowByTheIndexDoNot) {
  const Spec spec = planned({"a", "x", "y", "v", "s"},
                            "  v[c] = sum(k in 0..C: x[k])\n"             // a fixed range
                            "  y[r, c] = sum(k in 0..r + 1: a[k, c])\n"   // grows with r, not c
                            "  s[r] = sum(k in 0..r + 1: a[k, 0])\n");    // rank 1, over r: runs
  EXPECT_EQ(spec.schedule.running_scans[0], -1);
  EXPECT_EQ(spec.schedule.running_scans[1], -1);
  EXPECT_EQ(spec.schedule.running_scans[2], ref_of(spec.stmts[2]));
  EXPECT_EQ(running_scan(spec, spec.stmts[0], /*rows=*/false), nullptr);
}

TEST(RunningScans, BodiesUsingTheIndexNestedReductionsAndScalarsDoNot) {
  for (const char* compute : {
           "  v[c] = sum(k in 0..c + 1: x[k] * x[c])\n",                   // uses c
           "  v[c] = sum(k in 0..c + 1: sum(q in 0..k + 1: x[q]))\n",      // nested
           "  v[c] = sum(k in 0..c + 1: x[k]) + max(q in 0..C: x[q])\n",   // two reductions
           "  z = sum(k in 0..C: x[k])\n",                                 // no output index
       }) {
    const Spec spec = planned({"x", compute[2] == 'z' ? "z" : "v"}, compute);
    ASSERT_EQ(spec.schedule.running_scans.size(), 1u) << compute;
    EXPECT_EQ(spec.schedule.running_scans[0], -1) << compute;
  }
}

TEST(RunningScans, LowerRunsItAndItDumps) {
  const Spec s = load_rc_spec(rc_tensors({"x", "v"}), "  v[c] = prod(k in 0..c + 1: x[k])\n");
  const Spec lowered = lower(s, [](Fn) { return true; });
  EXPECT_EQ(dump_running_scans(lowered),
            "stmt 0 (v[c] = prod(k in 0..(c + 1): x[k])): running prod over k along c\n");
}

TEST(RunningScans, TheVectorFormFitsFloatSumsProductsMaxAndMin) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min}) {
    EXPECT_TRUE(vector_scan_fits(op, DType::F32));
    EXPECT_TRUE(vector_scan_fits(op, DType::F64));
    EXPECT_FALSE(vector_scan_fits(op, DType::I32));
    EXPECT_FALSE(vector_scan_fits(op, DType::I64));
  }
  EXPECT_FALSE(vector_scan_fits(ReduceOp::ArgMax, DType::F32));
  EXPECT_EQ(vector_scan_lanes(DType::F32), 16);
  EXPECT_EQ(vector_scan_lanes(DType::F64), 8);
}

TEST(RunningScans, TheVectorStepsShiftByPowersOfTwoWithTheIdentityShiftedIn) {
  const std::vector<std::vector<int>> steps = vector_scan_steps(DType::F64);
  ASSERT_EQ(steps.size(), 3u);  // shifts 1, 2, 4 over 8 lanes
  EXPECT_EQ(vector_scan_mask(steps[0]), "8, 0, 1, 2, 3, 4, 5, 6");
  EXPECT_EQ(vector_scan_mask(steps[1]), "8, 8, 0, 1, 2, 3, 4, 5");
  EXPECT_EQ(vector_scan_mask(steps[2]), "8, 8, 8, 8, 0, 1, 2, 3");
  // Applied to x = 1, 2, ..., 8 with identity 0 and +, the steps give the inclusive prefix sums.
  std::vector<int> x = {1, 2, 3, 4, 5, 6, 7, 8};
  for (const std::vector<int>& mask : steps) {
    std::vector<int> next(8);
    for (int q = 0; q < 8; ++q) next[q] = (mask[q] == 8 ? 0 : x[mask[q]]) + x[q];
    x = next;
  }
  EXPECT_EQ(x, (std::vector<int>{1, 3, 6, 10, 15, 21, 28, 36}));
  EXPECT_EQ(vector_scan_steps(DType::F32).size(), 4u);
}

// A vector of terms is one load where the term is one plain read of the scan's type along k; a
// vector of outputs is one store where the scan is the whole right-hand side.
TEST(RunningScans, ContiguousTermsAndWholeOutputsAreNamed) {
  struct Case {
    std::vector<std::string> tensors;
    const char* compute;
    bool contiguous, whole;
  };
  for (const Case& c : std::vector<Case>{
           {{"x", "v"}, "  v[c] = sum(k in 0..c + 1: x[k])\n", true, true},
           {{"a", "y"}, "  y[r, c] = 2 * max(k in 0..c: a[r, k + 1])\n", true, false},
           {{"t", "y"}, "  y[r, c] = min(k in 0..c + 1: t[k, r])\n", false, true},
           {{"a", "y"}, "  y[r, c] = sum(k in 0..c + 1: a[r, k] * 2)\n", false, true},
           {{"b", "y"}, "  y[r, c] = sum(k in 0..c + 1: b[k, k])\n", false, true},
       }) {
    const Spec spec = planned(c.tensors, c.compute);
    const Expr& red = *reduces_of(*spec.stmts[0].rhs).front();
    const Expr* term = contiguous_scan_term(spec, red);
    EXPECT_EQ(term != nullptr, c.contiguous) << c.compute;
    if (term) {
      EXPECT_EQ(term, red.args[0].get()) << c.compute;
    }
    EXPECT_EQ(scan_is_output(spec, spec.stmts[0], red), c.whole) << c.compute;
  }
}

}  // namespace
}  // namespace sb
