// The cudasim runtime: the cuda backend's generated files, run on the CUDA simulator.
#include <cstdio>
#include <cstring>
#include <vector>

#include "cudasim.h"
#include "run/runtime.h"

namespace sb {

namespace {

struct SimTensors : DeviceTensors {
  std::vector<void*> blocks;  // what sim::alloc returned for each owned tensor
  ~SimTensors() override {
    for (void* b : blocks) sim::free(b);
  }
};

class CudasimRuntime : public HostRuntime {
 public:
  CudasimRuntime() = default;
  // Another simulated backend (mojo_gpusim): its name, compile command, availability and device.
  CudasimRuntime(std::string backend, SimulatorBuild build)
      : backend_(std::move(backend)), build_(std::move(build)) {}

  std::string backend() const override { return backend_; }
  Availability availability() override {
    return build_.availability ? build_.availability() : Availability{};
  }
  int schedules() const override { return 2; }
  void set_schedule(int s) override { sim::set_schedule(s); }
  std::string schedule_name(int s) const override {
    return s == 0 ? "forward order" : s == 1 ? "reversed order" : "shuffle " + std::to_string(s);
  }
  std::string device_name() override {
    if (!build_.device_name.empty()) return availability().ok ? build_.device_name : "none";
    return "cudasim (CUDA simulated on the CPU)";
  }

  CompileCommand compile_command(const ToolchainOptions& opt) const override {
    if (build_.command) return build_.command(opt);
    return CompileCommand{
        opt.cxx,
        {"-std=c++20", "-O2", "-fPIC", "-shared",
         // Calls the simulator's access hooks before every load and store (traffic counting);
         // no sanitizer runtime is linked. Without scalar replacement of aggregates, a float4 or
         // double2 copy stays one 16-byte access, as the vector load it stands for.
         "-fno-tree-sra", "-fsanitize=kernel-address", "--param",
         "asan-instrumentation-with-call-threshold=0", "--param", "asan-stack=0", "--param",
         "asan-globals=0", "-x", "c++", "-I" + std::string(SPECBENCH_CUDASIM_INCLUDE),
         "-I" + opt.abi_dir, "-Wl,--no-as-needed", "-L" + std::string(SPECBENCH_CUDASIM_LIBDIR),
         "-lspecbench_cudasim", "-Wl,-rpath," + std::string(SPECBENCH_CUDASIM_LIBDIR)},
        "g++ (cudasim)",
        {std::string(SPECBENCH_CUDASIM_INCLUDE) + "/cuda_runtime.h"}};
  }

  Result<std::unique_ptr<DeviceTensors>> upload(const HostTensors& host) override {
    auto dev = std::make_unique<SimTensors>();
    dev->ptrs.assign(host.size(), nullptr);
    for (size_t t = 0; t < host.size(); ++t) {
      const HostTensor& h = host[t];
      if (h.alias >= 0) continue;
      // Shifted (Runtime::can_shift): the data starts one element into the block, so that its
      // end still meets the guard page placed after the block.
      const size_t shift = shift_bytes(h.type);
      void* block = sim::alloc(h.bytes.size() + shift);
      if (!block)
        return Error{Loc{}, "cudasim: cannot allocate " + std::to_string(h.bytes.size()) + " bytes",
                     ""};
      dev->blocks.push_back(block);
      unsigned char* p = static_cast<unsigned char*>(block) + shift;
      if (!h.bytes.empty()) std::memcpy(p, h.bytes.data(), h.bytes.size());
      dev->ptrs[t] = p;
    }
    dev->link_views(host);
    return std::unique_ptr<DeviceTensors>(std::move(dev));
  }

  // No guard bytes: sim::alloc places each buffer between guard pages, its end against the one
  // after it under one thread order and its start against the one before under the other, so a
  // read or write past a tensor faults instead.
  Status check_guards(const DeviceTensors& /*dev*/,
                      const std::vector<std::string>& /*names*/) const override {
    return {};
  }

  Status run(sb_variant_fn fn, DeviceTensors& dev, const SizePoint& sizes) override {
    sim::take_error();
    last_traffic_.reset();
    sim::reset_traffic();
    sim::count_traffic(true);
    sb_args args{dev.ptrs.data(), sizes.data(), nullptr};
    int rc = fn(&args);
    sim::count_traffic(false);
    std::string report = sim::take_error();
    if (!report.empty()) return Error{Loc{}, report, ""};
    if (rc != 0) return Error{Loc{}, "variant returned error code " + std::to_string(rc), ""};
    const sim::Traffic t = sim::traffic();
    last_traffic_ = MemoryTraffic{t.requests, t.sectors, t.bytes};
    return {};
  }

  std::optional<MemoryTraffic> last_traffic() const override { return last_traffic_; }

  std::string report() override {
    sim::Stats s = sim::stats();
    if (s.threads == 0) return "";
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s: %llu threads simulated (%llu fiber steps) in %.2f s: %.3g threads/s",
                  backend_.c_str(), static_cast<unsigned long long>(s.threads),
                  static_cast<unsigned long long>(s.steps), s.seconds,
                  s.seconds > 0 ? static_cast<double>(s.threads) / s.seconds : 0.0);
    sim::reset_stats();
    return buf;
  }

 private:
  std::string backend_ = "cudasim";
  SimulatorBuild build_;
  std::optional<MemoryTraffic> last_traffic_;
};

}  // namespace

std::unique_ptr<Runtime> make_cudasim_runtime() {
  return std::make_unique<CudasimRuntime>();
}

std::unique_ptr<Runtime> make_simulator_runtime(const std::string& backend, SimulatorBuild build) {
  return std::make_unique<CudasimRuntime>(backend, std::move(build));
}

}  // namespace sb
