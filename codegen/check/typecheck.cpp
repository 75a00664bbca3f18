#include "check/typecheck.h"

#include "ir/affine.h"
#include "ir/intrinsics.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numbers>
#include <set>

#include "ir/names.h"
#include "ir/visitor.h"

namespace sb {

namespace {

constexpr double kMaxElements = 2147483647.0;           // 2^31 - 1
constexpr double kMaxTotalBytes = 16.0 * (1ull << 30);  // 16 GiB

bool is_int(DType t) {
  return is_integer(t) || scalar(t).kind == ScalarKind::IntLit;
}
bool is_literal(DType t) {
  const ScalarKind k = scalar(t).kind;
  return k == ScalarKind::FloatLit || k == ScalarKind::IntLit;
}
bool is_floatish(DType t) {
  return is_float(t) || t == DType::FloatLit;
}
bool is_numeric(DType t) {
  return is_int(t) || is_floatish(t);
}

ExprPtr int_lit(int64_t v, const Loc& loc) {
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::IntLit;
  e->ival = v;
  e->loc = loc;
  e->type = DType::Index;
  return e;
}

// Gives the untyped-literal parts of `e` the concrete type `t`. An integer literal that becomes
// a float turns into a float literal, so no backend ever performs integer division on it.
// A '%' of integer literals that would become a floating-point '%' here (`y[i] = 1 % 3` with an
// f32 output) is refused, as `f32(i) % 3.0` is: '%' is an integer operator on every backend.
// A pre-order walk that stops below a node that is not of literal type, below a comparison,
// and at the first error.
class Settle : public MutableExprVisitor {
 public:
  explicit Settle(DType t) : t_(t) {}
  Status status;

  void visit(Expr& e) override {
    if (!status.ok() || !is_literal(e.type)) return;
    if (e.kind == ExprKind::Binary && e.bop == BinOp::Mod &&
        (is_float(t_) || t_ == DType::FloatLit)) {
      status = make_error(e.loc, std::string("'%' needs integer operands; here its literal "
                                             "operands take the type ") +
                                     dtype_name(scalar(t_).printed_as) +
                                     " of their context (compute the value, or use an integer "
                                     "expression)");
      return;
    }
    if (e.kind == ExprKind::IntLit && (is_float(t_) || t_ == DType::FloatLit)) {
      e.kind = ExprKind::FloatLit;
      e.fval = static_cast<double>(e.ival);
    }
    bool comparison = e.kind == ExprKind::Binary &&
                      (e.bop == BinOp::Lt || e.bop == BinOp::Le || e.bop == BinOp::Gt ||
                       e.bop == BinOp::Ge || e.bop == BinOp::Eq || e.bop == BinOp::Ne);
    e.type = t_;
    if (comparison) return;  // operands were settled when the comparison was typed
    visit_children(e);
  }

 private:
  DType t_;
};

Status settle(Expr& e, DType t) {
  Settle s(t);
  s.visit(e);
  return s.status;
}

// A shape dimension: an integer expression of sizes and literals with + - *, and / by a positive
// literal or a size (C's division, which size_points requires of a non-negative dividend, so
// that it is the floor). A product of two sizes, or a quotient, is not affine: the bounds check
// keeps it as an atom (ir/affine.h).
class ShapeDim : public MutableExprFunctor<Status()> {
 public:
  ShapeDim(const Spec& s, const Tensor& t) : s_(s), t_(t) {}

