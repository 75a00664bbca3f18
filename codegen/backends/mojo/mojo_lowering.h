// The mojo backend's statement lowering (emit_mojo.cpp: MojoLowering), for another Mojo printer:
// the mojo_gpu kernels (backends/mojo_gpu/) print their statements' expressions exactly as the
// mojo backend prints them, over the same names (tensors as Pointers named after the tensor,
// sizes as Int, index variables as Int named var_name(ref)), with the same helpers and math.
// Scalar form only: no SIMD mode, no strip-mining, no running scans.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "backends/mojo/py_writer.h"
#include "ir/ir.h"

namespace sb {

// Precedence of Mojo (Python's), higher binds tighter; extent() and expr() take a minimum.
enum MojoPrec {
  kMojoPrecTernary = 1,
  kMojoPrecOr = 2,
  kMojoPrecAnd = 3,
  kMojoPrecCmp = 5,
  kMojoPrecAdd = 10,
  kMojoPrecMul = 11,
  kMojoPrecUnary = 12,
  kMojoPrecPrimary = 14,
};

// What a file's statements need besides their kernels: math imports and helper functions.
class MojoNeeds {
 public:
  MojoNeeds();
  ~MojoNeeds();
  MojoNeeds(const MojoNeeds&) = delete;
  MojoNeeds& operator=(const MojoNeeds&) = delete;
  // The names to import for the math functions and helpers used, by module ("std.math": exp,
  // log, ...).
  std::map<std::string, std::set<std::string>> imports() const;
  // The definitions of the helpers used (sb_max, sb_exp_f64, ...), each followed by two empty
  // lines; "" when none.
  std::string helpers() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// One statement's lowering to Mojo, scalar form.
class MojoStmt {
 public:
  MojoStmt(const Spec& spec, const Statement& st, MojoNeeds& needs);
  ~MojoStmt();
  MojoStmt(MojoStmt&&) noexcept;
  MojoStmt(const MojoStmt&) = delete;
  MojoStmt& operator=(const MojoStmt&) = delete;

  const Statement& stmt() const;
  // The Mojo name of index variable `ref` (unique within the statement).
  const std::string& var_name(int ref) const;
  // The Mojo name of tensor `t` / size `s`, recording the use.
  std::string tensor_name(int t);
  std::string size_name(int s);
  // Extent `d` of tensor `t`, and the product of all its extents ("1" for a scalar), at
  // precedence >= `min_prec`.
  std::string extent(int t, size_t d, int min_prec);
  std::string element_count(int t);
  // `e` at precedence >= `min_prec`; hoisted code (reduction loops, guarded loads) goes to `w`.
  std::string expr(const Expr& e, PyWriter& w, int min_prec = 0);
  // `out[flat] = rhs` for the statement, its output indices bound, after the rhs's hoisted code.
  void assign(PyWriter& w);
  // Prints `text` (a primary expression) in place of node `e` (matched by address).
  void set_override(const Expr* e, const std::string& text);
  void clear_overrides();
  // The identity of reduction `op` over `t`, and the statement folding `value` into `acc`.
  std::string identity(ReduceOp op, DType t);
  std::string update(ReduceOp op, DType t, const std::string& acc, const std::string& value);

  const std::set<int>& used_tensors() const;
  const std::set<int>& used_sizes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Spec names as Mojo identifiers (sb_u_<name> where a name is one the generated code uses).
std::string mojo_ident(const std::string& name);
// The Mojo scalar type of a value type: Float32, Int64, ...
const char* mojo_scalar_type(DType t);
// The Mojo DType of a value type: DType.float32, ...
const char* mojo_dtype_name(DType t);
// A section banner in # comments.
std::string mojo_section(const std::string& title);
// The shared file header (file_header, emit_common.h) with # comments.
std::string mojo_hash_comments(const std::string& text);

}  // namespace sb
