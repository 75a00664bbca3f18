#include "run/metrics.h"

#include <algorithm>
#include <vector>

namespace sb {

int64_t bytes_moved(const Spec& spec, const SizePoint& sizes) {
  int64_t bytes = 0;
  for (size_t t = 0; t < spec.tensors.size(); ++t) {
    const Tensor& ten = spec.tensors[t];
    if (ten.role == Role::Temp) continue;
    bytes += tensor_elements(spec, static_cast<int>(t), sizes) * dtype_bytes(ten.type);
  }
  return bytes;
}

namespace {

bool is_comparison(BinOp op) {
  return op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge ||
         op == BinOp::Eq || op == BinOp::Ne;
}

// Floating-point operations to evaluate one expression at index-variable values `vars`. Each
// reduction sets its variable to the middle of its range before counting its body: the lower
// middle when `upper` is false, the upper middle otherwise. flops() averages the two passes, which
// is exact when trip counts are affine in the variables.
struct Counter {
  const Statement& st;
  const SizePoint& sizes;
  std::vector<int64_t> vars;
  bool upper = false;

  double operator()(const Expr& e) {
    if (e.kind == ExprKind::Reduce) {
      const IndexVar& iv = st.vars[e.ref];
      const int64_t lo = eval_int(*iv.lo, sizes, vars);
      const int64_t hi = eval_int(*iv.hi, sizes, vars);
      const int64_t trip = std::max<int64_t>(0, hi - lo);
      if (trip == 0) return 0;
      vars[e.ref] = lo + (upper ? trip / 2 : (trip - 1) / 2);
      return static_cast<double>(trip) * ((is_float(e.type) ? 1 : 0) + (*this)(*e.args[0]));
    }
    double self = 0;
    switch (e.kind) {
      case ExprKind::Unary:
        self = is_float(e.type) ? 1 : 0;
        break;
      case ExprKind::Binary:
        self = (is_comparison(e.bop) ? is_float(e.args[0]->type) : is_float(e.type)) ? 1 : 0;
        break;
      case ExprKind::Call:
        self = is_float(e.type) ? 1 : 0;
        break;
      default:
        break;
    }
    if (e.kind == ExprKind::Call && e.fn == Fn::Select) {
      return self + (*this)(*e.args[0]) + std::max((*this)(*e.args[1]), (*this)(*e.args[2]));
    }
    double n = self;
    for (const ExprPtr& a : e.args) n += (*this)(*a);
    return n;
  }
};

}  // namespace

double flops(const Spec& spec, const SizePoint& sizes) {
  double total = 0;
  for (const Statement& st : spec.stmts) {
    const int64_t elems = tensor_elements(spec, st.out, sizes);
    if (elems == 0) continue;
    const std::vector<int64_t> ext = tensor_extents(spec, st.out, sizes);
    double per = 0;
    for (bool upper : {false, true}) {
      Counter c{st, sizes, std::vector<int64_t>(st.vars.size(), 0), upper};
      for (size_t d = 0; d < ext.size(); ++d) c.vars[d] = upper ? ext[d] / 2 : (ext[d] - 1) / 2;
      per += c(*st.rhs);
    }
    total += static_cast<double>(elems) * per / 2;
  }
  return total;
}

}  // namespace sb
