// What a backend's own printer spells for a loop IR printer (backends/cpu/print_loops.h prints C
// and CUDA C++, backends/mojo/print_loops.h Mojo): the leaves of the checked spec in a kernel
// body, a GPU kernel's own nodes and a host kernel body's running scan (lower/loop_ir.h). A host
// module has none of them, and is printed without leaves. GpuLeaves and HostLeaves below assert
// on the other kind's nodes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "lower/loop_ir.h"
#include "support/diag.h"

namespace sb {

class LoopLeaves {
 public:
  virtual ~LoopLeaves() = default;

  // Precedences below are in the scale of the printer's language: emit_common.h's Prec for C,
  // mojo_lowering.h's MojoPrec for Mojo. A leaf is parenthesized where its own binds less
  // tightly than `min_prec`.

  // The name of the spec statement's index variable `v`.
  virtual std::string index_var(int v) = 0;
  // Extent `dim` of tensor `t`; size `s`.
  virtual std::string extent(int t, int dim, int min_prec) = 0;
  virtual std::string size(int s) = 0;
  // Element `flat` (its text as an operand of any operator) of tensor `t`, as a value of its
  // compute type.
  virtual std::string element(int t, const std::string& flat) = 0;
  // Spec expressions replaced by the text of loop IR values.
  using Overrides = std::vector<std::pair<const Expr*, std::string>>;
  // Spec expression `e` of the statement (`stmt` < 0), or of the spec's statement `stmt` in a
  // kernel of several, its index variables bound and each spec expression of `overrides`
  // replaced by its text (an operand of any operator); may first write the lines it needs.
  virtual std::string spec(int stmt, const Expr& e, int min_prec, const Overrides& overrides) = 0;
  // The statement's assignment at its index variables, each spec expression of `overrides`
  // replaced by its text.
  virtual void compute(const Overrides& overrides) = 0;

  // The reductions with the spec's arithmetic (lower/loop_ir.h): the identity of `op` over
  // `t`; the lines of acc = acc (+) value; the warp-wide reduction `w` of `value` (its text as
  // an argument of a call).
  virtual std::string identity(ReduceOp op, DType t) = 0;
  virtual void fold(const std::string& acc, ReduceOp op, DType t, const std::string& value) = 0;
  virtual std::string warp(loops::WarpOp w, ReduceOp op, DType t, const std::string& value) = 0;
  // The lines folding `value` into element `index` of spec tensor `tensor` atomically.
  virtual void atomic_fold(int tensor, const std::string& index, ReduceOp op, DType t,
                           const std::string& value) = 0;

  // GPU vectors (lower/loop_ir.h): the `lanes` elements of tensor `t` from element `flat` (a
  // multiple of `lanes`, the tensor aligned to them) as one vector load, an operand of any
  // operator; the address of tensor `t` as an integer, an operand of any operator; the line
  // storing `value` to element `flat` of tensor `t`, a vector of `lanes` (0: one element).
  virtual std::string element_vector(int t, const std::string& flat, int lanes) = 0;
  virtual std::string address(int t) = 0;
  virtual void put(int t, const std::string& flat, const std::string& value, int lanes) = 0;

  // A GPU index, as an operand of any operator (a 64-bit integer).
  virtual std::string gpu_index(loops::GpuIndex g) = 0;
  // The block's barrier (with `warp`, the warp's), as a line.
  virtual void barrier(bool warp) = 0;
  // The declaration of shared array `name` of `count` elements of type `t`; with an empty
  // `count`, the kernel's dynamic shared memory as an array of `t`.
  virtual void shared_array(const std::string& name, DType t, const std::string& count) = 0;