 protected:
  Status visit_int_lit(Expr& e) override {
    e.type = DType::Index;
    return {};
  }
  Status visit_name(Expr& e) override {
    int z = s_.find_size(e.name);
    if (z < 0)
      return make_error(e.loc,
                        "unknown size '" + e.name + "' in the shape of tensor '" + t_.name + "'");
    e.kind = ExprKind::SizeRef;
    e.ref = z;
    e.type = DType::Index;
    return {};
  }
  Status visit_binary(Expr& e) override {
    if (e.bop != BinOp::Add && e.bop != BinOp::Sub && e.bop != BinOp::Mul && e.bop != BinOp::Div)
      return refuse(e);
    SB_TRY(visit(*e.args[0]));
    SB_TRY(visit(*e.args[1]));
    if (e.bop == BinOp::Div) {
      const Expr& d = *e.args[1];
      if (!((d.kind == ExprKind::IntLit && d.ival > 0) || d.kind == ExprKind::SizeRef))
        return make_error(d.loc, "shape of tensor '" + t_.name +
                                     "' divides by '" + to_string(d, s_, nullptr) +
                                     "': a divisor in a shape must be a positive integer literal "
                                     "or a size");
    }
    e.type = DType::Index;
    return {};
  }
  Status visit_float_lit(Expr& e) override { return refuse(e); }
  Status visit_const(Expr& e) override { return refuse(e); }
  Status visit_index_var(Expr& e) override { return refuse(e); }
  Status visit_size_ref(Expr& e) override { return refuse(e); }
  Status visit_read(Expr& e) override { return refuse(e); }
  Status visit_unary(Expr& e) override { return refuse(e); }
  Status visit_call(Expr& e) override { return refuse(e); }
  Status visit_cast(Expr& e) override { return refuse(e); }
  Status visit_reduce(Expr& e) override { return refuse(e); }

 private:
  Status refuse(const Expr& e) const {
    return make_error(e.loc, "shape of tensor '" + t_.name +
                                 "' must be built from sizes, integer literals, + - * and /");
  }

  const Spec& s_;
  const Tensor& t_;
};

class Checker {
 public:
  explicit Checker(Spec& s) : s_(s) {}

  // The checks made at every size point, of a spec that passed run(): extents, element counts
  // and bytes, 'init' ranges, and the dividends in shapes and ranges.
  Status points() {
    SB_TRY(size_points());
    return range_dividends(/*strict=*/true);
  }

  Status run() {
    SB_TRY(unique_names());
    for (auto& t : s_.tensors) {
      for (auto& d : t.shape) SB_TRY(shape_dim(*d, t));
      if (t.init_lo_expr) SB_TRY(shape_dim(*t.init_lo_expr, t));
      if (t.init_hi_expr) SB_TRY(shape_dim(*t.init_hi_expr, t));
    }
    SB_TRY(size_points());
    std::vector<int> written_by(s_.tensors.size(), -1);
    for (size_t i = 0; i < s_.stmts.size(); ++i) {
      SB_TRY(statement(s_.stmts[i], static_cast<int>(i), written_by));
    }
    SB_TRY(range_dividends(/*strict=*/false));
    // The storages some statement reads, through any of their names.
    std::set<int> read_storages;
    for (const auto& [u, read] : read_)
      if (read) read_storages.insert(storage_of(s_, u));
    for (size_t t = 0; t < s_.tensors.size(); ++t) {
      const Tensor& tn = s_.tensors[t];
      if (tn.role != Role::In && written_by[t] < 0 &&
          writer_of_storage(static_cast<int>(t), static_cast<int>(s_.stmts.size())) < 0)
        return make_error(tn.loc, std::string(role_name(tn.role)) + " tensor '" + tn.name +
                                      "' is never written by 'compute'");
      // A written temp is read through its name or any view of its storage.
      if (tn.role == Role::Temp && written_by[t] >= 0 &&
          !read_storages.count(storage_of(s_, static_cast<int>(t))))
        return make_error(tn.loc, "temp tensor '" + tn.name + "' is written but never read");
    }
    return {};
  }

 private:
  Status unique_names() {
    std::set<std::string> seen;
    for (const auto& z : s_.sizes) seen.insert(z.name);
    for (const auto& t : s_.tensors) {
      if (!seen.insert(t.name).second)
        return make_error(t.loc, "tensor '" + t.name + "' has the same name as a size parameter");
    }
    return {};
  }

  Status shape_dim(Expr& e, const Tensor& t) { return ShapeDim(s_, t).visit(e); }

