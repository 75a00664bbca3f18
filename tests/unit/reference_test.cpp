// The double-precision reference interpreter and the host buffers it reads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "run/buffers.h"
#include "driver.h"
#include "run/reference.h"

namespace sb {
namespace {

void load(const std::string& file, Spec* out) {
  Result<Spec> r = load_and_check(std::string(SB_TESTS_DIR) + "/unit/specs/" + file);
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  *out = std::move(r.value());
}

int tensor(const Spec& s, const std::string& name) {
  int t = s.find_tensor(name);
  EXPECT_GE(t, 0) << name;
  return t;
}

TEST(Reference, VectorAddIsExactSumWithMagOfBothTerms) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("vadd.yaml", &s));
  const SizePoint z{100};
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 7);
  Reference ref(s, z, h);
  const int a = tensor(s, "a"), b = tensor(s, "b"), c = tensor(s, "c");
  for (int64_t i = 0; i < 100; ++i) {
    RefValue v = ref.element(c, i);
    EXPECT_EQ(v.value, h[a].get(i) + h[b].get(i)) << i;
    EXPECT_EQ(v.mag, std::fabs(h[a].get(i)) + std::fabs(h[b].get(i))) << i;
  }
}

TEST(Reference, DotOfKnownVectors) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("dot.yaml", &s));
  const SizePoint z{10};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  for (int64_t i = 0; i < 10; ++i) {
    h[tensor(s, "a")].set(i, static_cast<double>(i + 1));
    h[tensor(s, "b")].set(i, i % 2 ? -2.0 : 2.0);
  }
  Reference ref(s, z, h);
  // 2 * (1 - 2 + 3 - 4 + ... - 10) = -10; the terms' magnitudes add up to 2 * 55.
  RefValue d = ref.element(tensor(s, "d"), 0);
  EXPECT_EQ(d.value, -10.0);
  EXPECT_EQ(d.mag, 110.0);
}

// PyTorch's argmax and argmin of one row: the first NaN if there is one, else the least index
// of the greatest (least) value. Written directly, apart from the rewrite the reference runs.
int64_t torch_arg(const std::vector<double>& row, bool greatest) {
  for (size_t c = 0; c < row.size(); ++c)
    if (std::isnan(row[c])) return static_cast<int64_t>(c);
  size_t best = 0;
  for (size_t c = 1; c < row.size(); ++c)
    if (greatest ? row[c] > row[best] : row[c] < row[best]) best = c;
  return static_cast<int64_t>(best);
}

TEST(Reference, ArgmaxAndArgminTakeTheFirstTieAndTheFirstNaN) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("argmax.yaml", &s));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> rows = {
      {1, 3, 3, 0, 3, -2, -2, 1, 0},         // ties of the greatest and of the least
      {2, 2, 2, 2, 2, 2, 2, 2, 2},           // all equal: index 0 for both
      {0, 5, nan, 7, nan, -9, 1, 1, 1},      // the first NaN wins both
      {-1, -3, -0.0, 0.0, 4, 4, -3, -8, -8}  // -0 and 0 are equal; ties at the end
  };
  const SizePoint z{4, 9};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < 9; ++c)
      h[tensor(s, "x")].set(static_cast<int64_t>(r * 9 + c), rows[r][c]);
  Reference ref(s, z, h);
  for (size_t r = 0; r < rows.size(); ++r) {
    const int64_t i = static_cast<int64_t>(r);
    EXPECT_EQ(ref.element(tensor(s, "hi"), i).value, torch_arg(rows[r], true)) << "row " << r;
    EXPECT_EQ(ref.element(tensor(s, "lo"), i).value, torch_arg(rows[r], false)) << "row " << r;
  }
  // The expectations themselves, written out.
  EXPECT_EQ(torch_arg(rows[0], true), 1);
  EXPECT_EQ(torch_arg(rows[0], false), 5);
  EXPECT_EQ(torch_arg(rows[2], false), 2);
  EXPECT_EQ(torch_arg(rows[3], true), 4);
  EXPECT_EQ(torch_arg(rows[3], false), 7);
}

