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
  if (st.rank() > 0)
    c.loops = ParallelLoops::Outputs;
  else if (!tops.empty())
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
  Schedule& sched = spec.schedule;
  sched.parallel.clear();
  sched.epilogue_parallel.clear();
  for (const Statement& st : spec.stmts) {
    sched.parallel.push_back(choice(st));
    const std::optional<Contraction> m = match_contraction(spec, st);
    sched.epilogue_parallel.push_back(
        m && m->epilogue ? choice(epilogue_statement(spec, st, m->reduce)) : ParallelChoice{});
  }
  sched.parallelize_done = true;
}

const ParallelChoice& parallel_choice(const Spec& spec, const Statement& st) {
  const Schedule& sched = spec.schedule;
  SB_ASSERT(sched.parallelize_done, "parallelize has not run on spec " + spec.name);
  const StmtSlot slot = stmt_slot(spec, st);
  return slot.epilogue ? sched.epilogue_parallel[slot.index] : sched.parallel[slot.index];
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
    std::string apart;
    for (int r : c.apart) apart += (apart.empty() ? "" : ", ") + st.vars[r].name;
    if (!apart.empty()) out += "; apart: " + apart;
    out += "\n";
  }
  return out;
}

}  // namespace sb