  Status size_points() {
    for (bool bench : {false, true}) {
      for (const SizePoint& p : bench ? s_.bench_points() : s_.verify_points()) {
        double total = 0;
        for (size_t t = 0; t < s_.tensors.size(); ++t) {
          const Tensor& tn = s_.tensors[t];
          double n = 1;
          for (const auto& d : tn.shape) {
            auto v = checked(*d, p, "the shape of tensor '" + tn.name + "'");
            if (!v.ok()) return v.error();
            SB_TRY(dividends(*d, p, "the shape of tensor '" + tn.name + "'"));
            int64_t x = v.value();
            if (x < 1)
              return make_error(tn.loc, "tensor '" + tn.name + "' has extent " + std::to_string(x) +
                                            " at " + point_name(p) +
                                            " (extents must be at least 1)");
            n *= static_cast<double>(x);
          }
          if (n > kMaxElements)
            return make_error(tn.loc, "tensor '" + tn.name + "' would hold " + fmt_count(n) +
                                          " elements at " + point_name(p) +
                                          " (at most 2^31 - 1 are supported)");
          if (tn.view_of >= 0) {
            // A view names its base's elements, whose count size_points met first (the base
            // is declared before it); its bytes are the base's.
            const Tensor& base = s_.tensors[tn.view_of];
            const int64_t m = tensor_elements(s_, tn.view_of, p);
            if (n != static_cast<double>(m))
              return make_error(tn.loc, "view '" + tn.name + "' has " + fmt_count(n) +
                                            " elements at " + point_name(p) + ", its base '" +
                                            base.name + "' has " + fmt_count(static_cast<double>(m)) +
                                            " (a view keeps the number of elements)");
            continue;
          }
          total += n * dtype_bytes(tn.type);
          if (!tn.init_lo_expr) continue;
          auto lo = checked(*tn.init_lo_expr, p, "'init' of tensor '" + tn.name + "'");
          if (!lo.ok()) return lo.error();
          auto hi = checked(*tn.init_hi_expr, p, "'init' of tensor '" + tn.name + "'");
          if (!hi.ok()) return hi.error();
          SB_TRY(dividends(*tn.init_lo_expr, p, "'init' of tensor '" + tn.name + "'"));
          SB_TRY(dividends(*tn.init_hi_expr, p, "'init' of tensor '" + tn.name + "'"));
          if (lo.value() > hi.value())
            return make_error(tn.init_lo_expr->loc, "'init' of tensor '" + tn.name +
                                                        "' is an empty range at " + point_name(p));
        }
        if (total > kMaxTotalBytes)
          return make_error(s_.sizes[0].loc, "the tensors would take " + fmt_count(total) +
                                                 " bytes at " + point_name(p) +
                                                 " (at most 16 GiB are supported)");
      }
    }
    return {};
  }

  // The dividends in a reduction's range bounds that are functions of sizes alone. Not `strict`
  // (typecheck): IndexVar::floor_bounds is set where they are at least 0 at every size point, as
  // a shape's must be; the bounds check then keeps such a quotient whole and bounds it as a floor
  // (ir/affine.h), which C's division is for a dividend of at least 0. `strict` (new size points,
  // check_size_points): a located error where a range whose bounds were taken so has a negative
  // dividend. (An output's ranges are copies of its shape, checked by size_points.)
  Status range_dividends(bool strict) {
    for (Statement& st : s_.stmts)
      for (IndexVar& v : st.vars) {
        if (!v.is_reduction || (strict && !v.floor_bounds)) continue;
        bool ok = true;
        for (bool bench : {false, true})
          for (const SizePoint& p : bench ? s_.bench_points() : s_.verify_points())
            for (const ExprPtr* b : {&v.lo, &v.hi}) {
              if (!*b || !var_free(**b)) continue;
              const Status st_ok = dividends(**b, p, "the range of '" + v.name + "'");
              if (st_ok.ok()) continue;
              if (strict) return st_ok;
              ok = false;
            }
        if (!strict) v.floor_bounds = ok;
      }
    return {};
  }

