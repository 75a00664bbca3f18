// The cpu backend's strategy registry (records: strategies.cpp; the record type:
// backends/common/host_strategy.h).
#pragma once

#include "backends/common/host_strategy.h"

namespace sb {

// loops, omp_simd, blocked_matmul.
const host::HostRegistry& cpu_strategies();

}  // namespace sb
