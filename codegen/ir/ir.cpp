#include "ir/ir.h"

#include "ir/intrinsics.h"
#include "ir/visitor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>

namespace sb {

const char* binop_symbol(BinOp op) {
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

const char* fn_name(Fn fn) { return intrinsic(fn).name.data(); }

const char* reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
    case ReduceOp::Prod:
      return "prod";
    case ReduceOp::ArgMax:
      return "argmax";
    case ReduceOp::ArgMin:
      return "argmin";
  }
  return "?";
}

const std::vector<ReduceOp>& reduce_ops() {
  static const std::vector<ReduceOp> ops = {ReduceOp::Sum,  ReduceOp::Max,    ReduceOp::Min,
                                            ReduceOp::Prod, ReduceOp::ArgMax, ReduceOp::ArgMin};
  return ops;
}

const char* role_name(Role r) {
  switch (r) {
    case Role::In:
      return "in";
    case Role::Out:
      return "out";
    case Role::Temp:
      return "temp";
  }
  return "?";
}

const char* boundary_name(Boundary b) {
  switch (b) {
    case Boundary::None:
      return "none";
    case Boundary::Zero:
      return "zero";
    case Boundary::Clamp:
      return "clamp";
  }
  return "?";
}

ExprPtr clone(const Expr& e) {
  return ExprMutator().mutate(e);
}

namespace {

ExprPtr clone_or_null(const ExprPtr& e) { return e ? clone(*e) : nullptr; }

}  // namespace

Spec clone(const Spec& s) {
  Spec c;
  c.name = s.name;
  c.doc = s.doc;
  c.path = s.path;
  c.loc = s.loc;
  c.sizes = s.sizes;
  for (const Tensor& t : s.tensors) {
    Tensor n;
    n.name = t.name;
    n.loc = t.loc;
    n.type = t.type;
    n.role = t.role;
    for (const ExprPtr& d : t.shape) n.shape.push_back(clone(*d));
    n.boundary = t.boundary;
    n.init_lo = t.init_lo;
    n.init_hi = t.init_hi;
    n.init_lo_expr = clone_or_null(t.init_lo_expr);
    n.init_hi_expr = clone_or_null(t.init_hi_expr);
    n.view_of = t.view_of;
    c.tensors.push_back(std::move(n));
  }
  for (const Statement& st : s.stmts) {
    Statement n;
    n.loc = st.loc;
    n.target = st.target;
    n.out = st.out;
    for (const IndexVar& v : st.vars) {
      IndexVar w;
      w.name = v.name;
      w.loc = v.loc;
      w.lo = clone_or_null(v.lo);
      w.hi = clone_or_null(v.hi);
      w.is_reduction = v.is_reduction;
      w.floor_bounds = v.floor_bounds;
      n.vars.push_back(std::move(w));
    }
    n.rhs = clone_or_null(st.rhs);
    n.source = st.source;
    c.stmts.push_back(std::move(n));
  }
  c.tol = s.tol;
  c.variants = s.variants;
  c.backend_locs = s.backend_locs;
  c.schedule = s.schedule;
  return c;
}

namespace {

// Compares the fields that make a node of each kind what it is; `b` has a's kind and arity.
class SameExpr : public ExprFunctor<bool(const Expr&)> {
 public:
  bool same(const Expr& a, const Expr& b) {
    return a.kind == b.kind && a.args.size() == b.args.size() && visit(a, b);
  }