  // Every division in the size expression `e` (a shape or an 'init' bound) divides a value that
  // is at least 0 at size point `p`, where C's division, which the generated code computes, is
  // the floor the bounds check assumes (ir/affine.h); else a located error.
  Status dividends(const Expr& e, const SizePoint& p, const std::string& what) const {
    for (const auto& a : e.args) SB_TRY(dividends(*a, p, what));
    if (e.kind != ExprKind::Binary || e.bop != BinOp::Div) return {};
    auto v = checked(*e.args[0], p, what);
    if (!v.ok()) return v.error();
    if (v.value() < 0)
      return make_error(e.loc, "'" + to_string(*e.args[0], s_, nullptr) + "' in " + what +
                                   " is " + std::to_string(v.value()) + " at " + point_name(p) +
                                   ": a dividend in a shape or a range must be at least 0 at "
                                   "every size point");
    return {};
  }

  // The value of the integer expression `e` at size point `p`; a located error when a step of
  // it leaves the 64-bit range (the generated code computes it in int64_t).
  Result<int64_t> checked(const Expr& e, const SizePoint& p, const std::string& what) const {
    const Expr* where = nullptr;
    auto v = eval_int_checked(e, p, {}, &where);
    if (v) return *v;
    const Expr& at = where ? *where : e;
    return make_error(at.loc, "integer overflow in " + what + ": '" + to_string(at, s_, nullptr) +
                                  "' leaves the 64-bit range at " + point_name(p));
  }

  static std::string fmt_count(double n) {
    char b[64];
    std::snprintf(b, sizeof b, "%.0f", n);
    return b;
  }

  static std::string count(size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  }

  std::string point_name(const SizePoint& p) const {
    std::string s;
    for (size_t i = 0; i < p.size(); ++i)
      s += (i ? "," : "") + s_.sizes[i].name + "=" + std::to_string(p[i]);
    return s;
  }

  Status statement(Statement& st, int index, std::vector<int>& written_by) {
    int t = s_.find_tensor(st.target);
    if (t < 0) return make_error(st.loc, "assignment to undefined tensor '" + st.target + "'");
    const Tensor& tn = s_.tensors[t];
    if (tn.view_of >= 0 && tn.role == Role::In)
      return make_error(st.loc, "cannot write '" + tn.name + "', a view of input tensor '" +
                                    s_.tensors[tn.view_of].name + "'");
    if (tn.role == Role::In)
      return make_error(st.loc, "cannot write input tensor '" + tn.name + "' (role: in)");
    if (written_by[t] >= 0)
      return make_error(st.loc, "tensor '" + tn.name +
                                    "' is written twice (each out or temp "
                                    "tensor is written by one statement)");
    // An output or a temp and its views name one storage, written once through one of them.
    const int other = writer_of_storage(t, index);
    if (other >= 0)
      return make_error(st.loc, "'" + tn.name + "' and '" + s_.tensors[other].name +
                                    "' name the same " +
                                    (tn.role == Role::Temp ? "temp" : "output") +
                                    ", which an earlier statement writes (it is written "
                                    "once, through its name or one of its views)");
    if (st.vars.size() != tn.shape.size())
      return make_error(st.loc, "'" + tn.name + "' has rank " + std::to_string(tn.shape.size()) +
                                    " but the left-hand side has " +
                                    count(st.vars.size(), "index", "indices"));
    st.out = t;
    std::vector<int> scope;
    for (size_t i = 0; i < st.vars.size(); ++i) {
      IndexVar& v = st.vars[i];
      SB_TRY(index_name(v.name, v.loc, st, scope));
      v.lo = int_lit(0, v.loc);
      v.hi = clone(*tn.shape[i]);
      v.floor_bounds = true;  // a copy of the shape, whose dividends size_points checked
      scope.push_back(static_cast<int>(i));
    }
    cur_ = index;
    SB_TRY(resolve(st.rhs, st, scope));
    SB_TRY(type(*st.rhs, st));
    // A storage type (f16, bf16) takes a value of the type it computes in, rounded on store.
    SB_TRY(expect_type(*st.rhs, compute_type(tn.type), "the value assigned to '" + tn.name + "'"));
    written_by[t] = index;
    return {};
  }

