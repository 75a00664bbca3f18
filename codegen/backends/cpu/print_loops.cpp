#include "backends/cpu/print_loops.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "backends/common/emit_common.h"
#include "backends/common/loop_leaves.h"
#include "support/diag.h"

namespace sb::loops {

namespace {

const char* scalar_c(DType t) {
  SB_ASSERT(t != DType::Unknown, "loop IR scalar of no type");
  return scalar(t).c_type;
}

std::string simd_c(DType t) { return std::string("sb_simd_") + dtype_name(t); }

// A GPU vector (gpu_vec_t) as its CUDA vector type (float4, double2, ...).
std::string cuda_vector_c(const Type& t) {
  const ScalarType& s = scalar(t.elem);
  const char* v = t.lanes == 4 ? s.cuda_vector4 : t.lanes == 2 ? s.cuda_vector2 : nullptr;
  SB_ASSERT(v, "no CUDA vector of " + std::to_string(t.lanes) + " " + s.name);
  return v;
}

std::string type_c(const Type& t) {
  switch (t.kind) {
    case TypeKind::Void:
      return "void";
    case TypeKind::Int:
      return "int64_t";
    case TypeKind::Bool:
      return "bool";
    case TypeKind::Float:
      return scalar_c(t.elem);
    case TypeKind::Vec:
      return t.lanes ? cuda_vector_c(t) : simd_c(t.elem);
    case TypeKind::Ptr:
      return std::string(t.mut ? "" : "const ") + scalar_c(t.elem) + "*";
  }
  return "?";
}

// C precedence levels (higher binds tighter).
enum Prec { kSel = 1, kOr, kAnd, kEq, kRel, kAdd, kMul, kUnary, kTop };

int prec(BinOp op) {
  switch (op) {
    case BinOp::Or:
      return kOr;
    case BinOp::And:
      return kAnd;
    case BinOp::Eq:
    case BinOp::Ne:
      return kEq;
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge:
      return kRel;
    case BinOp::Add:
    case BinOp::Sub:
      return kAdd;
    case BinOp::Mul:
    case BinOp::Div:
    case BinOp::Mod:
      return kMul;
    case BinOp::Min:
    case BinOp::Max:
      return kSel;
  }
  return kSel;
}

std::string paren(const std::string& s, int p, int parent) {
  return p < parent ? "(" + s + ")" : s;
}

// A level of this printer's scale (0 for none) in emit_common.h's, which the leaves take.
int common_prec(int p) {
  static const int kCommon[] = {0,        kPrecTernary, kPrecOr,  kPrecAnd,   kPrecEq,
                                kPrecRel, kPrecAdd,     kPrecMul, kPrecUnary, kPrecPrimary};
  SB_ASSERT(p >= 0 && p <= kTop, "C precedence level out of range");
  return kCommon[p];
}

// What the printer knows of the names in scope.
struct Scope {
  std::map<std::string, MemScope> buffers;  // allocated buffers (pointers are plain names)
  std::set<std::string> scalar_broadcasts;  // Lets of a Broadcast, kept as scalars
  LoopLeaves* leaves = nullptr;             // a kernel body's (print_c_block)
};

LoopLeaves& leaves_of(const Scope& s, const char* node) {
  SB_ASSERT(s.leaves, std::string("loop IR ") + node + " outside a kernel body (no leaves)");
  return *s.leaves;
}

class CExpr : public ExprFunctor<std::string(int)> {
 public:
  explicit CExpr(const Scope& s) : s_(s) {}
  std::string print(const Expr& e, int parent = 0) { return visit(e, parent); }

