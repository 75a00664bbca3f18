// Lowering of one cuda variant: its __global__ kernels and its launcher, for every strategy.
// Used by the cuda emitter (emit_cuda.cpp), which assembles the file; the strategies are records
// in strategies/ (strategy.h), whose schedules call the lowerings implemented here, and the
// shapes each strategy targets are decided in lower/patterns.h.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>

#include "backends/common/emit_common.h"
#include "backends/common/gpu_launch.h"
#include "backends/cuda/strategies/strategy.h"
#include "backends/emitter.h"
#include "ir/ir.h"
#include "lower/gpu_mapping.h"

namespace sb::cuda {

// File-level pieces shared by every variant of one generated file.
struct FileParts {
  HelperSet helpers;                                  // portable helpers (emit_common.h)
  std::map<std::string, std::string> device_helpers;  // CUDA-only helpers: name -> definition
  std::string globals;                                // static __device__ scratch buffers
  bool needs_string_h = false;                        // a helper calls memcpy
};

struct VariantCode {
  std::string kernels;   // the variant's __global__ functions with their comments
  std::string launcher;  // `static int sb_variant_<name>(const sb_args* sb_a) {...}`
  std::vector<KernelLaunch> launches;  // every kernel the launcher launches, with its block size
};

// Lowers every statement of `spec` for variant `v` under strategy `s` (strategies/strategy.h):
// the row groups the strategy fuses are one kernel each, and every other statement takes the
// strategy's schedule (its lowering where the statement fits, the generic one otherwise).
VariantCode lower_variant(const Spec& spec, const Variant& v, const CudaStrategy& s,
                          FileParts& file);

// A variant's threads per block (its block_size, else 256) and blocks per multiprocessor for
// sb_max_grid (its blocks_per_sm, else 4), for both GPU printers.
int64_t block_size_of(const Variant& v, const StrategyInfo& info);
int64_t blocks_per_sm_of(const Variant& v, const StrategyInfo& info);

// The kernel bodies of mapping `m` (variant `v` of a cuda strategy), written once as loop IR
// (lower/gpu_bodies.h), step by step, for `gen --dump-ir gpu_bodies`.
std::string dump_kernel_bodies(const Spec& spec, const GpuMapping& m, const Variant& v,
                               const StrategyInfo& info);

// `gen --dump-ir gpu_mapping` (the mapping) or `gpu_bodies` (its kernel bodies) for each of
// `backend`'s variants of `spec`, whose GPU mapping is `mapping(v)` under its cuda strategy.
enum class GpuDump { Mapping, Bodies };
std::string dump_gpu_variants(const Spec& spec, const std::string& backend, GpuDump what,
                              const std::function<GpuMapping(const Variant&)>& mapping);

}  // namespace sb::cuda
