// The mojo_gpu printer's matrix products (Gen::tiled_matmul, Gen::register_blocked), as the cuda
// printer's of the same names (backends/cuda/cuda_kernels.cpp).
#include "backends/mojo_gpu/gpu_gen.h"
#include "lower/gpu_bodies.h"

namespace sb::mojo_gpu {

// The kernel body written once for both GPU printers (lower/gpu_bodies.h: matmul_tile), its
// frame and launch here.
std::string Gen::tiled_matmul(const GpuStep& g) {
  const size_t k = g.first;
  const Statement& st = spec_.stmts[k];
  const MatmulMatch& m = g.mm;
  const std::string text = source_text(st, spec_);
  const int64_t T = param(v_, *info_, "tile");
  const std::string ts = str(T);
  MojoStmt L(spec_, st, needs_.stmt);
  PyWriter w(1);
  print_body(matmul_tile(spec_, st, m, T), L, w);
  const int base = m.batched ? 1 : 0;
  const std::string e0 = L.extent(st.out, static_cast<size_t>(base), kMojoPrecMul + 1);
  const std::string e1 = L.extent(st.out, static_cast<size_t>(base) + 1, kMojoPrecMul + 1);

  open_stmt(k, st);
  HelperSet none;
  StmtLowering H(spec_, st, &none);
  matmul_grid(st, m.batched, T, T, H, body_);
  sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  body_.line("const dim3 sb_block(" + ts + ", " + ts + ");");
  launch(fn(k), "sb_grid", "sb_block", T * T, "0", L);
  body_.close();
  return kernel("# " + text + "\n" +
                    comment(ts + " x " + ts +
                            " output tiles; the k range goes through shared-memory tiles of both "
                            "operands" +
                            (m.batched ? "; the products along the grid's z (a grid-stride "
                                         "loop over them)."
                                       : ".")) +
                    comment("Launch: blocks of " + ts + " x " + ts + " threads, grid = (ceil(" +
                            e1 + " / " + ts + "), ceil(" + e0 + " / " + ts + ")" +
                            (m.batched ? ", min(products, 65535)" : "") + ")."),
                fn(k), L, w);
}

// The kernel body written once for both GPU printers (lower/gpu_bodies.h:
// register_blocked_body), its frame and launch here.
std::string Gen::register_blocked(const GpuStep& g) {
  const size_t k = g.first;
  const Statement& st = spec_.stmts[k];
  const MatmulMatch& m = g.mm;
  const std::string text = source_text(st, spec_);
  auto p = [&](const char* n) { return param(v_, *info_, n); };
  const int64_t BM = p("bm"), BN = p("bn"), BK = p("bk"), TM = p("tm"), TN = p("tn");
  const int64_t NT = (BM / TM) * (BN / TN);
  MojoStmt L(spec_, st, needs_.stmt);
  PyWriter w(1);
  print_body(register_blocked_body(spec_, st, m, {BM, BN, BK, TM, TN}), L, w);
  const int base = m.batched ? 1 : 0;
  const std::string e0 = L.extent(st.out, static_cast<size_t>(base), kMojoPrecMul + 1);
  const std::string e1 = L.extent(st.out, static_cast<size_t>(base) + 1, kMojoPrecMul + 1);

  open_stmt(k, st);
  HelperSet none;
  StmtLowering H(spec_, st, &none);
  matmul_grid(st, m.batched, BM, BN, H, body_);
  sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  launch(fn(k), "sb_grid", str(NT), NT, "0", L);
  body_.close();
  return kernel("# " + text + "\n" +
                    comment(str(BM) + " x " + str(BN) + " output tiles, " + str(TM) + " x " +
                            str(TN) + " outputs per thread in registers; k in steps of " +
                            str(BK) + " through shared memory" +
                            (m.batched ? "; the products along the grid's z (a grid-stride "
                                         "loop over them)."
                                       : ".")) +
                    comment("Launch: blocks of " + str(NT) + " threads, grid = (ceil(" + e1 +
                            " / " + str(BN) + "), ceil(" + e0 + " / " + str(BM) + ")" +
                            (m.batched ? ", min(products, 65535)" : "") + ")."),
                fn(k), L, w);
}

}  // namespace sb::mojo_gpu