 protected:
  std::string visit_int_imm(const Expr& e, int) override {
    if (e.type.kind == TypeKind::Bool) return e.ival ? "true" : "false";
    return int_literal(e.ival);
  }
  std::string visit_float_imm(const Expr& e, int parent) override {
    const std::string s = float_literal(e.fval, e.type.elem);
    return s[0] == '-' ? paren(s, kUnary, parent) : s;
  }
  std::string visit_var(const Expr& e, int) override { return e.name; }
  std::string visit_binary(const Expr& e, int parent) override {
    if (e.op == BinOp::Min || e.op == BinOp::Max) {
      const std::string a = print(*e.args[0], kRel + 1), b = print(*e.args[1], kRel + 1);
      const std::string cmp = e.op == BinOp::Min ? " < " : " > ";
      return paren(a + cmp + b + " ? " + print(*e.args[0], kSel + 1) + " : " +
                       print(*e.args[1], kSel),
                   kSel, parent);
    }
    const int p = prec(e.op);
    return paren(print(*e.args[0], p) + " " + binop_name(e.op) + " " + print(*e.args[1], p + 1),
                 p, parent);
  }
  std::string visit_select(const Expr& e, int parent) override {
    return paren(print(*e.args[0], kOr) + " ? " + print(*e.args[1], kSel + 1) + " : " +
                     print(*e.args[2], kSel),
                 kSel, parent);
  }
  std::string visit_cast(const Expr& e, int parent) override {
    return paren("(" + type_c(e.type) + ")" + print(*e.args[0], kUnary), kUnary, parent);
  }
  std::string visit_load(const Expr& e, int parent) override {
    if (e.width == Width::Vector) {
      SB_ASSERT(e.args.size() == 1, "vector load of a multi-dimensional buffer");
      return "sb_simd_load_" + std::string(dtype_name(e.type.elem)) + "(" + e.name + " + " +
             print(*e.args[0], kAdd + 1) + ")";
    }
    std::string s = e.name;
    for (const ExprPtr& i : e.args) s += "[" + print(*i) + "]";
    (void)parent;
    return s;
  }
  std::string visit_broadcast(const Expr& e, int parent) override {
    const Expr& v = *e.args[0];
    if (v.kind == ExprKind::FloatImm && v.fval == 0 && !std::signbit(v.fval))
      return "(" + simd_c(e.type.elem) + "){}";
    // A scalar operand of a vector operation is broadcast by GCC; elsewhere add it to zeros.
    return paren("(" + simd_c(e.type.elem) + "){} + " + print(v, kAdd + 1), kAdd, parent);
  }
  std::string visit_fma(const Expr& e, int parent) override {
    return paren(operand(*e.args[0], kMul) + " * " + operand(*e.args[1], kMul + 1) + " + " +
                     operand(*e.args[2], kAdd + 1),
                 kAdd, parent);
  }
  std::string visit_call(const Expr& e, int) override {
    std::vector<std::string> args;
    for (const ExprPtr& a : e.args) args.push_back(print(*a));
    std::string s = e.name + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
    return s + ")";
  }
  std::string visit_lanes(const Expr& e, int) override {
    return std::string("(int64_t)(SB_SIMD_BYTES / sizeof(") + scalar_c(e.elem) + "))";
  }
  std::string visit_workers(const Expr&, int) override { return "sb_workers()"; }
  std::string visit_ptr_add(const Expr& e, int parent) override {
    return paren(print(*e.args[0], kAdd) + " + " + print(*e.args[1], kAdd + 1), kAdd, parent);
  }
  std::string visit_gpu(const Expr& e, int) override {
    return leaves_of(s_, "GPU index").gpu_index(e.gpu);
  }
  std::string visit_index_var(const Expr& e, int) override {
    return leaves_of(s_, "index variable").index_var(static_cast<int>(e.ival));
  }
  std::string visit_extent(const Expr& e, int parent) override {
    return leaves_of(s_, "extent").extent(static_cast<int>(e.ival), e.dim, common_prec(parent));
  }
  std::string visit_size(const Expr& e, int) override {
    return leaves_of(s_, "size").size(static_cast<int>(e.ival));
  }
  std::string visit_element(const Expr& e, int) override {
    if (e.type.kind == TypeKind::Vec)
      return leaves_of(s_, "vector element")
          .element_vector(static_cast<int>(e.ival), print(*e.args[0]), e.type.lanes);
    return leaves_of(s_, "element").element(static_cast<int>(e.ival), print(*e.args[0]));
  }
  std::string visit_spec(const Expr& e, int parent) override {
    LoopLeaves::Overrides overrides;
    for (const Override& o : e.overrides) overrides.emplace_back(o.expr, print(*o.value, kTop));
    return leaves_of(s_, "spec expression")
        .spec(static_cast<int>(e.ival), *e.spec, common_prec(parent), overrides);
  }
  std::string visit_identity(const Expr& e, int) override {
    return leaves_of(s_, "identity").identity(e.rop, e.elem);
  }
  std::string visit_warp(const Expr& e, int) override {
    return leaves_of(s_, "warp reduction").warp(e.warp, e.rop, e.type.elem, print(*e.args[0]));
  }
  // A CUDA vector's lanes are its members x, y, z, w; a GCC vector's are subscripts.
  std::string visit_lane(const Expr& e, int) override {
    static const char* const kMember[] = {"x", "y", "z", "w"};
    const Expr& v = *e.args[0];
    if (!v.type.lanes) return print(v, kTop) + "[" + std::to_string(e.ival) + "]";
    SB_ASSERT(e.ival < 4, "a CUDA vector lane past w");
    return print(v, kTop) + "." + kMember[e.ival];
  }
  std::string visit_make_vec(const Expr& e, int) override {
    std::string s = "make_" + cuda_vector_c(e.type) + "(";
    for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + print(*e.args[i]);
    return s + ")";
  }
  std::string visit_address(const Expr& e, int) override {
    return leaves_of(s_, "address").address(static_cast<int>(e.ival));
  }

