// The mojo_gpu printer's tiled stencil (Gen::tiled_stencil): the kernel body written once for
// both GPU printers (lower/gpu_bodies.h: stencil_tile), its frame and launch here.
#include "backends/mojo_gpu/gpu_gen.h"
#include "lower/gpu_bodies.h"

namespace sb::mojo_gpu {

// As the cuda printer's: each block stages the window of the stencil's tensor its outputs read
// (halo included) in dynamic shared memory, its threads loading the window in row-major order,
// then computes its outputs from the window. Blocks of tile_x (x) by tile_y (y) by the rest of
// block_size (the first dimension); rank 1: blocks of block_size threads. A window too large for
// 48 KiB of shared memory takes a grid-stride kernel (_untiled) instead. Mojo: the window is
// external_memory, one name per element type as in the cuda file.
std::string Gen::tiled_stencil(const GpuStep& g) {
  const size_t k = g.first;
  const Statement& st = spec_.stmts[k];
  const StencilMatch& m = g.sten;
  const std::string text = source_text(st, spec_);
  const size_t rank = st.rank();
  const Tensor& X = spec_.tensors[m.tensor];
  // The tile holds values (f32 for f16 and bf16 elements, widened as they are loaded).
  const DType xv = compute_type(X.type);
  const std::vector<int64_t> B =
      stencil_block(rank, bs_, rank > 1 ? param(v_, *info_, "tile_x") : 0,
                    rank == 3 ? param(v_, *info_, "tile_y") : 0);
  auto ds = [](size_t d) { return str(static_cast<int64_t>(d)); };
  int64_t threads = 1;
  for (int64_t b : B) threads *= b;
  MojoStmt L(spec_, st, needs_.stmt);
  PyWriter w(1);
  print_body(stencil_tile(spec_, st, m, B), L, w);

  // The untiled kernel: the same statement in a grid-stride loop.
  MojoStmt G(spec_, st, needs_.stmt);
  PyWriter wg(1);
  print_body(element_body(spec_, st, true), G, wg);
  const std::string total = G.element_count(st.out);

  // Comments on the launch geometry.
  std::string geo_grid, geo_block;
  for (size_t d = rank; d-- > 0;) {
    const std::string e = L.extent(st.out, d, kMojoPrecMul + 1);
    geo_grid += std::string(geo_grid.empty() ? "" : ", ") + "ceil(" + e + " / " + str(B[d]) + ")";
    geo_block += std::string(geo_block.empty() ? "" : " x ") + str(B[d]);
  }
  if (rank > 1) geo_grid = "(" + geo_grid + ")";
  std::string geo_smem;
  for (size_t d = 0; d < rank; ++d) geo_smem += (d ? " * " : "") + std::string("sb_len") + ds(d);

  // The launcher.
  const std::string name = fn(k), untiled = fn(k, "_untiled");
  open_stmt(k, st);
  {
    HelperSet none_h;
    StmtLowering H(spec_, st, &none_h);
    const bool max_grid = stencil_launch(
        st, m, B, xv, bs_, H, body_,
        [&](CodeWriter& x, bool tiled, const std::string& grid, const std::string& block) {
          if (tiled)
            launch_into(x, name, grid, block, threads, "(size_t)sb_smem", L);
          else
            launch_into(x, untiled, grid, block, bs_, "0", G);
        });
    if (max_grid) needs_max_grid_ = true;
    sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  }
  body_.close();

  std::string out = kernel(
      "# " + text + "\n" +
          comment("Each block stages its outputs' window of " + X.name +
                  " (halo included) in dynamic shared memory.") +
          comment("Launch: blocks of " + geo_block + " threads, grid = " + geo_grid + ", " +
                  geo_smem + " elements of dynamic shared memory (at most " +
                  str(kMaxStencilSmem) + " bytes, else " + untiled + ")."),
      name, L, w);
  out += kernel(comment("The same statement with a grid-stride loop, for launches the tiles do "
                        "not fit.") +
                    comment("Launch: blocks of " + str(bs_) + " threads, grid = min(ceil(" + total +
                            " / " + str(bs_) + "), SMs * " + str(bps_) + ")."),
                untiled, G, wg);
  return out;
}

}  // namespace sb::mojo_gpu
