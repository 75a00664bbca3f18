// Lowering pass: intrinsic expansion. Every call of an intrinsic that the target backend does
// not spell natively is replaced by its record's default expansion (ir/intrinsics.h), again and
// again, until every remaining call is one the backend spells. Run by Emitter::emit() before a
// backend prints.
#pragma once

#include <functional>

#include "ir/ir.h"

namespace sb {

// A copy of the checked `spec` in which only intrinsics with `spells(fn)` remain. SB_ASSERTs
// that an intrinsic the backend does not spell has an expansion.
Spec expand_intrinsics(const Spec& spec, const std::function<bool(Fn)>& spells);

}  // namespace sb
