// Lowering pass parallelize: what a parallel strategy runs on worker threads in each statement
// outside a row group. The one home of that rule; its result is data in the lowered spec
// (Spec::schedule.parallel, ir.h), which the cpu (OpenMP), mojo (parallelize) and mlir
// (scf.parallel) printers read. Inside a row group (lower/row_fusion.h) the group's loop over rows
// is the parallel one.
//
// The rule: a statement with an output dimension runs its outermost output loop in parallel, each
// thread one contiguous range of it, so threads share at most the cache lines at the range ends.
// A scalar statement has no output loop: each of its top-level reductions is split over the
// threads (each thread reduces a part of the range, then the parts are combined). A reduction
// that no output index reaches, neither its value nor its range, can be computed apart from the
// output loops, once; a backend that does so (mlir: into a buffer of its own) splits it over the
// threads like a scalar statement's. Nested reductions run inside their thread.
#pragma once

#include <string>

#include "ir/ir.h"

namespace sb {

// Fills spec.schedule.parallel and epilogue_parallel (one ParallelChoice per statement each) of a
// typechecked spec.
void parallelize(Spec& spec);

// The `--dump-ir parallelize` text: per statement, e.g.
// `stmt 0 (z = sum(i in 0..N: x[i])): reductions; apart: i`.
std::string dump_parallelize(const Spec& spec);

// The pass's choice for `st` (one of spec.stmts, or the epilogue of one: stmt_slot).
const ParallelChoice& parallel_choice(const Spec& spec, const Statement& st);

// The name of a ParallelLoops value in dumps: "none", "outputs", "reductions".
const char* parallel_loops_name(ParallelLoops p);

}  // namespace sb
