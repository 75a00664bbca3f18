#include "run/runtime.h"

#include "specbench_host_alloc.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#ifdef SPECBENCH_HAVE_CUDART
#include <cuda_runtime.h>
#endif

namespace sb {

std::vector<std::string> cpu_module_flags(const ToolchainOptions& opt) {
  // -fno-math-errno: libm calls need not set errno, so sqrt is one instruction and loops that
  // call it vectorise (no value changes; the Mojo and CUDA backends never set errno either).
  // -fno-trapping-math: floating-point operations may be computed where the source would not
  // (no value changes; only the exception flags, which nothing reads, may differ; clang, and so
  // the MLIR and Mojo backends, assume it by default). Without it, on a CPU without masked
  // vector operations (AVX2), GCC 12 will not compute both arms of a select and blend them, since
  // the arm not taken might trap: leaky_relu's `x > 0 ? x : 0.01f * x` stayed a scalar loop with
  // a branch on the sign, and took 26.1 ms at N = 4194304 on one thread of the 2-core AMD EPYC
  // (Zen 3) VM against 1.6 ms with the flag (standalone, g++ -O3 -march=native, 2026-12-06).
  std::vector<std::string> f{"-std=c++17",         "-O3",      "-march=native",
                             "-fno-math-errno",    "-fno-trapping-math",
                             "-fopenmp",           "-fPIC",    "-shared",
                             "-I" + opt.abi_dir};
#if defined(__x86_64__)
  // GCC's tuning for AVX-512 cores vectorises with 256-bit registers. Where the machine has
  // 512-bit ones, Mojo's native SIMD width and LLVM's loops use them, so the C++ would otherwise
  // run half-width vectors: on the 2-core AVX-512 VM, the cpu layernorm's row group over
  // 8192 x 1600 took 3.23-3.28 ms at 256 bits against 2.76 ms at 512 (median of 21 each).
  // Without AVX-512 the flag changes nothing.
  f.push_back("-mprefer-vector-width=512");
#endif
#if defined(__x86_64__) && defined(__GLIBC__)
  // The source comes after the flags, so the library must not be dropped as unneeded.
  f.insert(f.end(), {"-Wl,--no-as-needed", "-lmvec"});
#endif
  return f;
}

namespace {

Error runtime_error(std::string msg) {
  return Error{Loc{}, std::move(msg), ""};
}

// ---------------------------------------------------------------------------------------------
// Host memory

// Guard bytes before and after each buffer when guarded() (Runtime::set_guarded): a multiple of
// 64 so that the data keeps its alignment, and wider than any window's reach past an edge. Every
// byte is 0xFF, which reads as a NaN in each floating-point type and as -1 in each integer one:
// a variant that reads past a tensor's end into a result, where a boundary rule gives 0 or the
// edge's value, then differs from the reference.
constexpr size_t kGuardBytes = 4096;
constexpr unsigned char kGuardByte = 0xFF;

struct HostDeviceTensors : DeviceTensors {
  std::vector<size_t> bytes;
  std::vector<size_t> guard;  // the guard bytes before and after tensor t's data (0: none)
  std::vector<void*> blocks;  // what sb_host_alloc returned for each owned tensor
  ~HostDeviceTensors() override {
    for (void* b : blocks) std::free(b);
  }
};

class CpuRuntime : public HostRuntime {
 public:
  std::string backend() const override { return "cpu"; }
  CompileCommand compile_command(const ToolchainOptions& opt) const override {
    return CompileCommand{opt.cxx, cpu_module_flags(opt), "g++"};
  }
};

// ---------------------------------------------------------------------------------------------
// CUDA

#ifdef SPECBENCH_HAVE_CUDART

Error cuda_call_error(const char* call, cudaError_t e, const char* file, int line) {
  return runtime_error(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
                       cudaGetErrorString(e) + ") at " + file + ":" + std::to_string(line));
}

// Checks a CUDA runtime call in a function returning Status or Result<T>.
#define SB_CUDA_CHECK(call)                                                  \
  do {                                                                       \
    cudaError_t sb_cuda_err_ = (call);                                       \
    if (sb_cuda_err_ != cudaSuccess)                                         \
      return ::sb::cuda_call_error(#call, sb_cuda_err_, __FILE__, __LINE__); \
  } while (0)

// Checks a CUDA runtime call where no error can be returned (destructors): prints and goes on.
#define SB_CUDA_WARN(call)                                                                 \
  do {                                                                                     \
    cudaError_t sb_cuda_err_ = (call);                                                     \
    if (sb_cuda_err_ != cudaSuccess)                                                       \
      std::fprintf(                                                                        \
          stderr, "specbench: warning: %s\n",                                              \
          ::sb::cuda_call_error(#call, sb_cuda_err_, __FILE__, __LINE__).message.c_str()); \
  } while (0)

struct CudaDeviceTensors : DeviceTensors {
  std::vector<size_t> bytes;
  ~CudaDeviceTensors() override {
    for (size_t t = 0; t < ptrs.size(); ++t) {
      if (ptrs[t] && owns(t)) SB_CUDA_WARN(cudaFree(ptrs[t]));
    }
  }
};

Error variant_error(int rc) {
  return runtime_error("variant returned " + std::to_string(rc) + ": " +
                       cudaGetErrorName(static_cast<cudaError_t>(rc)) + " (" +
                       cudaGetErrorString(static_cast<cudaError_t>(rc)) + ")");
}

#endif  // SPECBENCH_HAVE_CUDART

class CudaRuntime : public Runtime {
 public:
  // `backend` names the runtime (and the generated files it runs); `link_flags` are appended to
  // the nvcc command (libraries such as -lcublas for the vendor_cuda backend).
  explicit CudaRuntime(std::string backend = "cuda", std::vector<std::string> link_flags = {})
      : backend_(std::move(backend)), link_flags_(std::move(link_flags)) {}
  // A backend whose modules `command` builds, available where CUDA and `extra` are (mojo_gpu).
  CudaRuntime(std::string backend, std::function<CompileCommand(const ToolchainOptions&)> command,
              std::function<Availability()> extra)
      : backend_(std::move(backend)), command_(std::move(command)), extra_(std::move(extra)) {}

  std::string backend() const override { return backend_; }

  CompileCommand compile_command(const ToolchainOptions& opt) const override {
    if (command_) return command_(opt);
    CompileCommand c{opt.nvcc, {"-std=c++17", "-O3"}, "nvcc"};
    for (int a : opt.cuda_archs) {
      c.flags.push_back("-gencode");
      c.flags.push_back("arch=compute_" + std::to_string(a) + ",code=sm_" + std::to_string(a));
    }
    for (const char* f : {"-Xcompiler", "-fPIC", "-shared", "-cudart", "shared"})
      c.flags.push_back(f);
    // ptxas's report of every kernel: registers, shared memory, stack, spills (kernel_facts.h).
    c.flags.push_back("-Xptxas");
    c.flags.push_back("-v");
    c.kernel_facts = true;
    c.flags.push_back("-I" + opt.abi_dir);
    for (const std::string& f : link_flags_) c.flags.push_back(f);
    return c;
  }

  Availability availability() override {
    std::call_once(probe_once_, [this] { probe(); });
    if (avail_.ok && extra_) return extra_();
    return avail_;
  }

  std::string device_name() override {
    return availability().ok ? device_name_ : std::string("none");
  }

#ifdef SPECBENCH_HAVE_CUDART
  ~CudaRuntime() override {
    // The CUDA runtime may already be torn down at static destruction; leak deliberately.
  }

  // Copies go on the variants' own stream, then that stream is synchronised. A plain cudaMemcpy
  // from pageable memory runs on the legacy default stream and may return before its DMA lands,
  // and the variants' stream is non-blocking, so nothing orders a kernel after such a copy. On
  // an H200 that race once let an output's upload land after the kernel had written it
  // (outer_add/cuda/vectorized at M=N=1024 failed its check before timing; results/h200/).
  Result<std::unique_ptr<DeviceTensors>> upload(const HostTensors& host) override {
    auto dev = std::make_unique<CudaDeviceTensors>();
    dev->ptrs.assign(host.size(), nullptr);
    dev->bytes.assign(host.size(), 0);
    for (size_t t = 0; t < host.size(); ++t) {
      if (host[t].alias >= 0) continue;
      size_t n = host[t].bytes.size();
      dev->bytes[t] = n;
      SB_CUDA_CHECK(cudaMalloc(&dev->ptrs[t], n == 0 ? 1 : n));
      if (n)
        SB_CUDA_CHECK(cudaMemcpyAsync(dev->ptrs[t], host[t].bytes.data(), n,
                                      cudaMemcpyHostToDevice, stream_));
    }
    dev->link_views(host);
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return std::unique_ptr<DeviceTensors>(std::move(dev));
  }

  Status download(const DeviceTensors& dev, int t, HostTensor& host) override {
    size_t n = host.bytes.size();
    if (n) {
      SB_CUDA_CHECK(cudaMemcpyAsync(host.bytes.data(), dev.ptrs[t], n, cudaMemcpyDeviceToHost,
                                    stream_));
      SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    return {};
  }

  Status run(sb_variant_fn fn, DeviceTensors& dev, const SizePoint& sizes) override {
    sb_args args{dev.ptrs.data(), sizes.data(), stream_};
    int rc = fn(&args);
    if (rc != 0) return variant_error(rc);
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    SB_CUDA_CHECK(cudaGetLastError());
    return {};
  }

  void configure(benchmark::internal::Benchmark* b) const override {
    b->UseManualTime();
  }

  void time(benchmark::State& state, sb_variant_fn fn, DeviceTensors& dev,
            const SizePoint& sizes) override {
    sb_args args{dev.ptrs.data(), sizes.data(), stream_};
    for (auto _ : state) {
      Status s = timed_launch(state, fn, args);
      if (!s.ok()) {
        state.SkipWithError(s.error().message.c_str());
        break;
      }
    }
  }

 private:
  Status timed_launch(benchmark::State& state, sb_variant_fn fn, const sb_args& args) {
    // Cold-cache timing: overwrite L2 before every launch, outside the timed interval.
    if (flush_) SB_CUDA_CHECK(cudaMemsetAsync(flush_, 0, flush_bytes_, stream_));
    SB_CUDA_CHECK(cudaEventRecord(start_, stream_));
    int rc = fn(&args);
    if (rc != 0) return variant_error(rc);
    SB_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    SB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    state.SetIterationTime(ms * 1e-3);
    return {};
  }

  Status setup() {
    int n = 0;
    // The one call not checked by SB_CUDA_CHECK: its failure is the expected "no GPU" answer,
    // and the skip reason is exactly cudaGetErrorString's text.
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return runtime_error(cudaGetErrorString(e));
    if (n == 0) return runtime_error("no CUDA device found");
    SB_CUDA_CHECK(cudaSetDevice(0));
    cudaDeviceProp prop;
    SB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    device_name_ = prop.name;
    int l2 = 0;
    SB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    // Stream-ordered allocations (cub's temporary storage in the vendor_cuda variants) come
    // from the device's default pool, whose release threshold is 0: every synchronisation hands
    // its memory back, and the next cudaMallocAsync asks the driver again, inside the timed
    // interval. The pool keeps it now, as an application's allocator would.
    int pools = 0;
    SB_CUDA_CHECK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, 0));
    if (pools) {
      cudaMemPool_t pool = nullptr;
      SB_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
      uint64_t keep = UINT64_MAX;
      SB_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    }
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    SB_CUDA_CHECK(cudaEventCreate(&start_));
    SB_CUDA_CHECK(cudaEventCreate(&stop_));
    if (l2 > 0) {
      flush_bytes_ = static_cast<size_t>(l2);
      SB_CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
    }
    return {};
  }

  void probe() {
    Status s = setup();
    if (!s.ok()) avail_ = Availability{false, s.error().message};
  }

  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
#else
  Result<std::unique_ptr<DeviceTensors>> upload(const HostTensors&) override {
    return runtime_error("the harness was built without the CUDA runtime");
  }
  Status download(const DeviceTensors&, int, HostTensor&) override {
    return runtime_error("the harness was built without the CUDA runtime");
  }
  Status run(sb_variant_fn, DeviceTensors&, const SizePoint&) override {
    return runtime_error("the harness was built without the CUDA runtime");
  }
  void configure(benchmark::internal::Benchmark* b) const override {
    b->UseManualTime();
  }
  void time(benchmark::State& state, sb_variant_fn, DeviceTensors&, const SizePoint&) override {
    state.SkipWithError("the harness was built without the CUDA runtime");
  }

 private:
  void probe() {
    avail_ = Availability{false, "the harness was built without the CUDA runtime (cudart)"};
  }
#endif

  std::string backend_;
  std::vector<std::string> link_flags_;
  std::function<CompileCommand(const ToolchainOptions&)> command_;
  std::function<Availability()> extra_;
  std::once_flag probe_once_;
  Availability avail_;
  std::string device_name_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------

Result<std::unique_ptr<DeviceTensors>> HostRuntime::upload(const HostTensors& host) {
  auto dev = std::make_unique<HostDeviceTensors>();
  dev->ptrs.assign(host.size(), nullptr);
  dev->bytes.assign(host.size(), 0);
  dev->guard.assign(host.size(), 0);
  for (size_t t = 0; t < host.size(); ++t) {
    if (host[t].alias >= 0) continue;
    size_t n = host[t].bytes.size();
    // Shifted: the data starts one element past the 64-byte boundary of the block (after the
    // guard, when guarded).
    const size_t shift = shift_bytes(host[t].type);
    const size_t guard = guarded() ? kGuardBytes : 0;
    void* block = sb_host_alloc(guard + shift + n + guard);
    if (!block)
      return runtime_error("out of host memory allocating " + std::to_string(n) + " bytes");
    dev->blocks.push_back(block);
    unsigned char* p = static_cast<unsigned char*>(block) + guard + shift;
    if (guard) {
      std::memset(block, kGuardByte, guard + shift);
      std::memset(p + n, kGuardByte, guard);
      dev->guard[t] = guard;
    }
    if (n) std::memcpy(p, host[t].bytes.data(), n);
    dev->ptrs[t] = p;
    dev->bytes[t] = n;
  }
  dev->link_views(host);
  return std::unique_ptr<DeviceTensors>(std::move(dev));
}

Status HostRuntime::check_guards(const DeviceTensors& dev,
                                 const std::vector<std::string>& names) const {
  const auto* hd = dynamic_cast<const HostDeviceTensors*>(&dev);
  SB_ASSERT(hd, "a runtime with its own upload() must override check_guards() too");
  const auto& d = *hd;
  std::string bad;
  for (size_t t = 0; t < d.ptrs.size(); ++t) {
    const size_t g = d.guard[t];
    if (!g) continue;
    const unsigned char* p = static_cast<const unsigned char*>(d.ptrs[t]);
    // The guard before includes the shift's gap; only the kGuardBytes next to the data are
    // looked at (the gap is part of them when shifted, filled alike).
    size_t before = 0, after = 0;
    for (size_t i = 1; i <= g; ++i) before += p[-static_cast<ptrdiff_t>(i)] != kGuardByte;
    for (size_t i = 0; i < g; ++i) after += p[d.bytes[t] + i] != kGuardByte;
    if (before + after == 0) continue;
    if (!bad.empty()) bad += "; ";
    bad += (t < names.size() ? names[t] : "tensor " + std::to_string(t)) + ": " +
           std::to_string(before) + " bytes before its start and " + std::to_string(after) +
           " after its end changed";
  }
  if (bad.empty()) return {};
  return runtime_error("the variant wrote outside its tensors (" + bad + ")");
}

Status HostRuntime::download(const DeviceTensors& dev, int t, HostTensor& host) {
  if (!host.bytes.empty()) std::memcpy(host.bytes.data(), dev.ptrs[t], host.bytes.size());
  return {};
}

Status HostRuntime::run(sb_variant_fn fn, DeviceTensors& dev, const SizePoint& sizes) {
  sb_args args{dev.ptrs.data(), sizes.data(), nullptr};
  int rc = fn(&args);
  if (rc != 0) return runtime_error("variant returned error code " + std::to_string(rc));
  return {};
}

void HostRuntime::configure(benchmark::internal::Benchmark* b) const {
  b->UseRealTime();
}

void HostRuntime::time(benchmark::State& state, sb_variant_fn fn, DeviceTensors& dev,
                       const SizePoint& sizes) {
  sb_args args{dev.ptrs.data(), sizes.data(), nullptr};
  for (auto _ : state) {
    int rc = fn(&args);
    if (rc != 0) {
      state.SkipWithError(("variant returned error code " + std::to_string(rc)).c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
}

std::unique_ptr<Runtime> make_cpu_runtime() {
  return std::make_unique<CpuRuntime>();
}
std::unique_ptr<Runtime> make_cuda_runtime() {
  return std::make_unique<CudaRuntime>();
}
std::unique_ptr<Runtime> make_cuda_runtime_as(const std::string& backend,
                                              const std::vector<std::string>& link_flags) {
  return std::make_unique<CudaRuntime>(backend, link_flags);
}
std::unique_ptr<Runtime> make_cuda_runtime_built(
    const std::string& backend, std::function<CompileCommand(const ToolchainOptions&)> command,
    std::function<Availability()> extra) {
  return std::make_unique<CudaRuntime>(backend, std::move(command), std::move(extra));
}

const std::vector<Runtime*>& all_runtimes() {
  // Leaked on purpose: runtimes own device resources that must not be released after the CUDA
  // runtime has shut down at exit.
  static const std::vector<Runtime*>* runtimes = [] {
    auto* v = new std::vector<Runtime*>;
    for (const BackendRecord& r : backend_records()) {
      v->push_back(r.make_runtime().release());
      SB_ASSERT(v->back()->backend() == r.name,
                "record " + r.name + " makes a runtime named " + v->back()->backend());
    }
    return v;
  }();
  return *runtimes;
}

const BackendRecord& Runtime::record() const {
  const BackendRecord* r = find_backend(backend());
  SB_ASSERT(r, "runtime " + backend() + " has no backend record");
  return *r;
}

Runtime* find_runtime(const std::string& backend) {
  for (Runtime* r : all_runtimes()) {
    if (r->backend() == backend) return r;
  }
  return nullptr;
}

}  // namespace sb
