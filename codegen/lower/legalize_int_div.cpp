#include "lower/legalize_int_div.h"

#include <utility>
#include <vector>

#include "ir/intrinsics.h"
#include "ir/visitor.h"
#include "support/diag.h"

namespace sb {

namespace {

ExprPtr node(ExprKind k, DType t, const Loc& loc) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->type = t;
  e->loc = loc;
  return e;
}

ExprPtr int_lit(int64_t v, DType t, const Loc& loc) {
  ExprPtr e = node(ExprKind::IntLit, t, loc);
  e->ival = v;
  e->fval = static_cast<double>(v);
  return e;
}

ExprPtr binary(BinOp op, DType t, ExprPtr a, ExprPtr b) {
  ExprPtr e = node(ExprKind::Binary, t, a->loc);
  e->bop = op;
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

ExprPtr call(Fn fn, DType t, const Loc& loc, std::vector<ExprPtr> args) {
  ExprPtr e = node(ExprKind::Call, t, loc);
  e->fn = fn;
  e->name = std::string(intrinsic(fn).name);
  e->args = std::move(args);
  return e;
}

ExprPtr select(ExprPtr c, ExprPtr a, ExprPtr b) {
  const DType t = a->type;
  const Loc loc = a->loc;
  std::vector<ExprPtr> args;
  args.push_back(std::move(c));
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return call(Fn::Select, t, loc, std::move(args));
}

// b == v, for the divisor b of type t.
ExprPtr is(const Expr& b, int64_t v) {
  return binary(BinOp::Eq, DType::Bool, clone(b), int_lit(v, b.type, b.loc));
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
    return call(fn, t, div.loc, std::move(args));
  }
  auto special = [&] { return binary(BinOp::Or, DType::Bool, is(b, 0), is(b, -1)); };
  args.push_back(select(special(), int_lit(1, b.type, b.loc), clone(b)));
  ExprPtr op = call(fn, t, div.loc, std::move(args));
  if (!quotient) return select(special(), int_lit(0, t, div.loc), std::move(op));
  ExprPtr neg = node(ExprKind::Unary, t, a.loc);
  neg->uop = UnOp::Neg;
  neg->args.push_back(clone(a));
  return select(is(b, 0), int_lit(0, t, div.loc),
                select(is(b, -1), std::move(neg), std::move(op)));
}

// Rebuilds a tree with every integer division legalised, innermost first.
class Legalise : public ExprMutator {
 protected:
  ExprPtr mutate_binary(const Expr& e) override {
    ExprPtr m = mutate_children(e);
    const DType t = m->type;
    const bool integer = t == DType::I32 || t == DType::Index || t == DType::IntLit;
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
  for (Statement& st : out.stmts) st.rhs = Legalise().mutate(*st.rhs);
  return out;
}

}  // namespace sb
