#include "backends/cuda/emit_cuda.h"

#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/strategies/strategy.h"
#include "backends/common/emit_common.h"

namespace sb {

namespace {

class CudaEmitter final : public Emitter {
 public:
  std::string backend() const override { return "cuda"; }
  std::string extension() const override { return "cu"; }
  // The registry's strategies (strategies/strategy.h), in its order.
  std::vector<StrategyInfo> strategies() const override {
    std::vector<StrategyInfo> out;
    for (const cuda::CudaStrategy& s : cuda::strategy_registry()) out.push_back(s.info);
    return out;
  }
  Status check_variant(const Spec& spec, const Variant& v) const override {
    const cuda::CudaStrategy* s = cuda::find_cuda_strategy(v.strategy);
    SB_ASSERT(s != nullptr, "unknown cuda strategy " + v.strategy);
    return cuda::check_fit(*s, spec, v, s->info);
  }
  bool spells(Fn fn) const override { return c_spells(fn); }
  // f16 and bf16 elements are structs that read as float (storage_types in emit_common.h).
  bool takes_storage(DType) const override { return true; }
  std::string dump_gpu_mapping(const Spec& spec) const override {
    return cuda::dump_gpu_variants(spec, backend(), cuda::GpuDump::Mapping, mapping(spec));
  }
  std::string dump_gpu_bodies(const Spec& spec) const override {
    return cuda::dump_gpu_variants(spec, backend(), cuda::GpuDump::Bodies, mapping(spec));
  }

 private:
  // A variant's mapping: its cuda strategy's schedule.
  static std::function<GpuMapping(const Variant&)> mapping(const Spec& spec) {
    return [&spec](const Variant& v) {
      const cuda::CudaStrategy* s = cuda::find_cuda_strategy(v.strategy);
      SB_ASSERT(s != nullptr, "unknown cuda strategy " + v.strategy);
      return gpu_mapping(spec, s->fuse, s->place);
    };
  }

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

const char* const kMacros =
    R"(// Every launch goes through SB_LAUNCH. A CUDA simulator may define it (and the CUDA names used
// here) before this point to compile the same text with a plain C++ compiler.
#ifndef SB_LAUNCH
#define SB_LAUNCH(kernel, grid, block, smem, stream, ...) \
  kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#endif

// Checks a CUDA runtime call, or the launch just made: on failure, prints file:line, what failed
// and the CUDA error string, and returns the error code from the enclosing launcher.
#define SB_CUDA_CHECK(call) SB_CUDA_CHECK_TEXT((call), #call)
#define SB_CHECK_LAUNCH(kernel) SB_CUDA_CHECK_TEXT(cudaGetLastError(), "launch of " #kernel)
#define SB_CUDA_CHECK_TEXT(call, text)                                               \
  do {                                                                               \
    const cudaError_t sb_err = (call);                                               \
    if (sb_err != cudaSuccess) {                                                     \
      fprintf(stderr, "%s:%d: CUDA error in %s: %s\n", __FILE__, __LINE__, text,     \
              cudaGetErrorString(sb_err));                                           \
      return (int)sb_err;                                                            \
    }                                                                                \
  } while (0)

)";

const char* const kSharedMacros =
    R"(// Shared memory is declared through these, so that a CUDA simulator can track each access
// (races, indices out of range); under nvcc they are plain __shared__ arrays.
#ifndef SB_SHARED_ARRAY
#define SB_SHARED_ARRAY(T, name, n) __shared__ T name[n]
#endif
#ifndef SB_DYNAMIC_SHARED
#define SB_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#endif

)";

GeneratedFile CudaEmitter::print(const Spec& spec) const {
  cuda::FileParts file;
  std::string kernels, launchers;
  std::vector<KernelLaunch> launches;
  for (const Variant& v : backend_variants(spec, backend())) {
    const cuda::CudaStrategy* s = cuda::find_cuda_strategy(v.strategy);
    SB_ASSERT(s != nullptr, "unknown cuda strategy " + v.strategy);
    const cuda::VariantCode code = cuda::lower_variant(spec, v, *s, file);
    kernels += code.kernels;
    launchers += code.launcher;
    launches.insert(launches.end(), code.launches.begin(), code.launches.end());
  }

  std::string out = file_header(spec, *this);
  out +=
      "\n#include <cuda_runtime.h>\n#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n";
  if (file.needs_string_h) out += "#include <string.h>\n";
  out += "\n#include \"specbench_abi.h\"\n\n";
  out += kMacros;
  out += storage_types(spec, StorageLang::Cuda);
  const bool shared = kernels.find("SB_SHARED_ARRAY(") != std::string::npos ||
                      kernels.find("SB_DYNAMIC_SHARED(") != std::string::npos;
  if (shared) out += kSharedMacros;
  if (!file.helpers.empty())
    out += banner("Helpers") + file.helpers.definitions("static inline __host__ __device__") + "\n";
  if (!file.device_helpers.empty()) {
    out += banner("Device helpers");
    for (const auto& [name, def] : file.device_helpers) out += def + "\n";
  }
  if (!file.globals.empty())
    out += banner("Scratch buffers in device memory (one launch of a variant at a time)") +
           file.globals + "\n";
  out += banner("Kernels: one __global__ function per variant and statement (or row group)") + kernels;
  out +=
      banner("Launchers: one function per variant, launching its statements in order") + launchers;
  out += banner("Dispatch") + dispatch_section(spec, backend());
  return {spec.name + "/" + backend() + "/" + spec.name + "." + extension(), out, launches};
}

}  // namespace

const Emitter& cuda_emitter() {
  static const CudaEmitter kEmitter;
  return kEmitter;
}

}  // namespace sb
