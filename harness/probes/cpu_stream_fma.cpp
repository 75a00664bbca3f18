// Machine probes compiled by the harness with the cpu backend's own compile command (see
// harness/run/probes.h), so that they see the same compiler, flags and OpenMP runtime as the
// generated cpu kernels. Plain C entry points; every function returns 0 or an error code.
#include <immintrin.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "specbench_host_alloc.h"

namespace {

double now() {
  return omp_get_wtime();
}

// `count` f64 arrays of n elements each from sb_host_alloc, freed with the object. ok() is false
// when any could not be had.
class F64Arrays {
 public:
  F64Arrays(int count, int64_t n) {
    for (int i = 0; i < count; ++i)
      p_.push_back(static_cast<double*>(sb_host_alloc(static_cast<size_t>(n) * sizeof(double))));
  }
  ~F64Arrays() {
    for (double* p : p_) std::free(p);
  }
  F64Arrays(const F64Arrays&) = delete;
  F64Arrays& operator=(const F64Arrays&) = delete;
  bool ok() const {
    for (double* p : p_)
      if (!p) return false;
    return true;
  }
  double* operator[](int i) const { return p_[static_cast<size_t>(i)]; }

 private:
  std::vector<double*> p_;
};

// Runs `pass` reps + 1 times, each time called by every thread of one OpenMP parallel region
// (its loops are orphaned `omp for`s); the first run is a warm-up, as in STREAM. Returns the
// fastest of the others, in seconds; *threads is the team's size.
template <typename Pass>
double best_pass(int reps, int* threads, Pass pass) {
  int nthreads = 1;
  double best = 1e300;
  for (int r = 0; r <= reps; ++r) {
    double t0 = now();
#pragma omp parallel
    {
#pragma omp single
      nthreads = omp_get_num_threads();
      pass();
    }
    double t = now() - t0;
    if (r > 0 && t < best) best = t;
  }
  *threads = nthreads;
  return best;
}

}  // namespace

namespace {

// One triad pass a[i] = b[i] + s * c[i] with non-temporal stores: each thread writes whole
// aligned cache lines straight to memory, so the pass moves 3 arrays and no line is read for
// ownership first (which the plain triad pays and does not count). The arrays are 64-byte
// aligned (sb_host_alloc), so every 8-element group is one line; the tail uses plain stores.
void triad_nt_pass(double* __restrict__ a, const double* __restrict__ b,
                   const double* __restrict__ c, double s, int64_t n) {
  const int64_t lines = n / 8;
#pragma omp for schedule(static)
  for (int64_t l = 0; l < lines; ++l) {
    const int64_t i = l * 8;
#if defined(__AVX512F__)
    _mm512_stream_pd(a + i, _mm512_add_pd(_mm512_load_pd(b + i),
                                          _mm512_mul_pd(_mm512_set1_pd(s), _mm512_load_pd(c + i))));
#elif defined(__AVX__)
    for (int q = 0; q < 8; q += 4)
      _mm256_stream_pd(a + i + q,
                       _mm256_add_pd(_mm256_load_pd(b + i + q),
                                     _mm256_mul_pd(_mm256_set1_pd(s), _mm256_load_pd(c + i + q))));
#else
    for (int q = 0; q < 8; q += 2)
      _mm_stream_pd(a + i + q,
                    _mm_add_pd(_mm_load_pd(b + i + q), _mm_mul_pd(_mm_set1_pd(s), _mm_load_pd(c + i + q))));
#endif
  }
#pragma omp single nowait
  for (int64_t i = lines * 8; i < n; ++i) a[i] = b[i] + s * c[i];
  _mm_sfence();
}

// The STREAM triad, plain stores (nt = false) or non-temporal ones (nt = true), on f64 arrays
// of n elements each, OpenMP parallel with the static schedule (first touch by the same
// threads). Runs `reps` times after one untimed pass; *best_seconds is the fastest pass.
// Returns 1 when the arrays cannot be allocated, 2 when the result is wrong.
int triad(int64_t n, int reps, bool nt, double* best_seconds, int* threads) {
  F64Arrays arrays(3, n);
  if (!arrays.ok()) return 1;
  double* a = arrays[0];
  double* b = arrays[1];
  double* c = arrays[2];
  const double s = 3.0;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  const double best = best_pass(reps, threads, [&] {
    if (nt) {
      triad_nt_pass(a, b, c, s, n);
    } else {
      double* __restrict__ pa = a;
      const double* __restrict__ pb = b;
      const double* __restrict__ pc = c;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    }
  });
  // Every element is 1 + 3 * 2 = 7 exactly; check a spread of them (also keeps the stores live).
  int rc = 0;
  for (int64_t i = 0; i < n; i += 1 + n / 97)
    if (a[i] != 7.0) rc = 2;
  if (n > 0 && a[n - 1] != 7.0) rc = 2;
  *best_seconds = best;
  return rc;
}

}  // namespace

