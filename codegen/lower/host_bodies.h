// Host kernel bodies written once as loop IR (lower/loop_ir.h) for the host printers that print
// one (backends/cpu and backends/mojo, spelling the spec's leaves and a running scan's fold and
// walk through their own statement printers, backends/common/loop_leaves.h: HostLeaves; and
// backends/mlir, in SSA form through backends/mlir/print_loops.h: MlirLeaves).
#pragma once

#include <string>

#include "ir/ir.h"
#include "lower/loop_ir.h"

namespace sb {

// The parallel form of a long rank-1 running scan `red` of statement `st` (lower/running_scans.h:
// kScanSplitMin, kScanBlocks). Its outputs go in blocks of sb_len: block sb_b holds outputs
// [sb_i0, sb_i1) and, of the reduction's terms, the new ones [sb_k0, sb_k1), from where the
// range's end stands after output sb_i0 - 1 to where it stands after output sb_i1 - 1 (the
// range's start before output 0). The bodies:
// - head: sb_n, the outputs, and sb_lo, the range's start;
// - two_pass, after head: kScanBlocks blocks; the folds of each block's new terms in parallel,
//   each kept with its block's sb_k0; the folds combined in order into each block's offset; then
//   the walks of the blocks' outputs in parallel, each from its offset and its sb_k0.
// The block count does not depend on the thread count, so neither does the result.
struct ScanSplitBodies {
  loops::Block head, two_pass;
};
ScanSplitBodies scan_split_bodies(const Spec& spec, const Statement& st, const Expr& red);

// The `--dump-ir host_bodies` text of lowered `spec` for `backend`: per statement, the loop IR of
// its running scan's parallel form (head, then two_pass), or that it has none.
std::string dump_host_bodies(const Spec& spec, const std::string& backend);

}  // namespace sb
