#include "backends/mlir/print_loops.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "backends/common/emit_common.h"
#include "ir/scalar_types.h"
#include "support/diag.h"

namespace sb {

namespace {

using loops::BinOp;
using loops::Block;
using loops::Expr;
using loops::ExprFunctor;
using loops::ExprPtr;
using loops::ForKind;
using loops::MemScope;
using loops::Stmt;
using loops::StmtFunctor;
using loops::StmtKind;
using loops::StmtPtr;
using loops::Type;
using loops::TypeKind;
using loops::Width;

// The MLIR type of a loop IR scalar type.
std::string mlir_of(const Type& t) {
  switch (t.kind) {
    case TypeKind::Int:
      return "index";
    case TypeKind::Bool:
      return "i1";
    case TypeKind::Float: {
      const char* m = scalar(t.elem).mlir_type;
      SB_ASSERT(m, std::string("no MLIR type for ") + dtype_name(t.elem));
      return m;
    }
    case TypeKind::Void:
    case TypeKind::Vec:
    case TypeKind::Ptr:
      break;
  }
  SB_ASSERT(false, "the mlir loop printer has no spelling for loop IR type " + to_string(t));
  return "";
}

class Printer final : public ExprFunctor<std::string()>, public StmtFunctor<void()> {
 public:
  Printer(MlirLeaves& leaves, CodeWriter& w) : leaves_(leaves), w_(w) {}

  void block(const Block& b) {
    push();
    for (const StmtPtr& s : b) StmtFunctor<void()>::visit(*s);
    pop();
  }

 private:
  // A name's value: an SSA value of `type`, or a buffer (memref type `memref`).
  struct Binding {
    std::string ssa;
    Type type;
    bool mut = false;
    int index_var = -1;  // binds the spec statement's index variable
    bool dead = false;   // moved by a ScanWalk: no value
    std::string memref;  // an Alloc's buffer: its memref type
  };

  std::string value(const ExprPtr& e) { return ExprFunctor<std::string()>::visit(*e); }

  const Binding& lookup(const std::string& name) const {
    auto it = env_.find(name);
    SB_ASSERT(it != env_.end(), "loop IR variable '" + name + "' read outside its scope");
    SB_ASSERT(!it->second.dead, "loop IR variable '" + name + "' read after a ScanWalk moved it");
    return it->second;
  }

  // ---- Scopes: a Let hides a binding of the same name until its block ends.
  void push() { scopes_.emplace_back(); }
  void pop() {
    for (auto& [name, prev] : scopes_.back()) {
      if (prev)
        env_[name] = *prev;
      else
        env_.erase(name);
    }
    scopes_.pop_back();
    sync_indices();
  }
  void bind(const std::string& name, Binding b) {
    auto& scope = scopes_.back();
    if (!scope.count(name)) {
      auto it = env_.find(name);
      scope[name] = it == env_.end() ? std::nullopt : std::optional<Binding>(it->second);
    }
    env_[name] = std::move(b);
    sync_indices();
  }
  void rebind(const std::string& name, const std::string& ssa) {
    auto it = env_.find(name);
    SB_ASSERT(it != env_.end() && it->second.mut,
              "loop IR assignment to '" + name + "', not a mutable variable in scope");
    it->second.ssa = ssa;
    it->second.dead = false;
    sync_indices();
  }
  // The leaves' index variables as the bindings in scope give them.
  void sync_indices() {
    std::map<int, std::string> want;
    for (const auto& [name, b] : env_)
      if (b.index_var >= 0 && !b.dead) want[b.index_var] = b.ssa;
    for (int v : bound_)
      if (!want.count(v)) leaves_.bind_index(v, "");
    bound_.clear();
    for (const auto& [v, ssa] : want) {
      leaves_.bind_index(v, ssa);
      bound_.insert(v);
    }
  }

  // The mutable variables in scope that region `b` assigns, in name order.
  std::vector<std::string> assigned_outer(const Block& b) const {
    std::set<std::string> assigned, local;
    for_each_stmt(b, [&](const Stmt& s) {
      if (s.kind == StmtKind::Assign || s.kind == StmtKind::Fold || s.kind == StmtKind::FoldRange)
        assigned.insert(s.name);
      if (s.kind == StmtKind::Let || s.kind == StmtKind::Alloc || s.kind == StmtKind::For)
        local.insert(s.name);
    });
    std::vector<std::string> out;
    for (const std::string& n : assigned) {
      auto it = env_.find(n);
      if (it == env_.end() || !it->second.mut || it->second.dead) continue;
      SB_ASSERT(!local.count(n), "loop IR region both binds and assigns '" + n +
                                     "', a mutable variable of an enclosing block");
      out.push_back(n);
    }
    return out;
  }
  std::string types_of(const std::vector<std::string>& names) const {
    std::string t;
    for (const std::string& n : names) t += (t.empty() ? "" : ", ") + mlir_of(lookup(n).type);
    return t;
  }
  std::string values_of(const std::vector<std::string>& names) const {
    std::string v;
    for (const std::string& n : names) v += (v.empty() ? "" : ", ") + lookup(n).ssa;
    return v;
  }
  // After an op with results `res` (":n" results) yielding `names`: each name takes its result.
  void take_results(const std::string& res, const std::vector<std::string>& names) {
    for (size_t i = 0; i < names.size(); ++i)
      rebind(names[i], names.size() == 1 ? res : res + "#" + std::to_string(i));
  }

