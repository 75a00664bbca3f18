// Unit tests of the vectorize pass (codegen/lower/vectorize.h): which loops a SIMD strategy
// vectorises in each statement, on its own and row by row; its `--dump-ir vectorize` text.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "lower/patterns.h"
#include "lower/pipeline.h"
#include "lower/row_fusion.h"
#include "lower/vectorize.h"
#include "rc_spec.h"

namespace sb {
namespace {

Spec planned(const std::string& tensors, const std::string& compute) {
  Spec s = load_rc_spec(tensors, compute);
  row_fusion(s);
  vectorize(s);
  return s;
}


TEST(Vectorize, ElementwiseRunsTheInnermostOutputLoop) {
  const Spec spec = planned(rc_tensors({"a", "x", "y", "v"}), "  y[r, c] = a[r, c] * 2\n  v[c] = x[c] + 1\n");
  const SimdChoice& y = spec.schedule.simd[0];
  EXPECT_EQ(y.whole, SimdLoops::Outputs);
  EXPECT_EQ(y.rows, SimdLoops::Outputs);  // a row still has the column loop
  EXPECT_TRUE(y.outside.empty());
  const SimdChoice& v = spec.schedule.simd[1];
  EXPECT_EQ(v.whole, SimdLoops::Outputs);
  EXPECT_EQ(v.rows, SimdLoops::None);  // a row of a rank-1 output is one element
}

TEST(Vectorize, AMatrixProductPutsItsSumOutsideTheColumnLoop) {
  // b[k, j]: contiguous in j, varying with k; the k loop goes outside j, and j is the vector loop.
  const Spec spec =
      planned(rc_tensors({"a", "b", "y"}), "  y[i, j] = sum(k in 0..C: a[i, k] * b[k, j])\n");
  const SimdChoice& c = spec.schedule.simd[0];
  EXPECT_EQ(c.whole, SimdLoops::Outputs);
  EXPECT_EQ(c.rows, SimdLoops::Outputs);
  const int k = spec.stmts[0].rhs->ref;
  EXPECT_EQ(c.outside, (std::set<int>{k}));
}

TEST(Vectorize, ARowSumVectorisesItsReduction) {
  // a[r, c] summed over c: the read is contiguous in the reduction, not in an output index.
  const Spec spec = planned(rc_tensors({"a", "y", "s"}),
                            "  s[r] = sum(c in 0..C: a[r, c])\n"
                            "  y[r, c] = a[r, c] / sum(k in 0..C: a[r, k])\n");
  const SimdChoice& s = spec.schedule.simd[0];
  EXPECT_EQ(s.whole, SimdLoops::Reductions);
  EXPECT_EQ(s.rows, SimdLoops::Reductions);
  EXPECT_TRUE(s.outside.empty());
  const SimdChoice& y = spec.schedule.simd[1];
  EXPECT_EQ(y.whole, SimdLoops::Reductions);
  EXPECT_TRUE(y.outside.empty());
}

TEST(Vectorize, AScalarVectorisesItsReductionsOrNothing) {
  const Spec spec = planned(rc_tensors({"x", "v", "z"}), "  z = sum(c in 0..C: x[c] * x[c])\n  v[c] = x[c]\n");
  EXPECT_EQ(spec.schedule.simd[0].whole, SimdLoops::Reductions);
  EXPECT_EQ(spec.schedule.simd[0].rows, SimdLoops::Reductions);
  const Spec plain = planned(rc_tensors({"x", "z"}), "  z = x[0] * 2\n");
  EXPECT_EQ(plain.schedule.simd[0].whole, SimdLoops::None);
  EXPECT_EQ(plain.schedule.simd[0].rows, SimdLoops::None);
}

TEST(Vectorize, OnlyTheReductionsWithAContiguousReadGoOutside) {
  // Two sums: the first reads b[k, j] (contiguous in j under k), the second x[k] only.
  const Spec spec = planned(rc_tensors({"b", "x", "y"}),
                            "  y[i, j] = sum(k in 0..C: b[k, j]) + sum(q in 0..C: x[q])\n");
  const Statement& st = spec.stmts[0];
  const std::vector<const Expr*> tops = top_reduces_of(*st.rhs);
  ASSERT_EQ(tops.size(), 2u);
  const SimdChoice& c = spec.schedule.simd[0];
  EXPECT_EQ(c.whole, SimdLoops::Outputs);
  EXPECT_EQ(c.outside, (std::set<int>{tops[0]->ref}));
}

TEST(Vectorize, AColumnSumPutsItsSumOutsideTheColumnLoop) {
  // a[r, c] summed over r for each c: the read is contiguous in the output index under r.
  const Spec spec = planned(rc_tensors({"a", "v"}), "  v[c] = sum(r in 0..R: a[r, c])\n");
  const SimdChoice& c = spec.schedule.simd[0];
  EXPECT_EQ(c.whole, SimdLoops::Outputs);
  EXPECT_EQ(c.outside, (std::set<int>{spec.stmts[0].rhs->ref}));
}

TEST(Vectorize, ASumWhoseRangeFollowsTheVectorIndexStaysInside) {
  // k runs to j: its loop cannot go outside the j loop, so the statement vectorises its sum.
  const Spec spec =
      planned(rc_tensors({"b", "y"}), "  y[i, j] = sum(k in 0..j + 1: b[k, j])\n");
  const SimdChoice& c = spec.schedule.simd[0];
  EXPECT_TRUE(c.outside.empty());
  EXPECT_EQ(c.whole, SimdLoops::Reductions);
  // A range that follows an outer output index only is fine.
  const Spec outer =
      planned(rc_tensors({"a", "y"}), "  y[i, j] = sum(k in 0..i + 1: a[k, j])\n");
  EXPECT_EQ(outer.schedule.simd[0].outside, (std::set<int>{outer.stmts[0].rhs->ref}));
}

TEST(Vectorize, TheRestOfAContractionHasItsOwnChoice) {
  const Spec spec = planned(
      rc_tensors({"a", "b", "bias", "y"}),
      "  y[i, j] = sum(k in 0..C: a[i, k] * b[k, j]) + bias[j]\n");
  const auto m = match_contraction(spec, spec.stmts[0]);
  ASSERT_TRUE(m && m->epilogue);
  const Statement epi = epilogue_statement(spec, spec.stmts[0], m->reduce);
  ASSERT_EQ(spec.schedule.epilogue_simd.size(), 1u);
  EXPECT_EQ(&simd_choice(spec, epi), &spec.schedule.epilogue_simd[0]);
  EXPECT_EQ(&simd_choice(spec, spec.stmts[0]), &spec.schedule.simd[0]);
  EXPECT_EQ(spec.schedule.epilogue_simd[0].whole, SimdLoops::Outputs);  // y = y + bias[j]
  EXPECT_TRUE(spec.schedule.epilogue_simd[0].outside.empty());
}

TEST(Vectorize, LowerRunsItAndItDumps) {
  const Spec spec = load_rc_spec(rc_tensors({"a", "s"}), "  s[r] = sum(c in 0..C: a[r, c])\n");
  EXPECT_FALSE(spec.schedule.vectorize_done);
  const Spec lowered = lower(spec, [](Fn) { return true; });
  ASSERT_TRUE(lowered.schedule.vectorize_done);
  EXPECT_EQ(dump_vectorize(lowered),
            "stmt 0 (s[r] = sum(c in 0..C: a[r, c])): alone reductions; by rows reductions\n");
}

}  // namespace
}  // namespace sb
