#include "lower/patterns.h"

#include <vector>

#include "ir/affine.h"
#include "ir/visitor.h"

namespace sb {

const char* const kContractionShape =
    "c[i, j] = sum(k in 0..K: a[i, k] * b[k, j]), operands in either order or transposed, "
    "optionally inside an elementwise term such as `+ bias[j]`";
const char* const kScalarReductionShape =
    "d = sum|max|min(k in 0..N: <expression of k>), optionally inside an elementwise term such "
    "as `sqrt(...)`";
const char* const kScanShape =
    "y[i] = sum|max|min(k in 0..i + 1: <expression of k>) (inclusive) or (k in 0..i: ...) "
    "(exclusive)";

namespace {

bool is_var(const Expr& e, int ref) {
  return e.kind == ExprKind::IndexVar && e.ref == ref;
}

bool is_int(const Expr& e, int64_t v) {
  return e.kind == ExprKind::IntLit && e.ival == v;
}

// True when `e` uses any output index variable of `st`.
bool uses_outputs(const Expr& e, const Statement& st) {
  return any_node(e, [&](const Expr& n) {
    return n.kind == ExprKind::IndexVar && n.ref >= 0 && static_cast<size_t>(n.ref) < st.rank();
  });
}

// A read of a rank-2 tensor without a boundary rule whose subscripts are the bare index variables
// {p, k} in either order. Returns 0 for t[p, k], 1 for t[k, p], -1 otherwise.
int operand_order(const Spec& spec, const Expr& e, int p, int k) {
  if (e.kind != ExprKind::Read || e.args.size() != 2) return -1;
  const Tensor& t = spec.tensors[e.ref];
  if (t.shape.size() != 2 || t.boundary != Boundary::None) return -1;
  if (is_var(*e.args[0], p) && is_var(*e.args[1], k)) return 0;
  if (is_var(*e.args[0], k) && is_var(*e.args[1], p)) return 1;
  return -1;
}

// Scalar reductions and scans take any tensor type (every backend prints their identities and
// combining operations from the type's record).
bool scan_type(DType t) {
  return scalar(t).tensor_type;
}

// Clone of an expression with the node `target` replaced by a read of the statement's output.
class ReplaceReduce : public ExprMutator {
 public:
  ReplaceReduce(const Expr* target, const Statement& st, DType out_type)
      : target_(target), st_(st), out_type_(out_type) {}

  ExprPtr mutate(const Expr& e) override {
    if (&e != target_) return ExprMutator::mutate(e);
    auto r = std::make_unique<Expr>();
    r->kind = ExprKind::Read;
    r->loc = e.loc;
    r->type = out_type_;
    r->ref = st_.out;
    for (size_t d = 0; d < st_.rank(); ++d) {
      auto v = std::make_unique<Expr>();
      v->kind = ExprKind::IndexVar;
      v->loc = e.loc;
      v->type = DType::Index;
      v->ref = static_cast<int>(d);
      r->args.push_back(std::move(v));
    }
    return r;
  }