  // The tensor other than `t` that names t's storage (its base or a view of the same base) and
  // that one of the statements before `before` writes; -1 if there is none.
  int writer_of_storage(int t, int before) const {
    for (int i = 0; i < before; ++i) {
      const int w = s_.stmts[i].out;
      if (w >= 0 && w != t && storage_of(s_, w) == storage_of(s_, t)) return w;
    }
    return -1;
  }

  Status index_name(const std::string& n, const Loc& loc, const Statement& st,
                    const std::vector<int>& scope) {
    std::string why = check_identifier(n);
    if (!why.empty()) return make_error(loc, "invalid index name: " + why);
    if (s_.find_size(n) >= 0 || s_.find_tensor(n) >= 0)
      return make_error(loc, "index '" + n + "' has the same name as a size or tensor");
    for (int v : scope)
      if (st.vars[v].name == n)
        return make_error(loc, "index '" + n +
                                   "' is already bound by an enclosing index or "
                                   "reduction (each index needs its own name)");
    return {};
  }

  // Name resolution; rewrites Name nodes in place and moves reduction ranges into `st.vars`.
  class Resolver : public MutableExprFunctor<Status()> {
   public:
    Resolver(Checker& c, Statement& st, std::vector<int>& scope) : c_(c), st_(st), scope_(scope) {}

   protected:
    Status visit_name(Expr& e) override {
      for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
        if (st_.vars[*it].name == e.name) {
          e.kind = ExprKind::IndexVar;
          e.ref = *it;
          return {};
        }
      }
      const Spec& s = c_.s_;
      if (int z = s.find_size(e.name); z >= 0) {
        e.kind = ExprKind::SizeRef;
        e.ref = z;
        return {};
      }
      if (int t = s.find_tensor(e.name); t >= 0) {
        if (!s.tensors[t].shape.empty())
          return make_error(e.loc, "tensor '" + e.name + "' has rank " +
                                       std::to_string(s.tensors[t].shape.size()) +
                                       " and needs subscripts");
        e.kind = ExprKind::Read;
        e.ref = t;
        return c_.note_read(e);
      }
      if (e.name == "pi" || e.name == "inf") {
        e.kind = ExprKind::Const;
        e.fval = e.name == "pi" ? std::numbers::pi : std::numeric_limits<double>::infinity();
        return {};
      }
      return make_error(e.loc, "undefined name '" + e.name + "'");
    }
    Status visit_read(Expr& e) override {
      int t = c_.s_.find_tensor(e.name);
      if (t < 0) return make_error(e.loc, "undefined tensor '" + e.name + "'");
      const Tensor& tn = c_.s_.tensors[t];
      if (e.args.size() != tn.shape.size())
        return make_error(e.loc, "'" + tn.name + "' has rank " + std::to_string(tn.shape.size()) +
                                     " but is read with " +
                                     count(e.args.size(), "subscript", "subscripts"));
      e.ref = t;
      SB_TRY(c_.note_read(e));
      return children(e);
    }
    Status visit_call(Expr& e) override {
      size_t want = 0;
      if (const Intrinsic* f = find_intrinsic(e.name)) {
        e.fn = f->fn;
        want = static_cast<size_t>(f->arity);
      } else if (const ScalarType* c = tensor_scalar(e.name)) {
        if (is_storage_type(c->type))
          return make_error(e.loc, "'" + e.name + "' is a storage type: values of " + e.name +
                                       " tensors compute in " +
                                       dtype_name(compute_type(c->type)) +
                                       ", and a value is rounded to " + e.name +
                                       " where it is stored; there is no cast to it");
        e.kind = ExprKind::Cast;
        e.cast_to = c->type;
        want = 1;
      } else {
        return make_error(e.loc, "unknown function '" + e.name + "'");
      }
      if (e.args.size() != want)
        return make_error(e.loc, "'" + e.name + "' takes " + std::to_string(want) + " argument" +
                                     (want == 1 ? "" : "s") + ", got " +
                                     std::to_string(e.args.size()));
      return children(e);
    }
    Status visit_reduce(Expr& e) override {
      SB_TRY(c_.index_name(e.name, e.loc, st_, scope_));
      // Bounds are evaluated outside the reduction: its own variable is not yet visible.
      SB_TRY(visit(*e.args[1]));
      SB_TRY(visit(*e.args[2]));
      IndexVar v;
      v.name = e.name;
      v.loc = e.loc;
      v.is_reduction = true;
      v.lo = std::move(e.args[1]);
      v.hi = std::move(e.args[2]);
      e.args.resize(1);
      st_.vars.push_back(std::move(v));
      e.ref = static_cast<int>(st_.vars.size()) - 1;
      scope_.push_back(e.ref);
      Status s = visit(*e.args[0]);
      scope_.pop_back();
      return s;
    }
    // The other kinds hold no names themselves.
    Status visit_float_lit(Expr& e) override { return children(e); }
    Status visit_int_lit(Expr& e) override { return children(e); }
    Status visit_const(Expr& e) override { return children(e); }
    Status visit_index_var(Expr& e) override { return children(e); }
    Status visit_size_ref(Expr& e) override { return children(e); }
    Status visit_unary(Expr& e) override { return children(e); }
    Status visit_binary(Expr& e) override { return children(e); }
    Status visit_cast(Expr& e) override { return children(e); }

