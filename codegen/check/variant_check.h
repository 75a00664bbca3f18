// Check pass: every variant names a known backend and strategy with valid parameters.
#pragma once

#include "support/diag.h"
#include "ir/ir.h"

namespace sb {

// Validates each backend against the emitter registry, each variant's strategy and integer
// parameters (known, in range, power of two where required) against the emitter's
// StrategyInfo, then asks the emitter whether the strategy fits the spec's shape.
Status check_variants(const Spec& spec);

}  // namespace sb
