#include "lower/gpu_mapping.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ir/scalar_types.h"
#include "ir/visitor.h"
#include "support/diag.h"

namespace sb {

namespace {

bool in(const std::vector<int>& v, int t) {
  return std::find(v.begin(), v.end(), t) != v.end();
}

std::string names(const Spec& spec, const std::vector<int>& ts) {
  std::string out;
  for (int t : ts) out += (out.empty() ? "" : ", ") + spec.tensors[t].name;
  return out;
}

}  // namespace

const char* gpu_kernel_name(GpuKernel k) {
  switch (k) {
    case GpuKernel::ThreadPerElement:
      return "thread_per_element";
    case GpuKernel::GridStride:
      return "grid_stride";
    case GpuKernel::Vectorized:
      return "vectorized";
    case GpuKernel::TreeReduce:
      return "tree_reduce";
    case GpuKernel::WarpReduce:
      return "warp_reduce";
    case GpuKernel::AtomicReduce:
      return "atomic_reduce";
    case GpuKernel::WarpPerRow:
      return "warp_per_row";
    case GpuKernel::BlockPerRow:
      return "block_per_row";
    case GpuKernel::TiledMatmul:
      return "tiled_matmul";
    case GpuKernel::RegisterBlocked:
      return "register_blocked_matmul";
    case GpuKernel::TiledTranspose:
      return "tiled_transpose";
    case GpuKernel::TiledStencil:
      return "tiled_stencil";
    case GpuKernel::Scan:
      return "three_phase_scan";
    case GpuKernel::FusedRows:
      return "fused_rows";
    case GpuKernel::FusedAttention:
      return "fused_attention";
  }
  return "?";
}

const char* row_unit_name(RowUnit u) {
  switch (u) {
    case RowUnit::None:
      return "none";
    case RowUnit::Warp:
      return "warp";
    case RowUnit::Block:
      return "block";
  }
  return "?";
}

bool plan_rows(const Spec& spec, const RowGroup& g, RowPlan* p) {
  p->first = g.first;
  p->last = g.last;
  p->row_local = g.row_local;
  std::set<int> written;
  for (size_t k = g.first; k <= g.last; ++k) {
    const Statement& st = spec.stmts[k];
    if (st.rank() != 1 && st.rank() != 2) return false;
    if (spec.tensors[st.out].boundary != Boundary::None) return false;
    const std::vector<const Expr*> reds = outer_reductions(*st.rhs);
    if (st.rank() == 2 && !reduces_of(*st.rhs).empty()) return false;
    if (st.rank() == 1 && !reds.empty()) {
      ReduceMatch m;
      std::string why;
      if (!match_row_reduce(spec, st, &m, &why)) return false;
    }
    for (const Expr* r : reads_of(*st.rhs))
      for (const auto& a : r->args)
        if (!reduces_of(*a).empty()) return false;
    written.insert(st.out);
    if (st.rank() == 1 && !in(p->regs, st.out)) p->regs.push_back(st.out);
    if (st.rank() == 2 && in(g.row_local, st.out) && !in(p->rows, st.out))
      p->rows.push_back(st.out);
  }
  // Reads of tensors the group does not write: rows read twice or more, and broadcast tensors.
  std::map<int, int> row_reads;
  std::set<int> not_cacheable, not_bcast;
  for (size_t k = g.first; k <= g.last; ++k) {
    for (const Expr* r : reads_of(*spec.stmts[k].rhs)) {
      const int t = r->ref;
      if (written.count(t)) continue;
      const Tensor& tn = spec.tensors[t];
      bool own_row = tn.shape.size() == 2 && r->args[0]->kind == ExprKind::IndexVar &&
                     r->args[0]->ref == 0 && tn.boundary == Boundary::None;
      bool rowless = !tn.shape.empty() && tn.boundary == Boundary::None;
      for (const auto& a : r->args) rowless = rowless && !depends_on(*a, 0);
      if (own_row) ++row_reads[t]; else not_cacheable.insert(t);
      if (!rowless) not_bcast.insert(t);
    }
  }
  bool typed = false;
  // Shared memory holds values: an f16 or bf16 row is staged as f32.
  auto take = [&](int t) {
    const DType v = compute_type(spec.tensors[t].type);
    if (!typed) p->type = v;
    typed = true;
    return v == p->type;
  };
  for (int t : p->rows)
    if (!take(t)) return false;
  for (const auto& [t, n] : row_reads)
    if (n >= 2 && !not_cacheable.count(t) && take(t)) p->cached.push_back(t);
  std::set<int> seen;
  for (size_t k = g.first; k <= g.last; ++k)
    for (const Expr* r : reads_of(*spec.stmts[k].rhs)) {
      const int t = r->ref;
      if (written.count(t) || not_bcast.count(t) || !seen.insert(t).second) continue;
      if (take(t)) p->bcast.push_back(t);
    }
  // A rank-2 row temp is recomputed where it is read when the rows do not fit in shared memory:
  // its statement must not read another rank-2 row temp.
  for (size_t k = g.first; k <= g.last; ++k) {
    const Statement& st = spec.stmts[k];
    if (!in(p->rows, st.out)) continue;
    for (const Expr* r : reads_of(*st.rhs))
      if (in(p->rows, r->ref)) return false;
  }
  for (int t : p->regs)
    if (!in(p->row_local, t)) p->kept.push_back(t);
  for (size_t k = g.first; k <= g.last; ++k)
    for (const Expr* r : outer_reductions(*spec.stmts[k].rhs)) 
      p->reduce_types.insert(scalar(r->type).printed_as);
  for (size_t k = g.first; k <= g.last && p->anchor < 0; ++k) {
    const Statement& st = spec.stmts[k];
    if (st.rank() == 2 && !in(p->rows, st.out)) p->anchor = st.out;
  }
  return true;
}

bool stages_rows(const RowPlan& p) {
  return !p.rows.empty() || !p.cached.empty() || !p.bcast.empty();
}

std::vector<int> worker_rows(const RowPlan& p) {
  std::vector<int> out = p.cached;
  out.insert(out.end(), p.rows.begin(), p.rows.end());
  return out;
}

int64_t rows_per_block(const RowPlan& p, RowUnit unit, int64_t block_size) {
  SB_ASSERT(unit != RowUnit::None, "rows_per_block of a group no unit owns");
  const int64_t warps = block_size / 32;
  if (unit == RowUnit::Block) return kMinRowsPerBlock;
  return p.bcast.empty() ? warps : std::max(warps, kMinRowsPerBlock);
}

RowRead row_read(const RowPlan& p, int t, bool staged) {
  if (in(p.regs, t)) return RowRead::Register;
  const bool row = in(p.rows, t);
  if (staged && (row || in(p.cached, t))) return RowRead::SharedRow;
  if (staged && in(p.bcast, t)) return RowRead::SharedBlock;
  return row ? RowRead::Recompute : RowRead::Global;
}

Recompute recompute(const Spec& spec, const RowPlan& p, const Expr& read) {
  SB_ASSERT(read.kind == ExprKind::Read && in(p.rows, read.ref), "recompute of no row temp");
  Recompute out;
  for (size_t k = p.first; k <= p.last && !out.producer; ++k)
    if (spec.stmts[k].out == read.ref) out.producer = &spec.stmts[k];
  SB_ASSERT(out.producer != nullptr, "a row temp without a statement in its group");
  struct Vars : ExprVisitor {
    const Expr& read;
    std::vector<std::pair<const Expr*, const Expr*>>* binds;
    Vars(const Expr& r, std::vector<std::pair<const Expr*, const Expr*>>* b) : read(r), binds(b) {}
    void visit_index_var(const Expr& e) override {
      SB_ASSERT(static_cast<size_t>(e.ref) < read.args.size(),
                "a row temp's statement reads an index past the temp's rank");
      binds->emplace_back(&e, read.args[static_cast<size_t>(e.ref)].get());
    }
  } vars(read, &out.binds);
  vars.visit(*out.producer->rhs);
  return out;
}

bool barrier_after(const RowPlan& p, size_t k, bool staged) {
  SB_ASSERT(p.first <= k && k <= p.last, "barrier_after a statement outside its group");
  return k < p.last || staged;
}

std::string describe(const RowPlan& p, const Spec& spec, RowUnit unit, bool staged) {
  const std::string worker = unit == RowUnit::Warp ? "warp" : "block";
  std::string text = "Row group fused into one kernel: each " + worker +
                     " owns a row at a time (rows grid-stride over a bounded grid) and computes "
                     "these statements for it in order; ";
  std::vector<int> held;
  for (int t : p.regs)
    if (in(p.row_local, t)) held.push_back(t);
  text += held.empty() ? "per-row values stay in registers"
                       : names(spec, held) + " stay in registers (every thread holds its row's value)";
  const std::string rows = names(spec, p.rows), cached = names(spec, p.cached),
                    bc = names(spec, p.bcast);
  if (staged) {
    if (!rows.empty()) text += "; the row of " + rows + " lives in shared memory";
    if (!cached.empty()) text += "; the row of " + cached + " is staged in shared memory, read once";
    if (!bc.empty()) text += "; " + bc + " (the same for every row) is staged once per block";
    return text + ".";
  }
  text += "; the rows did not fit in shared memory, so reads go to global memory";
  if (!rows.empty()) text += " and " + rows + " is recomputed where it is read";
  return text + " (no temp is stored).";
}


GpuMapping gpu_mapping(const Spec& spec, GpuFusion fuse, const GpuPlace& place) {
  SB_ASSERT(static_cast<bool>(place), "gpu_mapping without a placement");
  SB_ASSERT(fuse.rows == RowUnit::None || spec.schedule.row_fusion_done,
            "gpu_mapping fuses rows before row_fusion ran on spec " + spec.name);
  SB_ASSERT(!fuse.attention || spec.schedule.fuse_attention_done,
            "gpu_mapping fuses attention before fuse_attention ran on spec " + spec.name);
  std::map<size_t, Attention> attention;
  if (fuse.attention)
    for (size_t first : spec.schedule.attention_groups) {  // the fuse_attention pass's
      std::optional<Attention> a = match_attention(spec, first);
      SB_ASSERT(a.has_value(), "an attention group that match_attention does not match");
      attention.emplace(first, std::move(*a));
    }
  std::map<size_t, RowPlan> fused;
  if (fuse.rows != RowUnit::None)
    for (const RowGroup& g : spec.schedule.row_groups) {  // the row_fusion pass's
      // A row group that shares a statement with an attention group is not fused.
      bool overlaps = false;
      for (const auto& [first, a] : attention)
        overlaps = overlaps || (g.first < first + kAttentionStatements && first <= g.last);
      RowPlan p;
      if (!overlaps && plan_rows(spec, g, &p)) fused.emplace(g.first, p);
    }
  GpuMapping m;
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    if (auto it = attention.find(k); it != attention.end()) {
      GpuStep s;
      s.kind = GpuKernel::FusedAttention;
      s.first = k;
      s.last = k + kAttentionStatements - 1;
      s.att = it->second;
      k = s.last;
      m.steps.push_back(std::move(s));
      continue;
    }
    if (auto it = fused.find(k); it != fused.end()) {
      GpuStep s;
      s.kind = GpuKernel::FusedRows;
      s.first = it->second.first;
      s.last = it->second.last;
      s.rows = it->second;
      s.unit = fuse.rows;
      m.steps.push_back(std::move(s));
      k = it->second.last;
      continue;
    }
    GpuStep s = place(spec, k, spec.stmts[k]);
    SB_ASSERT(s.first == k && s.last == k && s.kind != GpuKernel::FusedRows,
              "a placement must map exactly its own statement");
    m.steps.push_back(std::move(s));
  }
  return m;
}

