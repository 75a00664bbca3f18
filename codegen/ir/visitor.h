// Walks of the expression tree (ir.h), written once, in the manner of Halide's IRVisitor and
// IRMutator and TVM's ExprFunctor. The walks in ir/, check/ and lower/ use these instead of a
// recursive switch over ExprKind of their own; the backends' printers and analyses and the
// reference interpreter (harness/run/reference.cpp) still have their own walks (issue 14).
//
// - ExprFunctor<R(Args...)> (const Expr&) and MutableExprFunctor<R(Args...)> (Expr&): the
//   STRICT form. One pure virtual per node kind; visit() dispatches with a switch that has no
//   `default:`. Adding an ExprKind fails to compile twice: here (codegen builds with
//   -Werror=switch) and, once its pure virtual is added, in every strict functor that lacks it.
//   Use it for code that must decide what every node means: printers, evaluators, type rules.
//   A functor recurses by calling visit() on the children it wants, with whatever arguments
//   they need (a printer passes the precedence of its context, say).
// - ExprVisitor (const Expr&) and MutableExprVisitor (Expr&, may change fields in place): a
//   pre-order walk. visit(e) dispatches to the node's visit_<kind>(e), and every visit_<kind>
//   defaults to visit_children(e), which visits e.args in order. Override the kinds you care
//   about and call the base (or visit_children) to keep descending; override visit() itself to
//   act on every node or to stop the walk.
// - ExprMutator: rebuilds a tree. mutate(e) dispatches to mutate_<kind>(e), whose default
//   copies the node (every field, see copy_node) and mutates its children in order; so
//   ExprMutator().mutate(e) is a deep copy. Override a kind to return a different subtree.
//
// The children of a node are e.args and nothing else. In particular the range of a reduction
// lives in Statement::vars (lo, hi), not under its Reduce node: a walk that must see ranges
// visits them itself (before check_spec, a Reduce's args are {body, lo, hi} and so are visited).
//
// A printer with the strict form (Printer in ir.cpp, behind to_string and --dump-ir, is one).
// The per-call context travels as functor arguments; the output stream is a member:
//
//   class CPrinter : public ExprFunctor<void(int parent_prec)> {
//    public:
//     explicit CPrinter(std::ostream& o) : o_(o) {}
//    protected:
//     void visit_int_lit(const Expr& e, int) override { o_ << e.ival; }
//     void visit_binary(const Expr& e, int parent_prec) override {
//       const int p = precedence(e.bop);
//       if (p < parent_prec) o_ << "(";
//       visit(*e.args[0], p);
//       o_ << " " << binop_symbol(e.bop) << " ";
//       visit(*e.args[1], p + 1);
//       if (p < parent_prec) o_ << ")";
//     }
//     // ...one override per kind. A kind left out leaves CPrinter abstract, so `CPrinter p(o);`
//     // does not compile: a backend cannot forget a node, as a `default:` would let it.
//    private:
//     std::ostream& o_;
//   };
//
// A backend printer that returns pieces of text (emit_mojo's Piece, emit_mlir's SSA names)
// takes ExprFunctor<Piece(Writer&, const Mode&)>: the return type and arguments are free.
// A printer that only overrides a few spellings (a native `rsqrt`) derives from a backend's
// complete printer and overrides those handlers.
#pragma once

#include <functional>

#include "ir/ir.h"

namespace sb {

// A copy of `e`'s own fields (kind, loc, type, literals, operators, refs) without its children.
ExprPtr copy_node(const Expr& e);

template <typename E, typename Sig>
class BasicExprFunctor;

template <typename E, typename R, typename... Args>
class BasicExprFunctor<E, R(Args...)> {
 public:
  virtual ~BasicExprFunctor() = default;

  R visit(E& e, Args... args) {
    switch (e.kind) {
      case ExprKind::FloatLit:
        return visit_float_lit(e, args...);
      case ExprKind::IntLit:
        return visit_int_lit(e, args...);
      case ExprKind::Name:
        return visit_name(e, args...);
      case ExprKind::Const:
        return visit_const(e, args...);
      case ExprKind::IndexVar:
        return visit_index_var(e, args...);
      case ExprKind::SizeRef:
        return visit_size_ref(e, args...);
      case ExprKind::Read:
        return visit_read(e, args...);
      case ExprKind::Unary:
        return visit_unary(e, args...);
      case ExprKind::Binary:
        return visit_binary(e, args...);
      case ExprKind::Call:
        return visit_call(e, args...);
      case ExprKind::Cast:
        return visit_cast(e, args...);
      case ExprKind::Reduce:
        return visit_reduce(e, args...);
    }
    SB_ASSERT(false, "expression node of unknown kind " + std::to_string(static_cast<int>(e.kind)));
    __builtin_unreachable();
  }

