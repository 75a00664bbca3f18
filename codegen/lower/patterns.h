// Shape detection on checked statements: the patterns that library-backed or specialised
// strategies implement (GEMM-like contractions, whole-tensor reductions, prefix scans).
//
// Each matcher looks only at the AST of one checked statement (check_spec() has run: types are
// concrete, names resolved, reads proven in bounds) and returns what an emitter needs to call a
// library or a specialised kernel, or nullopt when the statement does not have that shape.
// Matchers never report errors; emitters turn a failed match into a check_variant() error.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"

namespace sb {

// out[i, j] = sum(k in lo..hi: x(i, k) * y(k, j)), optionally inside an elementwise epilogue
// (e.g. `+ bias[j]`, `max(..., 0.0)`, `alpha * ...`).
//   - the output has rank 2; i = vars[0], j = vars[1];
//   - the contraction is the rhs's only Reduce, a Sum over k whose bounds use neither i nor j;
//   - its body is a product of two reads (either order) of rank-2 tensors without a boundary rule,
//     each subscripted by bare index variables: one by {i, k} (either order) and one by {k, j}
//     (either order);
//   - the output, both operands, the product and the sum share one type, f32 or f64.
struct Contraction {
  const Expr* reduce = nullptr;  // the Sum node
  int k = -1;                    // the reduction variable (index into Statement::vars)
  int x = -1;                    // the tensor that carries i (rows of the output)
  int y = -1;                    // the tensor that carries j (columns of the output)
  bool x_trans = false;          // x is read x[k, i] rather than x[i, k]
  bool y_trans = false;          // y is read y[j, k] rather than y[k, j]
  bool epilogue = false;         // the rhs is more than the sum
  DType type = DType::F32;
};
std::optional<Contraction> match_contraction(const Spec& spec, const Statement& st);

// A scalar output computed from one reduction: out = op(k in lo..hi: body(k)), optionally inside
// an elementwise epilogue (e.g. `sqrt(sum(...))`). The body uses no other reduction; the bounds
// use sizes only. Types f32, f64 or i32.
struct ScalarReduction {
  const Expr* reduce = nullptr;
  int k = -1;
  ReduceOp op = ReduceOp::Sum;
  bool epilogue = false;
  DType type = DType::F32;
};
std::optional<ScalarReduction> match_scalar_reduction(const Spec& spec, const Statement& st);

// A prefix scan: out[i] = op(k in 0..i + 1: body(k)) (inclusive) or op(k in 0..i: body(k))
// (exclusive), where the body uses neither i nor another reduction. The rhs is exactly the
// reduction. Types f32, f64 or i32.
struct Scan {
  const Expr* reduce = nullptr;
  int k = -1;
  ReduceOp op = ReduceOp::Sum;
  bool inclusive = true;
  DType type = DType::F32;
};
std::optional<Scan> match_scan(const Spec& spec, const Statement& st);

// The statement that finishes a reduction computed elsewhere (by a library call that wrote the
// reduction's value into the output): `out[vars] = rhs` with `reduce` replaced by a read of
// `out[vars]`. Index variables are kept (the reduction variable becomes unused). For a statement
// whose rhs is exactly `reduce` the result is the identity `out[...] = out[...]`.
Statement epilogue_statement(const Spec& spec, const Statement& st, const Expr* reduce);

// One line describing the shapes a strategy accepts, for error messages, e.g.
// "c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])".
extern const char* const kContractionShape;
extern const char* const kScalarReductionShape;
extern const char* const kScanShape;

}  // namespace sb
