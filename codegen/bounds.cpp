#include "bounds.h"

#include <map>
#include <optional>

namespace sb {

namespace {

// c0 + sum(coef * term), where a term is a size (key >= 0: size index) or an index variable
// (key < 0: -1 - var index).
struct Affine {
  int64_t c0 = 0;
  std::map<int, int64_t> terms;

  void add(const Affine& o, int64_t k) {
    c0 += k * o.c0;
    for (auto [t, c] : o.terms) {
      terms[t] += k * c;
      if (terms[t] == 0) terms.erase(t);
    }
  }
  bool constant() const { return terms.empty(); }
};

std::optional<Affine> affine(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: {
      Affine a;
      a.c0 = e.ival;
      return a;
    }
    case ExprKind::SizeRef: {
      Affine a;
      a.terms[e.ref] = 1;
      return a;
    }
    case ExprKind::IndexVar: {
      Affine a;
      a.terms[-1 - e.ref] = 1;
      return a;
    }
    case ExprKind::Unary: {
      if (e.uop != UnOp::Neg) return std::nullopt;
      auto a = affine(*e.args[0]);
      if (!a) return std::nullopt;
      Affine r;
      r.add(*a, -1);
      return r;
    }
    case ExprKind::Binary: {
      auto a = affine(*e.args[0]);
      auto b = affine(*e.args[1]);
      if (!a || !b) return std::nullopt;
      Affine r;
      switch (e.bop) {
        case BinOp::Add:
          r.add(*a, 1);
          r.add(*b, 1);
          return r;
        case BinOp::Sub:
          r.add(*a, 1);
          r.add(*b, -1);
          return r;
        case BinOp::Mul:
          if (a->constant()) {
            r.add(*b, a->c0);
            return r;
          }
          if (b->constant()) {
            r.add(*a, b->c0);
            return r;
          }
          return std::nullopt;
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

class Prover {
 public:
  Prover(const Spec& s, const Statement& st) : s_(s), st_(st) {}

  // The minimum (want_max = false) or maximum of `a` over every index variable's range,
  // as an affine form in sizes only; nullopt when a range bound is not affine.
  std::optional<Affine> extreme(Affine a, bool want_max) const {
    // Inner variables' ranges may mention outer ones, so eliminate from the last variable.
    for (int v = static_cast<int>(st_.vars.size()) - 1; v >= 0; --v) {
      auto it = a.terms.find(-1 - v);
      if (it == a.terms.end()) continue;
      int64_t c = it->second;
      a.terms.erase(it);
      const IndexVar& iv = st_.vars[v];
      bool take_hi = (c > 0) == want_max;
      auto bound = affine(take_hi ? *iv.hi : *iv.lo);
      if (!bound) return std::nullopt;
      if (take_hi) bound->c0 -= 1;  // ranges are half-open
      a.add(*bound, c);
    }
    return a;
  }

  // True when `a` (in sizes only) is >= 0 for every assignment of sizes >= 1.
  static bool nonnegative(const Affine& a) {
    int64_t at_ones = a.c0;
    for (auto [t, c] : a.terms) {
      if (c < 0) return false;
      at_ones += c;
    }
    return at_ones >= 0;
  }

  Status check(const Expr& e) const {
    if (e.kind == ExprKind::Read && s_.tensors[e.ref].boundary == Boundary::None) {
      const Tensor& tn = s_.tensors[e.ref];
      for (size_t d = 0; d < e.args.size(); ++d) {
        const Expr& sub = *e.args[d];
        std::string text = to_string(sub, s_, &st_);
        auto a = affine(sub);
        std::optional<Affine> lo = a ? extreme(*a, false) : std::nullopt;
        std::optional<Affine> hi = a ? extreme(*a, true) : std::nullopt;
        if (!lo || !hi)
          return make_error(sub.loc, "cannot prove that subscript '" + text + "' of '" + tn.name +
                                         "' stays in bounds (it is not affine in indices and "
                                         "sizes); declare a boundary rule (zero or clamp) for '" +
                                         tn.name + "'");
        if (!nonnegative(*lo))
          return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name +
                                         "' can be negative; declare a boundary rule (zero or "
                                         "clamp) for '" +
                                         tn.name + "' or change the range");
        auto extent = affine(*tn.shape[d]);
        SB_ASSERT(extent.has_value(), "shape was checked to be affine");
        Affine room = *extent;  // extent - 1 - max(subscript) >= 0
        room.c0 -= 1;
        room.add(*hi, -1);
        if (!nonnegative(room))
          return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name + "' can reach " +
                                         "past its extent '" +
                                         to_string(*tn.shape[d], s_, nullptr) +
                                         "'; declare a boundary rule (zero or clamp) for '" +
                                         tn.name + "' or change the range");
      }
    }
    for (const auto& a : e.args) SB_TRY(check(*a));
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
