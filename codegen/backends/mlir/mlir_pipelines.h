// The mlir backend's variants are pass pipelines. This header and mlir_pipelines.cpp are the one
// place where they are written down: the emitter copies a variant's pipeline into the generated
// file (a `// sb-pipeline:` line above the variant's module), and the mlir runtime
// (harness/run/runtime_mlir.cpp) runs exactly that line through `mlir-opt-19`, then
// `mlir-translate-19 --mlir-to-llvmir` and `clang-19 -O3 -march=native -c`.
//
// Strategies:
//   loops         linalg -> scf loops (convert-linalg-to-loops), then LLVM.
//   tiled_vector  linalg -> affine loops, affine-super-vectorize (vector lanes along the
//                 innermost parallel loop), affine-loop-tile (tile), then LLVM.
//   openmp        explicit scf.parallel loops of the module (fused row groups, blocked full
//                 reductions, streamed outputs) keep their linalg ops sequential inside (a
//                 transform schedule); other linalg -> scf.parallel over the parallel dimensions
//                 (reductions stay sequential inside), f32 math as MLIR's polynomial approximations
//                 (test-math-polynomial-approximation), f64 tanh expanded into exp
//                 (test-expand-math), exp/log/sqrt as LLVM intrinsics, convert-scf-to-openmp, then
//                 LLVM with the OpenMP dialect; the module is linked against LLVM's libomp (libgomp
//                 lacks __kmpc_*).
//   blocked_matmul as openmp, and contractions as block products over each thread's rows,
//                 register-tiled by MLIR's transform dialect (mlir_gemm_schedule), with
//                 convert-vector-to-scf for the vector transfers left.
// clang compiles the LLVM IR with -fveclib=libmvec, so vector math calls become glibc's libmvec
// (linked -lmvec) instead of one libm call per lane.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sb {

// The mlir-opt arguments (space-separated, no shell quoting needed) that lower a module of
// memref-based linalg ops under each strategy; the strategy records (strategies.cpp) call them
// with the variant's parameters (already defaulted).
std::string mlir_loops_pipeline();
// Without `vectorize`, the loops are tiled but not vectorised.
std::string mlir_tiled_vector_pipeline(int64_t tile, int64_t vector, bool vectorize = true);
// `explicit_loops`: the module holds scf.parallel loops of its own, whose linalg ops must run
// sequentially inside them; it then carries mlir_parallel_loops_schedule().
std::string mlir_openmp_pipeline(bool explicit_loops);
// blocked_matmul: its modules always hold explicit loops (the block products'). With
// `native_tiles` (mlir_native_tiles_wanted), the transform interpreter's entry point is
// mlir_gemm_entry_point(kMlirSimdBytes): the runtime replaces that token by the host's native
// vector bytes before it runs the line.
std::string mlir_blocked_matmul_pipeline(bool native_tiles);
// `pipeline` for a module with bf16 memory: arith-expand with include-bf16 before the arith
// lowering turns every bf16 arith.truncf (and extf) into integer arithmetic, rounding to nearest
// even (NaN kept a quiet NaN). Else LLVM 19 lowers an fptrunc to bfloat on an x86 without
// AVX512-BF16 to a call of __truncsfbf2, which libgcc 12 (Debian 12's) lacks.
std::string mlir_bf16_pipeline(const std::string& pipeline);

// blocked_matmul's register tiles by the native vector width, as the cpu printer's SB_SIMD_BYTES
// chooses its tiles: `mr` rows of two native vectors each, for a machine whose widest vectors
// are `simd_bytes` wide (AVX-512: 64, AVX and AVX2: 32, else 16). Measured on sgemm at 512 to
// 2048 (results/vm/mlir-native-tiles-20261207): with AVX-512, 8 rows (12 took 1.3x the time);
// with AVX2 (clang -march=haswell), 8 rows (4 ymm accumulators each) want 32 of its 16 registers
// and took 1.6x the time of 4 rows. 6 rows took 0.90-0.95x the time of 4 there, but a thread's
// rows are then a multiple of lcm(8, 6) = 24, and an even split of 512 or 1024 rows over 2
// threads is not: the rows stay a multiple of 8, so the AVX-512 module is what it was.
struct MlirNativeTile {
  int64_t simd_bytes = 0;
  int64_t mr = 0;
};
const std::vector<MlirNativeTile>& mlir_native_tiles();
// The table above in words, for the strategy's parameter doc.
std::string mlir_native_tiles_doc();
// Whether a blocked_matmul variant's tiles come from mlir_native_tiles: its `mr` or `nr_bytes`
// is 0 (their defaults).
bool mlir_native_tiles_wanted(int64_t mr, int64_t nr_bytes);
// The rows that a thread's share of C is a multiple of: `mr`, or with mr == 0 a multiple of every
// native tile's rows.
int64_t mlir_gemm_row_multiple(int64_t mr);
// The token in a pipeline line that the runtime replaces by the host's native vector bytes.
inline constexpr const char* kMlirSimdBytes = "@simd_bytes@";
// The named sequence of the native tiles for `simd` ("sb_schedule_simd64"; `simd` may be
// kMlirSimdBytes).
std::string mlir_gemm_entry_point(const std::string& simd);

// A transform-dialect schedule (`transform.named_sequence @<name>`, by default __transform_main,
// for a module with the `transform.with_named_sequence` attribute) that runs the transform ops
// `first` (lines of mlir_gemm_schedule, or empty), then lowers the linalg ops nested in
// scf.parallel loops to sequential scf.for loops, so that the OpenMP lowering makes only the outer
// loop a parallel region. Two-space indented lines, ending in a newline.
std::string mlir_parallel_loops_schedule(const std::string& first = "",
                                         const std::string& name = "__transform_main");

// The attribute that marks the linalg.generic of a blocked_matmul block product of element type
// `type` (an MLIR type name: f32, f64), for mlir_gemm_schedule to find it.
std::string mlir_gemm_mark(const std::string& type);

// blocked_matmul's register tiles, as transform ops for mlir_parallel_loops_schedule: every
// block product marked mlir_gemm_mark(type) (i by j by k, C += A * B, the printer's cache block)
// is tiled into mr x nr tiles of C and steps of 4 along k, each loop peeled so that whole tiles
// have static shapes; whole tiles are vectorised, their reads folded onto the base memrefs, the C
// tile hoisted out of the k loop into vector registers, and the contraction lowered to outer
// products, that is FMAs of a broadcast element of A by a row of B. The rows past the whole
// tiles (fewer than mr) are tiled alike one row at a time, 1 x nr, and vectorised as whole tiles:
// a grouped convolution's im2col products of 4 rows, all of them scalar loops before, took 0.21x
// the time, and those of 12 rows (8 + 4) 0.29-0.31x (mlir im2col on grouped_conv2d and
// grouped_pointwise; results/vm/mlir-row-tiles-20261207). Partial column tiles and
// steps stay linalg ops (the parallel-loops schedule makes them loops).
std::string mlir_gemm_schedule(const std::string& type, int64_t mr, int64_t nr);

// The k step of a register tile (mlir_gemm_schedule).
inline constexpr int64_t kMlirGemmKStep = 4;

}  // namespace sb