 private:
  const Expr* target_;
  const Statement& st_;
  DType out_type_;
};

}  // namespace

std::optional<Contraction> match_contraction(const Spec& spec, const Statement& st) {
  if (st.rank() != 2 || !st.rhs || st.out < 0) return std::nullopt;
  const DType type = spec.tensors[st.out].type;
  // The types with a GEMM: BLAS's s and d (the blocked GEMMs of cpu and mojo are written for the
  // same two).
  if (!scalar(type).blas_prefix) return std::nullopt;
  const std::vector<const Expr*> reduces = reduces_of(*st.rhs);
  if (reduces.size() != 1) return std::nullopt;
  const Expr& r = *reduces[0];
  if (r.rop != ReduceOp::Sum || r.type != type || r.args.empty()) return std::nullopt;
  const IndexVar& kv = st.vars[r.ref];
  if (!kv.lo || !kv.hi || uses_outputs(*kv.lo, st) || uses_outputs(*kv.hi, st)) return std::nullopt;
  const Expr& body = *r.args[0];
  if (body.kind != ExprKind::Binary || body.bop != BinOp::Mul || body.type != type)
    return std::nullopt;

  Contraction c;
  c.reduce = &r;
  c.k = r.ref;
  c.type = type;
  c.epilogue = st.rhs.get() != &r;
  for (int swap = 0; swap < 2; ++swap) {
    const Expr& p = *body.args[swap];
    const Expr& q = *body.args[1 - swap];
    const int xo = operand_order(spec, p, 0, r.ref);
    const int yo = operand_order(spec, q, 1, r.ref);
    if (xo < 0 || yo < 0) continue;
    if (spec.tensors[p.ref].type != type || spec.tensors[q.ref].type != type) return std::nullopt;
    if (p.ref == st.out || q.ref == st.out) return std::nullopt;
    c.x = p.ref;
    c.y = q.ref;
    c.x_trans = xo == 1;
    c.y_trans = yo == 0;  // y[j, k]: j first
    return c;
  }
  return std::nullopt;
}

std::optional<ScalarReduction> match_scalar_reduction(const Spec& spec, const Statement& st) {
  if (st.rank() != 0 || !st.rhs || st.out < 0) return std::nullopt;
  const DType type = spec.tensors[st.out].type;
  if (!scan_type(type)) return std::nullopt;
  const std::vector<const Expr*> reduces = reduces_of(*st.rhs);
  if (reduces.size() != 1) return std::nullopt;
  const Expr& r = *reduces[0];
  if (r.type != type || r.args.empty()) return std::nullopt;
  const IndexVar& kv = st.vars[r.ref];
  if (!kv.lo || !kv.hi) return std::nullopt;
  ScalarReduction s;
  s.reduce = &r;
  s.k = r.ref;
  s.op = r.rop;
  s.epilogue = st.rhs.get() != &r;
  s.type = type;
  return s;
}

std::optional<Scan> match_scan(const Spec& spec, const Statement& st) {
  if (st.rank() != 1 || !st.rhs || st.out < 0) return std::nullopt;
  const DType type = spec.tensors[st.out].type;
  if (!scan_type(type)) return std::nullopt;
  const Expr& r = *st.rhs;
  if (r.kind != ExprKind::Reduce || r.type != type || r.args.empty()) return std::nullopt;
  const std::vector<const Expr*> reduces = reduces_of(r);
  if (reduces.size() != 1) return std::nullopt;
  const IndexVar& kv = st.vars[r.ref];
  if (!kv.lo || !kv.hi || !is_int(*kv.lo, 0)) return std::nullopt;
  if (depends_on(*r.args[0], 0)) return std::nullopt;
  Scan s;
  s.reduce = &r;
  s.k = r.ref;
  s.op = r.rop;
  s.type = type;
  // hi = i (exclusive) or i + 1 (inclusive).
  const std::optional<Affine> hi = decompose(*kv.hi);
  if (!hi || hi->overflow || hi->vars.size() != 1 || hi->var(0) != 1 || !hi->sizes.empty() ||
      !hi->atoms.empty() || (hi->constant != 0 && hi->constant != 1))
    return std::nullopt;
  s.inclusive = hi->constant == 1;
  return s;
}

Statement epilogue_statement(const Spec& spec, const Statement& st, const Expr* reduce) {
  Statement e;
  e.loc = st.loc;
  e.target = st.target;
  e.out = st.out;
  for (const IndexVar& v : st.vars) {
    IndexVar c;
    c.name = v.name;
    c.loc = v.loc;
    c.lo = v.lo ? clone(*v.lo) : nullptr;
    c.hi = v.hi ? clone(*v.hi) : nullptr;
    c.is_reduction = v.is_reduction;
    e.vars.push_back(std::move(c));
  }
  e.rhs = ReplaceReduce(reduce, st, spec.tensors[st.out].type).mutate(*st.rhs);
  return e;
}

}  // namespace sb
