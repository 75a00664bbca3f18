#include "backends/mojo/print_loops.h"

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "backends/common/emit_common.h"
#include "backends/common/loop_leaves.h"
#include "backends/mojo/mojo_lowering.h"
#include "backends/mojo/py_writer.h"
#include "support/diag.h"

namespace sb::loops {

namespace {

// A spec scalar type (a GPU body's vectors and shared arrays may be of any, a host body's are
// f32 or f64).
const char* scalar_mojo(DType t) {
  SB_ASSERT(t != DType::Unknown && scalar(t).mojo_type, "loop IR scalar type of the mojo printer");
  return scalar(t).mojo_type;
}

const char* dtype_mojo(DType t) {
  SB_ASSERT(t != DType::Unknown && scalar(t).mojo_dtype, "loop IR scalar type of the mojo printer");
  return scalar(t).mojo_dtype;
}

// Python precedence levels (higher binds tighter).
enum Prec { kSel = 1, kOr, kAnd, kCmp, kAdd, kMul, kUnary, kTop };

int prec(BinOp op) {
  switch (op) {
    case BinOp::Or:
      return kOr;
    case BinOp::And:
      return kAnd;
    case BinOp::Eq:
    case BinOp::Ne:
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge:
      return kCmp;
    case BinOp::Add:
    case BinOp::Sub:
      return kAdd;
    case BinOp::Mul:
    case BinOp::Div:
    case BinOp::Mod:
      return kMul;
    case BinOp::Min:
    case BinOp::Max:
      return kTop;
  }
  return kTop;
}

const char* op_mojo(BinOp op) {
  switch (op) {
    case BinOp::Div:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::And:
      return "and";
    case BinOp::Or:
      return "or";
    case BinOp::Add:
    case BinOp::Sub:
    case BinOp::Mul:
    case BinOp::Min:
    case BinOp::Max:
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge:
    case BinOp::Eq:
    case BinOp::Ne:
      return binop_name(op);
  }
  return "?";
}

std::string paren(const std::string& s, int p, int parent) {
  return p < parent ? "(" + s + ")" : s;
}

// A level of this printer's scale (0 for none) in mojo_lowering.h's, which the leaves take.
int mojo_prec(int p) {
  static const int kMojo[] = {0,
                              kMojoPrecTernary,
                              kMojoPrecOr,
                              kMojoPrecAnd,
                              kMojoPrecCmp,
                              kMojoPrecAdd,
                              kMojoPrecMul,
                              kMojoPrecUnary,
                              kMojoPrecPrimary};
  SB_ASSERT(p >= 0 && p <= kTop, "Mojo precedence level out of range");
  return kMojo[p];
}

// Names bound while printing: loop variables of loops unrolled here (to their iteration), Lets
// inside them (renamed per iteration), register buffers; and a kernel body's leaves
// (print_mojo_block).
struct Env {
  std::map<std::string, int64_t> values;
  std::map<std::string, std::string> renames;
  std::set<std::string> registers;
  // Register buffers of scalars held as one SIMD value each (their dimensions): indexed at
  // compile time, so a loop over them stays a `comptime for`.
  std::map<std::string, std::vector<int64_t>> simd_registers;
  LoopLeaves* leaves = nullptr;
};

// Whether `b` allocates a register buffer or reads or writes one of `regs`: an unrolled loop over
// such a body is unrolled in the text, each element of a register buffer a variable of its own.
bool touches_registers(const Block& b, const std::set<std::string>& regs) {
  bool found = false;
  std::function<void(const Expr&)> expr = [&](const Expr& e) {
    if (e.kind == ExprKind::Load && regs.count(e.name)) found = true;
    for (const ExprPtr& a : e.args) expr(*a);
    for (const Override& o : e.overrides) expr(*o.value);
  };
  for_each_stmt(b, [&](const Stmt& s) {
    if (s.kind == StmtKind::Alloc && s.scope == MemScope::Register) found = true;
    if ((s.kind == StmtKind::Store || s.kind == StmtKind::Assign) && regs.count(s.name))
      found = true;
    for (const ExprPtr& x : s.exprs)
      if (x) expr(*x);
    for (const Override& o : s.overrides) expr(*o.value);
  });
  return found;
}

LoopLeaves& leaves_of(const Env& env, const char* node) {
  SB_ASSERT(env.leaves, std::string("loop IR ") + node + " outside a kernel body (no leaves)");
  return *env.leaves;
}

std::optional<int64_t> eval(const Expr& e, const Env& env) {
  if (e.kind == ExprKind::IntImm) return e.ival;
  if (e.kind == ExprKind::Var) {
    auto it = env.values.find(e.name);
    if (it == env.values.end()) return std::nullopt;
    return it->second;
  }
  if (e.kind == ExprKind::Binary &&
      (e.op == BinOp::Add || e.op == BinOp::Sub || e.op == BinOp::Mul)) {
    auto a = eval(*e.args[0], env), b = eval(*e.args[1], env);
    if (!a || !b) return std::nullopt;
    return e.op == BinOp::Add ? *a + *b : e.op == BinOp::Sub ? *a - *b : *a * *b;
  }
  return std::nullopt;
}

class MojoPrinter;

class MExpr : public ExprFunctor<std::string(int)> {
 public:
  MExpr(const Env& env, const std::map<DType, std::string>& lanes) : env_(env), lanes_(lanes) {}
  std::string print(const Expr& e, int parent = 0) { return visit(e, parent); }
  // Element `e.args` of a SIMD register buffer: the value's lane at their row-major index.
  std::string simd_element(const Expr& e) {
    const std::vector<int64_t>& dims = env_.simd_registers.at(e.name);
    SB_ASSERT(e.args.size() == dims.size(), "SIMD register " + e.name + " indexed by its rank");
    ExprPtr flat = e.args[0];
    for (size_t i = 1; i < e.args.size(); ++i) flat = add(mul(flat, imm(dims[i])), e.args[i]);
    return e.name + "[" + print(*flat) + "]";
  }
  std::string register_name(const Expr& e) {
    std::string s = e.name;
    for (size_t i = 0; i < e.args.size(); ++i) {
      auto v = eval(*e.args[i], env_);
      SB_ASSERT(v.has_value(), "register buffer " + e.name + " indexed at run time");
      s += (i ? "_" : "") + std::to_string(*v);
    }
    return s;
  }
  std::string vec_type(DType t) const {
    auto it = lanes_.find(t);
    return std::string("SIMD[") + dtype_mojo(t) + ", " +
           (it != lanes_.end() ? it->second : "simd_width_of[" + std::string(dtype_mojo(t)) + "]()") +
           "]";
  }
  std::string type(const Type& t) const {
    switch (t.kind) {
      case TypeKind::Void:
        return "None";
      case TypeKind::Int:
        return "Int";
      case TypeKind::Bool:
        return "Bool";
      case TypeKind::Float:
        return scalar_mojo(t.elem);
      case TypeKind::Vec:
        return t.lanes ? std::string("SIMD[") + dtype_mojo(t.elem) + ", " +
                             std::to_string(t.lanes) + "]"
                       : vec_type(t.elem);
      case TypeKind::Ptr:
        return std::string("Pointer[") + scalar_mojo(t.elem) + ", " +
               (t.mut ? "MutUntrackedOrigin]" : "ImmUntrackedOrigin]");
    }
    return "?";
  }