  // A host kernel body's running scan `red` (lower/loop_ir.h: FoldRange, ScanWalk), its bounds
  // each an operand of a comparison: the lines folding its terms at [lo, hi) into `acc`; the
  // lines of its walk up to output `end`, its fold so far in `acc`.
  virtual void fold_range(const Expr& red, const std::string& acc, const std::string& lo,
                          const std::string& hi) = 0;
  virtual void scan_walk(const Expr& red, const std::string& acc, const std::string& end) = 0;
};

// The spec's leaves and the reductions' arithmetic spelled by a backend's statement printer `L`
// (StmtLowering for C, MojoStmt or MojoLowering for Mojo: the same calls), its hoisted lines
// written to `w`; a GPU or host printer adds the rest.
template <typename Lowering, typename Writer>
class StmtLeaves : public LoopLeaves {
 public:
  StmtLeaves(Lowering& L, Writer& w) : L_(L), w_(w) {}
  std::string index_var(int v) override { return L_.var_name(v); }
  std::string size(int s) override { return L_.size_name(s); }
  std::string extent(int t, int dim, int min_prec) override {
    return L_.extent(t, static_cast<size_t>(dim), min_prec);
  }
  std::string spec(int stmt, const Expr& e, int min_prec, const Overrides& overrides) override {
    Lowering& L = of(stmt);
    for (const auto& [x, text] : overrides) L.set_override(x, text);
    std::string text = L.expr(e, w_, min_prec);
    if (!overrides.empty()) L.clear_overrides();
    return text;
  }
  // The statement printers of a kernel of several statements: statement `k`'s.
  void set_statements(std::function<Lowering&(int k)> of) { others_ = std::move(of); }
  void compute(const Overrides& overrides) override {
    for (const auto& [e, text] : overrides) L_.set_override(e, text);
    L_.assign(w_);
    L_.clear_overrides();
  }
  std::string identity(ReduceOp op, DType t) override { return L_.identity(op, t); }
  void fold(const std::string& acc, ReduceOp op, DType t, const std::string& value) override {
    w_.line(L_.update(op, t, acc, value));
  }

 protected:
  // The printer of spec statement `stmt`: L_ for the kernel's own (stmt < 0).
  Lowering& of(int stmt) {
    if (stmt < 0) return L_;
    SB_ASSERT(others_ != nullptr, "a spec leaf of another statement in a one-statement kernel");
    return others_(stmt);
  }
  Lowering& L_;
  Writer& w_;
  std::function<Lowering&(int)> others_;
};

// The statement printers of a kernel of several statements (lower/gpu_bodies.h: a fused row
// group), one per spec statement, each made by `make` when first asked for: of() hands them to
// StmtLeaves::set_statements, uses() adds what they all used to a kernel's signature.
template <typename Lowering>
class StatementPrinters {
 public:
  using Make = std::function<std::unique_ptr<Lowering>(int k)>;
  explicit StatementPrinters(Make make) : make_(std::move(make)) {}
  Lowering& of(int k) {
    std::unique_ptr<Lowering>& p = by_stmt_[k];
    if (!p) p = make_(k);
    return *p;
  }
  std::function<Lowering&(int)> of() {
    return [this](int k) -> Lowering& { return of(k); };
  }
  void uses(std::set<int>& tensors, std::set<int>& sizes) const {
    for (const auto& [k, p] : by_stmt_) {
      tensors.insert(p->used_tensors().begin(), p->used_tensors().end());
      sizes.insert(p->used_sizes().begin(), p->used_sizes().end());
    }
  }

 private:
  Make make_;
  std::map<int, std::unique_ptr<Lowering>> by_stmt_;
};

// A GPU printer's leaves: a host kernel body's nodes are not in its kernels.
template <typename Lowering, typename Writer>
class GpuLeaves : public StmtLeaves<Lowering, Writer> {
 public:
  using StmtLeaves<Lowering, Writer>::StmtLeaves;
  void fold_range(const Expr&, const std::string&, const std::string&,
                  const std::string&) override {
    SB_ASSERT(false, "a host running scan's fold of a range in a GPU kernel body");
  }
  void scan_walk(const Expr&, const std::string&, const std::string&) override {
    SB_ASSERT(false, "a host running scan's walk in a GPU kernel body");
  }
};

// A host printer's leaves: a GPU kernel's nodes are not in its bodies.
template <typename Lowering, typename Writer>
class HostLeaves : public StmtLeaves<Lowering, Writer> {
 public:
  using StmtLeaves<Lowering, Writer>::StmtLeaves;
  std::string element(int, const std::string&) override { return fail("a tensor element"); }
  std::string element_vector(int, const std::string&, int) override {
    return fail("a vector of tensor elements");
  }
  std::string address(int) override { return fail("a tensor's address"); }
  void put(int, const std::string&, const std::string&, int) override {
    fail("a store to a tensor element");
  }
  std::string warp(loops::WarpOp, ReduceOp, DType, const std::string&) override {
    return fail("a warp reduction");
  }
  void atomic_fold(int, const std::string&, ReduceOp, DType, const std::string&) override {
    fail("an atomic fold");
  }
  std::string gpu_index(loops::GpuIndex) override { return fail("a GPU index"); }
  void barrier(bool) override { fail("a barrier"); }
  void shared_array(const std::string&, DType, const std::string&) override {
    fail("a shared array");
  }

 private:
  static std::string fail(const char* node) {
    SB_ASSERT(false, std::string(node) + " in a host kernel body");
    return "";
  }
};

}  // namespace sb
