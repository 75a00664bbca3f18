// The vendor_cpu backend's strategies, one record each (host_strategy.h); emit_vendor_cpu.cpp
// prints them.
#include "backends/vendor_cpu/strategies.h"

namespace sb {

namespace {

// Contractions through the library, every other statement as the cpu backend's omp_simd (one
// statement at a time: no row fusion).
host::HostStrategy blas() {
  host::HostStrategy s;
  s.info = {
      "blas",
      "contractions through OpenBLAS cblas_sgemm/cblas_dgemm, one call per product of a batch; "
      "other statements as omp_simd",
      {},
      "vendor_gemm"};
  s.needs = host::contraction_needs();
  s.matches = host::is_contraction;
  s.schedule.parallel = true;
  s.schedule.simd = true;
  s.schedule.reassociate = true;
  s.schedule.gemm = host::Gemm::Vendor;
  return s;
}

}  // namespace

const host::HostRegistry& vendor_cpu_strategies() {
  static const host::HostRegistry kRegistry("vendor_cpu", {blas()});
  return kRegistry;
}

}  // namespace sb
