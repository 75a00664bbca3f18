// Unit tests of the affine analysis (codegen/ir/affine.h): decomposition with and without atoms,
// the form's arithmetic and overflow, dependence, offsets, evaluation and bounds over ranges.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "driver.h"
#include "ir/affine.h"

namespace sb {
namespace {

// A checked spec with sizes N, M, V, a rank-1 input x and a rank-2 input x2 (both with a zero
// boundary, so any subscript checks), an i32 gather input idx in [0, V - 1] and `compute`.
// The specs stay alive for the pointers into them.
const Spec& load(const std::string& outputs, const std::string& compute) {
  static std::deque<Spec> alive;
  static int n = 0;
  const std::string text =
      "name: t\ndoc: test spec\nsizes:\n"
      "  N: {bench: [64], verify: [5]}\n"
      "  M: {bench: [64], verify: [3]}\n"
      "  V: {bench: [64], verify: [4]}\n"
      "tensors:\n"
      "  x: {type: f32, shape: [N], role: in, boundary: zero}\n"
      "  x2: {type: f32, shape: [N, M], role: in, boundary: zero}\n"
      "  idx: {type: i32, shape: [N], role: in, init: [0, V - 1]}\n" +
      outputs + "compute: |\n" + compute +
      "variants:\n  cpu:\n    - {name: loops, strategy: loops}\n";
  const auto path = std::filesystem::temp_directory_path() /
                    ("sb_affine_test_" + std::to_string(::getpid()) + "_" +
                     std::to_string(n++) + ".yaml");
  std::ofstream(path) << text;
  Result<Spec> s = load_and_check(path.string());
  std::filesystem::remove(path);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : format_error(s.error()));
  alive.push_back(s.ok() ? std::move(s.value()) : Spec{});
  return alive.back();
}

// The subscripts of the reads of x in `rhs` (a sum of reads x[...]) of y[i, j] = rhs.
std::vector<const Expr*> subscripts(const std::string& rhs) {
  const Spec& s = load("  y: {type: f32, shape: [N, M], role: out}\n", "  y[i, j] = " + rhs + "\n");
  std::vector<const Expr*> out;
  if (s.stmts.empty()) return out;
  for (const Expr* r : reads_of(*s.stmts[0].rhs))
    if (s.tensors[r->ref].name == "x") out.push_back(r->args[0].get());
  return out;
}

constexpr int kI = 0, kJ = 1;    // the output indices of y[i, j]
constexpr int kN = 0, kM = 1, kV = 2;  // the sizes

bool is_read_of_idx(const Expr& e) { return e.kind == ExprKind::Read; }

TEST(Affine, DecomposesLinearForms) {
  const auto subs = subscripts("x[2 * (i + 1) - j + N] + x[-(i - 3) * 4] + x[i - i + M * 3]");
  ASSERT_EQ(subs.size(), 3u);
  auto a = decompose(*subs[0]);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->vars, (std::map<int, int64_t>{{kI, 2}, {kJ, -1}}));
  EXPECT_EQ(a->sizes, (std::map<int, int64_t>{{kN, 1}}));
  EXPECT_EQ(a->constant, 2);
  EXPECT_FALSE(a->overflow);
  EXPECT_FALSE(a->is_constant());

  auto b = decompose(*subs[1]);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->vars, (std::map<int, int64_t>{{kI, -4}}));
  EXPECT_TRUE(b->sizes.empty());
  EXPECT_EQ(b->constant, 12);

  auto c = decompose(*subs[2]);  // i - i cancels: no zero coefficient is kept
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->vars.empty());
  EXPECT_TRUE(c->var_free());
  EXPECT_EQ(c->size(kM), 3);
  EXPECT_EQ(c->constant, 0);
}

TEST(Affine, NotAffineWithoutAnAtomRule) {
  const auto subs = subscripts("x[i * j] + x[i + N / 2] + x[N * M + i] + x[idx[i] + 1]");
  ASSERT_EQ(subs.size(), 4u);
  for (const Expr* s : subs) EXPECT_FALSE(decompose(*s));
}

