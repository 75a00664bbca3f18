// Verification of one output tensor against the reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "buffers.h"
#include "reference.h"

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
  int64_t checked = 0;      // elements compared
  int64_t mismatches = 0;   // elements out of tolerance
  double max_abs_err = 0;   // over checked, finite elements
  double max_rel_err = 0;   // |got - ref| / max(|ref|, tiny)
  std::vector<Mismatch> first;  // the first (up to 10) mismatches, in index order
};

// Compares `got` (tensor `t`) with the reference at every element, or at `sample` random
// elements (seeded) when sample > 0 and the tensor is larger. A non-finite reference value
// matches only the same non-finite value (NaN with NaN, +inf with +inf).
CompareResult compare_tensor(const Spec& spec, const SizePoint& sizes, int t,
                             const HostTensor& got, Reference& ref, int64_t sample,
                             uint64_t seed);

// "softmax cpu/omp_simd R=3,C=7: y[1, 2] expected 0.1 got 0.2 (tolerance 1e-6); ..." style
// multi-line description of a failed comparison.
std::string describe_failure(const Spec& spec, const std::string& backend,
                             const std::string& variant, const SizePoint& sizes, int t,
                             const CompareResult& r);

}  // namespace sb
