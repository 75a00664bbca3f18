#include "ir/ir.h"

#include "ir/intrinsics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <sstream>

namespace sb {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
    case DType::I32:
      return "i32";
    case DType::Index:
      return "index";
    case DType::Bool:
      return "bool";
    case DType::FloatLit:
      return "float literal";
    case DType::IntLit:
      return "integer literal";
    case DType::Unknown:
      break;
  }
  return "unknown";
}

int dtype_bytes(DType t) {
  switch (t) {
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F64:
    case DType::Index:
      return 8;
    default:
      return 0;
  }
}

bool is_float(DType t) {
  return t == DType::F32 || t == DType::F64;
}

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
  }
  return "?";
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
  for (const auto& a : e.args) c->args.push_back(clone(*a));
  return c;
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
      n.vars.push_back(std::move(w));
    }
    n.rhs = clone_or_null(st.rhs);
    n.source = st.source;
    c.stmts.push_back(std::move(n));
  }
  c.tol = s.tol;
  c.variants = s.variants;
  c.backend_locs = s.backend_locs;
  return c;
}

bool same_expr(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.args.size() != b.args.size()) return false;
  switch (a.kind) {
    case ExprKind::IntLit:
      if (a.ival != b.ival) return false;
      break;
    case ExprKind::FloatLit:
    case ExprKind::Const:
      if (a.fval != b.fval) return false;
      break;
    case ExprKind::IndexVar:
    case ExprKind::SizeRef:
    case ExprKind::Read:
    case ExprKind::Reduce:
      if (a.ref != b.ref || a.rop != b.rop) return false;
      break;
    case ExprKind::Unary:
      if (a.uop != b.uop) return false;
      break;
    case ExprKind::Binary:
      if (a.bop != b.bop) return false;
      break;
    case ExprKind::Call:
      if (a.fn != b.fn) return false;
      break;
    case ExprKind::Cast:
      if (a.cast_to != b.cast_to) return false;
      break;
    case ExprKind::Name:
      if (a.name != b.name) return false;
      break;
  }
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!same_expr(*a.args[i], *b.args[i])) return false;
  return true;
}

namespace {

void nodes_rec(const Expr& e, ExprKind kind, std::vector<const Expr*>& out) {
  if (e.kind == kind) out.push_back(&e);
  for (const auto& a : e.args) nodes_rec(*a, kind, out);
}

}  // namespace

std::vector<const Expr*> reads_of(const Expr& e) {
  std::vector<const Expr*> out;
  nodes_rec(e, ExprKind::Read, out);
  return out;
}

std::vector<const Expr*> reduces_of(const Expr& e) {
  std::vector<const Expr*> out;
  nodes_rec(e, ExprKind::Reduce, out);
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

int Spec::find_size(const std::string& n) const {
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i].name == n) return static_cast<int>(i);
  return -1;
}