 protected:
  std::string visit_int_imm(const Expr& e, int parent) override {
    if (e.type.kind == TypeKind::Bool) return e.ival ? "True" : "False";
    return e.ival < 0 ? paren(std::to_string(e.ival), kUnary, parent) : std::to_string(e.ival);
  }
  std::string visit_float_imm(const Expr& e, int) override {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", e.fval);
    return std::string(scalar_mojo(e.type.elem)) + "(" + buf + ")";
  }
  std::string visit_var(const Expr& e, int parent) override {
    if (auto it = env_.values.find(e.name); it != env_.values.end())
      return it->second < 0 ? paren(std::to_string(it->second), kUnary, parent)
                            : std::to_string(it->second);
    if (auto it = env_.renames.find(e.name); it != env_.renames.end()) return it->second;
    return e.name;
  }
  std::string visit_binary(const Expr& e, int parent) override {
    if (e.op == BinOp::Min || e.op == BinOp::Max)
      return std::string(e.op == BinOp::Min ? "min(" : "max(") + print(*e.args[0]) + ", " +
             print(*e.args[1]) + ")";
    const int p = prec(e.op);
    // Comparisons chain in Python: parenthesise a comparison operand of a comparison.
    const int right = p == kCmp ? kCmp + 1 : p + 1;
    const int left = p == kCmp ? kCmp + 1 : p;
    return paren(print(*e.args[0], left) + " " + op_mojo(e.op) + " " + print(*e.args[1], right),
                 p, parent);
  }
  std::string visit_select(const Expr& e, int parent) override {
    return paren(print(*e.args[1], kSel + 1) + " if " + print(*e.args[0], kSel + 1) + " else " +
                     print(*e.args[2], kSel),
                 kSel, parent);
  }
  std::string visit_cast(const Expr& e, int) override {
    // A float converted to another float type (an f16 or bf16 element widened to f32) by
    // SIMD.cast; an integer to a float by the type's constructor.
    const Expr& v = *e.args[0];
    if (e.type.kind == TypeKind::Float && v.type.kind == TypeKind::Float)
      return print(v, kTop) + ".cast[" + dtype_mojo(e.type.elem) + "]()";
    return type(e.type) + "(" + print(v) + ")";
  }
  std::string visit_load(const Expr& e, int) override {
    if (env_.registers.count(e.name)) return register_name(e);
    if (env_.simd_registers.count(e.name)) return simd_element(e);
    SB_ASSERT(e.args.size() == 1, "load of a multi-dimensional memory buffer");
    if (e.width == Width::Vector)
      return e.name + ".unsafe_load[width=" + lanes_name(e.type.elem) + "](" + print(*e.args[0]) +
             ")";
    return e.name + "[unsafe_offset=" + print(*e.args[0]) + "]";
  }
  std::string visit_broadcast(const Expr& e, int) override {
    const Expr& v = *e.args[0];
    if (v.kind == ExprKind::FloatImm && v.fval == 0) return vec_type(e.type.elem) + "(0)";
    return vec_type(e.type.elem) + "(" + print(v) + ")";
  }
  std::string visit_fma(const Expr& e, int) override {
    return print(*e.args[0], kTop) + ".fma(" + print(*e.args[1]) + ", " + print(*e.args[2]) + ")";
  }
  std::string visit_call(const Expr& e, int) override {
    std::string s = e.name + "(";
    for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + print(*e.args[i]);
    return s + ")";
  }
  std::string visit_lanes(const Expr& e, int) override {
    return std::string("simd_width_of[") + dtype_mojo(e.elem) + "]()";
  }
  std::string visit_workers(const Expr&, int) override { return "parallelism_level()"; }
  std::string visit_ptr_add(const Expr& e, int) override {
    return print(*e.args[0], kTop) + ".unsafe_offset(" + print(*e.args[1]) + ")";
  }
  std::string visit_gpu(const Expr& e, int) override {
    return leaves_of(env_, "GPU index").gpu_index(e.gpu);
  }
  std::string visit_index_var(const Expr& e, int) override {
    return leaves_of(env_, "index variable").index_var(static_cast<int>(e.ival));
  }
  std::string visit_extent(const Expr& e, int parent) override {
    return leaves_of(env_, "extent").extent(static_cast<int>(e.ival), e.dim, mojo_prec(parent));
  }
  std::string visit_size(const Expr& e, int) override {
    return leaves_of(env_, "size").size(static_cast<int>(e.ival));
  }
  std::string visit_element(const Expr& e, int) override {
    if (e.type.kind == TypeKind::Vec)
      return leaves_of(env_, "vector element")
          .element_vector(static_cast<int>(e.ival), print(*e.args[0]), e.type.lanes);
    return leaves_of(env_, "element").element(static_cast<int>(e.ival), print(*e.args[0]));
  }
  std::string visit_spec(const Expr& e, int parent) override {
    LoopLeaves::Overrides overrides;
    for (const Override& o : e.overrides) overrides.emplace_back(o.expr, print(*o.value, kTop));
    return leaves_of(env_, "spec expression")
        .spec(static_cast<int>(e.ival), *e.spec, mojo_prec(parent), overrides);
  }
  std::string visit_identity(const Expr& e, int) override {
    return leaves_of(env_, "identity").identity(e.rop, e.elem);
  }
  std::string visit_warp(const Expr& e, int) override {
    return leaves_of(env_, "warp reduction").warp(e.warp, e.rop, e.type.elem, print(*e.args[0]));
  }
  std::string visit_lane(const Expr& e, int) override {
    return print(*e.args[0], kTop) + "[" + std::to_string(e.ival) + "]";
  }
  // Lanes all equal: one value, which the constructor splats.
  std::string visit_make_vec(const Expr& e, int) override {
    bool splat = true;
    for (const ExprPtr& a : e.args) splat = splat && equal(*a, *e.args[0]);
    if (splat) return type(e.type) + "(" + print(*e.args[0]) + ")";
    std::string s = type(e.type) + "(";
    for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + print(*e.args[i]);
    return s + ")";
  }
  std::string visit_address(const Expr& e, int) override {
    return leaves_of(env_, "address").address(static_cast<int>(e.ival));
  }

