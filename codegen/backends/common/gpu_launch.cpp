#include "backends/common/gpu_launch.h"

#include <algorithm>
#include <set>

#include "backends/common/loop_leaves.h"
#include "backends/cpu/print_loops.h"
#include "lower/gpu_bodies.h"
#include "support/diag.h"

namespace sb {

namespace {
std::string str(int64_t v) { return std::to_string(v); }
}  // namespace

void max_grid_line(int64_t blocks_per_sm, CodeWriter& w) {
  w.line("const int64_t sb_max_grid = (int64_t)sb_sm_count * " + str(blocks_per_sm) +
         ";  // blocks_per_sm");
}

bool element_grid(const Statement& st, int64_t bs, bool grid_stride, StmtLowering& H,
                  CodeWriter& w) {
  w.line("const int64_t sb_total = " + H.element_count(st.out, 0) + ";");
  if (grid_stride) return grid_stride_grid("sb_total", bs, w);
  w.line("const unsigned sb_grid = (unsigned)((sb_total + " + str(bs - 1) + ") / " + str(bs) +
         ");");
  return false;
}

bool grid_stride_grid(const std::string& n, int64_t bs, CodeWriter& w) {
  w.line("const int64_t sb_blocks = (" + n + " + " + str(bs - 1) + ") / " + str(bs) + ";");
  w.line("const unsigned sb_grid = (unsigned)(sb_blocks < sb_max_grid ? sb_blocks : sb_max_grid);");
  return true;
}

bool vector_grid(const Statement& st, int64_t lanes, int64_t bs, StmtLowering& H, CodeWriter& w) {
  w.line("const int64_t sb_vectors = (" + H.element_count(st.out, 0) + " + " + str(lanes - 1) +
         ") / " + str(lanes) + ";");
  return grid_stride_grid("sb_vectors", bs, w);
}

bool reduce_blocks(const IndexVar& var, int64_t bs, const std::string& partials, StmtLowering& H,
                   CodeWriter& w) {
  CodeWriter none;
  const std::string lo = H.expr(*var.lo, none, kPrecAdd + 1);
  const std::string hi = H.expr(*var.hi, none, kPrecAdd);
  w.line("const int64_t sb_n = " + (lo == "0" ? hi : hi + " - " + lo) + ";  // reduction length");
  w.line("int64_t sb_blocks = (sb_n + " + str(bs - 1) + ") / " + str(bs) + ";");
  w.line("if (sb_blocks > sb_max_grid) sb_blocks = sb_max_grid;");
  if (!partials.empty())
    w.line("if (sb_blocks > " + str(kMaxPartials) + ") sb_blocks = " + str(kMaxPartials) +
           ";  // the size of " + partials);
  w.line("if (sb_blocks < 1) sb_blocks = 1;");
  return true;
}

void row_reduce_grid(const Statement& st, int64_t bs, bool warp, StmtLowering& H, CodeWriter& w) {
  w.line("const int64_t sb_total = " + H.element_count(st.out, 0) + ";");
  if (warp) {
    const int64_t wpb = bs / 32;
    w.line("const unsigned sb_grid = (unsigned)((sb_total + " + str(wpb - 1) + ") / " + str(wpb) +
           ");  // " + str(wpb) + " warps per block");
  } else {
    w.line("const unsigned sb_grid = (unsigned)(sb_total < " + str(kMaxGridZ) + " ? sb_total : " +
           str(kMaxGridZ) + ");");
  }
}

std::optional<int64_t> scan_shift(const Statement& st, const ScanMatch& m) {
  const IndexVar& var = st.vars[m.red->ref];
  // Element p (j = lo + p) completes output i = p + lo + 1 - c, where c is hi's part without i:
  // known when lo and c are integer literals (0 for an inclusive scan from 0, 1 for an exclusive
  // one).
  if (var.lo->kind != ExprKind::IntLit || !m.hi.sizes.empty() || !m.hi.atoms.empty())
    return std::nullopt;
  return var.lo->ival + 1 - m.hi.constant;
}

void scan_grid(const Spec& spec, const Statement& st, const ScanMatch& m, int64_t bs,
               StmtLowering& H, CodeWriter& w) {
  const IndexVar& var = st.vars[m.red->ref];
  CodeWriter none;
  std::string c;
  for (const std::string& term : var_free_terms(H, m.hi)) c += (c.empty() ? "" : " + ") + term;
  if (c.empty()) c = "0";
  const std::string lo = H.expr(*var.lo, none, kPrecAdd);
  w.line("// Output " + st.vars[0].name + " folds elements " + var.name + " in " +
         to_string(*var.lo, spec, &st) + ".." + to_string(*var.hi, spec, &st) +
         ", so element p (" + var.name + " = lo + p) completes output p + sb_shift.");
  const std::optional<int64_t> shift = scan_shift(st, m);
  w.line("const int64_t sb_shift = " + (shift ? str(*shift) : lo + " + 1 - (" + c + ")") + ";");
  const std::string hn = H.extent(st.out, 0, kPrecAdd);
  const std::string b = str(bs);
  w.line("const int64_t sb_len = " + hn + " - sb_shift > 0 ? " + hn + " - sb_shift : 0;");
  w.line("const int64_t sb_tiles = (sb_len + " + str(bs - 1) + ") / " + b + ";");
  w.line("const int64_t sb_parts = sb_tiles < 1 ? 1 : (sb_tiles < " + str(kMaxPartials) +
         " ? sb_tiles : " + str(kMaxPartials) + ");");
  w.line("const int64_t sb_chunk = (sb_tiles + sb_parts - 1) / sb_parts * " + b +
         ";  // elements per block");
}

std::vector<int64_t> stencil_block(size_t rank, int64_t bs, int64_t tile_x, int64_t tile_y) {
  SB_ASSERT(rank >= 1 && rank <= 3, "a tiled stencil of rank " + std::to_string(rank));
  std::vector<int64_t> b(rank);
  b[rank - 1] = rank == 1 ? bs : tile_x;
  if (rank == 2) b[0] = bs / b[1];
  if (rank == 3) {
    b[1] = tile_y;
    b[0] = bs / (b[1] * b[2]);
  }
  return b;
}

namespace {

// The launcher's spelling of the spec's leaves of a loop IR block (a host function: no GPU node,
// and no running scan).
class LauncherLeaves : public HostLeaves<StmtLowering, CodeWriter> {
 public:
  using HostLeaves::HostLeaves;
  void fold_range(const Expr&, const std::string&, const std::string&,
                  const std::string&) override {
    none("running scan's fold of a range");
  }
  void scan_walk(const Expr&, const std::string&, const std::string&) override {
    none("running scan's walk");
  }