 protected:
  bool visit_float_lit(const Expr& a, const Expr& b) override {
    return a.fval == b.fval && kids(a, b);
  }
  bool visit_int_lit(const Expr& a, const Expr& b) override {
    return a.ival == b.ival && kids(a, b);
  }
  bool visit_name(const Expr& a, const Expr& b) override { return a.name == b.name && kids(a, b); }
  bool visit_const(const Expr& a, const Expr& b) override { return a.fval == b.fval && kids(a, b); }
  bool visit_index_var(const Expr& a, const Expr& b) override { return ref_rop(a, b); }
  bool visit_size_ref(const Expr& a, const Expr& b) override { return ref_rop(a, b); }
  bool visit_read(const Expr& a, const Expr& b) override { return ref_rop(a, b); }
  bool visit_unary(const Expr& a, const Expr& b) override { return a.uop == b.uop && kids(a, b); }
  bool visit_binary(const Expr& a, const Expr& b) override { return a.bop == b.bop && kids(a, b); }
  bool visit_call(const Expr& a, const Expr& b) override { return a.fn == b.fn && kids(a, b); }
  bool visit_cast(const Expr& a, const Expr& b) override {
    return a.cast_to == b.cast_to && kids(a, b);
  }
  bool visit_reduce(const Expr& a, const Expr& b) override { return ref_rop(a, b); }

 private:
  bool ref_rop(const Expr& a, const Expr& b) {
    return a.ref == b.ref && a.rop == b.rop && kids(a, b);
  }
  bool kids(const Expr& a, const Expr& b) {
    for (size_t i = 0; i < a.args.size(); ++i)
      if (!same(*a.args[i], *b.args[i])) return false;
    return true;
  }
};

std::vector<const Expr*> nodes_of_kind(const Expr& e, ExprKind kind) {
  std::vector<const Expr*> out;
  for_each_node(e, [&](const Expr& n) {
    if (n.kind == kind) out.push_back(&n);
  });
  return out;
}

}  // namespace

bool same_expr(const Expr& a, const Expr& b) {
  return SameExpr().same(a, b);
}

std::vector<const Expr*> reads_of(const Expr& e) {
  return nodes_of_kind(e, ExprKind::Read);
}

std::vector<const Expr*> index_vars_of(const Expr& e) {
  return nodes_of_kind(e, ExprKind::IndexVar);
}

bool contains(const Expr& e, const Expr* node) {
  if (&e == node) return true;
  for (const auto& a : e.args)
    if (contains(*a, node)) return true;
  return false;
}

bool is_zero_literal(const Expr& e) {
  return e.kind == ExprKind::IntLit && e.ival == 0;
}

std::vector<const Expr*> reduces_of(const Expr& e) {
  return nodes_of_kind(e, ExprKind::Reduce);
}

static void collect_top_reduces(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind == ExprKind::Reduce) {
    out.push_back(&e);
    return;
  }
  for (const auto& a : e.args) collect_top_reduces(*a, out);
}

std::vector<const Expr*> top_reduces_of(const Expr& e) {
  std::vector<const Expr*> out;
  collect_top_reduces(e, out);
  return out;
}

size_t Statement::rank() const {
  size_t n = 0;
  while (n < vars.size() && !vars[n].is_reduction) ++n;
  return n;
}

static std::vector<SizePoint> zip_points(const std::vector<SizeParam>& sizes, bool bench) {
  size_t n = 1;
  for (const auto& s : sizes) n = std::max(n, (bench ? s.bench : s.verify).size());
  std::vector<SizePoint> pts(n);
  for (size_t i = 0; i < n; ++i) {
    for (const auto& s : sizes) {
      const auto& l = bench ? s.bench : s.verify;
      SB_ASSERT(!l.empty(), "size list of " + s.name + " is empty");
      pts[i].push_back(l.size() == 1 ? l[0] : l[i]);
    }
  }
  return pts;
}

std::vector<SizePoint> Spec::bench_points() const {
  return zip_points(sizes, true);
}
std::vector<SizePoint> Spec::verify_points() const {
  return zip_points(sizes, false);
}

int Spec::find_tensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

int storage_of(const Spec& spec, int t) {
  SB_ASSERT(t >= 0 && static_cast<size_t>(t) < spec.tensors.size(), "bad tensor id");
  return spec.tensors[t].view_of >= 0 ? spec.tensors[t].view_of : t;
}

