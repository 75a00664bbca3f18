// Check pass: every read stays inside its tensor, or the tensor has a boundary rule.
#pragma once

#include "support/diag.h"
#include "ir/ir.h"

namespace sb {

// For each read of a tensor without a boundary rule, proves for all sizes >= 1 that each
// subscript lies in [0, extent). Subscripts and ranges must be affine in index variables and
// sizes for the proof; anything else needs a boundary rule. Requires a typechecked Spec.
Status check_bounds(const Spec& spec);

}  // namespace sb