TEST(Affine, VarFreeAtomsStayWhole) {
  const auto subs = subscripts("x[i + N / 2 - 1] + x[N * M + i] + x[i * j] + x[idx[i]]");
  ASSERT_EQ(subs.size(), 4u);
  auto a = decompose(*subs[0], var_free);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->vars, (std::map<int, int64_t>{{kI, 1}}));
  ASSERT_EQ(a->atoms.size(), 1u);
  EXPECT_EQ(a->atoms[0].coef, 1);
  EXPECT_EQ(a->atoms[0].expr->kind, ExprKind::Binary);
  EXPECT_EQ(a->atoms[0].expr->bop, BinOp::Div);
  EXPECT_EQ(a->constant, -1);
  EXPECT_FALSE(a->is_constant());

  auto b = decompose(*subs[1], var_free);  // a product of two sizes is one atom
  ASSERT_TRUE(b);
  ASSERT_EQ(b->atoms.size(), 1u);
  EXPECT_EQ(b->atoms[0].expr->bop, BinOp::Mul);
  EXPECT_TRUE(b->sizes.empty());

  EXPECT_FALSE(decompose(*subs[2], var_free));  // i * j uses index variables
  EXPECT_FALSE(decompose(*subs[3], var_free));  // a read is not var-free
}

TEST(Affine, ReadAtoms) {
  const auto subs = subscripts("x[2 * idx[i] + 1 - idx[i]]");
  ASSERT_EQ(subs.size(), 1u);
  auto a = decompose(*subs[0], is_read_of_idx);
  ASSERT_TRUE(a);
  // Two reads of idx[i] are one value: equal trees merge into one atom, 2 - 1.
  ASSERT_EQ(a->atoms.size(), 1u);
  EXPECT_EQ(a->atoms[0].coef, 1);
  EXPECT_TRUE(a->vars.empty());  // the reads' own subscripts are not looked into
  EXPECT_EQ(a->constant, 1);
  // Reads of other subscripts stay apart.
  const auto other = subscripts("x[idx[i] - idx[0]]");
  auto b = decompose(*other[0], is_read_of_idx);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->atoms.size(), 2u);
}

TEST(Affine, ArithmeticMergesAndDropsZeros) {
  Affine a = Affine::of_var(kI) + Affine::of_size(kN).scaled(3) + Affine::of_constant(5);
  Affine b = a - Affine::of_var(kI);
  EXPECT_FALSE(b.uses_var(kI));
  EXPECT_EQ(b.size(kN), 3);
  EXPECT_EQ(b.constant, 5);
  Affine z = a - a;
  EXPECT_TRUE(z.is_constant());
  EXPECT_EQ(z.constant, 0);
  EXPECT_TRUE(z.sizes.empty());

  const auto subs = subscripts("x[N / 2]");
  ASSERT_EQ(subs.size(), 1u);
  auto atom = decompose(*subs[0], var_free);
  ASSERT_TRUE(atom);
  Affine twice = *atom + *atom;  // the same node merges
  ASSERT_EQ(twice.atoms.size(), 1u);
  EXPECT_EQ(twice.atoms[0].coef, 2);
  EXPECT_TRUE((twice - twice).atoms.empty());
}

TEST(Affine, OverflowIsSticky) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  Affine a = Affine::of_constant(big) + Affine::of_constant(1);
  EXPECT_TRUE(a.overflow);
  EXPECT_TRUE((a - a).overflow);
  EXPECT_TRUE(Affine::of_var(kI).scaled(big).scaled(2).overflow);
  EXPECT_FALSE(Affine::of_var(kI).scaled(big).overflow);
  EXPECT_TRUE(Affine::of_var(kI).with_overflow(true).overflow);
  EXPECT_FALSE(evaluate(a, {1, 1, 1}));
}

