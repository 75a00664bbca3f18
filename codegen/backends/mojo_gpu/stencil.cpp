// The mojo_gpu printer's tiled stencil (Gen::tiled_stencil), as the cuda printer's Gen::stencil
// (backends/cuda/cuda_kernels.cpp).
#include <functional>

#include "backends/mojo_gpu/gpu_gen.h"
#include "ir/affine.h"
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
  const std::string xt = mojo_scalar_type(xv);
  const std::vector<int64_t> B =
      stencil_block(rank, bs_, rank > 1 ? param(v_, *info_, "tile_x") : 0,
                    rank == 3 ? param(v_, *info_, "tile_y") : 0);
  auto axis = [&](size_t d) { return std::string(1, "xyz"[rank - 1 - d]); };
  auto ds = [](size_t d) { return str(static_cast<int64_t>(d)); };
  const std::string tile = std::string("sb_tile_") + scalar(xv).mojo_suffix;
  use_gpu({"block_idx", "thread_idx", "barrier"});
  use("max.gpu.memory", {"AddressSpace", "external_memory"});

  MojoStmt L(spec_, st, needs_.stmt);
  PyWriter w(1);
  const std::string xn = L.tensor_name(m.tensor);
  w.line("# " + X.name + " over the block's outputs and their halo");
  w.line("var " + tile + " = external_memory[" + xt +
         ", address_space=AddressSpace.SHARED, alignment=16, name=\"" + tile + "\"]()");
  {
    PyWriter none;
    const HaloPrinter mp{
        [&](int s) { return L.size_name(s); },
        [&](const Expr& e) { return L.expr(e, none, kMojoPrecMul + 1); },
        [&](const Expr& e) { return "(" + L.expr(e, none, kMojoPrecAdd) + " - 1)"; },
        [&](const Expr& e) { return L.expr(e, none, kMojoPrecMul + 1); }};
    const std::vector<Halo> hs = halos(st, m, mp);
    for (size_t d = 0; d < rank; ++d) {
      const std::string lo = "sb_lo" + ds(d), hi = "sb_hi" + ds(d);
      w.line("# Offsets of dimension " + ds(d) + " lie in [" + lo + ", " + hi + "].");
      if (hs[d].literal) {
        w.line("var " + lo + " = " + str(hs[d].lo_c));
        w.line("var " + hi + " = " + str(hs[d].hi_c));
        continue;
      }
      w.line("var " + lo + " = 0");
      w.line("var " + hi + " = 0");
      for (const auto& [blo, bhi] : hs[d].bounds) {
        w.line(lo + " = min(" + lo + ", " + blo + ")");
        w.line(hi + " = max(" + hi + ", " + bhi + ")");
      }
    }
  }
  for (size_t d = 0; d < rank; ++d)
    w.line("var sb_len" + ds(d) + " = " + str(B[d]) + " + sb_hi" + ds(d) + " - sb_lo" + ds(d));
  for (size_t d = 0; d < rank; ++d)
    w.line("var sb_base" + ds(d) + " = Int(block_idx." + axis(d) + ") * " + str(B[d]) +
           " + sb_lo" + ds(d));
  std::string thread = "Int(thread_idx.x)", count = "sb_len0";
  if (rank >= 2) thread = "Int(thread_idx.y) * " + str(B[rank - 1]) + " + Int(thread_idx.x)";
  if (rank == 3)
    thread = "(Int(thread_idx.z) * " + str(B[1]) + " + Int(thread_idx.y)) * " + str(B[2]) +
             " + Int(thread_idx.x)";
  for (size_t d = 1; d < rank; ++d) count += " * sb_len" + ds(d);
  int64_t threads = 1;
  for (int64_t b : B) threads *= b;
  w.open("for sb_l in range(" + thread + ", " + count + ", " + str(threads) + "):");
  std::vector<std::string> gs;
  for (size_t d = 0; d < rank; ++d) {
    std::string inner;
    for (size_t e = d + 1; e < rank; ++e)
      inner += std::string(inner.empty() ? "" : " * ") + "sb_len" + ds(e);
    std::string pos = "sb_l";
    if (!inner.empty()) pos += " // " + (d + 2 < rank ? "(" + inner + ")" : inner);
    if (d > 0) pos = (inner.empty() ? pos : "(" + pos + ")") + " % sb_len" + ds(d);
    w.line("var sb_g" + ds(d) + " = sb_base" + ds(d) + " + " + pos);
    gs.push_back("sb_g" + ds(d));
  }
  // Row-major flat index of `subs` in X.
  auto flat = [&](const std::vector<std::string>& subs) {
    std::string acc = subs[0];
    for (size_t d = 1; d < rank; ++d) {
      if (d > 1) acc = "(" + acc + ")";
      acc += " * " + L.extent(m.tensor, d, kMojoPrecMul + 1) + " + " + subs[d];
    }
    return acc;
  };
  std::string inside;
  for (size_t d = 0; d < rank; ++d)
    inside += (d ? " and " : "") + gs[d] + " >= 0 and " + gs[d] + " < " +
              L.extent(m.tensor, d, kMojoPrecCmp + 1);
  w.line("# Outside " + X.name + ": " +
         (X.boundary == Boundary::Zero    ? "zero by its boundary rule."
          : X.boundary == Boundary::Clamp ? "clamped by its boundary rule."
                                          : "never read."));
  // Clamped: both branches assign it (Mojo warns of an initial value never used).
  w.line(X.boundary == Boundary::Clamp ? "var sb_x: " + xt : "var sb_x = " + xt + "(0)");
  w.open("if " + inside + ":");
  w.line("sb_x = " + widened(X.type, xn + "[unsafe_offset=" + flat(gs) + "]"));
  w.dedent();
  if (X.boundary == Boundary::Clamp) {
    std::vector<std::string> cl;
    for (size_t d = 0; d < rank; ++d)
      cl.push_back("min(max(" + gs[d] + ", 0), " + L.extent(m.tensor, d, kMojoPrecAdd) + " - 1)");
    w.open("else:");
    w.line("sb_x = " + widened(X.type, xn + "[unsafe_offset=" + flat(cl) + "]"));
    w.dedent();
  }
  w.line(tile + "[unsafe_offset=sb_l] = sb_x");
  w.dedent();
  w.line("barrier()");
  std::string cond;
  for (size_t d = 0; d < rank; ++d) {
    const std::string v = L.var_name(static_cast<int>(d));
    w.line("var " + v + " = Int(block_idx." + axis(d) + ") * " + str(B[d]) + " + Int(thread_idx." +
           axis(d) + ")");
    cond += (d ? " and " : "") + v + " < " + L.extent(st.out, d, kMojoPrecCmp + 1);
  }
  {
    PyWriter none;
    for (const Expr* r : m.reads) {
      std::string idx;
      for (size_t d = 0; d < rank; ++d) {
        const std::string rel = L.expr(*r->args[d], none, kMojoPrecAdd + 1) + " - sb_base" + ds(d);
        idx = d == 0 ? rel : "(" + idx + ") * sb_len" + ds(d) + " + " + rel;
      }
      L.set_override(r, tile + "[unsafe_offset=" + idx + "]");
    }
  }
  w.open("if " + cond + ":");
  L.assign(w);
  L.clear_overrides();
  w.dedent();

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
