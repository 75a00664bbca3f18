// The cpu backend's strategies, one record each (host_strategy.h); emit_cpu.cpp prints them.
#include "backends/cpu/strategies.h"

namespace sb {

namespace {

host::HostStrategy omp_simd() {
  host::HostStrategy s;
  s.info = {"omp_simd",
            "OpenMP-parallel outer loops, omp simd inner loop, OpenMP reductions",
            {
                {"approx_math", 0, 0, 1, false,
                 "1: f32 exp and tanh as inline polynomial forms (within 4 and 6 ulp) instead of "
                 "libmvec; in fused row groups, a division by a value of the row as a "
                 "multiplication by its reciprocal"},
            },
            "parallel_simd"};
  for (const ParamInfo& p : host::tile_params()) s.info.params.push_back(p);
  s.schedule.parallel = true;
  s.schedule.simd = true;
  s.schedule.fuse_rows = true;
  s.schedule.reassociate = true;
  s.schedule.approx_math = true;
  return s;
}

}  // namespace

const host::HostRegistry& cpu_strategies() {
  static const host::HostRegistry kRegistry(
      "cpu", {host::loops_strategy("a scalar loop nest per statement"), omp_simd(),
              host::blocked_matmul_strategy("omp_simd"), host::im2col_strategy("omp_simd"),
              host::flash_attention_strategy("omp_simd")});
  return kRegistry;
}

}  // namespace sb
