// Stage 1: reads a spec file (YAML) into an unchecked Spec.
#pragma once

#include <string>

#include "support/diag.h"
#include "ir/ir.h"

namespace sb {

// Reads and structurally validates `path`: YAML syntax, known keys, value types, identifiers,
// size lists, and the syntax of shapes and statements. Rejects YAML anchors and aliases,
// nesting deeper than a spec needs, multiple documents and files over 1 MiB.
// The returned Spec still has unresolved names (ExprKind::Name); check_spec() completes it.
// Every error carries the file, line and column of the offending text.
Result<Spec> load_spec(const std::string& path);

}  // namespace sb
