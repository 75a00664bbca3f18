// Check stage arg_reductions: argmax and argmin rewritten into reductions every backend has.
//
//   y[i] = argmax(k in lo..hi: e)
// becomes two statements, the first writing a temp tensor of y's shape (named after y):
//   y_max[i] = max(k in lo..hi: e)
//   y[i] = min(k in lo..hi: select(e == y_max[i] || e != e, i64(k), i64(hi - 1)))
// the least index holding the greatest value (PyTorch's rule for ties), an i64; `e != e` (only
// for a float e) makes the first NaN the answer when there is one, as in PyTorch, since the max
// propagates the NaN into the temp. The row-fusing
// strategies run the two as one loop over rows with the temp in a register, so every backend and
// strategy that has max and min reductions computes argmax too. The second statement has the
// form of a search (lower/patterns.h: FirstIndex), which the host printers stop at the first
// block of terms where it holds.
//
// It runs after the bounds proof (the reads it copies are proven where the spec wrote them, and
// the temp is read at the output indices) and before the variant checks, so the strategies' fit
// checks, the harness, the reference and every backend see the rewritten spec (the temp is a
// tensor of the kernel's interface, as any temp).
// The user's errors, located: an arg-reduction inside another reduction, a reduction in its
// body, or a range that is empty for some sizes (hi - lo >= 1 must hold for every size >= 1).
#pragma once

#include "ir/ir.h"
#include "support/diag.h"

namespace sb {

Status rewrite_arg_reductions(Spec& spec);

}  // namespace sb
