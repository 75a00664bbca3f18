// The vendor sgemm rate: cblas_sgemm (OpenBLAS on the development machine) at n x n x n, compiled
// with the cpu backend's compile command plus the BLAS library (see harness/run/probes.h).
#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "specbench_host_alloc.h"

// C = A * B for random-ish f32 matrices, once untimed and then `reps` times; *best_seconds is
// the fastest call. `info` receives the library's self-description (OpenBLAS's configuration and
// thread count when the library is OpenBLAS). Returns 1 on allocation failure, 2 on a wrong
// result.
extern "C" int sb_probe_sgemm(int n, int reps, double* best_seconds, char* info, int info_len) {
  const size_t elems = static_cast<size_t>(n) * n;
  float* a = static_cast<float*>(sb_host_alloc(elems * 4));
  float* b = static_cast<float*>(sb_host_alloc(elems * 4));
  float* c = static_cast<float*>(sb_host_alloc(elems * 4));
  if (!a || !b || !c) {
    std::free(a);
    std::free(b);
    std::free(c);
    return 1;
  }
  // B is the identity scaled by 2, so C = 2A exactly: a cheap check of the result.
  for (size_t i = 0; i < elems; ++i) {
    a[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f;
    b[i] = 0.0f;
  }
  for (int i = 0; i < n; ++i) b[static_cast<size_t>(i) * n + i] = 2.0f;
  double best = 1e300;
  for (int r = 0; r <= reps; ++r) {
    double t0 = omp_get_wtime();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    double t = omp_get_wtime() - t0;
    if (r > 0 && t < best) best = t;
  }
  int rc = 0;
  for (size_t i = 0; i < elems; i += 1 + elems / 101)
    if (c[i] != 2.0f * a[i]) rc = 2;
  std::free(a);
  std::free(b);
  std::free(c);
  *best_seconds = best;

  // OpenBLAS describes itself; other CBLAS libraries do not have these symbols.
  using config_fn = char* (*)();
  using threads_fn = int (*)();
  auto config = reinterpret_cast<config_fn>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  auto nthreads = reinterpret_cast<threads_fn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  auto corename = reinterpret_cast<config_fn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (info && info_len > 0) {
    if (config)
      std::snprintf(info, info_len, "%s, core %s, %d threads", config(),
                    corename ? corename() : "?", nthreads ? nthreads() : 0);
    else
      std::snprintf(info, info_len, "CBLAS");
  }
  return rc;
}
