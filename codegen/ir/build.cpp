#include "ir/build.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "ir/intrinsics.h"

namespace sb {

ExprPtr ir_node(ExprKind k, DType t, const Loc& loc) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->type = t;
  e->loc = loc;
  return e;
}

ExprPtr ir_lit(double v, DType t, const Loc& loc) {
  ExprPtr e = ir_node(is_float(t) ? ExprKind::FloatLit : ExprKind::IntLit, t, loc);
  e->fval = v;
  e->ival = static_cast<int64_t>(v);
  return e;
}

ExprPtr ir_neg(ExprPtr a) {
  ExprPtr e = ir_node(ExprKind::Unary, a->type, a->loc);
  e->uop = UnOp::Neg;
  e->args.push_back(std::move(a));
  return e;
}

ExprPtr ir_binary(BinOp op, ExprPtr a, ExprPtr b) {
  const bool cmp = op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge ||
                   op == BinOp::Eq || op == BinOp::Ne;
  ExprPtr e = ir_node(ExprKind::Binary, cmp ? DType::Bool : a->type, a->loc);
  e->bop = op;
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}

ExprPtr ir_call(Fn fn, std::vector<ExprPtr> args, DType t, const Loc& loc) {
  ExprPtr e = ir_node(ExprKind::Call, t, loc);
  e->fn = fn;
  e->name = std::string(intrinsic(fn).name);
  e->args = std::move(args);
  return e;
}

ExprPtr ir_select(ExprPtr c, ExprPtr a, ExprPtr b) {
  const DType t = a->type;
  const Loc loc = a->loc;
  std::vector<ExprPtr> args;
  args.push_back(std::move(c));
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return ir_call(Fn::Select, std::move(args), t, loc);
}

ExprPtr ir_cast(DType t, ExprPtr a) {
  ExprPtr e = ir_node(ExprKind::Cast, t, a->loc);
  e->cast_to = t;
  e->args.push_back(std::move(a));
  return e;
}

}  // namespace sb
