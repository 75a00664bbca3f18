// The mlir backend's strategy registry (records: strategies.cpp; the record type:
// backends/common/host_strategy.h). Each record's schedule names its mlir-opt pipeline
// (mlir_pipelines.h).
#pragma once

#include "backends/common/host_strategy.h"

namespace sb {

// loops, tiled_vector, openmp.
const host::HostRegistry& mlir_strategies();

}  // namespace sb
