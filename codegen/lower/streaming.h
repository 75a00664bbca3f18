// Lowering pass streaming: streaming (non-temporal) stores. The one home of when an output is
// written with non-temporal stores and of the numbers that decide it; its result is data in the
// lowered spec (Spec::schedule.streams, ir.h), which the cpu, mojo and mlir backends read and
// print as stores in their own language.
//
// The rule: under a backend's parallel strategy, an elementwise statement (no reduction) whose
// output is in memory (not held as a row-local temp) and has at least one dimension streams its
// output when the tensors it touches total at least kStreamMinBytes, checked at run time. Inside
// a row group (lower/row_fusion.h) only outputs of rank 2 or more stream, row by row, and the
// bytes are those of the whole group's tensors. A backend may decline a candidate its printer
// cannot stream (mojo: a statement it does not vectorise; mlir: ranks above 2 and types other
// than f32, f64 and i32), never accept one this rule rejects. Whether a variant is parallel, and
// whether it runs the row groups, is its strategy's (HostSchedule).
//
// Next-row prefetch. A row group that streams runs its passes over one row at a time, and its
// first pass reads the row from memory while the others compute on it in the caches, so the
// memory waits during the passes that compute. The statement that is the group's last to read a
// tensor of rank 2 at its own row (`t[row, k]`, k a variable of that statement's loop over the
// row) therefore prefetches the same elements of the next row, one cache line per line it reads,
// when the group streams (StreamChoice::next_rows): the next row is in the caches when its first
// pass starts. On the 2-core VM, softmax over 8192 x 4096 f32 took 12.1 ms without it and 9.8 ms
// with it (prefetched in the pass that computes exp), 10.9 ms when prefetched in the last pass
// instead. A printer prefetches where it has a loop along k that it prints in lines or blocks,
// and may decline elsewhere: cpu in a streamed line and in a reduction's blocks of partial
// accumulators (also of a statement computed in the next one's reduction loop); mojo in a
// streamed line and in the vector loop of an elementwise row; mlir in a streamed line only (so
// not softmax's exp pass, a linalg.generic).
//
// A running scan (lower/running_scans.h) writes its outputs once and in order too: its vector
// walk may stream whole lines of them by the same threshold (StreamChoice::scan). The cpu and
// mojo printers do so in the block walks of a long rank-1 scan and in the walk of each row of a
// scan of rank 2 or more; the mlir printer does not yet. On the 2-core VM, the cpu
// cumsum over 2^25 f32 took 14.6 ms with plain stores and 10.1 ms streaming.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/ir.h"

namespace sb {

// One and a half times a last-level cache: below this, the tensors stay in the caches (at the
// cache's own size too) and plain stores are faster; above it, non-temporal stores save the
// read for ownership. On the 2-core VM (32 MiB L3), cpu omp_simd, f32, medians of 5 repetitions:
// - one run each way (results/vm/stream-threshold-20261205-{nt,plain}.md): map2d took 346 us
//   with plain stores and 610 us streaming at 2048 x 2048 (32 MiB in all), 1.18 against 1.21 ms
//   at 2048 x 4096 (64 MiB), 3.00 against 2.54 ms at 4096 x 4096 (128 MiB); the row scan
//   cumsum_rows 461 against 673 us, 1.27 against 1.27 ms, 3.21 against 2.68 ms;
// - three alternations of both builds (results/vm/stream-threshold-ab-20261205-*.json, "nt32"
//   streaming from 32 MiB, "plain64" from 64 MiB): at 32 MiB plain stores were 1.30x (cumsum_rows),
//   1.51x (map2d) and 1.33x (puzzle_map) faster; at 48 MiB (vector_add) streaming was 1.12x
//   faster (703-990 against 898-1198 us).
// The generated C and Mojo let `-D SB_STREAM_MIN_BYTES=n` override it.
inline constexpr int64_t kStreamMinBytes = int64_t{48} << 20;

// Non-temporal stores write whole lines of this many bytes (a cache line), aligned.
inline constexpr int kStreamLineBytes = 64;

// Before each streamed line, the tensors the statement reads along its output (StreamChoice::
// prefetch) are prefetched this many bytes ahead of the line, clamped to the last element of the
// output's innermost dimension. Without it the line loops wait on their loads: on the 2-core
// AVX-512 VM, the cpu backend's gelu over 2^25 f32 took 10.6-11.8 ms without it and 6.1-7.0 ms
// with it.
inline constexpr int kStreamPrefetchBytes = 4096;

// Fills spec.schedule.streams and epilogue_streams (one StreamChoice per statement each) and
// spec.schedule.group_tensors (one set per row group) of a spec on which row_fusion has run. A
// statement's `rows` choice treats it as a row of its row group (its row-local temps taken from
// the group); outside a group as a row of its own.
void streaming(Spec& spec);

// The `--dump-ir streaming` text: per statement, e.g.
// `stmt 3 (y[r, c] = e[r, c] / s[r]): alone streams, tensors e, s, y, prefetch e; by rows
// streams`, then per row group the tensors whose bytes decide.
std::string dump_streaming(const Spec& spec);

// The pass's choice for `st` run on its own: `st` is one of spec.stmts, or the epilogue
// (epilogue_statement, lower/patterns.h) of one, which has its loc and output.
const StreamChoice& stream_choice(const Spec& spec, const Statement& st);

}  // namespace sb
