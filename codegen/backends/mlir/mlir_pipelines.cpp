#include "backends/mlir/mlir_pipelines.h"

#include "support/diag.h"

namespace sb {

namespace {

// From loops (scf/affine, possibly with vector ops) down to the LLVM dialect. math ops without an
// LLVM intrinsic (tanh, erf) become libm calls first.
const char* const kToLLVM =
    "--lower-affine --convert-vector-to-scf --convert-scf-to-cf --convert-math-to-libm "
    "--expand-strided-metadata --lower-affine --convert-vector-to-llvm --convert-arith-to-llvm "
    "--convert-math-to-llvm --finalize-memref-to-llvm --convert-func-to-llvm "
    "--convert-cf-to-llvm --reconcile-unrealized-casts";

// The OpenMP variant: memrefs are lowered before scf.parallel regions are outlined by the
// OpenMP lowering, and the omp dialect is converted last.
const char* const kOmpToLLVM =
    "--convert-math-to-libm --convert-scf-to-openmp --lower-affine --expand-strided-metadata "
    "--lower-affine --finalize-memref-to-llvm --convert-scf-to-cf --convert-vector-to-llvm "
    "--convert-arith-to-llvm --convert-math-to-llvm --convert-func-to-llvm --convert-cf-to-llvm "
    "--convert-openmp-to-llvm --reconcile-unrealized-casts";

}  // namespace

// Every pipeline is a list of mlir-opt arguments without spaces inside any of them (the runtime
// splits the line at spaces), so a pass takes at most one option.
std::string mlir_loops_pipeline() {
  return std::string("--convert-linalg-to-loops --canonicalize ") + kToLLVM;
}

std::string mlir_tiled_vector_pipeline(int64_t tile, int64_t vector) {
  // Vectorised first, then tiled: MLIR 19's affine-super-vectorize crashes on a tiled loop
  // nest that holds a reduction (row_sum), and tiles the vector loops fine.
  return "--convert-linalg-to-affine-loops --canonicalize "
         "--affine-super-vectorize=virtual-vector-size=" +
         std::to_string(vector) + " --affine-loop-tile=tile-size=" + std::to_string(tile) +
         " --canonicalize " + kToLLVM;
}

std::string mlir_openmp_pipeline(bool explicit_loops) {
  // The module's explicit scf.parallel loops keep their linalg ops sequential
  // (mlir_parallel_loops_schedule(), run by the transform interpreter and then erased; MLIR 19
  // has the eraser only as a test pass). The other linalg ops' parallel dimensions become
  // scf.parallel, and every scf.parallel an OpenMP region; clang vectorises their bodies.
  // f32 tanh, exp, log, erf... become MLIR's polynomial approximations (plain arith and fma,
  // which clang vectorises; a test pass in MLIR 19), whose floor and fma must be LLVM
  // intrinsics before test-expand-math would expand them into slower integer code; then the
  // remaining tanh (f64) is expanded into exp. Math ops with an LLVM intrinsic become
  // intrinsics before the rest become libm calls, so that clang can map vector exp and log to
  // libmvec.
  return std::string(explicit_loops ? "--transform-interpreter "
                                      "--test-transform-dialect-erase-schedule "
                                    : "") +
         "--convert-linalg-to-parallel-loops --canonicalize --test-math-polynomial-approximation "
         "--convert-math-to-llvm --test-expand-math --convert-math-to-llvm " +
         kOmpToLLVM;
}

std::string mlir_parallel_loops_schedule() {
  return "  transform.named_sequence @__transform_main(%root: !transform.any_op "
         "{transform.readonly}) {\n"
         "    %loops = transform.structured.match ops{[\"scf.parallel\"]} in %root : "
         "(!transform.any_op) -> !transform.any_op\n"
         "    transform.foreach %loops : !transform.any_op {\n"
         "    ^bb0(%loop: !transform.any_op):\n"
         "      %inner = transform.structured.match ops{[\"linalg.generic\", \"linalg.fill\"]} in "
         "%loop : (!transform.any_op) -> !transform.any_op\n"
         "      %lowered = transform.structured.convert_to_loops %inner : (!transform.any_op) -> "
         "!transform.any_op\n"
         "    }\n"
         "    transform.yield\n"
         "  }\n";
}

}  // namespace sb
