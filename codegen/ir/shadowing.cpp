#include "ir/shadowing.h"

#include <vector>

#include "ir/visitor.h"

namespace sb {

namespace {

class Shadowing : public ExprVisitor {
 public:
  explicit Shadowing(const Statement& st) : st_(st) {
    for (size_t i = 0; i < st.rank(); ++i) live_.push_back(static_cast<int>(i));
  }
  std::set<int> found;

 protected:
  void visit_reduce(const Expr& e) override {
    for (int o : live_)
      if (st_.vars[o].name == st_.vars[e.ref].name) found.insert(e.ref);
    live_.push_back(e.ref);
    visit_children(e);
    live_.pop_back();
  }

 private:
  const Statement& st_;
  std::vector<int> live_;  // the variables bound at the node being visited, outermost first
};

}  // namespace

std::set<int> shadowing_reductions(const Statement& st) {
  Shadowing s(st);
  if (st.rhs) s.visit(*st.rhs);
  return s.found;
}

}  // namespace sb
