// The mlir backend's strategies, one record each (host_strategy.h); emit_mlir.cpp prints them
// and copies each variant's pipeline (mlir_pipelines.h) into the generated file.
#include "backends/mlir/strategies.h"

#include "backends/mlir/mlir_pipelines.h"

namespace sb {

namespace {

int64_t param_value(const std::map<std::string, int64_t>& params, const char* name) {
  auto it = params.find(name);
  SB_ASSERT(it != params.end(), std::string("mlir pipeline parameter missing: ") + name);
  return it->second;
}

// Sums in the spec's order, like the cpu backend's loops.
host::HostStrategy loops() {
  host::HostStrategy s;
  s.info = {"loops", "linalg lowered to scf loops", {}, "naive"};
  s.schedule.pipeline = [](const std::map<std::string, int64_t>&, const host::PipelineFacts&) {
    return mlir_loops_pipeline();
  };
  return s;
}

host::HostStrategy tiled_vector() {
  host::HostStrategy s;
  s.info = {"tiled_vector",
            "linalg lowered to affine loops, tiled, then vectorised by affine-super-vectorize",
            {{"tile", 64, 1, 1 << 16, false, "affine-loop-tile tile size"},
             {"vector", 8, 1, 64, true, "affine-super-vectorize vector width"}},
            "tiled_simd"};
  s.schedule.simd = true;
  s.schedule.reassociate = true;
  // Not vectorised where a read has a non-unit stride along the innermost loop, which MLIR 19's
  // affine-super-vectorize reads as contiguous (a wrong result, not a refusal).
  s.schedule.pipeline = [](const std::map<std::string, int64_t>& p,
                           const host::PipelineFacts& facts) {
    return mlir_tiled_vector_pipeline(param_value(p, "tile"), param_value(p, "vector"),
                                      !facts.strided_inner);
  };
  return s;
}

// The only strategy with explicit parallel loops (fused row groups, blocked full reductions).
host::HostStrategy openmp() {
  host::HostStrategy s;
  s.info = {"openmp",
            "linalg lowered to parallel loops, then to OpenMP (LLVM libomp); row groups fused, "
            "full reductions in parallel blocks, non-temporal stores for outputs beyond the "
            "caches; f32 math as MLIR's polynomial approximations, f64 tanh expanded into exp, "
            "exp and log as LLVM intrinsics that clang vectorises; reads across rows in tiles",
            host::tile_params(),
            "parallel_simd"};
  s.schedule.parallel = true;
  s.schedule.simd = true;
  s.schedule.fuse_rows = true;
  s.schedule.reassociate = true;
  s.schedule.pipeline = [](const std::map<std::string, int64_t>&,
                           const host::PipelineFacts& facts) {
    return mlir_openmp_pipeline(facts.explicit_loops);
  };
  return s;
}

// Contractions as block products register-tiled by the transform dialect; the rest as openmp.
// The packed block lives on the thread's stack (kc x (nc + a cache line)), hence the ranges: at
// most 512 x 528 f64, 2.1 MiB of OpenMP's 8 MiB worker stacks.
host::HostStrategy blocked_matmul() {
  host::HostStrategy s = openmp();
  s.info.name = "blocked_matmul";
  s.info.doc =
      "contractions in Goto's loop order: each OpenMP thread an equal share of the rows of C; "
      "each nc x kc block of the second operand copied to a padded buffer of the thread's (f16 "
      "and bf16 operands widened to f32 as their blocks are copied, the first's into an f32 "
      "buffer of mc x kc), then "
      "the block product of each mc of its rows tiled by MLIR's transform dialect into mr-row "
      "tiles of C held in vector registers along the sum (tiling, peeling, vectorisation, "
      "hoisting, outer products as FMAs); other statements as openmp";
  s.info.params.push_back({"mc", 64, 1, 1 << 16, false,
                           "rows of C per block product (64: a multiple of every native "
                           "register tile's rows)"});
  s.info.params.push_back({"nc", 256, 1, 512, false, "columns of the packed block of B"});
  s.info.params.push_back({"kc", 256, 1, 512, false, "terms of the sum per packed block"});
  s.info.params.push_back(
      {"mr", 0, 0, 16, false,
       "rows of a register tile of C; 0: by the native vector width, " + mlir_native_tiles_doc()});
  s.info.params.push_back(
      {"nr_bytes", 0, 0, 512, false, "bytes of a register tile's row; 0: two native vectors"});
  s.info.algorithm = "transform_gemm";
  s.needs = std::string(
                "a contraction statement of one product (no batch) whose operands have the "
                "output's type or widen to it (f16 or bf16 operands of an f32 output), ") +
            kContractionShape;
  s.matches = [](const Spec& spec, const Statement& st) {
    return match_mlir_gemm(spec, st).has_value();
  };
  s.schedule.gemm = host::Gemm::Transform;
  s.schedule.pipeline = [](const std::map<std::string, int64_t>& params,
                           const host::PipelineFacts&) {
    return mlir_blocked_matmul_pipeline(
        mlir_native_tiles_wanted(params.at("mr"), params.at("nr_bytes")));
  };
  return s;
}

// Gathered GEMMs (convolutions) as the cpu and mojo im2col variants run them: the gather into a
// column buffer, then blocked_matmul's block products per batch element.
host::HostStrategy im2col() {
  host::HostStrategy s = blocked_matmul();
  s.info.name = "im2col";
  s.info.doc =
      "convolutions (weights times gathered columns) as an im2col gather into a K x N buffer, "
      "its first loop in parallel and its rows in parts (unchecked where every read is inside), "
      "then blocked_matmul's block products per batch element and group (groups side by side, "
      "one per thread, where there are at least twice as many as threads); contractions and "
      "other statements as blocked_matmul";
  // Not matched with the cpu and mojo im2col variants: the block products are blocked_matmul's
  // (transform_gemm), not their micro-kernel.
  s.info.algorithm = "im2col_transform_gemm";
  s.needs = host::gathered_gemm_needs();
  s.matches = host::is_gathered_gemm;
  s.schedule.im2col = true;
  return s;
}

}  // namespace

std::optional<Contraction> match_mlir_gemm(const Spec& spec, const Statement& st) {
  std::optional<Contraction> c = match_contraction(spec, st);
  if (c && c->batched) return std::nullopt;
  return c;
}

const host::HostRegistry& mlir_strategies() {
  static const host::HostRegistry kRegistry(
      "mlir", {loops(), tiled_vector(), openmp(), blocked_matmul(), im2col()});
  return kRegistry;
}

}  // namespace sb
