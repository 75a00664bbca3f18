#include "lower/expand_intrinsics.h"

#include "ir/intrinsics.h"

namespace sb {

namespace {

// Expansions nest only a few levels (sigmoid -> exp); a deeper chain is a cycle in the records.
constexpr int kMaxExpansionDepth = 8;

void expand(ExprPtr& e, const std::function<bool(Fn)>& spells, int depth) {
  for (ExprPtr& a : e->args) expand(a, spells, depth);
  if (e->kind != ExprKind::Call || spells(e->fn)) return;
  const Intrinsic& in = intrinsic(e->fn);
  SB_ASSERT(in.expand, std::string("the backend spells no '") + fn_name(e->fn) +
                           "' and it has no default expansion");
  SB_ASSERT(depth < kMaxExpansionDepth, std::string("the expansion of '") + fn_name(e->fn) +
                                            "' does not terminate");
  ExprPtr x = in.expand(*e);
  // The expansion's own calls (and the cloned arguments, already expanded) are expanded again.
  expand(x, spells, depth + 1);
  e = std::move(x);
}

}  // namespace

Spec expand_intrinsics(const Spec& spec, const std::function<bool(Fn)>& spells) {
  Spec out = clone(spec);
  for (Statement& st : out.stmts) expand(st.rhs, spells, 0);
  return out;
}

}  // namespace sb
