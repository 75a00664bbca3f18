// The mojo backend's strategies, one record each (host_strategy.h); emit_mojo.cpp prints them.
#include "backends/mojo/strategies.h"

namespace sb {

namespace {

host::HostStrategy vectorize_parallel() {
  host::HostStrategy s;
  s.info = {"vectorize_parallel",
            "parallel chunks of the outer output dimension, SIMD inner loop or reduction",
            host::tile_params(),
            "parallel_simd"};
  s.schedule.parallel = true;
  s.schedule.simd = true;
  s.schedule.fuse_rows = true;
  s.schedule.reassociate = true;
  return s;
}

}  // namespace

const host::HostRegistry& mojo_strategies() {
  static const host::HostRegistry kRegistry(
      "mojo", {host::loops_strategy("a scalar loop nest per statement"), vectorize_parallel(),
               host::blocked_matmul_strategy("vectorize_parallel"),
               host::im2col_strategy("vectorize_parallel")});
  return kRegistry;
}

}  // namespace sb
