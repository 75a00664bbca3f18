#include "ir/intrinsics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/build.h"
#include "support/diag.h"

namespace sb {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A step function's result depends on rounding when its argument lies this close (relative to
// the argument's magnitude) to a step: there any result is accepted (magnitude inf). Elsewhere
// the result is exact.
constexpr double kStepSlack = 1.0 / 65536;

// ---- Typed nodes for the default expansions (ir/build.h) -------------------------------

ExprPtr inf_const(DType t, const Loc& loc) {
  ExprPtr e = ir_node(ExprKind::Const, t, loc);
  e->name = "inf";
  e->fval = kInf;
  return e;
}

ExprPtr call1(Fn fn, ExprPtr a) {
  const DType t = a->type;
  const Loc loc = a->loc;
  std::vector<ExprPtr> args;
  args.push_back(std::move(a));
  return ir_call(fn, std::move(args), t, loc);
}

ExprPtr arg(const Expr& call, size_t i) {
  return clone(*call.args[i]);
}

// ---- Default expansions --------------------------------------------------------------------

// sigmoid(x) = 1 / (1 + exp(-x))
ExprPtr expand_sigmoid(const Expr& c) {
  const DType t = c.type;
  return ir_binary(BinOp::Div, ir_lit(1, t, c.loc),
                   ir_binary(BinOp::Add, ir_lit(1, t, c.loc), call1(Fn::Exp, ir_neg(arg(c, 0)))));
}

// rsqrt(x) = 1 / sqrt(x)
ExprPtr expand_rsqrt(const Expr& c) {
  return ir_binary(BinOp::Div, ir_lit(1, c.type, c.loc), call1(Fn::Sqrt, arg(c, 0)));
}

// log1p(x), accurate near 0 (Kahan): with u = 1 + x rounded, log(u) * (x / (u - 1)), which
// corrects log(u) for the rounding of u; x itself where u rounds to 1; u where u is inf.
ExprPtr expand_log1p(const Expr& c) {
  const DType t = c.type;
  auto u = [&] { return ir_binary(BinOp::Add, ir_lit(1, t, c.loc), arg(c, 0)); };
  ExprPtr general =
      ir_binary(BinOp::Mul, call1(Fn::Log, u()),
                ir_binary(BinOp::Div, arg(c, 0), ir_binary(BinOp::Sub, u(), ir_lit(1, t, c.loc))));
  ExprPtr big = ir_select(ir_binary(BinOp::Eq, u(), inf_const(t, c.loc)), u(), std::move(general));
  return ir_select(ir_binary(BinOp::Eq, u(), ir_lit(1, t, c.loc)), arg(c, 0), std::move(big));
}

// expm1(x), accurate near 0 (Kahan): with u = exp(x), (u - 1) * (x / log(u)); x where u rounds
// to 1; -1 where u - 1 rounds to -1; u where u is inf.
ExprPtr expand_expm1(const Expr& c) {
  const DType t = c.type;
  auto u = [&] { return call1(Fn::Exp, arg(c, 0)); };
  auto um1 = [&] { return ir_binary(BinOp::Sub, u(), ir_lit(1, t, c.loc)); };
  ExprPtr general =
      ir_binary(BinOp::Mul, um1(), ir_binary(BinOp::Div, arg(c, 0), call1(Fn::Log, u())));
  ExprPtr big = ir_select(ir_binary(BinOp::Eq, u(), inf_const(t, c.loc)), u(), std::move(general));
  ExprPtr low = ir_select(ir_binary(BinOp::Eq, um1(), ir_neg(ir_lit(1, t, c.loc))),
                          ir_neg(ir_lit(1, t, c.loc)), std::move(big));
  return ir_select(ir_binary(BinOp::Eq, u(), ir_lit(1, t, c.loc)), arg(c, 0), std::move(low));
}

// sign(x) = 1 where x > 0, -1 where x < 0, else x itself (0, -0, NaN)
ExprPtr expand_sign(const Expr& c) {
  const DType t = c.type;
  ExprPtr inner =
      ir_select(ir_binary(BinOp::Lt, arg(c, 0), ir_lit(0, t, c.loc)), ir_neg(ir_lit(1, t, c.loc)),
                is_float(t) ? arg(c, 0) : ir_lit(0, t, c.loc));
  return ir_select(ir_binary(BinOp::Gt, arg(c, 0), ir_lit(0, t, c.loc)), ir_lit(1, t, c.loc),
                   std::move(inner));
}

// ---- Reference values and magnitudes (harness/run/reference.h states the rules) -----------------

MagValue ref_min_max(const MagValue* a, bool is_min) {
  if (std::isnan(a[0].value)) return a[0];
  if (std::isnan(a[1].value)) return a[1];
  if (a[0].value == a[1].value) return {a[0].value, std::max(a[0].mag, a[1].mag)};
  return (is_min == (a[0].value < a[1].value)) ? a[0] : a[1];
}

MagValue ref_min(const MagValue* a) {
  return ref_min_max(a, true);
}
MagValue ref_max(const MagValue* a) {
  return ref_min_max(a, false);
}

MagValue ref_abs(const MagValue* a) {
  const double v = std::fabs(a[0].value);
  return {v, std::max(v, a[0].mag)};
}

MagValue ref_exp(const MagValue* a) {
  const double v = std::exp(a[0].value);
  return {v, v * std::max(1.0, a[0].mag)};
}

MagValue ref_log(const MagValue* a) {
  const double x = a[0].value, v = std::log(x);
  if (x == 0) return {v, kInf};
  return {v, std::max(std::fabs(v), a[0].mag / std::fabs(x))};
}

MagValue ref_sqrt(const MagValue* a) {
  const double v = std::sqrt(a[0].value);
  if (v == 0) return {v, a[0].mag == 0 ? 0 : kInf};
  return {v, std::max(v, a[0].mag / (2 * v))};
}

MagValue ref_tanh(const MagValue* a) {
  const double v = std::tanh(a[0].value);
  return {v, std::max(std::fabs(v), a[0].mag * (1 - v * v))};
}

MagValue ref_erf(const MagValue* a) {
  const double x = a[0].value, v = std::erf(x);
  const double slope = 1.1283791670955126 * std::exp(-x * x);  // 2 / sqrt(pi) * e^-x^2
  return {v, std::max(std::fabs(v), a[0].mag * slope)};
}

MagValue ref_sigmoid(const MagValue* a) {
  const double v = 1 / (1 + std::exp(-a[0].value));
  return {v, std::max(v, a[0].mag * v * (1 - v))};
}

MagValue ref_log1p(const MagValue* a) {
  const double x = a[0].value, v = std::log1p(x);
  if (x == -1) return {v, kInf};
  return {v, std::max(std::fabs(v), a[0].mag / std::fabs(1 + x))};
}

MagValue ref_expm1(const MagValue* a) {
  const double x = a[0].value, v = std::expm1(x);
  return {v, std::max(std::fabs(v), a[0].mag * std::exp(x))};
}

MagValue ref_pow(const MagValue* a) {
  const double x = a[0].value, y = a[1].value, v = std::pow(x, y);
  if (x == 0) return {v, a[0].mag == 0 ? std::fabs(v) : kInf};
  // d/dx: y x^(y-1) = v y / x; d/dy: v log|x|.
  const double m = std::fabs(v) * (std::fabs(y) * a[0].mag / std::fabs(x) +
                                   std::fabs(std::log(std::fabs(x))) * a[1].mag);
  return {v, std::max(std::fabs(v), m)};
}

MagValue ref_sin(const MagValue* a) {
  const double v = std::sin(a[0].value);
  return {v, std::max(std::fabs(v), a[0].mag)};
}

MagValue ref_cos(const MagValue* a) {
  const double v = std::cos(a[0].value);
  return {v, std::max(std::fabs(v), a[0].mag)};
}

// floor, ceil, round, sign: exact, except within kStepSlack of a step (any result accepted).
MagValue step(double x, double mag, double v, double nearest_step) {
  if (std::fabs(x - nearest_step) < mag * kStepSlack) return {v, kInf};
  return {v, std::fabs(v)};
}

MagValue ref_floor(const MagValue* a) {
  const double x = a[0].value;
  return step(x, a[0].mag, std::floor(x), std::nearbyint(x));
}

MagValue ref_ceil(const MagValue* a) {
  const double x = a[0].value;
  return step(x, a[0].mag, std::ceil(x), std::nearbyint(x));
}

MagValue ref_round(const MagValue* a) {  // half to even, in the default rounding mode
  const double x = a[0].value;
  return step(x, a[0].mag, std::nearbyint(x), std::floor(x) + 0.5);
}

MagValue ref_sign(const MagValue* a) {
  const double x = a[0].value;
  const double v = std::isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : x;
  return step(x, a[0].mag, v, 0.0);
}

MagValue ref_rsqrt(const MagValue* a) {
  const double x = a[0].value, v = 1 / std::sqrt(x);
  if (x == 0) return {v, kInf};
  return {v, std::max(std::fabs(v), std::fabs(v) * a[0].mag / (2 * std::fabs(x)))};
}

// Integer references (exact in int64; abs of the most negative value wraps).
int64_t int_min(const int64_t* a) {
  return std::min(a[0], a[1]);
}
int64_t int_max(const int64_t* a) {
  return std::max(a[0], a[1]);
}
int64_t int_abs(const int64_t* a) {
  return a[0] < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a[0])) : a[0];
}
int64_t int_sign(const int64_t* a) {
  return (a[0] > 0) - (a[0] < 0);
}

