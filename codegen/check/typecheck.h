// Check pass: name resolution, types and statement structure.
#pragma once

#include "support/diag.h"
#include "ir/ir.h"

namespace sb {

// Resolves every Name in shapes and statements (index variables, sizes, tensors, constants),
// moves reduction ranges into Statement::vars, assigns a concrete type to every Expr (untyped
// literals take the type of their context), and checks that: shapes are affine in sizes and
// positive with at most 2^31-1 elements (16 GiB in all) at every size point; every out/temp
// tensor is written exactly once, inputs never, and temps before they are read; subscript
// counts match ranks; operand types agree.
Status typecheck(Spec& spec);

// The checks typecheck makes at every size point (extents, element counts and bytes, 'init'
// ranges, dividends in shapes and ranges), again: for a typechecked spec whose bench points were
// replaced (`--sizes`).
Status check_size_points(Spec& spec);

}  // namespace sb
