// The mojo_gpu printer's tiled stencil (Gen::tiled_stencil), as the cuda printer's Gen::stencil
// (backends/cuda/cuda_kernels.cpp).
#include <functional>

#include "backends/mojo_gpu/gpu_gen.h"
#include "ir/affine.h"

namespace sb::mojo_gpu {

namespace {

// The halo of dimension d: the range [lo, hi] of the offsets of dimension d over every read,
// either known now (literal) or the min and max of bounds computed at run time.
struct Halo {
  bool literal = true;
  int64_t lo_c = 0, hi_c = 0;
  std::vector<std::pair<std::string, std::string>> bounds;  // (lo, hi) of each offset form
};

// The printing of an offset's bounds in one language: its sizes, atoms and the ranges of its
// reduction variables.
struct Printer {
  std::function<std::string(int)> size;                // size s
  std::function<std::string(const Expr&)> atom;       // at unary precedence
  std::function<std::string(const Expr&)> hi_minus_1;  // "(hi - 1)"
  std::function<std::string(const Expr&)> lo;          // at unary precedence
};

// As the cuda printer's halo_lines, without the printing.
std::vector<Halo> halos(const Statement& st, const StencilMatch& m, size_t rank, const Printer& p) {
  auto bound = [&](const Affine& a, bool upper) {
    std::string s;
    auto add = [&](const std::string& term) {
      if (term != "0") s += (s.empty() ? "" : " + ") + term;
    };
    for (const auto& [sz, c] : a.sizes) add(scaled_term(c, p.size(sz)));
    for (const AffineAtom& t : a.atoms) add(scaled_term(t.coef, p.atom(*t.expr)));
    if (a.constant != 0) add(str(a.constant));
    for (const auto& [v, c] : a.vars) {
      const IndexVar& var = st.vars[v];
      const bool use_hi = (c > 0) == upper;
      add(scaled_term(c, use_hi ? p.hi_minus_1(*var.hi) : p.lo(*var.lo)));
    }
    return s.empty() ? std::string("0") : s;
  };
  std::vector<Halo> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    Halo& h = out[d];
    for (const auto& offs : m.offsets) {
      const Affine& a = offs[d];
      h.literal = a.is_constant();
      if (!h.literal) break;
      h.lo_c = std::min(h.lo_c, a.constant);
      h.hi_c = std::max(h.hi_c, a.constant);
    }
    if (h.literal) continue;
    std::set<std::string> seen;
    for (const auto& offs : m.offsets) {
      const Affine& a = offs[d];
      if (a.is_constant() && a.constant == 0) continue;
      const std::string lo = bound(a, false), hi = bound(a, true);
      if (!seen.insert(lo + "\n" + hi).second) continue;
      h.bounds.emplace_back(lo, hi);
    }
  }
  return out;
}

}  // namespace

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
  std::vector<int64_t> B(rank);
  B[rank - 1] = rank == 1 ? bs_ : param(v_, *info_, "tile_x");
  if (rank == 2) B[0] = bs_ / B[1];
  if (rank == 3) {
    B[1] = param(v_, *info_, "tile_y");
    B[0] = bs_ / (B[1] * B[2]);
  }
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
    const Printer mp{
        [&](int s) { return L.size_name(s); },
        [&](const Expr& e) { return L.expr(e, none, kMojoPrecMul + 1); },
        [&](const Expr& e) { return "(" + L.expr(e, none, kMojoPrecAdd) + " - 1)"; },
        [&](const Expr& e) { return L.expr(e, none, kMojoPrecMul + 1); }};
    const std::vector<Halo> hs = halos(st, m, rank, mp);
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
  use_gpu({"block_dim", "grid_dim"});
  const std::string total = G.element_count(st.out);
  wg.line("var sb_total = " + total);
  wg.line("var sb_stride = " + std::string(kGridThreads));
  wg.open("for sb_t in range(" + std::string(kThreadIndex) + ", sb_total, sb_stride):");
  bind_outputs(G, wg, "sb_t");
  G.assign(wg);
  wg.dedent();

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
    CodeWriter none;
    const Printer cp{
        [&](int s) { return H.size_name(s); },
        [&](const Expr& e) { return H.expr(e, none, kPrecUnary); },
        [&](const Expr& e) { return "(" + H.expr(e, none, kPrecAdd) + " - 1)"; },
        [&](const Expr& e) { return H.expr(e, none, kPrecUnary); }};
    const std::vector<Halo> hs = halos(st, m, rank, cp);
    for (size_t d = 0; d < rank; ++d) {
      const std::string lo = "sb_lo" + ds(d), hi = "sb_hi" + ds(d);
      if (hs[d].literal) {
        body_.line("const int64_t " + lo + " = " + str(hs[d].lo_c) + ", " + hi + " = " +
                   str(hs[d].hi_c) + ";  // offsets of dimension " + ds(d) + " lie in [" + lo +
                   ", " + hi + "]");
        continue;
      }
      body_.line("int64_t " + lo + " = 0, " + hi + " = 0;  // offsets of dimension " + ds(d) +
                 " lie in [" + lo + ", " + hi + "]");
      for (const auto& [blo, bhi] : hs[d].bounds) {
        body_.line("if (" + blo + " < " + lo + ") " + lo + " = " + blo + ";");
        body_.line("if (" + bhi + " > " + hi + ") " + hi + " = " + bhi + ";");
      }
    }
    std::string bytes;
    for (size_t d = 0; d < rank; ++d)
      bytes += (d ? " * " : "") + std::string("(") + str(B[d]) + " + sb_hi" + ds(d) + " - sb_lo" +
               ds(d) + ")";
    body_.line("const int64_t sb_smem = " + bytes + " * (int64_t)sizeof(" + c_type(xv) + ");");
    std::vector<std::string> gdim;  // x first
    for (size_t d = rank; d-- > 0;) {
      const std::string e = H.extent(st.out, d, kPrecAdd);
      gdim.push_back("(unsigned)((" + e + " + " + str(B[d] - 1) + ") / " + str(B[d]) + ")");
    }
    sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
    body_.open("if (sb_smem <= " + str(kMaxStencilSmem) + ") {");
    if (rank == 1) {
      body_.line("const unsigned sb_grid = " + gdim[0] + ";");
      launch(name, "sb_grid", str(B[0]), threads, "(size_t)sb_smem", L);
    } else {
      std::string grid = "const dim3 sb_grid(" + gdim[0], block = "const dim3 sb_block(" +
                                                                  str(B[rank - 1]);
      for (size_t a = 1; a < rank; ++a) {
        grid += ", " + gdim[a];
        block += ", " + str(B[rank - 1 - a]);
      }
      body_.line(grid + ");");
      body_.line(block + ");");
      launch(name, "sb_grid", "sb_block", threads, "(size_t)sb_smem", L);
    }
    body_.close_open("} else {");
    body_.line("// The halo does not fit in shared memory: the untiled kernel.");
    if (element_grid(st, bs_, true, H, body_)) needs_max_grid_ = true;
    sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
    launch(untiled, "sb_grid", bs_, G);
    body_.close();
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
