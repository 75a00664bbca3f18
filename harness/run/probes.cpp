#include "run/probes.h"

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "run/runtime.h"

namespace sb {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string num(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A built and loaded probe module, or the reason it is not there. Handles stay open for the life
// of the process (OpenMP, OpenBLAS and CUDA modules do not unload cleanly).
struct Loaded {
  void* handle = nullptr;
  std::string error;
};

Loaded load(const ProbeOptions& opt, const ProbeModule& m) {
  Loaded l;
  BuildResult b = build_probe(opt, m);
  if (!b.ok) {
    // The first compiler error line says the most.
    const std::string& e = b.error;
    size_t p = e.find("error");
    size_t start = p == std::string::npos ? 0 : e.rfind('\n', p);
    start = start == std::string::npos ? 0 : start + 1;
    size_t end = e.find('\n', start);
    l.error = "build failed: " + e.substr(start, end == std::string::npos ? end : end - start);
    return l;
  }
  std::string error;
  l.handle = dlopen_cache_entry(b.module_path, m.entry, error);
  if (!l.handle) l.error = b.module_path + ": " + error;
  return l;
}

Loaded load(const ProbeOptions& opt, const std::string& name) {
  for (const ProbeModule& m : probe_modules(opt.tools)) {
    if (m.name == name) return load(opt, m);
  }
  return Loaded{nullptr, "no probe module '" + name + "'"};
}

template <typename Fn>
Fn symbol(const Loaded& l, const char* name, std::string& error) {
  if (!l.handle) {
    error = l.error;
    return nullptr;
  }
  void* s = dlsym(l.handle, name);
  if (!s) error = std::string("probe module has no ") + name;
  return reinterpret_cast<Fn>(s);
}

ProbeResult make(const std::string& device, const std::string& name, const std::string& unit) {
  ProbeResult p;
  p.device = device;
  p.name = name;
  p.unit = unit;
  return p;
}

void finish(ProbeResult& p, double rate) {
  if (std::isfinite(rate) && rate > 0) {
    p.ok = true;
    p.rate = rate;
    p.runs = {rate};
  } else {
    p.ok = false;
    p.reason = "measured a non-positive or non-finite rate";
  }
}

std::string mib(int64_t m) {
  return std::to_string(m) + " MiB";
}

// ---------------------------------------------------------------------------------------------

using triad_fn = int (*)(int64_t, int, double*, int*);
using fma_fn = int (*)(double, int, double*, double*, int*, int*);
using sgemm_fn = int (*)(int, int, double*, char*, int);
using cuda_triad_fn = int (*)(int64_t, int, double*, char*, int);
using cublas_fn = int (*)(int, int, double*, char*, int, char*, int);
using cuda_peak_fn = int (*)(double*, int*, int*, char*, int);

// A CPU streaming probe over `arrays` f64 arrays of `array_mib` each: the module's entry
// `entry` (triad_fn) runs opt.triad_reps timed passes; `what` describes a pass ("plain stores",
// "loads only (a dot product)") and `stores` goes to params where the pass stores.
ProbeResult cpu_stream(const ProbeOptions& opt, const Loaded& m, const std::string& name,
                       const char* entry, int arrays, int64_t array_mib, const std::string& what,
                       const std::string& stores) {
  ProbeResult p = make("cpu", name, "GB/s");
  auto fn = symbol<triad_fn>(m, entry, p.reason);
  if (!fn) return p;
  const std::string sizes = std::to_string(arrays) + " x " + mib(array_mib);
  int64_t n = array_mib * 1024 * 1024 / 8;
  double best = 0;
  int threads = 0;
  int rc = fn(n, opt.triad_reps, &best, &threads);
  if (rc != 0) {
    p.reason = rc == 1 ? "cannot allocate " + sizes : name + " result is wrong";
    return p;
  }
  double bytes = arrays * 8.0 * static_cast<double>(n);
  p.seconds = best;
  p.reps = opt.triad_reps;
  p.detail = sizes + " f64, " + what + ", best of " + std::to_string(p.reps) + ", " +
             std::to_string(threads) + " threads";
  p.params = {{"elements", n},
              {"type", "f64"},
              {"arrays", arrays},
              {"bytes_per_pass", bytes},
              {"threads", threads}};
  if (!stores.empty()) p.params["stores"] = stores;
  finish(p, bytes / best * 1e-9);
  return p;
}

// The CPU triad probes: "triad" (plain stores, as STREAM) and "triad_nt" (non-temporal stores,
// which skip the read for ownership that STREAM pays and does not count). The bandwidth limit is
// the better of the two (limits_from_probes), so a streaming kernel is measured against a rate
// the machine reaches with the same kind of stores.
ProbeResult cpu_triad(const ProbeOptions& opt, const Loaded& m, bool nt) {
  const std::string stores = nt ? "non-temporal" : "plain";
  return cpu_stream(opt, m, nt ? "triad_nt" : "triad", nt ? "sb_probe_triad_nt" : "sb_probe_triad",
                    3, opt.triad_mib, stores + " stores", stores);
}

// The CPU copy probe: one f64 array copied to another with non-temporal stores and a software
// prefetch, the shape of a one-input streaming kernel (relu, scale). Part of the bandwidth limit
// with the triads: where one read stream per thread and a prefetch move more than the triad
// does, a kernel of that shape is measured against what the machine showed it can move. Its
// arrays are twice the triad's, so that it reads as many bytes as the triad does per pass: a
// last-level cache that keeps part of a stream from one pass to the next (as AMD's victim L3
// does) then serves each probe the same share at most.
ProbeResult cpu_copy_nt(const ProbeOptions& opt, const Loaded& m) {
  return cpu_stream(opt, m, "copy_nt", "sb_probe_copy_nt", 2, 2 * opt.triad_mib,
                    "copy, non-temporal stores, prefetched", "non-temporal");
}

// The CPU read probe: loads only, two f64 arrays of the triad's size summed as a dot product. A
// kernel that mostly reads (a dot product, a pooling or an arg-reduction) moves no stores for the
// memory to interleave with its loads; this is the rate it can reach. It is recorded beside the
// bandwidth limit and is not part of it.
ProbeResult cpu_read(const ProbeOptions& opt, const Loaded& m) {
  return cpu_stream(opt, m, "read", "sb_probe_read", 2, opt.triad_mib, "loads only (a dot product)",
                    "");
}

ProbeResult cpu_fma(const ProbeOptions& opt, const Loaded& m) {
  ProbeResult p = make("cpu", "fma", "GFLOP/s");
  auto fn = symbol<fma_fn>(m, "sb_probe_fma", p.reason);
  if (!fn) return p;
  double best = 0, flops = 0;
  int threads = 0, lanes = 0;
  if (fn(opt.fma_min_seconds, opt.fma_reps, &best, &flops, &threads, &lanes) != 0) {
    p.reason = "the FMA chains produced a non-finite value";
    return p;
  }
  p.seconds = best;
  p.reps = opt.fma_reps;
  p.detail = "f32, " + std::to_string(lanes) + " lanes x 12 chains, best of " +
             std::to_string(p.reps) + ", " + std::to_string(threads) + " threads";
  p.params = {{"type", "f32"}, {"lanes", lanes}, {"flops_per_pass", flops}, {"threads", threads}};
  finish(p, flops / best * 1e-9);
  return p;
}

ProbeResult cpu_sgemm(const ProbeOptions& opt, const Loaded& m) {
  ProbeResult p = make("cpu", "sgemm", "GFLOP/s");
  auto fn = symbol<sgemm_fn>(m, "sb_probe_sgemm", p.reason);
  if (!fn) return p;
  double best = 0;
  char info[512] = {};
  int rc = fn(opt.sgemm_n, opt.sgemm_reps, &best, info, sizeof info);
  if (rc != 0) {
    p.reason = rc == 1 ? "cannot allocate the matrices" : "sgemm result is wrong";
    return p;
  }
  double n = opt.sgemm_n;
  p.seconds = best;
  p.reps = opt.sgemm_reps;
  p.detail =
      "n=" + std::to_string(opt.sgemm_n) + ", " + info + ", best of " + std::to_string(p.reps);
  p.params = {{"n", opt.sgemm_n}, {"library", info}, {"flops_per_call", 2 * n * n * n}};
  finish(p, 2 * n * n * n / best * 1e-9);
  return p;
}

ProbeResult gpu_triad(const ProbeOptions& opt, const Loaded& m) {
  ProbeResult p = make("gpu", "triad", "GB/s");
  auto fn = symbol<cuda_triad_fn>(m, "sb_probe_cuda_triad", p.reason);
  if (!fn) return p;
  int64_t n = opt.gpu_triad_mib * 1024 * 1024 / 8;
  double best = 0;
  char err[512] = {};
  if (fn(n, opt.gpu_triad_reps, &best, err, sizeof err) != 0) {
    p.reason = err;
    return p;
  }
  double bytes = 3.0 * 8.0 * static_cast<double>(n);
  p.seconds = best;
  p.reps = opt.gpu_triad_reps;
  p.detail =
      "3 x " + mib(opt.gpu_triad_mib) + " f64, best of " + std::to_string(p.reps) + ", CUDA events";
  p.params = {{"elements", n}, {"type", "f64"}, {"arrays", 3}, {"bytes_per_pass", bytes}};
  finish(p, bytes / best * 1e-9);
  return p;
}

ProbeResult gpu_memory_peak(const Loaded& m) {
  ProbeResult p = make("gpu", "memory_peak", "GB/s");
  auto fn = symbol<cuda_peak_fn>(m, "sb_probe_cuda_memory_peak", p.reason);
  if (!fn) return p;
  double gbps = 0;
  int clock_khz = 0, bus_bits = 0;
  char err[512] = {};
  if (fn(&gbps, &clock_khz, &bus_bits, err, sizeof err) != 0) {
    p.reason = err;
    return p;
  }
  if (clock_khz <= 0 || bus_bits <= 0) {
    p.reason = "the device reports no memory clock or bus width";
    return p;
  }
  p.reps = 0;
  p.detail = "theoretical, not measured: 2 x " + num(clock_khz * 1e-3, 0) + " MHz x " +
             std::to_string(bus_bits) + "-bit bus / 8, from the device's attributes";
  p.params = {{"memory_clock_khz", clock_khz}, {"bus_width_bits", bus_bits}, {"measured", false}};
  finish(p, gbps);
  return p;
}

ProbeResult gpu_sgemm(const ProbeOptions& opt, const Loaded& m) {
  ProbeResult p = make("gpu", "sgemm", "GFLOP/s");
  auto fn = symbol<cublas_fn>(m, "sb_probe_cublas_sgemm", p.reason);
  if (!fn) return p;
  double best = 0;
  char info[256] = {}, err[512] = {};
  if (fn(opt.gpu_sgemm_n, opt.gpu_sgemm_reps, &best, info, sizeof info, err, sizeof err) != 0) {
    p.reason = err;
    return p;
  }
  double n = opt.gpu_sgemm_n;
  p.seconds = best;
  p.reps = opt.gpu_sgemm_reps;
  p.detail = "n=" + std::to_string(opt.gpu_sgemm_n) + ", " + info +
             ", default math mode (f32, no TF32), best of " + std::to_string(p.reps);
  p.params = {{"n", opt.gpu_sgemm_n}, {"library", info}, {"flops_per_call", 2 * n * n * n}};
  finish(p, 2 * n * n * n / best * 1e-9);
  return p;
}

// Link flags that make the cuBLAS symbols resolve when the module is loaded.
std::vector<std::string> cublas_flags(const ToolchainOptions& tools) {
  std::vector<std::string> f{"-Xlinker", "--no-as-needed", "-lcublas"};
  // The toolkit's library folder as a run path, for machines whose loader does not know it.
  fs::path lib = fs::path(tools.nvcc).parent_path().parent_path() / "lib64";
  std::error_code ec;
  if (!tools.nvcc.empty() && fs::exists(lib, ec)) {
    f.push_back("-Xlinker");
    f.push_back("-rpath=" + lib.string());
  }
  return f;
}

}  // namespace

std::vector<ProbeModule> probe_modules(const ToolchainOptions& tools) {
  const std::string cpu = native_backend(Device::Cpu).name;  // C++
  const std::string gpu = native_backend(Device::Gpu).name;  // CUDA
  return {
      {"stream", "cpu_stream_fma.cpp", cpu, {}, "sb_probe_triad"},
      {"sgemm", "cpu_sgemm.cpp", cpu, {"-Wl,--no-as-needed", "-lopenblas"}, "sb_probe_sgemm"},
      {"gpu-triad", "cuda_triad.cu", gpu, {}, "sb_probe_cuda_triad"},
      {"cublas", "cuda_sgemm.cu", gpu, cublas_flags(tools), "sb_probe_cublas_sgemm"},
  };
}

BuildResult build_probe(const ProbeOptions& opt, const ProbeModule& m) {
  Runtime* rt = find_runtime(m.backend);
  if (!rt) {
    BuildResult r;
    r.error = "no '" + m.backend + "' runtime";
    return r;
  }
  BuildJob job;
  job.kernel = "probe-" + m.name;
  job.backend = m.backend;
  job.source = (fs::path(opt.source_dir) / m.file).string();
  job.abi_header = (fs::path(opt.tools.abi_dir) / "specbench_abi.h").string();
  job.cmd = rt->compile_command(opt.tools);
  for (const auto& f : m.extra_flags) job.cmd.flags.push_back(f);
  job.entry_symbol = m.entry;
  return build_module(job, opt.cache_dir);
}

const ProbeResult* ProbeResults::find(const std::string& device, const std::string& name) const {
  for (const auto& p : probes) {
    if (p.device == device && p.name == name) return &p;
  }
  return nullptr;
}

std::string describe_probe(const ProbeResult& p) {
  if (!p.ok) return "skipped: " + p.reason;
  return num(p.rate, p.rate < 100 ? 1 : 0) + " " + p.unit + " (" + p.detail + ")";
}

ProbeResults run_probes(const ProbeOptions& opt,
                        const std::function<void(const std::string&)>& progress) {
  ProbeResults r;
  r.ran = true;
  auto t_all = Clock::now();
  auto report = [&](const ProbeResult& p, Clock::time_point t0) {
    if (progress)
      progress("probe " + p.device + " " + p.name + ": " + describe_probe(p) + " [" +
               num(since(t0)) + "s]");
    r.probes.push_back(p);
  };

  // CPU: triad and fma share a module; sgemm has its own (it links the BLAS library).
  if (progress) progress("probe cpu: building the probes and measuring (--no-probes skips this)");
  auto t0 = Clock::now();
  Loaded stream = load(opt, "stream");
  report(cpu_triad(opt, stream, false), t0);
  t0 = Clock::now();
  report(cpu_triad(opt, stream, true), t0);
  t0 = Clock::now();
  report(cpu_copy_nt(opt, stream), t0);
  t0 = Clock::now();
  report(cpu_read(opt, stream), t0);
  t0 = Clock::now();
  report(cpu_fma(opt, stream), t0);
  t0 = Clock::now();
  Loaded blas = load(opt, "sgemm");
  report(cpu_sgemm(opt, blas), t0);

  // GPU: only where the cuda runtime can run code.
  std::string gpu_reason;
  Runtime* cuda = find_runtime(native_backend(Device::Gpu).name);
  if (!opt.gpu) {
    gpu_reason = "gpu probes not asked for";
  } else if (!cuda) {
    gpu_reason = "no cuda runtime";
  } else if (Availability a = cuda->availability(); !a.ok) {
    gpu_reason = "no GPU: " + a.reason;
  } else if (opt.tools.nvcc.empty()) {
    gpu_reason = "no nvcc (the CUDA toolkit was not found when specbench was configured)";
  }
  if (!gpu_reason.empty()) {
    for (const char* name : {"triad", "memory_peak", "sgemm"}) {
      ProbeResult p = make("gpu", name, std::string(name) == "sgemm" ? "GFLOP/s" : "GB/s");
      p.reason = gpu_reason;
      r.probes.push_back(p);
    }
    if (progress) progress("probe gpu: skipped (" + gpu_reason + ")");
  } else {
    t0 = Clock::now();
    Loaded tri = load(opt, "gpu-triad");
    report(gpu_triad(opt, tri), t0);
    t0 = Clock::now();
    report(gpu_memory_peak(tri), t0);
    t0 = Clock::now();
    Loaded gemm = load(opt, "cublas");
    report(gpu_sgemm(opt, gemm), t0);
  }
  r.seconds = since(t_all);
  return r;
}

ProbeResults merge_probe_runs(const ProbeResults& start, const ProbeResults& end) {
  if (!start.ran) return end;
  if (!end.ran) return start;
  ProbeResults r = start;
  r.seconds = start.seconds + end.seconds;
  for (ProbeResult& p : r.probes) {
    const ProbeResult* q = end.find(p.device, p.name);
    if (!q || !q->ok) continue;
    if (!p.ok) {
      p = *q;
      continue;
    }
    const std::vector<double> runs{p.rate, q->rate};
    if (q->rate > p.rate) p = *q;
    p.runs = runs;
    p.detail += "; start " + num(runs[0], runs[0] < 100 ? 1 : 0) + ", end " +
                num(runs[1], runs[1] < 100 ? 1 : 0);
  }
  for (const ProbeResult& q : end.probes)
    if (!start.find(q.device, q.name)) r.probes.push_back(q);
  return r;
}

nlohmann::json probes_json(const ProbeResults& r) {
  nlohmann::json j;
  j["ran"] = r.ran;
  if (!r.ran) {
    j["reason"] = r.reason;
    return j;
  }
  j["seconds"] = r.seconds;
  for (const auto& p : r.probes) {
    nlohmann::json e;
    e["ok"] = p.ok;
    if (p.ok) {
      e[p.unit == "GB/s" ? "gbps" : "gflops"] = p.rate;
      e["seconds"] = p.seconds;
      e["reps"] = p.reps;
      e["detail"] = p.detail;
      e["runs"] = p.runs;
      for (const auto& [k, v] : p.params.items()) e[k] = v;
    } else {
      e["reason"] = p.reason;
    }
    j[p.device][p.name] = e;
  }
  return j;
}

}  // namespace sb
