// The last check stage: the variants of derived backends (Emitter::derived_from(): mojo_gpu, from
// cuda). Each derived backend gets every variant of its source backend that its printer has a
// counterpart for (Emitter::derives, judged on the spec as that printer lowers it), with the same
// name, strategy and parameters; a spec with none gets no entry. Declaring a derived backend's
// variants in a spec is a user error, located at the backend's key (variant_check.cpp).
#pragma once

#include "ir/ir.h"

namespace sb {

void derive_variants(Spec& spec);

}  // namespace sb
