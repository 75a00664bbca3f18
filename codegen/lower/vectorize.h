// Lowering pass vectorize: which loops of a statement a SIMD strategy vectorises. The one home
// of that rule; its result is data in the lowered spec (Spec::schedule.simd, ir.h), which the
// cpu (omp simd), mojo (vectorize) and mlir (the order of a generic's loops) printers read.
//
// The rule: the innermost output loop is the vector loop when the statement has an output
// dimension to run it over (one besides the row, when it runs row by row) and either has no
// reduction, or some read inside a reduction varies with an enclosing reduction variable and has
// the innermost output index in its last, contiguous subscript (b[k, j] in a matrix product,
// x[i + k] in a convolution): its reductions' loops then go outside that loop, and every hot
// access is contiguous. Otherwise a statement with reductions vectorises its innermost reduction
// loops (x[r, c] summed over c), and one without is scalar code. A backend may decline a vector
// loop its printer cannot vectorise (mojo: reads not contiguous in the loop, bool values) and run
// that loop as scalar code; it never vectorises a loop the rule does not choose.
#pragma once

#include <string>

#include "ir/ir.h"

namespace sb {

// Fills spec.schedule.simd and epilogue_simd (one SimdChoice per statement each) of a typechecked
// spec.
void vectorize(Spec& spec);

// The `--dump-ir vectorize` text: per statement, e.g.
// `stmt 0 (c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])): alone outputs; by rows outputs; outside
// the vector loop: k`.
std::string dump_vectorize(const Spec& spec);

// The pass's choice for `st` (one of spec.stmts, or the epilogue of one: stmt_slot).
const SimdChoice& simd_choice(const Spec& spec, const Statement& st);

// The name of a SimdLoops value in dumps: "none", "outputs", "reductions".
const char* simd_loops_name(SimdLoops s);

}  // namespace sb
