// Machine probes: what this machine can do at best, measured at the start and at the end of every
// benchmark run so that each result can be put against a limit (see analysis.h). A shared machine's
// bandwidth drifts within minutes; the better of the two measurements is the limit.
//
//   cpu triad   STREAM triad a[i] = b[i] + s*c[i] on three f64 arrays (256 MiB each by default,
//               far beyond any last-level cache), OpenMP parallel; best of N passes after a
//               warm-up; GB/s counted as STREAM does: 3 arrays x elements x 8 bytes per pass.
//   cpu triad_nt  the same triad with non-temporal stores (no read for ownership).
//   cpu copy_nt a[i] = b[i] on two f64 arrays of twice the triad's size (it reads as much as the
//               triad), non-temporal stores and a software prefetch: the shape of a one-input
//               streaming kernel (relu).
//   cpu read    loads only: a dot product of two f64 arrays of the triad's size. Not a limit: the
//               rate a kernel that mostly reads can reach, which the summary shows beside it.
//   cpu fma     peak f32 multiply-add rate: independent FMA chains in registers on every OpenMP
//               thread (2 flops per lane per FMA); best of a few passes.
//   cpu sgemm   the vendor rate: cblas_sgemm (OpenBLAS) at n = 2048; 2 n^3 flops; best of a few.
//   gpu triad   the same triad in device memory, timed with CUDA events.
//   gpu memory_peak  not a measurement: the memory's theoretical rate from the device's
//               attributes (2 x memory clock x bus width / 8). Never a limit; the GPU summary
//               puts rates against it beside the triad.
//   gpu sgemm   cublasSgemm (default math mode: plain f32, no TF32) at n = 4096, events.
//
// The probes are small source files in harness/probes/ compiled through the toolchain's module
// cache with the backend's own compile command (the cpu probes with exactly the flags of the
// generated cpu kernels, plus the BLAS library for sgemm; the gpu probes with the cuda backend's
// nvcc command, plus cuBLAS), then dlopen()ed. GPU probes are skipped, with the reason, when the
// cuda runtime is unavailable. A probe that cannot be built or fails is recorded with the reason;
// it never stops the benchmark run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "build/toolchain.h"

namespace sb {

struct ProbeResult {
  std::string device;  // "cpu" or "gpu"
  std::string name;    // "triad", "triad_nt", "copy_nt", "read" (cpu), "fma", "sgemm"
  std::string unit;    // "GB/s" (triads, read) or "GFLOP/s"
  bool ok = false;
  std::string reason;  // when !ok: why it was skipped or failed
  double rate = 0;     // in `unit` (1e9 per second); 0 when !ok
  double seconds = 0;  // the best pass
  int reps = 0;        // timed passes
  std::string detail;  // "3 x 256 MiB f64, 2 threads", "OpenBLAS ..., n=2048", ...
  nlohmann::json params = nlohmann::json::object();  // the numbers behind detail
  // The rate of each time this probe ran in the benchmark run, in order (start, end); one entry
  // when it ran once.
  std::vector<double> runs;
};

struct ProbeResults {
  bool ran = false;    // false: probes were not run (--no-probes); `reason` says why
  std::string reason;  // when !ran
  double seconds = 0;  // wall time of all the probes, builds included
  std::vector<ProbeResult> probes;

  // The probe of `device` called `name`, or nullptr.
  const ProbeResult* find(const std::string& device, const std::string& name) const;
};

struct ProbeOptions {
  ToolchainOptions tools;
  std::string cache_dir;  // module cache for the probe modules
  std::string source_dir = SPECBENCH_SOURCE_DIR "/harness/probes";
  bool gpu = true;          // run the gpu probes when the cuda runtime is available
  int64_t triad_mib = 256;  // per array
  int triad_reps = 10;
  double fma_min_seconds = 0.04;  // per pass
  int fma_reps = 3;
  int sgemm_n = 2048;
  int sgemm_reps = 3;
  int64_t gpu_triad_mib = 256;
  int gpu_triad_reps = 20;
  int gpu_sgemm_n = 4096;
  int gpu_sgemm_reps = 5;
};

// One probe module: harness/probes/<file>, built with `backend`'s compile command plus
// extra_flags (the BLAS or cuBLAS library); `backend` is the native backend of the probe's
// device (native_backend in backends/backend_record.h).
struct ProbeModule {
  std::string name;  // "stream" (cpu triad and fma), "sgemm", "gpu-triad", "cublas"
  std::string file;
  std::string backend;  // "cpu" or "cuda": native_backend(device).name
  std::vector<std::string> extra_flags;
  std::string entry;  // the symbol the module must export (BuildJob::entry_symbol)
};
std::vector<ProbeModule> probe_modules(const ToolchainOptions& tools);

// Builds one probe module into opt.cache_dir (or finds it there).
BuildResult build_probe(const ProbeOptions& opt, const ProbeModule& m);

// Runs every probe, reporting one progress line per probe ("probe cpu triad: 37.1 GB/s (...)").
ProbeResults run_probes(const ProbeOptions& opt,
                        const std::function<void(const std::string&)>& progress);

// The probes of a run measured at its start and again at its end: each probe whose both
// measurements succeeded keeps the one with the higher rate, with both rates in `runs` and in
// its detail ("...; start 35.1, end 33.0"); a probe that succeeded only once keeps that one.
// `seconds` is the sum of both. When either did not run, returns the other.
ProbeResults merge_probe_runs(const ProbeResults& start, const ProbeResults& end);

// {"ran": true, "seconds": 1.9, "cpu": {"triad": {"ok", "gbps" | "gflops", "seconds", "reps",
// "detail", "runs", params...} | {"ok": false, "reason"}, ...}, "gpu": {...}}; {"ran": false,
// "reason"} when not run.
nlohmann::json probes_json(const ProbeResults& r);

// "37.1 GB/s (3 x 256 MiB f64, best of 10, 2 threads)" or "skipped: <reason>".
std::string describe_probe(const ProbeResult& p);

}  // namespace sb
