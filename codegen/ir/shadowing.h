// Which reduction variables of a statement shadow a name bound around their loop, for the
// printers that keep the spec's variable names (C and CUDA through StmtLowering, Mojo).
#pragma once

#include <set>

#include "ir/ir.h"

namespace sb {

// The reduction variables (indices into st.vars) whose name is already bound where their loop
// runs: by an output index or by an enclosing reduction's variable. A printer that spelled such
// a loop with the spec's name would resolve the loop's own bounds (and the outer uses) to the
// new variable, so it renames them.
std::set<int> shadowing_reductions(const Statement& st);

}  // namespace sb
