#include "lower/loop_ir.h"

#include <algorithm>
#include <sstream>

namespace sb::loops {

bool operator==(const Type& a, const Type& b) {
  return a.kind == b.kind && a.elem == b.elem && a.mut == b.mut && a.lanes == b.lanes;
}

std::string to_string(const Type& t) {
  switch (t.kind) {
    case TypeKind::Void:
      return "void";
    case TypeKind::Int:
      return "int";
    case TypeKind::Bool:
      return "bool";
    case TypeKind::Float:
      return dtype_name(t.elem);
    case TypeKind::Vec:
      return std::string("vec<") + dtype_name(t.elem) +
             (t.lanes ? " x " + std::to_string(t.lanes) : std::string()) + ">";
    case TypeKind::Ptr:
      return std::string("ptr<") + (t.mut ? "" : "const ") + dtype_name(t.elem) + ">";
  }
  return "?";
}

const char* binop_name(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::Mod:
      return "%";
    case BinOp::Min:
      return "min";
    case BinOp::Max:
      return "max";
    case BinOp::Lt:
      return "<";
    case BinOp::Le:
      return "<=";
    case BinOp::Gt:
      return ">";
    case BinOp::Ge:
      return ">=";
    case BinOp::Eq:
      return "==";
    case BinOp::Ne:
      return "!=";
    case BinOp::And:
      return "&&";
    case BinOp::Or:
      return "||";
  }
  return "?";
}

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial:
      return "serial";
    case ForKind::Parallel:
      return "parallel";
    case ForKind::Vector:
      return "vector";
    case ForKind::Unrolled:
      return "unrolled";
  }
  return "?";
}

const char* mem_scope_name(MemScope s) {
  switch (s) {
    case MemScope::Register:
      return "register";
    case MemScope::StackLocal:
      return "stack_local";
    case MemScope::HeapScratch:
      return "heap_scratch";
    case MemScope::Shared:
      return "shared";
  }
  return "?";
}

const char* gpu_index_name(GpuIndex g) {
  switch (g) {
    case GpuIndex::ThreadX:
      return "thread_idx.x";
    case GpuIndex::ThreadY:
      return "thread_idx.y";
    case GpuIndex::ThreadZ:
      return "thread_idx.z";
    case GpuIndex::BlockX:
      return "block_idx.x";
    case GpuIndex::BlockY:
      return "block_idx.y";
    case GpuIndex::BlockZ:
      return "block_idx.z";
    case GpuIndex::BlockDimX:
      return "block_dim.x";
    case GpuIndex::GridDimX:
      return "grid_dim.x";
    case GpuIndex::GridDimZ:
      return "grid_dim.z";
  }
  return "?";
}

// ---- Builders --------------------------------------------------------------------------------

namespace {

ExprPtr make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

bool is_compare(BinOp op) {
  return op == BinOp::Lt || op == BinOp::Le || op == BinOp::Gt || op == BinOp::Ge ||
         op == BinOp::Eq || op == BinOp::Ne || op == BinOp::And || op == BinOp::Or;
}

}  // namespace

ExprPtr imm(int64_t v) {
  Expr e;
  e.kind = ExprKind::IntImm;
  e.type = int_t();
  e.ival = v;
  return make(std::move(e));
}

ExprPtr bool_imm(bool v) {
  Expr e;
  e.kind = ExprKind::IntImm;
  e.type = bool_t();
  e.ival = v ? 1 : 0;
  return make(std::move(e));
}

ExprPtr fimm(double v, DType t) {
  Expr e;
  e.kind = ExprKind::FloatImm;
  e.type = float_t(t);
  e.fval = v;
  return make(std::move(e));
}

ExprPtr var(const std::string& name, Type t) {
  Expr e;
  e.kind = ExprKind::Var;
  e.type = t;
  e.name = name;
  return make(std::move(e));
}

ExprPtr binary(BinOp op, ExprPtr a, ExprPtr b) {
  SB_ASSERT(a && b, "loop IR binary without operands");
  Expr e;
  e.kind = ExprKind::Binary;
  e.op = op;
  if (is_compare(op)) {
    e.type = bool_t();
  } else {
    // Vector op scalar is a vector (the scalar broadcast); otherwise both sides agree.
    e.type = a->type.kind == TypeKind::Vec ? a->type : b->type;
    SB_ASSERT(a->type.kind == TypeKind::Vec || b->type.kind == TypeKind::Vec ||
                  a->type == b->type,
              "loop IR binary of " + to_string(a->type) + " and " + to_string(b->type));
  }
  e.args = {std::move(a), std::move(b)};
  return make(std::move(e));
}

