// Lowering policy: streaming (non-temporal) stores. The one home of when an output is written
// with non-temporal stores and of the numbers that decide it; the cpu, mojo and mlir backends
// read it and print the stores in their own language.
//
// The rule: under a backend's parallel strategy, an elementwise statement (no reduction) whose
// output is in memory (not held as a row-local temp) and has at least one dimension streams its
// output when the tensors it touches total at least kStreamMinBytes, checked at run time. Inside
// a row group (lower/row_fusion.h) only outputs of rank 2 or more stream, row by row, and the
// bytes are those of the whole group's tensors. A backend may decline a candidate its printer
// cannot stream (mojo: a statement it does not vectorise; mlir: ranks above 2 and types other
// than f32, f64 and i32), never accept one this rule rejects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "ir/ir.h"

namespace sb {

// About the size of a last-level cache: below this, the output stays in the caches and plain
// stores are faster. The generated C and Mojo let `-D SB_STREAM_MIN_BYTES=n` override it.
inline constexpr int64_t kStreamMinBytes = int64_t{32} << 20;

// Non-temporal stores write whole lines of this many bytes (a cache line), aligned.
inline constexpr int kStreamLineBytes = 64;

// Whether statement `st` may stream its output. `in_row_group`: it is part of a row group;
// `row_local`: its output is one of that group's row-local temps.
bool stream_candidate(const Statement& st, bool in_row_group, bool row_local);

// The tensors in memory that statements [first, last] of `spec` touch (each output and every
// tensor read, less `row_local`: a row group's temps held one row at a time), whose bytes are
// compared with kStreamMinBytes.
std::set<int> stream_tensors(const Spec& spec, size_t first, size_t last,
                             const std::vector<int>& row_local = {});

}  // namespace sb
