// Verification of one output tensor against the reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run/buffers.h"
#include "run/reference.h"

namespace sb {

struct Mismatch {
  int64_t flat = 0;
  std::vector<int64_t> index;  // multi-index of `flat`
  double expected = 0;
  double actual = 0;
  double tolerance = 0;
};

struct CompareResult {
  bool ok = true;
  int64_t checked = 0;          // elements compared
  int64_t mismatches = 0;       // elements out of tolerance
  double max_abs_err = 0;       // over checked, finite elements
  double max_rel_err = 0;       // |got - ref| / max(|ref|, tiny)
  std::vector<Mismatch> first;  // the first (up to 10) mismatches, in index order
};

// Compares `got` (tensor `t`) with the reference at every element, or at `sample` distinct
// random elements (seeded; always including the first and the last) when sample > 0 and the
// tensor is larger. Elements are checked in ascending flat order. A floating-point element
// passes when |got - ref| <= spec.tol.atol + tensor_rtol(spec, t) * mag; a non-finite reference value
// matches only the same non-finite value (NaN with NaN, +inf with +inf), and a non-finite `got`
// never matches a finite reference (so the NaN sentinel of an unwritten element fails). Integer
// tensors must match exactly (Mismatch::tolerance 0).
CompareResult compare_tensor(const Spec& spec, const SizePoint& sizes, int t, const HostTensor& got,
                             Reference& ref, int64_t sample, uint64_t seed);

// The relative tolerance of tensor t: the spec's rtol, and for an f16 or bf16 tensor at least
// its type's epsilon (2^-10, 2^-7), one unit in the last place of a value stored rounded to it.
double tensor_rtol(const Spec& spec, int t);

// A multi-line description of a comparison, e.g.
//   softmax cpu/omp_simd at R=3, C=7: tensor y: 2 of 21 checked elements differ (all 21 ...)
//     y[1, 2] (flat 9): expected 0.100000001 got 0.2, |diff| 0.1 > tolerance 1e-06
//     y[2, 6] (flat 20): expected 0.25 got nan (NaN: never written, or computed NaN)
//     max abs err 0.1, max rel err 1 over finite elements; tolerance is atol 1e-07 + ...
// Every line ends with '\n'. When r has no mismatch it is the first line only.
std::string describe_failure(const Spec& spec, const std::string& backend,
                             const std::string& variant, const SizePoint& sizes, int t,
                             const CompareResult& r);

}  // namespace sb