ExprPtr add(ExprPtr a, ExprPtr b) { return binary(BinOp::Add, std::move(a), std::move(b)); }
ExprPtr sub(ExprPtr a, ExprPtr b) { return binary(BinOp::Sub, std::move(a), std::move(b)); }
ExprPtr mul(ExprPtr a, ExprPtr b) { return binary(BinOp::Mul, std::move(a), std::move(b)); }
ExprPtr div(ExprPtr a, ExprPtr b) { return binary(BinOp::Div, std::move(a), std::move(b)); }
ExprPtr mod(ExprPtr a, ExprPtr b) { return binary(BinOp::Mod, std::move(a), std::move(b)); }
ExprPtr min(ExprPtr a, ExprPtr b) { return binary(BinOp::Min, std::move(a), std::move(b)); }
ExprPtr max(ExprPtr a, ExprPtr b) { return binary(BinOp::Max, std::move(a), std::move(b)); }

ExprPtr select(ExprPtr c, ExprPtr a, ExprPtr b) {
  SB_ASSERT(c->type.kind == TypeKind::Bool && a->type == b->type, "loop IR select types");
  Expr e;
  e.kind = ExprKind::Select;
  e.type = a->type;
  e.args = {std::move(c), std::move(a), std::move(b)};
  return make(std::move(e));
}

ExprPtr cast(Type t, ExprPtr v) {
  Expr e;
  e.kind = ExprKind::Cast;
  e.type = t;
  e.args = {std::move(v)};
  return make(std::move(e));
}

ExprPtr load(const std::string& buf, Type elem, std::vector<ExprPtr> index, Width w) {
  Expr e;
  e.kind = ExprKind::Load;
  e.name = buf;
  e.width = w;
  e.type = w == Width::Vector ? vec_t(elem.elem) : elem;
  e.args = std::move(index);
  return make(std::move(e));
}

ExprPtr broadcast(ExprPtr scalar) {
  SB_ASSERT(scalar->type.kind == TypeKind::Float, "loop IR broadcast of a non-float");
  Expr e;
  e.kind = ExprKind::Broadcast;
  e.type = vec_t(scalar->type.elem);
  e.args = {std::move(scalar)};
  return make(std::move(e));
}

ExprPtr fma(ExprPtr a, ExprPtr b, ExprPtr c) {
  Expr e;
  e.kind = ExprKind::Fma;
  e.type = c->type;
  e.args = {std::move(a), std::move(b), std::move(c)};
  return make(std::move(e));
}

ExprPtr call(const std::string& fn, Type result, std::vector<ExprPtr> args) {
  Expr e;
  e.kind = ExprKind::Call;
  e.name = fn;
  e.type = result;
  e.args = std::move(args);
  return make(std::move(e));
}

ExprPtr lanes(DType t) {
  Expr e;
  e.kind = ExprKind::Lanes;
  e.type = int_t();
  e.elem = t;
  return make(std::move(e));
}

ExprPtr workers() {
  Expr e;
  e.kind = ExprKind::Workers;
  e.type = int_t();
  return make(std::move(e));
}

ExprPtr ptr_add(ExprPtr p, ExprPtr offset) {
  SB_ASSERT(p->type.kind == TypeKind::Ptr, "loop IR ptr_add of a non-pointer");
  Expr e;
  e.kind = ExprKind::PtrAdd;
  e.type = p->type;
  e.args = {std::move(p), std::move(offset)};
  return make(std::move(e));
}

ExprPtr gpu(GpuIndex g) {
  Expr e;
  e.kind = ExprKind::Gpu;
  e.type = int_t();
  e.gpu = g;
  return make(std::move(e));
}

ExprPtr index_var(int v, const std::string& text) {
  SB_ASSERT(v >= 0, "loop IR index variable of a negative index");
  Expr e;
  e.kind = ExprKind::IndexVar;
  e.type = int_t();
  e.ival = v;
  e.name = text;
  return make(std::move(e));
}

ExprPtr extent(int tensor, int dim, const std::string& text) {
  SB_ASSERT(tensor >= 0 && dim >= 0, "loop IR extent of a negative tensor or dimension");
  Expr e;
  e.kind = ExprKind::Extent;
  e.type = int_t();
  e.ival = tensor;
  e.dim = dim;
  e.name = text;
  return make(std::move(e));
}

