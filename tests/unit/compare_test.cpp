// Verification of output tensors against the reference: detection, indices, sampling, messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "run/buffers.h"
#include "results/compare.h"
#include "driver.h"
#include "run/reference.h"

namespace sb {
namespace {

void load(const std::string& file, Spec* out) {
  Result<Spec> r = load_and_check(std::string(SB_TESTS_DIR) + "/unit/specs/" + file);
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  *out = std::move(r.value());
}

// Fills tensor `t` of `h` with the reference's values (rounded to the tensor's type).
void fill_correct(const Spec& s, const SizePoint& z, HostTensors& h, int t) {
  Reference ref(s, z, h);
  for (int64_t i = 0; i < h[t].elements; ++i) h[t].set(i, ref.element(t, i).value);
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

TEST(Compare, CorrectOutputPasses) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("vadd.yaml", &s));
  const SizePoint z{100};
  const int c = s.find_tensor("c");
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 1);
  fill_correct(s, z, h, c);
  Reference ref(s, z, h);
  CompareResult r = compare_tensor(s, z, c, h[c], ref, 0, 0);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.checked, 100);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_TRUE(r.first.empty());
  EXPECT_LT(r.max_abs_err, 1e-6);  // only the rounding of the sum to f32
}

// Inputs are drawn in chunks on several threads: the values depend on the seed, the tensor and
// the element only. A small tensor is a prefix of a large one, two draws agree, seeds differ,
// every value is in the init range, and outputs start as NaN.
TEST(Inputs, DrawnPerElementNotPerThread) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("vadd.yaml", &s));
  const int a = s.find_tensor("a");
  const int c = s.find_tensor("c");
  const int64_t big = 5 * 65536 + 123;  // several chunks, a partial last one
  HostTensors small = make_host_tensors(s, SizePoint{1000}, InputKind::Random, 7);
  HostTensors large = make_host_tensors(s, SizePoint{big}, InputKind::Random, 7);
  HostTensors again = make_host_tensors(s, SizePoint{big}, InputKind::Random, 7);
  HostTensors other = make_host_tensors(s, SizePoint{big}, InputKind::Random, 8);
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(small[a].get(i), large[a].get(i)) << i;
  EXPECT_EQ(large[a].bytes, again[a].bytes);
  EXPECT_NE(large[a].bytes, other[a].bytes);
  int64_t same_as_chunk0 = 0;
  for (int64_t i = 0; i < big; ++i) {
    const double v = large[a].get(i);
    ASSERT_TRUE(v >= s.tensors[a].init_lo && v <= s.tensors[a].init_hi) << i << ": " << v;
    // Chunks do not repeat chunk 0's stream.
    if (i >= 65536 && v == large[a].get(i - 65536)) ++same_as_chunk0;
  }
  EXPECT_LT(same_as_chunk0, 10);
  EXPECT_TRUE(std::isnan(large[c].get(0)) && std::isnan(large[c].get(big - 1)));
}

TEST(Compare, FindsAPlantedWrongElement) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("vadd.yaml", &s));
  const SizePoint z{100};
  const int c = s.find_tensor("c");
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 1);
  fill_correct(s, z, h, c);
  const double right = h[c].get(37);
  h[c].set(37, right + 0.5);
  Reference ref(s, z, h);
  CompareResult r = compare_tensor(s, z, c, h[c], ref, 0, 0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.checked, 100);
  EXPECT_EQ(r.mismatches, 1);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].flat, 37);
  EXPECT_EQ(r.first[0].index, std::vector<int64_t>{37});
  EXPECT_NEAR(r.first[0].expected, right, 1e-6);
  EXPECT_EQ(r.first[0].actual, static_cast<double>(static_cast<float>(right + 0.5)));
  EXPECT_NEAR(r.max_abs_err, 0.5, 1e-6);

  const std::string msg = describe_failure(s, "cpu", "loops", z, c, r);
  EXPECT_TRUE(contains(msg, "vadd cpu/loops at N=100")) << msg;
  EXPECT_TRUE(contains(msg, "tensor c")) << msg;
  EXPECT_TRUE(contains(msg, "1 of 100 checked elements differ")) << msg;
  EXPECT_TRUE(contains(msg, "c[37] (flat 37): expected ")) << msg;
  EXPECT_TRUE(contains(msg, "> tolerance")) << msg;
}