 protected:
  virtual R visit_float_lit(E& e, Args... args) = 0;
  virtual R visit_int_lit(E& e, Args... args) = 0;
  virtual R visit_name(E& e, Args... args) = 0;
  virtual R visit_const(E& e, Args... args) = 0;
  virtual R visit_index_var(E& e, Args... args) = 0;
  virtual R visit_size_ref(E& e, Args... args) = 0;
  virtual R visit_read(E& e, Args... args) = 0;
  virtual R visit_unary(E& e, Args... args) = 0;
  virtual R visit_binary(E& e, Args... args) = 0;
  virtual R visit_call(E& e, Args... args) = 0;
  virtual R visit_cast(E& e, Args... args) = 0;
  virtual R visit_reduce(E& e, Args... args) = 0;
};

// The strict form over a const tree, and over a tree that the functor may change in place.
template <typename Sig>
using ExprFunctor = BasicExprFunctor<const Expr, Sig>;
template <typename Sig>
using MutableExprFunctor = BasicExprFunctor<Expr, Sig>;

// Pre-order walk; every kind defaults to visiting the children in order.
template <typename E>
class BasicExprVisitor : protected BasicExprFunctor<E, void()> {
  using Base = BasicExprFunctor<E, void()>;

 public:
  virtual void visit(E& e) { Base::visit(e); }

 protected:
  void visit_children(E& e) {
    for (auto& a : e.args) visit(*a);
  }
  void visit_float_lit(E& e) override { visit_children(e); }
  void visit_int_lit(E& e) override { visit_children(e); }
  void visit_name(E& e) override { visit_children(e); }
  void visit_const(E& e) override { visit_children(e); }
  void visit_index_var(E& e) override { visit_children(e); }
  void visit_size_ref(E& e) override { visit_children(e); }
  void visit_read(E& e) override { visit_children(e); }
  void visit_unary(E& e) override { visit_children(e); }
  void visit_binary(E& e) override { visit_children(e); }
  void visit_call(E& e) override { visit_children(e); }
  void visit_cast(E& e) override { visit_children(e); }
  void visit_reduce(E& e) override { visit_children(e); }
};

using ExprVisitor = BasicExprVisitor<const Expr>;
using MutableExprVisitor = BasicExprVisitor<Expr>;

// Rebuilds a tree; every kind defaults to a copy of the node with mutated children.
class ExprMutator : protected ExprFunctor<ExprPtr()> {
 public:
  virtual ExprPtr mutate(const Expr& e) { return visit(e); }

 protected:
  // copy_node(e) with every child mutated, in order.
  ExprPtr mutate_children(const Expr& e);

  virtual ExprPtr mutate_float_lit(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_int_lit(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_name(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_const(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_index_var(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_size_ref(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_read(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_unary(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_binary(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_call(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_cast(const Expr& e) { return mutate_children(e); }
  virtual ExprPtr mutate_reduce(const Expr& e) { return mutate_children(e); }

 private:
  ExprPtr visit_float_lit(const Expr& e) final { return mutate_float_lit(e); }
  ExprPtr visit_int_lit(const Expr& e) final { return mutate_int_lit(e); }
  ExprPtr visit_name(const Expr& e) final { return mutate_name(e); }
  ExprPtr visit_const(const Expr& e) final { return mutate_const(e); }
  ExprPtr visit_index_var(const Expr& e) final { return mutate_index_var(e); }
  ExprPtr visit_size_ref(const Expr& e) final { return mutate_size_ref(e); }
  ExprPtr visit_read(const Expr& e) final { return mutate_read(e); }
  ExprPtr visit_unary(const Expr& e) final { return mutate_unary(e); }
  ExprPtr visit_binary(const Expr& e) final { return mutate_binary(e); }
  ExprPtr visit_call(const Expr& e) final { return mutate_call(e); }
  ExprPtr visit_cast(const Expr& e) final { return mutate_cast(e); }
  ExprPtr visit_reduce(const Expr& e) final { return mutate_reduce(e); }
};

// Every node of `e`, pre-order (a node before its children, children in order).
void for_each_node(const Expr& e, const std::function<void(const Expr&)>& f);
// Whether some node of `e` satisfies `pred` (the walk stops at the first that does).
bool any_node(const Expr& e, const std::function<bool(const Expr&)>& pred);

}  // namespace sb
