// Affine analysis of integer expressions (subscripts, range bounds, shapes), written once for
// the bounds check (check/bounds.cpp), the CUDA shape matchers and stencil halos
// (backends/cuda), the Mojo vectoriser's unit-stride test, the MLIR printer's indexing maps and
// the scan matcher (lower/patterns.cpp).
//
// An affine form is
//
//   constant + sum(vars[v] * v) + sum(sizes[s] * s) + sum(atom.coef * atom.expr)
//
// over index variables v (Statement::vars), sizes s (Spec::sizes) and atoms: subtrees that the
// caller chose to keep whole (a gathered read, a var-free `K / 2`), see AtomRule. Coefficients
// are integers; none is stored as zero. decompose() says "not affine" with nullopt.
//
// Atoms that are products of sizes and literals are compared by value, not by tree: `G * COG`
// and `COG * G` merge, and `2 * B * T` is twice `B * T` (size_product).
//
// Every step is overflow-checked: `overflow` is set (and stays set) once the constant or a
// coefficient leaves the 64-bit range. A form with `overflow` is not exact; the bounds check
// reports it as an error, every other caller treats it as not affine.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace sb {

struct AffineAtom {
  int64_t coef = 0;
  const Expr* expr = nullptr;  // a node of the decomposed tree; the form points into it
};

struct Affine {
  int64_t constant = 0;
  std::map<int, int64_t> vars;   // index variable -> non-zero coefficient
  std::map<int, int64_t> sizes;  // size parameter -> non-zero coefficient
  std::vector<AffineAtom> atoms;  // in the order the decomposition met them
  bool overflow = false;

  static Affine of_constant(int64_t c);
  static Affine of_var(int v);
  static Affine of_size(int s);

  // this += k * o. Atoms of the same node, of equal trees or of the same product of sizes merge;
  // a coefficient that becomes zero is dropped.
  void add(const Affine& o, int64_t k = 1);
  Affine operator+(const Affine& o) const;
  Affine operator-(const Affine& o) const;
  Affine scaled(int64_t k) const;
  // A copy with `overflow` also set when `o` is.
  Affine with_overflow(bool o) const;

  // The coefficient of index variable v / size s (0 when absent).
  int64_t var(int v) const;
  int64_t size(int s) const;
  // No index variable, size or atom: the form is its constant.
  bool is_constant() const { return vars.empty() && sizes.empty() && atoms.empty(); }
  // No index variable (sizes, atoms and the constant may remain).
  bool var_free() const { return vars.empty(); }
  // Whether index variable v has a non-zero coefficient.
  bool uses_var(int v) const { return vars.count(v) != 0; }
};

// Which subtrees decompose() keeps whole as atoms: asked of a node that has no affine form of
// its own (a Read, a Call, a Div, a product of two non-constant forms, ...). Empty: none.
using AtomRule = std::function<bool(const Expr&)>;

// The affine form of integer expression `e`, or nullopt when it is not affine: a node other than
// an integer literal, size, index variable, negation, +, - or * by a constant form, unless
// `atom` accepts it whole.
std::optional<Affine> decompose(const Expr& e, const AtomRule& atom = {});

// True when `e` contains no index variable, tensor read or reduction: a function of sizes and
// literals only, the same at every point of a statement's domain. As an AtomRule it keeps such
// subtrees (`K / 2`) whole.
bool var_free(const Expr& e);

// Whether index variable `v` of `st` has a range whose bounds are both var_free: the same range
// at every point of the domain (a reduction's `k in 0..K`), so that an affine subscript takes its
// extremes at the range's ends. False for a variable without a range (an output index).
bool fixed_range(const Statement& st, int v);

// Whether `e` uses index variable `var`. With `st`, also through the ranges of the reductions
// nested in `e` (whose bounds live in st.vars, not under the Reduce node).
bool depends_on(const Expr& e, int var, const Statement* st = nullptr);

// Whether subscript `sub` of dimension `d` of tensor `t`, in statement `st`, is inside that
// dimension by construction: a bare index variable whose range is exactly [0, extent) (an output
// index of a dimension the same as the output's, or a reduction over 0..extent).
bool obviously_inside(const Spec& spec, const Statement& st, const Expr& sub, int t, size_t d);

// A subscript of a read under a boundary rule that may fall outside its tensor
// (boundary_checks).
struct BoundaryCheck {
  int tensor = -1;
  size_t dim = 0;
  const Expr* sub = nullptr;
  bool varies = false;     // it uses `var`: it takes its extremes at both ends of var's range
  std::vector<int> spans;  // the variables of `unbound` it uses, each with a fixed range
};

