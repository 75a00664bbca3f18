// Bytes moved and floating-point operations derived from the IR.
#include <gtest/gtest.h>

#include <string>

#include "driver.h"
#include "run/metrics.h"
#include "rc_spec.h"

namespace sb {
namespace {

void load(const std::string& file, Spec* out) {
  Result<Spec> r = load_and_check(std::string(SB_TESTS_DIR) + "/unit/specs/" + file);
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  *out = std::move(r.value());
}

TEST(Metrics, VectorAdd) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("vadd.yaml", &s));
  EXPECT_EQ(bytes_moved(s, {1000}), 3 * 1000 * 4);  // two f32 inputs read, one output written
  EXPECT_EQ(flops(s, {1000}), 1000.0);
}

TEST(Metrics, MatmulIsTwoMNK) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("matmul.yaml", &s));
  const int64_t M = 64, N = 32, K = 16;
  EXPECT_EQ(flops(s, {M, N, K}), 2.0 * M * N * K);
  EXPECT_EQ(bytes_moved(s, {M, N, K}), (M * K + K * N + M * N) * 4);
  EXPECT_EQ(flops(s, {2048, 2048, 2048}), 2.0 * 2048 * 2048 * 2048);
}

TEST(Metrics, AGatherCountsTheElementsItTouches) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("gather.yaml", &s));
  const int64_t R = 64, V = 1000, C = 16;
  // probs: one element per row (R, not R * V); wte: one row of C per position (R * C, not
  // V * C); targets, bias (a broadcast: once), losses and emb whole.
  EXPECT_EQ(bytes_moved(s, {R, V, C}), (R + R * C + R + C + R + R * C) * 4);
  // At most the whole tensor: more positions than rows of wte touch every row once at most.
  const int64_t R2 = 5000;
  EXPECT_EQ(bytes_moved(s, {R2, V, C}), (R2 + V * C + R2 + C + R2 + R2 * C) * 4);
}

TEST(Metrics, TemporariesCountInFlopsButNotInBytes) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("softmax.yaml", &s));
  const int64_t R = 17, C = 130;
  // rowmax: one compare per term; e: a subtraction and an exp; rowsum: one add per term;
  // y: one division.
  EXPECT_EQ(flops(s, {R, C}), 5.0 * R * C);
  EXPECT_EQ(bytes_moved(s, {R, C}), 2 * R * C * 4);
}

TEST(Metrics, RunningScanCountsEachTermOnce) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("prefix_sum.yaml", &s));
  for (int64_t n : {1, 2, 7, 8, 1000}) {
    EXPECT_EQ(flops(s, {n}), static_cast<double>(n)) << n;  // one add per term, not n(n + 1)/2
    EXPECT_EQ(bytes_moved(s, {n}), 2 * n * 8);
  }
  // Row-wise, exclusive: each row's C - 1 terms, each the multiply, the select (1), its compare
  // and its costlier branch (x - 1).
  const Spec rows = load_rc_spec(rc_tensors({"a", "y"}),
                                 "  y[r, c] = prod(k in 0..c: select(a[r, k] < 0, a[r, k] - 1, "
                                 "a[r, k] + 1))\n");
  EXPECT_DOUBLE_EQ(flops(rows, {4, 6}), 4.0 * 5 * 4);
}

TEST(Metrics, TriangularRangeThatIsNoScanCountsEveryTerm) {
  // The body uses c: no running walk computes it, each output sums its own c + 1 terms.
  const Spec s = load_rc_spec(rc_tensors({"x", "v"}), "  v[c] = sum(k in 0..c + 1: x[k] * x[c])\n");
  for (int64_t n : {1, 2, 7, 8, 1000})
    EXPECT_DOUBLE_EQ(flops(s, {3, n}), 2.0 * n * (n + 1) / 2) << n;  // a multiply, an add per term
}

TEST(Metrics, ConvolutionAndScalarOutput) {
  Spec conv;
  ASSERT_NO_FATAL_FAILURE(load("conv1d.yaml", &conv));
  EXPECT_EQ(flops(conv, {13, 5}), 2.0 * 13 * 5);
  EXPECT_EQ(bytes_moved(conv, {13, 5}), (13 + 5 + 13) * 4);
  Spec dot;
  ASSERT_NO_FATAL_FAILURE(load("dot.yaml", &dot));
  EXPECT_EQ(flops(dot, {10}), 20.0);
  EXPECT_EQ(bytes_moved(dot, {10}), (10 + 10 + 1) * 8);
}

TEST(Metrics, IntegerArithmeticIsFree) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("intops.yaml", &s));
  // q, r and t are integer-only; h = f32(i / 2) + f32(a[i]) costs one float addition.
  EXPECT_EQ(flops(s, {8}), 8.0);
  EXPECT_EQ(bytes_moved(s, {8}), 8 * 4 * 6);
}

}  // namespace
}  // namespace sb
