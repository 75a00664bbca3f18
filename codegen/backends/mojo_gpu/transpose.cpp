// The mojo_gpu printer's tiled transpose (Gen::tiled_transpose): the kernel body written once
// for both GPU printers (lower/gpu_bodies.h: transpose_tile), its frame and launch here.
#include "backends/mojo_gpu/gpu_gen.h"
#include "lower/gpu_bodies.h"

namespace sb::mojo_gpu {

std::string Gen::tiled_transpose(const GpuStep& g) {
  const size_t k = g.first;
  const Statement& st = spec_.stmts[k];
  const TransposeMatch& m = g.tr;
  const std::string text = source_text(st, spec_);
  const int64_t T = param(v_, *info_, "tile"), R = param(v_, *info_, "block_rows");
  const std::string ts = str(T), rs = str(R);
  MojoStmt L(spec_, st, needs_.stmt);
  PyWriter w(1);
  print_body(transpose_tile(spec_, st, m, T, R), L, w);

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
