// The mlir backend's printer of a host kernel body (lower/loop_ir.h; lower/host_bodies.h: a long
// running scan's two parallel passes) as MLIR ops in SSA form: scf, arith and memref.
//
// Spellings: an int is an `index` value, a bool an `i1`, a float its spec type. A Let binds a
// name to an SSA value; an Assign, Fold or FoldRange binds it to a new one. Where a mutable
// variable of an enclosing block is assigned inside an If or a serial For, the op yields its
// value (scf.if results, scf.for iter_args), so no variable goes through memory. A parallel For is
// an scf.parallel loop, which may not assign a variable of an enclosing block. Vector and
// unrolled loops print as serial ones. A StackLocal or Register Alloc of constant dimensions is a
// memref.alloca. The nodes the host bodies never use (vectors, calls, heap scratch, GPU nodes,
// Compute, While, Atomic, Return, Evaluate) fail a checked assertion.
#pragma once

#include <string>

#include "ir/ir.h"
#include "lower/loop_ir.h"

namespace sb {

class CodeWriter;

// What the mlir backend's statement printer spells for print_mlir_block: fresh SSA names, the
// spec's leaves and the running scan's nodes. Every value is an SSA name; a leaf may first write
// the ops it needs.
class MlirLeaves {
 public:
  virtual ~MlirLeaves() = default;
  // A new SSA name ("%12"), unique in the function.
  virtual std::string fresh() = 0;
  // The spec statement's index variable `v` now holds `value` (an index value); "" unbinds it.
  virtual void bind_index(int v, const std::string& value) = 0;
  virtual std::string index_var(int v) = 0;
  virtual std::string extent(int t, int dim) = 0;
  virtual std::string size(int s) = 0;
  // Spec expression `e` of the statement at the bound index variables (an integer is an index).
  virtual std::string spec(const Expr& e) = 0;
  virtual std::string float_constant(double v, DType t) = 0;
  // The reductions with the spec's arithmetic: the identity of `op` over `t`; acc (+) value.
  virtual std::string identity(ReduceOp op, DType t) = 0;
  virtual std::string fold(ReduceOp op, DType t, const std::string& acc,
                           const std::string& value) = 0;
  // Running scan `red` (lower/loop_ir.h: FoldRange, ScanWalk): the fold of its terms at [lo, hi)
  // into `acc`, returned; the ops of its walk from the output its statement's innermost index
  // holds up to output `end`, from fold `acc` and its variable's bound value.
  virtual std::string fold_range(const Expr& red, const std::string& acc, const std::string& lo,
                                 const std::string& hi) = 0;
  virtual void scan_walk(const Expr& red, const std::string& acc, const std::string& end) = 0;
};

// Kernel body `b` as MLIR ops into `w` (the header's comment), its leaves spelled by `leaves`.
// After a ScanWalk, its fold and the index variables it moves hold no value: reading one fails
// a checked assertion.
void print_mlir_block(const loops::Block& b, MlirLeaves& leaves, CodeWriter& w);

}  // namespace sb
