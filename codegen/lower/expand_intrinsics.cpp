#include "lower/expand_intrinsics.h"

#include "ir/intrinsics.h"
#include "ir/visitor.h"

namespace sb {

namespace {

// Expansions nest only a few levels (sigmoid -> exp); a deeper chain is a cycle in the records.
constexpr int kMaxExpansionDepth = 8;

// Rebuilds a tree with every call that the backend does not spell replaced by its expansion.
class Expand : public ExprMutator {
 public:
  Expand(const std::function<bool(Fn)>& spells, int depth) : spells_(spells), depth_(depth) {}

 protected:
  ExprPtr mutate_call(const Expr& e) override {
    ExprPtr c = mutate_children(e);  // the arguments first
    if (spells_(c->fn)) return c;
    const Intrinsic& in = intrinsic(c->fn);
    SB_ASSERT(in.expand, std::string("the backend spells no '") + fn_name(c->fn) +
                             "' and it has no default expansion");
    SB_ASSERT(depth_ < kMaxExpansionDepth, std::string("the expansion of '") + fn_name(c->fn) +
                                               "' does not terminate");
    ExprPtr x = in.expand(*c);
    // The expansion's own calls (and the cloned arguments, already expanded) are expanded again.
    return Expand(spells_, depth_ + 1).mutate(*x);
  }

 private:
  const std::function<bool(Fn)>& spells_;
  int depth_;
};

}  // namespace

Spec expand_intrinsics(const Spec& spec, const std::function<bool(Fn)>& spells) {
  Spec out = clone(spec);
  for (Statement& st : out.stmts) st.rhs = Expand(spells, 0).mutate(*st.rhs);
  return out;
}

}  // namespace sb