TEST(Reference, SoftmaxRowsSumToOne) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("softmax.yaml", &s));
  const SizePoint z{17, 130};
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 3);
  Reference ref(s, z, h);
  const int x = tensor(s, "x"), y = tensor(s, "y"), e = tensor(s, "e"),
            rowmax = tensor(s, "rowmax");
  for (int64_t r = 0; r < 17; ++r) {
    double sum = 0, xmax = -INFINITY;
    for (int64_t c = 0; c < 130; ++c) {
      const double v = ref.element(y, r * 130 + c).value;
      EXPECT_GT(v, 0.0);
      EXPECT_LE(v, 1.0);
      sum += v;
      xmax = std::max(xmax, h[x].get(r * 130 + c));
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << "row " << r;
    EXPECT_EQ(ref.element(rowmax, r).value, xmax);
  }
  // exp(x - rowmax) is exactly 1 at a row's maximum.
  for (int64_t c = 0; c < 130; ++c) {
    if (h[x].get(c) == ref.element(rowmax, 0).value) {
      EXPECT_EQ(ref.element(e, c).value, 1.0);
    }
  }
}

TEST(Reference, Conv1dReadsZeroOutsideTheSignal) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("conv1d.yaml", &s));
  const SizePoint z{13, 5};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  const int x = tensor(s, "x"), w = tensor(s, "w"), y = tensor(s, "y");
  for (int64_t i = 0; i < 13; ++i) h[x].set(i, static_cast<double>(i + 1));
  const double wv[5] = {1, 10, 100, 1000, 10000};
  for (int k = 0; k < 5; ++k) h[w].set(k, wv[k]);
  Reference ref(s, z, h);
  // y[0] = x[-2]*1 + x[-1]*10 + x[0]*100 + x[1]*1000 + x[2]*10000, with x[-2] = x[-1] = 0.
  EXPECT_EQ(ref.element(y, 0).value, 100.0 + 2000.0 + 30000.0);
  EXPECT_EQ(ref.element(y, 1).value, 10.0 + 200.0 + 3000.0 + 40000.0);
  // y[12] = x[10]*1 + x[11]*10 + x[12]*100, with x[13] = x[14] = 0.
  EXPECT_EQ(ref.element(y, 12).value, 11.0 + 120.0 + 1300.0);
  // Zero-boundary reads contribute nothing to the magnitude either.
  EXPECT_EQ(ref.element(y, 12).mag, 11.0 + 120.0 + 1300.0);
  for (int64_t i = 2; i < 11; ++i) {
    double want = 0;
    for (int k = 0; k < 5; ++k) want += static_cast<double>(i + k - 2 + 1) * wv[k];
    EXPECT_EQ(ref.element(y, i).value, want) << i;
  }
}

TEST(Reference, ClampBoundaryRepeatsTheEdge) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("smooth_clamp.yaml", &s));
  const SizePoint z{6};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  const int x = tensor(s, "x"), y = tensor(s, "y");
  const double xv[6] = {1, 2, 4, 8, 16, 32};
  for (int i = 0; i < 6; ++i) h[x].set(i, xv[i]);
  Reference ref(s, z, h);
  EXPECT_EQ(ref.element(y, 0).value, 1.0 + 1.0 + 2.0);
  EXPECT_EQ(ref.element(y, 2).value, 2.0 + 4.0 + 8.0);
  EXPECT_EQ(ref.element(y, 5).value, 16.0 + 32.0 + 32.0);
}

TEST(Reference, TriangularRangePrefixSum) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("prefix_sum.yaml", &s));
  const SizePoint z{8};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  const int x = tensor(s, "x"), y = tensor(s, "y");
  for (int64_t i = 0; i < 8; ++i) h[x].set(i, static_cast<double>(i + 1));
  Reference ref(s, z, h);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(ref.element(y, i).value, static_cast<double>((i + 1) * (i + 2) / 2)) << i;
  }
}

