// Work a spec implies at a size point, derived from the IR (never written by hand).
#pragma once

#include <cstdint>

#include "ir.h"

namespace sb {

// Compulsory global-memory traffic: every In tensor read once and every Out tensor written once
// (temporaries excluded), in bytes.
int64_t bytes_moved(const Spec& spec, const SizePoint& sizes);

// Floating-point operations: arithmetic, comparisons and calls on floating-point values, counted
// per output element and multiplied by the iteration space (reduction ranges whose bounds depend
// on outer indices are counted at those indices' midpoints). Integer index arithmetic is free.
double flops(const Spec& spec, const SizePoint& sizes);

}  // namespace sb