TEST(Affine, OverflowInAConstantFactorReachesTheProduct) {
  const auto subs = subscripts("x[(3037000500 * 3037000500) * i]");
  ASSERT_EQ(subs.size(), 1u);
  auto a = decompose(*subs[0]);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->overflow);
}

TEST(Affine, DependsOnSeesReductionRangesOnlyWithTheStatement) {
  const Spec& s = load("  y: {type: f32, shape: [N], role: out}\n",
                       "  y[i] = sum(k in 0..i + 1: x[k])\n");
  ASSERT_EQ(s.stmts.size(), 1u);
  const Statement& st = s.stmts[0];
  EXPECT_FALSE(depends_on(*st.rhs, 0));
  EXPECT_TRUE(depends_on(*st.rhs, 0, &st));
  EXPECT_TRUE(depends_on(*st.rhs, 1));  // k, in the body
  EXPECT_FALSE(var_free(*st.rhs));
  EXPECT_TRUE(var_free(*st.vars[1].lo));
}

TEST(Affine, BoundaryChecksAndTheirCorners) {
  // y[i, j] over [N, M]: x2[i + a - 1, j] checks its first subscript only (j spans x2's second
  // dimension exactly), at both ends of a's range; x[j + i] checks its subscript, which varies
  // with j; x2[i, j] checks nothing.
  const Spec& s = load("  y: {type: f32, shape: [N, M], role: out}\n",
                       "  y[i, j] = sum(a in 0..3: x2[i + a - 1, j]) + x[j + i] + x2[i, j]\n");
  ASSERT_EQ(s.stmts.size(), 1u);
  const Statement& st = s.stmts[0];
  const int a = 2;  // the reduction variable
  ASSERT_EQ(st.vars.size(), 3u);
  const auto checks = boundary_checks(s, st, *st.rhs, kJ, {a});
  ASSERT_TRUE(checks);
  ASSERT_EQ(checks->size(), 2u);
  EXPECT_EQ(s.tensors[(*checks)[0].tensor].name, "x2");
  EXPECT_EQ((*checks)[0].dim, 0u);
  EXPECT_FALSE((*checks)[0].varies);
  EXPECT_EQ((*checks)[0].spans, std::vector<int>{a});
  EXPECT_EQ(s.tensors[(*checks)[1].tensor].name, "x");
  EXPECT_TRUE((*checks)[1].varies);
  EXPECT_TRUE((*checks)[1].spans.empty());
  using Corner = std::vector<std::pair<int, bool>>;
  EXPECT_EQ(check_corners((*checks)[0], kJ), (std::vector<Corner>{{{a, false}}, {{a, true}}}));
  EXPECT_EQ(check_corners((*checks)[1], kJ), (std::vector<Corner>{{{kJ, false}}, {{kJ, true}}}));
  // Skipped subtrees are not checked.
  const auto none = boundary_checks(s, st, *st.rhs, kJ, {a},
                                    [](const Expr& e) { return e.kind == ExprKind::Read; });
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  // A reduction variable that the caller binds is not spanned; one that is not fixed, or a
  // subscript that is not affine, gives no condition.
  EXPECT_TRUE(boundary_checks(s, st, *st.rhs, kJ, {})->at(0).spans.empty());
  const Spec& g = load("  y: {type: f32, shape: [N], role: out}\n",
                       "  y[i] = x[idx[i]] + sum(k in 0..i + 1: x[k + 1])\n");
  ASSERT_EQ(g.stmts.size(), 1u);
  EXPECT_FALSE(boundary_checks(g, g.stmts[0], *g.stmts[0].rhs, 0, {1}));
}

