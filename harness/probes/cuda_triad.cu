// The device memory bandwidth probe: a STREAM triad on f64 arrays in device memory, timed with
// CUDA events (see harness/run/probes.h). Compiled with the cuda backend's compile command.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace {

__global__ void triad(double* __restrict__ a, const double* __restrict__ b,
                      const double* __restrict__ c, double s, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] + s * c[i];
}

__global__ void init(double* a, double* b, double* c, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
}

int fail(cudaError_t e, const char* what, char* err, int err_len) {
  if (err && err_len > 0)
    std::snprintf(err, err_len, "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
  return 1;
}

}  // namespace

#define SB_PROBE_CHECK(call)              \
  do {                                    \
    cudaError_t e_ = (call);              \
    if (e_ != cudaSuccess) {              \
      rc = fail(e_, #call, err, err_len); \
      goto done;                          \
    }                                     \
  } while (0)

// a[i] = b[i] + s * c[i], one element per thread, 1024 threads per block (as BabelStream does).
// One untimed launch, then `reps` launches each timed with events; *best_seconds is the fastest.
// Returns 0, 1 on a CUDA error (described in err), 2 on a wrong result.
extern "C" int sb_probe_cuda_triad(int64_t n, int reps, double* best_seconds, char* err,
                                   int err_len) {
  int rc = 0;
  double* a = nullptr;
  double* b = nullptr;
  double* c = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  const int block = 1024;
  const unsigned grid = static_cast<unsigned>((n + block - 1) / block);
  double best = 1e300;
  double sample = 0;
  SB_PROBE_CHECK(cudaMalloc(&a, n * sizeof(double)));
  SB_PROBE_CHECK(cudaMalloc(&b, n * sizeof(double)));
  SB_PROBE_CHECK(cudaMalloc(&c, n * sizeof(double)));
  SB_PROBE_CHECK(cudaEventCreate(&start));
  SB_PROBE_CHECK(cudaEventCreate(&stop));
  init<<<grid, block>>>(a, b, c, n);
  SB_PROBE_CHECK(cudaGetLastError());
  for (int r = 0; r <= reps; ++r) {
    SB_PROBE_CHECK(cudaEventRecord(start));
    triad<<<grid, block>>>(a, b, c, 3.0, n);
    SB_PROBE_CHECK(cudaGetLastError());
    SB_PROBE_CHECK(cudaEventRecord(stop));
    SB_PROBE_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    SB_PROBE_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r > 0 && ms * 1e-3 < best) best = ms * 1e-3;
  }
  SB_PROBE_CHECK(cudaMemcpy(&sample, a + n - 1, sizeof(double), cudaMemcpyDeviceToHost));
  if (sample != 7.0) {
    rc = 2;
    if (err && err_len > 0) std::snprintf(err, err_len, "triad result %g, expected 7", sample);
  }
  *best_seconds = best;
done:
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return rc;
}

// The memory's theoretical peak, from the device's own attributes: two transfers per memory
// clock (double data rate) across the whole bus, as nvbench computes it. Not a measurement: the
// summary reports rates against it beside the measured triad. Returns 0, or 1 on a CUDA error.
extern "C" int sb_probe_cuda_memory_peak(double* gbps, int* clock_khz, int* bus_bits, char* err,
                                         int err_len) {
  int rc = 0;
  int device = 0;
  SB_PROBE_CHECK(cudaGetDevice(&device));
  SB_PROBE_CHECK(cudaDeviceGetAttribute(clock_khz, cudaDevAttrMemoryClockRate, device));
  SB_PROBE_CHECK(cudaDeviceGetAttribute(bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  *gbps = 2.0 * (*clock_khz) * 1e3 * (*bus_bits / 8.0) * 1e-9;
done:
  return rc;
}
