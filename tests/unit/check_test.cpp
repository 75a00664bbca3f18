// Unit tests of the spec loader and the check passes (types, bounds), on small inline specs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "check/bounds.h"
#include "frontend/spec_loader.h"
#include "check/typecheck.h"

namespace sb {
namespace {

// A minimal 1D spec whose compute, tensors and sizes can be replaced.
std::string spec_text(const std::string& tensors, const std::string& compute,
                      const std::string& sizes = "  N: {bench: [1024], verify: [1, 7]}\n") {
  return "name: t\ndoc: test spec\nsizes:\n" + sizes + "tensors:\n" + tensors + "compute: |\n" +
         compute + "variants:\n  cpu:\n    - {name: loops, strategy: loops}\n";
}

struct Loaded {
  Spec spec;
  std::string error;  // first line of the formatted error, "" on success
};

Loaded load_checked(const std::string& text) {
  static int n = 0;
  auto path = std::filesystem::temp_directory_path() /
              ("sb_check_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".yaml");
  std::ofstream(path) << text;
  Loaded out;
  auto s = load_spec(path.string());
  Status st = s.ok() ? typecheck(s.value()) : Status(s.error());
  if (st.ok()) st = check_bounds(s.value());
  if (!st.ok()) {
    std::string f = format_error(st.error());
    out.error = f.substr(0, f.find('\n'));
  } else {
    out.spec = std::move(s.value());
  }
  std::filesystem::remove(path);
  return out;
}

const char* kVec =
    "  a: {type: f32, shape: [N], role: in}\n"
    "  c: {type: f32, shape: [N], role: out}\n";

TEST(CheckTest, ResolvesNamesAndTypes) {
  auto l = load_checked(spec_text(kVec, "  c[i] = 2 * a[i] + 1\n"));
  ASSERT_EQ(l.error, "");
  const Statement& st = l.spec.stmts[0];
  EXPECT_EQ(st.out, 1);
  EXPECT_EQ(st.rhs->type, DType::F32);
  // Integer literals in a float context become float literals (no integer division).
  const Expr& one = *st.rhs->args[1];
  EXPECT_EQ(one.kind, ExprKind::FloatLit);
  EXPECT_EQ(one.type, DType::F32);
  EXPECT_EQ(to_string(st, l.spec), "c[i] = 2.0 * a[i] + 1.0");
}

// f16 and bf16 are storage types: a read is an f32 value, and the value stored into one is an
// f32 expression (an f64 one needs a cast to f32; there is no cast to the storage type).
TEST(CheckTest, StorageTypesReadAndStoreAsF32) {
  auto l = load_checked(spec_text("  a: {type: bf16, shape: [N], role: in}\n"
                                  "  h: {type: f16, shape: [N], role: in}\n"
                                  "  c: {type: f16, shape: [N], role: out}\n",
                                  "  c[i] = a[i] * h[i] + 1\n"));
  ASSERT_EQ(l.error, "");
  const Expr& rhs = *l.spec.stmts[0].rhs;
  EXPECT_EQ(rhs.type, DType::F32);
  const Expr& product = *rhs.args[0];
  EXPECT_EQ(product.args[0]->kind, ExprKind::Read);
  EXPECT_EQ(product.args[0]->type, DType::F32);
  EXPECT_EQ(product.args[1]->type, DType::F32);
  EXPECT_EQ(l.spec.tensors[2].type, DType::F16);

  auto f64 = load_checked(spec_text("  a: {type: f64, shape: [N], role: in}\n"
                                    "  c: {type: bf16, shape: [N], role: out}\n",
                                    "  c[i] = a[i]\n"));
  EXPECT_NE(f64.error.find("must be f32, found f64"), std::string::npos) << f64.error;
  auto cast = load_checked(spec_text(kVec, "  c[i] = f16(a[i])\n"));
  EXPECT_NE(cast.error.find("'f16' is a storage type"), std::string::npos) << cast.error;
}

TEST(CheckTest, ReductionVariablesMoveIntoStatement) {
  auto l = load_checked(spec_text(
      "  a: {type: f32, shape: [N, K], role: in}\n  c: {type: f32, shape: [N], role: out}\n",
      "  c[i] = sum(k in 0..K: a[i, k])\n",
      "  N: {bench: [64], verify: [3]}\n  K: {bench: [64], verify: [5]}\n"));
  ASSERT_EQ(l.error, "");
  const Statement& st = l.spec.stmts[0];
  ASSERT_EQ(st.vars.size(), 2u);
  EXPECT_EQ(st.rank(), 1u);
  EXPECT_TRUE(st.vars[1].is_reduction);
  EXPECT_EQ(st.rhs->kind, ExprKind::Reduce);
  EXPECT_EQ(st.rhs->ref, 1);
  EXPECT_EQ(st.rhs->args.size(), 1u);
}

TEST(CheckTest, ProvesAffineReadsInBounds) {
  // A valid convolution: x has N + K - 1 elements, so x[i + k] never leaves it.
  auto l = load_checked(spec_text(
      "  x: {type: f32, shape: [N + K - 1], role: in}\n  w: {type: f32, shape: [K], role: in}\n"
      "  y: {type: f32, shape: [N], role: out}\n",
      "  y[i] = sum(k in 0..K: x[i + k] * w[k])\n",
      "  N: {bench: [64], verify: [3]}\n  K: {bench: [3], verify: [5]}\n"));
  EXPECT_EQ(l.error, "");
  // A triangular range (prefix sum) is proven through the outer index.
  auto p = load_checked(spec_text(kVec, "  c[i] = sum(j in 0..i + 1: a[j])\n"));
  EXPECT_EQ(p.error, "");
}

TEST(CheckTest, RejectsRaggedReadWithoutBoundary) {
  auto l = load_checked(spec_text(kVec, "  c[i] = a[i + 1]\n"));
  EXPECT_NE(l.error.find("can reach past its extent 'N'"), std::string::npos) << l.error;
  auto n = load_checked(spec_text(kVec, "  c[i] = a[i - 1]\n"));
  EXPECT_NE(n.error.find("can be negative"), std::string::npos) << n.error;
  // A quotient inside a sum is bounded by its dividend's greatest value (bound_quotient_term):
  // i / 2 + 1 reaches 1 at N = 1.
  auto d = load_checked(spec_text(kVec, "  c[i] = a[i / 2 + 1]\n"));
  EXPECT_NE(d.error.find("subscript 'i / 2 + 1' of 'a' can reach past its extent 'N'"),
            std::string::npos)
      << d.error;
  auto q = load_checked(spec_text(kVec, "  c[i] = a[i / 2] + a[(i + 1) % N] + a[i % 1]\n"));
  EXPECT_EQ(q.error, "");
  auto past = load_checked(spec_text(kVec, "  c[i] = a[(i + 2) / 1]\n"));
  EXPECT_NE(past.error.find("can reach past its extent 'N'"), std::string::npos) << past.error;
  auto neg = load_checked(spec_text(kVec, "  c[i] = a[(i - 1) / 2]\n"));
  EXPECT_NE(neg.error.find("divides a value that can be negative"), std::string::npos)
      << neg.error;
}

TEST(CheckTest, BoundaryRuleAllowsRaggedRead) {
  auto l =
      load_checked(spec_text("  a: {type: f32, shape: [N], role: in, boundary: zero}\n"
                             "  c: {type: f32, shape: [N], role: out}\n",
                             "  c[i] = a[i + 1] + a[i - 1]\n"));
  EXPECT_EQ(l.error, "");
}

TEST(CheckTest, TypeErrors) {
  auto mix = load_checked(spec_text(kVec, "  c[i] = a[i] * i\n"));
  EXPECT_NE(mix.error.find("type mismatch in '*': f32 and index"), std::string::npos) << mix.error;
  auto cast = load_checked(spec_text(kVec, "  c[i] = a[i] * f32(i)\n"));
  EXPECT_EQ(cast.error, "");
  auto cond = load_checked(spec_text(kVec, "  c[i] = select(a[i], a[i], 0)\n"));
  EXPECT_NE(cond.error.find("condition of select() must be a comparison"), std::string::npos);
  auto mod = load_checked(spec_text(kVec, "  c[i] = a[i] % 2\n"));
  EXPECT_NE(mod.error.find("'%' needs integer operands"), std::string::npos) << mod.error;
}

TEST(CheckTest, StatementStructure) {
  auto twice = load_checked(spec_text(kVec, "  c[i] = a[i]\n  c[i] = a[i]\n"));
  EXPECT_NE(twice.error.find("written twice"), std::string::npos);
  auto input = load_checked(spec_text(kVec, "  a[i] = c[i]\n"));
  EXPECT_NE(input.error.find("cannot write input tensor 'a'"), std::string::npos);
  auto self = load_checked(spec_text(kVec, "  c[i] = c[i] + a[i]\n"));
  EXPECT_NE(self.error.find("read by the statement that writes it"), std::string::npos);
}

TEST(CheckTest, ErrorPositionsPointIntoComputeBlock) {
  auto l = load_checked(spec_text(kVec, "  c[i] = a[i] + zz[i]\n"));
  // "compute: |" is line 8 of the text, so the statement is line 9, indented by 2.
  EXPECT_NE(l.error.find(":9:17: error: undefined tensor 'zz'"), std::string::npos) << l.error;
}

TEST(CheckTest, AbsurdSizesAreRejected) {
  auto l = load_checked(spec_text(
      "  a: {type: f32, shape: [N, N], role: in}\n  c: {type: f32, shape: [N, N], role: out}\n",
      "  c[i, j] = a[i, j]\n", "  N: {bench: [100000], verify: [1]}\n"));
  EXPECT_NE(l.error.find("at most 2^31 - 1 are supported"), std::string::npos) << l.error;
}

}  // namespace
}  // namespace sb

namespace sb {
namespace {

const char* kGatherTensors =
    "  idx: {type: i32, shape: [B], role: in, init: [0, V - 1]}\n"
    "  table: {type: f32, shape: [V, C], role: in}\n"
    "  y: {type: f32, shape: [B, C], role: out}\n";
const char* kGatherSizes =
    "  B: {bench: [8], verify: [3]}\n  V: {bench: [8], verify: [5]}\n"
    "  C: {bench: [8], verify: [2]}\n";

TEST(CheckTest, GatherIsProvenFromTheIndexRange) {
  auto ok = load_checked(spec_text(kGatherTensors, "  y[b, c] = table[idx[b], c]\n", kGatherSizes));
  EXPECT_EQ(ok.error, "");
  // A declared range one past the table is caught at generation time.
  std::string wide = kGatherTensors;
  wide.replace(wide.find("V - 1"), 5, "V");
  auto bad = load_checked(spec_text(wide, "  y[b, c] = table[idx[b], c]\n", kGatherSizes));
  EXPECT_NE(bad.error.find("subscript 'idx[b]' of 'table' can reach past its extent 'V'"),
            std::string::npos)
      << bad.error;
  // Without a declared integer range, a gather cannot be proven.
  std::string none = kGatherTensors;
  none.replace(none.find(", init: [0, V - 1]"), 18, "");
  auto unproven = load_checked(spec_text(none, "  y[b, c] = table[idx[b], c]\n", kGatherSizes));
  EXPECT_NE(unproven.error.find("cannot prove that subscript 'idx[b]' of 'table'"),
            std::string::npos)
      << unproven.error;
}

TEST(CheckTest, GatherNeedsAnIntegerIndex) {
  auto l = load_checked(spec_text(
      "  idx: {type: f32, shape: [B], role: in}\n  table: {type: f32, shape: [V, C], role: in}\n"
      "  y: {type: f32, shape: [B, C], role: out}\n",
      "  y[b, c] = table[idx[b], c]\n", kGatherSizes));
  EXPECT_NE(l.error.find("a subscript of 'table' must be index, found f32"), std::string::npos)
      << l.error;
}

}  // namespace
}  // namespace sb

namespace sb {
namespace {

// Quotient terms `(A / q) * m` inside an affine subscript (check/bounds.cpp:
// bound_quotient_term): a grouped convolution reads input channel (o / COG) * CIG + c.
const char* kGroupedSizes =
    "  G: {bench: [32], verify: [3]}\n  CIG: {bench: [4], verify: [2]}\n"
    "  COG: {bench: [4], verify: [5]}\n";

std::string grouped(const std::string& x_channels, const std::string& y_channels,
                    const std::string& range, const std::string& subscript) {
  return spec_text("  x: {type: f32, shape: [" + x_channels + "], role: in}\n"
                   "  y: {type: f32, shape: [" + y_channels + "], role: out}\n",
                   "  y[o] = sum(c in " + range + ": x[" + subscript + "])\n", kGroupedSizes);
}

TEST(CheckTest, ProvesGroupedChannelReads) {
  // o <= G * COG - 1, so o / COG <= G - 1 and (o / COG) * CIG + c <= G * CIG - 1.
  for (const char* sub : {"(o / COG) * CIG + c", "CIG * (o / COG) + c", "c + o / COG * CIG"}) {
    auto l = load_checked(grouped("G * CIG", "G * COG", "0..CIG", sub));
    EXPECT_EQ(l.error, "") << sub;
  }
  // Products of sizes compare by value: COG * G is G * COG, CIG * G is G * CIG.
  auto swapped = load_checked(grouped("CIG * G", "COG * G", "0..CIG", "(o / COG) * CIG + c"));
  EXPECT_EQ(swapped.error, "");
  // A multiplier with a literal factor, against an extent with one: 2 * G * CIG is twice G * CIG.
  auto twice = load_checked(grouped("2 * G * CIG", "G * COG", "0..2 * CIG",
                                    "(o / COG) * (2 * CIG) + c"));
  EXPECT_EQ(twice.error, "");
  auto past = load_checked(grouped("2 * G * CIG", "G * COG", "0..2 * CIG + 1",
                                   "(o / COG) * (2 * CIG) + c"));
  EXPECT_NE(past.error.find("can reach past its extent '2 * G * CIG'"), std::string::npos)
      << past.error;
}

TEST(CheckTest, RejectsGroupedChannelReadsOffByOne) {
  // One past the group's channels, by the offset or by the range.
  auto plus = load_checked(grouped("G * CIG", "G * COG", "0..CIG", "(o / COG) * CIG + c + 1"));
  EXPECT_NE(plus.error.find("subscript 'o / COG * CIG + c + 1' of 'x' can reach past its "
                            "extent 'G * CIG'"),
            std::string::npos)
      << plus.error;
  auto wide = load_checked(grouped("G * CIG", "G * COG", "0..CIG + 1", "(o / COG) * CIG + c"));
  EXPECT_NE(wide.error.find("can reach past its extent 'G * CIG'"), std::string::npos)
      << wide.error;
  // An output with one group too many, and a quotient by the wrong size.
  auto groups = load_checked(grouped("G * CIG", "(G + 1) * COG", "0..CIG", "(o / COG) * CIG + c"));
  EXPECT_NE(groups.error, "");
  auto by_cig = load_checked(grouped("G * CIG", "G * COG", "0..CIG", "(o / CIG) * CIG + c"));
  EXPECT_NE(by_cig.error.find("can reach past its extent 'G * CIG'"), std::string::npos)
      << by_cig.error;
  // A negative term, and a dividend that can be negative.
  auto minus = load_checked(grouped("G * CIG", "G * COG", "0..CIG", "c - (o / COG) * CIG"));
  EXPECT_NE(minus.error.find("can be negative"), std::string::npos) << minus.error;
  auto neg = load_checked(grouped("G * CIG", "G * COG", "0..CIG", "((o - 1) / COG) * CIG + c"));
  EXPECT_NE(neg.error.find("divides a value that can be negative"), std::string::npos)
      << neg.error;
  // Two quotients multiplied together are not a quotient term.
  auto square = load_checked(grouped("G * CIG", "G * COG", "0..CIG", "(o / COG) * (o / COG)"));
  EXPECT_NE(square.error.find("not affine"), std::string::npos) << square.error;
}

TEST(CheckTest, ProvesQuotientTermsByLiteralsAndSizes) {
  const char* sizes = "  N: {bench: [64], verify: [5]}\n  S: {bench: [4], verify: [3]}\n";
  auto check = [&](const std::string& tensors, const std::string& compute) {
    return load_checked(spec_text(tensors, "  " + compute + "\n", sizes)).error;
  };
  // i < 2 * N: (i / 2) * 2 + 1 <= 2 * N - 1, the odd element of each pair.
  EXPECT_EQ(check("  x: {type: f32, shape: [2 * N], role: in}\n"
                  "  y: {type: f32, shape: [2 * N], role: out}\n",
                  "y[i] = x[(i / 2) * 2 + 1]"),
            "");
  // i < 2 * N + 1 reaches i = 2 * N, whose pair starts past the end.
  EXPECT_NE(check("  x: {type: f32, shape: [2 * N], role: in}\n"
                  "  y: {type: f32, shape: [2 * N + 1], role: out}\n",
                  "y[i] = x[(i / 2) * 2 + 1]")
                .find("can reach past its extent '2 * N'"),
            std::string::npos);
  // The start of i's block of S, plus k < S: the same block.
  EXPECT_EQ(check("  x: {type: f32, shape: [N * S], role: in}\n"
                  "  y: {type: f32, shape: [S * N], role: out}\n",
                  "y[i] = sum(k in 0..S: x[(i / S) * S + k])"),
            "");
  EXPECT_NE(check("  x: {type: f32, shape: [N * S], role: in}\n"
                  "  y: {type: f32, shape: [S * N], role: out}\n",
                  "y[i] = sum(k in 0..S + 1: x[(i / S) * S + k])"),
            "");
  // A quotient by a literal that rounds down: i < N, (i / 3) * 3 <= N - 1.
  EXPECT_EQ(check("  x: {type: f32, shape: [N], role: in}\n"
                  "  y: {type: f32, shape: [N], role: out}\n",
                  "y[i] = x[(i / 3) * 3]"),
            "");
  // The start of i's block, bounded by i itself (S * (i / S) <= i) where the quotient's bound
  // (N - 1) * S would not fit.
  EXPECT_EQ(check("  x: {type: f32, shape: [N], role: in}\n"
                  "  y: {type: f32, shape: [N], role: out}\n",
                  "y[i] = x[(i / S) * S] + x[S * (i / S)]"),
            "");
  EXPECT_NE(check("  x: {type: f32, shape: [N], role: in}\n"
                  "  y: {type: f32, shape: [N], role: out}\n",
                  "y[i] = x[(i / S) * S + 1]"),
            "");
  // Remainder terms: A % q lies in [0, min(q - 1, A)]. Each block of S reversed, and a split
  // of i back into its block and offset.
  EXPECT_EQ(check("  x: {type: f32, shape: [N * S], role: in}\n"
                  "  y: {type: f32, shape: [S * N], role: out}\n",
                  "y[i] = x[(i / S) * S + S - 1 - i % S] + x[i % S + S * (i / S)]"),
            "");
  EXPECT_EQ(check("  x: {type: f32, shape: [S + 2], role: in}\n"
                  "  y: {type: f32, shape: [N], role: out}\n",
                  "y[i] = x[i % S + 2] + x[2 * (i % 2)]"),
            "");
  EXPECT_NE(check("  x: {type: f32, shape: [S], role: in}\n"
                  "  y: {type: f32, shape: [N], role: out}\n",
                  "y[i] = x[i % S + 1]")
                .find("can reach past its extent 'S'"),
            std::string::npos);
  EXPECT_NE(check("  x: {type: f32, shape: [S], role: in}\n"
                  "  y: {type: f32, shape: [N], role: out}\n",
                  "y[i] = x[S - i % S]")
                .find("can reach past its extent 'S'"),
            std::string::npos);
  EXPECT_NE(check("  x: {type: f32, shape: [S + 1], role: in}\n"
                  "  y: {type: f32, shape: [N], role: out}\n",
                  "y[i] = x[(i - 1) % S + 1]")
                .find("divides a value that can be negative"),
            std::string::npos);
  // The quotient alone bounded by the size: i / S < N for i < N * S.
  EXPECT_EQ(check("  x: {type: f32, shape: [N + 1], role: in}\n"
                  "  y: {type: f32, shape: [N * S], role: out}\n",
                  "y[i] = x[i / S + 1]"),
            "");
  EXPECT_NE(check("  x: {type: f32, shape: [N], role: in}\n"
                  "  y: {type: f32, shape: [N * S], role: out}\n",
                  "y[i] = x[i / S + 1]"),
            "");
}

}  // namespace
}  // namespace sb
