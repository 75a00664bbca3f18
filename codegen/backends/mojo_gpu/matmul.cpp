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

// As the cuda printer's: bm x bn output tiles, one block of (bm / tm) * (bn / tn) threads per
// tile, each thread holding tm x tn outputs in registers (rows sb_tr + m * bm / tm, columns
// sb_tc + n * bn / tn); k in steps of bk through shared-memory tiles stored [k][row or column],
// loaded in 16-byte vectors where the operand is aligned. Mojo: the register arrays are SIMD
// values indexed in comptime loops.
std::string Gen::register_blocked(const GpuStep& g) {
  const size_t k = g.first;
  const Statement& st = spec_.stmts[k];
  const MatmulMatch& m = g.mm;
  const std::string text = source_text(st, spec_);
  auto p = [&](const char* n) { return param(v_, *info_, n); };
  const int64_t BM = p("bm"), BN = p("bn"), BK = p("bk"), TM = p("tm"), TN = p("tn");
  const int64_t RM = BM / TM, RN = BN / TN, NT = RM * RN;
  const Expr& red = *m.red;
  const DType rt = value_type(red);
  const IndexVar& var = st.vars[red.ref];
  use_gpu({"block_idx", "thread_idx", "barrier"});
  MojoStmt L(spec_, st, needs_.stmt);
  PyWriter w(1);
  // A batch of products: the batch index first, the products along the grid's z.
  const int base = m.batched ? 1 : 0;
  const std::string iv = L.var_name(base), jv = L.var_name(base + 1), kv = L.var_name(red.ref);
  const std::string M = L.extent(st.out, static_cast<size_t>(base), kMojoPrecCmp + 1);
  const std::string N = L.extent(st.out, static_cast<size_t>(base) + 1, kMojoPrecCmp + 1);
  const Tensor& A = spec_.tensors[m.a->ref];
  const Tensor& Bt = spec_.tensors[m.b->ref];

  w.line("# The [k][row] tile of " + to_string(*m.a, spec_, &st) +
         ", then the [k][column] tile of " + to_string(*m.b, spec_, &st) + ".");
  w.line(shared_array("sb_ta", BK * BM, compute_type(A.type)));
  w.line(shared_array("sb_tb", BK * BN, compute_type(Bt.type)));
  w.line("var sb_tid = Int(thread_idx.x)");
  w.line("var sb_tr = sb_tid // " + str(RN) + "  # rows sb_tr + m * " + str(RM) +
         " of the block's tile");
  w.line("var sb_tc = sb_tid % " + str(RN) + "  # columns sb_tc + n * " + str(RN));
  w.line("var sb_row0 = Int(block_idx.y) * " + str(BM));
  w.line("var sb_col0 = Int(block_idx.x) * " + str(BN));
  w.line("# Indices, assigned where they are bound.");
  if (m.batched) w.line("var " + L.var_name(0) + ": Int");
  w.line("var " + iv + ": Int");
  w.line("var " + jv + ": Int");
  w.line("var " + kv + ": Int");
  const std::string lo = L.expr(*var.lo, w, 0);
  w.line("var sb_hi = " + L.expr(*var.hi, w, 0));

  const std::array<cuda::TileOperand, 2> ops =
      cuda::tile_operands(spec_, st, m, BM, BN, BK, iv, jv, M, N);
  for (const cuda::TileOperand& o : ops) {
    if (!o.vec) continue;
    // Rows of a whole number of vectors: the last (contiguous) extent a multiple of W. A batched
    // operand's products then start on vectors too, each a whole number of rows apart.
    const size_t last = o.read->args.size() - 1;
    w.line("var " + o.flag + " = (Int(" + L.tensor_name(o.read->ref) + ") & 15) == 0 and " +
           L.extent(o.read->ref, last, kMojoPrecMul + 1) + " % " + str(o.W) + " == 0" +
           (o.lo_aligned ? std::string() : " and (" + lo + ") % " + str(o.W) + " == 0"));
  }
  const std::string rdt = mojo_dtype_name(rt);
  if (m.batched) open_batch_loop(st, L, w);
  w.line("# Registers: sb_acc[m * " + str(TN) + " + n], sb_ra[m], sb_rb[n].");
  w.line("var sb_acc = SIMD[" + rdt + ", " + str(TM * TN) + "](" + L.identity(red.rop, rt) + ")");
  w.line("var sb_ra = SIMD[" + std::string(mojo_dtype_name(compute_type(A.type))) + ", " + str(TM) + "]()");
  w.line("var sb_rb = SIMD[" + std::string(mojo_dtype_name(compute_type(Bt.type))) + ", " + str(TN) + "]()");
  w.open("for sb_k0 in range(" + lo + ", sb_hi, " + str(BK) + "):");
  for (const cuda::TileOperand& o : ops) {
    const std::string X = str(o.X);
    const std::string name = L.tensor_name(o.read->ref);
    const std::string ty = mojo_scalar_type(compute_type(o.t->type));
    w.line("# Tile of " + to_string(*o.read, spec_, &st) + ": " + str(BK) + " k x " + X +
           ", loaded along " + (o.k_inner ? kv : o.xv) +
           (o.vec ? " in vectors of " + str(o.W) : std::string()) + ".");
    const std::string in_k = o.k_inner ? "sb_c" : "sb_r";
    const std::string in_x = o.k_inner ? "sb_r" : "sb_c";
    const int64_t inner = o.k_inner ? BK : o.X;
    const int W = o.vec ? o.W : 1;
    w.open("for sb_l in range(sb_tid, " + str(BK * o.X / W) + ", " + str(NT) + "):");
    w.line("var sb_r = sb_l // " + str(inner / W));
    w.line("var sb_c = sb_l % " + str(inner / W) + (W > 1 ? " * " + str(W) : ""));
    const std::string gx = o.base + " + " + in_x, gk = "sb_k0 + " + in_k;
    const std::string cond = o.xv + " < " + o.lim + " and " + kv + " < sb_hi";
    // The guarded load of one element into `dest`, its indices assigned first.
    auto guarded = [&](const std::string& xval, const std::string& kval, const std::string& dest) {
      w.line(o.xv + " = " + xval);
      w.line(kv + " = " + kval);
      w.line("var sb_x = " + ty + "(0)");
      w.open("if " + cond + ":");
      const std::string v = L.expr(*o.read, w);
      w.line("sb_x = " + v);
      w.dedent();
      w.line(dest + " = sb_x");
    };
    if (!o.vec) {
      guarded(gx, gk, o.tile + "[unsafe_offset=" + in_k + " * " + X + " + " + in_x + "]");
      w.dedent();
      continue;
    }
    w.line("var sb_gx = " + gx);
    w.line("var sb_gk = " + gk);
    const std::string whole = o.k_inner
                                  ? "sb_gx < " + o.lim + " and sb_gk + " + str(W) + " <= sb_hi"
                                  : "sb_gk < sb_hi and sb_gx + " + str(W) + " <= " + o.lim;
    auto dest = [&](const std::string& q) {
      return o.k_inner ? o.tile + "[unsafe_offset=(sb_c + " + q + ") * " + X + " + sb_r]"
                       : o.tile + "[unsafe_offset=sb_r * " + X + " + sb_c + " + q + "]";
    };
    // Row-major offset of (sb_gx, sb_gk) or (sb_gk, sb_gx) in the operand, after the product
    // sb_bz where the operand is batched.
    const size_t last = o.read->args.size() - 1;
    const std::string row = o.batched ? "(sb_bz * " + L.extent(o.read->ref, 1, kMojoPrecMul + 1) +
                                            " + " + (o.k_inner ? "sb_gx" : "sb_gk") + ")"
                                      : std::string(o.k_inner ? "sb_gx" : "sb_gk");
    const std::string off = row + " * " + L.extent(o.read->ref, last, kMojoPrecMul + 1) + " + " +
                            (o.k_inner ? "sb_gk" : "sb_gx");
    w.open("if " + o.flag + " and " + whole + ":");
    w.line("var sb_v = " + name + ".unsafe_load[width=" + str(W) + ", alignment=16](" + off + ")");
    for (int q = 0; q < W; ++q) w.line(dest(str(q)) + " = sb_v[" + str(q) + "]");
    w.dedent();
    w.open("else:");
    w.open("comptime for sb_q in range(" + str(W) + "):");
    guarded(o.k_inner ? "sb_gx" : "sb_gx + sb_q", o.k_inner ? "sb_gk + sb_q" : "sb_gk",
            dest("sb_q"));
    w.dedent();
    w.dedent();
    w.dedent();
  }
  w.line("barrier()");
  L.set_override(m.a, "sb_ra[sb_m]");
  L.set_override(m.b, "sb_rb[sb_n]");
  const std::string acc = "sb_acc[sb_m * " + str(TN) + " + sb_n]";
  auto products = [&](const std::string& loop) {
    w.open(loop);
    w.open("comptime for sb_m in range(" + str(TM) + "):");
    w.line("sb_ra[sb_m] = sb_ta[unsafe_offset=sb_kk * " + str(BM) + " + sb_tr + sb_m * " +
           str(RM) + "]");
    w.dedent();
    w.open("comptime for sb_n in range(" + str(TN) + "):");
    w.line("sb_rb[sb_n] = sb_tb[unsafe_offset=sb_kk * " + str(BN) + " + sb_tc + sb_n * " +
           str(RN) + "]");
    w.dedent();
    w.open("comptime for sb_m in range(" + str(TM) + "):");
    w.open("comptime for sb_n in range(" + str(TN) + "):");
    const std::string b = L.expr(*red.args[0], w, 0);
    w.line(L.update(red.rop, rt, acc, b));
    w.dedent();
    w.dedent();
    w.dedent();
  };
  w.open("if sb_k0 + " + str(BK) + " <= sb_hi:");
  products("comptime for sb_kk in range(" + str(BK) + "):");
  w.dedent();
  w.open("else:");
  products("for sb_kk in range(sb_hi - sb_k0):");
  w.dedent();
  L.clear_overrides();
  w.line("barrier()");
  w.dedent();
  L.set_override(&red, acc);
  w.open("comptime for sb_m in range(" + str(TM) + "):");
  w.open("comptime for sb_n in range(" + str(TN) + "):");
  w.line(iv + " = sb_row0 + sb_tr + sb_m * " + str(RM));
  w.line(jv + " = sb_col0 + sb_tc + sb_n * " + str(RN));
  w.open("if " + iv + " < " + M + " and " + jv + " < " + N + ":");
  L.assign(w);
  w.dedent();
  w.dedent();
  w.dedent();
  if (m.batched) w.dedent();
  L.clear_overrides();
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

void Gen::open_batch_loop(const Statement& st, MojoStmt& L, PyWriter& w) {
  use_gpu({"grid_dim"});
  w.line("# Every thread of a block walks the same products, so the barriers stay uniform.");
  w.open("for sb_bz in range(Int(block_idx.z), " + L.extent(st.out, 0, 0) + ", Int(grid_dim.z)):");
  w.line(L.var_name(0) + " = sb_bz");
}

}  // namespace sb::mojo_gpu