// Evaluated in ascending order, each output of a running reduction resumes the fold of the one
// before (reference.cpp: Resume); in descending order every one is a whole fold. The two agree
// bit for bit, value and magnitude, on every kind of reduction, on a range that starts empty
// (lo), on ones that cannot always resume (late starts after its first outputs, own's terms use
// i, rows changes row, win's start moves) and on a nested one, with a NaN among the inputs of some input sets.
TEST(Reference, ResumedScansMatchWholeFolds) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("scans.yaml", &s));
  const SizePoint z{4, 64};
  for (int seed = 1; seed <= 3; ++seed) {
    HostTensors h = make_host_tensors(s, z, InputKind::Random, seed);
    if (seed == 3) h[tensor(s, "x")].set(20, std::numeric_limits<double>::quiet_NaN());
    Reference up(s, z, h), down(s, z, h);
    for (const char* name :
         {"s", "p", "hi", "lo", "isum", "ip", "im", "late", "own", "rows", "nest", "win"}) {
      const int t = tensor(s, name);
      const int64_t n = std::string(name) == "rows" ? 4 * 64 : 64;
      std::vector<RefValue> asc(n);
      for (int64_t i = 0; i < n; ++i) asc[i] = up.element(t, i);
      for (int64_t i = n; i-- > 0;) {
        const RefValue d = down.element(t, i);
        if (std::isnan(d.value)) {
          EXPECT_TRUE(std::isnan(asc[i].value)) << name << " " << i << " seed " << seed;
        } else {
          EXPECT_EQ(asc[i].value, d.value) << name << " " << i << " seed " << seed;
        }
        if (std::isnan(d.mag)) {
          EXPECT_TRUE(std::isnan(asc[i].mag)) << name << " " << i << " seed " << seed;
        } else {
          EXPECT_EQ(asc[i].mag, d.mag) << name << " " << i << " seed " << seed;
        }
      }
    }
    // Spot values: an empty range gives the identity; the NaN reaches every later prefix.
    EXPECT_EQ(up.element(tensor(s, "lo"), 0).value, std::numeric_limits<double>::infinity());
    EXPECT_EQ(up.element(tensor(s, "late"), 3).value, 0.0);
    EXPECT_EQ(std::isnan(up.element(tensor(s, "s"), 63).value), seed == 3);
  }
}

TEST(Reference, MemoisedSampleMatchesFullEvaluation) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("softmax.yaml", &s));
  const SizePoint z{17, 130};
  HostTensors h = make_host_tensors(s, z, InputKind::Random, 11);
  const int y = tensor(s, "y");
  const int64_t n = 17 * 130;
  Reference full(s, z, h);
  std::vector<RefValue> all(n);
  for (int64_t i = 0; i < n; ++i) all[i] = full.element(y, i);

  Reference sampled(s, z, h);
  std::mt19937_64 rng(5);
  for (int k = 0; k < 200; ++k) {
    const int64_t i = static_cast<int64_t>(rng() % n);
    const RefValue v = sampled.element(y, i);
    EXPECT_EQ(v.value, all[i].value) << i;
    EXPECT_EQ(v.mag, all[i].mag) << i;
    const RefValue again = sampled.element(y, i);
    EXPECT_EQ(again.value, v.value);
    EXPECT_EQ(again.mag, v.mag);
  }
}

TEST(Reference, MagnitudeRules) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("mags.yaml", &s));
  const SizePoint z{4};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  const double av[4] = {1, -1, 2, -2};
  const double bv[4] = {-4, -0.5, 0.5, 0};
  for (int i = 0; i < 4; ++i) {
    h[tensor(s, "a")].set(i, av[i]);
    h[tensor(s, "b")].set(i, bv[i]);
  }
  Reference ref(s, z, h);
  auto at = [&](const char* name, int64_t i) { return ref.element(tensor(s, name), i); };

  // sum: the terms cancel, their magnitudes do not.
  EXPECT_EQ(at("total", 0).value, 0.0);
  EXPECT_EQ(at("total", 0).mag, 6.0);
  // product: ma * mb.
  EXPECT_EQ(at("mul", 0).value, -4.0);
  EXPECT_EQ(at("mul", 0).mag, 4.0);
  // quotient: ma / |b| + |a| mb / b^2, which is 2 |a / b| for plain reads; inf when b == 0.
  EXPECT_EQ(at("quot", 0).value, -0.25);
  EXPECT_EQ(at("quot", 0).mag, 0.5);
  EXPECT_EQ(at("quot", 2).mag, 8.0);
  EXPECT_EQ(at("quot", 3).value, -INFINITY);
  EXPECT_EQ(at("quot", 3).mag, INFINITY);
  // exp: |v| * max(1, ma).
  EXPECT_DOUBLE_EQ(at("ex", 1).mag, std::exp(-1.0));
  EXPECT_DOUBLE_EQ(at("ex", 2).mag, 2 * std::exp(2.0));
  EXPECT_DOUBLE_EQ(at("ex", 3).mag, 2 * std::exp(-2.0));
  // max reduction: the selected term's magnitude (products -4, 0.5, 1, -0).
  EXPECT_EQ(at("big", 0).value, 1.0);
  EXPECT_EQ(at("big", 0).mag, 1.0);
  // A temporary carries its magnitude into the statement reading it: (a - b) * 2.
  EXPECT_EQ(at("twice", 1).value, -1.0);
  EXPECT_EQ(at("twice", 1).mag, 3.0);
  EXPECT_EQ(at("twice", 3).mag, 4.0);
  // select: the chosen branch's magnitude (a + b when a > 0, else -a).
  EXPECT_EQ(at("pick", 0).value, -3.0);
  EXPECT_EQ(at("pick", 0).mag, 5.0);
  EXPECT_EQ(at("pick", 1).value, 1.0);
  EXPECT_EQ(at("pick", 1).mag, 1.0);
  // sqrt: max(|v|, ma / (2 |v|)); an exact zero with a zero magnitude stays 0.
  EXPECT_EQ(at("root", 0).value, 2.0);
  EXPECT_EQ(at("root", 0).mag, 2.0);
  EXPECT_EQ(at("root", 3).value, 0.0);
  EXPECT_EQ(at("root", 3).mag, 0.0);
}