 private:
  // An operand of vector arithmetic: a Broadcast is left to GCC's scalar broadcast.
  std::string operand(const Expr& e, int parent) {
    if (e.kind == ExprKind::Broadcast) return print(*e.args[0], parent);
    return print(e, parent);
  }
  const Scope& s_;
};

class CStmt : public StmtFunctor<void()> {
 public:
  CStmt(CodeWriter& w, const Module& m, const Function& f, LoopLeaves* leaves = nullptr,
        CCompiler compiler = CCompiler::Gcc)
      : w_(w), module_(m), f_(f), compiler_(compiler) {
    scope_.leaves = leaves;
  }
  void block(const Block& b) {
    for (const StmtPtr& s : b) visit(*s);
  }

 protected:
  void visit_for(const Stmt& s) override {
    const Expr& step = *s.exprs[2];
    const bool unit = step.kind == ExprKind::IntImm && step.ival == 1;
    switch (s.for_kind) {
      case ForKind::Serial:
        // A partial unroll is nvcc's pragma (GCC's unrolls on its own at -O3).
        if (s.unroll > 0 && compiler_ == CCompiler::Nvcc)
          w_.line("#pragma unroll " + std::to_string(s.unroll));
        break;
      case ForKind::Parallel:
        w_.line("#pragma omp parallel for schedule(static)" +
                (s.threads ? " num_threads(" + e(*s.threads) + ")" : std::string()));
        break;
      case ForKind::Vector:
        w_.line("#pragma omp simd");
        break;
      case ForKind::Unrolled: {
        std::set<int64_t> v = possible_values(*s.exprs[1], module_);
        SB_ASSERT(!v.empty(), "unrolled loop of a run-time extent: " + to_string(*s.exprs[1]));
        // nvcc knows no GCC pragma (warning 1675-D); its own unrolls fully.
        w_.line(compiler_ == CCompiler::Nvcc ? std::string("#pragma unroll")
                                             : "#pragma GCC unroll " + std::to_string(*v.rbegin()));
        break;
      }
    }
    const std::string v =
        s.index_var >= 0 ? leaves_of(scope_, "index variable").index_var(s.index_var) : s.name;
    w_.open("for (int64_t " + v + " = " + e(*s.exprs[0]) + "; " + v + " < " +
            e(*s.exprs[1], kRel + 1) + "; " + (unit ? "++" + v : v + " += " + e(*s.exprs[2])) +
            ") {");
    block(s.body);
    w_.close();
  }
  void visit_if(const Stmt& s) override {
    w_.open("if (" + e(*s.exprs[0]) + ") {");
    block(s.body);
    if (s.other.empty()) {
      w_.close();
      return;
    }
    w_.close_open("} else {");
    block(s.other);
    w_.close();
  }
  void visit_let(const Stmt& s) override {
    const Expr& v = *s.exprs[0];
    if (v.kind == ExprKind::Broadcast && !s.mut) {
      // Kept as a scalar: GCC broadcasts it where a vector operation uses it.
      scope_.scalar_broadcasts.insert(s.name);
      w_.line("const " + type_c(v.args[0]->type) + " " + s.name + " = " + e(*v.args[0]) + ";");
      return;
    }
    const bool top_const = !s.mut && s.type.kind != TypeKind::Ptr;
    const std::string name =
        s.index_var >= 0 ? leaves_of(scope_, "index variable").index_var(s.index_var) : s.name;
    w_.line((top_const ? "const " : "") + type_c(s.type) + " " + name + " = " + e(v) + ";");
  }
  void visit_assign(const Stmt& s) override {
    if (s.lane >= 0) {
      w_.line(CExpr(scope_).print(*lane(var(s.name, s.type), s.lane)) + " = " + e(*s.exprs[0]) +
              ";");
      return;
    }
    const std::string name =
        s.index_var >= 0 ? leaves_of(scope_, "index variable").index_var(s.index_var) : s.name;
    w_.line(update(name, *s.exprs[0]));
  }
  void visit_alloc(const Stmt& s) override {
    scope_.buffers[s.name] = s.scope;
    switch (s.scope) {
      case MemScope::Register:
      case MemScope::StackLocal: {
        std::string dims;
        for (const ExprPtr& d : s.exprs) dims += "[" + e(*d) + "]";
        w_.line(type_c(s.type) + " " + s.name + dims + ";");
        block(s.body);
        return;
      }
      case MemScope::HeapScratch:
        heap(s);
        return;
      case MemScope::Shared: {
        std::string count;
        for (const ExprPtr& d : s.exprs)
          count += (count.empty() ? "" : " * ") + e(*d, count.empty() ? kMul : kMul + 1);
        leaves_of(scope_, "shared array").shared_array(s.name, s.type.elem, count);
        block(s.body);
        return;
      }
    }
  }
  void visit_store(const Stmt& s) override {
    SB_ASSERT(!s.nontemporal, "non-temporal stores are not printed by the cpu loop printer");
    const Expr& value = *s.exprs[0];
    if (s.width == Width::Vector) {
      SB_ASSERT(s.exprs.size() == 2, "vector store to a multi-dimensional buffer");
      w_.line("sb_simd_store_" + std::string(dtype_name(s.type.elem)) + "(" + s.name + " + " +
              e(*s.exprs[1], kAdd + 1) + ", " + e(value) + ");");
      return;
    }
    std::string target = s.name;
    for (size_t i = 1; i < s.exprs.size(); ++i) target += "[" + e(*s.exprs[i]) + "]";
    w_.line(update(target, value));
  }
  void visit_evaluate(const Stmt& s) override {
    const Expr& c = *s.exprs[0];
    if (c.kind != ExprKind::Call) {
      w_.line("(void)(" + e(c) + ");");
      return;
    }
    std::vector<std::string> args;
    for (const ExprPtr& a : c.args) args.push_back(e(*a));
    w_.line(wrap_call(c.name, args, ";", 2 * w_.indent()));
  }
  void visit_return(const Stmt& s) override {
    w_.line(s.exprs.empty() ? "return;" : "return " + e(*s.exprs[0]) + ";");
  }
  void visit_comment(const Stmt& s) override { w_.line("// " + s.text); }
  void visit_barrier(const Stmt& s) override { leaves_of(scope_, "barrier").barrier(s.warp); }
  void visit_compute(const Stmt& s) override {
    LoopLeaves::Overrides overrides;
    for (const Override& o : s.overrides) overrides.emplace_back(o.expr, e(*o.value, kTop));
    leaves_of(scope_, "compute").compute(overrides);
  }
  void visit_while(const Stmt& s) override {
    w_.open("while (" + e(*s.exprs[0]) + ") {");
    block(s.body);
    w_.close();
  }
  void visit_atomic(const Stmt& s) override {
    leaves_of(scope_, "atomic")
        .atomic_fold(s.tensor, e(*s.exprs[1]), s.rop, s.type.elem, e(*s.exprs[0]));
  }
  void visit_fold(const Stmt& s) override {
    std::vector<ExprPtr> idx(s.exprs.begin() + 1, s.exprs.end());
    const std::string target = idx.empty() ? s.name : e(*load(s.name, s.type, idx));
    leaves_of(scope_, "fold").fold(target, s.rop, s.type.elem, e(*s.exprs[0]));
  }
  void visit_fold_range(const Stmt& s) override {
    leaves_of(scope_, "fold of a range")
        .fold_range(*s.spec, s.name, e(*s.exprs[0], kRel + 1), e(*s.exprs[1], kRel + 1));
  }
  void visit_scan_walk(const Stmt& s) override {
    leaves_of(scope_, "scan walk").scan_walk(*s.spec, s.name, e(*s.exprs[0], kRel + 1));
  }
  void visit_put(const Stmt& s) override {
    leaves_of(scope_, "put").put(s.tensor, e(*s.exprs[1]), e(*s.exprs[0]), s.type.lanes);
  }