  std::string emit(const std::string& rhs) {
    const std::string v = leaves_.fresh();
    w_.line(v + " = " + rhs);
    return v;
  }
  std::string index_const(int64_t v) {
    return emit("arith.constant " + std::to_string(v) + " : index");
  }

  // ---- Expressions
  std::string visit_int_imm(const Expr& e) override {
    if (e.type.kind == TypeKind::Bool)
      return emit(std::string("arith.constant ") + (e.ival ? "true" : "false"));
    return index_const(e.ival);
  }
  std::string visit_float_imm(const Expr& e) override {
    return leaves_.float_constant(e.fval, e.type.elem);
  }
  std::string visit_var(const Expr& e) override {
    const Binding& b = lookup(e.name);
    SB_ASSERT(b.memref.empty(), "loop IR buffer '" + e.name + "' read as a value");
    return b.ssa;
  }
  std::string visit_binary(const Expr& e) override {
    const std::string a = value(e.args[0]), b = value(e.args[1]);
    const Type& t = e.args[0]->type;
    const bool f = t.kind == TypeKind::Float;
    const std::string ty = mlir_of(t);
    auto arith = [&](const char* i_op, const char* f_op) {
      SB_ASSERT(f ? f_op != nullptr : i_op != nullptr,
                std::string("loop IR operator ") + binop_name(e.op) + " on " + to_string(t));
      return emit(std::string(f ? f_op : i_op) + " " + a + ", " + b + " : " + ty);
    };
    auto compare = [&](const char* i_pred, const char* f_pred) {
      return emit(std::string(f ? "arith.cmpf " : "arith.cmpi ") + (f ? f_pred : i_pred) + ", " +
                  a + ", " + b + " : " + ty);
    };
    switch (e.op) {
      case BinOp::Add:
        return arith("arith.addi", "arith.addf");
      case BinOp::Sub:
        return arith("arith.subi", "arith.subf");
      case BinOp::Mul:
        return arith("arith.muli", "arith.mulf");
      case BinOp::Div:  // non-negative integers (lower/loop_ir.h): signed and unsigned agree
        return arith("arith.divsi", "arith.divf");
      case BinOp::Mod:
        return arith("arith.remsi", nullptr);
      case BinOp::Min:
        return arith("arith.minsi", "arith.minimumf");
      case BinOp::Max:
        return arith("arith.maxsi", "arith.maximumf");
      case BinOp::Lt:
        return compare("slt", "olt");
      case BinOp::Le:
        return compare("sle", "ole");
      case BinOp::Gt:
        return compare("sgt", "ogt");
      case BinOp::Ge:
        return compare("sge", "oge");
      case BinOp::Eq:
        return compare("eq", "oeq");
      case BinOp::Ne:
        return compare("ne", "une");
      case BinOp::And:
        return arith("arith.andi", nullptr);
      case BinOp::Or:
        return arith("arith.ori", nullptr);
    }
    SB_ASSERT(false, "loop IR binary operator of unknown kind");
    return "";
  }
  std::string visit_select(const Expr& e) override {
    const std::string c = value(e.args[0]), a = value(e.args[1]), b = value(e.args[2]);
    return emit("arith.select " + c + ", " + a + ", " + b + " : " + mlir_of(e.type));
  }
  std::string visit_load(const Expr& e) override {
    SB_ASSERT(e.width == Width::Scalar, "a vector load in an mlir host body");
    const Binding& b = lookup(e.name);
    SB_ASSERT(!b.memref.empty(), "loop IR load from '" + e.name + "', not a buffer");
    std::string idx;
    for (const ExprPtr& a : e.args) idx += (idx.empty() ? "" : ", ") + value(a);
    return emit("memref.load " + b.ssa + "[" + idx + "] : " + b.memref);
  }
  std::string unsupported(const char* what) {
    SB_ASSERT(false, std::string("the mlir loop printer prints host scan bodies only: ") + what);
    return "";
  }
  std::string visit_cast(const Expr&) override { return unsupported("Cast"); }
  std::string visit_broadcast(const Expr&) override { return unsupported("Broadcast"); }
  std::string visit_fma(const Expr&) override { return unsupported("Fma"); }
  std::string visit_call(const Expr&) override { return unsupported("Call"); }
  std::string visit_lanes(const Expr&) override { return unsupported("Lanes"); }
  std::string visit_workers(const Expr&) override { return unsupported("Workers"); }
  std::string visit_ptr_add(const Expr&) override { return unsupported("PtrAdd"); }
  std::string visit_gpu(const Expr&) override { return unsupported("Gpu"); }
  std::string visit_element(const Expr&) override { return unsupported("Element"); }
  std::string visit_warp(const Expr&) override { return unsupported("Warp"); }
  std::string visit_lane(const Expr&) override { return unsupported("Lane"); }
  std::string visit_make_vec(const Expr&) override { return unsupported("MakeVec"); }
  std::string visit_address(const Expr&) override { return unsupported("Address"); }
  std::string visit_index_var(const Expr& e) override {
    return leaves_.index_var(static_cast<int>(e.ival));
  }
  std::string visit_extent(const Expr& e) override {
    return leaves_.extent(static_cast<int>(e.ival), e.dim);
  }
  std::string visit_size(const Expr& e) override { return leaves_.size(static_cast<int>(e.ival)); }
  std::string visit_spec(const Expr& e) override {
    SB_ASSERT(e.overrides.empty(), "a spec leaf with overrides in an mlir host body");
    return leaves_.spec(*e.spec);
  }
  std::string visit_identity(const Expr& e) override { return leaves_.identity(e.rop, e.elem); }

