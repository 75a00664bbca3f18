#include "check/bounds.h"

#include <map>
#include <optional>
#include <vector>

#include "ir/visitor.h"

namespace sb {

namespace {

// c0 + sum(coef * term), where a term is a size (key >= 0: size index) or an index variable
// (key < 0: -1 - var index).
// Every step is overflow-checked: `overflow` is set (and stays set) once a coefficient leaves
// the 64-bit range, and the form is then refused with a located error.
struct Affine {
  int64_t c0 = 0;
  std::map<int, int64_t> terms;
  bool overflow = false;

  static bool mul_add(int64_t& acc, int64_t k, int64_t x) {
    int64_t p;
    return __builtin_mul_overflow(k, x, &p) || __builtin_add_overflow(acc, p, &acc);
  }
  void add(const Affine& o, int64_t k) {
    overflow = overflow || o.overflow || mul_add(c0, k, o.c0);
    for (auto [t, c] : o.terms) {
      overflow = mul_add(terms[t], k, c) || overflow;
      if (terms[t] == 0) terms.erase(t);
    }
  }
  bool constant() const { return terms.empty(); }
};

// Gathered values (reads of i32 inputs with a declared range) become opaque terms with keys
// from kReadKey up; `reads` collects them so that their ranges can be substituted.
constexpr int kReadKey = 1 << 20;

// The affine form of an integer expression; nullopt when it is not affine.
class AffineOf : public ExprFunctor<std::optional<Affine>()> {
 public:
  explicit AffineOf(std::vector<const Expr*>* reads) : reads_(reads) {}

 protected:
  using Form = std::optional<Affine>;

  Form visit_int_lit(const Expr& e) override {
    Affine a;
    a.c0 = e.ival;
    return a;
  }
  Form visit_size_ref(const Expr& e) override {
    Affine a;
    a.terms[e.ref] = 1;
    return a;
  }
  Form visit_index_var(const Expr& e) override {
    Affine a;
    a.terms[-1 - e.ref] = 1;
    return a;
  }
  Form visit_unary(const Expr& e) override {
    if (e.uop != UnOp::Neg) return std::nullopt;
    auto a = visit(*e.args[0]);
    if (!a) return std::nullopt;
    Affine r;
    r.add(*a, -1);
    return r;
  }
  Form visit_binary(const Expr& e) override {
    auto a = visit(*e.args[0]);
    auto b = visit(*e.args[1]);
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
  Form visit_read(const Expr& e) override {
    if (!reads_) return std::nullopt;
    Affine a;
    a.terms[kReadKey + static_cast<int>(reads_->size())] = 1;
    reads_->push_back(&e);
    return a;
  }
  Form visit_float_lit(const Expr&) override { return std::nullopt; }
  Form visit_name(const Expr&) override { return std::nullopt; }
  Form visit_const(const Expr&) override { return std::nullopt; }
  Form visit_call(const Expr&) override { return std::nullopt; }
  Form visit_cast(const Expr&) override { return std::nullopt; }
  Form visit_reduce(const Expr&) override { return std::nullopt; }

 private:
  std::vector<const Expr*>* reads_;
};

std::optional<Affine> affine(const Expr& e, std::vector<const Expr*>* reads = nullptr) {
  return AffineOf(reads).visit(e);
}

class Prover {
 public:
  Prover(const Spec& s, const Statement& st) : s_(s), st_(st) {}

  // The minimum (want_max = false) or maximum of `a` over every index variable's range,
  // as an affine form in sizes only; nullopt when a range bound is not affine.
  std::optional<Affine> extreme(Affine a, bool want_max) const {
    // A gathered value lies in its tensor's declared range, whatever the indices.
    for (size_t r = 0; r < reads_.size(); ++r) {
      auto it = a.terms.find(kReadKey + static_cast<int>(r));
      if (it == a.terms.end()) continue;
      int64_t c = it->second;
      a.terms.erase(it);
      const Tensor& tn = s_.tensors[reads_[r]->ref];
      bool take_hi = (c > 0) == want_max;
      auto bound = affine(take_hi ? *tn.init_hi_expr : *tn.init_lo_expr);
      if (!bound) return std::nullopt;
      a.add(*bound, c);
    }
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
      if (take_hi && __builtin_sub_overflow(bound->c0, 1, &bound->c0))  // ranges are half-open
        bound->overflow = true;
      a.add(*bound, c);
    }
    return a;
  }

  // True when `a` (in sizes only) is >= 0 for every assignment of sizes >= 1.
  static bool nonnegative(const Affine& a) {
    int64_t at_ones = a.c0;
    for (auto [t, c] : a.terms) {
      if (c < 0) return false;
      if (__builtin_add_overflow(at_ones, c, &at_ones)) return true;  // c > 0: grows past 2^63
    }
    return at_ones >= 0;
  }

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

  // The subscripts of one read, when its tensor has no boundary rule.
  Status check_read(const Expr& e) const {
    if (s_.tensors[e.ref].boundary == Boundary::None) {
      const Tensor& tn = s_.tensors[e.ref];
      for (size_t d = 0; d < e.args.size(); ++d) {
        const Expr& sub = *e.args[d];
        std::string text = to_string(sub, s_, &st_);
        reads_.clear();
        auto a = affine(sub, &reads_);
        for (const Expr* r : reads_) {
          const Tensor& src = s_.tensors[r->ref];
          if (src.role != Role::In || !src.init_lo_expr) {
            a.reset();
            break;
          }
        }
        std::optional<Affine> lo = a ? extreme(*a, false) : std::nullopt;
        std::optional<Affine> hi = a ? extreme(*a, true) : std::nullopt;
        auto extent = affine(*tn.shape[d]);
        SB_ASSERT(extent.has_value(), "shape was checked to be affine");
        Affine room = *extent;  // extent - 1 - max(subscript) >= 0
        if (__builtin_sub_overflow(room.c0, 1, &room.c0)) room.overflow = true;
        if (hi) room.add(*hi, -1);
        if ((a && a->overflow) || (lo && lo->overflow) || (hi && hi->overflow) || room.overflow)
          return make_error(sub.loc, "integer overflow in subscript '" + text + "' of '" +
                                         tn.name + "': its bounds leave the 64-bit range");
        if (!lo || !hi)
          return make_error(sub.loc, "cannot prove that subscript '" + text + "' of '" + tn.name +
                                         "' stays in bounds (it is not affine in indices, sizes "
                                         "and gathered i32 inputs with an integer 'init' range); "
                                         "declare a boundary rule (zero or clamp) for '" +
                                         tn.name + "'");
        if (!nonnegative(*lo))
          return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name +
                                         "' can be negative; declare a boundary rule (zero or "
                                         "clamp) for '" +
                                         tn.name + "' or change the range");
        if (!nonnegative(room))
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
  mutable std::vector<const Expr*> reads_;  // gathers in the subscript being checked
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