ExprPtr size(int s, const std::string& text) {
  SB_ASSERT(s >= 0, "loop IR size of a negative index");
  Expr e;
  e.kind = ExprKind::Size;
  e.type = int_t();
  e.ival = s;
  e.name = text;
  return make(std::move(e));
}

ExprPtr element(int tensor, Type value, ExprPtr flat, const std::string& text) {
  SB_ASSERT(tensor >= 0 && flat && flat->type.kind == TypeKind::Int,
            "loop IR element of a spec tensor at an integer index");
  Expr e;
  e.kind = ExprKind::Element;
  e.type = value;
  e.ival = tensor;
  e.name = text;
  e.args = {std::move(flat)};
  return make(std::move(e));
}

ExprPtr spec_expr(const sb::Expr& x, Type t, const std::string& text,
                  std::vector<Override> overrides) {
  SB_ASSERT(t.kind == TypeKind::Int || t.kind == TypeKind::Float || t.kind == TypeKind::Bool,
            "loop IR spec leaf of a non-scalar type");
  Expr e;
  for (const Override& o : overrides)
    SB_ASSERT(o.expr && o.value, "loop IR spec leaf with an empty override");
  e.kind = ExprKind::Spec;
  e.type = t;
  e.ival = -1;  // the kernel's statement
  e.spec = &x;
  e.name = text;
  e.overrides = std::move(overrides);
  return make(std::move(e));
}

ExprPtr spec_leaf(const Spec& spec, const Statement& st, const sb::Expr& e, Type t,
                  std::vector<Override> overrides) {
  return spec_expr(e, t, to_string(e, spec, &st), std::move(overrides));
}

ExprPtr stmt_leaf(const Spec& spec, size_t k, const sb::Expr& e, Type t,
                  std::vector<Override> overrides) {
  SB_ASSERT(k < spec.stmts.size(), "loop IR spec leaf of a statement past the spec's");
  Expr x = *spec_expr(e, t, to_string(e, spec, &spec.stmts[k]), std::move(overrides));
  x.ival = static_cast<int64_t>(k);
  return std::make_shared<const Expr>(std::move(x));
}

ExprPtr identity(ReduceOp op, DType elem) {
  SB_ASSERT(op != ReduceOp::ArgMax && op != ReduceOp::ArgMin,
            "loop IR identity of an arg-reduction");
  Expr e;
  e.kind = ExprKind::Identity;
  e.type = float_t(elem);
  e.rop = op;
  e.elem = elem;
  return make(std::move(e));
}

ExprPtr warp(WarpOp w, ReduceOp op, ExprPtr value) {
  SB_ASSERT(value && op != ReduceOp::ArgMax && op != ReduceOp::ArgMin,
            "loop IR warp reduction of a value, not an arg-reduction");
  Expr e;
  e.kind = ExprKind::Warp;
  e.type = value->type;
  e.rop = op;
  e.warp = w;
  e.args = {std::move(value)};
  return make(std::move(e));
}

ExprPtr lane(ExprPtr v, int q) {
  SB_ASSERT(v && v->type.kind == TypeKind::Vec && q >= 0 && (!v->type.lanes || q < v->type.lanes),
            "loop IR lane of a vector, within its lanes");
  Expr e;
  e.kind = ExprKind::Lane;
  e.type = float_t(v->type.elem);
  e.ival = q;
  e.args = {std::move(v)};
  return make(std::move(e));
}

ExprPtr make_vec(std::vector<ExprPtr> lanes) {
  SB_ASSERT(!lanes.empty() && lanes[0], "loop IR vector of no lanes");
  const DType t = lanes[0]->type.elem;
  for (const ExprPtr& l : lanes)
    SB_ASSERT(l && l->type.kind == TypeKind::Float && l->type.elem == t,
              "loop IR vector of lanes of one scalar type");
  Expr e;
  e.kind = ExprKind::MakeVec;
  e.type = gpu_vec_t(t, static_cast<int>(lanes.size()));
  e.args = std::move(lanes);
  return make(std::move(e));
}

ExprPtr address(int tensor, const std::string& text) {
  SB_ASSERT(tensor >= 0, "loop IR address of a spec tensor");
  Expr e;
  e.kind = ExprKind::Address;
  e.type = int_t();
  e.ival = tensor;
  e.name = text;
  return make(std::move(e));
}

ExprPtr round_up(ExprPtr a, ExprPtr b) {
  return mul(div(sub(add(std::move(a), b), imm(1)), b), b);
}

