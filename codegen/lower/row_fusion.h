// Lowering pass row_fusion: which consecutive statements can run as one parallel loop over rows.
// Its result is data in the lowered spec (Spec::schedule.row_groups, ir.h); a variant whose
// strategy fuses rows (HostSchedule::fuse_rows on cpu, mojo and mlir; the cuda strategies
// warp_per_row and block_per_row) runs the groups, any other runs each statement on its own.
#pragma once

#include <string>

#include "ir/ir.h"

namespace sb {

// Fills spec.schedule.row_groups of a typechecked Spec: its groups, in statement order, not
// overlapping. A group has statements of rank >= 1 with the same extent of the first output
// dimension; every read of a tensor the group writes is of the reading statement's own row, so
// running the group row by row gives the values of running its statements one after another.
// Only groups where a statement reads what an earlier one wrote, and whose rows are longer than
// one element or reduce, are kept. A row-local temp is one that no statement outside the group
// touches and that the group writes before it reads it.
void row_fusion(Spec& spec);

// The `--dump-ir row_fusion` text: one line per group, e.g.
// `row group stmts 0..3, row-local: e, m`, each followed by its statements; or `no row groups`.
std::string dump_row_fusion(const Spec& spec);

}  // namespace sb
