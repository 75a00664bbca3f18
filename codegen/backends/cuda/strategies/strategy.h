// The cuda backend's strategies as objects: one CudaStrategy record per strategy, registered in
// registry.cpp from one file per strategy family (elementwise.cpp, scalar_reduce.cpp,
// row_reduce.cpp, matmul.cpp, transpose.cpp, stencil.cpp, scan.cpp, attention.cpp).
//
// A record holds everything the backend knows about a strategy: its StrategyInfo (name, doc,
// typed parameters with default and range; what `list --strategies` and the README table show),
// its fit check (the located error of a variant whose strategy fits no statement of the spec, or
// whose parameters do not fit together), and its schedule as the GPU mapping pass
// (lower/gpu_mapping.h) reads it: whether it fuses row groups and with which unit, and its
// placement of every other statement (the strategy's kernel where the statement has its shape,
// lower/patterns.h, the generic one otherwise), which the kernel generator (cuda_kernels.cpp)
// prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lower/gpu_mapping.h"
#include "lower/patterns.h"
#include "backends/emitter.h"
#include "support/diag.h"
#include "ir/ir.h"

namespace sb::cuda {

struct CudaStrategy {
  StrategyInfo info;
  // What the strategy needs, for the error of a variant whose strategy fits no statement; empty
  // for a strategy that applies to every statement (it has no shape to fit).
  std::string needs;
  // True when `st` has the strategy's shape; otherwise false, with the reason in `why`. Null for
  // a strategy that applies to every statement.
  std::function<bool(const Spec&, const Statement&, std::string* why)> matches;
  // Checks that must hold for a variant (parameters that fit together), before the shape check.
  // Null when there are none.
  std::function<Status(const Spec&, const Variant&, const StrategyInfo&)> check_params;
  // Checks on each statement the strategy targets (e.g. shared memory of its tiles). Null when
  // there are none.
  std::function<Status(const Spec&, const Statement&, const Variant&, const StrategyInfo&)>
      check_target;
  // What the strategy fuses across statements (lower/gpu_mapping.h): row groups whose
  // statements the fused kernel can lower are one kernel, a row owned by a warp or a block
  // (fuse.rows; None: no row fusion); attention groups are one kernel (fuse.attention).
  GpuFusion fuse;
  // The GPU mapping of statement k (lower/gpu_mapping.h): the strategy's kernel where the
  // statement has its shape, else a generic one.
  GpuPlace place;
};

// The generic placement of statement k: one kernel of `kind`, ThreadPerElement or GridStride.
GpuStep generic_step(size_t k, GpuKernel kind = GpuKernel::GridStride);

// Every cuda strategy, in the order `list --strategies` and the README show them.
const std::vector<CudaStrategy>& strategy_registry();
// The record of `name`; null when there is none.
const CudaStrategy* find_cuda_strategy(const std::string& name);

// The located fit check of variant `v` under strategy `s` (whose info is `info`): an error at a
// parameter or at the variant when the parameters do not fit together, when a targeted
// statement does not fit the parameters, or when the strategy targets no statement of the spec.
Status check_fit(const CudaStrategy& s, const Spec& spec, const Variant& v,
                 const StrategyInfo& info);

// Where parameter `name` of `v` is written; the variant's loc when it takes the default.
Loc param_loc(const Variant& v, const std::string& name);

// Parameters shared by several strategies.
ParamInfo block_size_param();
ParamInfo blocks_per_sm_param();
ParamInfo pow2_param(const char* name, int64_t def, int64_t lo, int64_t hi, const char* doc);

// The families, each defined in its own file; registry.cpp appends them in order.
void add_elementwise_strategies(std::vector<CudaStrategy>& out);     // elementwise.cpp
void add_scalar_reduce_strategies(std::vector<CudaStrategy>& out);   // scalar_reduce.cpp
void add_row_reduce_strategies(std::vector<CudaStrategy>& out);      // row_reduce.cpp
void add_matmul_strategies(std::vector<CudaStrategy>& out);          // matmul.cpp
void add_transpose_strategies(std::vector<CudaStrategy>& out);       // transpose.cpp
void add_stencil_strategies(std::vector<CudaStrategy>& out);         // stencil.cpp
void add_scan_strategies(std::vector<CudaStrategy>& out);            // scan.cpp
void add_attention_strategies(std::vector<CudaStrategy>& out);       // attention.cpp

}  // namespace sb::cuda