bool reads_across_names(const Spec& spec) {
  for (const Statement& st : spec.stmts)
    for (const Expr* r : reads_of(*st.rhs)) {
      if (spec.tensors[r->ref].role == Role::In) continue;
      const int s = storage_of(spec, r->ref);
      for (const Statement& w : spec.stmts)
        if (w.out != r->ref && storage_of(spec, w.out) == s) return true;
    }
  return false;
}

int Spec::find_size(const std::string& n) const {
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i].name == n) return static_cast<int>(i);
  return -1;
}

namespace {

// The value of an integer expression; nullopt on a 64-bit overflow (its node stored in *where_).
class IntEval : public ExprFunctor<std::optional<int64_t>()> {
 public:
  IntEval(const SizePoint& sizes, const std::vector<int64_t>& vars, const Expr** where)
      : sizes_(sizes), vars_(vars), where_(where) {}

 protected:
  using Value = std::optional<int64_t>;

  Value visit_int_lit(const Expr& e) override { return e.ival; }
  Value visit_size_ref(const Expr& e) override {
    SB_ASSERT(e.ref >= 0 && e.ref < static_cast<int>(sizes_.size()), "size ref out of range");
    return sizes_[e.ref];
  }
  Value visit_index_var(const Expr& e) override {
    SB_ASSERT(e.ref >= 0 && e.ref < static_cast<int>(vars_.size()), "index var out of range");
    return vars_[e.ref];
  }
  Value visit_unary(const Expr& e) override {
    SB_ASSERT(e.uop == UnOp::Neg, "non-integer unary op in integer expression");
    auto a = visit(*e.args[0]);
    if (!a) return a;
    int64_t r;
    if (__builtin_sub_overflow(int64_t{0}, *a, &r)) return fail(e);
    return r;
  }
  Value visit_binary(const Expr& e) override {
    auto a = visit(*e.args[0]);
    if (!a) return a;
    auto b = visit(*e.args[1]);
    if (!b) return b;
    int64_t r;
    switch (e.bop) {
      case BinOp::Add:
        if (__builtin_add_overflow(*a, *b, &r)) return fail(e);
        return r;
      case BinOp::Sub:
        if (__builtin_sub_overflow(*a, *b, &r)) return fail(e);
        return r;
      case BinOp::Mul:
        if (__builtin_mul_overflow(*a, *b, &r)) return fail(e);
        return r;
      case BinOp::Div:
      case BinOp::Mod:
        SB_ASSERT(*b != 0, "integer division by zero");
        if (*a == std::numeric_limits<int64_t>::min() && *b == -1) return fail(e);
        return e.bop == BinOp::Div ? *a / *b : *a % *b;
      default:
        return not_integer();
    }
  }
  Value visit_call(const Expr& e) override {
    if (e.fn == Fn::Min || e.fn == Fn::Max) {
      auto a = visit(*e.args[0]);
      if (!a) return a;
      auto b = visit(*e.args[1]);
      if (!b) return b;
      return e.fn == Fn::Min ? std::min(*a, *b) : std::max(*a, *b);
    }
    if (e.fn == Fn::Abs) {
      auto a = visit(*e.args[0]);
      if (!a) return a;
      if (*a == std::numeric_limits<int64_t>::min()) return fail(e);
      return *a < 0 ? -*a : *a;
    }
    return not_integer();
  }
  Value visit_float_lit(const Expr&) override { return not_integer(); }
  Value visit_name(const Expr&) override { return not_integer(); }
  Value visit_const(const Expr&) override { return not_integer(); }
  Value visit_read(const Expr&) override { return not_integer(); }
  Value visit_cast(const Expr&) override { return not_integer(); }
  Value visit_reduce(const Expr&) override { return not_integer(); }

 private:
  Value fail(const Expr& e) {
    if (where_ && !*where_) *where_ = &e;
    return std::nullopt;
  }
  static Value not_integer() {
    SB_ASSERT(false, "expression is not an integer expression");
    return 0;
  }