   private:
    Status children(Expr& e) {
      for (auto& a : e.args) SB_TRY(visit(*a));
      return {};
    }

    Checker& c_;
    Statement& st_;
    std::vector<int>& scope_;
  };

  Status resolve(ExprPtr& e, Statement& st, std::vector<int>& scope) {
    return Resolver(*this, st, scope).visit(*e);
  }

  Status note_read(const Expr& e) {
    const Tensor& tn = s_.tensors[e.ref];
    if (tn.role != Role::In) {
      // Ready once an earlier statement wrote its storage, through this name or another.
      bool ready = writer_of_storage(e.ref, cur_) >= 0;
      for (int i = 0; i < cur_; ++i) ready = ready || s_.stmts[i].out == e.ref;
      if (!ready) {
        const int target = s_.find_tensor(s_.stmts[cur_].target);
        if (target != e.ref && storage_of(s_, target) == storage_of(s_, e.ref))
          return make_error(e.loc, "'" + tn.name +
                                       "' names the storage that this statement writes, as '" +
                                       s_.stmts[cur_].target +
                                       "' (use a temp tensor for the earlier value)");
        if (s_.stmts[cur_].target == tn.name)
          return make_error(e.loc, "'" + tn.name +
                                       "' is read by the statement that writes it "
                                       "(use a temp tensor for the earlier value)");
        return make_error(e.loc, "'" + tn.name + "' is read before a statement writes it");
      }
    }
    read_[e.ref] = true;
    return {};
  }

  // Requires `e` (already typed) to have type `t`, settling literals.
  Status expect_type(Expr& e, DType t, const std::string& what) {
    if (is_literal(e.type)) {
      if (e.type == DType::FloatLit && is_int(t))
        return make_error(e.loc, what + " must be " + dtype_name(t) + ", found a float literal");
      return settle(e, t);
    }
    if (e.type == t) return {};
    // A fixed-width integer (a gathered index) widens to index.
    if (scalar(t).kind == ScalarKind::Index && scalar(e.type).kind == ScalarKind::SignedInt)
      return {};
    return make_error(e.loc,
                      what + " must be " + dtype_name(t) + ", found " + dtype_name(e.type) +
                          (is_float(t) || is_float(e.type)
                               ? " (use a cast such as " + std::string(dtype_name(t)) + "(...))"
                               : ""));
  }

