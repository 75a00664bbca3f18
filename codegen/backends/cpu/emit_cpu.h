// The `cpu` backend: one C++17 translation unit per spec, generated/<spec>/cpu/<spec>.cpp,
// built by the harness with g++ -O3 -march=native -fopenmp -fPIC -shared.
//
// Strategies:
//   loops           (no parameters) a scalar loop nest per statement.
//   omp_simd        (no parameters) `#pragma omp parallel for schedule(static)` on the outermost
//                   output loop (one contiguous range per thread). `#pragma omp simd` goes on the
//                   innermost output loop when the statement has no reduction or that loop's
//                   index reaches the contiguous (last) subscript of some read; otherwise on the
//                   innermost reduction loops (`omp simd reduction(...)`). A scalar output's
//                   top-level reduction is split over the threads by
//                   `#pragma omp parallel for schedule(static) reduction(+|max|min: acc)`: over
//                   its own range where it holds another reduction, else over chunks of its
//                   range (lower/parallelize.h: kReduceChunkBytes), each into partials.
//                   A scan along the innermost output index (lower/running_scans.h) carries one
//                   accumulator along that index, its outer loops as above.
//                   Elementwise statements whose tensors outgrow the caches (a run-time test)
//                   stream their output: blocks computed into an L1 buffer, written with
//                   non-temporal stores (no read-for-ownership), one collapsed static loop over
//                   rows and blocks (see emit_cpu_statement). A read across rows runs in
//                   tiles, moved in register-transposed blocks where the tile_transposes pass
//                   allows (lower/tile_transposes.h, sb_transpose_8x16_b32).
//   blocked_matmul  (mc 128, kc 512, nc 4096) statements that match_contraction() accepts
//                   (patterns.h) become a call of a cache-blocked GEMM emitted into the file
//                   (sb_gemm_f32/_f64: the loop IR of lower/blocked_gemm.h printed by
//                   print_loops.h: packed panels, a register-blocked micro-kernel in GCC vector
//                   extensions, OpenMP over row blocks, ragged edges; f16 and bf16 operands
//                   widened to f32 while they are packed, sb_gemm_bf16_bf16_f32), followed
//                   by an elementwise pass for the rest of the statement (a bias term, ...);
//                   other statements are lowered as omp_simd. check_variant() rejects a spec
//                   without a contraction statement.
//   im2col          (as blocked_matmul) convolutions (match_gathered_gemm) as a gather into a
//                   column buffer and one blocked GEMM per batch element.
//   flash_attention (as blocked_matmul, bk 256, approx_math 0) each attention group
//                   (match_attention: five statements, scores to weighted sum) becomes one
//                   kernel calling sb_attention_f32/_f64 (attention.h), FlashAttention's online
//                   softmax over blocks of keys on the blocked GEMM's micro-kernel; the group's
//                   temps are never written. Other statements as blocked_matmul.
// Each statement of each variant is a `static void sb_<variant>_s<k>(...)` kernel (`static int`
// for a GEMM, non-zero when out of memory) taking the tensors it touches as __restrict pointers
// and the sizes it uses as const int64_t; each variant is `static int sb_variant_<variant>(const
// sb_args*)`, which unpacks the arguments, calls the statement kernels in order and returns 0.
#pragma once

#include "backends/emitter.h"
#include "lower/tile_transposes.h"

namespace sb {

class StmtLowering;
class CodeWriter;

// The cpu emitter (stateless; lives for the whole program).
const Emitter& cpu_emitter();

// Writes the loop nest of one statement (output indices bound by the loops it writes) into `w`:
// scalar loops, or with `omp` the OpenMP/simd loops of the omp_simd strategy. Under `omp`, an
// elementwise statement of rank > 0 gets two forms chosen at run time by the bytes of the
// tensors it touches: the plain loop nest, and above SB_STREAM_MIN_BYTES (48 MiB) a blocked
// form writing the output with non-temporal stores. Returns true when the code uses that form:
// the file must then contain cpu_stream_includes() and cpu_stream_support(). Under `omp`, an
// elementwise statement that reads across rows (lower/tile_transposes.h) runs both forms in
// `tiles`, and where cpu_transposes_in_blocks, with the read in transposed blocks. Shared with the
// vendor_cpu emitter for statements a library does not cover.
bool emit_cpu_statement(StmtLowering& L, bool omp, CodeWriter& w, const Tiles& tiles = Tiles{});

// Whether emit_cpu_statement(L, omp, ...) of statement `st` moves a read in the tile_transposes
// pass's blocks (lower/tile_transposes.h); the file must then pass `blocks` to
// cpu_stream_support.
bool cpu_transposes_in_blocks(const Spec& spec, const Statement& st, bool omp);

// The #include of <immintrin.h>, where the target has it: for the vector scans
// (HelperSet::use_vector_scan), and part of cpu_stream_includes.
std::string cpu_intrinsics_include();

// The #include lines (after <math.h> and <stdint.h>) and the definitions (SB_STREAM_MIN_BYTES,
// SB_STREAM_BLOCK, sb_head_elems, sb_store_line, sb_stream_fence) that the streaming form needs;
// with `blocks`, also that of the transposed blocks (sb_transpose_8x16_b32).
std::string cpu_stream_includes();
std::string cpu_stream_support(bool blocks = false);

}  // namespace sb
