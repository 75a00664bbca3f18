#include "backends/mojo_gpu/gpu_kernels.h"

#include "backends/mojo_gpu/gpu_gen.h"

namespace sb::mojo_gpu {

VariantCode variant_code(const Spec& spec, const Variant& v, GpuFileNeeds& needs) {
  return Gen(spec, v, needs).run();
}

}  // namespace sb::mojo_gpu