bool equal(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || !(a.type == b.type) || a.ival != b.ival || a.fval != b.fval ||
      a.name != b.name || a.op != b.op || a.width != b.width || a.elem != b.elem ||
      a.gpu != b.gpu || a.dim != b.dim || a.spec != b.spec || a.rop != b.rop || a.warp != b.warp ||
      a.args.size() != b.args.size() || a.overrides.size() != b.overrides.size())
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!equal(*a.args[i], *b.args[i])) return false;
  for (size_t i = 0; i < a.overrides.size(); ++i)
    if (a.overrides[i].expr != b.overrides[i].expr ||
        !equal(*a.overrides[i].value, *b.overrides[i].value))
      return false;
  return true;
}

namespace {

StmtPtr make(Stmt s) { return std::make_shared<const Stmt>(std::move(s)); }

}  // namespace

StmtPtr for_loop(const std::string& v, ExprPtr min, ExprPtr end, ExprPtr step, ForKind k,
                 Block body, ExprPtr threads, int64_t unroll) {
  SB_ASSERT(unroll == 0 || (k == ForKind::Serial && unroll > 1),
            "loop IR unroll hint on a loop that is not serial");
  Stmt s;
  s.kind = StmtKind::For;
  s.name = v;
  s.for_kind = k;
  s.unroll = unroll;
  s.exprs = {std::move(min), std::move(end), std::move(step)};
  s.threads = std::move(threads);
  s.body = std::move(body);
  return make(std::move(s));
}

StmtPtr if_then(ExprPtr cond, Block then, Block otherwise) {
  SB_ASSERT(cond->type.kind == TypeKind::Bool, "loop IR if on a non-bool");
  Stmt s;
  s.kind = StmtKind::If;
  s.exprs = {std::move(cond)};
  s.body = std::move(then);
  s.other = std::move(otherwise);
  return make(std::move(s));
}

StmtPtr let(const std::string& v, ExprPtr value, bool mut) {
  Stmt s;
  s.kind = StmtKind::Let;
  s.name = v;
  s.type = value->type;
  s.mut = mut;
  s.exprs = {std::move(value)};
  return make(std::move(s));
}

StmtPtr assign(const std::string& v, ExprPtr value) {
  Stmt s;
  s.kind = StmtKind::Assign;
  s.name = v;
  s.type = value->type;
  s.exprs = {std::move(value)};
  return make(std::move(s));
}

StmtPtr alloc(const std::string& buf, Type elem, std::vector<ExprPtr> dims, MemScope scope,
              Block body, int64_t align, bool persistent, Block on_fail) {
  Stmt s;
  s.kind = StmtKind::Alloc;
  s.name = buf;
  s.type = elem;
  s.scope = scope;
  s.align = align;
  s.persistent = persistent;
  s.exprs = std::move(dims);
  s.body = std::move(body);
  s.other = std::move(on_fail);
  return make(std::move(s));
}

StmtPtr store(const std::string& buf, Type elem, std::vector<ExprPtr> index, ExprPtr value,
              Width w, bool nontemporal) {
  Stmt s;
  s.kind = StmtKind::Store;
  s.name = buf;
  s.type = elem;
  s.width = w;
  s.nontemporal = nontemporal;
  s.exprs.push_back(std::move(value));
  for (ExprPtr& i : index) s.exprs.push_back(std::move(i));
  return make(std::move(s));
}

StmtPtr evaluate(ExprPtr c) {
  Stmt s;
  s.kind = StmtKind::Evaluate;
  s.exprs = {std::move(c)};
  return make(std::move(s));
}

StmtPtr ret(ExprPtr value) {
  Stmt s;
  s.kind = StmtKind::Return;
  if (value) s.exprs = {std::move(value)};
  return make(std::move(s));
}

StmtPtr comment(const std::string& text) {
  Stmt s;
  s.kind = StmtKind::Comment;
  s.text = text;
  return make(std::move(s));
}

StmtPtr barrier(bool warp) {
  Stmt s;
  s.kind = StmtKind::Barrier;
  s.warp = warp;
  return make(std::move(s));
}

StmtPtr let_index(int v, const std::string& text, ExprPtr value, bool mut) {
  SB_ASSERT(v >= 0 && value && value->type.kind == TypeKind::Int,
            "loop IR let of an index variable: an integer value");
  Stmt s;
  s.kind = StmtKind::Let;
  s.name = text;
  s.index_var = v;
  s.mut = mut;
  s.type = int_t();
  s.exprs = {std::move(value)};
  return make(std::move(s));
}

