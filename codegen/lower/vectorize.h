// Lowering pass vectorize: which loops of a statement a SIMD strategy vectorises. The one home
// of that rule; its result is data in the lowered spec (Spec::schedule.simd, ir.h), which the
// cpu (omp simd), mojo (vectorize) and mlir (the order of a generic's loops) printers read.
//
// The rule: the innermost output loop is the vector loop when the statement has an output
// dimension to run it over (one besides the row, when it runs row by row) and either has no
// reduction, or some read inside a reduction varies with an enclosing reduction variable and has
// the innermost output index in its last, contiguous subscript (b[k, j] in a matrix product,
// x[i + k] in a convolution): its reductions' loops then go outside that loop, and every hot
// access is contiguous. Otherwise a statement with reductions vectorises its innermost reduction
// loops (x[r, c] summed over c), and one without is scalar code. A backend may decline a vector
// loop its printer cannot vectorise (mojo: reads not contiguous in the loop, bool values) and run
// that loop as scalar code; it never vectorises a loop the rule does not choose.
//
// A reduction goes outside only when its range does not depend on the innermost output index, so
// that each output's terms, and their order, stay those of the plain loop nest (the checker
// rejects a statement that reads its own output, so no value read changes either). A printer that runs such a reduction's loop
// outside the vector loop keeps the accumulators of a block of kOutsideBlock outputs at a time
// (cpu), or of one vector (mojo; four for a window along the row, terms_along_row); mlir orders
// the loops of its generic so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ir/ir.h"

