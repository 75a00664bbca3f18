// Work a spec implies at a size point, derived from the IR (never written by hand).
#pragma once

#include <cstdint>

#include "ir/ir.h"

namespace sb {

// Compulsory global-memory traffic, in bytes: every Out tensor written once and every In tensor
// read once (temporaries excluded), a broadcast read counting once. An In tensor read only
// through gathers (a subscript holding a read of another tensor: probs[r, targets[r]]) counts
// the elements the gathers touch, at most the tensor: the reads' evaluations over the iteration
// space, counted as flops() counts operations.
int64_t bytes_moved(const Spec& spec, const SizePoint& sizes);

// Floating-point operations: arithmetic, comparisons and calls on floating-point values, counted
// per output element and multiplied by the iteration space (reduction ranges whose bounds depend
// on outer indices are counted at those indices' midpoints). Integer index arithmetic is free.
// Each operator or call is 1 (exp counts like +); a floating-point reduction costs trip count x
// (body + 1 for the combining add or compare), so matmul is 2*M*N*K; select(c, a, b) counts 1,
// its condition and the costlier branch; casts and reads are free. Temporaries are included.
// A running scan (lower/running_scans.h: y[i] = sum(k in 0..i + 1: x[k])) is counted as the
// work it needs, each term once per row, not once per output whose range holds it: prefix_sum
// is N adds, not N(N + 1)/2, so that no variant's rate exceeds what the machine can do.
double flops(const Spec& spec, const SizePoint& sizes);

}  // namespace sb
