// The Mojo GPU kernels of one mojo_gpu variant: the steps of its cuda strategy's GPU mapping
// (lower/gpu_mapping.h), printed in order as Mojo functions for the NVPTX target, one per step,
// as backends/cuda/cuda_kernels.cpp prints them in CUDA. The forms printed are those
// strategies.h marks printed.
#pragma once

#include <map>
#include <set>
#include <string>

#include "backends/mojo/mojo_lowering.h"
#include "ir/ir.h"

namespace sb::mojo_gpu {

// File-level needs of the kernels: the statements' math and helpers (MojoNeeds), the names the
// kernels import by module ("max.gpu": thread_idx, ...; "std.memory": stack_allocation, ...), and
// the device helpers they call (warp all-reductions), by name.
struct GpuFileNeeds {
  MojoNeeds stmt;
  std::map<std::string, std::set<std::string>> imports;
  std::map<std::string, std::string> helpers;
};

// The kernels of variant `v` (its mapping has only printed forms), each preceded by comments
// saying its statement and launch geometry.
std::string variant_kernels(const Spec& spec, const Variant& v, GpuFileNeeds& needs);

}  // namespace sb::mojo_gpu
