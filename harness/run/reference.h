// The reference: an interpreter of the checked IR in double precision, independent of every
// emitter. It evaluates output elements on demand ("pull"): an element of a temporary is computed
// once when first needed and memoised, so verifying a random sample of a huge output costs only
// the work that sample depends on. A reduction whose range extends the one it last evaluated, with
// the same start and the same values of the variables its terms use, continues that fold (the
// same terms in the same order, so the same result): a running scan such as a prefix sum costs
// O(n) terms in ascending order of its outputs, not O(n^2).
//
// Semantics (the contract every backend is verified against):
//  - Floating-point values are computed in double whatever the declared type; casts to f32/f64
//    and stores into f32 temporaries keep double precision.
//  - Integer arithmetic is exact in int64 and wraps to 32 bits on i32-typed results; integer /
//    and % truncate toward zero, as in C; integer division by zero yields 0. A cast to i32 of a
//    floating-point value truncates; NaN and out-of-range values give INT32_MIN (as x86 does).
//  - `&&`, `||` and select() evaluate only what C would (short-circuit; the chosen branch).
//  - Reductions over an empty range give their identity: sum 0, prod 1, max -inf, min +inf
//    (the type's smallest/largest value for integer reductions). max/min (reductions and
//    functions) propagate NaN. Integer prod wraps like integer sum.
//  - Reads: boundary `zero` reads 0 outside the tensor, `clamp` clamps each subscript into
//    [0, extent - 1]; a read of a tensor without a rule that falls outside fails SB_ASSERT
//    (the checker proved it cannot happen).
#pragma once

#include <cstdint>
#include <vector>

#include "run/buffers.h"
#include "ir/ir.h"

namespace sb {

struct RefValue {
  double value = 0;
  // The magnitude of the terms that produced `value`: up to small constant factors, a
  // first-order bound on how far relative errors of size r in every input and every operation
  // can move `value`, divided by r. So rounding in any order, in f32, passes a small rtol.
  // Verification accepts |got - value| <= atol + rtol * mag. Rules (a, b: operands; ma, mb:
  // their magnitudes; v: the result):
  //   read of an In tensor, literal, constant, integer-valued expression: |v|
  //   read of an Out/Temp tensor: that element's mag
  //   -a, casts to f32/f64: ma
  //   a + b, a - b: ma + mb
  //   a * b: ma * mb
  //   a / b: ma / |b| + |a| * mb / b^2 (inf when b == 0)
  //   sum reduction: the sum of its terms' mags (0 for an empty range)
  //   prod reduction: sum over factors i of m_i * prod_{j != i} |t_j| (the a * b rule to first
  //   order, ma |b| + |a| mb, applied factor by factor), so n * |v| for n exact factors: a
  //   product's relative error grows with its number of factors (0 for an empty range)
  //   max/min reductions, min(), max(), select(): the mag of the selected operand (of ties, the
  //   larger)
  //   abs(a): max(|v|, ma)
  //   exp(a): |v| * max(1, ma)
  //   log(a): max(|v|, ma / |a|)
  //   sqrt(a): max(|v|, ma / (2 |v|)); at a == 0: 0 when ma == 0, otherwise inf
  //   tanh(a): max(|v|, ma * (1 - v^2))
  //   erf(a): max(|v|, ma * 2 / sqrt(pi) * exp(-a^2))
  //   a % b on floating-point values: max(|v|, ma)
  double mag = 0;
};

// Per tensor of `spec`: whether some statement reads it. Only those Out/Temp tensors are
// memoised; the elements of the others are computed when asked (the verifier asks once each).
std::vector<bool> tensors_read_by_statements(const Spec& spec);

// The most memory a Reference at `sizes` allocates for its memos, when every element of every
// Out tensor is asked for (as verification does): about 17 bytes per element of each memoised
// tensor up to 2^25 elements, 64 bytes above (a hash map).
int64_t reference_memory_bytes(const Spec& spec, const SizePoint& sizes);

class Reference {
 public:
  // `inputs` holds host buffers for every tensor of `spec` (only role In ones are read).
  // Both must outlive the Reference.
  Reference(const Spec& spec, const SizePoint& sizes, const HostTensors& inputs);
  ~Reference();
  Reference(const Reference&) = delete;
  Reference& operator=(const Reference&) = delete;

  // Value of element `flat` (row-major) of tensor `t` (an Out or Temp tensor). Every element of
  // every Out/Temp tensor that a statement reads is memoised; the others are computed on each
  // call (the same answer, at the cost of its work again).
  RefValue element(int t, int64_t flat);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace sb
