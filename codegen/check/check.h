// Stage 2: the checks between loading and emitting. Each sub-pass has its own file pair; this
// header names them and the convenience that runs them all in order.
#pragma once

#include "support/diag.h"
#include "ir/ir.h"

namespace sb {

// Resolves names, assigns types, validates statement structure and size points
// (typecheck.h), proves reads in bounds (bounds.h), rewrites argmax and argmin
// (arg_reductions.h), and validates variants against the
// emitters (variant_check.h). On success the Spec satisfies the guarantees listed in ir.h.
Status check_spec(Spec& spec);

}  // namespace sb
