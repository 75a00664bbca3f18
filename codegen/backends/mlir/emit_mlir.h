// The `mlir` backend: one MLIR file per spec, generated/<spec>/mlir/<spec>.mlir, lowered by the
// harness (harness/run/runtime_mlir.cpp) through mlir-opt-19, mlir-translate-19 and clang-19 into a
// module with the same C ABI as every other backend.
//
// The file holds one `module` per variant, separated by `// -----` lines (the separator of
// `mlir-opt --split-input-file`). Above each module, two comment lines name the variant and its
// pass pipeline: `// sb-variant: <name>` and `// sb-pipeline: <mlir-opt arguments>`, taken from
// codegen/backends/mlir/mlir_pipelines.h, the one place where pipelines are written. Each module
// defines `func.func @<spec>_<variant>` with `llvm.emit_c_interface`: one memref argument per spec
// tensor (ABI order, row-major, dynamic extents; rank 0 for a scalar) and one `index` argument per
// size. The function bodies differ by strategy only as follows: `loops` keeps every floating-point
// sum in the spec's order, the others mark sums fastmath<reassoc>; `openmp` also fuses row groups,
// splits full reductions into parallel blocks and streams large outputs (below).
//
// Lowering of a statement `out[i...] = rhs`:
//   - rhs without reductions: one all-parallel `linalg.generic` writing `out`;
//   - rhs a reduction `op(k in lo..hi: body)` whose range does not depend on an index variable:
//     `linalg.fill` with op's identity, then one `linalg.generic` with iterators
//     (parallel..., reduction) accumulating into `out`;
//   - such reductions inside an elementwise term (`y = x / sum(...)`): each into a
//     `memref.alloc`ed buffer over the output indices it depends on, as above, then the
//     elementwise generic reading the buffers with projected indexing maps;
//   - reductions whose range depends on an index variable (scans, triangular ranges) and
//     reductions nested in a reduction's body: an `scf.for` loop carrying the accumulator inside
//     the body of the generic that needs the value.
// A generic's domain is the output indices in order, then the reduction variable; outside `loops`,
// when a read inside the sum has the innermost output index in its last subscript (b[k, j] in a
// matrix product), the reduction variable comes before that index instead (lower/vectorize.h).
// The iteration domain of every generic is given by its first input, a view of the output with
// the domain's extents and zero strides that the body never reads, so loop ranges are exactly the
// statement's ranges whatever the other operands' shapes are. Reads whose subscripts are affine
// in the generic's loop indices (literal coefficients and offsets, no boundary rule) are operands
// with explicit indexing maps; other reads (gathers, subscripts with sizes, boundary rules, reads
// inside an scf.for reduction) are `memref.load`s in the body, from indices computed with
// `linalg.index`. Bodies use the `arith` and `math` dialects (and `scf.for` as above). A spec
// without mlir variants (the golden tests emit every backend) gets the header and a shim whose
// table is empty.
//
// Under `openmp`, a statement of rank >= 2 whose reduction goes before its innermost index is a
// row group of one statement (below). The statements of each group that codegen/lower/row_fusion.h
// finds (consecutive statements over the same rows, each reading only its own row of what the group
// writes) are one `scf.parallel` loop over blocks of rows (at most 64 blocks), each block an
// `scf.for` over its rows. Each row is computed by the group's statements in order, lowered as
// above but on rank-reduced `memref.subview`s of that row (the row index is fixed, the generics run
// over the other dimensions). The group's row-local temps and the buffers of reductions inside its
// elementwise terms are one row long: allocated once per block (`memref.alloca` for a scalar,
// `memref.alloc` otherwise), never written to the full tensor. Such a module carries the
// attribute `transform.with_named_sequence` and the transform schedule of
// mlir_parallel_loops_schedule() (codegen/backends/mlir/mlir_pipelines.h), which lowers the linalg
// ops inside the explicit loops to sequential loops.
//
// Also under `openmp`, a full reduction (into a scalar: the statement's output, or the buffer of
// a reduction inside a scalar statement's term) outside row groups is an explicit `scf.parallel`
// loop over at most 64 blocks of its range: each block reduced by a generic into a scalar
// `memref.alloca` of its own, stored into a 64-element partials buffer, then one generic
// combines the used partials into the output. The blocks depend only on the range, not on the
// number of threads.
//
// Also under `openmp`, an elementwise statement with an f32, f64 or i32 output of rank 1 or 2
// (outside row groups, or a rank-2 output in memory inside one) checks at run time whether the
// tensors it (or its group) touches total at least 48 MiB; then it writes its output with
// non-temporal stores (`scf.if`, the plain form otherwise). Each row, or the whole rank-1
// output, is written as a plain head up to the first 64-byte boundary (tensors are assumed aligned
// to their element size; the address is taken from
// `memref.extract_aligned_pointer_as_index` and `memref.extract_strided_metadata`), whole lines,
// and a plain tail. Each line is computed by a generic into a line buffer (`memref.alloca`, one
// per block), loaded as two half-line vectors and written by two `llvm.store` ops with
// `alignment = 32` and `nontemporal` through `llvm.inttoptr` of the line's address: MLIR 19's
// vector.store has no alignment, and LLVM splits an under-aligned non-temporal vector store into
// scalar ones. A rank-1 output streams its lines in parallel blocks, a rank-2 output row by row in
// parallel blocks of rows; each block ends with `llvm.fence seq_cst`.
//
// Under `blocked_matmul`, a contraction is block products in Goto's loop order (the README's
// pipeline table). Under `im2col`, a gathered GEMM (lower/patterns.h: a convolution) is also one:
// per batch element (and group) its gathered term into a `memref.alloc`ed K x N column buffer,
// then the output's rows (`memref.reinterpret_cast` as a 2-D view) as the weights' rows times it.
//
// At the end of the file, lines starting with `//| ` hold the C shim that the harness compiles
// beside the lowered modules: memref descriptors built from sb_args, one sb_variant per MLIR
// function (calling `_mlir_ciface_<spec>_<variant>`), and `specbench_module()`.
#pragma once

#include "backends/emitter.h"

namespace sb {

// The mlir emitter (stateless; lives for the whole program).
const Emitter& mlir_emitter();

}  // namespace sb