 private:
  std::string lanes_name(DType t) const {
    auto it = lanes_.find(t);
    return it != lanes_.end() ? it->second : "simd_width_of[" + std::string(dtype_mojo(t)) + "]()";
  }
  const Env& env_;
  const std::map<DType, std::string>& lanes_;
};

class MojoPrinter : public StmtFunctor<void()> {
 public:
  MojoPrinter(PyWriter& w, const Module& m, const std::map<DType, std::string>& lanes,
              LoopLeaves* leaves = nullptr)
      : w_(w), m_(m), lanes_(lanes) {
    env_.leaves = leaves;
  }

  // The statements of `b`; `pass` where there are none.
  void block(const Block& b) {
    const size_t before = w_.size();
    for (const StmtPtr& s : b) visit(*s);
    if (w_.size() == before) w_.line("pass");
  }

 protected:
  void visit_for(const Stmt& s) override {
    SB_ASSERT(s.index_var < 0 || s.for_kind == ForKind::Serial || s.for_kind == ForKind::Vector,
              "a parallel or unrolled loop over a spec index variable");
    switch (s.for_kind) {
      case ForKind::Unrolled:
        unrolled(s);
        return;
      case ForKind::Parallel:
        parallel(s);
        return;
      case ForKind::Serial:
      case ForKind::Vector:  // left to LLVM's vectoriser
        break;
    }
    const std::string v =
        s.index_var >= 0 ? leaves_of(env_, "index variable").index_var(s.index_var) : s.name;
    w_.open("for " + v + " in " + range(s) + ":");
    block(s.body);
    w_.dedent();
  }
  void visit_if(const Stmt& s) override {
    w_.open("if " + e(*s.exprs[0]) + ":");
    block(s.body);
    w_.dedent();
    if (s.other.empty()) return;
    w_.open("else:");
    block(s.other);
    w_.dedent();
  }
  void visit_let(const Stmt& s) override {
    if (s.index_var >= 0) {
      w_.line("var " + leaves_of(env_, "index variable").index_var(s.index_var) + " = " +
              e(*s.exprs[0]));
      return;
    }
    std::string name = s.name;
    if (unrolling_ > 0) {
      // One variable per unrolled iteration: the name takes the iteration's values.
      for (const auto& [v, k] : env_.values) name += std::to_string(k);
      env_.renames[s.name] = name;
    } else {
      env_.renames.erase(s.name);
    }
    w_.line("var " + name + " = " + e(*s.exprs[0]));
  }
  void visit_assign(const Stmt& s) override {
    if (s.lane >= 0) {
      w_.line(e(*lane(var(s.name, s.type), s.lane)) + " = " + e(*s.exprs[0]));
      return;
    }
    if (s.index_var >= 0) {
      update(leaves_of(env_, "index variable").index_var(s.index_var), *s.exprs[0]);
      return;
    }
    MExpr p(env_, lanes_);
    update(p.print(*var(s.name, s.type)), *s.exprs[0]);
  }
  void visit_alloc(const Stmt& s) override {
    switch (s.scope) {
      case MemScope::Register: {
        std::vector<int64_t> dims;
        for (const ExprPtr& d : s.exprs) {
          std::set<int64_t> v = possible_values(*d, m_);
          SB_ASSERT(!v.empty(), "register buffer of a run-time size: " + to_string(*d));
          dims.push_back(*v.rbegin());
        }
        // Scalars of a power-of-two count (a GPU thread's tile): one SIMD value.
        int64_t count = 1;
        for (int64_t d : dims) count *= d;
        if (s.type.kind == TypeKind::Float && (count & (count - 1)) == 0) {
          w_.line("var " + s.name + " = SIMD[" + dtype_mojo(s.type.elem) + ", " +
                  std::to_string(count) + "]()");
          env_.simd_registers[s.name] = dims;
          for (const StmtPtr& b : s.body) visit(*b);
          return;
        }
        // Else one variable per element, for every element the largest tile may have.
        SB_ASSERT(dims.size() <= 2, "register buffer of more than two dimensions");
        MExpr p(env_, lanes_);
        const std::string zero =
            s.type.kind == TypeKind::Vec ? p.vec_type(s.type.elem) + "(0)"
                                         : std::string(scalar_mojo(s.type.elem)) + "(0)";
        const int64_t inner = dims.size() == 2 ? dims[1] : 1;
        for (int64_t i = 0; i < dims[0]; ++i)
          for (int64_t j = 0; j < inner; ++j)
            w_.line("var " + s.name + std::to_string(i) +
                    (dims.size() == 2 ? "_" + std::to_string(j) : "") + " = " + zero);
        env_.registers.insert(s.name);
        // The declarations are zeros already: a leading zero fill of the buffer is not printed
        // (Mojo warns of values assigned and never read).
        const bool zero_fill = !s.body.empty() && is_zero_fill(*s.body[0], s.name);
        for (size_t i = zero_fill ? 1 : 0; i < s.body.size(); ++i) visit(*s.body[i]);
        return;
      }
      case MemScope::StackLocal:
      case MemScope::HeapScratch:
        memory(s);
        return;
      case MemScope::Shared: {
        std::string count;
        for (const ExprPtr& d : s.exprs)
          count += (count.empty() ? "" : " * ") + e(*d, count.empty() ? kMul : kMul + 1);
        leaves_of(env_, "shared array").shared_array(s.name, s.type.elem, count);
        for (const StmtPtr& b : s.body) visit(*b);
        return;
      }
    }
  }
  void visit_store(const Stmt& s) override {
    const Expr& value = *s.exprs[0];
    MExpr p(env_, lanes_);
    if (env_.registers.count(s.name) || env_.simd_registers.count(s.name)) {
      std::vector<ExprPtr> idx(s.exprs.begin() + 1, s.exprs.end());
      update(p.print(*load(s.name, s.type, idx)), value);
      return;
    }
    SB_ASSERT(s.exprs.size() == 2, "store to a multi-dimensional memory buffer");
    if (s.width == Width::Vector || s.nontemporal) {
      std::string head = s.name + ".unsafe_store[width=" +
                         (s.width == Width::Vector ? lanes_name(s.type.elem) : "1") +
                         (s.nontemporal ? ", non_temporal=True" : "") + "]";
      w_.line(wrap_call(head, {e(*s.exprs[1]), e(value)}, "", w_.columns()));
      return;
    }
    w_.line(s.name + "[unsafe_offset=" + e(*s.exprs[1]) + "] = " + e(value));
  }
  void visit_evaluate(const Stmt& s) override {
    const Expr& c = *s.exprs[0];
    if (c.kind != ExprKind::Call) {
      w_.line("_ = " + e(c));
      return;
    }
    std::vector<std::string> args;
    for (const ExprPtr& a : c.args) args.push_back(e(*a));
    // A result nobody reads is discarded explicitly.
    const std::string discard = c.type.kind == TypeKind::Void ? "" : "_ = ";
    w_.line(discard +
            wrap_call(c.name, args, "", w_.columns() + static_cast<int>(discard.size())));
  }
  void visit_return(const Stmt& s) override {
    SB_ASSERT(closures_ == 0, "a return inside a parallel loop");
    SB_ASSERT(buffers_ == 0, "a return inside a buffer that the mojo printer frees after");
    w_.line(s.exprs.empty() ? "return" : "return " + e(*s.exprs[0]));
  }
  void visit_comment(const Stmt& s) override { w_.line("# " + s.text); }
  void visit_barrier(const Stmt& s) override { leaves_of(env_, "barrier").barrier(s.warp); }
  void visit_compute(const Stmt& s) override {
    LoopLeaves::Overrides overrides;
    for (const Override& o : s.overrides) overrides.emplace_back(o.expr, e(*o.value, kTop));
    leaves_of(env_, "compute").compute(overrides);
  }
  void visit_while(const Stmt& s) override {
    w_.open("while " + e(*s.exprs[0]) + ":");
    block(s.body);
    w_.dedent();
  }
  void visit_atomic(const Stmt& s) override {
    leaves_of(env_, "atomic")
        .atomic_fold(s.tensor, e(*s.exprs[1]), s.rop, s.type.elem, e(*s.exprs[0]));
  }
  void visit_fold(const Stmt& s) override {
    std::vector<ExprPtr> idx(s.exprs.begin() + 1, s.exprs.end());
    const std::string target = idx.empty() ? s.name : e(*load(s.name, s.type, idx));
    leaves_of(env_, "fold").fold(target, s.rop, s.type.elem, e(*s.exprs[0]));
  }
  void visit_fold_range(const Stmt& s) override {
    leaves_of(env_, "fold of a range")
        .fold_range(*s.spec, s.name, e(*s.exprs[0], kCmp + 1), e(*s.exprs[1], kCmp + 1));
  }
  void visit_scan_walk(const Stmt& s) override {
    leaves_of(env_, "scan walk").scan_walk(*s.spec, s.name, e(*s.exprs[0], kCmp + 1));
  }
  void visit_put(const Stmt& s) override {
    leaves_of(env_, "put").put(s.tensor, e(*s.exprs[1]), e(*s.exprs[0]), s.type.lanes);
  }

