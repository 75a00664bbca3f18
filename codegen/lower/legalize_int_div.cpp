#include "lower/legalize_int_div.h"

#include <utility>
#include <vector>

#include "ir/build.h"
#include "ir/intrinsics.h"
#include "ir/visitor.h"
#include "support/diag.h"

namespace sb {

namespace {

// b == v, for the divisor b of type t.
ExprPtr is(const Expr& b, int64_t v) {
  return ir_binary(BinOp::Eq, clone(b), ir_lit(static_cast<double>(v), b.type, b.loc));
}

ExprPtr legalise(const Expr& div) {
  const Expr& a = *div.args[0];
  const Expr& b = *div.args[1];
  const DType t = div.type;
  const bool quotient = div.bop == BinOp::Div;
  const Fn fn = quotient ? Fn::DivTrunc : Fn::RemTrunc;
  std::vector<ExprPtr> args;
  args.push_back(clone(a));
  if (divisor_at_least_one(b)) {
    args.push_back(clone(b));
    return ir_call(fn, std::move(args), t, div.loc);
  }
  auto special = [&] { return ir_binary(BinOp::Or, is(b, 0), is(b, -1)); };
  args.push_back(ir_select(special(), ir_lit(1, b.type, b.loc), clone(b)));
  ExprPtr op = ir_call(fn, std::move(args), t, div.loc);
  if (!quotient) return ir_select(special(), ir_lit(0, t, div.loc), std::move(op));
  return ir_select(is(b, 0), ir_lit(0, t, div.loc),
                   ir_select(is(b, -1), ir_neg(clone(a)), std::move(op)));
}

// Rebuilds a tree with every integer division legalised, innermost first.
class Legalise : public ExprMutator {
 protected:
  ExprPtr mutate_binary(const Expr& e) override {
    ExprPtr m = mutate_children(e);
    const DType t = m->type;
    const bool integer = is_integer(t) || t == DType::IntLit;
    if (!integer || (m->bop != BinOp::Div && m->bop != BinOp::Mod)) return m;
    return legalise(*m);
  }
};

}  // namespace

bool divisor_at_least_one(const Expr& b) {
  return (b.kind == ExprKind::IntLit && b.ival > 0) || b.kind == ExprKind::SizeRef;
}

Spec legalize_int_div(const Spec& spec) {
  Spec out = clone(spec);
  // Shapes (a quotient by a positive literal or a size: typecheck.cpp), 'init' bounds, ranges
  // (an output's are copies of its shape) and right-hand sides.
  for (Tensor& t : out.tensors) {
    for (ExprPtr& d : t.shape) d = Legalise().mutate(*d);
    if (t.init_lo_expr) t.init_lo_expr = Legalise().mutate(*t.init_lo_expr);
    if (t.init_hi_expr) t.init_hi_expr = Legalise().mutate(*t.init_hi_expr);
  }
  for (Statement& st : out.stmts) {
    for (IndexVar& v : st.vars) {
      if (v.lo) v.lo = Legalise().mutate(*v.lo);
      if (v.hi) v.hi = Legalise().mutate(*v.hi);
    }
    st.rhs = Legalise().mutate(*st.rhs);
  }
  return out;
}

}  // namespace sb