StmtPtr assign_index(int v, const std::string& text, ExprPtr value) {
  SB_ASSERT(v >= 0 && value && value->type.kind == TypeKind::Int,
            "loop IR assignment of an index variable: an integer value");
  Stmt s;
  s.kind = StmtKind::Assign;
  s.name = text;
  s.index_var = v;
  s.type = int_t();
  s.exprs = {std::move(value)};
  return make(std::move(s));
}

StmtPtr assign_lane(const std::string& v, Type t, int q, ExprPtr value) {
  SB_ASSERT(t.kind == TypeKind::Vec && t.lanes > 0 && q >= 0 && q < t.lanes && value &&
                value->type.kind == TypeKind::Float && value->type.elem == t.elem,
            "loop IR assignment of a GPU vector's lane: a scalar of its type, within its lanes");
  Stmt s;
  s.kind = StmtKind::Assign;
  s.name = v;
  s.type = t;
  s.lane = q;
  s.exprs = {std::move(value)};
  return make(std::move(s));
}

StmtPtr put(int tensor, const std::string& text, ExprPtr flat, ExprPtr value) {
  SB_ASSERT(tensor >= 0 && flat && value && flat->type.kind == TypeKind::Int &&
                (value->type.kind == TypeKind::Float ||
                 (value->type.kind == TypeKind::Vec && value->type.lanes > 0)),
            "loop IR put of a scalar or a GPU vector into a spec tensor at an integer index");
  Stmt s;
  s.kind = StmtKind::Put;
  s.name = text;
  s.tensor = tensor;
  s.type = value->type;
  s.exprs = {std::move(value), std::move(flat)};
  return make(std::move(s));
}

StmtPtr compute(std::vector<Override> overrides) {
  Stmt s;
  s.kind = StmtKind::Compute;
  for (const Override& o : overrides)
    SB_ASSERT(o.expr && o.value, "loop IR compute with an empty override");
  s.overrides = std::move(overrides);
  return make(std::move(s));
}

StmtPtr fold(const std::string& v, ReduceOp op, Type t, ExprPtr value) {
  SB_ASSERT(value && op != ReduceOp::ArgMax && op != ReduceOp::ArgMin,
            "loop IR fold of a value, not an arg-reduction");
  Stmt s;
  s.kind = StmtKind::Fold;
  s.name = v;
  s.rop = op;
  s.type = t;
  s.exprs = {std::move(value)};
  return make(std::move(s));
}

StmtPtr fold_at(const std::string& buf, std::vector<ExprPtr> index, ReduceOp op, Type t,
                ExprPtr value) {
  SB_ASSERT(!index.empty(), "loop IR fold into a buffer's element without its index");
  Stmt s = *fold(buf, op, t, std::move(value));
  for (ExprPtr& i : index) s.exprs.push_back(std::move(i));
  return make(std::move(s));
}

StmtPtr while_loop(ExprPtr cond, Block body) {
  SB_ASSERT(cond && cond->type.kind == TypeKind::Bool, "loop IR while of a condition");
  Stmt s;
  s.kind = StmtKind::While;
  s.exprs = {std::move(cond)};
  s.body = std::move(body);
  return make(std::move(s));
}

StmtPtr atomic_fold(int tensor, ExprPtr index, ReduceOp op, Type t, ExprPtr value) {
  SB_ASSERT(tensor >= 0 && index && value && op != ReduceOp::ArgMax && op != ReduceOp::ArgMin,
            "loop IR atomic fold into a spec tensor");
  Stmt s;
  s.kind = StmtKind::Atomic;
  s.tensor = tensor;
  s.rop = op;
  s.type = t;
  s.exprs = {std::move(value), std::move(index)};
  return make(std::move(s));
}

StmtPtr fold_range(const std::string& acc, const sb::Expr& red, const std::string& text, ExprPtr lo,
                   ExprPtr hi) {
  SB_ASSERT(lo && hi && lo->type.kind == TypeKind::Int && hi->type.kind == TypeKind::Int,
            "loop IR fold of a range: integer bounds");
  Stmt s;
  s.kind = StmtKind::FoldRange;
  s.name = acc;
  s.spec = &red;
  s.text = text;
  s.exprs = {std::move(lo), std::move(hi)};
  return make(std::move(s));
}

