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

// Convolutions as im2col and a library GEMM: the usual CPU convolution of frameworks without
// a direct one, and the reference the cpu backend's loop nests are measured against.
host::HostStrategy im2col() {
  host::HostStrategy s = blas();
  s.info = {"im2col",
            "convolutions (weights times gathered columns) as an im2col gather into a K x N "
            "buffer, then one OpenBLAS cblas_sgemm/cblas_dgemm per batch element; contractions "
            "and other statements as blas",
            {},
            "im2col_gemm"};
  s.needs = host::gathered_gemm_needs();
  s.matches = host::is_gathered_gemm;
  s.schedule.im2col = true;
  return s;
}

}  // namespace

const host::HostRegistry& vendor_cpu_strategies() {
  static const host::HostRegistry kRegistry("vendor_cpu", {blas(), im2col()});
  return kRegistry;
}

}  // namespace sb
