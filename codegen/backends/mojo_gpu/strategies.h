// The mojo_gpu printer's registry: which kernel forms of the GPU mapping (lower/gpu_mapping.h)
// it prints, and so which cuda variants have a Mojo GPU counterpart.
//
// mojo_gpu has no strategies of its own: each cuda variant (backends/cuda/strategies/) whose
// mapping has only kernels of forms printed here is a mojo_gpu variant of the same name,
// strategy and parameters. A cuda variant with any other form has none yet, and the generated
// file's header names it with the form that is missing.
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/strategies/strategy.h"
#include "lower/gpu_mapping.h"

namespace sb::mojo_gpu {

struct KernelForm {
  GpuKernel kind;
  bool printed;       // the printer has this form (gpu_kernels.cpp)
  const char* about;  // what the form is, or why it is not printed yet
};

// Every GpuKernel, in enum order.
const std::vector<KernelForm>& kernel_forms();
const KernelForm& kernel_form(GpuKernel kind);

// The GPU mapping of variant `v` of the lowered `spec` under its cuda strategy.
GpuMapping variant_mapping(const Spec& spec, const Variant& v);

// Why cuda variant `v` of the lowered `spec` has no Mojo GPU counterpart yet; "" when it has one.
std::string missing_reason(const Spec& spec, const Variant& v);

}  // namespace sb::mojo_gpu