StmtPtr scan_walk(const std::string& acc, const sb::Expr& red, const std::string& text,
                  ExprPtr end) {
  SB_ASSERT(end && end->type.kind == TypeKind::Int, "loop IR scan walk: an integer end");
  Stmt s;
  s.kind = StmtKind::ScanWalk;
  s.name = acc;
  s.spec = &red;
  s.text = text;
  s.exprs = {std::move(end)};
  return make(std::move(s));
}

StmtPtr for_index(int v, const std::string& text, ExprPtr min, ExprPtr end, ExprPtr step,
                  Block body) {
  SB_ASSERT(v >= 0, "loop IR loop over a negative index variable");
  StmtPtr f = for_loop(text, std::move(min), std::move(end), std::move(step), ForKind::Serial,
                       std::move(body));
  Stmt s = *f;
  s.index_var = v;
  return make(std::move(s));
}

void append(Block& to, Block more) {
  for (StmtPtr& x : more) to.push_back(std::move(x));
}

Block joined(std::initializer_list<const Block*> parts) {
  Block b;
  for (const Block* p : parts) append(b, *p);
  return b;
}

std::set<int64_t> possible_values(const Expr& e, const Module& m) {
  if (e.kind == ExprKind::IntImm) return {e.ival};
  if (e.kind == ExprKind::Select) {
    std::set<int64_t> a = possible_values(*e.args[1], m), b = possible_values(*e.args[2], m);
    if (a.empty() || b.empty()) return {};
    a.insert(b.begin(), b.end());
    return a;
  }
  if (e.kind == ExprKind::Var)
    for (const Constant& c : m.constants)
      if (c.name == e.name) return possible_values(*c.value, m);
  return {};  // anything else is not known when printing
}

void for_each_stmt(const Block& b, const std::function<void(const Stmt&)>& f) {
  for (const StmtPtr& s : b) {
    f(*s);
    for_each_stmt(s->body, f);
    for_each_stmt(s->other, f);
  }
}

// ---- The dump printer ------------------------------------------------------------------------

namespace {

// " with <text> = <value>, ..." for the overrides of a Spec leaf or a Compute; empty for none.
std::string overrides_text(const std::vector<Override>& os);

class ExprDump : public ExprFunctor<void(std::ostream&)> {
 protected:
  void visit_int_imm(const Expr& e, std::ostream& o) override {
    if (e.type.kind == TypeKind::Bool)
      o << (e.ival ? "true" : "false");
    else
      o << e.ival;
  }
  void visit_float_imm(const Expr& e, std::ostream& o) override {
    std::ostringstream s;
    s.precision(17);
    s << e.fval;
    o << s.str() << ":" << dtype_name(e.type.elem);
  }
  void visit_var(const Expr& e, std::ostream& o) override { o << e.name; }
  void visit_binary(const Expr& e, std::ostream& o) override {
    if (e.op == BinOp::Min || e.op == BinOp::Max) {
      o << binop_name(e.op) << "(";
      visit(*e.args[0], o);
      o << ", ";
      visit(*e.args[1], o);
      o << ")";
      return;
    }
    o << "(";
    visit(*e.args[0], o);
    o << " " << binop_name(e.op) << " ";
    visit(*e.args[1], o);
    o << ")";
  }
  void visit_select(const Expr& e, std::ostream& o) override { fn("select", e, o); }
  void visit_cast(const Expr& e, std::ostream& o) override {
    fn(std::string("cast<") + to_string(e.type) + ">", e, o);
  }
  void visit_load(const Expr& e, std::ostream& o) override {
    o << e.name;
    for (const ExprPtr& a : e.args) {
      o << "[";
      visit(*a, o);
      o << "]";
    }
    if (e.width == Width::Vector) o << ":vec";
  }
  void visit_broadcast(const Expr& e, std::ostream& o) override { fn("broadcast", e, o); }
  void visit_fma(const Expr& e, std::ostream& o) override { fn("fma", e, o); }
  void visit_call(const Expr& e, std::ostream& o) override { fn(e.name, e, o); }
  void visit_lanes(const Expr& e, std::ostream& o) override {
    o << "lanes<" << dtype_name(e.elem) << ">()";
  }
  void visit_workers(const Expr&, std::ostream& o) override { o << "workers()"; }
  void visit_ptr_add(const Expr& e, std::ostream& o) override { fn("ptr_add", e, o); }
  void visit_gpu(const Expr& e, std::ostream& o) override { o << gpu_index_name(e.gpu); }
  void visit_index_var(const Expr& e, std::ostream& o) override { o << "index<" << e.name << ">"; }
  void visit_extent(const Expr& e, std::ostream& o) override {
    o << "extent<" << e.name << ", " << e.dim << ">";
  }
  void visit_spec(const Expr& e, std::ostream& o) override {
    o << "spec<" << (e.ival >= 0 ? "s" + std::to_string(e.ival) + ": " : "") << e.name
      << overrides_text(e.overrides) << ">";
  }
  void visit_size(const Expr& e, std::ostream& o) override { o << "size<" << e.name << ">"; }
  void visit_element(const Expr& e, std::ostream& o) override {
    o << "element<" << e.name << ">[";
    visit(*e.args[0], o);
    o << "]";
    if (e.type.kind == TypeKind::Vec) o << ":" << to_string(e.type);
  }
  void visit_identity(const Expr& e, std::ostream& o) override {
    o << "identity<" << reduce_name(e.rop) << ", " << dtype_name(e.elem) << ">";
  }
  void visit_warp(const Expr& e, std::ostream& o) override {
    fn(std::string(e.warp == WarpOp::Scan ? "warp_scan<" : "warp_all<") + reduce_name(e.rop) + ">",
       e, o);
  }
  void visit_lane(const Expr& e, std::ostream& o) override {
    visit(*e.args[0], o);
    o << ".lane<" << e.ival << ">";
  }
  void visit_make_vec(const Expr& e, std::ostream& o) override {
    fn("make<" + to_string(e.type) + ">", e, o);
  }
  void visit_address(const Expr& e, std::ostream& o) override { o << "address<" << e.name << ">"; }

