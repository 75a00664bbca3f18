// Lowering pass parallelize: what a parallel strategy runs on worker threads in each statement
// outside a row group. The one home of that rule; its result is data in the lowered spec
// (Spec::schedule.parallel, ir.h), which the cpu (OpenMP), mojo (parallelize) and mlir
// (scf.parallel) printers read. Inside a row group (lower/row_fusion.h) the group's loop over rows
// is the parallel one.
//
// The rule: a statement with an output dimension runs its outermost output loop in parallel, each
// thread one contiguous range of it, so threads share at most the cache lines at the range ends.
// A statement of rank 4 or more shares all its output loops but the last two that way, as one
// collapsed range (ParallelChoice::collapse): with the outermost alone, a batch of one image
// (depthwise_conv2d's N = 1, C = 32) ran on one thread, and a batch of 4 on 16 cores would run on
// 4. The last two, a plane of rows (an image's), stay whole in each thread: what is invariant
// along its rows (a channel's weights, the tests of a row's neighbours) is set up once per
// plane. Collapsing the rows too took 1.2x the time at depthwise_conv2d's N = 8, C = 144 in
// both languages (results/vm/collapse-20261207). Ranks 1 to 3 keep the outermost loop alone.
// Printers whose form of a statement has a nest of its own (tiled transposes, row groups) keep
// their own ranges.
// A scalar statement has no output loop: each of its top-level reductions is split over the
// threads (each thread reduces a part of the range, then the parts are combined). A reduction
// that no output index reaches, neither its value nor its range, can be computed apart from the
// output loops, once; a backend that does so (mlir: into a buffer of its own) splits it over the
// threads like a scalar statement's. Nested reductions run inside their thread.
#pragma once

#include <string>

#include "ir/ir.h"

namespace sb {

// A split reduction's range, in the cpu printer, goes to the threads as chunks of this many bytes
// of terms: an OpenMP loop over the chunks, each thread taking one contiguous run of them, each
// chunk's terms into partial accumulators (lower/vectorize.h: kReducePartialBytes) so that its
// vector additions do not wait on each other. One `parallel for simd` reduction gave each thread
// one vector accumulator instead: the f32 dot products took 1.4-2x as long at 2^16-2^20 terms
// and 1.1-1.5x at 2^22-2^25; the f64 one 1.1x at 2^20 and the same at 2^23 and 2^25, where
// memory bounds it (results/vm/split-reductions-20261206, 2-core VM). 64 KiB is 16384 f32 terms,
// a few hundred vector steps per chunk, against one fold of the partials.
constexpr int kReduceChunkBytes = 64 * 1024;

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
