// The Mojo GPU kernels of one mojo_gpu variant: the steps of its cuda strategy's GPU mapping
// (lower/gpu_mapping.h), printed in order as Mojo functions for the NVPTX target, one per step,
// as backends/cuda/cuda_kernels.cpp prints them in CUDA. The forms printed are those
// strategies.h marks printed.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/emitter.h"
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

// One variant's code: its Mojo kernels, each preceded by comments saying its statement and
// launch geometry, and its C++ launcher for the .launch.cpp file, which launches them in order
// through SB_MOJO_LAUNCH (harness/abi/specbench_mojo_gpu.h) with the same grids as the cuda
// launcher of the same variant.
struct VariantCode {
  std::string kernels;                    // Mojo
  std::string launcher;                   // `static int sb_variant_<name>(const sb_args*) {...}`
  std::vector<std::string> kernel_names;  // the kernels it launches, in order
  std::vector<std::string> scratch;       // file-level declarations of its scratch slots
  std::vector<KernelLaunch> launches;     // every kernel launched, with its block size
};

// The code of variant `v` (its mapping has only printed forms).
VariantCode variant_code(const Spec& spec, const Variant& v, GpuFileNeeds& needs);

}  // namespace sb::mojo_gpu
