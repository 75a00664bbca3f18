// A small spec for unit tests of the lowering passes: sizes R and C, the given tensors and
// compute, one cpu `loops` variant. It is written to a temporary file, loaded and checked, then
// the file is removed. On a load error the calling test fails and an empty Spec is returned.
#pragma once

#include <string>

#include "ir/ir.h"

namespace sb {

Spec load_rc_spec(const std::string& tensors, const std::string& compute);

}  // namespace sb
