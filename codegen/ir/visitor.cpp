#include "ir/visitor.h"

namespace sb {

ExprPtr copy_node(const Expr& e) {
  auto c = std::make_unique<Expr>();
  c->kind = e.kind;
  c->loc = e.loc;
  c->type = e.type;
  c->fval = e.fval;
  c->ival = e.ival;
  c->name = e.name;
  c->ref = e.ref;
  c->uop = e.uop;
  c->bop = e.bop;
  c->fn = e.fn;
  c->rop = e.rop;
  c->cast_to = e.cast_to;
  return c;
}

ExprPtr ExprMutator::mutate_children(const Expr& e) {
  ExprPtr c = copy_node(e);
  c->args.reserve(e.args.size());
  for (const auto& a : e.args) c->args.push_back(mutate(*a));
  return c;
}

namespace {

class EachNode : public ExprVisitor {
 public:
  explicit EachNode(const std::function<void(const Expr&)>& f) : f_(f) {}
  void visit(const Expr& e) override {
    f_(e);
    visit_children(e);
  }

 private:
  const std::function<void(const Expr&)>& f_;
};

class AnyNode : public ExprVisitor {
 public:
  explicit AnyNode(const std::function<bool(const Expr&)>& pred) : pred_(pred) {}
  void visit(const Expr& e) override {
    if (found) return;
    if (pred_(e)) {
      found = true;
      return;
    }
    visit_children(e);
  }
  bool found = false;

 private:
  const std::function<bool(const Expr&)>& pred_;
};

}  // namespace

void for_each_node(const Expr& e, const std::function<void(const Expr&)>& f) {
  EachNode v(f);
  v.visit(e);
}

bool any_node(const Expr& e, const std::function<bool(const Expr&)>& pred) {
  AnyNode v(pred);
  v.visit(e);
  return v.found;
}

}  // namespace sb