TEST(Affine, OffsetFromAnIndexVariable) {
  const auto subs = subscripts("x[i + 3 - N] + x[2 * i + 1] + x[j - 1]");
  ASSERT_EQ(subs.size(), 3u);
  auto a = offset_from(*decompose(*subs[0]), kI);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->vars.empty());
  EXPECT_EQ(a->size(kN), -1);
  EXPECT_EQ(a->constant, 3);
  EXPECT_FALSE(offset_from(*decompose(*subs[1]), kI));
  EXPECT_FALSE(offset_from(*decompose(*subs[2]), kI));
  auto c = offset_from(*decompose(*subs[2]), kJ);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->is_constant());
  EXPECT_EQ(c->constant, -1);
}

TEST(Affine, EvaluatesAtASizePoint) {
  const auto subs = subscripts("x[2 * (i + 1) - j + N] + x[N / 2 + i]");
  ASSERT_EQ(subs.size(), 2u);
  const SizePoint sizes = {5, 3, 4};
  EXPECT_EQ(evaluate(*decompose(*subs[0]), sizes, {3, 4}), 9);
  EXPECT_EQ(evaluate(*decompose(*subs[1], var_free), {7, 3, 4}, {1, 0}), 4);
  EXPECT_EQ(evaluate(*decompose(*subs[0]), sizes, {3, 4}),
            eval_int(*subs[0], sizes, {3, 4}));
}

TEST(Affine, ExtremesOverRanges) {
  const Spec& s = load("  y: {type: f32, shape: [N], role: out}\n",
                       "  y[i] = sum(k in 0..i + 1: x[i - k + 2] + x[2 * idx[k] + 1])\n");
  ASSERT_EQ(s.stmts.size(), 1u);
  const Statement& st = s.stmts[0];
  std::vector<const Expr*> subs;
  for (const Expr* r : reads_of(*st.rhs))
    if (s.tensors[r->ref].name == "x") subs.push_back(r->args[0].get());
  ASSERT_EQ(subs.size(), 2u);

  // i - k + 2 with 0 <= k <= i < N: from 2 (k = i) to N + 1 (k = 0, i = N - 1).
  auto lo = extreme(*decompose(*subs[0]), st, false);
  auto hi = extreme(*decompose(*subs[0]), st, true);
  ASSERT_TRUE(lo && hi);
  EXPECT_TRUE(lo->is_constant());
  EXPECT_EQ(lo->constant, 2);
  EXPECT_EQ(hi->sizes, (std::map<int, int64_t>{{kN, 1}}));
  EXPECT_EQ(hi->constant, 1);

  // 2 * idx[k] + 1 with idx in [0, V - 1]: from 1 to 2 V - 1; without a range, no bound.
  auto gathered = decompose(*subs[1], is_read_of_idx);
  ASSERT_TRUE(gathered);
  auto range = [&](const Expr& atom) {
    const Tensor& t = s.tensors[atom.ref];
    return std::pair<const Expr*, const Expr*>{t.init_lo_expr.get(), t.init_hi_expr.get()};
  };
  auto glo = extreme(*gathered, st, false, range);
  auto ghi = extreme(*gathered, st, true, range);
  ASSERT_TRUE(glo && ghi);
  EXPECT_TRUE(glo->is_constant());
  EXPECT_EQ(glo->constant, 1);
  EXPECT_EQ(ghi->sizes, (std::map<int, int64_t>{{kV, 2}}));
  EXPECT_EQ(ghi->constant, -1);
  EXPECT_FALSE(extreme(*gathered, st, true));
}

TEST(Affine, NonnegativeForAllSizes) {
  EXPECT_TRUE(nonnegative_for_all_sizes(Affine::of_size(kN) - Affine::of_constant(1)));
  EXPECT_FALSE(nonnegative_for_all_sizes(Affine::of_constant(5) - Affine::of_size(kN)));
  EXPECT_FALSE(nonnegative_for_all_sizes(Affine::of_constant(-1)));
  EXPECT_TRUE(nonnegative_for_all_sizes(Affine::of_constant(0)));
  EXPECT_FALSE(nonnegative_for_all_sizes(Affine::of_size(kN) - Affine::of_constant(2)));
}

