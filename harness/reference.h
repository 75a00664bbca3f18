// The reference: an interpreter of the checked IR in double precision, independent of every
// emitter. It evaluates output elements on demand ("pull"): an element of a temporary is computed
// once when first needed and memoised, so verifying a random sample of a huge output costs only
// the work that sample depends on.
#pragma once

#include <cstdint>
#include <vector>

#include "buffers.h"
#include "ir.h"

namespace sb {

struct RefValue {
  double value = 0;
  // The magnitude of the terms that produced `value`: for a sum, the sum of the absolute values
  // of its terms; for a product, the product of the operands' magnitudes; for other operations
  // |value| (scaled by the argument magnitude where the function amplifies it, as exp does).
  // Verification accepts |got - value| <= atol + rtol * mag.
  double mag = 0;
};

class Reference {
 public:
  // `inputs` holds host buffers for every tensor of `spec` (only role In ones are read).
  // Both must outlive the Reference.
  Reference(const Spec& spec, const SizePoint& sizes, const HostTensors& inputs);
  ~Reference();
  Reference(const Reference&) = delete;
  Reference& operator=(const Reference&) = delete;

  // Value of element `flat` (row-major) of tensor `t` (an Out or Temp tensor).
  RefValue element(int t, int64_t flat);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace sb