  // The common type of two operands, settling literals; error when they disagree.
  Status unify(Expr& op, Expr& a, Expr& b, DType& out) {
    DType ta = a.type, tb = b.type;
    if (is_literal(ta) && is_literal(tb)) {
      out = (ta == DType::FloatLit || tb == DType::FloatLit) ? DType::FloatLit : DType::IntLit;
      return {};
    }
    if (is_literal(ta) || is_literal(tb)) {
      Expr& lit = is_literal(ta) ? a : b;
      DType other = is_literal(ta) ? tb : ta;
      if (lit.type == DType::FloatLit && !is_float(other))
        return make_error(op.loc, std::string("cannot combine a float literal with ") +
                                      dtype_name(other) + " in '" + binop_or_fn(op) + "'");
      SB_TRY(settle(lit, other));
      out = other;
      return {};
    }
    if (ta == tb) {
      out = ta;
      return {};
    }
    if (is_int(ta) && is_int(tb)) {  // i32 values (gathered indices) widen to index
      out = DType::Index;
      return {};
    }
    return make_error(op.loc, std::string("type mismatch in '") + binop_or_fn(op) +
                                  "': " + dtype_name(ta) + " and " + dtype_name(tb) +
                                  " (convert one side with a cast such as f32(...))");
  }

  static std::string binop_or_fn(const Expr& e) {
    if (e.kind == ExprKind::Binary) return binop_symbol(e.bop);
    if (e.kind == ExprKind::Call) return fn_name(e.fn);
    return "?";
  }

  // The type of a call, by its intrinsic's type rule (ir/intrinsics.h); arguments are typed.
  Status type_call(Expr& e) {
    const Intrinsic& in = intrinsic(e.fn);
    if (in.rule == TypeRule::Select) {
      if (e.args[0]->type != DType::Bool)
        return make_error(e.args[0]->loc, "the condition of select() must be a comparison");
      DType t;
      SB_TRY(unify(e, *e.args[1], *e.args[2], t));
      e.type = t;
      return {};
    }
    for (auto& a : e.args)
      if (!is_numeric(a->type))
        return make_error(a->loc, std::string("'") + fn_name(e.fn) + "' needs a number, found " +
                                      dtype_name(a->type));
    DType t = e.args[0]->type;
    for (size_t i = 1; i < e.args.size(); ++i) SB_TRY(unify(e, *e.args[0], *e.args[i], t));
    if (in.rule == TypeRule::SameFloat) {
      for (auto& a : e.args)
        if (is_int(a->type) && a->type != DType::IntLit)
          return make_error(a->loc, std::string("'") + fn_name(e.fn) +
                                        "' needs a floating-point argument, found " +
                                        dtype_name(a->type) + "; use f32(...)");
      if (t == DType::IntLit) {
        for (auto& a : e.args) SB_TRY(settle(*a, DType::FloatLit));
        t = DType::FloatLit;
      }
    }
    e.type = t;
    return {};
  }

  // The type of every node, bottom-up, settling literals against their context.
  class Typer : public MutableExprFunctor<Status()> {
   public:
    Typer(Checker& c, Statement& st) : c_(c), st_(st) {}

