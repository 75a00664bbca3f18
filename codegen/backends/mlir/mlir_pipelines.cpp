#include "backends/mlir/mlir_pipelines.h"

#include <numeric>

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

std::string mlir_tiled_vector_pipeline(int64_t tile, int64_t vector, bool vectorize) {
  // Vectorised first, then tiled: MLIR 19's affine-super-vectorize crashes on a tiled loop
  // nest that holds a reduction (row_sum), and tiles the vector loops fine.
  return "--convert-linalg-to-affine-loops --canonicalize " +
         (vectorize ? "--affine-super-vectorize=virtual-vector-size=" + std::to_string(vector) + " "
                    : std::string()) +
         "--affine-loop-tile=tile-size=" + std::to_string(tile) + " --canonicalize " + kToLLVM;
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

std::string mlir_blocked_matmul_pipeline(bool native_tiles) {
  // As openmp, with the register tiles' remaining vector transfers (reads of A's strided rows)
  // lowered to scf before the LLVM conversion.
  std::string p = mlir_openmp_pipeline(true);
  if (native_tiles) {
    const std::string interp = "--transform-interpreter ";
    SB_ASSERT(p.rfind(interp, 0) == 0, "the openmp pipeline does not start with the interpreter");
    p.replace(0, interp.size(),
              "--transform-interpreter=entry-point=" + mlir_gemm_entry_point(kMlirSimdBytes) + " ");
  }
  const std::string at = "--convert-scf-to-openmp ";
  const size_t pos = p.find(at);
  SB_ASSERT(pos != std::string::npos, "the openmp pipeline has no --convert-scf-to-openmp");
  p.insert(pos + at.size(), "--convert-vector-to-scf ");
  return p;
}

std::string mlir_bf16_pipeline(const std::string& pipeline) {
  std::string p = pipeline;
  const std::string at = "--convert-arith-to-llvm ";
  const size_t pos = p.find(at);
  SB_ASSERT(pos != std::string::npos, "an mlir pipeline without --convert-arith-to-llvm");
  p.insert(pos, "--arith-expand=include-bf16=true ");
  return p;
}

const std::vector<MlirNativeTile>& mlir_native_tiles() {
  static const std::vector<MlirNativeTile> tiles{{64, 8}, {32, 4}, {16, 4}};
  return tiles;
}

std::string mlir_native_tiles_doc() {
  std::string s;
  for (const MlirNativeTile& t : mlir_native_tiles())
    s += (s.empty() ? "" : ", ") + std::to_string(t.mr) + " where native vectors are " +
         std::to_string(t.simd_bytes) + " bytes";
  return s;
}

bool mlir_native_tiles_wanted(int64_t mr, int64_t nr_bytes) {
  return mr == 0 || nr_bytes == 0;
}

int64_t mlir_gemm_row_multiple(int64_t mr) {
  if (mr != 0) return mr;
  int64_t m = 1;
  for (const MlirNativeTile& t : mlir_native_tiles()) m = std::lcm(m, t.mr);
  return m;
}

std::string mlir_gemm_entry_point(const std::string& simd) {
  return "sb_schedule_simd" + simd;
}

std::string mlir_parallel_loops_schedule(const std::string& first, const std::string& name) {
  return "  transform.named_sequence @" + name +
         "(%root: !transform.any_op "
         "{transform.readonly}) {\n" +
         first +
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

std::string mlir_gemm_mark(const std::string& type) {
  return "sb_gemm_" + type;
}

std::string mlir_gemm_schedule(const std::string& type, int64_t mr, int64_t nr) {
  const std::string any = "!transform.any_op";
  const std::string loop = "!transform.op<\"scf.for\">";
  const std::string mark = mlir_gemm_mark(type), full = mark + "_tile";
  const std::string p = "%" + mark + "_";  // handle names unique per element type
  std::string s;
  auto line = [&s](const std::string& l) { s += "    " + l + "\n"; };
  // Tiles one dimension of `op` by `size` (sizes: i, j, k) and peels the loop; `body` names the
  // handle of the tiled op in the whole-tile loop. A loop of step 1 has whole tiles only (and
  // transform.loop.peel fails on it).
  auto tile_and_peel = [&](const std::string& op, const std::string& sizes, int64_t size,
                           const std::string& tag, const std::string& body, int depth) {
    const std::string in = std::string(depth * 2, ' ');
    const std::string t = p + tag;
    if (size == 1) {
      line(in + body + ", " + t + "_loop = transform.structured.tile_using_for " + op +
           " tile_sizes [" + sizes + "] : (" + any + ") -> (" + any + ", " + any + ")");
      return;
    }
    line(in + t + "_op, " + t + "_loop = transform.structured.tile_using_for " + op +
         " tile_sizes [" + sizes + "] : (" + any + ") -> (" + any + ", " + any + ")");
    line(in + t + "_for = transform.cast " + t + "_loop : " + any + " to " + loop);
    line(in + t + "_whole, " + t + "_rest = transform.loop.peel " + t + "_for : (" + loop +
         ") -> (" + any + ", " + any + ")");
    line(in + body + " = transform.structured.match ops{[\"linalg.generic\"]} in " + t +
         "_whole : (" + any + ") -> " + any);
  };
  line("// blocked_matmul, " + type + ": register tiles of " + std::to_string(mr) + " x " +
       std::to_string(nr) + " along k steps of " + std::to_string(kMlirGemmKStep));
  line(p + "ops = transform.structured.match ops{[\"linalg.generic\"]} attributes{" + mark +
       "} in %root : (" + any + ") -> " + any);
  line("transform.foreach " + p + "ops : " + any + " {");
  line("^bb0(" + p + "op: " + any + "):");
  tile_and_peel(p + "op", std::to_string(mr) + ", 0, 0", mr, "i", p + "rows", 1);
  tile_and_peel(p + "rows", "0, " + std::to_string(nr) + ", 0", nr, "j", p + "tile", 1);
  tile_and_peel(p + "tile", "0, 0, " + std::to_string(kMlirGemmKStep), kMlirGemmKStep, "k",
                p + "step", 1);
  line("  transform.annotate " + p + "step \"" + full + "\" : " + any);
  if (mr > 1) {
    // The rows past the whole tiles (fewer than mr: a product of few rows has nothing else) one
    // at a time, in tiles of 1 x nr along the same steps of k, vectorised as the whole tiles are.
    line("  " + p + "rest = transform.structured.match ops{[\"linalg.generic\"]} in " + p +
         "i_rest : (" + any + ") -> " + any);
    tile_and_peel(p + "rest", "1, 0, 0", 1, "r", p + "row", 1);
    tile_and_peel(p + "row", "0, " + std::to_string(nr) + ", 0", nr, "rj", p + "row_tile", 1);
    tile_and_peel(p + "row_tile", "0, 0, " + std::to_string(kMlirGemmKStep), kMlirGemmKStep, "rk",
                  p + "row_step", 1);
    line("  transform.annotate " + p + "row_step \"" + full + "\" : " + any);
  }
  line("}");
  line(p +
       "f = transform.structured.match ops{[\"func.func\"]} attributes{llvm.emit_c_interface} in "
       "%root : (" +
       any + ") -> " + any);
  // Whole tiles have static shapes once their subviews' sizes are folded.
  line("transform.apply_patterns to " + p + "f {");
  line("  transform.apply_patterns.canonicalization");
  line("} : " + any);
  line(p + "whole = transform.structured.match ops{[\"linalg.generic\"]} attributes{" + full +
       "} in %root : (" + any + ") -> " + any);
  line("transform.structured.vectorize " + p + "whole : " + any);
  // Reads of subviews become reads of the base memrefs (hoisting needs that), the vectorised
  // multiply and sum a vector.contract; equal index computations merged and moved out of loops,
  // so that the C tile's read and write are loop-invariant and can be hoisted.
  line("transform.apply_patterns to " + p + "f {");
  line("  transform.apply_patterns.memref.fold_memref_alias_ops");
  line("  transform.apply_patterns.vector.reduction_to_contract");
  line("  transform.apply_patterns.vector.transfer_permutation_patterns");
  line("  transform.apply_patterns.canonicalization");
  line("} : " + any);
  line("transform.apply_cse to " + p + "f : " + any);
  line(p + "loops = transform.structured.match ops{[\"scf.for\"]} in " + p + "f : (" + any +
       ") -> " + any);
  line("transform.apply_licm to " + p + "loops : " + any);
  line(p + "hoisted = transform.structured.hoist_redundant_vector_transfers " + p + "f : (" + any +
       ") -> " + any);
  line("transform.apply_patterns to " + p + "hoisted {");
  line("  transform.apply_patterns.vector.lower_contraction lowering_strategy = \"outerproduct\"");
  line("  transform.apply_patterns.vector.lower_outerproduct");
  line("  transform.apply_patterns.vector.transfer_permutation_patterns");
  line("  transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1");
  line("  transform.apply_patterns.canonicalization");
  line("} : " + any);
  return s;
}

}  // namespace sb
