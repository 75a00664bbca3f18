// A small spec for unit tests of the lowering passes: sizes R and C, the given tensors and
// compute, one cpu `loops` variant. It is written to a temporary file, loaded and checked, then
// the file is removed. On a load error the calling test fails and an empty Spec is returned.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace sb {

Spec load_rc_spec(const std::string& tensors, const std::string& compute);

// The `tensors:` lines declaring the named tensors, from one table over sizes R and C:
// a [R, C], b [C, C], t [C, R], x [C] and bias [C] in; y [R, C], s [R], v [C] and z (a
// scalar) out; all f32.
std::string rc_tensors(const std::vector<std::string>& names);

}  // namespace sb
