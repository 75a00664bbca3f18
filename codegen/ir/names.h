// Identifier rules shared by every stage: what a spec may name, and what it may not.
#pragma once

#include <string>

namespace sb {

// Returns "" when `name` is a valid identifier for a size, tensor, index variable or variant;
// otherwise a sentence saying why not (not an identifier, too long, reserved prefix, or a
// keyword/built-in of C, C++, CUDA, Mojo, Python or the spec language).
std::string check_identifier(const std::string& name);

// As check_identifier, and additionally requires lower case, since the kernel name is a folder.
std::string check_kernel_name(const std::string& name);

// True for the spec language's own built-in names (sum, max, exp, pi, f32, ...).
bool is_builtin_name(const std::string& name);

}  // namespace sb
