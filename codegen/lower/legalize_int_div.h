// Lowering pass: integer-division legalisation, the one home of the semantics of integer `/` and
// `%` in generated code. The language defines them as C does (truncation toward zero, the
// remainder with the sign of the dividend) and defines C's undefined cases as the reference
// computes them: x / 0 == 0, x % 0 == 0, x % -1 == 0 and x / -1 == -x, wrapping.
//
// Every integer a / b and a % b (in right-hand sides, ranges, shapes and 'init' bounds) becomes a
// call of the internal intrinsics div_trunc and rem_trunc
// (ir/intrinsics.h), which every backend spells natively and which never see a divisor of 0 or
// -1. Where the divisor is not provably at least 1 (a positive literal or a size), guards around
// the call give the undefined cases their results, and the call's divisor is replaced by 1 in
// those cases, so that a backend whose select evaluates both sides never divides by 0:
//   a / b  ->  select(b == 0, 0, select(b == -1, -a, div_trunc(a, select(b == 0 || b == -1, 1, b))))
//   a % b  ->  select(b == 0 || b == -1, 0, rem_trunc(a, select(b == 0 || b == -1, 1, b)))
// Run by Emitter::emit() after intrinsic expansion.
#pragma once

#include "ir/ir.h"

namespace sb {

// A copy of the checked `spec` with every integer division and remainder legalised.
Spec legalize_int_div(const Spec& spec);

// Whether the integer divisor `b` is provably at least 1: a positive literal or a size.
bool divisor_at_least_one(const Expr& b);

}  // namespace sb
