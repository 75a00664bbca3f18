// Typed expression nodes for the code that builds IR after checking: the intrinsics' default
// expansions (ir/intrinsics.cpp) and the lowering passes (lower/). Each node carries the type
// the checker would give it, and the location of the expression it replaces.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace sb {

// A node of kind `k` and type `t`, without children.
ExprPtr ir_node(ExprKind k, DType t, const Loc& loc);
// The literal `v` of type `t`: a FloatLit for f32 and f64, else an IntLit (v truncated).
ExprPtr ir_lit(double v, DType t, const Loc& loc);
// -a, of a's type.
ExprPtr ir_neg(ExprPtr a);
// a op b: of type bool for a comparison, else of a's type (bool for && and ||).
ExprPtr ir_binary(BinOp op, ExprPtr a, ExprPtr b);
// fn(args...), of type `t`.
ExprPtr ir_call(Fn fn, std::vector<ExprPtr> args, DType t, const Loc& loc);
// select(c, a, b), of a's type.
ExprPtr ir_select(ExprPtr c, ExprPtr a, ExprPtr b);
// t(a): the cast of `a` to `t`, at a's location.
ExprPtr ir_cast(DType t, ExprPtr a);

}  // namespace sb