namespace sb {

// The outputs of the vector loop whose accumulators a printer keeps at once when a reduction's
// loop runs outside that loop (SimdChoice::outside): few enough for the first-level cache, enough
// that each of the reduction's terms reads whole cache lines. Of 64, 128 and 512 f32 outputs
// (results/vm/outside16-20261202.json and quick runs on the development VM, 2 cores), 128 was
// the fastest on the short convolutions (conv1d, puzzle_conv1d, puzzle_pooling) by 1.3-1.9x;
// axis_sum's column sum ran within the machine's noise at each. Where the terms are a window
// along the row (conv1d's x[i + k]), the cpu printer runs a whole block whose reads are all
// inside in loops of a constant count, which GCC 12 keeps in vector registers: conv1d and
// puzzle_conv1d then took 0.58-0.66x the time (results/vm/window-blocks-20261207). A column sum
// in registers ran 1.0-1.1x (blocks of 128) and 1.3-1.9x (of 64) slower (standalone), so terms
// that move across rows keep the array.
constexpr int kOutsideBlock = 128;

// A reduction outside the vector loop whose terms are a constant few, this many at most (its
// ranges and those of the reductions nested in it all constant: a pooling window), the cpu
// printer keeps in one vector's accumulators instead of a block's, as mojo does: its loops stay
// inside the block's vector loop, and the compiler unrolls them there, so the accumulators stay
// in registers instead of going through the block's array once per term. GCC 12 made
// puzzle_pooling's three-term sum 1.8-2.9x faster so (standalone, 2^16-2^22 outputs, 2-core VM).
// A range that is not constant keeps the block: GCC left such a loop (a convolution whose K is a
// size, 4 to 64 terms) inside the vector loop 4-9x slower. So does a window that reaches past an
// edge across the vector loop (the rows above and below), unless its reach along the row is
// known exactly: the whole row takes the checked loop there, where the block checks only the
// terms past the edge. With the row's edges 8 outputs wide, depthwise_conv2d ran 1.2-1.3x slower
// that way; with edges of exactly the window's reach (1 output for taps at -1, 0 and +1; the cpu
// printer's edges, exact_tap_edge) it took 0.67-0.9x the block's time, and a 3-row window without
// reach along the row 0.4-0.6x (standalone, 2-core VM).
constexpr int kUnrolledTerms = 16;

// A vectorised innermost reduction (SimdLoops::Reductions) accumulates its terms into partials
// of this many bytes (four 64-byte vectors), combined at the end, so that consecutive vector
// additions do not wait on each other. One vector accumulator made a row sum wait on the
// addition's latency: the cpu layernorm's row group over 8192 x 1600 f32 took 2.73-2.78 ms with
// it against 2.42-2.54 ms with the partials (median of 21 each, 2-core AVX-512 VM). The cpu
// printer uses them when the range holds at least two partials' worth of terms; the mojo printer
// for the range's whole blocks of them, then native vectors. A printer whose compiler
// interleaves accumulators itself (mlir: LLVM, with reassociation allowed) need not print them.
constexpr int kReducePartialBytes = 256;

// A search written as a reduction (lower/patterns.h: FirstIndex, the second statement of an
// argmax or argmin) is tested this many terms at a time: a printer ORs the condition over a block
// as vectors (cpu: an `omp simd` loop; mojo: native vectors; mlir: an scf.for LLVM vectorises) and
// stops at the first block where it holds for a term, whose terms it then tests one at a time,
// instead of folding the whole range. argmax_rows over 16384 x 4096 f32 (uniform inputs: the
// first maximum halfway along a row on average) took 0.71x (cpu omp_simd), 0.76x (mojo) and
// 0.75x (mlir openmp) the folding form's time (results/vm/searches-20261206). Standalone (cpu),
// blocks of 64, 128 and 256 terms ran within 3% of each other, 512 8% slower.
constexpr int kSearchTerms = 128;

// The outputs at each end of a row that a vector loop along the row sets apart for the checked
// form of a statement whose reads of `e` have a boundary rule (the cpu printer's edge segments,
// the mojo printer's split of a row, the mlir printer's three parts of a row): the widest reach of those reads along the row, so that
// only the outputs whose terms cross an edge take the checked loop (1 for depthwise_conv2d's
// x[.., j + b - 1], b in 0..3; 1 for a stencil's x[i, j - 1] .. x[i, j + 1]). The reads of `e`
// with a boundary rule that use the innermost output index j must each be `j + offset` in a
// dimension as long as the output's row, the offset a constant plus reduction variables of
// constant ranges; nullopt otherwise (a printer then keeps its own edges, or checks every
// load). With all of a 3 x 3 window's terms in one vector loop, edges of 8 left 16 of a
// 56-output row to the checked loop, and depthwise_conv2d took 1.2-1.3x the block form's time;
// with edges of 1 it took 0.67-0.75x (cpu, standalone, N=8, 144 x 56 x 56 and N=1, 32 x 112 x
// 112, 2-core VM).
std::optional<int64_t> exact_tap_edge(const Spec& spec, const Statement& st, const Expr& e);

// The range [lo, hi) of index variable `v` when both its bounds are constants (affine, without
// overflow); it may be empty. nullopt otherwise.
std::optional<std::pair<int64_t, int64_t>> constant_range(const IndexVar& v);

// Whether every read in the terms of reduction `red` of `st` that moves with a reduction variable
// moves only along its last, contiguous subscript: a window along the row (conv1d's x[i + k],
// w[k]), whose terms for a few vectors of outputs read the same few cache lines, so that a
// printer can hold those vectors' accumulators in registers across the terms (cpu: whole blocks
// of kOutsideBlock in loops of a constant count; mojo: several native vectors at once). A read
// that moves across rows with it (axis_sum's x[i, j], a product's b[k, j]) does not.
bool terms_along_row(const Statement& st, const Expr& red);

// Fills spec.schedule.simd and epilogue_simd (one SimdChoice per statement each) of a typechecked
// spec.
void vectorize(Spec& spec);

// The `--dump-ir vectorize` text: per statement, e.g.
// `stmt 0 (c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])): alone outputs; by rows outputs; outside
// the vector loop: k`.
std::string dump_vectorize(const Spec& spec);

// The pass's choice for `st` (one of spec.stmts, or the epilogue of one: stmt_slot).
const SimdChoice& simd_choice(const Spec& spec, const Statement& st);

// The name of a SimdLoops value in dumps: "none", "outputs", "reductions".
const char* simd_loops_name(SimdLoops s);

}  // namespace sb