 private:
  std::string e(const Expr& x, int parent = 0) { return MExpr(env_, lanes_).print(x, parent); }
  std::string lanes_name(DType t) const {
    auto it = lanes_.find(t);
    return it != lanes_.end() ? it->second : "simd_width_of[" + std::string(dtype_mojo(t)) + "]()";
  }

  // An unrolled loop that only stores zeros into register buffer `buf`.
  static bool is_zero_fill(const Stmt& s, const std::string& buf) {
    if (s.kind != StmtKind::For || s.for_kind != ForKind::Unrolled || s.body.empty()) return false;
    for (const StmtPtr& b : s.body) {
      if (b->kind != StmtKind::Store || b->name != buf) return false;
      const Expr* v = b->exprs[0].get();
      if (v->kind == ExprKind::Broadcast) v = v->args[0].get();
      if (v->kind != ExprKind::FloatImm || v->fval != 0) return false;
    }
    return true;
  }

  std::string range(const Stmt& s) {
    const Expr& lo = *s.exprs[0];
    const Expr& step = *s.exprs[2];
    const bool zero = lo.kind == ExprKind::IntImm && lo.ival == 0;
    const bool unit = step.kind == ExprKind::IntImm && step.ival == 1;
    if (unit) return "range(" + (zero ? "" : e(lo) + ", ") + e(*s.exprs[1]) + ")";
    return "range(" + e(lo) + ", " + e(*s.exprs[1]) + ", " + e(step) + ")";
  }

