// The mojo backend's strategy registry (records: strategies.cpp; the record type:
// backends/common/host_strategy.h).
#pragma once

#include "backends/common/host_strategy.h"

namespace sb {

// loops, vectorize_parallel, blocked_matmul.
const host::HostRegistry& mojo_strategies();

}  // namespace sb
