// Lowering pass running_scans: statements that can be computed as a running reduction along their
// innermost output index, in O(n) instead of O(n^2): scans such as a cumulative sum, product,
// maximum or minimum, inclusive or exclusive, over a whole rank-1 output or along the rows of a
// larger one. The one home of that rule; its result is data in the lowered spec
// (Spec::schedule.running_scans, ir.h), which the cpu, mojo and mlir printers read.
//
// The shape: the statement's right-hand side holds exactly one reduction, red(k in lo..hi: f),
// possibly inside an elementwise expression, where
//   - lo uses no index variable, no tensor and no reduction;
//   - hi is i + c, i the innermost output index and c free of index variables, so that each
//     output's range extends the previous output's;
//   - f does not use i, and the statement does not read its own output.
// Walking i upwards, one accumulator then takes the terms k = lo, lo + 1, ... in the order a plain
// loop nest adds them, so the values are the plain loop nest's, bit for bit (but for the vector
// form below, which groups a sum's or product's terms as a tree within each vector). The outer
// output indices stay free loops (parallel under a parallel strategy); the walk along i is
// sequential, but for the two-pass form below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace sb {

// Under a parallel strategy, a rank-1 running scan of at least kScanSplitMin outputs runs in two
// parallel passes over kScanBlocks equal blocks of its outputs (lower/host_bodies.h): each
// block's new terms folded apart; the blocks' folds combined in order into each block's offset;
// then each block's outputs walked from its offset. The block count does not depend on the
// thread count, so the result (whose terms are grouped by block) does not either.
inline constexpr int64_t kScanSplitMin = int64_t{1} << 16;
inline constexpr int kScanBlocks = 512;
// Where such a scan also streams (lower/streaming.h: StreamChoice::scan) and its tensors outgrow
// the caches, the walks store their outputs non-temporally (cpu and mojo alike). The cpu printer
// had a one-pass form of its own, the blocks chained by an `omp ordered` region so that the
// inputs are read once; on the Zen 3 VM (2 threads, cumsum over 2^25 f32, 10 repetitions each,
// alternating) it took 20.8 ms against 13.3 ms for the two passes with streamed walks, and at
// 2^23 6.5 ms against 3.5 ms, so both languages now run the two passes.

// Under a SIMD strategy, the part of a walk where each output adds exactly one term runs a
// vector of outputs at a time: their terms computed as a vector, scanned in vector registers in
// log2(lanes) steps (each combining a copy shifted by 1, 2, 4, ... lanes, the identity shifted
// in), the carry joined once per vector, the outputs stored as a vector. The cpu printer
// (emit_scan_walk) and the mojo printer (MojoLowering::walk_scan) print it; a sum or product
// then groups each vector's terms as a tree, within the tolerance of any grouping.
// vector_scan_fits: whether a scan of reduction `op` over type `t` has that form: a sum,
// product, max or min of f32 or f64 (max and min propagate NaN as their scalar forms do).
bool vector_scan_fits(ReduceOp op, DType t);
// The lanes of one such vector of type `t`: 64 bytes (16 f32, 8 f64), split by the compiler
// where the target's vectors are narrower.
int vector_scan_lanes(DType t);
// The in-register scan's steps for type `t`, as the shuffle each makes of the pair (x, id) (id
// holding the identity in every lane): lane q of step s's copy is x[q - s'] for shift s' = 2^s,
// or, for q < s', id's first lane (index `lanes`); the step then combines the copy (the earlier
// terms) with x. Printed as "i, j, ..." by vector_scan_mask. The second form: the steps of a
// vector of `lanes` lanes (a part of one, where a printer scans it in parts).
std::vector<std::vector<int>> vector_scan_steps(DType t);
std::vector<std::vector<int>> vector_scan_steps(int lanes);
// Where a vector of terms or of outputs is plain memory, a printer may load or store it as one:
// contiguous_scan_term is the term of running scan `red` when it is one read of `red`'s value
// type, without a boundary rule, contiguous along the reduction's variable (its last subscript
// k + c, no other subscript using k), else nullptr; scan_is_output says whether `st`'s
// right-hand side is `red` itself and its output of `red`'s value type.
const Expr* contiguous_scan_term(const Spec& spec, const Expr& red);
bool scan_is_output(const Spec& spec, const Statement& st, const Expr& red);
// The name of the helper that scans one vector of reduction `op` over type `t` in every printer
// that has one (cpu, mojo): sb_scan_<op>_<type>, e.g. sb_scan_max_f32.
std::string vector_scan_name(ReduceOp op, DType t);
std::string vector_scan_mask(const std::vector<int>& mask);

// The rule on one statement of a typechecked spec: the Expr::ref of its reduction that has the
// shape above, or -1. (The work model of harness/run/metrics.h counts such a reduction's terms
// once per row, as the running walk computes them.)
int running_scan_reduction(const Statement& st);

// Fills spec.schedule.running_scans (one per statement) of a typechecked spec.
void running_scans(Spec& spec);

// The `--dump-ir running_scans` text: per statement, e.g.
// `stmt 0 (y[i] = sum(j in 0..i + 1: x[j])): running sum over j along i`, or `: no`.
std::string dump_running_scans(const Spec& spec);

// The Reduce node of statement `st` (one of spec.stmts) that it runs along its innermost output
// index, or nullptr when it is not a running scan. With `rows` (the statement runs row by
// row, output dimension 0 bound by a row group's loop), a rank-1 statement is not one: its
// innermost index is the row, which the group's loop runs.
const Expr* running_scan(const Spec& spec, const Statement& st, bool rows);

}  // namespace sb