// Quotients and products of sizes as atoms: d * (A / d) <= A for a literal d (the typecheck keeps
// A >= 0), a non-negative atom with a positive coefficient bounded by 0, anything else unproven.
TEST(Affine, NonnegativeWithQuotientAndProductAtoms) {
  const auto subs = subscripts(
      "x[(N - 2) / 2 + i] + x[N * M + i] + x[(N * M + 1) / 2 + i] + x[N / M + i] + "
      "x[(N - 2) / 3 + i]");
  ASSERT_EQ(subs.size(), 5u);
  auto atom = [&](size_t k) {
    std::optional<Affine> a = decompose(*subs[k], var_free);
    EXPECT_TRUE(a && a->atoms.size() == 1u) << k;
    Affine r;
    if (a && a->atoms.size() == 1u) r.atoms.push_back({1, a->atoms[0].expr});
    return r;
  };
  const Affine half = atom(0), nm = atom(1), half_nm = atom(2), n_over_m = atom(3),
               third = atom(4);
  const Affine n = Affine::of_size(kN), one = Affine::of_constant(1);
  // N - 2 - 2 * ((N - 2) / 2) >= 0, but not N - 3 - 2 * ((N - 2) / 2).
  EXPECT_TRUE(nonnegative_for_all_sizes(n - one.scaled(2) - half.scaled(2)));
  EXPECT_FALSE(nonnegative_for_all_sizes(n - one.scaled(3) - half.scaled(2)));
  // A coefficient that the divisor does not divide: A / q <= A, so N - 2 - (N - 2) / 3 >= 0, but
  // not N - 3 - 2 * ((N - 2) / 3), which would need the exact bound.
  EXPECT_TRUE(nonnegative_for_all_sizes(n - one.scaled(2) - third));
  EXPECT_TRUE(nonnegative_for_all_sizes(n - one.scaled(2) - third.scaled(3)));
  EXPECT_FALSE(nonnegative_for_all_sizes(n - one.scaled(3) - third.scaled(2)));
  // A product atom cancels against the same product inside a quotient's dividend:
  // N * M + 1 - 2 * ((N * M + 1) / 2) >= 0.
  EXPECT_TRUE(nonnegative_for_all_sizes(nm + one - half_nm.scaled(2)));
  // Non-negative atoms with a positive coefficient: N * M, N / M. With a negative one, a product
  // is unproven; a quotient by a size is bounded by its dividend, N / M <= N.
  EXPECT_TRUE(nonnegative_for_all_sizes(nm + n_over_m));
  EXPECT_FALSE(nonnegative_for_all_sizes(n - nm));
  // A product of sizes is at least 1 (every size is): N * M - 1 >= 0, not N * M - 2; a quotient
  // may be 0: N / M - 1 is unproven.
  EXPECT_TRUE(nonnegative_for_all_sizes(nm - one));
  EXPECT_FALSE(nonnegative_for_all_sizes(nm - one.scaled(2)));
  EXPECT_FALSE(nonnegative_for_all_sizes(n_over_m - one));
  EXPECT_TRUE(nonnegative_for_all_sizes(nm + n_over_m - one));
  EXPECT_TRUE(nonnegative_for_all_sizes(n - n_over_m));
  EXPECT_FALSE(nonnegative_for_all_sizes(n - one - n_over_m));
}

