#include "check/bounds.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "ir/affine.h"
#include "ir/visitor.h"

namespace sb {

namespace {

// A term `(A / q) * m` or `(A % q) * m` of a subscript: the quotient or remainder node, with q a
// positive literal or a size and A affine in indices and sizes, times the literal k and the sizes
// `by` (m: a product of sizes and literals, in either order and any nesting, `CIG * (o / COG)`,
// or none).
struct QuotientTerm {
  const Expr* div = nullptr;  // A / q or A % q
  int64_t k = 1;
  std::vector<int> by;
};

std::optional<QuotientTerm> quotient_term(const Expr& x) {
  QuotientTerm t;
  bool ok = true;
  std::function<void(const Expr&)> factor = [&](const Expr& f) {
    if (!ok) return;
    if (f.kind == ExprKind::Binary && f.bop == BinOp::Mul) {
      factor(*f.args[0]);
      factor(*f.args[1]);
    } else if (f.kind == ExprKind::Binary && (f.bop == BinOp::Div || f.bop == BinOp::Mod) &&
               !t.div) {
      t.div = &f;
    } else if (f.kind == ExprKind::SizeRef) {
      t.by.push_back(f.ref);
    } else if (f.kind == ExprKind::IntLit) {
      ok = !__builtin_mul_overflow(t.k, f.ival, &t.k);
    } else {
      ok = false;
    }
  };
  factor(x);
  if (!ok || !t.div) return std::nullopt;
  const Expr& q = *t.div->args[1];
  if (!(q.kind == ExprKind::IntLit && q.ival > 0) && q.kind != ExprKind::SizeRef)
    return std::nullopt;
  if (!decompose(*t.div->args[0])) return std::nullopt;
  return t;
}

class Prover {
 public:
  Prover(const Spec& s, const Statement& st) : s_(s), st_(st) {}

  // Every read of `e` without a boundary rule, in pre-order; the first failure is the error.
  Status check(const Expr& e) const {
    class Reads : public ExprVisitor {
     public:
      explicit Reads(const Prover& p) : p_(p) {}
      Status status;

      void visit(const Expr& e) override {
        if (status.ok()) ExprVisitor::visit(e);
      }

     protected:
      void visit_read(const Expr& e) override {
        status = p_.check_read(e);
        visit_children(e);
      }

     private:
      const Prover& p_;
    } reads(*this);
    reads.visit(e);
    return reads.status;
  }

  // A subscript A / q or A % q with q a positive literal or a size and A affine in indices and
  // sizes: in range when A >= 0 (then C's division is the floor) and
  //   A / q: the quotient's greatest value is below the extent: q * extent - 1 - max(A) >= 0 for
  //          a literal q, extent - 1 - max(A) >= 0 for a size (q >= 1);
  //   A % q: q <= extent (the remainder is at most q - 1), or max(A) < extent.
  // nullopt when `sub` is not of that shape (check_read's affine rule applies).
  std::optional<Status> check_quotient(const Expr& sub, const Tensor& tn, size_t d,
                                       const std::string& text) const {
    if (sub.kind != ExprKind::Binary || (sub.bop != BinOp::Div && sub.bop != BinOp::Mod))
      return std::nullopt;
    const Expr& q = *sub.args[1];
    const bool literal = q.kind == ExprKind::IntLit && q.ival > 0;
    if (!literal && q.kind != ExprKind::SizeRef) return std::nullopt;
    const std::optional<Affine> a = decompose(*sub.args[0]);
    if (!a) return std::nullopt;
    const std::optional<Affine> lo = extreme(*a, st_, false);
    const std::optional<Affine> hi = extreme(*a, st_, true);
    const std::optional<Affine> extent = decompose(*tn.shape[d], var_free);
    SB_ASSERT(extent.has_value(), "shape was checked to be built from sizes and literals");
    if (!lo || !hi || a->overflow || lo->overflow || hi->overflow) return std::nullopt;
    if (!nonnegative_for_all_sizes(*lo))
      return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name + "' divides a value " +
                                     "that can be negative; declare a boundary rule (zero or " +
                                     "clamp) for '" + tn.name + "' or change the range");
    const Affine below = *extent - Affine::of_constant(1) - *hi;  // max(A) < extent
    bool ok = nonnegative_for_all_sizes(below);
    if (!ok && sub.bop == BinOp::Div && literal)
      ok = nonnegative_for_all_sizes(extent->scaled(q.ival) - Affine::of_constant(1) - *hi);
    if (!ok && sub.bop == BinOp::Mod)
      ok = nonnegative_for_all_sizes(*extent - (literal ? Affine::of_constant(q.ival)
                                                        : Affine::of_size(q.ref)));
    if (ok) return Status{};
    return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name + "' can reach past " +
                                   "its extent '" + to_string(*tn.shape[d], s_, nullptr) +
                                   "'; declare a boundary rule (zero or clamp) for '" + tn.name +
                                   "' or change the range");
  }

