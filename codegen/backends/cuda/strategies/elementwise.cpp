// thread_per_output, grid_stride, vectorized: strategies for elementwise statements.
#include "backends/cuda/strategies/strategy.h"

namespace sb::cuda {

void add_elementwise_strategies(std::vector<CudaStrategy>& out) {
  {
    CudaStrategy s;
    s.info = {"thread_per_output",
              "one thread per output element, one launch per statement",
              {block_size_param()},
              "thread_per_element"};
    s.place = [](const Spec&, size_t k, const Statement&) {
      return generic_step(k, GpuKernel::ThreadPerElement);
    };
    out.push_back(std::move(s));
  }
  {
    CudaStrategy s;
    s.info = {"grid_stride",
              "a grid-stride loop over output elements",
              {block_size_param(), blocks_per_sm_param()},
              "grid_stride"};
    s.place = [](const Spec&, size_t k, const Statement&) { return generic_step(k); };
    out.push_back(std::move(s));
  }
  {
    CudaStrategy s;
    s.info = {"vectorized",
              "elementwise statements with 16-byte vector loads and stores (float4, double2, "
              "int4) and a scalar tail; scalar when a buffer is not 16-byte aligned",
              {block_size_param(), blocks_per_sm_param()},
              "vector_loads"};
    s.needs = "an elementwise statement of rank >= 1";
    s.matches = [](const Spec& spec, const Statement& st, std::string* why) {
      VectorizeMatch m;
      return match_vectorized(spec, st, &m, why);
    };
    s.place = [](const Spec& spec, size_t k, const Statement& st) {
      GpuStep g = generic_step(k);
      std::string why;
      if (match_vectorized(spec, st, &g.vec, &why)) g.kind = GpuKernel::Vectorized;
      return g;
    };
    out.push_back(std::move(s));
  }
}

}  // namespace sb::cuda
