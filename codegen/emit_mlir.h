// The `mlir` backend: one MLIR file per spec, generated/<spec>/mlir/<spec>.mlir, lowered by the
// harness (harness/runtime_mlir.cpp) through mlir-opt-19, mlir-translate-19 and clang-19 into a
// module with the same C ABI as every other backend.
//
// The file holds one `module` per variant, separated by `// -----` lines (the separator of
// `mlir-opt --split-input-file`). Above each module, two comment lines name the variant and its
// pass pipeline: `// sb-variant: <name>` and `// sb-pipeline: <mlir-opt arguments>`, taken from
// codegen/mlir_pipelines.h, the one place where pipelines are written. Each module defines
// `func.func @<spec>_<variant>` with `llvm.emit_c_interface`: one memref argument per spec tensor
// (ABI order, row-major, dynamic extents; rank 0 for a scalar) and one `index` argument per size.
// The function bodies of all variants are the same; only the pipeline differs.
//
// Lowering of a statement `out[i...] = rhs`:
//   - rhs without reductions: one all-parallel `linalg.generic` writing `out`;
//   - rhs a reduction `op(k in lo..hi: body)`: `linalg.fill` with op's identity, then one
//     `linalg.generic` with iterators (parallel..., reduction) accumulating into `out`;
//   - reductions inside an elementwise term (`y = x / sum(...)`): each reduction into a
//     `memref.alloc`ed buffer of out's full shape as above (recomputed per output point even
//     where it does not depend on every output index), then the elementwise generic reading them.
// The iteration domain of every generic is given by its first input, a view of the output with
// the domain's extents and zero strides that the body never reads, so loop ranges are exactly the
// statement's ranges whatever the other operands' shapes are. Reads whose subscripts are affine
// in the loop indices (literal coefficients and offsets, no boundary rule) are generic operands
// with explicit indexing maps; other reads (gathers, subscripts with sizes, boundary rules) are
// `memref.load`s in the body, from indices computed with `linalg.index`. Bodies use the `arith`
// and `math` dialects.
//
// Not expressible yet (check_variant rejects an mlir variant of such a spec, at the statement,
// with the reason): a reduction whose range depends on an output index (triangular ranges, prefix
// scans) and a reduction nested in another reduction's body. The file emitted for such a spec
// (which then has no mlir variants) holds only the header and that reason.
//
// At the end of the file, lines starting with `//| ` hold the C shim that the harness compiles
// beside the lowered modules: memref descriptors built from sb_args, one sb_variant per MLIR
// function (calling `_mlir_ciface_<spec>_<variant>`), and `specbench_module()`.
#pragma once

#include "emitter.h"

namespace sb {

// The mlir emitter (stateless; lives for the whole program).
const Emitter& mlir_emitter();

// Whether the mlir backend can lower every statement of a checked spec; otherwise an error at
// the first statement it cannot, naming the reason.
Status mlir_fits(const Spec& spec);

}  // namespace sb