 private:
  std::string e(const Expr& x, int parent = 0) { return CExpr(scope_).print(x, parent); }

  // `target = value;`, or `target += x;` where the value adds to the target itself.
  std::string update(const std::string& target, const Expr& v) {
    auto is_target = [&](const Expr& x) { return e(x) == target; };
    if (v.kind == ExprKind::Fma && is_target(*v.args[2])) {
      CExpr p(scope_);
      auto op = [&](const Expr& x, int pr) {
        return x.kind == ExprKind::Broadcast ? p.print(*x.args[0], pr) : p.print(x, pr);
      };
      return target + " += " + op(*v.args[0], kMul) + " * " + op(*v.args[1], kMul + 1) + ";";
    }
    if (v.kind == ExprKind::Binary && v.op == BinOp::Add && is_target(*v.args[0]))
      return target + " += " + e(*v.args[1]) + ";";
    return target + " = " + e(v) + ";";
  }

  // A heap scratch buffer: with `persistent`, a static pointer kept between calls and grown when
  // too small; otherwise allocated here and freed after the body.
  void heap(const Stmt& s) {
    const int64_t align = s.align > 0 ? s.align : 16;
    std::string count = "(size_t)(" + e(*s.exprs[0]) + ")";
    for (size_t i = 1; i < s.exprs.size(); ++i) count += " * (size_t)(" + e(*s.exprs[i]) + ")";
    const std::string T = type_c(s.type);
    const std::string a = std::to_string(align);
    auto bytes = [&](const std::string& n) {
      return "(" + n + " * sizeof(" + T + ") + " + std::to_string(align - 1) + ") / " + a + " * " +
             a;
    };
    SB_ASSERT(!s.other.empty(), "heap scratch without an on_fail path");
    if (s.persistent) {
      const std::string g = f_.name + "_" + s.name, cap = g + "_cap";
      w_.open("if (" + cap + " < " + count + ") {");
      w_.line("free(" + g + ");");
      w_.line(cap + " = " + count + ";");
      w_.line(g + " = (" + T + "*)aligned_alloc(" + a + ", " + bytes(cap) + ");");
      w_.open("if (!" + g + ") {");
      w_.line(cap + " = 0;");
      block(s.other);
      w_.close();
      w_.close();
      w_.line(T + "* const " + s.name + " = " + g + ";");
      block(s.body);
      return;
    }
    bool returns = false;
    for_each_stmt(s.body, [&](const Stmt& x) { returns = returns || x.kind == StmtKind::Return; });
    SB_ASSERT(!returns, "a return inside a freed heap scratch buffer's body");
    w_.line(T + "* const " + s.name + " = (" + T + "*)aligned_alloc(" + a + ", " +
            bytes(count) + ");");
    w_.open("if (!" + s.name + ") {");
    block(s.other);
    w_.close();
    block(s.body);
    w_.line("free(" + s.name + ");");
  }

