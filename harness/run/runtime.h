// Backend runtimes: how the harness compiles, feeds, runs and times one backend's modules.
//
// Adding a backend (cudasim, mojo, mlir, ...) means: an emitter (codegen/backends/emitter.h), one
// Runtime subclass in its own file, and one record in backend_records()
// (harness/backends/backend_record.cpp), which names its factory. Nothing else in the harness
// names a backend: what the harness decides about one comes from its record. A backend whose
// modules live in host memory can derive from HostRuntime and override only backend() and
// compile_command().
//
// Protocol, as used by the runner for one variant at one size point:
//   availability()                       -- once; when !ok the backend is reported as skipped
//   upload(host) -> dev                  -- allocate every spec tensor, copy all of `host` in
//   run(fn, dev, sizes)                  -- call the variant once and wait for it to finish
//   download(dev, t, host[t])            -- copy tensor t back (for each Out tensor)
//   time(state, fn, dev, sizes)          -- the Google Benchmark loop, inside a registered
//                                           benchmark that configure() has set up
// Every call returns a user-facing error (never aborts) when the backend reports a failure; the
// message names the failing runtime call, and for CUDA the source file and line of the call.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend_record.h"
#include "run/buffers.h"
#include "support/diag.h"
#include "ir/ir.h"
#include "specbench_abi.h"
#include "build/toolchain.h"

namespace sb {

struct Availability {
  bool ok = true;
  std::string reason;  // when !ok: why, e.g. cudaGetErrorString() of cudaGetDeviceCount's error
};

// Every tensor of a spec in one backend's memory space. Freed by the destructor.
class DeviceTensors {
 public:
  virtual ~DeviceTensors() = default;
  std::vector<void*> ptrs;  // one base pointer per spec tensor, spec order
  // A view's pointer is its base's (HostTensor::alias): upload() allocates no buffer for it,
  // then calls link_views(). The destructor frees ptrs[t] only where owns(t).
  std::vector<int> alias;
  bool owns(size_t t) const { return t >= alias.size() || alias[t] < 0; }
  void link_views(const HostTensors& host) {
    alias.assign(host.size(), -1);
    for (size_t t = 0; t < host.size(); ++t) {
      if (host[t].alias < 0) continue;
      alias[t] = host[t].alias;
      ptrs[t] = ptrs[static_cast<size_t>(host[t].alias)];
    }
  }
};

// Global-memory traffic of one run, as a simulator counts it (see sb::sim::Traffic in
// harness/cudasim/cudasim.h): warp-level requests, 32-byte sectors (transactions), bytes asked.
struct MemoryTraffic {
  uint64_t requests = 0;
  uint64_t sectors = 0;
  uint64_t bytes = 0;
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  // Backend name, as on the command line and in records: its BackendRecord's name.
  virtual std::string backend() const = 0;
  // Its record (backend_record.h), found by backend().
  const BackendRecord& record() const;
  // The backend whose emitter, generated files and spec variants this runtime runs: the
  // record's source (cudasim runs "cuda").
  const std::string& source_backend() const { return record().source; }
  // Whether bench times this backend: the record's timed. A simulator verifies, never timed.
  bool timed() const { return record().timed; }
  // Verification runs every check once per schedule (thread orders, for a simulator);
  // set_schedule(s) applies to the following upload() and run() calls.
  virtual int schedules() const { return 1; }
  virtual void set_schedule(int /*s*/) {}
  virtual std::string schedule_name(int /*s*/) const { return ""; }
  // Whether upload() can place buffers one element past a 64-byte boundary (a kernel must not
  // assume more alignment than its element's: a caller's tensor may start anywhere, as a view of
  // a PyTorch tensor with a storage offset does). Verification then runs one input set so, so that
  // the code a kernel keeps for unaligned buffers (the head of its streaming stores, a scalar
  // path) is checked too; set_shifted(on) applies to the following upload() calls.
  virtual bool can_shift() const { return false; }
  void set_shifted(bool on) { shifted_ = on; }
  bool shifted() const { return shifted_; }
  // How far upload() places a buffer of element type `t` past its block's start: one element
  // when shifted(), else 0.
  size_t shift_bytes(DType t) const { return shifted_ ? static_cast<size_t>(dtype_bytes(t)) : 0; }
  // Whether upload() surrounds each buffer with guard bytes, which a variant must neither read
  // into a result nor write (set by verification, not by timing); set_guarded(on) applies to the
  // following upload() calls. check_guards() then says which tensors' guards a run changed
  // (`names`: the tensors' names, in ABI order); a runtime without guards (or with its own, as
  // the simulator's guard pages) finds none.
  void set_guarded(bool on) { guarded_ = on; }
  bool guarded() const { return guarded_; }
  virtual Status check_guards(const DeviceTensors& /*dev*/,
                              const std::vector<std::string>& /*names*/) const {
    return {};
  }
  // A line about the work done so far (a simulator's rate), or "" for nothing to report.
  virtual std::string report() { return ""; }
  // The global-memory traffic of the last successful run(), for runtimes that count it (the
  // simulator); nullopt for the others.
  virtual std::optional<MemoryTraffic> last_traffic() const { return std::nullopt; }
  // The compiler invocation that turns this backend's generated file into a module.
  virtual CompileCommand compile_command(const ToolchainOptions& opt) const = 0;
  // Whether modules can run on this machine. Memoised; cheap after the first call. Modules are
  // still compiled when a backend is unavailable.
  virtual Availability availability() = 0;
  // A human-readable name of the device, or "none" when unavailable.
  virtual std::string device_name() = 0;

