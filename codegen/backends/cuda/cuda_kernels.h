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

// The depths of the scores' dot products that a flash_attention block stages through shared
// memory at a time (its q and k tiles hold this many depths of each query and key).
constexpr int64_t kAttentionDepthChunk = 32;

// One operand of register_blocked_matmul's shared-memory tiles, as both GPU printers load it: a
// tile of X rows (or columns) by bk values of k, stored [k][x], consecutive threads loading along
// the operand's contiguous subscript, W = 16 bytes of elements at a time where `vec`.
struct TileOperand {
  const Expr* read;
  const Tensor* t;
  bool k_inner;  // k is the operand's contiguous (last) subscript
  bool batched;  // read with the batch index first; else shared by the products
  std::string xv, lim, base, tile, flag;  // its index variable and bound, the kernel's names
  int64_t X;
  int W;     // elements in 16 bytes
  bool vec;  // loads vectors: no boundary rule, not f16/bf16 (those load one at a time,
             // widened), and the tile's contiguous extent a multiple of W
  // Where it loads vectors, whether they start aligned at every tile without a check of k's lower
  // bound: k is not contiguous, or the bound is a literal multiple of W. The kernel checks the
  // base address and that the rows are whole vectors either way.
  bool lo_aligned;
};

// The two operands, a then b, of product `m` (statement `st`, its index variables `iv`, `jv` and
// their bounds `M`, `N` as the printer spells them) with bm x bk and bk x bn tiles.
std::array<TileOperand, 2> tile_operands(const Spec& spec, const Statement& st,
                                         const MatmulMatch& m, int64_t bm, int64_t bn, int64_t bk,
                                         const std::string& iv, const std::string& jv,
                                         const std::string& M, const std::string& N);

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

// The kernel bodies of mapping `m` (variant `v` of a cuda strategy) that are written once as loop
// IR (lower/gpu_bodies.h), step by step, for `gen --dump-ir gpu_bodies`; the other steps are
// named as printed by each GPU printer.
std::string dump_kernel_bodies(const Spec& spec, const GpuMapping& m, const Variant& v,
                               const StrategyInfo& info);

// `gen --dump-ir gpu_mapping` (the mapping) or `gpu_bodies` (its kernel bodies) for each of
// `backend`'s variants of `spec`, whose GPU mapping is `mapping(v)` under its cuda strategy.
enum class GpuDump { Mapping, Bodies };
std::string dump_gpu_variants(const Spec& spec, const std::string& backend, GpuDump what,
                              const std::function<GpuMapping(const Variant&)>& mapping);

}  // namespace sb::cuda