  CodeWriter& w_;
  const Module& module_;
  const Function& f_;
  const CCompiler compiler_;
  Scope scope_;
};

void print_function(const Module& m, const Function& f, std::string& out) {
  // Globals of persistent scratch buffers, before the function.
  for_each_stmt(f.body, [&](const Stmt& s) {
    if (s.kind != StmtKind::Alloc || s.scope != MemScope::HeapScratch || !s.persistent) return;
    const std::string g = f.name + "_" + s.name, T = type_c(s.type);
    out += "// The " + s.name + " buffer of " + f.name +
           ", kept between calls (grown when too small, never\n// freed), one per thread: "
           "a batch of products calls it from several threads at\n// once, and reusing it saves "
           "page faults on every call.\n";
    out += "static thread_local " + T + "* " + g + " = NULL;\nstatic thread_local size_t " + g +
           "_cap = 0;\n\n";
  });
  for (const std::string& d : f.doc) out += "// " + d + "\n";
  std::vector<std::string> params;
  for (const Param& p : f.params) {
    std::string t = type_c(p.type);
    if (p.noalias) t += " __restrict";
    params.push_back(t + " " + p.name);
  }
  const std::string head =
      std::string(f.inline_hint ? "static inline " : "static ") + type_c(f.result) + " " + f.name;
  out += wrap_call(head, params, " {", 0) + "\n";
  CodeWriter w(1);
  CStmt st(w, m, f);
  st.block(f.body);
  out += w.str() + "}\n\n";
}

}  // namespace

std::string print_cpu_loops_impl(const std::vector<Module>& modules) {
  // What the modules need: the vector types of their elements, Workers().
  std::set<DType> vectors;
  bool workers = false;
  auto note_type = [&](const Type& t) {
    if (t.kind == TypeKind::Vec) vectors.insert(t.elem);
  };
  std::function<void(const Expr&)> note = [&](const Expr& e) {
    note_type(e.type);
    if (e.kind == ExprKind::Lanes) vectors.insert(e.elem);
    workers = workers || e.kind == ExprKind::Workers;
    for (const ExprPtr& a : e.args) note(*a);
  };
  for (const Module& m : modules) {
    for (const Constant& c : m.constants) note(*c.value);
    for (const Function& f : m.functions)
      for_each_stmt(f.body, [&](const Stmt& s) {
        note_type(s.type);
        for (const ExprPtr& x : s.exprs) note(*x);
        if (s.threads) note(*s.threads);
      });
  }

  std::string out;
  if (!vectors.empty()) {
    out +=
        "// Native vectors: the widest of AVX-512, AVX and SSE that the compiler targets. GCC "
        "vector\n// extensions leave the instruction choice to the compiler (-O3 -march=native); "
        "loads and\n// stores go through memcpy and assume no alignment.\n"
        "#if defined(__AVX512F__)\n#define SB_SIMD_BYTES 64\n#elif defined(__AVX__)\n"
        "#define SB_SIMD_BYTES 32\n#else\n#define SB_SIMD_BYTES 16\n#endif\n";
    for (DType t : vectors) {
      const std::string v = simd_c(t), T = scalar_c(t), s = dtype_name(t);
      out += "typedef " + T + " " + v + " __attribute__((vector_size(SB_SIMD_BYTES)));\n";
      out += "static inline " + v + " sb_simd_load_" + s + "(const " + T + "* p) {\n  " + v +
             " v;\n  memcpy(&v, p, sizeof v);\n  return v;\n}\n";
      out += "static inline void sb_simd_store_" + s + "(" + T + "* p, " + v +
             " v) { memcpy(p, &v, sizeof v); }\n";
    }
    out += "\n";
  }
  if (workers)
    out +=
        "// The worker threads a parallel region would get here: 1 without OpenMP, or inside a\n"
        "// region when nested ones are inactive.\n"
        "static inline int64_t sb_workers(void) {\n#ifdef _OPENMP\n  return omp_get_level() >= "
        "omp_get_max_active_levels() ? 1 : omp_get_max_threads();\n#else\n  return 1;\n"
        "#endif\n}\n\n";
  for (const Module& m : modules) {
    for (const std::string& d : m.doc) out += "// " + d + "\n";
    Scope none;
    for (const Constant& c : m.constants) {
      if (!c.doc.empty()) out += "// " + c.name + ": " + c.doc + ".\n";
      out += "static constexpr int64_t " + c.name + " = " + CExpr(none).print(*c.value) + ";\n";
    }
    out += "\n";
    for (const Function& f : m.functions) print_function(m, f, out);
  }
  return out;
}

void print_c_block_impl(const Block& b, LoopLeaves& leaves, CodeWriter& w, CCompiler compiler) {
  const Module none;
  Function body;
  body.name = "sb_kernel";
  CStmt(w, none, body, &leaves, compiler).block(b);
}

}  // namespace sb::loops

namespace sb {

std::string print_cpu_loops(const std::vector<loops::Module>& modules) {
  return loops::print_cpu_loops_impl(modules);
}

void print_c_block(const loops::Block& b, LoopLeaves& leaves, CodeWriter& w, CCompiler compiler) {
  loops::print_c_block_impl(b, leaves, w, compiler);
}

}  // namespace sb