 private:
  void fn(const std::string& name, const Expr& e, std::ostream& o) {
    o << name << "(";
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (i) o << ", ";
      visit(*e.args[i], o);
    }
    o << ")";
  }
};

std::string text(const Expr& e) {
  std::ostringstream o;
  ExprDump().visit(e, o);
  return o.str();
}

// Each replacement once: the nodes of one index variable, each replaced alike, show as one.
std::string overrides_text(const std::vector<Override>& os) {
  std::vector<std::string> seen;
  std::string out;
  for (const Override& o : os) {
    const std::string one = o.text + " = " + text(*o.value);
    if (std::find(seen.begin(), seen.end(), one) != seen.end()) continue;
    out += (seen.empty() ? " with " : ", ") + one;
    seen.push_back(one);
  }
  return out;
}

class StmtDump : public StmtFunctor<void(int)> {
 public:
  explicit StmtDump(std::ostream& o) : o_(o) {}
  void block(const Block& b, int ind) {
    for (const StmtPtr& s : b) visit(*s, ind);
  }

 protected:
  void visit_for(const Stmt& s, int ind) override {
    line(ind) << "for " << (s.index_var >= 0 ? "index<" + s.name + ">" : s.name) << " in ["
              << text(*s.exprs[0]) << ", " << text(*s.exprs[1]) << ") step " << text(*s.exprs[2])
              << " " << for_kind_name(s.for_kind);
    if (s.threads) o_ << " threads " << text(*s.threads);
    if (s.unroll) o_ << " unroll " << s.unroll;
    o_ << " {\n";
    block(s.body, ind + 1);
    line(ind) << "}\n";
  }
  void visit_if(const Stmt& s, int ind) override {
    line(ind) << "if " << text(*s.exprs[0]) << " {\n";
    block(s.body, ind + 1);
    if (!s.other.empty()) {
      line(ind) << "} else {\n";
      block(s.other, ind + 1);
    }
    line(ind) << "}\n";
  }
  void visit_let(const Stmt& s, int ind) override {
    line(ind) << (s.mut ? "var " : "let ") << (s.index_var >= 0 ? "index<" + s.name + ">" : s.name)
              << ": " << to_string(s.type) << " = " << text(*s.exprs[0]) << "\n";
  }
  void visit_assign(const Stmt& s, int ind) override {
    line(ind) << (s.index_var >= 0 ? "index<" + s.name + ">" : s.name)
              << (s.lane >= 0 ? ".lane<" + std::to_string(s.lane) + ">" : "") << " = "
              << text(*s.exprs[0]) << "\n";
  }
  void visit_put(const Stmt& s, int ind) override {
    line(ind) << "element<" << s.name << ">[" << text(*s.exprs[1]) << "]";
    if (s.type.kind == TypeKind::Vec) o_ << ":" << to_string(s.type);
    o_ << " = " << text(*s.exprs[0]) << "\n";
  }
  void visit_alloc(const Stmt& s, int ind) override {
    line(ind) << "alloc " << s.name << ": " << to_string(s.type);
    for (const ExprPtr& d : s.exprs) o_ << "[" << text(*d) << "]";
    o_ << " " << mem_scope_name(s.scope);
    if (s.align) o_ << " align " << s.align;
    if (s.persistent) o_ << " persistent";
    o_ << " {\n";
    block(s.body, ind + 1);
    if (!s.other.empty()) {
      line(ind) << "} on_fail {\n";
      block(s.other, ind + 1);
    }
    line(ind) << "}\n";
  }
  void visit_store(const Stmt& s, int ind) override {
    line(ind) << s.name;
    for (size_t i = 1; i < s.exprs.size(); ++i) o_ << "[" << text(*s.exprs[i]) << "]";
    if (s.width == Width::Vector) o_ << ":vec";
    o_ << " = " << text(*s.exprs[0]) << (s.nontemporal ? "  (non-temporal)" : "") << "\n";
  }
  void visit_evaluate(const Stmt& s, int ind) override {
    line(ind) << text(*s.exprs[0]) << "\n";
  }
  void visit_return(const Stmt& s, int ind) override {
    line(ind) << "return" << (s.exprs.empty() ? "" : " " + text(*s.exprs[0])) << "\n";
  }
  void visit_comment(const Stmt& s, int ind) override { line(ind) << "// " << s.text << "\n"; }
  void visit_barrier(const Stmt& s, int ind) override {
    line(ind) << (s.warp ? "barrier warp\n" : "barrier\n");
  }
  void visit_while(const Stmt& s, int ind) override {
    line(ind) << "while " << text(*s.exprs[0]) << " {\n";
    block(s.body, ind + 1);
    line(ind) << "}\n";
  }
  void visit_atomic(const Stmt& s, int ind) override {
    line(ind) << "atomic tensor<" << s.tensor << ">[" << text(*s.exprs[1])
              << "] = " << reduce_name(s.rop) << "<" << to_string(s.type) << ">(tensor<" << s.tensor
              << ">[" << text(*s.exprs[1]) << "], " << text(*s.exprs[0]) << ")\n";
  }
  void visit_fold(const Stmt& s, int ind) override {
    std::string target = s.name;
    for (size_t i = 1; i < s.exprs.size(); ++i) target += "[" + text(*s.exprs[i]) + "]";
    line(ind) << target << " = " << reduce_name(s.rop) << "<" << to_string(s.type) << ">(" << target
              << ", " << text(*s.exprs[0]) << ")\n";
  }
  void visit_fold_range(const Stmt& s, int ind) override {
    line(ind) << s.name << " = fold(" << s.name << ", terms of " << s.text << " in ["
              << text(*s.exprs[0]) << ", " << text(*s.exprs[1]) << "))\n";
  }
  void visit_scan_walk(const Stmt& s, int ind) override {
    line(ind) << "scan_walk " << s.text << " to " << text(*s.exprs[0]) << " from " << s.name
              << "\n";
  }
  void visit_compute(const Stmt& s, int ind) override {
    line(ind) << "compute" << overrides_text(s.overrides) << "\n";
  }

 private:
  std::ostream& line(int ind) { return o_ << std::string(2 * ind, ' '); }
  std::ostream& o_;
};

}  // namespace

std::string to_string(const Expr& e) { return text(e); }

std::string dump(const Block& b) {
  std::ostringstream o;
  StmtDump(o).block(b, 0);
  return o.str();
}

std::string dump(const Module& m) {
  std::ostringstream o;
  o << "module " << m.name << "\n";
  for (const std::string& d : m.doc) o << "// " << d << "\n";
  for (const Constant& c : m.constants)
    o << "const " << c.name << " = " << text(*c.value)
      << (c.doc.empty() ? "" : "  // " + c.doc) << "\n";
  StmtDump sd(o);
  for (const Function& f : m.functions) {
    o << "\n";
    for (const std::string& d : f.doc) o << "// " << d << "\n";
    o << "func " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Param& p = f.params[i];
      o << (i ? ", " : "") << p.name << ": " << to_string(p.type) << (p.noalias ? " noalias" : "");
    }
    o << ") -> " << to_string(f.result) << (f.inline_hint ? " inline" : "") << " {\n";
    sd.block(f.body, 1);
    o << "}\n";
  }
  return o.str();
}

}  // namespace sb::loops
