// The mlir backend's strategy registry (records: strategies.cpp; the record type:
// backends/common/host_strategy.h). Each record's schedule names its mlir-opt pipeline
// (mlir_pipelines.h).
#pragma once

#include <optional>
#include "backends/common/host_strategy.h"
#include "lower/patterns.h"

namespace sb {

// loops, tiled_vector, openmp.
const host::HostRegistry& mlir_strategies();

// The contractions that strategy blocked_matmul lowers as block products (emit_mlir.cpp's
// emit_gemm): match_contraction without a batch. Each operand is of the output's type or of a
// storage type (f16, bf16) widening to it: its blocks are widened (arith.extf) while they are
// copied into the thread's buffers, so that the block products run in the output's type. The
// one home of that condition: the strategy's shape check and the printer both call it.
std::optional<Contraction> match_mlir_gemm(const Spec& spec, const Statement& st);

}  // namespace sb
