// The blocked GEMM of strategy blocked_matmul, written once as loop IR (loop_ir.h); the cpu and
// mojo backends print it (backends/{cpu,mojo}/print_loops.h).
//
// For an element type T (f32 or f64) the module holds four routines:
//   sb_gemm_pack_x_<t>  an MR-tall strip of X packed over kc steps, zero past the rows it has;
//   sb_gemm_pack_y_<t>  an NR-wide strip of Y packed likewise, zero past its columns;
//   sb_gemm_tile_<t>    the micro-kernel: an MR x NR tile of C in 2 * MR vector registers
//                       (MR rows by two native vectors), ragged edges through a local tile;
//   sb_gemm_<t>         Goto's blocking: mc-row blocks of C split evenly over the threads, for
//                       each nc-wide column block and kc-deep slice a thread packs its own panel
//                       of Y and each of its row blocks of X, then runs the micro-kernel over the
//                       block's tiles. One scratch buffer (64-byte aligned panels, one pair per
//                       thread); returns 0, or 1 when that buffer cannot be allocated.
// Operands of a storage type whose elements compute in T (f16 and bf16 for f32: a contraction's
// x_type and y_type, lower/patterns.h) are widened while they are packed: for each such type O
// the module also holds sb_gemm_pack_x_<o>_<t> and/or sb_gemm_pack_y_<o>_<t>, the same strips
// with each element converted to T (exactly), and for each pair of operand types a driver
// sb_gemm_<x>_<y>_<t> (blocked_gemm_name) that calls them; the micro-kernel runs on the packed T
// panels as for T operands.
// The rules here are the only home of: the register tile (MR by native vector size, NR = two
// native vectors), the threshold below which a product runs on one thread, the panel alignment
// and the loop order. The cache blocking sizes mc, kc, nc are the strategy's parameters, passed
// at the call.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <utility>

#include "ir/ir.h"
#include "lower/loop_ir.h"

namespace sb {

// What a target chose for the register tile where the choices differ.
struct GemmTarget {
  const char* name;
  // MR when a native vector holds fewer than 32 bytes (SSE, NEON).
  int64_t mr_narrow;
};
const GemmTarget& gemm_target_cpu();   // MR 4 there: 2 * 4 accumulators in 16 xmm registers
const GemmTarget& gemm_target_mojo();  // MR 6 there, as the Mojo backend always had

// Products of fewer multiply-adds than this (about 160^3) run on one thread: there a fork/join
// costs more than it saves, and far more when another process holds one of the cores.
inline constexpr int64_t kGemmMinParallel = 4194304;
// The alignment of the packed panels, in bytes (a cache line).
inline constexpr int64_t kGemmPanelAlign = 64;

// The element types of a GEMM call's two operands (x's, y's): the computing type, or a storage
// type whose elements compute in it (is_storage_type, compute_type: ir/scalar_types.h).
using GemmOperandTypes = std::pair<DType, DType>;

// The GEMM routines for element type `t` (F32 or F64) as one loop-IR module, with operands of
// type `t`.
loops::Module blocked_gemm(DType t, const GemmTarget& target);
// The same module with a driver for each pair of operand types in `operands` (not empty; each
// type `t` or one that widens to it), and the packing routines they call.
loops::Module blocked_gemm(DType t, const GemmTarget& target,
                           const std::set<GemmOperandTypes>& operands);
// The driver a GEMM call of computing type `t` with operands of types `x` and `y` calls:
// sb_gemm_<t> when both are `t`, else sb_gemm_<x>_<y>_<t> (sb_gemm_bf16_bf16_f32).
std::string blocked_gemm_name(DType t, DType x, DType y);

// The `--dump-ir blocked_gemm` text for `spec` and `backend`: a header, then the module of each
// element type its contraction statements use (match_contraction, patterns.h) when one of the
// backend's variants calls the GEMM (`uses_gemm`, from the backend's strategy records), or a
// line saying there is no GEMM. Empty when `target` is null: a backend that does not print the
// loop IR (Emitter::gemm_target).
std::string dump_blocked_gemm(const Spec& spec, const std::string& backend,
                              const GemmTarget* target,
                              const std::function<bool(const Variant&)>& uses_gemm);

}  // namespace sb
