#include "lower/row_fusion.h"

#include <algorithm>
#include <set>
#include <string>

#include "backends/common/emit_common.h"
#include "support/diag.h"

namespace sb {

namespace {

// Whether a read's first subscript is the statement's first output index itself.
bool reads_own_row(const Expr& read) {
  return !read.args.empty() && read.args[0]->kind == ExprKind::IndexVar && read.args[0]->ref == 0;
}

// Whether statements [first, last] can share one loop over rows: all of rank >= 1 with the same
// extent of the first output dimension, and every read of a tensor that one of them writes is of
// the reading statement's own row. Then the loop over rows computes, for each row, the group's
// statements in order, and gives the same values as running the statements one after another:
// no row reads what another row of the group writes.
bool fusable(const Spec& spec, size_t first, size_t last) {
  if (spec.stmts[first].rank() == 0) return false;
  const Expr& extent = *spec.tensors[spec.stmts[first].out].shape.at(0);
  std::set<int> written;
  for (size_t k = first; k <= last; ++k) {
    const Statement& st = spec.stmts[k];
    if (st.rank() == 0 || !same_expr(*spec.tensors[st.out].shape[0], extent)) return false;
    written.insert(st.out);
  }
  for (size_t k = first; k <= last; ++k) {
    for (const Expr* r : reads_of(*spec.stmts[k].rhs))
      if (written.count(r->ref) && !reads_own_row(*r)) return false;
  }
  return true;
}

bool touches(const Statement& st, int t) {
  if (st.out == t) return true;
  for (const Expr* r : reads_of(*st.rhs))
    if (r->ref == t) return true;
  return false;
}

std::vector<RowGroup> find_row_groups(const Spec& spec) {
  std::vector<RowGroup> groups;
  // Rows and row-local temps are matched by name: a storage read through another name than the
  // one written (ir.h: reads_across_names) leaves every statement on its own.
  if (reads_across_names(spec)) return groups;
  const size_t n = spec.stmts.size();
  for (size_t k = 0; k < n;) {
    size_t m = k;
    while (m + 1 < n && fusable(spec, k, m + 1)) ++m;
    // Fusion pays when a statement reads what an earlier one of the group wrote, from a row that
    // is still in cache. Rows of one element (elementwise statements of rank 1) are left to the
    // streaming form, which saves as much traffic.
    bool reuse = false, long_rows = false;
    for (size_t j = k; j <= m; ++j) {
      const Statement& st = spec.stmts[j];
      long_rows = long_rows || st.rank() > 1 || contains_reduce(*st.rhs);
      for (size_t i = k; i < j; ++i) reuse = reuse || touches(st, spec.stmts[i].out);
    }
    if (!reuse || !long_rows) {
      ++k;
      continue;
    }
    RowGroup g{k, m, {}};
    // A temp that no statement outside the group touches, and that the group writes before it
    // reads it, lives only as the current row.
    for (size_t j = k; j <= m; ++j) {
      const int t = spec.stmts[j].out;
      const Tensor& tn = spec.tensors[t];
      if (tn.role != Role::Temp || tn.boundary != Boundary::None) continue;
      if (std::find(g.row_local.begin(), g.row_local.end(), t) != g.row_local.end()) continue;
      bool local = true;
      for (size_t i = 0; i < n && local; ++i)
        if ((i < k || i > m) && touches(spec.stmts[i], t)) local = false;
      for (size_t i = k; i < j && local; ++i)
        if (touches(spec.stmts[i], t)) local = false;
      for (const Expr* r : reads_of(*spec.stmts[j].rhs))
        if (r->ref == t) local = false;
      if (local) g.row_local.push_back(t);
    }
    groups.push_back(g);
    k = m + 1;
  }
  return groups;
}

}  // namespace

void row_fusion(Spec& spec) {
  spec.schedule.row_groups = find_row_groups(spec);
  spec.schedule.row_fusion_done = true;
}

std::string dump_row_fusion(const Spec& spec) {
  SB_ASSERT(spec.schedule.row_fusion_done, "row_fusion has not run on spec " + spec.name);
  if (spec.schedule.row_groups.empty())
    return reads_across_names(spec) ? "no row groups (a storage is read through another name than "
                                      "the one written)\n"
                                    : "no row groups\n";
  std::string out;
  for (const RowGroup& g : spec.schedule.row_groups) {
    std::string names;  // in the order the group writes them
    for (int t : g.row_local) names += (names.empty() ? "" : ", ") + spec.tensors[t].name;
    out += "row group stmts " + std::to_string(g.first) + ".." + std::to_string(g.last) +
           ", row-local: " + (names.empty() ? "none" : names) + "\n";
    for (size_t k = g.first; k <= g.last; ++k)
      out += "  stmt " + std::to_string(k) + ": " + source_text(spec.stmts[k], spec) + "\n";
  }
  return out;
}

}  // namespace sb