namespace {

// Elements of f64 a copy probe prefetches ahead of its loads (4 KiB, one page): the distance
// the generated cpu kernels' streaming loops use.
constexpr int64_t kPrefetchAhead = 512;

// One copy pass a[i] = b[i] with non-temporal stores and a software prefetch of b one page ahead:
// the shape of a streaming elementwise kernel with one input (relu, scale, copy). Its one read
// stream per thread leaves the memory idle between the hardware prefetcher's requests; the
// prefetch keeps more loads in flight. On the development VM this pass reached about 95 GB/s
// where the triad_nt pass reached about 80 (README.md, "Machine probes").
void copy_nt_pass(double* __restrict__ a, const double* __restrict__ b, int64_t n) {
  const int64_t lines = n / 8;
#pragma omp for schedule(static)
  for (int64_t l = 0; l < lines; ++l) {
    const int64_t i = l * 8;
    __builtin_prefetch(b + (i + kPrefetchAhead < n ? i + kPrefetchAhead : n - 1), 0, 3);
#if defined(__AVX512F__)
    _mm512_stream_pd(a + i, _mm512_load_pd(b + i));
#elif defined(__AVX__)
    for (int q = 0; q < 8; q += 4) _mm256_stream_pd(a + i + q, _mm256_load_pd(b + i + q));
#else
    for (int q = 0; q < 8; q += 2) _mm_stream_pd(a + i + q, _mm_load_pd(b + i + q));
#endif
  }
#pragma omp single nowait
  for (int64_t i = lines * 8; i < n; ++i) a[i] = b[i];
  _mm_sfence();
}

// The copy pass on two f64 arrays of n elements each, OpenMP parallel with the static schedule
// (first touch by the same threads). Runs `reps` times after one untimed pass; *best_seconds is
// the fastest pass. Returns 1 when the arrays cannot be allocated, 2 when the copy is wrong.
int copy_nt(int64_t n, int reps, double* best_seconds, int* threads) {
  F64Arrays arrays(2, n);
  if (!arrays.ok()) return 1;
  double* a = arrays[0];
  double* b = arrays[1];
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = static_cast<double>(i & 1023);
  }
  const double best = best_pass(reps, threads, [&] { copy_nt_pass(a, b, n); });
  int rc = 0;
  for (int64_t i = 0; i < n; i += 1 + n / 97)
    if (a[i] != static_cast<double>(i & 1023)) rc = 2;
  if (n > 0 && a[n - 1] != static_cast<double>((n - 1) & 1023)) rc = 2;
  *best_seconds = best;
  return rc;
}

}  // namespace

namespace {

// Loads only: the sum of a[i] * b[i] over two f64 arrays of n elements each (BabelStream's dot),
// OpenMP parallel with the static schedule (first touch by the same threads), vectorised with
// one partial sum per lane. Runs `reps` times after one untimed pass; *best_seconds is the
// fastest pass. Returns 1 when the arrays cannot be allocated, 2 when the sum is wrong.
int read_only(int64_t n, int reps, double* best_seconds, int* threads) {
  F64Arrays arrays(2, n);
  if (!arrays.ok()) return 1;
  double* a = arrays[0];
  double* b = arrays[1];
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
  }
  int nthreads = 1;
  double best = 1e300;
  int rc = 0;
  for (int r = 0; r <= reps; ++r) {
    double sum = 0;
    double t0 = now();
#pragma omp parallel
    {
#pragma omp single
      nthreads = omp_get_num_threads();
      const double* __restrict__ pa = a;
      const double* __restrict__ pb = b;
#pragma omp for simd schedule(static) reduction(+ : sum)
      for (int64_t i = 0; i < n; ++i) sum += pa[i] * pb[i];
    }
    double t = now() - t0;
    if (r > 0 && t < best) best = t;  // the first pass is a warm-up
    if (sum != 2.0 * static_cast<double>(n)) rc = 2;  // exact: every partial sum is an even integer
  }
  *best_seconds = best;
  *threads = nthreads;
  return rc;
}

}  // namespace

// The copy with non-temporal stores (see copy_nt_pass): the rate a one-input streaming kernel
// can reach.
extern "C" int sb_probe_copy_nt(int64_t n, int reps, double* best_seconds, int* threads) {
  return copy_nt(n, reps, best_seconds, threads);
}

// Loads only (see read_only): what a kernel that mostly reads can reach. Recorded beside the
// limit, not part of it.
extern "C" int sb_probe_read(int64_t n, int reps, double* best_seconds, int* threads) {
  return read_only(n, reps, best_seconds, threads);
}

// The STREAM triad with plain stores (see triad above).
extern "C" int sb_probe_triad(int64_t n, int reps, double* best_seconds, int* threads) {
  return triad(n, reps, false, best_seconds, threads);
}

