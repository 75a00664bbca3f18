// The mojo_gpu and mojo_gpusim runtimes: the mojo_gpu backend's generated files
// (generated/<k>/mojo_gpu/<k>.mojo, the kernels, with <k>.launch.cpp, the launchers), built by
// harness/scripts/mojo_gpu_module.sh into one module each.
//
// mojo_gpu runs on a GPU exactly as the cuda backend does (CUDA runtime memory on the harness's
// stream, CUDA events around each call after an L2 flush): the module holds the kernels' PTX for
// each architecture of the toolchain (sm_80 and sm_90 by default), compiled by Mojo and assembled
// by ptxas -v (whose report gives the kernels' static facts), and its launchers load the PTX of
// the device's architecture through the CUDA driver API and launch each kernel with
// cuLaunchKernel on that stream (harness/abi/specbench_mojo_gpu.h). So both columns pay one
// driver launch per kernel and are timed by the same code. Available where the cuda backend is
// and Mojo is installed.
//
// mojo_gpusim verifies the same files on the CPU: the kernels' NVVM IR (Mojo, -g1 for line
// tables) is rewritten by mojo_gpusim (harness/mojo_gpusim/) and run on the CUDA simulator with
// every check cudasim makes, plus shared- and global-memory races. Never timed. Available where
// Mojo, clang-19 and the mojo_gpusim tool (built with llvm-19-dev) are.
//
// Without what a backend needs, its compile command has no compiler, so `build`, `verify` and
// `bench` report its variants as skipped, with the reason, rather than as failed builds.
#include <filesystem>

#include "run/runtime.h"

namespace sb {

namespace {

namespace fs = std::filesystem;

const std::string kScript = SPECBENCH_MOJO_GPU_SCRIPT;
const std::string kGpusimTool = SPECBENCH_MOJO_GPUSIM_TOOL;
const std::string kClang = SPECBENCH_CLANG19;
const std::string kCudaInclude = SPECBENCH_CUDA_INCLUDE;
const std::string kCudaLib = SPECBENCH_CUDA_LIBDIR;

Availability gpusim_availability() {
  const Availability& mojo = mojo_compiler_availability();
  if (!mojo.ok) return mojo;
  if (kGpusimTool.empty())
    return {false, "the mojo_gpusim tool was not built: LLVM 19's development files (llvm-19-dev) "
                   "were not found when specbench was configured"};
  if (kClang.empty() || compiler_version(kClang).empty())
    return {false, "clang-19 (which compiles the rewritten kernels) was not found"};
  return {};
}

// ptxas beside nvcc.
std::string ptxas_path(const ToolchainOptions& opt) {
  if (opt.nvcc.empty()) return "";
  return (fs::path(opt.nvcc).parent_path() / "ptxas").string();
}

Availability device_build_availability(const ToolchainOptions& opt) {
  const Availability& mojo = mojo_compiler_availability();
  if (!mojo.ok) return mojo;
  if (opt.nvcc.empty() || kCudaInclude.empty() || kCudaLib.empty())
    return {false, "the CUDA toolkit (ptxas, the CUDA runtime) was not found"};
  return {};
}

CompileCommand device_command(const ToolchainOptions& opt) {
  if (!device_build_availability(opt).ok) return CompileCommand{"", {}, "mojo (mojo_gpu)"};
  CompileCommand c{kScript,
                   {"device", "--mojo", mojo_compiler_path(), "--cxx", opt.cxx,
                    "--ptxas", ptxas_path(opt), "--abi", opt.abi_dir, "--cuda-include",
                    kCudaInclude, "--cuda-lib", kCudaLib},
                   "mojo (mojo_gpu)"};
  for (int a : opt.cuda_archs) {
    c.flags.push_back("--arch");
    c.flags.push_back(std::to_string(a));
  }
  c.key_headers = {kScript};
  c.kernel_facts = true;
  c.key_tools = {mojo_compiler_path(), ptxas_path(opt)};
  c.companion_suffixes = {".launch.cpp"};
  return c;
}

CompileCommand gpusim_command(const ToolchainOptions& opt) {
  if (!gpusim_availability().ok) return CompileCommand{"", {}, "mojo (mojo_gpusim)"};
  CompileCommand c{kScript,
                   {"sim", "--mojo", mojo_compiler_path(), "--gpusim", kGpusimTool,
                    "--clang", kClang, "--abi", opt.abi_dir, "--cudasim-include",
                    SPECBENCH_CUDASIM_INCLUDE, "--cudasim-lib", SPECBENCH_CUDASIM_LIBDIR},
                   "mojo (mojo_gpusim)"};
  // The rewriter's binary and the simulator's headers shape the module as much as the compilers.
  c.key_headers = {kScript, kGpusimTool, std::string(SPECBENCH_CUDASIM_INCLUDE) + "/cuda_runtime.h"};
  c.key_tools = {mojo_compiler_path(), kClang};
  c.companion_suffixes = {".launch.cpp"};
  return c;
}

}  // namespace

std::unique_ptr<Runtime> make_mojo_gpu_runtime() {
  return make_cuda_runtime_built("mojo_gpu", device_command, [] {
    return device_build_availability(default_toolchain_options());
  });
}

std::unique_ptr<Runtime> make_mojo_gpusim_runtime() {
  SimulatorBuild b;
  b.command = gpusim_command;
  b.availability = gpusim_availability;
  b.device_name = "cudasim (Mojo GPU kernels from NVVM IR, simulated on the CPU)";
  return make_simulator_runtime("mojo_gpusim", std::move(b));
}

}  // namespace sb