TEST(Compare, UnwrittenElementsFailAndAreNamed) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("vadd.yaml", &s));
  const SizePoint z{100};
  const int c = s.find_tensor("c");
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 2);
  const HostTensor sentinel = h[c];
  fill_correct(s, z, h, c);
  // The kernel "forgot" elements 5 and 90: they still hold the NaN sentinel.
  h[c].set(5, sentinel.get(5));
  h[c].set(90, sentinel.get(90));
  ASSERT_TRUE(std::isnan(h[c].get(5)));
  Reference ref(s, z, h);
  CompareResult r = compare_tensor(s, z, c, h[c], ref, 0, 0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 2);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].flat, 5);
  EXPECT_EQ(r.first[1].flat, 90);
  EXPECT_TRUE(std::isnan(r.first[1].actual));
  const std::string msg = describe_failure(s, "cuda", "naive", z, c, r);
  EXPECT_TRUE(contains(msg, "c[5] (flat 5)")) << msg;
  EXPECT_TRUE(contains(msg, "c[90] (flat 90)")) << msg;
  EXPECT_TRUE(contains(msg, "never written")) << msg;
}

TEST(Compare, ReportsMultiIndicesOfA2dTensor) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("matmul.yaml", &s));
  const SizePoint z{5, 7, 3};
  const int c = s.find_tensor("c");
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 3);
  fill_correct(s, z, h, c);
  h[c].set(4 * 7 + 6, h[c].get(4 * 7 + 6) - 1);
  h[c].set(2 * 7 + 3, h[c].get(2 * 7 + 3) * 3 + 1);
  Reference ref(s, z, h);
  CompareResult r = compare_tensor(s, z, c, h[c], ref, 0, 0);
  EXPECT_EQ(r.mismatches, 2);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].index, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.first[0].flat, 17);
  EXPECT_EQ(r.first[1].index, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(r.first[1].flat, 34);
  const std::string msg = describe_failure(s, "cpu", "omp_simd", z, c, r);
  EXPECT_TRUE(contains(msg, "matmul cpu/omp_simd at M=5, N=7, K=3")) << msg;
  EXPECT_TRUE(contains(msg, "c[2, 3] (flat 17)")) << msg;
  EXPECT_TRUE(contains(msg, "c[4, 6] (flat 34)")) << msg;
}

TEST(Compare, ToleranceIsAtolPlusRtolTimesMag) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("dot.yaml", &s));  // f64, default tolerance 1e-5, 1e-6
  const SizePoint z{10};
  const int d = s.find_tensor("d");
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  for (int64_t i = 0; i < 10; ++i) {
    h[s.find_tensor("a")].set(i, static_cast<double>(i + 1));
    h[s.find_tensor("b")].set(i, i % 2 ? -2.0 : 2.0);
  }
  Reference ref(s, z, h);  // d = -10 with mag 110: tolerance 1e-6 + 1e-5 * 110
  const double tol = 1e-6 + 1e-5 * 110;
  h[d].set(0, -10 + 0.9 * tol);
  EXPECT_TRUE(compare_tensor(s, z, d, h[d], ref, 0, 0).ok);
  h[d].set(0, -10 - 0.9 * tol);
  EXPECT_TRUE(compare_tensor(s, z, d, h[d], ref, 0, 0).ok);
  h[d].set(0, -10 + 1.1 * tol);
  CompareResult r = compare_tensor(s, z, d, h[d], ref, 0, 0);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_DOUBLE_EQ(r.first[0].tolerance, tol);
  EXPECT_TRUE(r.first[0].index.empty());
  EXPECT_TRUE(contains(describe_failure(s, "cpu", "loops", z, d, r), "  d (flat 0): expected -10"));
}