   protected:
    Status visit_float_lit(Expr& e) override {
      e.type = DType::FloatLit;
      return {};
    }
    Status visit_int_lit(Expr& e) override {
      e.type = DType::IntLit;
      return {};
    }
    Status visit_const(Expr& e) override {
      e.type = DType::FloatLit;
      return {};
    }
    Status visit_index_var(Expr& e) override {
      e.type = DType::Index;
      return {};
    }
    Status visit_size_ref(Expr& e) override {
      e.type = DType::Index;
      return {};
    }
    Status visit_read(Expr& e) override {
      for (auto& a : e.args) {
        SB_TRY(visit(*a));
        SB_TRY(
            c_.expect_type(*a, DType::Index, "a subscript of '" + c_.s_.tensors[e.ref].name + "'"));
      }
      e.type = compute_type(c_.s_.tensors[e.ref].type);  // an f16 or bf16 element reads as f32
      return {};
    }
    Status visit_unary(Expr& e) override {
      Expr& a = *e.args[0];
      SB_TRY(visit(a));
      if (e.uop == UnOp::Not) {
        if (a.type != DType::Bool)
          return make_error(e.loc,
                            std::string("'!' needs a comparison, found ") + dtype_name(a.type));
        e.type = DType::Bool;
      } else {
        if (!is_numeric(a.type))
          return make_error(e.loc, std::string("'-' needs a number, found ") + dtype_name(a.type));
        e.type = a.type;
      }
      return {};
    }
    Status visit_binary(Expr& e) override {
      Expr& a = *e.args[0];
      Expr& b = *e.args[1];
      SB_TRY(visit(a));
      SB_TRY(visit(b));
      if (e.bop == BinOp::And || e.bop == BinOp::Or) {
        if (a.type != DType::Bool || b.type != DType::Bool)
          return make_error(
              e.loc, std::string("'") + binop_symbol(e.bop) + "' needs comparisons on both sides");
        e.type = DType::Bool;
        return {};
      }
      if (a.type == DType::Bool || b.type == DType::Bool)
        return make_error(e.loc, std::string("'") + binop_symbol(e.bop) +
                                     "' cannot take a comparison as an operand; use select()");
      DType t;
      SB_TRY(c_.unify(e, a, b, t));
      bool cmp = e.bop >= BinOp::Lt && e.bop <= BinOp::Ne;
      if (e.bop == BinOp::Mod && !is_int(t)) return make_error(e.loc, "'%' needs integer operands");
      if (cmp) {
        if (is_literal(t)) {
          DType c = t == DType::FloatLit ? DType::F64 : DType::Index;
          SB_TRY(settle(a, c));
          SB_TRY(settle(b, c));
        }
        e.type = DType::Bool;
      } else {
        e.type = t;
      }
      return {};
    }
    Status visit_call(Expr& e) override {
      for (auto& a : e.args) SB_TRY(visit(*a));
      return c_.type_call(e);
    }
    Status visit_cast(Expr& e) override {
      Expr& a = *e.args[0];
      SB_TRY(visit(a));
      if (!is_numeric(a.type))
        return make_error(e.loc, std::string("cannot cast ") + dtype_name(a.type) + " to " +
                                     dtype_name(e.cast_to));
      if (is_literal(a.type))
        SB_TRY(settle(a, a.type == DType::FloatLit ? DType::F64 : DType::Index));
      e.type = e.cast_to;
      return {};
    }
    Status visit_reduce(Expr& e) override {
      IndexVar& v = st_.vars[e.ref];
      SB_TRY(visit(*v.lo));
      SB_TRY(c_.expect_type(*v.lo, DType::Index, "the lower bound of '" + v.name + "'"));
      SB_TRY(visit(*v.hi));
      SB_TRY(c_.expect_type(*v.hi, DType::Index, "the upper bound of '" + v.name + "'"));
      SB_TRY(visit(*e.args[0]));
      if (!is_numeric(e.args[0]->type))
        return make_error(e.loc, std::string("cannot ") + reduce_name(e.rop) + " over " +
                                     dtype_name(e.args[0]->type));
      if (e.rop == ReduceOp::ArgMax || e.rop == ReduceOp::ArgMin) {  // an i64 index
        Expr& body = *e.args[0];
        if (is_literal(body.type))
          SB_TRY(settle(body, body.type == DType::FloatLit ? DType::F64 : DType::I64));
        e.type = DType::I64;
        return {};
      }
      e.type = e.args[0]->type;
      return {};
    }
    Status visit_name(Expr&) override {
      SB_ASSERT(false, "unresolved name survived resolution");
      return {};
    }

   private:
    Checker& c_;
    Statement& st_;
  };

  Status type(Expr& e, Statement& st) { return Typer(*this, st).visit(e); }

  Spec& s_;
  int cur_ = 0;
  std::map<int, bool> read_;
};

}  // namespace

Status typecheck(Spec& spec) {
  Checker c(spec);
  return c.run();
}

Status check_size_points(Spec& spec) {
  Checker c(spec);
  return c.points();
}

}  // namespace sb