  virtual Result<std::unique_ptr<DeviceTensors>> upload(const HostTensors& host) = 0;
  // Copies tensor `t` of `dev` into `host` (which has the right type and size).
  virtual Status download(const DeviceTensors& dev, int t, HostTensor& host) = 0;
  // Runs the variant once to completion. A non-zero return of the variant is an error.
  virtual Status run(sb_variant_fn fn, DeviceTensors& dev, const SizePoint& sizes) = 0;

  // Sets the timing mode of a registered benchmark (real time for host code, manual time for
  // device code timed with events).
  virtual void configure(benchmark::internal::Benchmark* b) const = 0;
  // The benchmark loop: `for (auto _ : state)` running the variant once per iteration. On a
  // backend error it calls state.SkipWithError() with the message and leaves the loop.
  virtual void time(benchmark::State& state, sb_variant_fn fn, DeviceTensors& dev,
                    const SizePoint& sizes) = 0;

 private:
  bool shifted_ = false;
  bool guarded_ = false;
};

// A runtime whose tensors live in host memory (sb_host_alloc: 64-byte aligned, huge pages for
// large ones; shifted by one element when shifted()) and whose variants run synchronously on the
// calling thread; timed by wall clock (UseRealTime, since variants may use OpenMP threads).
class HostRuntime : public Runtime {
 public:
  Availability availability() override { return {}; }
  bool can_shift() const override { return true; }
  std::string device_name() override { return "host"; }
  Result<std::unique_ptr<DeviceTensors>> upload(const HostTensors& host) override;
  Status check_guards(const DeviceTensors& dev,
                      const std::vector<std::string>& names) const override;
  Status download(const DeviceTensors& dev, int t, HostTensor& host) override;
  Status run(sb_variant_fn fn, DeviceTensors& dev, const SizePoint& sizes) override;
  void configure(benchmark::internal::Benchmark* b) const override;
  void time(benchmark::State& state, sb_variant_fn fn, DeviceTensors& dev,
            const SizePoint& sizes) override;
};

// The flags of host C++ modules: -std=c++17 -O3 -march=native -fno-math-errno -fopenmp -fPIC
// -shared -I<abi>, on x86-64 -mprefer-vector-width=512, and on x86-64 glibc -lmvec (glibc's
// vector math library, which the cpu emitter's SIMD loops call for exp, log, tanh and erf; see
// vector_math_declarations in codegen/backends/common/emit_common.h).
std::vector<std::string> cpu_module_flags(const ToolchainOptions& opt);

// cpu: SPECBENCH_CXX with cpu_module_flags.
std::unique_ptr<Runtime> make_cpu_runtime();
// cuda: SPECBENCH_NVCC -std=c++17 -O3 -gencode ... -Xcompiler -fPIC -shared -cudart shared
// -Xptxas -v -I<abi> (ptxas's report gives each kernel's facts: CompileCommand::kernel_facts);
// device memory through cudart; timed with CUDA events around each launch after an L2 flush
// (cudaMemsetAsync of an L2-sized buffer). Unavailable (with cudaGetErrorString's text)
// when cudaGetDeviceCount fails or finds no device, or when the harness was built without cudart.
std::unique_ptr<Runtime> make_cuda_runtime();

// A CUDA runtime (memory, launches and event timing exactly as `cuda`) under another backend
// name, with `link_flags` appended to the nvcc command: for backends whose generated .cu files
// call CUDA libraries (vendor_cuda links -lcublas).
std::unique_ptr<Runtime> make_cuda_runtime_as(const std::string& backend,
                                              const std::vector<std::string>& link_flags);

// vendor_cpu: like cpu, linked with OpenBLAS (found by CMake; unavailable when it was not).
// vendor_cuda: make_cuda_runtime_as("vendor_cuda", {"-lcublas"}). Both in runtime_vendor.cpp.
std::unique_ptr<Runtime> make_vendor_cpu_runtime();
std::unique_ptr<Runtime> make_vendor_cuda_runtime();

// cudasim: runs the cuda backend's generated files on the CPU through the CUDA simulator
// (harness/cudasim): compiled by SPECBENCH_CXX with the simulator's cuda_runtime.h, tensors in
// guarded host memory, every check under two thread orders. Never timed.
std::unique_ptr<Runtime> make_cudasim_runtime();

// Another backend run on the CUDA simulator exactly as cudasim runs cuda's (memory, thread orders,
// checks, traffic), with its own build: mojo_gpusim.
struct SimulatorBuild {
  std::function<CompileCommand(const ToolchainOptions&)> command;
  std::function<Availability()> availability;  // why its modules cannot be built or run here
  std::string device_name;                     // for the results' context
};
std::unique_ptr<Runtime> make_simulator_runtime(const std::string& backend, SimulatorBuild build);

// A CUDA runtime (memory, launches and event timing exactly as `cuda`) whose modules another
// compile command builds, and which is available only where `extra` also is: mojo_gpu.
std::unique_ptr<Runtime> make_cuda_runtime_built(
    const std::string& backend, std::function<CompileCommand(const ToolchainOptions&)> command,
    std::function<Availability()> extra);

// The Mojo compiler (SPECBENCH_MOJO, else <source>/.venv/bin/mojo) and whether it runs here
// (memoised), for every backend compiled by Mojo (runtime_mojo.cpp).
std::string mojo_compiler_path();
const Availability& mojo_compiler_availability();

// mojo_gpu (on a GPU, through the CUDA driver API) and mojo_gpusim (on the CUDA simulator), in
// runtime_mojo_gpu.cpp.
std::unique_ptr<Runtime> make_mojo_gpu_runtime();
std::unique_ptr<Runtime> make_mojo_gpusim_runtime();

// mojo and mlir, in runtime_mojo.cpp and runtime_mlir.cpp.
std::unique_ptr<Runtime> make_mojo_runtime();
std::unique_ptr<Runtime> make_mlir_runtime();

// Every runtime, one per backend record, in the records' order. Created on first use by each
// record's make_runtime; live until exit.
const std::vector<Runtime*>& all_runtimes();
// The runtime for `backend`, or nullptr.
Runtime* find_runtime(const std::string& backend);

}  // namespace sb
