// Lowering pass streaming: streaming stores (see streaming.h).
#include "lower/streaming.h"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "lower/patterns.h"
#include "lower/running_scans.h"
#include "support/diag.h"

namespace sb {

namespace {

// Whether statement `st` may stream its output. `in_row_group`: it runs as a row of a row
// group; `row_local`: its output is one of that group's row-local temps.
bool stream_candidate(const Statement& st, bool in_row_group, bool row_local) {
  if (row_local || !reduces_of(*st.rhs).empty()) return false;
  return in_row_group ? st.rank() >= 2 : st.rank() >= 1;
}

// The tensors in memory that statements [first, last] of `spec` touch (each output and every
// tensor read, less `row_local`: a row group's temps held one row at a time).
std::set<int> stream_tensors(const Spec& spec, size_t first, size_t last,
                             const std::vector<int>& row_local) {
  SB_ASSERT(first <= last && last < spec.stmts.size(), "statement range out of the spec");
  std::set<int> used;
  for (size_t k = first; k <= last; ++k) {
    used.insert(spec.stmts[k].out);
    for (const Expr* r : reads_of(*spec.stmts[k].rhs)) used.insert(r->ref);
  }
  for (int t : row_local) used.erase(t);
  return used;
}

// The tensors statement `st` reads at its output's own indices (subscript d is index variable d
// for every dimension, no boundary rule), less `row_local`.
std::set<int> along_reads(const Spec& spec, const Statement& st,
                          const std::vector<int>& row_local) {
  std::set<int> along;
  for (const Expr* r : reads_of(*st.rhs)) {
    bool ok = spec.tensors[r->ref].boundary == Boundary::None && r->args.size() == st.rank() &&
              std::find(row_local.begin(), row_local.end(), r->ref) == row_local.end();
    for (size_t d = 0; ok && d < r->args.size(); ++d)
      ok = r->args[d]->kind == ExprKind::IndexVar && r->args[d]->ref == static_cast<int>(d);
    if (ok) along.insert(r->ref);
  }
  return along;
}

// The next-row prefetches of row group `g` (streaming.h), into `streams`: for each tensor of rank 2
// that the group reads and does not write, the group's last statement to read it, when that read
// is `t[row, k]` with the row as subscript 0 (the statement's output variable 0) and k one of the
// statement's variables other than the row.
void next_row_prefetches(const Spec& spec, const RowGroup& g, std::vector<StreamChoice>& streams) {
  std::set<int> written, seen;
  for (size_t k = g.first; k <= g.last; ++k) written.insert(spec.stmts[k].out);
  for (size_t k = g.last + 1; k-- > g.first;) {
    for (const Expr* r : reads_of(*spec.stmts[k].rhs)) {
      const int t = r->ref;
      if (written.count(t) || !seen.insert(t).second) continue;
      const Tensor& tn = spec.tensors[t];
      if (tn.shape.size() != 2 || tn.boundary != Boundary::None || r->args.size() != 2) continue;
      const Expr& row = *r->args[0];
      const Expr& col = *r->args[1];
      if (row.kind != ExprKind::IndexVar || row.ref != 0) continue;
      if (col.kind != ExprKind::IndexVar || col.ref == 0) continue;
      streams[k].next_rows[t] = col.ref;
    }
  }
}

std::string names(const Spec& spec, const std::set<int>& tensors) {
  std::string out;
  for (int t : tensors) out += (out.empty() ? "" : ", ") + spec.tensors[t].name;
  return out;
}

}  // namespace

void streaming(Spec& spec) {
  SB_ASSERT(spec.schedule.row_fusion_done, "streaming runs after row_fusion");
  Schedule& sched = spec.schedule;
  sched.streams.assign(spec.stmts.size(), StreamChoice{});
  sched.epilogue_streams.clear();
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    const Statement& st = spec.stmts[k];
    bool row_local = false;
    std::vector<int> group_local;
    for (const RowGroup& g : sched.row_groups)
      if (g.first <= k && k <= g.last) {
        row_local = std::find(g.row_local.begin(), g.row_local.end(), st.out) != g.row_local.end();
        group_local = g.row_local;
      }
    StreamChoice& c = sched.streams[k];
    c.whole = stream_candidate(st, /*in_row_group=*/false, /*row_local=*/false);
    c.rows = stream_candidate(st, /*in_row_group=*/true, row_local);
    c.tensors = stream_tensors(spec, k, k, {});
    if (c.whole) c.prefetch = along_reads(spec, st, {});
    c.scan = running_scan_reduction(st) >= 0;
    if (c.rows) c.prefetch_rows = along_reads(spec, st, group_local);
    sched.epilogue_streams.push_back(StreamChoice{});
    const std::optional<Contraction> m = match_contraction(spec, st);
    if (m && m->epilogue) {
      const Statement e = epilogue_statement(spec, st, m->reduce);
      StreamChoice& ec = sched.epilogue_streams.back();
      ec.whole = stream_candidate(e, /*in_row_group=*/false, /*row_local=*/false);
      ec.tensors.insert(e.out);
      for (const Expr* r : reads_of(*e.rhs)) ec.tensors.insert(r->ref);
      if (ec.whole) ec.prefetch = along_reads(spec, e, {});
    }
  }
  sched.group_tensors.clear();
  for (const RowGroup& g : sched.row_groups) {
    sched.group_tensors.push_back(stream_tensors(spec, g.first, g.last, g.row_local));
    bool streams = false;
    for (size_t k = g.first; k <= g.last; ++k) streams = streams || sched.streams[k].rows;
    if (streams) next_row_prefetches(spec, g, sched.streams);
  }
  sched.streaming_done = true;
}

