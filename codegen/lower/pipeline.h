// The lowering driver: the passes that turn a checked spec into the IR a backend prints, in
// order. Emitter::emit() runs them for its backend, and `gen --dump-ir NAME` prints the IR after
// any of them (driver.h lists them with the check stages).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sb {

struct LowerPass {
  const char* name;  // a pass file under lower/ exposing one function of the same name
  const char* what;
};

// The lowering passes, in the order lower() runs them.
const std::vector<LowerPass>& lower_passes();

// Runs every lowering pass on the checked `spec`, for a backend whose printer spells the
// intrinsics for which `spells` is true. When `dump_after` names a pass, the IR after it is
// written to `*dump`, headed with `label` (after a decision pass: row_fusion, fuse_attention,
// streaming, vectorize, parallelize: the decisions they added to Spec::schedule).
Spec lower(const Spec& spec, const std::function<bool(Fn)>& spells,
           const std::string& dump_after = "", std::ostream* dump_to = nullptr,
           const std::string& label = "");

}  // namespace sb