  // The bound of one quotient term on the side it moves: the greatest value of the subscript
  // (upper) for a positive coefficient, else the least; `options` are each a sound bound, none
  // provably nearer 0 than another.
  struct TermBound {
    bool upper = true;
    std::vector<Affine> options;
  };

  // The bound of the quotient term `t` (coefficient times (A / q) * m or (A % q) * m,
  // quotient_term) of subscript `sub`. A >= 0 (then C's division is the floor), so the quotient
  // lies in [0, E - 1] with E from quotient_limit of A's greatest value, and the term between 0
  // and its coefficient times (E - 1) * m (m >= 0, a product of sizes): `(o / COG) * CIG` for
  // o < G * COG lies in [0, (G - 1) * CIG]. Where q divides the multiplier, q * (A / q) <= A also
  // bounds the term by (coefficient * m / q) * max(A): tighter for `(i / 3) * 3`, looser for
  // `(i / 2) * 2 + 1` over an even extent. A remainder lies in [0, min(q - 1, A)]. Each term is
  // bounded apart from the others, which can only widen the subscript's range.
  Status bound_quotient_term(const Expr& sub, const AffineAtom& t, const Tensor& tn,
                             const std::string& text, std::vector<TermBound>& bounds) const {
    const QuotientTerm q = *quotient_term(*t.expr);
    const std::string what = to_string(*q.div, s_, &st_);
    const std::optional<Affine> a = decompose(*q.div->args[0]);
    SB_ASSERT(a.has_value(), "quotient_term checked the dividend to be affine");
    const std::optional<Affine> a_lo = extreme(*a, st_, false);
    const std::optional<Affine> a_hi = extreme(*a, st_, true);
    int64_t k = 0;
    if (a->overflow || (a_lo && a_lo->overflow) || (a_hi && a_hi->overflow) ||
        __builtin_mul_overflow(t.coef, q.k, &k))
      return make_error(sub.loc, "integer overflow in subscript '" + text + "' of '" + tn.name +
                                     "': its bounds leave the 64-bit range");
    auto unbounded = [&] {
      return make_error(sub.loc, "cannot bound '" + what + "' in subscript '" + text + "' of '" +
                                     tn.name + "'; declare a boundary rule (zero or clamp) for '" +
                                     tn.name + "'");
    };
    if (!a_lo || !a_hi) return unbounded();
    if (!nonnegative_for_all_sizes(*a_lo))
      return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name + "' divides a value " +
                                     "that can be negative; declare a boundary rule (zero or " +
                                     "clamp) for '" + tn.name + "' or change the range");
    const Expr& divisor = *q.div->args[1];
    std::optional<Affine> by_limit, by_dividend;
    if (q.div->bop == BinOp::Mod) {
      // A % q <= q - 1, A % q <= A.
      const Affine q_form = divisor.kind == ExprKind::IntLit ? Affine::of_constant(divisor.ival)
                                                             : Affine::of_size(divisor.ref);
      by_limit = products_.times(q_form - Affine::of_constant(1), k, q.by);
      by_dividend = products_.times(*a_hi, k, q.by);
    } else {
      const std::optional<Affine> limit = quotient_limit(*a_hi, divisor, products_);
      if (limit) by_limit = products_.times(*limit - Affine::of_constant(1), k, q.by);
      std::vector<int> by = q.by;
      const auto at = divisor.kind == ExprKind::SizeRef
                          ? std::find(by.begin(), by.end(), divisor.ref)
                          : by.end();
      if (divisor.kind == ExprKind::IntLit && k % divisor.ival == 0) {
        by_dividend = products_.times(*a_hi, k / divisor.ival, by);
      } else if (at != by.end()) {
        by.erase(at);
        by_dividend = products_.times(*a_hi, k, by);
      }
    }
    TermBound b;
    b.upper = k > 0;
    for (std::optional<Affine>* o : {&by_limit, &by_dividend})
      if (*o && (*o)->overflow)
        return make_error(sub.loc, "integer overflow in subscript '" + text + "' of '" + tn.name +
                                       "': its bounds leave the 64-bit range");
    // The nearer 0 of the two when that is proven (for the upper side, the lesser), else both.
    auto nearer = [&](const Affine& x, const Affine& y) {
      return nonnegative_for_all_sizes(b.upper ? y - x : x - y);
    };
    if (by_limit && by_dividend && nearer(*by_dividend, *by_limit)) by_limit.reset();
    else if (by_limit && by_dividend && nearer(*by_limit, *by_dividend)) by_dividend.reset();
    for (std::optional<Affine>* o : {&by_limit, &by_dividend})
      if (*o) b.options.push_back(**o);
    if (b.options.empty()) return unbounded();
    bounds.push_back(std::move(b));
    return {};
  }

  // Whether base + sign * (one option of each bound on the `upper` side) is proven >= 0 for some
  // choice of options (at most 64 choices tried).
  static bool proven_with(const Affine& base, const std::vector<TermBound>& bounds, bool upper,
                          int64_t sign, size_t i = 0) {
    int budget = 64;
    std::function<bool(const Affine&, size_t)> go = [&](const Affine& f, size_t j) {
      while (j < bounds.size() && bounds[j].upper != upper) ++j;
      if (j == bounds.size()) return budget-- > 0 && nonnegative_for_all_sizes(f);
      for (const Affine& o : bounds[j].options) {
        Affine g = f;
        g.add(o, sign);
        if (go(g, j + 1)) return true;
        if (budget <= 0) return false;
      }
      return false;
    };
    return go(base, i);
  }

  // The subscripts of one read, when its tensor has no boundary rule.
  Status check_read(const Expr& e) const {
    if (s_.tensors[e.ref].boundary == Boundary::None) {
      const Tensor& tn = s_.tensors[e.ref];
      for (size_t d = 0; d < e.args.size(); ++d) {
        const Expr& sub = *e.args[d];
        std::string text = to_string(sub, s_, &st_);
        if (std::optional<Status> quotient = check_quotient(sub, tn, d, text)) {
          SB_TRY(*quotient);
          continue;
        }
        // Gathered values (reads of i32 inputs with a declared range) are atoms, each in the
        // range its tensor declares; so are quotient and remainder terms `(A / q) * m`
        // (quotient_term).
        bool gathers_ok = true;
        auto a = decompose(sub, [&](const Expr& x) {
          if (x.kind != ExprKind::Read) return quotient_term(x).has_value();
          const Tensor& src = s_.tensors[x.ref];
          gathers_ok = gathers_ok && src.role == Role::In && src.init_lo_expr;
          return true;
        });
        if (!gathers_ok) a.reset();
        auto gather_range = [&](const Expr& x) {
          const Tensor& src = s_.tensors[x.ref];
          return std::pair<const Expr*, const Expr*>{src.init_lo_expr.get(),
                                                     src.init_hi_expr.get()};
        };
        std::vector<AffineAtom> quotients;
        if (a) {
          const std::vector<AffineAtom> atoms = std::move(a->atoms);
          a->atoms.clear();
          for (const AffineAtom& t : atoms)
            (t.expr->kind == ExprKind::Read ? a->atoms : quotients).push_back(t);
        }
        std::optional<Affine> lo = a ? extreme(*a, st_, false, gather_range) : std::nullopt;
        std::optional<Affine> hi = a ? extreme(*a, st_, true, gather_range) : std::nullopt;
        std::vector<TermBound> terms;
        for (const AffineAtom& t : quotients) {
          if (!lo || !hi) break;
          SB_TRY(bound_quotient_term(sub, t, tn, text, terms));
        }
        // Quotients and products of sizes in the shape are atoms (typecheck.cpp).
        auto extent = decompose(*tn.shape[d], var_free);
        SB_ASSERT(extent.has_value(), "shape was checked to be built from sizes and literals");
        Affine room = *extent;  // extent - 1 - max(subscript) >= 0
        if (__builtin_sub_overflow(room.constant, 1, &room.constant)) room.overflow = true;
        if (hi) room.add(*hi, -1);
        bool term_overflow = false;  // with the first option of every quotient term
        if (lo && hi) {
          Affine l = *lo, r = room;
          for (const TermBound& b : terms) (b.upper ? r : l).add(b.options[0], b.upper ? -1 : 1);
          term_overflow = l.overflow || r.overflow;
        }
        if ((a && a->overflow) || (lo && lo->overflow) || (hi && hi->overflow) || room.overflow ||
            term_overflow)
          return make_error(sub.loc, "integer overflow in subscript '" + text + "' of '" +
                                         tn.name + "': its bounds leave the 64-bit range");
        if (!lo || !hi)
          return make_error(sub.loc, "cannot prove that subscript '" + text + "' of '" + tn.name +
                                         "' stays in bounds (it is not affine in indices, sizes "
                                         "and gathered i32 inputs with an integer 'init' range); "
                                         "declare a boundary rule (zero or clamp) for '" +
                                         tn.name + "'");
        if (!proven_with(*lo, terms, false, 1))
          return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name +
                                         "' can be negative; declare a boundary rule (zero or "
                                         "clamp) for '" +
                                         tn.name + "' or change the range");
        if (!proven_with(room, terms, true, -1))
          return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name + "' can reach " +
                                         "past its extent '" +
                                         to_string(*tn.shape[d], s_, nullptr) +
                                         "'; declare a boundary rule (zero or clamp) for '" +
                                         tn.name + "' or change the range");
      }
    }
    return {};
  }

  Status ranges() const {
    for (const IndexVar& v : st_.vars) {
      if (!v.is_reduction) continue;
      SB_TRY(check(*v.lo));
      SB_TRY(check(*v.hi));
    }
    return {};
  }

 private:
  const Spec& s_;
  const Statement& st_;
  mutable SizeProducts products_;  // owns the product nodes of the forms above
};

}  // namespace

Status check_bounds(const Spec& spec) {
  for (const Statement& st : spec.stmts) {
    Prover p(spec, st);
    SB_TRY(p.ranges());
    SB_TRY(p.check(*st.rhs));
  }
  return {};
}

}  // namespace sb