  // ---- Statements
  void visit_for(const Stmt& s) override {
    const std::string lo = value(s.exprs[0]), hi = value(s.exprs[1]), step = value(s.exprs[2]);
    const std::vector<std::string> carried =
        s.for_kind == ForKind::Parallel ? std::vector<std::string>{} : assigned_outer(s.body);
    const std::string res = carried.empty() ? "" : leaves_.fresh();
    const std::string iv = leaves_.fresh();
    auto bind_iv = [&] { bind(s.name, Binding{iv, loops::int_t(), false, s.index_var}); };
    if (s.for_kind == ForKind::Parallel) {
      SB_ASSERT(!s.threads, "a parallel loop with a thread bound in an mlir host body");
      SB_ASSERT(assigned_outer(s.body).empty(),
                "a parallel loop assigning a variable of an enclosing block");
      w_.open("scf.parallel (" + iv + ") = (" + lo + ") to (" + hi + ") step (" + step + ") {");
      push();
      bind_iv();
      for (const StmtPtr& b : s.body) StmtFunctor<void()>::visit(*b);
      pop();
      w_.line("scf.reduce");
      w_.close("}");
      return;
    }
    if (carried.empty()) {
      w_.open("scf.for " + iv + " = " + lo + " to " + hi + " step " + step + " {");
      push();
      bind_iv();
      for (const StmtPtr& b : s.body) StmtFunctor<void()>::visit(*b);
      pop();
      w_.close("}");
      return;
    }
    // The carried variables as iter_args: inside the loop each name is its iter_arg.
    std::vector<std::string> args;
    std::string iter;
    for (const std::string& n : carried) {
      args.push_back(leaves_.fresh());
      iter += (iter.empty() ? "" : ", ") + args.back() + " = " + lookup(n).ssa;
    }
    const std::string types = types_of(carried);
    w_.open(res + (carried.size() > 1 ? ":" + std::to_string(carried.size()) : "") + " = scf.for " +
            iv + " = " + lo + " to " + hi + " step " + step + " iter_args(" + iter + ") -> (" +
            types + ") {");
    for (size_t i = 0; i < carried.size(); ++i) rebind(carried[i], args[i]);
    push();
    bind_iv();
    for (const StmtPtr& b : s.body) StmtFunctor<void()>::visit(*b);
    const std::string yields = values_of(carried);
    pop();
    w_.line("scf.yield " + yields + " : " + types);
    w_.close("}");
    take_results(res, carried);
  }
  void visit_if(const Stmt& s) override {
    const std::string c = value(s.exprs[0]);
    std::vector<std::string> carried = assigned_outer(s.body);
    for (const std::string& n : assigned_outer(s.other))
      if (std::find(carried.begin(), carried.end(), n) == carried.end()) carried.push_back(n);
    if (carried.empty()) {
      w_.open("scf.if " + c + " {");
      block(s.body);
      if (!s.other.empty()) {
        w_.close_open("} else {");
        block(s.other);
      }
      w_.close("}");
      return;
    }
    std::map<std::string, std::string> before;
    for (const std::string& n : carried) before[n] = lookup(n).ssa;
    const std::string types = types_of(carried);
    const std::string res = leaves_.fresh();
    auto branch = [&](const Block& b) {
      for (const std::string& n : carried) rebind(n, before[n]);
      push();
      for (const StmtPtr& st : b) StmtFunctor<void()>::visit(*st);
      const std::string yields = values_of(carried);
      pop();
      w_.line("scf.yield " + yields + " : " + types);
    };
    w_.open(res + (carried.size() > 1 ? ":" + std::to_string(carried.size()) : "") + " = scf.if " +
            c + " -> (" + types + ") {");
    branch(s.body);
    w_.close_open("} else {");
    branch(s.other);
    w_.close("}");
    take_results(res, carried);
  }
  void visit_let(const Stmt& s) override {
    const std::string v = value(s.exprs[0]);
    bind(s.name, Binding{v, s.exprs[0]->type, s.mut, s.index_var});
  }
  void visit_assign(const Stmt& s) override {
    if (s.lane >= 0) return unsupported_stmt("an assignment to a lane");
    rebind(s.name, value(s.exprs[0]));
  }
  void visit_alloc(const Stmt& s) override {
    SB_ASSERT(s.scope == MemScope::StackLocal || s.scope == MemScope::Register,
              std::string("an mlir host body allocating ") + mem_scope_name(s.scope) + " memory");
    std::string shape;
    for (const ExprPtr& d : s.exprs) {
      SB_ASSERT(d->kind == loops::ExprKind::IntImm, "an mlir stack buffer of a dynamic size");
      shape += std::to_string(d->ival) + "x";
    }
    const std::string memref = "memref<" + shape + mlir_of(s.type) + ">";
    const std::string buf = emit("memref.alloca() : " + memref);
    push();
    bind(s.name, Binding{buf, s.type, false, -1, false, memref});
    for (const StmtPtr& b : s.body) StmtFunctor<void()>::visit(*b);
    pop();
  }
  void visit_store(const Stmt& s) override {
    SB_ASSERT(s.width == Width::Scalar && !s.nontemporal,
              "a vector or non-temporal store in an mlir host body");
    const Binding& b = lookup(s.name);
    SB_ASSERT(!b.memref.empty(), "loop IR store to '" + s.name + "', not a buffer");
    const std::string v = value(s.exprs[0]);
    std::string idx;
    for (size_t i = 1; i < s.exprs.size(); ++i)
      idx += (idx.empty() ? "" : ", ") + value(s.exprs[i]);
    w_.line("memref.store " + v + ", " + b.ssa + "[" + idx + "] : " + b.memref);
  }
  void visit_comment(const Stmt& s) override { w_.line("// " + s.text); }
  void visit_fold(const Stmt& s) override {
    if (s.exprs.size() > 1) return unsupported_stmt("a fold into a buffer's element");
    const std::string v = value(s.exprs[0]);
    rebind(s.name, leaves_.fold(s.rop, s.type.elem, lookup(s.name).ssa, v));
  }
  void visit_fold_range(const Stmt& s) override {
    const std::string lo = value(s.exprs[0]), hi = value(s.exprs[1]);
    rebind(s.name, leaves_.fold_range(*s.spec, lookup(s.name).ssa, lo, hi));
  }
  void visit_scan_walk(const Stmt& s) override {
    const std::string end = value(s.exprs[0]);
    leaves_.scan_walk(*s.spec, lookup(s.name).ssa, end);
    env_[s.name].dead = true;
    for (auto& [name, b] : env_)
      if (b.index_var >= 0 && b.mut) b.dead = true;
    sync_indices();
  }
  void unsupported_stmt(const char* what) {
    SB_ASSERT(false, std::string("the mlir loop printer prints host scan bodies only: ") + what);
  }
  void visit_evaluate(const Stmt&) override { unsupported_stmt("Evaluate"); }
  void visit_return(const Stmt&) override { unsupported_stmt("Return"); }
  void visit_barrier(const Stmt&) override { unsupported_stmt("Barrier"); }
  void visit_compute(const Stmt&) override { unsupported_stmt("Compute"); }
  void visit_while(const Stmt&) override { unsupported_stmt("While"); }
  void visit_atomic(const Stmt&) override { unsupported_stmt("Atomic"); }
  void visit_put(const Stmt&) override { unsupported_stmt("Put"); }

  MlirLeaves& leaves_;
  CodeWriter& w_;
  std::map<std::string, Binding> env_;
  std::vector<std::map<std::string, std::optional<Binding>>> scopes_;
  std::set<int> bound_;  // the index variables bound in leaves_
};

}  // namespace

void print_mlir_block(const loops::Block& b, MlirLeaves& leaves, CodeWriter& w) {
  Printer p(leaves, w);
  p.block(b);
}

}  // namespace sb
