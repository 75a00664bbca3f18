// tiled_stencil: reads at offsets of the output index, staged with their halo in shared memory.
#include "backends/cuda/strategies/strategy.h"

namespace sb::cuda {

namespace {

Status check_stencil_params(const Spec& spec, const Variant& v, const StrategyInfo& info) {
  auto p = [&](const std::string& name) { return param(v, info, name); };
  const std::string who = "variant '" + v.name + "'";
  for (const Statement& st : spec.stmts) {
    StencilMatch m;
    std::string why;
    if (st.rank() == 3 && match_stencil(spec, st, &m, &why) &&
        p("tile_x") * p("tile_y") > p("block_size"))
      return make_error(v.loc, who + " tiles a 3D statement with tile_x * tile_y = " +
                                   std::to_string(p("tile_x") * p("tile_y")) +
                                   " threads per z-layer, more than block_size = " +
                                   std::to_string(p("block_size")));
  }
  if (p("tile_x") > p("block_size"))
    return make_error(param_loc(v, "tile_x"),
                      "parameter 'tile_x' of " + who + " is " + std::to_string(p("tile_x")) +
                          ", more than block_size = " + std::to_string(p("block_size")));
  return {};
}

}  // namespace

void add_stencil_strategies(std::vector<CudaStrategy>& out) {
  CudaStrategy s;
  s.info = {
      "tiled_stencil",
      "reads at offsets of the output index, staged with their halo in dynamic shared memory",
      {block_size_param(),
       pow2_param("tile_x", 32, 1, 1024,
                  "2D and 3D: tile width; a 2D block is tile_x x (block_size / tile_x)"),
       pow2_param(
           "tile_y", 4, 1, 1024,
           "3D: tile height; the block is tile_x x tile_y x (block_size / (tile_x * tile_y))")},
      "shared_halo_stencil"};
  s.needs =
      "an output of rank 1, 2 or 3 reading one tensor at offsets of its indices, e.g. "
      "y[i] = x[i - 1] + x[i + 1]";
  s.matches = [](const Spec& spec, const Statement& st, std::string* why) {
    StencilMatch m;
    return match_stencil(spec, st, &m, why);
  };
  s.check_params = check_stencil_params;
  s.place = [](const Spec& spec, size_t k, const Statement& st) {
    GpuStep g = generic_step(k);
    std::string why;
    if (match_stencil(spec, st, &g.sten, &why)) g.kind = GpuKernel::TiledStencil;
    return g;
  };
  out.push_back(std::move(s));
}

}  // namespace sb::cuda