TEST(Reference, ProductOfNegativeFactorsAndItsMagnitude) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("prods.yaml", &s));
  const SizePoint z{4};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  const double av[4] = {2, -0.5, -3, 1.5};
  const int32_t vv[4] = {65537, 65537, -1, 1};
  for (int i = 0; i < 4; ++i) {
    h[tensor(s, "a")].set(i, av[i]);
    h[tensor(s, "v")].set(i, vv[i]);
  }
  Reference ref(s, z, h);
  auto at = [&](const char* name, int64_t i) { return ref.element(tensor(s, name), i); };

  // The product itself, signs included (exp(sum(log)) would be NaN); n exact factors: n |v|.
  EXPECT_EQ(at("all", 0).value, 4.5);
  EXPECT_EQ(at("all", 0).mag, 4 * 4.5);
  const double pre[4] = {2, -1, 3, 4.5};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(at("pre", i).value, pre[i]) << i;
    EXPECT_EQ(at("pre", i).mag, (i + 1) * std::fabs(pre[i])) << i;
  }
  // An empty product is exactly 1.
  EXPECT_EQ(at("exc", 0).value, 1.0);
  EXPECT_EQ(at("exc", 0).mag, 0.0);
  EXPECT_EQ(at("exc", 2).value, -1.0);
  EXPECT_EQ(at("exc", 2).mag, 2.0);
  // Factors a - 1 = {1, -1.5, -4, 0.5} of mags |a| + 1 = {3, 1.5, 4, 2.5}: the product 3, and
  // sum_i m_i prod_{j != i} |t_j| = 9 + 3 + 3 + 15.
  EXPECT_EQ(at("shifted", 0).value, 3.0);
  EXPECT_EQ(at("shifted", 0).mag, 30.0);
  // i32 products wrap: 65537^2 = 2^32 + 131073.
  EXPECT_EQ(at("wrapped", 0).value, -131073.0);
}

TEST(Reference, IntegerOpsBehaveLikeC) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("intops.yaml", &s));
  const SizePoint z{8};
  HostTensors h = make_host_tensors(s, z, InputKind::Zeros, 0);
  const int32_t av[8] = {-7, 7, -1, 0, 9, -9, 10, -10};
  const float xv[8] = {-2.7f, 2.7f, -0.5f, 0.5f, 3.0f, -3.0f, 1e10f, -1e10f};
  for (int i = 0; i < 8; ++i) {
    h[tensor(s, "a")].set(i, av[i]);
    h[tensor(s, "x")].set(i, xv[i]);
  }
  Reference ref(s, z, h);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(ref.element(tensor(s, "q"), i).value, av[i] / 3) << i;
    EXPECT_EQ(ref.element(tensor(s, "r"), i).value, av[i] % 3) << i;
    EXPECT_EQ(ref.element(tensor(s, "h"), i).value, i / 2 + av[i]) << i;
  }
  const double t_want[8] = {-2, 2, 0, 0, 3, -3, INT32_MIN, INT32_MIN};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(ref.element(tensor(s, "t"), i).value, t_want[i]) << i;
}