TEST(Compare, ListsTheFirstTenInIndexOrder) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("vadd.yaml", &s));
  const SizePoint z{100};
  const int c = s.find_tensor("c");
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 4);
  for (int64_t i = 0; i < 100; ++i) h[c].set(i, 100.0 + i);  // all wrong
  Reference ref(s, z, h);
  CompareResult r = compare_tensor(s, z, c, h[c], ref, 0, 0);
  EXPECT_EQ(r.mismatches, 100);
  ASSERT_EQ(r.first.size(), 10u);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(r.first[i].flat, i);
  EXPECT_TRUE(contains(describe_failure(s, "cpu", "loops", z, c, r), "... and 90 more"));
}

TEST(Compare, SamplesDistinctSeededElementsIncludingBothEnds) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("softmax.yaml", &s));
  const SizePoint z{17, 130};
  const int y = s.find_tensor("y");
  const int64_t n = 17 * 130;
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 5);
  fill_correct(s, z, h, y);
  h[y].set(0, 2.0);
  h[y].set(n - 1, -1.0);
  Reference ref(s, z, h);
  CompareResult r = compare_tensor(s, z, y, h[y], ref, 100, 77);
  EXPECT_EQ(r.checked, 100);
  EXPECT_EQ(r.mismatches, 2);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].index, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(r.first[1].index, (std::vector<int64_t>{16, 129}));
  EXPECT_TRUE(contains(describe_failure(s, "cpu", "loops", z, y, r), "100 sampled of 2210"));

  // With every element wrong, the listed ones show which were sampled: ascending, distinct,
  // the same for the same seed and different for another seed.
  for (int64_t i = 0; i < n; ++i) h[y].set(i, 5.0);
  CompareResult a = compare_tensor(s, z, y, h[y], ref, 100, 77);
  CompareResult b = compare_tensor(s, z, y, h[y], ref, 100, 77);
  CompareResult c = compare_tensor(s, z, y, h[y], ref, 100, 78);
  EXPECT_EQ(a.mismatches, 100);
  ASSERT_EQ(a.first.size(), 10u);
  bool differs = false;
  for (size_t i = 0; i < 10; ++i) {
    if (i) {
      EXPECT_LT(a.first[i - 1].flat, a.first[i].flat);
    }
    EXPECT_EQ(a.first[i].flat, b.first[i].flat);
    differs |= a.first[i].flat != c.first[i].flat;
  }
  EXPECT_TRUE(differs);
  // A sample at least as large as the tensor compares everything.
  EXPECT_EQ(compare_tensor(s, z, y, h[y], ref, n, 1).checked, n);
  EXPECT_EQ(compare_tensor(s, z, y, h[y], ref, n - 1, 1).checked, n - 1);
}

TEST(Compare, NonFiniteReferenceNeedsTheSameValue) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("mags.yaml", &s));
  const SizePoint z{4};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  const double av[4] = {1, -1, 2, -2};
  const double bv[4] = {-4, -0.5, 0.5, 0};
  for (int i = 0; i < 4; ++i) {
    h[s.find_tensor("a")].set(i, av[i]);
    h[s.find_tensor("b")].set(i, bv[i]);
  }
  const int q = s.find_tensor("quot");  // -0.25, 2, 4, -inf
  h[q].set(0, -0.25);
  h[q].set(1, 2);
  h[q].set(2, 4);
  h[q].set(3, -INFINITY);
  Reference ref(s, z, h);
  EXPECT_TRUE(compare_tensor(s, z, q, h[q], ref, 0, 0).ok);
  h[q].set(3, -1e300);
  CompareResult r = compare_tensor(s, z, q, h[q], ref, 0, 0);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].flat, 3);
  h[q].set(3, -INFINITY);
  h[q].set(1, INFINITY);  // an infinite result for a finite reference fails
  EXPECT_FALSE(compare_tensor(s, z, q, h[q], ref, 0, 0).ok);
}