std::optional<int64_t> eval_int_checked(const Expr& e, const SizePoint& sizes,
                                        const std::vector<int64_t>& vars, const Expr** where) {
  auto fail = [&]() -> std::optional<int64_t> {
    if (where && !*where) *where = &e;
    return std::nullopt;
  };
  switch (e.kind) {
    case ExprKind::IntLit:
      return e.ival;
    case ExprKind::SizeRef:
      SB_ASSERT(e.ref >= 0 && e.ref < static_cast<int>(sizes.size()), "size ref out of range");
      return sizes[e.ref];
    case ExprKind::IndexVar:
      SB_ASSERT(e.ref >= 0 && e.ref < static_cast<int>(vars.size()), "index var out of range");
      return vars[e.ref];
    case ExprKind::Unary: {
      SB_ASSERT(e.uop == UnOp::Neg, "non-integer unary op in integer expression");
      auto a = eval_int_checked(*e.args[0], sizes, vars, where);
      if (!a) return a;
      int64_t r;
      if (__builtin_sub_overflow(int64_t{0}, *a, &r)) return fail();
      return r;
    }
    case ExprKind::Binary: {
      auto a = eval_int_checked(*e.args[0], sizes, vars, where);
      if (!a) return a;
      auto b = eval_int_checked(*e.args[1], sizes, vars, where);
      if (!b) return b;
      int64_t r;
      switch (e.bop) {
        case BinOp::Add:
          if (__builtin_add_overflow(*a, *b, &r)) return fail();
          return r;
        case BinOp::Sub:
          if (__builtin_sub_overflow(*a, *b, &r)) return fail();
          return r;
        case BinOp::Mul:
          if (__builtin_mul_overflow(*a, *b, &r)) return fail();
          return r;
        case BinOp::Div:
        case BinOp::Mod:
          SB_ASSERT(*b != 0, "integer division by zero");
          if (*a == std::numeric_limits<int64_t>::min() && *b == -1) return fail();
          return e.bop == BinOp::Div ? *a / *b : *a % *b;
        default:
          break;
      }
      break;
    }
    case ExprKind::Call:
      if (e.fn == Fn::Min || e.fn == Fn::Max) {
        auto a = eval_int_checked(*e.args[0], sizes, vars, where);
        if (!a) return a;
        auto b = eval_int_checked(*e.args[1], sizes, vars, where);
        if (!b) return b;
        return e.fn == Fn::Min ? std::min(*a, *b) : std::max(*a, *b);
      }
      if (e.fn == Fn::Abs) {
        auto a = eval_int_checked(*e.args[0], sizes, vars, where);
        if (!a) return a;
        if (*a == std::numeric_limits<int64_t>::min()) return fail();
        return *a < 0 ? -*a : *a;
      }
      break;
    default:
      break;
  }
  SB_ASSERT(false, "expression is not an integer expression");
  return 0;
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

void print(std::ostream& o, const Expr& e, const Spec& s, const Statement* st, int parent_prec,
           bool right);

void print_args(std::ostream& o, const Expr& e, const Spec& s, const Statement* st) {
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (i) o << ", ";
    print(o, *e.args[i], s, st, 0, false);
  }
}

std::string var_name(const Expr& e, const Statement* st) {
  if (st && e.ref >= 0 && e.ref < static_cast<int>(st->vars.size())) return st->vars[e.ref].name;
  return e.name;
}

void print(std::ostream& o, const Expr& e, const Spec& s, const Statement* st, int parent_prec,
           bool right) {
  switch (e.kind) {
    case ExprKind::FloatLit:
      o << format_double(e.fval);
      return;
    case ExprKind::IntLit:
      o << e.ival;
      return;
    case ExprKind::Name:
    case ExprKind::Const:
      o << e.name;
      return;
    case ExprKind::IndexVar:
      o << var_name(e, st);
      return;
    case ExprKind::SizeRef:
      o << (e.ref >= 0 ? s.sizes[e.ref].name : e.name);
      return;
    case ExprKind::Read:
      o << (e.ref >= 0 ? s.tensors[e.ref].name : e.name);
      if (!e.args.empty()) {
        o << "[";
        print_args(o, e, s, st);
        o << "]";
      }
      return;
    case ExprKind::Unary:
      o << (e.uop == UnOp::Neg ? "-" : "!");
      print(o, *e.args[0], s, st, 7, false);
      return;
    case ExprKind::Binary: {
      int p = precedence(e);
      bool paren = p < parent_prec || (p == parent_prec && right);
      if (paren) o << "(";
      print(o, *e.args[0], s, st, p, false);
      o << " " << binop_symbol(e.bop) << " ";
      print(o, *e.args[1], s, st, p, true);
      if (paren) o << ")";
      return;
    }
    case ExprKind::Call:
      o << fn_name(e.fn) << "(";
      print_args(o, e, s, st);
      o << ")";
      return;
    case ExprKind::Cast:
      o << dtype_name(e.cast_to) << "(";
      print_args(o, e, s, st);
      o << ")";
      return;
    case ExprKind::Reduce: {
      o << reduce_name(e.rop) << "(";
      if (st && e.ref >= 0) {
        const IndexVar& v = st->vars[e.ref];
        o << v.name << " in ";
        print(o, *v.lo, s, st, 8, false);
        o << "..";
        print(o, *v.hi, s, st, 8, false);
      } else {
        o << e.name;
      }
      o << ": ";
      print(o, *e.args[0], s, st, 0, false);
      o << ")";
      return;
    }
  }
}

}  // namespace

std::string to_string(const Expr& e, const Spec& s, const Statement* st) {
  std::ostringstream o;
  print(o, e, s, st, 0, false);
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
  if (st.rhs) print(o, *st.rhs, s, &st, 0, false);
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