  // `target = value`, `target += x` where the value adds to the target itself.
  void update(const std::string& target, const Expr& v) {
    if (v.kind == ExprKind::Binary && v.op == BinOp::Add && e(*v.args[0]) == target) {
      const std::string rhs = e(*v.args[1]);
      if (static_cast<size_t>(w_.columns()) + target.size() + rhs.size() + 4 <= 100) {
        w_.line(target + " += " + rhs);
        return;
      }
    }
    w_.line(target + " = " + e(v));
  }

  // The loop unrolled while printing, its compile-time extent's possible values as ranges.
  void unrolled(const Stmt& s) {
    const Expr& lo = *s.exprs[0];
    const Expr& step = *s.exprs[2];
    SB_ASSERT(lo.kind == ExprKind::IntImm && lo.ival == 0 && step.kind == ExprKind::IntImm &&
                  step.ival == 1,
              "unrolled loop not from 0 by 1");
    const std::set<int64_t> values = possible_values(*s.exprs[1], m_);
    SB_ASSERT(!values.empty(), "unrolled loop of a run-time extent: " + to_string(*s.exprs[1]));
    if (!touches_registers(s.body, env_.registers)) {
      // No register buffer to name per iteration: Mojo unrolls the loop itself.
      w_.open("comptime for " + s.name + " in range(" + e(*s.exprs[1]) + "):");
      block(s.body);
      w_.dedent();
      return;
    }
    const std::string extent = e(*s.exprs[1], kCmp + 1);
    int64_t from = 0, opened = 0;
    for (int64_t upto : values) {
      if (from > 0) {
        w_.open("comptime if " + extent + " > " + std::to_string(from) + ":");
        ++opened;
      }
      for (int64_t i = from; i < upto; ++i) {
        const Env saved = env_;
        env_.values[s.name] = i;
        ++unrolling_;
        for (const StmtPtr& b : s.body) visit(*b);
        --unrolling_;
        const std::set<std::string> regs = env_.registers;
        env_ = saved;
        env_.registers = regs;
      }
      from = upto;
    }
    for (int64_t i = 0; i < opened; ++i) w_.dedent();
  }

