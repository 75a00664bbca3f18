#include "check/bounds.h"

#include <optional>
#include <utility>

#include "ir/affine.h"
#include "ir/visitor.h"

namespace sb {

namespace {

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
        // range its tensor declares.
        bool gathers_ok = true;
        auto a = decompose(sub, [&](const Expr& x) {
          if (x.kind != ExprKind::Read) return false;
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
        std::optional<Affine> lo = a ? extreme(*a, st_, false, gather_range) : std::nullopt;
        std::optional<Affine> hi = a ? extreme(*a, st_, true, gather_range) : std::nullopt;
        // Quotients and products of sizes in the shape are atoms (typecheck.cpp).
        auto extent = decompose(*tn.shape[d], var_free);
        SB_ASSERT(extent.has_value(), "shape was checked to be built from sizes and literals");
        Affine room = *extent;  // extent - 1 - max(subscript) >= 0
        if (__builtin_sub_overflow(room.constant, 1, &room.constant)) room.overflow = true;
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
        if (!nonnegative_for_all_sizes(*lo))
          return make_error(sub.loc, "subscript '" + text + "' of '" + tn.name +
                                         "' can be negative; declare a boundary rule (zero or "
                                         "clamp) for '" +
                                         tn.name + "' or change the range");
        if (!nonnegative_for_all_sizes(room))
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