// Products of sizes merge by value: N * M and M * N are one atom, 2 * N * M twice it.
TEST(Affine, ProductsOfSizesMergeByValue) {
  const auto subs = subscripts("x[N * M + i] + x[M * N + i] + x[2 * N * M + i] + x[N * N + i]");
  ASSERT_EQ(subs.size(), 4u);
  std::vector<Affine> p;
  for (const Expr* e : subs) {
    std::optional<Affine> a = decompose(*e, var_free);
    ASSERT_TRUE(a && a->atoms.size() == 1u);
    p.push_back(Affine{});
    p.back().atoms.push_back({1, a->atoms[0].expr});
  }
  const std::optional<SizeProduct> nm = size_product(*p[0].atoms[0].expr);
  const std::optional<SizeProduct> twice = size_product(*p[2].atoms[0].expr);
  ASSERT_TRUE(nm && twice);
  EXPECT_EQ(nm->k, 1);
  EXPECT_EQ(nm->sizes, (std::vector<int>{kN, kM}));
  EXPECT_EQ(twice->k, 2);
  EXPECT_EQ(twice->sizes, (std::vector<int>{kN, kM}));
  EXPECT_TRUE((p[0] - p[1]).is_constant());
  EXPECT_TRUE((p[2] - p[0].scaled(2)).is_constant());
  EXPECT_FALSE((p[2] - p[0]).is_constant());  // 2 * N * M - N * M = N * M
  EXPECT_FALSE((p[0] - p[3]).is_constant());  // N * N is another product
  EXPECT_FALSE(size_product(*subs[0]));        // N * M + i
}

// SizeProducts: forms times sizes, and the bound of a quotient (quotient_limit).
TEST(Affine, QuotientLimit) {
  const auto subs = subscripts("x[N * M + i]");
  ASSERT_EQ(subs.size(), 1u);
  const std::optional<Affine> nm_form = decompose(*subs[0], var_free);
  ASSERT_TRUE(nm_form && nm_form->atoms.size() == 1u);
  Affine nm;
  nm.atoms.push_back({1, nm_form->atoms[0].expr});
  const Affine n = Affine::of_size(kN), m = Affine::of_size(kM), one = Affine::of_constant(1);
  SizeProducts products;
  // (N - 1) * M = N * M - M, with N * M merging with the tree's atom.
  const std::optional<Affine> t = products.times(n - one, 1, {kM});
  ASSERT_TRUE(t);
  EXPECT_TRUE((*t - nm + m).is_constant());
  EXPECT_EQ((*t - nm + m).constant, 0);
  EXPECT_FALSE(products.times(Affine::of_var(kI), 1, {kM}));
  auto size = [](int s) {
    Expr e;
    e.kind = ExprKind::SizeRef;
    e.ref = s;
    return e;
  };
  auto lit = [](int64_t v) {
    Expr e;
    e.kind = ExprKind::IntLit;
    e.ival = v;
    return e;
  };
  // A < N * M by M: the quotient is below N. By N: below M.
  std::optional<Affine> e = quotient_limit(nm - one, size(kM), products);
  ASSERT_TRUE(e);
  EXPECT_TRUE((*e - n).is_constant() && (*e - n).constant == 0);
  e = quotient_limit(nm - one, size(kN), products);
  ASSERT_TRUE(e);
  EXPECT_TRUE((*e - m).is_constant() && (*e - m).constant == 0);
  // A < 2 * N + 1 by 2: below N + 1 (A = 2 * N gives N). A < N by 3: below N (rounded up).
  e = quotient_limit(n.scaled(2), lit(2), products);
  ASSERT_TRUE(e);
  EXPECT_TRUE((*e - n).is_constant() && (*e - n).constant == 1);
  e = quotient_limit(n - one, lit(3), products);
  ASSERT_TRUE(e);
  EXPECT_TRUE((*e - n).is_constant() && (*e - n).constant == 0);
  // A < N by M: nothing divides, so the dividend's own bound, N.
  e = quotient_limit(n - one, size(kM), products);
  ASSERT_TRUE(e);
  EXPECT_TRUE((*e - n).is_constant() && (*e - n).constant == 0);
  // A < N * M + M by M: below N + 1.
  e = quotient_limit(nm + m - one, size(kM), products);
  ASSERT_TRUE(e);
  EXPECT_TRUE((*e - n).is_constant() && (*e - n).constant == 1);
}

}  // namespace
}  // namespace sb