TEST(Compare, IntegersMustMatchExactly) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("intops.yaml", &s));
  const SizePoint z{8};
  const int q = s.find_tensor("q");
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 6);
  fill_correct(s, z, h, q);
  Reference ref(s, z, h);
  EXPECT_TRUE(compare_tensor(s, z, q, h[q], ref, 0, 0).ok);
  h[q].set(2, h[q].get(2) + 1);
  h[q].set(6, static_cast<double>(INT32_MIN));
  CompareResult r = compare_tensor(s, z, q, h[q], ref, 0, 0);
  EXPECT_EQ(r.mismatches, 2);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].flat, 2);
  EXPECT_EQ(r.first[0].tolerance, 0.0);
  const std::string msg = describe_failure(s, "cpu", "loops", z, q, r);
  EXPECT_TRUE(contains(msg, "q[6] (flat 6)")) << msg;
  EXPECT_TRUE(contains(msg, "unwritten sentinel")) << msg;
}

// An f32 kernel accumulating in f32 passes at a verification size that exercises the whole
// output (128^3 multiply-adds).
TEST(Compare, Float32MatmulPassesFullVerification) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("matmul.yaml", &s));
  const int64_t M = 128, N = 128, K = 128;
  const SizePoint z{M, N, K};
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 8);
  const int a = s.find_tensor("a"), b = s.find_tensor("b"), c = s.find_tensor("c");
  const float* A = reinterpret_cast<const float*>(h[a].bytes.data());
  const float* B = reinterpret_cast<const float*>(h[b].bytes.data());
  float* C = reinterpret_cast<float*>(h[c].data());
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
      C[i * N + j] = acc;
    }
  }
  Reference ref(s, z, h);
  CompareResult r = compare_tensor(s, z, c, h[c], ref, 0, 0);
  EXPECT_TRUE(r.ok) << describe_failure(s, "test", "f32", z, c, r);
  EXPECT_EQ(r.checked, M * N);
  EXPECT_GT(r.max_abs_err, 0.0);  // f32 accumulation did differ from the double reference
}

// A sample of a benchmark-sized softmax costs only the rows it touches.
TEST(Compare, SampledSoftmaxAtBenchmarkSize) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("softmax.yaml", &s));
  const int64_t R = 1024, C = 4096;
  const SizePoint z{R, C};
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 9);
  const int x = s.find_tensor("x"), y = s.find_tensor("y");
  const float* X = reinterpret_cast<const float*>(h[x].bytes.data());
  float* Y = reinterpret_cast<float*>(h[y].data());
  for (int64_t r = 0; r < R; ++r) {
    float m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < C; ++c) m = std::max(m, X[r * C + c]);
    for (int64_t c = 0; c < C; ++c) sum += (Y[r * C + c] = std::exp(X[r * C + c] - m));
    for (int64_t c = 0; c < C; ++c) Y[r * C + c] /= sum;
  }
  Y[R * C - 1] = 0.5f;  // a wrong last element is always among the sampled ones
  Reference ref(s, z, h);
  CompareResult r = compare_tensor(s, z, y, h[y], ref, 1000, 123);
  EXPECT_EQ(r.checked, 1000);
  EXPECT_EQ(r.mismatches, 1) << describe_failure(s, "test", "f32", z, y, r);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, (std::vector<int64_t>{R - 1, C - 1}));
}

}  // namespace
}  // namespace sb

namespace sb {
namespace {

// vadd's f32 inputs set so that c = a + b is finite in double but beyond f32's range, where the
// f32 output rightly holds +inf (or -inf); a finite value or the wrong infinity still fails.
TEST(Compare, Float32OutputBeyondItsRangeMayHoldTheInfinityItRoundsTo) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("vadd.yaml", &s));
  const SizePoint z{4};
  const int a = s.find_tensor("a"), b = s.find_tensor("b"), c = s.find_tensor("c");
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  const double big = std::numeric_limits<float>::max();
  for (int64_t i = 0; i < 4; ++i) {
    h[a].set(i, i % 2 ? -big : big);
    h[b].set(i, i % 2 ? -big : big);
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < 4; ++i) h[c].set(i, i % 2 ? -inf : inf);
  Reference ref(s, z, h);
  EXPECT_TRUE(compare_tensor(s, z, c, h[c], ref, 0, 0).ok);
  h[c].set(0, -inf);  // the wrong sign
  h[c].set(1, -big);  // finite
  CompareResult r = compare_tensor(s, z, c, h[c], ref, 0, 0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 2);
}

}  // namespace
}  // namespace sb