// The truncating division and remainder that legalize_int_div leaves, by a divisor that is
// never 0 or -1 there (the guards around them give those cases C's defined results).
MagValue ref_div_trunc(const MagValue* a) {
  const double q = a[1].value == 0 ? 0 : std::trunc(a[0].value / a[1].value);
  return {q, std::fabs(q)};
}
MagValue ref_rem_trunc(const MagValue* a) {
  const double r = a[1].value == 0 ? 0 : std::fmod(a[0].value, a[1].value);
  return {r, std::fabs(a[1].value)};
}
int64_t int_div_trunc(const int64_t* a) {
  SB_ASSERT(a[1] != 0 && a[1] != -1, "div_trunc by 0 or -1 (legalize_int_div guards those)");
  return a[0] / a[1];
}
int64_t int_rem_trunc(const int64_t* a) {
  SB_ASSERT(a[1] != 0 && a[1] != -1, "rem_trunc by 0 or -1 (legalize_int_div guards those)");
  return a[0] % a[1];
}

const std::vector<Intrinsic>& table() {
  static const std::vector<Intrinsic> t = {
      {Fn::Min, "min", 2, TypeRule::SameNumeric, ref_min, int_min, nullptr,
       "the smaller argument; NaN if either is NaN"},
      {Fn::Max, "max", 2, TypeRule::SameNumeric, ref_max, int_max, nullptr,
       "the larger argument; NaN if either is NaN"},
      {Fn::Abs, "abs", 1, TypeRule::SameNumeric, ref_abs, int_abs, nullptr, "absolute value"},
      {Fn::Exp, "exp", 1, TypeRule::SameFloat, ref_exp, nullptr, nullptr, "e^x"},
      {Fn::Log, "log", 1, TypeRule::SameFloat, ref_log, nullptr, nullptr, "natural logarithm"},
      {Fn::Sqrt, "sqrt", 1, TypeRule::SameFloat, ref_sqrt, nullptr, nullptr, "square root"},
      {Fn::Tanh, "tanh", 1, TypeRule::SameFloat, ref_tanh, nullptr, nullptr, "hyperbolic tangent"},
      {Fn::Erf, "erf", 1, TypeRule::SameFloat, ref_erf, nullptr, nullptr, "error function"},
      {Fn::Select, "select", 3, TypeRule::Select, nullptr, nullptr, nullptr,
       "select(c, a, b): a where the comparison c holds, else b (only the chosen one is "
       "evaluated); also spelled where"},
      {Fn::Sigmoid, "sigmoid", 1, TypeRule::SameFloat, ref_sigmoid, nullptr, expand_sigmoid,
       "1 / (1 + exp(-x))"},
      {Fn::Log1p, "log1p", 1, TypeRule::SameFloat, ref_log1p, nullptr, expand_log1p,
       "log(1 + x), accurate near 0"},
      {Fn::Expm1, "expm1", 1, TypeRule::SameFloat, ref_expm1, nullptr, expand_expm1,
       "exp(x) - 1, accurate near 0"},
      {Fn::Pow, "pow", 2, TypeRule::SameFloat, ref_pow, nullptr, nullptr,
       "pow(x, y): x^y, as C's pow"},
      {Fn::Sin, "sin", 1, TypeRule::SameFloat, ref_sin, nullptr, nullptr, "sine (radians)"},
      {Fn::Cos, "cos", 1, TypeRule::SameFloat, ref_cos, nullptr, nullptr, "cosine (radians)"},
      {Fn::Floor, "floor", 1, TypeRule::SameFloat, ref_floor, nullptr, nullptr,
       "the largest integer not above x"},
      {Fn::Ceil, "ceil", 1, TypeRule::SameFloat, ref_ceil, nullptr, nullptr,
       "the smallest integer not below x"},
      {Fn::Round, "round", 1, TypeRule::SameFloat, ref_round, nullptr, nullptr,
       "the nearest integer, halves to even (as torch.round and numpy.round)"},
      {Fn::Sign, "sign", 1, TypeRule::SameNumeric, ref_sign, int_sign, expand_sign,
       "1 for x > 0, -1 for x < 0, else x (0, -0 or NaN)"},
      {Fn::Rsqrt, "rsqrt", 1, TypeRule::SameFloat, ref_rsqrt, nullptr, expand_rsqrt, "1 / sqrt(x)"},
      {Fn::DivTrunc, "div_trunc", 2, TypeRule::SameNumeric, ref_div_trunc, int_div_trunc, nullptr,
       "integer a / b truncated toward zero, b never 0 or -1", /*internal=*/true},
      {Fn::RemTrunc, "rem_trunc", 2, TypeRule::SameNumeric, ref_rem_trunc, int_rem_trunc, nullptr,
       "integer a % b with the sign of a, b never 0 or -1", /*internal=*/true},
  };
  return t;
}

}  // namespace

const std::vector<Intrinsic>& all_intrinsics() {
  static const bool ordered = [] {
    const auto& t = table();
    for (size_t i = 0; i < t.size(); ++i)
      if (static_cast<size_t>(t[i].fn) != i) return false;
    return t.size() == static_cast<size_t>(Fn::RemTrunc) + 1;
  }();
  SB_ASSERT(ordered, "the intrinsics table must list every Fn once, in Fn order");
  return table();
}

const Intrinsic& intrinsic(Fn fn) {
  const auto& t = all_intrinsics();
  const size_t i = static_cast<size_t>(fn);
  SB_ASSERT(i < t.size(), "an Fn without an intrinsics record");
  return t[i];
}

const Intrinsic* find_intrinsic(std::string_view name) {
  if (name == "where") return &intrinsic(Fn::Select);
  for (const Intrinsic& r : all_intrinsics())
    if (!r.internal && r.name == name) return &r;
  return nullptr;
}

std::vector<std::string_view> intrinsic_spellings() {
  std::vector<std::string_view> out;
  for (const Intrinsic& r : all_intrinsics())
    if (!r.internal) out.push_back(r.name);
  out.push_back("where");
  return out;
}

}  // namespace sb
