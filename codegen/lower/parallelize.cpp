// Lowering pass parallelize: what runs on worker threads (see parallelize.h).
#include "lower/parallelize.h"

#include <optional>

#include "ir/affine.h"
#include "lower/patterns.h"
#include "support/diag.h"

namespace sb {

namespace {

ParallelChoice choice(const Statement& st) {
  ParallelChoice c;
  const std::vector<const Expr*> tops = top_reduces_of(*st.rhs);
  for (const Expr* r : tops) {
    bool reached = false;
    for (size_t d = 0; d < st.rank(); ++d)
      reached = reached || depends_on(*r, static_cast<int>(d), &st);
    if (!reached) c.apart.insert(r->ref);
  }
  if (st.rank() > 0) {
    c.loops = ParallelLoops::Outputs;
    c.collapse = st.rank() >= 4 ? static_cast<int>(st.rank()) - 2 : 1;
  } else if (!tops.empty())
    c.loops = ParallelLoops::Reductions;
  return c;
}

}  // namespace

const char* parallel_loops_name(ParallelLoops p) {
  switch (p) {
    case ParallelLoops::None:
      return "none";
    case ParallelLoops::Outputs:
      return "outputs";
    case ParallelLoops::Reductions:
      return "reductions";
  }
  SB_ASSERT(false, "ParallelLoops of unknown value");
  return "";
}

void parallelize(Spec& spec) {
  choose_per_statement(spec, choice, spec.schedule.parallel, spec.schedule.epilogue_parallel);
  spec.schedule.parallelize_done = true;
}

const ParallelChoice& parallel_choice(const Spec& spec, const Statement& st) {
  SB_ASSERT(spec.schedule.parallelize_done, "parallelize has not run on spec " + spec.name);
  return choice_of(spec, st, spec.schedule.parallel, spec.schedule.epilogue_parallel);
}

std::string dump_parallelize(const Spec& spec) {
  const Schedule& sched = spec.schedule;
  SB_ASSERT(sched.parallelize_done, "parallelize has not run on spec " + spec.name);
  std::string out;
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    const Statement& st = spec.stmts[k];
    const ParallelChoice& c = sched.parallel[k];
    out += "stmt " + std::to_string(k) + " (" + source_text(st, spec) + "): " +
           parallel_loops_name(c.loops);
    if (c.collapse > 1) out += " (" + std::to_string(c.collapse) + " loops collapsed)";
    std::string apart;
    for (int r : c.apart) apart += (apart.empty() ? "" : ", ") + st.vars[r].name;
    if (!apart.empty()) out += "; apart: " + apart;
    out += "\n";
  }
  return out;
}

}  // namespace sb
