#include "check/arg_reductions.h"

#include "ir/affine.h"
#include "ir/build.h"
#include "ir/names.h"
#include "ir/visitor.h"

namespace sb {

namespace {

bool is_arg(ReduceOp op) {
  return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
}

// A valid tensor name not taken by a tensor or size of `spec`: `<target><suffix>`, then with 2,
// 3, ...; a target name too long for the suffix is shortened first.
std::string fresh_name(const Spec& spec, const std::string& target, const std::string& suffix) {
  for (int n = 1;; ++n) {
    const std::string tail = suffix + (n == 1 ? "" : std::to_string(n));
    const std::string name = target.substr(0, 64 - tail.size()) + tail;
    if (spec.find_tensor(name) < 0 && spec.find_size(name) < 0 && check_identifier(name).empty())
      return name;
    SB_ASSERT(n < 100000, "no free name for the temp of an arg-reduction");
  }
}

// A read of temp `t` at the statement's output indices.
ExprPtr read_at_outputs(const Spec& spec, int t, const Statement& st, const Loc& loc) {
  ExprPtr r = ir_node(ExprKind::Read, spec.tensors[t].type, loc);
  r->ref = t;
  r->name = spec.tensors[t].name;
  for (size_t d = 0; d < st.rank(); ++d) {
    ExprPtr v = ir_node(ExprKind::IndexVar, DType::Index, loc);
    v->ref = static_cast<int>(d);
    v->name = st.vars[d].name;
    r->args.push_back(std::move(v));
  }
  return r;
}

// `e` with index variable `from` renamed to `to` (the body moved into the temp's statement).
ExprPtr renumbered(const Expr& e, int from, int to) {
  struct Renumber : ExprMutator {
    int from, to;
    ExprPtr mutate_index_var(const Expr& v) override {
      ExprPtr c = copy_node(v);
      if (c->ref == from) c->ref = to;
      return c;
    }
  } r;
  r.from = from;
  r.to = to;
  return r.mutate(e);
}

// hi - lo >= 1 for every output index and every assignment of sizes >= 1.
Status check_nonempty(const Expr& red, const Statement& st) {
  const IndexVar& v = st.vars[red.ref];
  auto lo = decompose(*v.lo);
  auto hi = decompose(*v.hi);
  std::optional<Affine> least;
  if (lo && hi) least = extreme(*hi - *lo - Affine::of_constant(1), st, false);
  if (!least || !nonnegative_for_all_sizes(*least))
    return make_error(red.loc, std::string("the range of '") + v.name + "' in " +
                                   reduce_name(red.rop) +
                                   " must hold at least one index for every size >= 1 (" +
                                   reduce_name(red.rop) + " of an empty range has no value)");
  return {};
}

class Rewriter {
 public:
  explicit Rewriter(Spec& spec) : s_(spec) {}

  Status run() {
    std::vector<Statement> out;
    for (Statement& st : s_.stmts) {
      std::vector<Statement> before;
      SB_TRY(statement(st, before));
      for (Statement& b : before) out.push_back(std::move(b));
      out.push_back(std::move(st));
    }
    s_.stmts = std::move(out);
    return {};
  }

 private:
  Status statement(Statement& st, std::vector<Statement>& before) {
    for (const Expr* r : reduces_of(*st.rhs)) {
      if (!is_arg(r->rop)) continue;
      bool top = false;
      for (const Expr* t : top_reduces_of(*st.rhs)) top = top || t == r;
      if (!top)
        return make_error(r->loc, std::string(reduce_name(r->rop)) +
                                      " cannot be inside another reduction (compute it into a "
                                      "temp tensor first)");
      if (!reduces_of(*r->args[0]).empty())
        return make_error(reduces_of(*r->args[0])[0]->loc,
                          std::string("the body of ") + reduce_name(r->rop) +
                              " cannot hold a reduction (compute it into a temp tensor first)");
      SB_TRY(check_nonempty(*r, st));
    }
    // Rewrites each top-level arg-reduction in place; the temps' statements go before `st`.
    struct Mut : MutableExprVisitor {
      Rewriter* self;
      Statement* st;
      std::vector<Statement>* before;
      void visit_reduce(Expr& e) override {
        if (is_arg(e.rop)) self->rewrite(e, *st, *before);
      }
    } m;
    m.self = this;
    m.st = &st;
    m.before = &before;
    m.visit(*st.rhs);
    return {};
  }

