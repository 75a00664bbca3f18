#include "run/metrics.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "lower/running_scans.h"

namespace sb {

namespace {

bool is_comparison(BinOp op) {
  return op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge ||
         op == BinOp::Eq || op == BinOp::Ne;
}

// How many times a weighted node is evaluated for one expression at index-variable values `vars`:
// the sum of weight(node) over its nodes, each reduction multiplying its body (and its own weight)
// by its trip count. Each reduction sets its variable to the middle of its range before counting
// its body: the lower middle when `upper` is false, the upper middle otherwise. statement_count()
// averages the two passes, which is exact when trip counts are affine in the variables.
// select(c, a, b) counts its condition and the costlier branch.
// A running scan's reduction (`scan`, lower/running_scans.h) counts its terms once per row of the
// innermost output dimension (`inner`, of extent `inner_extent`), as the running walk computes
// them: per output, the row's terms over its length.
struct Counter {
  const Statement& st;
  const SizePoint& sizes;
  const std::function<double(const Expr&)>& weight;
  std::vector<int64_t> vars;
  bool upper = false;
  int scan = -1;
  int inner = -1;
  int64_t inner_extent = 0;

  double operator()(const Expr& e) {
    if (e.kind == ExprKind::Reduce) {
      const IndexVar& iv = st.vars[e.ref];
      const int64_t lo = eval_int(*iv.lo, sizes, vars);
      double trip = 0;
      if (e.ref == scan) {
        std::vector<int64_t> last = vars;
        last[inner] = inner_extent - 1;
        trip = static_cast<double>(std::max<int64_t>(0, eval_int(*iv.hi, sizes, last) - lo)) /
               static_cast<double>(inner_extent);
      } else {
        trip = static_cast<double>(std::max<int64_t>(0, eval_int(*iv.hi, sizes, vars) - lo));
      }
      if (!(trip > 0)) return 0;
      const int64_t whole = static_cast<int64_t>(std::ceil(trip));
      vars[e.ref] = lo + (upper ? whole / 2 : (whole - 1) / 2);
      return trip * (weight(e) + (*this)(*e.args[0]));
    }
    const double self = weight(e);
    if (e.kind == ExprKind::Call && e.fn == Fn::Select) {
      return self + (*this)(*e.args[0]) + std::max((*this)(*e.args[1]), (*this)(*e.args[2]));
    }
    double n = self;
    for (const ExprPtr& a : e.args) n += (*this)(*a);
    return n;
  }
};

// The weighted count of statement `st` over its whole output, at `sizes`.
double statement_count(const Spec& spec, const Statement& st, const SizePoint& sizes,
                       const std::function<double(const Expr&)>& weight) {
  const int64_t elems = tensor_elements(spec, st.out, sizes);
  if (elems == 0) return 0;
  const std::vector<int64_t> ext = tensor_extents(spec, st.out, sizes);
  double per = 0;
  const int scan = running_scan_reduction(st);
  for (bool upper : {false, true}) {
    Counter c{st, sizes, weight, std::vector<int64_t>(st.vars.size(), 0), upper};
    if (scan >= 0) {
      c.scan = scan;
      c.inner = static_cast<int>(st.rank()) - 1;
      c.inner_extent = ext.back();
    }
    for (size_t d = 0; d < ext.size(); ++d) c.vars[d] = upper ? ext[d] / 2 : (ext[d] - 1) / 2;
    per += c(*st.rhs);
  }
  return static_cast<double>(elems) * per / 2;
}

// The flops of one node (see flops() in metrics.h).
double node_flops(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Unary:
    case ExprKind::Call:
    case ExprKind::Reduce:  // the combining add or compare, per term
      return is_float(e.type) ? 1 : 0;
    case ExprKind::Binary:
      return (is_comparison(e.bop) ? is_float(e.args[0]->type) : is_float(e.type)) ? 1 : 0;
    default:
      return 0;
  }
}

// A read whose subscripts depend on data: one of them holds a read.
bool is_gather(const Expr& read) {
  for (const ExprPtr& sub : read.args)
    if (!reads_of(*sub).empty()) return true;
  return false;
}

}  // namespace

double flops(const Spec& spec, const SizePoint& sizes) {
  const std::function<double(const Expr&)> weight = node_flops;
  double total = 0;
  for (const Statement& st : spec.stmts) total += statement_count(spec, st, sizes, weight);
  return total;
}

int64_t bytes_moved(const Spec& spec, const SizePoint& sizes) {
  int64_t bytes = 0;
  for (size_t t = 0; t < spec.tensors.size(); ++t) {
    const Tensor& ten = spec.tensors[t];
    // A view's reads move its base's bytes, and are counted with the base's.
    if (ten.role == Role::Temp || ten.view_of >= 0) continue;
    const int id = static_cast<int>(t);
    auto names_this = [&](int ref) { return ref == id || spec.tensors[ref].view_of == id; };
    const int64_t elems = tensor_elements(spec, id, sizes);
    // Read only through gathers (and never written): the elements the gathers touch.
    bool gathers_only = ten.role == Role::In;
    bool read = false;
    for (const Statement& st : spec.stmts) {
      for (const Expr* r : reads_of(*st.rhs)) {
        if (!names_this(r->ref)) continue;
        read = true;
        gathers_only = gathers_only && is_gather(*r);
      }
    }
    int64_t touched = elems;
    if (read && gathers_only) {
      const std::function<double(const Expr&)> weight = [&](const Expr& e) {
        return e.kind == ExprKind::Read && names_this(e.ref) ? 1.0 : 0.0;
      };
      double evaluations = 0;
      for (const Statement& st : spec.stmts)
        evaluations += statement_count(spec, st, sizes, weight);
      touched = std::min<int64_t>(elems, static_cast<int64_t>(std::ceil(evaluations)));
    }
    bytes += touched * dtype_bytes(ten.type);
  }
  return bytes;
}

}  // namespace sb
