// The device vendor sgemm rate: cublasSgemm at n x n x n in the default math mode (plain f32, no
// TF32), timed with CUDA events (see harness/run/probes.h). Compiled with the cuda backend's compile
// command plus -lcublas.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

__global__ void fill(float* a, float* b, int n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t elems = static_cast<int64_t>(n) * n;
  if (i < elems) {
    a[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f;
    b[i] = (i / n == i % n) ? 2.0f : 0.0f;  // 2 I, so C = 2A exactly
  }
}

}  // namespace

#define SB_PROBE_CUDA(call)                                                     \
  do {                                                                          \
    cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) {                                                    \
      if (err && err_len > 0)                                                   \
        std::snprintf(err, err_len, "%s: %s (%s)", #call, cudaGetErrorName(e_), \
                      cudaGetErrorString(e_));                                  \
      rc = 1;                                                                   \
      goto done;                                                                \
    }                                                                           \
  } while (0)

#define SB_PROBE_CUBLAS(call)                                                                 \
  do {                                                                                        \
    cublasStatus_t s_ = (call);                                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                        \
      if (err && err_len > 0) std::snprintf(err, err_len, "%s: cuBLAS status %d", #call, s_); \
      rc = 1;                                                                                 \
      goto done;                                                                              \
    }                                                                                         \
  } while (0)

// C = A * B, once untimed and then `reps` times, each timed with events; *best_seconds is the
// fastest. `info` receives "cuBLAS <version>". Returns 0, 1 on an error (described in err), 2 on a
// wrong result.
extern "C" int sb_probe_cublas_sgemm(int n, int reps, double* best_seconds, char* info,
                                     int info_len, char* err, int err_len) {
  int rc = 0;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  cublasHandle_t h = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  const float one = 1.0f, zero = 0.0f;
  const int64_t elems = static_cast<int64_t>(n) * n;
  double best = 1e300;
  int version = 0;
  std::vector<float> ha(2), hc(2);
  SB_PROBE_CUDA(cudaMalloc(&a, elems * sizeof(float)));
  SB_PROBE_CUDA(cudaMalloc(&b, elems * sizeof(float)));
  SB_PROBE_CUDA(cudaMalloc(&c, elems * sizeof(float)));
  fill<<<static_cast<unsigned>((elems + 255) / 256), 256>>>(a, b, n);
  SB_PROBE_CUDA(cudaGetLastError());
  SB_PROBE_CUBLAS(cublasCreate(&h));
  SB_PROBE_CUBLAS(cublasGetVersion(h, &version));
  SB_PROBE_CUDA(cudaEventCreate(&start));
  SB_PROBE_CUDA(cudaEventCreate(&stop));
  for (int r = 0; r <= reps; ++r) {
    SB_PROBE_CUDA(cudaEventRecord(start));
    // Column-major C = B^T-free form: with B = 2I the product is 2A in either layout.
    SB_PROBE_CUBLAS(
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
    SB_PROBE_CUDA(cudaEventRecord(stop));
    SB_PROBE_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    SB_PROBE_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (r > 0 && ms * 1e-3 < best) best = ms * 1e-3;
  }
  SB_PROBE_CUDA(cudaMemcpy(ha.data(), a + elems - 2, 2 * sizeof(float), cudaMemcpyDeviceToHost));
  SB_PROBE_CUDA(cudaMemcpy(hc.data(), c + elems - 2, 2 * sizeof(float), cudaMemcpyDeviceToHost));
  if (hc[0] != 2.0f * ha[0] || hc[1] != 2.0f * ha[1]) {
    rc = 2;
    if (err && err_len > 0) std::snprintf(err, err_len, "sgemm result wrong");
  }
  *best_seconds = best;
  if (info && info_len > 0) std::snprintf(info, info_len, "cuBLAS %d", version);
done:
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (h) cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return rc;
}
