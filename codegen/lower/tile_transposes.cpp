// Lowering pass tile_transposes: tiles for reads across rows (see tile_transposes.h).
#include "lower/tile_transposes.h"

#include <vector>

#include "ir/affine.h"
#include "lower/patterns.h"
#include "support/diag.h"

namespace sb {

namespace {

// The read's subscript that uses the innermost output index `inner`, when the read can move in
// blocks (kBlockInner and kBlockOuter in tile_transposes.h), else -1.
int block_axis(const Spec& spec, const Expr& r, int dim, int inner) {
  const Tensor& t = spec.tensors[r.ref];
  if (dtype_bytes(t.type) != 4 || t.boundary != Boundary::None) return -1;
  // `dim + offset` as the last subscript, and `inner + offset` as one earlier one.
  auto unit = [&](const Expr& e, int v, int other) {
    const std::optional<Affine> a = decompose(e);
    if (!a || a->overflow) return false;
    const std::optional<Affine> rest = offset_from(*a, v);
    return rest && !rest->uses_var(other);
  };
  if (!unit(*r.args.back(), dim, inner)) return -1;
  int axis = -1;
  for (size_t a = 0; a + 1 < r.args.size(); ++a) {
    const bool uses_inner = depends_on(*r.args[a], inner);
    if (depends_on(*r.args[a], dim) && !uses_inner) return -1;
    if (!uses_inner) continue;
    if (axis >= 0 || !unit(*r.args[a], inner, dim)) return -1;
    axis = static_cast<int>(a);
  }
  return axis;
}

TileChoice choice(const Spec& spec, const Statement& st) {
  TileChoice c;
  if (st.rank() < 2 || !top_reduces_of(*st.rhs).empty()) return c;
  const int inner = static_cast<int>(st.rank()) - 1;
  const std::vector<const Expr*> reads = reads_of(*st.rhs);
  for (size_t k = 0; k < reads.size(); ++k) {
    const Expr* r = reads[k];
    if (r->args.size() < 2 || depends_on(*r->args.back(), inner)) continue;
    bool inner_earlier = false;
    for (size_t a = 0; a + 1 < r->args.size(); ++a)
      inner_earlier = inner_earlier || depends_on(*r->args[a], inner);
    if (!inner_earlier) continue;
    for (int d = inner - 1; d >= 0; --d) {
      if (depends_on(*r->args.back(), d)) {
        c.dim = d;
        c.read = static_cast<int>(k);
        c.block_axis = block_axis(spec, *r, d, inner);
        return c;
      }
    }
  }
  return c;
}

}  // namespace

void tile_transposes(Spec& spec) {
  choose_per_statement(
      spec, [&spec](const Statement& st) { return choice(spec, st); }, spec.schedule.tiles,
      spec.schedule.epilogue_tiles);
  spec.schedule.tile_transposes_done = true;
}

const TransposeNetwork& transpose_8x8_network() {
  static const TransposeNetwork net = [] {
    TransposeNetwork n;
    auto step = [&n](int a, int b, std::array<int, 8> mask) {
      n.steps.push_back({a, b, mask});
      return 7 + static_cast<int>(n.steps.size());
    };
    const std::array<int, 8> lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
    const std::array<int, 8> lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
    const std::array<int, 8> lo4 = {0, 1, 2, 3, 8, 9, 10, 11}, hi4 = {4, 5, 6, 7, 12, 13, 14, 15};
    std::array<int, 8> t{}, u{};
    for (int p = 0; p < 8; p += 2) {  // rows interleaved in pairs
      t[p] = step(p, p + 1, lo);
      t[p + 1] = step(p, p + 1, hi);
    }
    for (int p = 0; p < 8; p += 4) {  // pairs of pairs
      u[p] = step(t[p], t[p + 2], lo2);
      u[p + 1] = step(t[p], t[p + 2], hi2);
      u[p + 2] = step(t[p + 1], t[p + 3], lo2);
      u[p + 3] = step(t[p + 1], t[p + 3], hi2);
    }
    for (int q = 0; q < 8; ++q)  // 128-bit halves
      n.rows_out[q] = step(u[q % 4], u[q % 4 + 4], q < 4 ? lo4 : hi4);
    return n;
  }();
  return net;
}

const TileChoice& tile_choice(const Spec& spec, const Statement& st) {
  SB_ASSERT(spec.schedule.tile_transposes_done, "tile_transposes has not run on spec " + spec.name);
  return choice_of(spec, st, spec.schedule.tiles, spec.schedule.epilogue_tiles);
}

const Expr& tiled_read(const Spec& spec, const Statement& st) {
  const TileChoice& c = tile_choice(spec, st);
  SB_ASSERT(c.dim >= 0, "tiled_read of a statement the pass does not tile");
  return *reads_of(*st.rhs).at(c.read);
}

std::vector<const Expr*> block_reads(const Spec& spec, const Statement& st) {
  SB_ASSERT(tile_choice(spec, st).block_axis >= 0,
            "block_reads of a statement whose read does not move in blocks");
  const std::vector<const Expr*> reads = reads_of(*st.rhs);
  const Expr* first = &tiled_read(spec, st);
  std::vector<const Expr*> out{first};
  for (const Expr* r : reads)
    if (r != first && same_expr(*r, *first)) out.push_back(r);
  return out;
}

std::string dump_tile_transposes(const Spec& spec) {
  const Schedule& sched = spec.schedule;
  SB_ASSERT(sched.tile_transposes_done, "tile_transposes has not run on spec " + spec.name);
  std::string out;
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    const Statement& st = spec.stmts[k];
    const TileChoice& c = sched.tiles[k];
    out += "stmt " + std::to_string(k) + " (" + source_text(st, spec) + "): ";
    if (c.dim < 0) {
      out += "no\n";
      continue;
    }
    out += "tiles " + st.vars[c.dim].name + " and " + st.vars[st.rank() - 1].name + " (read " +
           to_string(tiled_read(spec, st), spec, &st) + ")" +
           (c.block_axis < 0 ? "" : "; the read in blocks") + "\n";
  }
  return out;
}

}  // namespace sb