// The subscripts of the reads of `e` (but the subtrees `skip` holds) under a boundary rule that
// are not obviously_inside: the checks under which, all of them holding at every corner (each
// `varies` subscript at both ends of var's range, each variable of `spans` at both ends of its
// range), every such read of a range of `var` is inside its tensor, with the variables not in
// `unbound` bound. Affine subscripts take their extremes at those corners; a part of a subscript
// that uses neither `var` nor a variable of `unbound` (`(o / COG) * CIG`) is one value under the
// bindings. nullopt when that cannot be put so: a subscript that is not affine in `var` and
// `unbound`, or that uses a variable of `unbound` (one of a reduction nested in `e`) whose range
// is not fixed. The printers' split of a loop into a form
// without boundary handling and one with it (cpu: StmtLowering::inside_condition; mojo:
// MojoLowering::uniform_condition; mlir: Body::inside_condition) reads this, each printing the
// checks in its language.
std::optional<std::vector<BoundaryCheck>> boundary_checks(
    const Spec& spec, const Statement& st, const Expr& e, int var, const std::set<int>& unbound,
    const std::function<bool(const Expr&)>& skip = {});

// The corners at which check `c` of boundary_checks(..., var, ...) is tested: each a list of
// (index variable, at its range's last value rather than its first), `var` first where the check
// varies with it, then the variables of c.spans. One empty corner for a check that uses neither.
std::vector<std::vector<std::pair<int, bool>>> check_corners(const BoundaryCheck& c, int var);

// `a - v` when `a` has coefficient 1 on index variable v (a subscript `v + offset`), else nullopt.
std::optional<Affine> offset_from(const Affine& a, int v);

// The value of `a` at `sizes` and index-variable values `vars` (indexed like Statement::vars);
// atoms are evaluated with eval_int_checked. nullopt on overflow (or when `a.overflow`).
std::optional<int64_t> evaluate(const Affine& a, const SizePoint& sizes,
                                const std::vector<int64_t>& vars = {});

// The inclusive range [lo, hi] of an atom's value, as expressions affine in sizes (the declared
// `init` range of a gathered i32 input); nullptr, nullptr when the atom has none.
using AtomRange = std::function<std::pair<const Expr*, const Expr*>(const Expr& atom)>;

// The least (want_max = false) or greatest value of `a` over the half-open ranges of the index
// variables of `st` (lo <= v < hi), with each atom in its range from `atom_range`, as a form in
// sizes only. Variables are eliminated from the last one, since a range may use earlier
// variables. nullopt when a range bound is not affine or an atom has no range.
std::optional<Affine> extreme(Affine a, const Statement& st, bool want_max,
                              const AtomRange& atom_range = {});

// True when the sizes-only form `a` is >= 0 for every assignment of sizes >= 1. Its atoms may be
// var-free quotients and products of sizes (from shapes and ranges, typecheck.cpp): a quotient
// A / q (the typecheck makes its dividend at least 0, where C's division is the floor; q a
// positive literal or a size) with a negative coefficient is bounded through A: q * (A / q) <= A
// for a literal q, A / q <= A otherwise; a quotient or product of non-negative factors with a
// positive coefficient is bounded by 0. Any other atom leaves the form unproven (false).
bool nonnegative_for_all_sizes(const Affine& a);

// A product of sizes and integer literals, `k * s1 * ... * sn`: the literal factor and the sizes,
// sorted, with repeats.
struct SizeProduct {
  int64_t k = 1;
  std::vector<int> sizes;
};

// `x` as a product of sizes and integer literals (`G * COG`, `2 * B * T`, `N`), or nullopt when it
// is not one (or k overflows).
std::optional<SizeProduct> size_product(const Expr& x);

// Makes and owns the product nodes of forms that an analysis builds (a bound of a quotient times a
// size): one node per product, so that the forms' atoms merge. The forms must not outlive it.
class SizeProducts {
 public:
  // The form of k * s1 * ... * sn: a constant, k times a size, or an atom of coefficient k.
  Affine product(int64_t k, std::vector<int> sizes);
  // The var-free form `a` times k and the sizes `by`. nullopt when `a` has an index variable, or
  // an atom other than a product of sizes while `by` is not empty.
  std::optional<Affine> times(const Affine& a, int64_t k, const std::vector<int>& by);

 private:
  std::map<std::vector<int>, ExprPtr> nodes_;
};

// A bound of a quotient: a form E in sizes such that floor(A / q) <= E - 1 for every integer A
// with 0 <= A <= max_a, where max_a is a form in sizes (an extreme()) and q a positive literal
// or a size. It holds when q * E - 1 - max_a >= 0 for all sizes (nonnegative_for_all_sizes),
// since then A <= q * E - 1; E is found by dividing max_a + 1 by q term by term (rounding up for
// a literal; for a size, the terms that hold it lose it, the others count whole where positive
// and not at all where negative): `G * COG - 1` by COG gives G. Where that is not proven,
// E = max_a + 1 (floor(A / q) <= A). nullopt on overflow.
std::optional<Affine> quotient_limit(const Affine& max_a, const Expr& q, SizeProducts& products);

}  // namespace sb