  // A parallel loop: a closure over the iteration, run by parallelize when there are several.
  void parallel(const Stmt& s) {
    const Expr& lo = *s.exprs[0];
    const Expr& step = *s.exprs[2];
    SB_ASSERT(step.kind == ExprKind::IntImm && step.ival == 1, "parallel loop of a step");
    const bool zero = lo.kind == ExprKind::IntImm && lo.ival == 0;
    // One closure name per loop of the body: a second loop over the same variable gets a suffix.
    std::string fn = "sb_par_" + s.name;
    for (int n = 2; !closure_names_.insert(fn).second; ++n)
      fn = "sb_par_" + s.name + "_" + std::to_string(n);
    w_.line("");
    w_.open("def " + fn + "(" + (zero ? s.name : "sb_i") + ": Int) {imm}:");
    if (!zero) w_.line("var " + s.name + " = sb_i + " + e(lo, kAdd + 1));
    ++closures_;
    block(s.body);
    --closures_;
    w_.dedent();
    w_.line("");
    const std::string count = zero ? e(*s.exprs[1]) : e(*s.exprs[1], kAdd) + " - " + e(lo, kAdd + 1);
    print_parallel_call(fn, count, w_);
  }

  // A stack or heap buffer: allocated here, freed after its body.
  void memory(const Stmt& s) {
    std::string count = e(*s.exprs[0], kMul);
    for (size_t i = 1; i < s.exprs.size(); ++i) count += " * " + e(*s.exprs[i], kMul + 1);
    const std::string owner = "sb_buf_" + s.name;
    if (s.scope == MemScope::HeapScratch)
      w_.line("# " + s.name + ": allocated for this call, freed after it (Mojo keeps no buffer "
              "between calls)");
    // An index buffer holds Int, as Mojo's index variables are; a value buffer its scalar type.
    const std::string elem =
        s.type.kind == TypeKind::Int ? "Int" : std::string(scalar(s.type.elem).mojo_type);
    w_.line("var " + owner + " = alloc(Layout[" + elem + "](count=" + count + "))");
    w_.line("var " + s.name + " = " + owner +
            ".unsafe_ptr().unsafe_origin_cast[MutUntrackedOrigin]()");
    ++buffers_;
    for (const StmtPtr& b : s.body) visit(*b);
    --buffers_;
    w_.line("dealloc(" + owner + "^)");
  }