 private:
  static void none(const char* node) {
    SB_ASSERT(false, std::string("a launcher's loop IR with a ") + node);
  }
};

}  // namespace

void c_halo_lets(const Statement& st, const StencilMatch& m, StmtLowering& H, CodeWriter& w) {
  LauncherLeaves leaves(H, w);
  print_c_block(halo_lets(H.spec(), st, m), leaves, w);
}

bool stencil_launch(const Statement& st, const StencilMatch& m, const std::vector<int64_t>& block,
                    DType value, int64_t bs, StmtLowering& H, CodeWriter& w,
                    const std::function<void(CodeWriter&, bool tiled, const std::string& grid,
                                             const std::string& block)>& launch) {
  const size_t rank = st.rank();
  SB_ASSERT(block.size() == rank, "a stencil block of another rank than its statement");
  c_halo_lets(st, m, H, w);
  std::string bytes;
  for (size_t d = 0; d < rank; ++d) {
    const std::string ds = str(static_cast<int64_t>(d));
    bytes += (d ? " * " : "") + std::string("(") + str(block[d]) + " + sb_hi" + ds + " - sb_lo" +
             ds + ")";
  }
  w.line("const int64_t sb_smem = " + bytes + " * (int64_t)sizeof(" + c_type(value) + ");");
  std::vector<std::string> gdim;  // x first
  for (size_t d = rank; d-- > 0;) {
    const std::string e = H.extent(st.out, d, kPrecAdd);
    gdim.push_back("(unsigned)((" + e + " + " + str(block[d] - 1) + ") / " + str(block[d]) + ")");
  }
  CodeWriter tiled(w.indent() + 1), untiled(w.indent() + 1);
  if (rank == 1) {
    tiled.line("const unsigned sb_grid = " + gdim[0] + ";");
    launch(tiled, true, "sb_grid", str(block[0]));
  } else {
    std::string grid = "const dim3 sb_grid(" + gdim[0];
    std::string blk = "const dim3 sb_block(" + str(block[rank - 1]);
    for (size_t a = 1; a < rank; ++a) {
      grid += ", " + gdim[a];
      blk += ", " + str(block[rank - 1 - a]);
    }
    tiled.line(grid + ");");
    tiled.line(blk + ");");
    launch(tiled, true, "sb_grid", "sb_block");
  }
  untiled.line("// The halo does not fit in shared memory: the untiled kernel.");
  const bool max_grid = element_grid(st, bs, true, H, untiled);
  launch(untiled, false, "sb_grid", str(bs));
  w.line("if (sb_smem <= " + str(kMaxStencilSmem) + ") {");
  w.raw(tiled.str());
  w.line("} else {");
  w.raw(untiled.str());
  w.line("}");
  return max_grid;
}

void transpose_grid(const Statement& st, int64_t t, int64_t rows, StmtLowering& H, CodeWriter& w) {
  const std::string h0 = H.extent(st.out, 0, kPrecAdd), h1 = H.extent(st.out, 1, kPrecAdd);
  const std::string ts = str(t);
  w.line("const dim3 sb_grid((unsigned)((" + h1 + " + " + str(t - 1) + ") / " + ts +
         "), (unsigned)((" + h0 + " + " + str(t - 1) + ") / " + ts + "));");
  w.line("const dim3 sb_block(" + ts + ", " + str(rows) + ");");
}

void matmul_grid(const Statement& st, bool batched, int64_t bm, int64_t bn, StmtLowering& H,
                 CodeWriter& w) {
  const size_t base = batched ? 1 : 0;
  const std::string hm = H.extent(st.out, base, kPrecAdd);
  const std::string hn = H.extent(st.out, base + 1, kPrecAdd);
  std::string gz;
  if (batched) {
    w.line("const int64_t sb_nb = " + H.extent(st.out, 0) + ";");
    gz = ", (unsigned)(sb_nb < " + str(kMaxGridZ) + " ? sb_nb : " + str(kMaxGridZ) + ")";
  }
  w.line("const dim3 sb_grid((unsigned)((" + hn + " + " + str(bn - 1) + ") / " + str(bn) +
         "), (unsigned)((" + hm + " + " + str(bm - 1) + ") / " + str(bm) + ")" + gz + ");");
}

void attention_grid(const Spec& spec, const Attention& a, int64_t bq, int64_t ec,
                    StmtLowering& H, CodeWriter& w) {
  const Statement& sy = spec.stmts[a.first + kAttentionStatements - 1];
  const size_t rows = static_cast<size_t>(a.values.out_row_dim());
  w.line("const int64_t sb_batch = " +
         (a.scores.batched ? H.extent(sy.out, 0) : std::string("1")) + ";");
  w.line("const int64_t sb_qblocks = (" + H.extent(sy.out, rows) + " + " + str(bq - 1) + ") / " +
         str(bq) + ";");
  w.line("const dim3 sb_grid((unsigned)(sb_batch * sb_qblocks), (unsigned)((" +
         H.extent(sy.out, rows + 1) + " + " + str(ec - 1) + ") / " + str(ec) + "));");
}

bool fused_rows_launch(const Spec& spec, const RowPlan& p, RowUnit unit, int64_t bs,
                       StmtLowering& H, CodeWriter& w,
                       const std::function<void(CodeWriter&, bool staged)>& launch) {
  w.line("const int64_t sb_nrows = " + H.extent(spec.stmts[p.first].out, 0) + ";");
  const int64_t per_block = rows_per_block(p, unit, bs);
  w.line("int64_t sb_blocks = (sb_nrows + " + str(per_block - 1) + ") / " + str(per_block) +
         ";  // at least " + str(per_block) + " rows per block");
  w.line("if (sb_blocks > sb_max_grid) sb_blocks = sb_max_grid;");
  w.line("if (sb_blocks < 1) sb_blocks = 1;");
  if (!stages_rows(p)) {
    launch(w, false);
    return true;
  }
  std::string elems = "0";
  auto add = [&](const std::string& e) { elems = elems == "0" ? e : elems + " + " + e; };
  for (int t : p.bcast) add(H.element_count(t, kPrecAdd + 1));
  std::string row;
  for (int t : worker_rows(p)) row += (row.empty() ? "" : " + ") + H.extent(t, 1, kPrecAdd + 1);
  if (!row.empty())
    add(unit == RowUnit::Warp ? str(bs / 32) + " * (" + row + ")" : "(" + row + ")");
  w.line("const int64_t sb_smem = (" + elems + ") * (int64_t)sizeof(" +
         std::string(c_type(p.type)) + ");");
  CodeWriter a(w.indent() + 1), b(w.indent() + 1);
  launch(a, true);
  launch(b, false);
  w.line("if (sb_smem <= " + str(kMaxRowSmem) + ") {");
  w.raw(a.str());
  w.line("} else {  // the rows do not fit in shared memory");
  w.raw(b.str());
  w.line("}");
  return true;
}

}  // namespace sb
