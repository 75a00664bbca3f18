// Runtimes of the vendor backends: vendor_cpu (OpenBLAS, host memory) and vendor_cuda (cuBLAS
// and cub, device memory, the cuda runtime's timing).
#include <string>

#include "run/runtime.h"

namespace sb {

namespace {

// Where CMake found OpenBLAS: the folder of its cblas.h and the library file; empty when not.
constexpr const char* kOpenblasInclude = SPECBENCH_OPENBLAS_INCLUDE;
constexpr const char* kOpenblasLibrary = SPECBENCH_OPENBLAS_LIBRARY;

class VendorCpuRuntime : public HostRuntime {
 public:
  std::string backend() const override { return "vendor_cpu"; }

  // As cpu, plus OpenBLAS: its header folder, the library by full path with an rpath to its
  // folder, and --no-as-needed because the library comes before the source on the command line.
  CompileCommand compile_command(const ToolchainOptions& opt) const override {
    if (!found()) return CompileCommand{"", {}, "g++ (OpenBLAS)"};
    const std::string lib = kOpenblasLibrary;
    const std::string dir = lib.substr(0, lib.find_last_of('/'));
    std::vector<std::string> flags = cpu_module_flags(opt);
    flags.insert(flags.end(), {"-I" + std::string(kOpenblasInclude), "-Wl,--no-as-needed", lib,
                               "-Wl,-rpath," + dir});
    return CompileCommand{opt.cxx, flags, "g++ (OpenBLAS)"};
  }

  Availability availability() override {
    if (found()) return {};
    return {false,
            "OpenBLAS was not found when specbench was built (install libopenblas-dev "
            "and re-run cmake)"};
  }

  std::string device_name() override { return found() ? "host (OpenBLAS)" : "none"; }

 private:
  static bool found() { return kOpenblasInclude[0] != '\0' && kOpenblasLibrary[0] != '\0'; }
};

}  // namespace

std::unique_ptr<Runtime> make_vendor_cpu_runtime() {
  return std::make_unique<VendorCpuRuntime>();
}

std::unique_ptr<Runtime> make_vendor_cuda_runtime() {
  return make_cuda_runtime_as("vendor_cuda", {"-lcublas"});
}

}  // namespace sb