  void rewrite(Expr& red, Statement& st, std::vector<Statement>& before) {
    const bool is_max = red.rop == ReduceOp::ArgMax;
    const int k = red.ref;
    const IndexVar& kv = st.vars[k];
    ExprPtr body = std::move(red.args[0]);
    // An index expression is compared as i64.
    if (!scalar(body->type).tensor_type) body = ir_cast(DType::I64, std::move(body));
    // The temp: the greatest (least) value, one per output element. (Built before the push,
    // which may move the output's record.)
    Tensor tmp;
    {
      const Tensor& target = s_.tensors[st.out];
      tmp.name = fresh_name(s_, target.name, is_max ? "_max" : "_min");
      for (const ExprPtr& d : target.shape) tmp.shape.push_back(clone(*d));
    }
    tmp.loc = red.loc;
    tmp.type = body->type;
    tmp.role = Role::Temp;
    s_.tensors.push_back(std::move(tmp));
    const int t = static_cast<int>(s_.tensors.size()) - 1;

    Statement ts;
    ts.loc = st.loc;
    ts.target = s_.tensors[t].name;
    ts.out = t;
    for (size_t d = 0; d < st.rank(); ++d) ts.vars.push_back(clone_var(st.vars[d]));
    ts.vars.push_back(clone_var(kv));
    const int tk = static_cast<int>(ts.vars.size()) - 1;
    ExprPtr value = ir_node(ExprKind::Reduce, body->type, red.loc);
    value->rop = is_max ? ReduceOp::Max : ReduceOp::Min;
    value->ref = tk;
    value->args.push_back(renumbered(*body, k, tk));
    ts.rhs = std::move(value);

    // The least index whose value equals the temp's (hi - 1 if none did, which cannot happen).
    const Loc& loc = red.loc;
    ExprPtr kref = ir_node(ExprKind::IndexVar, DType::Index, loc);
    kref->ref = k;
    kref->name = kv.name;
    ExprPtr last = ir_binary(BinOp::Sub, clone(*kv.hi), ir_lit(1, DType::Index, loc));
    // A NaN value counts as the greatest and the least, as in PyTorch: max and min propagate it
    // into the temp, which then equals no value, and the first NaN is the one taken.
    ExprPtr hit = ir_binary(BinOp::Eq, clone(*body), read_at_outputs(s_, t, st, loc));
    if (is_float(body->type)) {
      ExprPtr again = clone(*body);
      hit = ir_binary(BinOp::Or, std::move(hit),
                      ir_binary(BinOp::Ne, std::move(again), std::move(body)));
    }
    ExprPtr pick = ir_select(std::move(hit), ir_cast(DType::I64, std::move(kref)),
                             ir_cast(DType::I64, std::move(last)));
    red.rop = ReduceOp::Min;
    red.type = DType::I64;
    red.args.clear();
    red.args.push_back(std::move(pick));
    before.push_back(std::move(ts));
  }

  static IndexVar clone_var(const IndexVar& v) {
    IndexVar c;
    c.name = v.name;
    c.loc = v.loc;
    c.lo = clone(*v.lo);
    c.hi = clone(*v.hi);
    c.is_reduction = v.is_reduction;
    return c;
  }

  Spec& s_;
};

}  // namespace

Status rewrite_arg_reductions(Spec& spec) {
  return Rewriter(spec).run();
}

}  // namespace sb