TEST(Buffers, RandomInputsAreDeterministicAndInRange) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("softmax.yaml", &s));
  const SizePoint z{17, 130};
  const int x = tensor(s, "x");
  HostTensors h1 = make_host_tensors(s, z, InputKind::Random, 42);
  HostTensors h2 = make_host_tensors(s, z, InputKind::Random, 42);
  HostTensors h3 = make_host_tensors(s, z, InputKind::Random, 43);
  EXPECT_EQ(h1[x].bytes, h2[x].bytes);
  EXPECT_NE(h1[x].bytes, h3[x].bytes);
  ASSERT_EQ(h1[x].elements, 17 * 130);
  ASSERT_EQ(h1[x].bytes.size(), 17u * 130u * 4u);
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < h1[x].elements; ++i) {
    const double v = h1[x].get(i);
    EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));  // an f32 value
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // init: [-8, 8], and 2210 draws spread over most of it.
  EXPECT_GE(lo, -8.0);
  EXPECT_LE(hi, 8.0);
  EXPECT_LT(lo, -7.0);
  EXPECT_GT(hi, 7.0);
  // Pinned: inputs must not change silently (mt19937_64 and our mapping are fully specified).
  EXPECT_EQ(h1[x].get(0), static_cast<double>(-7.72021151f));
  EXPECT_EQ(h1[x].get(1), static_cast<double>(6.29106474f));
  EXPECT_EQ(h1[x].get(2209), static_cast<double>(4.21578312f));
}

TEST(Buffers, IntegerInputsArePinned) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("intops.yaml", &s));
  HostTensors h = make_host_tensors(s, {8}, InputKind::Random, 42);
  const double want[8] = {7, -7, -8, 10, -5, 0, 4, -3};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(h[tensor(s, "a")].get(i), want[i]) << i;
  // Large leaves integer inputs unchanged.
  HostTensors large = make_host_tensors(s, {8}, InputKind::Large, 42);
  EXPECT_EQ(large[tensor(s, "a")].bytes, h[tensor(s, "a")].bytes);
}

TEST(Buffers, OutputsAndTempsHoldSentinels) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("intops.yaml", &s));
  HostTensors h = make_host_tensors(s, {8}, InputKind::Random, 1);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(h[tensor(s, "q")].get(i), static_cast<double>(INT32_MIN));
    EXPECT_TRUE(std::isnan(h[tensor(s, "h")].get(i)));
    // i32 inputs: integers drawn from [-10, 10].
    const double a = h[tensor(s, "a")].get(i);
    EXPECT_EQ(a, std::trunc(a));
    EXPECT_GE(a, -10.0);
    EXPECT_LE(a, 10.0);
  }
  Spec sm;
  ASSERT_NO_FATAL_FAILURE(load("softmax.yaml", &sm));
  HostTensors t = make_host_tensors(sm, {2, 3}, InputKind::Random, 1);
  EXPECT_TRUE(std::isnan(t[tensor(sm, "rowmax")].get(1)));
}

TEST(Buffers, ZerosAndLargeKinds) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load("softmax.yaml", &s));
  const SizePoint z{4, 50};
  const int x = tensor(s, "x");
  HostTensors zero = make_host_tensors(s, z, InputKind::Zeros, 9);
  HostTensors rnd = make_host_tensors(s, z, InputKind::Random, 9);
  HostTensors large = make_host_tensors(s, z, InputKind::Large, 9);
  double max_large = 0;
  for (int64_t i = 0; i < zero[x].elements; ++i) {
    EXPECT_EQ(zero[x].get(i), 0.0);
    // Same stream, range scaled by 1e3.
    EXPECT_NEAR(large[x].get(i), rnd[x].get(i) * 1e3, 2e-3);
    max_large = std::max(max_large, std::fabs(large[x].get(i)));
  }
  EXPECT_GT(max_large, 1000.0);
  EXPECT_LE(max_large, 8000.0);
}

TEST(Buffers, SetRoundsToTheTensorType) {
  HostTensor f{DType::F32, 1, std::vector<unsigned char>(4)};
  f.set(0, 0.1);
  EXPECT_EQ(f.get(0), static_cast<double>(0.1f));
  HostTensor d{DType::F64, 1, std::vector<unsigned char>(8)};
  d.set(0, 0.1);
  EXPECT_EQ(d.get(0), 0.1);
  HostTensor i{DType::I32, 1, std::vector<unsigned char>(4)};
  i.set(0, -3.0);
  EXPECT_EQ(i.get(0), -3.0);
  i.set(0, 2.6);
  EXPECT_EQ(i.get(0), 3.0);
}

}  // namespace
}  // namespace sb
