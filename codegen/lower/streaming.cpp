// Lowering policy: streaming stores (see streaming.h).
#include "lower/streaming.h"

#include "support/diag.h"

namespace sb {

bool stream_candidate(const Statement& st, bool in_row_group, bool row_local) {
  if (row_local || !reduces_of(*st.rhs).empty()) return false;
  return in_row_group ? st.rank() >= 2 : st.rank() >= 1;
}

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

}  // namespace sb