  PyWriter& w_;
  const Module& m_;
  const std::map<DType, std::string>& lanes_;
  Env env_;
  int unrolling_ = 0, closures_ = 0, buffers_ = 0;
  std::set<std::string> closure_names_;
};

}  // namespace

std::string print_mojo_loops_impl(const std::vector<Module>& modules) {
  std::string out;
  for (const Module& m : modules) {
    // The constant that holds each type's native lane count names the vector width.
    std::map<DType, std::string> lanes;
    for (const Constant& c : m.constants)
      if (c.value->kind == ExprKind::Lanes) lanes.emplace(c.value->elem, c.name);
    for (const std::string& d : m.doc) out += "# " + d + "\n";
    const Env none;
    const std::map<DType, std::string> no_lanes;
    for (const Constant& c : m.constants) {
      if (!c.doc.empty()) out += "# " + c.name + ": " + c.doc + ".\n";
      out += "comptime " + c.name + " = " + MExpr(none, no_lanes).print(*c.value) + "\n";
    }
    out += "\n\n";
    for (const Function& f : m.functions) {
      for (const std::string& d : f.doc) out += "# " + d + "\n";
      std::vector<std::string> params;
      for (const Param& p : f.params) params.push_back(p.name + ": " + MExpr(none, lanes).type(p.type));
      out += wrap_call("def " + f.name, params,
                       f.result.kind == TypeKind::Void ? ":" : " -> " + MExpr(none, lanes).type(f.result) + ":",
                       0) +
             "\n";
      PyWriter w;
      w.open("");
      MojoPrinter pr(w, m, lanes);
      pr.block(f.body);
      // PyWriter::open wrote an empty first line; drop it.
      out += w.str().substr(1) + "\n\n";
    }
  }
  return out;
}

void print_mojo_block_impl(const Block& b, LoopLeaves& leaves, PyWriter& w) {
  const Module none;
  const std::map<DType, std::string> no_lanes;
  MojoPrinter(w, none, no_lanes, &leaves).block(b);
}

}  // namespace sb::loops

namespace sb {

void print_mojo_block(const loops::Block& b, LoopLeaves& leaves, PyWriter& w) {
  loops::print_mojo_block_impl(b, leaves, w);
}

void print_parallel_call(const std::string& fn, const std::string& count, PyWriter& w) {
  w.open("if " + count + " == 1:");
  w.line(fn + "(0)");
  w.dedent();
  w.open("else:");
  w.line("parallelize(" + fn + ", " + count + ")");
  w.dedent();
}

std::string print_mojo_loops(const std::vector<loops::Module>& modules) {
  return loops::print_mojo_loops_impl(modules);
}

}  // namespace sb