std::string dump(const GpuMapping& m, const Spec& spec) {
  std::string out;
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const GpuStep& s = m.steps[i];
    out += "kernel " + std::to_string(i) + ": stmt" +
           (s.first == s.last ? " " + std::to_string(s.first)
                              : "s " + std::to_string(s.first) + ".." + std::to_string(s.last)) +
           " " + gpu_kernel_name(s.kind);
    if (s.kind == GpuKernel::FusedRows) {
      const RowPlan& p = s.rows;
      out += std::string(", a ") + row_unit_name(s.unit) + " per row";
      if (!p.regs.empty()) out += "; registers " + names(spec, p.regs);
      if (!p.rows.empty()) out += "; shared rows " + names(spec, p.rows);
      if (!p.cached.empty()) out += "; staged rows " + names(spec, p.cached);
      if (!p.bcast.empty()) out += "; staged per block " + names(spec, p.bcast);
      if (!p.kept.empty()) out += "; stored per row " + names(spec, p.kept);
      if (p.anchor >= 0) out += "; rows in the segment order of " + spec.tensors[p.anchor].name;
    }
    if (s.kind == GpuKernel::FusedAttention)
      out += ", an online softmax over blocks of keys; never written " +
             names(spec, {s.att.s, s.att.m, s.att.p, s.att.l});
    out += "\n";
    for (size_t k = s.first; k <= s.last; ++k) out += "  " + to_string(spec.stmts[k], spec) + "\n";
  }
  return out;
}

}  // namespace sb
