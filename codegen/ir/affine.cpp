#include "ir/affine.h"

#include <algorithm>

#include "ir/build.h"
#include "ir/visitor.h"

namespace sb {

namespace {

// acc += k * x; true on overflow.
bool mul_add(int64_t& acc, int64_t k, int64_t x) {
  int64_t p;
  return __builtin_mul_overflow(k, x, &p) || __builtin_add_overflow(acc, p, &acc);
}

void add_terms(std::map<int, int64_t>& into, const std::map<int, int64_t>& from, int64_t k,
               bool& overflow) {
  for (auto [t, c] : from) {
    overflow = mul_add(into[t], k, c) || overflow;
    if (into[t] == 0) into.erase(t);
  }
}

class Decompose : public ExprFunctor<std::optional<Affine>()> {
 public:
  explicit Decompose(const AtomRule& atom) : atom_(atom) {}

  // The node's own form, or the node whole as an atom when the rule takes it.
  std::optional<Affine> of(const Expr& e) {
    std::optional<Affine> f = visit(e);
    if (f || !atom_ || !atom_(e)) return f;
    Affine a;
    a.atoms.push_back({1, &e});
    return a;
  }

 protected:
  using Form = std::optional<Affine>;

  Form visit_int_lit(const Expr& e) override { return Affine::of_constant(e.ival); }
  Form visit_size_ref(const Expr& e) override { return Affine::of_size(e.ref); }
  Form visit_index_var(const Expr& e) override { return Affine::of_var(e.ref); }
  Form visit_unary(const Expr& e) override {
    if (e.uop != UnOp::Neg) return std::nullopt;
    Form a = of(*e.args[0]);
    if (!a) return std::nullopt;
    return a->scaled(-1);
  }
  Form visit_binary(const Expr& e) override {
    if (e.bop != BinOp::Add && e.bop != BinOp::Sub && e.bop != BinOp::Mul) return std::nullopt;
    Form a = of(*e.args[0]);
    if (!a) return std::nullopt;
    Form b = of(*e.args[1]);
    if (!b) return std::nullopt;
    if (e.bop == BinOp::Add) return *a + *b;
    if (e.bop == BinOp::Sub) return *a - *b;
    if (a->is_constant()) return b->scaled(a->constant).with_overflow(a->overflow);
    if (b->is_constant()) return a->scaled(b->constant).with_overflow(b->overflow);
    return std::nullopt;
  }
  Form visit_float_lit(const Expr&) override { return std::nullopt; }
  Form visit_name(const Expr&) override { return std::nullopt; }
  Form visit_const(const Expr&) override { return std::nullopt; }
  Form visit_read(const Expr&) override { return std::nullopt; }
  Form visit_call(const Expr&) override { return std::nullopt; }
  Form visit_cast(const Expr&) override { return std::nullopt; }
  Form visit_reduce(const Expr&) override { return std::nullopt; }

 private:
  const AtomRule& atom_;
};

class DependsOn : public ExprVisitor {
 public:
  DependsOn(int var, const Statement* st) : var_(var), st_(st) {}
  bool found = false;

  void visit(const Expr& e) override {
    if (!found) ExprVisitor::visit(e);
  }

 protected:
  void visit_index_var(const Expr& e) override { found = found || e.ref == var_; }
  void visit_reduce(const Expr& e) override {
    if (st_) {
      const IndexVar& v = st_->vars[e.ref];
      if (v.lo) visit(*v.lo);
      if (v.hi) visit(*v.hi);
    }
    visit_children(e);
  }