  const SizePoint& sizes_;
  const std::vector<int64_t>& vars_;
  const Expr** where_;
};

}  // namespace

std::optional<int64_t> eval_int_checked(const Expr& e, const SizePoint& sizes,
                                        const std::vector<int64_t>& vars, const Expr** where) {
  return IntEval(sizes, vars, where).visit(e);
}

int64_t eval_int(const Expr& e, const SizePoint& sizes, const std::vector<int64_t>& vars) {
  auto v = eval_int_checked(e, sizes, vars, nullptr);
  SB_ASSERT(v.has_value(), "integer overflow in an expression that the checks accepted");
  return *v;
}

std::vector<int64_t> tensor_extents(const Spec& s, int t, const SizePoint& sizes) {
  std::vector<int64_t> ext;
  for (const auto& d : s.tensors[t].shape) ext.push_back(eval_int(*d, sizes));
  return ext;
}

int64_t tensor_elements(const Spec& s, int t, const SizePoint& sizes) {
  int64_t n = 1;
  for (int64_t e : tensor_extents(s, t, sizes)) n *= e;
  return n;
}

namespace {

int precedence(const Expr& e) {
  if (e.kind == ExprKind::Binary) {
    switch (e.bop) {
      case BinOp::Or:
        return 1;
      case BinOp::And:
        return 2;
      case BinOp::Eq:
      case BinOp::Ne:
        return 3;
      case BinOp::Lt:
      case BinOp::Le:
      case BinOp::Gt:
      case BinOp::Ge:
        return 4;
      case BinOp::Add:
      case BinOp::Sub:
        return 5;
      default:
        return 6;
    }
  }
  if (e.kind == ExprKind::Unary) return 7;
  return 8;
}

std::string format_double(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Prefer the shortest text that reads back exactly.
  for (int p = 1; p <= 17; ++p) {
    char b2[64];
    std::snprintf(b2, sizeof b2, "%.*g", p, v);
    if (std::strtod(b2, nullptr) == v) {
      std::snprintf(buf, sizeof buf, "%s", b2);
      break;
    }
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string var_name(const Expr& e, const Statement* st) {
  if (st && e.ref >= 0 && e.ref < static_cast<int>(st->vars.size())) return st->vars[e.ref].name;
  return e.name;
}

// The canonical text; a strict functor, so that a new node kind must say how it prints.
// `parent_prec` is the precedence of the context, `right` whether e is a right operand there.
class Printer : public ExprFunctor<void(int parent_prec, bool right)> {
 public:
  Printer(std::ostream& o, const Spec& s, const Statement* st) : o_(o), s_(s), st_(st) {}
  void print(const Expr& e) { visit(e, 0, false); }

 protected:
  void visit_float_lit(const Expr& e, int, bool) override { o_ << format_double(e.fval); }
  void visit_int_lit(const Expr& e, int, bool) override { o_ << e.ival; }
  void visit_name(const Expr& e, int, bool) override { o_ << e.name; }
  void visit_const(const Expr& e, int, bool) override { o_ << e.name; }
  void visit_index_var(const Expr& e, int, bool) override { o_ << var_name(e, st_); }
  void visit_size_ref(const Expr& e, int, bool) override {
    o_ << (e.ref >= 0 ? s_.sizes[e.ref].name : e.name);
  }
  void visit_read(const Expr& e, int, bool) override {
    o_ << (e.ref >= 0 ? s_.tensors[e.ref].name : e.name);
    if (!e.args.empty()) {
      o_ << "[";
      args(e);
      o_ << "]";
    }
  }
  void visit_unary(const Expr& e, int, bool) override {
    o_ << (e.uop == UnOp::Neg ? "-" : "!");
    visit(*e.args[0], 7, false);
  }
  void visit_binary(const Expr& e, int parent_prec, bool right) override {
    int p = precedence(e);
    bool paren = p < parent_prec || (p == parent_prec && right);
    if (paren) o_ << "(";
    visit(*e.args[0], p, false);
    o_ << " " << binop_symbol(e.bop) << " ";
    visit(*e.args[1], p, true);
    if (paren) o_ << ")";
  }
  void visit_call(const Expr& e, int, bool) override {
    o_ << fn_name(e.fn) << "(";
    args(e);
    o_ << ")";
  }
  void visit_cast(const Expr& e, int, bool) override {
    o_ << dtype_name(e.cast_to) << "(";
    args(e);
    o_ << ")";
  }
  void visit_reduce(const Expr& e, int, bool) override {
    o_ << reduce_name(e.rop) << "(";
    if (st_ && e.ref >= 0) {
      const IndexVar& v = st_->vars[e.ref];
      o_ << v.name << " in ";
      visit(*v.lo, 8, false);
      o_ << "..";
      visit(*v.hi, 8, false);
    } else {
      o_ << e.name;
    }
    o_ << ": ";
    visit(*e.args[0], 0, false);
    o_ << ")";
  }

 private:
  void args(const Expr& e) {
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (i) o_ << ", ";
      visit(*e.args[i], 0, false);
    }
  }

  std::ostream& o_;
  const Spec& s_;
  const Statement* st_;
};

}  // namespace

std::string to_string(const Expr& e, const Spec& s, const Statement* st) {
  std::ostringstream o;
  Printer(o, s, st).print(e);
  return o.str();
}

std::string source_text(const Statement& st, const Spec& s) {
  return st.source.empty() ? to_string(st, s) : st.source;
}

std::string to_string(const Statement& st, const Spec& s) {
  std::ostringstream o;
  o << (st.out >= 0 ? s.tensors[st.out].name : "?");
  size_t r = st.rank();
  if (st.out >= 0 && !s.tensors[st.out].shape.empty()) {
    o << "[";
    for (size_t i = 0; i < r; ++i) o << (i ? ", " : "") << st.vars[i].name;
    o << "]";
  }
  o << " = ";
  if (st.rhs) Printer(o, s, &st).print(*st.rhs);
  return o.str();
}

std::string dump(const Spec& s) {
  std::ostringstream o;
  o << "spec " << s.name << "  (" << s.path << ")\n";
  o << "  doc: " << s.doc << "\n";
  for (const auto& z : s.sizes) {
    o << "  size " << z.name << " bench=[";
    for (size_t i = 0; i < z.bench.size(); ++i) o << (i ? "," : "") << z.bench[i];
    o << "] verify=[";
    for (size_t i = 0; i < z.verify.size(); ++i) o << (i ? "," : "") << z.verify[i];
    o << "]\n";
  }
  for (const auto& t : s.tensors) {
    o << "  tensor " << t.name << ": " << dtype_name(t.type) << "[";
    for (size_t i = 0; i < t.shape.size(); ++i)
      o << (i ? ", " : "") << to_string(*t.shape[i], s, nullptr);
    o << "] " << role_name(t.role);
    if (t.boundary != Boundary::None) o << " boundary=" << boundary_name(t.boundary);
    o << "\n";
  }
  for (const auto& st : s.stmts) {
    o << "  stmt " << to_string(st, s);
    if (st.rhs) o << "   : " << dtype_name(st.rhs->type);
    o << "\n";
    for (const auto& v : st.vars) {
      o << "    var " << v.name << (v.is_reduction ? " (reduction)" : "") << " in ";
      o << (v.lo ? to_string(*v.lo, s, &st) : "?") << ".."
        << (v.hi ? to_string(*v.hi, s, &st) : "?") << "\n";
    }
  }
  o << "  tolerance rtol=" << s.tol.rtol << " atol=" << s.tol.atol << "\n";
  for (const auto& [backend, vs] : s.variants) {
    for (const auto& v : vs) {
      o << "  variant " << backend << "/" << v.name << " strategy=" << v.strategy;
      for (const auto& [k, val] : v.params) o << " " << k << "=" << val;
      o << "\n";
    }
  }
  return o.str();
}

}  // namespace sb
