// The vendor_cpu backend's strategy registry (records: strategies.cpp; the record type:
// backends/common/host_strategy.h).
#pragma once

#include "backends/common/host_strategy.h"

namespace sb {

// blas, im2col.
const host::HostRegistry& vendor_cpu_strategies();

}  // namespace sb