// The triad with non-temporal stores (see triad_nt_pass): the rate a streaming kernel can reach.
extern "C" int sb_probe_triad_nt(int64_t n, int reps, double* best_seconds, int* threads) {
  return triad(n, reps, true, best_seconds, threads);
}

namespace {

// 12 independent multiply-add chains (enough to cover FMA latency x issue width on current
// x86 cores) on the widest vectors the compile flags allow.
#if defined(__AVX512F__)
using V = __m512;
constexpr int kLanes = 16;
inline V splat(float x) {
  return _mm512_set1_ps(x);
}
inline V fmadd(V x, V a, V b) {
  return _mm512_fmadd_ps(x, a, b);
}
inline float hsum(V x) {
  return _mm512_reduce_add_ps(x);
}
#elif defined(__FMA__)
using V = __m256;
constexpr int kLanes = 8;
inline V splat(float x) {
  return _mm256_set1_ps(x);
}
inline V fmadd(V x, V a, V b) {
  return _mm256_fmadd_ps(x, a, b);
}
inline float hsum(V x) {
  alignas(32) float f[8];
  _mm256_store_ps(f, x);
  float s = 0;
  for (float v : f) s += v;
  return s;
}
#else
using V = float;
constexpr int kLanes = 1;
inline V splat(float x) {
  return x;
}
inline V fmadd(V x, V a, V b) {
  return x * a + b;
}
inline float hsum(V x) {
  return x;
}
#endif
constexpr int kChains = 12;

float fma_chains(int64_t iters, float seed) {
  const V a = splat(0.999999f), b = splat(1e-6f);
  V x0 = splat(seed), x1 = splat(seed + 1), x2 = splat(seed + 2), x3 = splat(seed + 3);
  V x4 = splat(seed + 4), x5 = splat(seed + 5), x6 = splat(seed + 6), x7 = splat(seed + 7);
  V x8 = splat(seed + 8), x9 = splat(seed + 9), x10 = splat(seed + 10), x11 = splat(seed + 11);
  for (int64_t i = 0; i < iters; ++i) {
    x0 = fmadd(x0, a, b);
    x1 = fmadd(x1, a, b);
    x2 = fmadd(x2, a, b);
    x3 = fmadd(x3, a, b);
    x4 = fmadd(x4, a, b);
    x5 = fmadd(x5, a, b);
    x6 = fmadd(x6, a, b);
    x7 = fmadd(x7, a, b);
    x8 = fmadd(x8, a, b);
    x9 = fmadd(x9, a, b);
    x10 = fmadd(x10, a, b);
    x11 = fmadd(x11, a, b);
  }
  return hsum(x0) + hsum(x1) + hsum(x2) + hsum(x3) + hsum(x4) + hsum(x5) + hsum(x6) + hsum(x7) +
         hsum(x8) + hsum(x9) + hsum(x10) + hsum(x11);
}

}  // namespace

// Peak f32 multiply-add rate: every OpenMP thread runs independent FMA chains from registers.
// The iteration count doubles until one pass takes at least min_seconds, then the fastest of
// `reps` passes at that count is kept. *flops is the work of one pass (2 per lane per FMA).
// Returns 2 when the chains produce a non-finite value.
namespace {

// One parallel pass of fma_chains on every OpenMP thread; returns its wall time.
double fma_pass(int64_t iters, float seed, int* nthreads, float* sink) {
  float sum = 0;
  int n = 1;
  double t0 = now();
#pragma omp parallel reduction(+ : sum)
  {
#pragma omp single nowait
    n = omp_get_num_threads();
    sum += fma_chains(iters, seed + static_cast<float>(omp_get_thread_num()));
  }
  double t = now() - t0;
  *nthreads = n;
  *sink += sum;
  return t;
}

}  // namespace

// Peak f32 multiply-add rate: every OpenMP thread runs independent FMA chains from registers.
// The iteration count doubles until one pass takes at least min_seconds, then the fastest of
// `reps` passes at that count is kept. *flops is the work of one pass (2 per lane per FMA).
// Returns 2 when the chains produce a non-finite value.
extern "C" int sb_probe_fma(double min_seconds, int reps, double* best_seconds, double* flops,
                            int* threads, int* lanes) {
  volatile float seed = 1.0f;
  int nthreads = 1;
  float sink = 0;
  int64_t iters = 1 << 14;
  while (fma_pass(iters, seed, &nthreads, &sink) < min_seconds && iters < (int64_t{1} << 40))
    iters *= 2;
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    double t = fma_pass(iters, seed, &nthreads, &sink);
    if (t < best) best = t;
  }
  *best_seconds = best;
  *flops = 2.0 * kChains * kLanes * static_cast<double>(iters) * nthreads;
  *threads = nthreads;
  *lanes = kLanes;
  return std::isfinite(sink) ? 0 : 2;
}