const StreamChoice& stream_choice(const Spec& spec, const Statement& st) {
  const Schedule& sched = spec.schedule;
  SB_ASSERT(sched.streaming_done, "streaming has not run on spec " + spec.name);
  const StmtSlot slot = stmt_slot(spec, st);
  return slot.epilogue ? sched.epilogue_streams[slot.index] : sched.streams[slot.index];
}

std::string dump_streaming(const Spec& spec) {
  const Schedule& sched = spec.schedule;
  SB_ASSERT(sched.streaming_done, "streaming has not run on spec " + spec.name);
  std::string out;
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    const StreamChoice& c = sched.streams[k];
    auto prefetch = [&](const std::set<int>& p) {
      return p.empty() ? std::string() : ", prefetch " + names(spec, p);
    };
    out += "stmt " + std::to_string(k) + " (" + source_text(spec.stmts[k], spec) + "): alone " +
           (c.whole ? "streams, tensors " + names(spec, c.tensors) + prefetch(c.prefetch)
                    : std::string("no")) +
           "; by rows " + (c.rows ? "streams" + prefetch(c.prefetch_rows) : std::string("no")) +
           (c.scan ? "; its scan walk streams, tensors " + names(spec, c.tensors) : "");
    for (const auto& [t, v] : c.next_rows)
      out += "; prefetches the next row of " + spec.tensors[t].name + " along " +
             spec.stmts[k].vars[v].name;
    const StreamChoice& e = sched.epilogue_streams[k];
    if (e.whole)
      out += "; its rest after a GEMM call streams, tensors " + names(spec, e.tensors) +
             prefetch(e.prefetch);
    out += "\n";
  }
  for (size_t i = 0; i < sched.row_groups.size(); ++i) {
    const RowGroup& g = sched.row_groups[i];
    std::set<int> streamed;
    for (size_t k = g.first; k <= g.last; ++k)
      if (sched.streams[k].rows) streamed.insert(spec.stmts[k].out);
    out += "row group stmts " + std::to_string(g.first) + ".." + std::to_string(g.last) + ": " +
           (streamed.empty() ? std::string("no output streams")
                             : "streams " + names(spec, streamed) + ", tensors " +
                                   names(spec, sched.group_tensors[i])) +
           "\n";
  }
  return out;
}

}  // namespace sb