 private:
  int var_;
  const Statement* st_;
};

}  // namespace

Affine Affine::of_constant(int64_t c) {
  Affine a;
  a.constant = c;
  return a;
}

Affine Affine::of_var(int v) {
  Affine a;
  a.vars[v] = 1;
  return a;
}

Affine Affine::of_size(int s) {
  Affine a;
  a.sizes[s] = 1;
  return a;
}

void Affine::add(const Affine& o, int64_t k) {
  overflow = overflow || o.overflow || mul_add(constant, k, o.constant);
  add_terms(vars, o.vars, k, overflow);
  add_terms(sizes, o.sizes, k, overflow);
  for (const AffineAtom& t : o.atoms) {
    int64_t c;
    overflow = __builtin_mul_overflow(k, t.coef, &c) || overflow;
    // Atoms of the same node, or of equal trees (a shape and its copy in a range), merge; so do
    // products of the same sizes (`G * COG` and `COG * G`), counting c * (k2 * P) as
    // (c * k2 / k1) * (k1 * P) where k1 divides it.
    auto it = atoms.begin();
    for (; it != atoms.end(); ++it) {
      if (it->expr == t.expr || same_expr(*it->expr, *t.expr)) break;
      const std::optional<SizeProduct> p1 = size_product(*it->expr);
      const std::optional<SizeProduct> p2 = p1 ? size_product(*t.expr) : std::nullopt;
      if (!p2 || p1->sizes != p2->sizes || p1->k == 0) continue;
      int64_t ck, merged;
      if (__builtin_mul_overflow(c, p2->k, &ck)) continue;
      if (p1->k == -1) {  // INT64_MIN % -1 is undefined
        if (__builtin_mul_overflow(ck, -1, &merged)) continue;
      } else {
        if (ck % p1->k != 0) continue;
        merged = ck / p1->k;
      }
      c = merged;
      break;
    }
    if (it == atoms.end()) {
      if (c != 0) atoms.push_back({c, t.expr});
    } else {
      overflow = __builtin_add_overflow(it->coef, c, &it->coef) || overflow;
      if (it->coef == 0) atoms.erase(it);
    }
  }
}

Affine Affine::operator+(const Affine& o) const {
  Affine r = *this;
  r.add(o, 1);
  return r;
}

Affine Affine::operator-(const Affine& o) const {
  Affine r = *this;
  r.add(o, -1);
  return r;
}

Affine Affine::scaled(int64_t k) const {
  Affine r;
  r.add(*this, k);
  return r;
}

Affine Affine::with_overflow(bool o) const {
  Affine r = *this;
  r.overflow = r.overflow || o;
  return r;
}

int64_t Affine::var(int v) const {
  auto it = vars.find(v);
  return it == vars.end() ? 0 : it->second;
}

int64_t Affine::size(int s) const {
  auto it = sizes.find(s);
  return it == sizes.end() ? 0 : it->second;
}

std::optional<Affine> decompose(const Expr& e, const AtomRule& atom) {
  return Decompose(atom).of(e);
}

bool var_free(const Expr& e) {
  return !any_node(e, [](const Expr& n) {
    return n.kind == ExprKind::IndexVar || n.kind == ExprKind::Read ||
           n.kind == ExprKind::Reduce;
  });
}

bool fixed_range(const Statement& st, int v) {
  const IndexVar& iv = st.vars[static_cast<size_t>(v)];
  return iv.lo && iv.hi && var_free(*iv.lo) && var_free(*iv.hi);
}

bool depends_on(const Expr& e, int var, const Statement* st) {
  DependsOn d(var, st);
  d.visit(e);
  return d.found;
}

bool obviously_inside(const Spec& spec, const Statement& st, const Expr& sub, int t, size_t d) {
  if (sub.kind != ExprKind::IndexVar) return false;
  const Expr& extent = *spec.tensors[static_cast<size_t>(t)].shape[d];
  if (static_cast<size_t>(sub.ref) < st.rank())
    return same_expr(*spec.tensors[static_cast<size_t>(st.out)].shape[static_cast<size_t>(sub.ref)],
                     extent);
  const IndexVar& v = st.vars[static_cast<size_t>(sub.ref)];
  return v.lo && v.hi && v.lo->kind == ExprKind::IntLit && v.lo->ival == 0 &&
         same_expr(*v.hi, extent);
}

std::optional<std::vector<BoundaryCheck>> boundary_checks(
    const Spec& spec, const Statement& st, const Expr& e, int var, const std::set<int>& unbound,
    const std::function<bool(const Expr&)>& skip) {
  std::vector<BoundaryCheck> checks;
  bool ok = true;
  // A subtree that uses neither `var` nor a variable of `unbound`, and reads nothing, has one
  // value under the bindings (a group's first channel, `(o / COG) * CIG`): an atom, tested as
  // it is.
  const AtomRule bound = [&](const Expr& n) {
    if (any_node(n, [](const Expr& m) {
          return m.kind == ExprKind::Read || m.kind == ExprKind::Reduce;
        }))
      return false;
    if (depends_on(n, var, &st)) return false;
    return std::none_of(unbound.begin(), unbound.end(),
                        [&](int u) { return depends_on(n, u, &st); });
  };
  std::function<void(const Expr&)> walk = [&](const Expr& x) {
    if (!ok || (skip && skip(x))) return;
    if (x.kind == ExprKind::Read &&
        spec.tensors[static_cast<size_t>(x.ref)].boundary != Boundary::None) {
      for (size_t d = 0; d < x.args.size(); ++d) {
        if (obviously_inside(spec, st, *x.args[d], x.ref, d)) continue;
        const std::optional<Affine> a = decompose(*x.args[d], bound);
        if (!a || a->overflow) {
          ok = false;
          return;
        }
        BoundaryCheck c{x.ref, d, x.args[d].get(), a->uses_var(var), {}};
        for (int u : unbound) {
          if (!depends_on(*x.args[d], u, &st)) continue;
          if (!fixed_range(st, u) || !a->uses_var(u)) {
            ok = false;
            return;
          }
          c.spans.push_back(u);
        }
        checks.push_back(std::move(c));
      }
    }
    for (const auto& a : x.args) walk(*a);
  };
  walk(e);
  if (!ok) return std::nullopt;
  return checks;
}

std::vector<std::vector<std::pair<int, bool>>> check_corners(const BoundaryCheck& c, int var) {
  std::vector<int> vars;
  if (c.varies) vars.push_back(var);
  vars.insert(vars.end(), c.spans.begin(), c.spans.end());
  std::vector<std::vector<std::pair<int, bool>>> corners;
  for (size_t corner = 0; corner < (size_t{1} << vars.size()); ++corner) {
    std::vector<std::pair<int, bool>> at;
    for (size_t b = 0; b < vars.size(); ++b) at.emplace_back(vars[b], ((corner >> b) & 1) != 0);
    corners.push_back(std::move(at));
  }
  return corners;
}

std::optional<Affine> offset_from(const Affine& a, int v) {
  if (a.var(v) != 1) return std::nullopt;
  Affine r = a;
  r.vars.erase(v);
  return r;
}

std::optional<int64_t> evaluate(const Affine& a, const SizePoint& sizes,
                                const std::vector<int64_t>& vars) {
  if (a.overflow) return std::nullopt;
  int64_t v = a.constant;
  for (auto [s, c] : a.sizes) {
    SB_ASSERT(s >= 0 && static_cast<size_t>(s) < sizes.size(), "size ref out of range");
    if (mul_add(v, c, sizes[s])) return std::nullopt;
  }
  for (auto [x, c] : a.vars) {
    SB_ASSERT(x >= 0 && static_cast<size_t>(x) < vars.size(), "index variable without a value");
    if (mul_add(v, c, vars[x])) return std::nullopt;
  }
  for (const AffineAtom& t : a.atoms) {
    const std::optional<int64_t> x = eval_int_checked(*t.expr, sizes, vars, nullptr);
    if (!x || mul_add(v, t.coef, *x)) return std::nullopt;
  }
  return v;
}

std::optional<Affine> extreme(Affine a, const Statement& st, bool want_max,
                              const AtomRange& atom_range) {
  // An atom lies in its declared range, whatever the indices.
  const std::vector<AffineAtom> atoms = std::move(a.atoms);
  a.atoms.clear();
  for (const AffineAtom& t : atoms) {
    const auto range = atom_range ? atom_range(*t.expr)
                                  : std::pair<const Expr*, const Expr*>{nullptr, nullptr};
    const Expr* b = (t.coef > 0) == want_max ? range.second : range.first;
    if (!b) return std::nullopt;
    // The range is built from sizes and literals (typecheck.cpp): its products and quotients of
    // sizes are atoms, as in a shape.
    std::optional<Affine> bound = decompose(*b, var_free);
    if (!bound) return std::nullopt;
    a.add(*bound, t.coef);
  }
  // Inner variables' ranges may mention outer ones, so eliminate from the last variable.
  for (int v = static_cast<int>(st.vars.size()) - 1; v >= 0; --v) {
    auto it = a.vars.find(v);
    if (it == a.vars.end()) continue;
    const int64_t c = it->second;
    a.vars.erase(it);
    const IndexVar& iv = st.vars[v];
    const bool take_hi = (c > 0) == want_max;
    // A bound may hold a quotient or a product of sizes (a range copied from a shape): an atom,
    // where the quotients' dividends are at least 0 (IndexVar::floor_bounds).
    std::optional<Affine> bound =
        decompose(take_hi ? *iv.hi : *iv.lo, iv.floor_bounds ? AtomRule(var_free) : AtomRule());
    if (!bound) return std::nullopt;
    if (take_hi && __builtin_sub_overflow(bound->constant, 1, &bound->constant))  // half-open
      bound->overflow = true;
    a.add(*bound, c);
  }
  return a;
}

namespace {

// Whether the var-free atom `x` (a quotient or a product of sizes in a shape) is at least 0 for
// every assignment of sizes >= 1 whose shapes the typecheck accepted: a quotient whose dividend
// it checked to be at least 0 and whose divisor is positive, or a product of two factors that
// are.
bool nonnegative_atom(const Expr& x) {
  if (x.kind != ExprKind::Binary) return false;
  if (x.bop == BinOp::Div)
    return (x.args[1]->kind == ExprKind::IntLit && x.args[1]->ival > 0) ||
           x.args[1]->kind == ExprKind::SizeRef;
  if (x.bop != BinOp::Mul) return false;
  for (const auto& f : x.args) {
    std::optional<Affine> a = decompose(*f, var_free);
    if (!a || a->overflow || !a->vars.empty() || !nonnegative_for_all_sizes(*a)) return false;
  }
  return true;
}

}  // namespace

bool nonnegative_for_all_sizes(const Affine& form) {
  SB_ASSERT(form.vars.empty(), "nonnegative_for_all_sizes of a form with indices");
  // Atoms first. A quotient floor(A / q) (A >= 0: the typecheck's dividend rule; q >= 1) with a
  // negative coefficient c is replaced by a bound of A: c * floor(A / q) >= (c / q) * A when q
  // is a literal that divides c, else >= c * A; an atom that is at least 0 with a positive
  // coefficient only adds, so it is bounded by its least value (a product of sizes k * N * M by
  // k, every size being at least 1; any other by 0); any other atom leaves the form unproven. A
  // replacement may bring atoms of its own.
  // Every replacement first (it may cancel an atom that would otherwise be dropped), then the
  // atoms left.
  Affine a = form;
  for (int round = 0;; ++round) {
    if (round == 8 || a.overflow) return false;
    auto floor_rule = [](const AffineAtom& t) {
      return t.expr->kind == ExprKind::Binary && t.expr->bop == BinOp::Div && t.coef < 0 &&
             nonnegative_atom(*t.expr);
    };
    auto it = std::find_if(a.atoms.begin(), a.atoms.end(), floor_rule);
    if (it == a.atoms.end()) break;
    const AffineAtom t = *it;
    a.atoms.erase(it);
    std::optional<Affine> dividend = decompose(*t.expr->args[0], var_free);
    if (!dividend || !dividend->vars.empty()) return false;
    // c * (A / q) >= (c / q) * A when q is a literal dividing c, else >= c * A (q >= 1).
    const Expr& q = *t.expr->args[1];
    const bool exact = q.kind == ExprKind::IntLit && t.coef % q.ival == 0;
    a.add(*dividend, exact ? t.coef / q.ival : t.coef);
  }
  // Every term left is nondecreasing in each size, so the form is least where every size is 1:
  // there a product of sizes k * N * M is k (>= 1 when k is), any other non-negative atom at
  // least 0.
  int64_t at_ones = a.constant;
  for (const AffineAtom& t : a.atoms) {
    if (t.coef < 0 || !nonnegative_atom(*t.expr)) return false;
    const std::optional<SizeProduct> p = size_product(*t.expr);
    int64_t least = 0;
    if (p && p->k > 0 && __builtin_mul_overflow(t.coef, p->k, &least)) return true;  // huge
    if (__builtin_add_overflow(at_ones, least, &at_ones)) return true;  // least > 0: past 2^63
  }
  a.atoms.clear();
  if (a.overflow) return false;
  for (auto [s, c] : a.sizes) {
    if (c < 0) return false;
    if (__builtin_add_overflow(at_ones, c, &at_ones)) return true;  // c > 0: grows past 2^63
  }
  return at_ones >= 0;
}

std::optional<SizeProduct> size_product(const Expr& x) {
  switch (x.kind) {
    case ExprKind::IntLit:
      return SizeProduct{x.ival, {}};
    case ExprKind::SizeRef:
      return SizeProduct{1, {x.ref}};
    case ExprKind::Unary: {
      if (x.uop != UnOp::Neg) return std::nullopt;
      std::optional<SizeProduct> a = size_product(*x.args[0]);
      if (!a || __builtin_mul_overflow(a->k, -1, &a->k)) return std::nullopt;
      return a;
    }
    case ExprKind::Binary: {
      if (x.bop != BinOp::Mul) return std::nullopt;
      std::optional<SizeProduct> a = size_product(*x.args[0]);
      if (!a) return std::nullopt;
      std::optional<SizeProduct> b = size_product(*x.args[1]);
      if (!b || __builtin_mul_overflow(a->k, b->k, &a->k)) return std::nullopt;
      a->sizes.insert(a->sizes.end(), b->sizes.begin(), b->sizes.end());
      std::sort(a->sizes.begin(), a->sizes.end());
      return a;
    }
    default:
      return std::nullopt;
  }
}

Affine SizeProducts::product(int64_t k, std::vector<int> sizes) {
  std::sort(sizes.begin(), sizes.end());
  if (sizes.empty()) return Affine::of_constant(k);
  if (sizes.size() == 1) return Affine::of_size(sizes[0]).scaled(k);
  ExprPtr& node = nodes_[sizes];
  if (!node) {
    auto size = [](int s) {
      ExprPtr e = ir_node(ExprKind::SizeRef, DType::Index, Loc{});
      e->ref = s;
      return e;
    };
    node = size(sizes[0]);
    for (size_t i = 1; i < sizes.size(); ++i)
      node = ir_binary(BinOp::Mul, std::move(node), size(sizes[i]));
  }
  Affine a;
  if (k != 0) a.atoms.push_back({k, node.get()});
  return a;
}

std::optional<Affine> SizeProducts::times(const Affine& a, int64_t k,
                                          const std::vector<int>& by) {
  if (!a.vars.empty()) return std::nullopt;
  Affine r;
  r.overflow = a.overflow;
  // r += c * k * (the product of `sizes` and `by`)
  auto add = [&](int64_t c, int64_t lit, std::vector<int> sizes) {
    int64_t ck;
    if (__builtin_mul_overflow(c, k, &ck) || __builtin_mul_overflow(ck, lit, &ck)) {
      r.overflow = true;
      return;
    }
    sizes.insert(sizes.end(), by.begin(), by.end());
    r.add(product(1, std::move(sizes)), ck);
  };
  add(a.constant, 1, {});
  for (auto [s, c] : a.sizes) add(c, 1, {s});
  for (const AffineAtom& t : a.atoms) {
    if (const std::optional<SizeProduct> p = size_product(*t.expr)) {
      add(t.coef, p->k, p->sizes);
    } else if (by.empty()) {
      Affine x;
      x.atoms.push_back({1, t.expr});
      int64_t ck;
      if (__builtin_mul_overflow(t.coef, k, &ck)) r.overflow = true;
      else r.add(x, ck);
    } else {
      return std::nullopt;
    }
  }
  return r;
}

std::optional<Affine> quotient_limit(const Affine& max_a, const Expr& q, SizeProducts& products) {
  if (!max_a.vars.empty() || max_a.overflow) return std::nullopt;
  const Affine n = max_a + Affine::of_constant(1);  // A < n
  Affine e;
  std::optional<Affine> qe;  // q * e
  if (q.kind == ExprKind::IntLit && q.ival > 0) {
    // Every term divided by d, rounded up: q * E - n has coefficients in [0, d - 1].
    const int64_t d = q.ival;
    auto up = [d](int64_t c) { return c / d + (c % d > 0 ? 1 : 0); };
    e.add(Affine::of_constant(up(n.constant)));
    for (auto [s, c] : n.sizes) e.add(Affine::of_size(s), up(c));
    for (const AffineAtom& t : n.atoms) {
      Affine x;
      x.atoms.push_back({1, t.expr});
      e.add(x, up(t.coef));
    }
    qe = e.scaled(d);
  } else if (q.kind == ExprKind::SizeRef) {
    // A term that holds the size loses it; another counts whole where positive (it is at most q
    // times itself) and not at all where negative.
    const int qs = q.ref;
    if (n.constant > 0) e.add(Affine::of_constant(n.constant));
    for (auto [s, c] : n.sizes)
      if (s == qs) e.add(Affine::of_constant(c));
      else if (c > 0) e.add(Affine::of_size(s), c);
    for (const AffineAtom& t : n.atoms) {
      std::optional<SizeProduct> p = size_product(*t.expr);
      auto at = p ? std::find(p->sizes.begin(), p->sizes.end(), qs) : std::vector<int>::iterator{};
      if (p && at != p->sizes.end()) {
        p->sizes.erase(at);
        int64_t c;
        if (__builtin_mul_overflow(t.coef, p->k, &c)) return std::nullopt;
        e.add(products.product(1, p->sizes), c);
      } else if (t.coef > 0) {
        Affine x;
        x.atoms.push_back({1, t.expr});
        e.add(x, t.coef);
      }
    }
    qe = products.times(e, 1, {qs});
  } else {
    return std::nullopt;
  }
  // n <= q * E; else E = n, as floor(A / q) <= A for A >= 0 and q >= 1.
  if (qe && !e.overflow && !qe->overflow && nonnegative_for_all_sizes(*qe - n)) return e;
  if (n.overflow) return std::nullopt;
  return n;
}

}  // namespace sb
