// Analysis pass: which consecutive statements can run as one parallel loop over rows.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/ir.h"

namespace sb {

// Statements [first, last] that can run as one loop over rows, and the temps among their outputs
// that can be held as one row per thread instead of in memory.
struct RowGroup {
  size_t first = 0;
  size_t last = 0;
  std::vector<int> row_local;
};

// The groups of a typechecked Spec, in statement order, not overlapping. A group has statements
// of rank >= 1 with the same extent of the first output dimension; every read of a tensor the
// group writes is of the reading statement's own row, so running the group row by row gives the
// values of running its statements one after another. Only groups where a statement reads what
// an earlier one wrote, and whose rows are longer than one element or reduce, are returned.
std::vector<RowGroup> find_row_groups(const Spec& spec);

}  // namespace sb
