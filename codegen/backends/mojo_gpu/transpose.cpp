// The mojo_gpu printer's tiled transpose (Gen::tiled_transpose), as the cuda printer's
// Gen::transpose (backends/cuda/cuda_kernels.cpp).
#include "backends/mojo_gpu/gpu_gen.h"

namespace sb::mojo_gpu {

// As the cuda printer's: tile x tile blocks of the output through padded shared-memory tiles
// ([tile][tile + 1], one per transposed read), loaded along the source's last dimension and
// stored along the output's; blocks of tile x block_rows threads, each looping over the tile's
// rows in steps of block_rows; a 2-D grid, x over output dimension 1, y over dimension 0.
std::string Gen::tiled_transpose(const GpuStep& g) {
  const size_t k = g.first;
  const Statement& st = spec_.stmts[k];
  const TransposeMatch& m = g.tr;
  const std::string text = source_text(st, spec_);
  const int64_t T = param(v_, *info_, "tile"), R = param(v_, *info_, "block_rows");
  const std::string ts = str(T), pitch = str(T + 1), rs = str(R);
  use_gpu({"block_idx", "thread_idx", "barrier"});
  MojoStmt L(spec_, st, needs_.stmt);
  PyWriter w(1);
  const std::string iv = L.var_name(0), jv = L.var_name(1);
  const std::string E0 = L.extent(st.out, 0, kMojoPrecCmp + 1);
  const std::string E1 = L.extent(st.out, 1, kMojoPrecCmp + 1);
  for (size_t q = 0; q < m.reads.size(); ++q) {
    const Expr& r = *m.reads[q];
    w.line("# " + to_string(r, spec_, &st) + ", rows padded to " + pitch);
    w.line(shared_array("sb_tile" + str(static_cast<int64_t>(q)), T * (T + 1),
                        compute_type(spec_.tensors[r.ref].type)));
  }
  w.line("var sb_tx = Int(thread_idx.x)");
  w.line("var sb_r0 = Int(block_idx.y) * " + ts + "  # first " + iv + " of the tile");
  w.line("var sb_c0 = Int(block_idx.x) * " + ts + "  # first " + jv);
  w.line("# Load: consecutive threads read consecutive " + iv + ", the source's last dimension.");
  w.open("for sb_y in range(Int(thread_idx.y), " + ts + ", " + rs + "):");
  w.line("var " + jv + " = sb_c0 + sb_y");
  w.line("var " + iv + " = sb_r0 + sb_tx");
  w.open("if " + iv + " < " + E0 + " and " + jv + " < " + E1 + ":");
  for (size_t q = 0; q < m.reads.size(); ++q) {
    const std::string v = L.expr(*m.reads[q], w);
    w.line("sb_tile" + str(static_cast<int64_t>(q)) + "[unsafe_offset=sb_y * " + pitch +
           " + sb_tx] = " + v);
  }
  w.dedent();
  w.dedent();
  w.line("barrier()");
  w.line("# Store: consecutive threads write consecutive " + jv + ".");
  w.open("for sb_y in range(Int(thread_idx.y), " + ts + ", " + rs + "):");
  w.line("var " + iv + " = sb_r0 + sb_y");
  w.line("var " + jv + " = sb_c0 + sb_tx");
  w.open("if " + iv + " < " + E0 + " and " + jv + " < " + E1 + ":");
  for (size_t q = 0; q < m.reads.size(); ++q)
    L.set_override(m.reads[q], "sb_tile" + str(static_cast<int64_t>(q)) +
                                   "[unsafe_offset=sb_tx * " + pitch + " + sb_y]");
  L.assign(w);
  L.clear_overrides();
  w.dedent();
  w.dedent();

  const std::string e0 = L.extent(st.out, 0, kMojoPrecAdd);
  const std::string e1 = L.extent(st.out, 1, kMojoPrecAdd);

  // The launcher.
  open_stmt(k, st);
  HelperSet none;
  StmtLowering H(spec_, st, &none);
  transpose_grid(st, T, R, H, body_);
  sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  launch(fn(k), "sb_grid", "sb_block", T * R, "0", L);
  body_.close();
  return kernel("# " + text + "\n" +
                    comment(ts + " x " + ts +
                            " tiles through shared memory, so that both the loads and the "
                            "stores are coalesced.") +
                    comment("Launch: blocks of " + ts + " x " + rs + " threads, grid = (ceil(" +
                            e1 + " / " + ts + "), ceil(" + e0 + " / " + ts + "))."),
                fn(k), L, w);
}

}  // namespace sb::mojo_gpu
