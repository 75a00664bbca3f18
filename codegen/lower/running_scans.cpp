// Lowering pass running_scans: reductions computed as a running accumulator (see running_scans.h).
#include "lower/running_scans.h"

#include <vector>

#include "ir/affine.h"
#include "ir/scalar_types.h"
#include "lower/patterns.h"
#include "support/diag.h"

namespace sb {

bool vector_scan_fits(ReduceOp op, DType t) {
  if (op != ReduceOp::Sum && op != ReduceOp::Prod && op != ReduceOp::Max && op != ReduceOp::Min)
    return false;
  const ScalarType& s = scalar(t);
  return s.kind == ScalarKind::Float && (s.bits == 32 || s.bits == 64);
}

int vector_scan_lanes(DType t) {
  SB_ASSERT(scalar(t).bits == 32 || scalar(t).bits == 64, "a vector scan of a type without one");
  return 512 / scalar(t).bits;
}

std::vector<std::vector<int>> vector_scan_steps(DType t) {
  return vector_scan_steps(vector_scan_lanes(t));
}

std::vector<std::vector<int>> vector_scan_steps(int lanes) {
  SB_ASSERT(lanes > 0, "a vector scan of no lanes");
  std::vector<std::vector<int>> steps;
  for (int shift = 1; shift < lanes; shift *= 2) {
    std::vector<int> mask;
    for (int q = 0; q < lanes; ++q) mask.push_back(q >= shift ? q - shift : lanes);
    steps.push_back(mask);
  }
  return steps;
}

namespace {

// The type an expression's value is printed in (f16 and bf16 values compute as f32).
DType printed_type(const Expr& e) {
  return scalar(e.type).printed_as;
}

}  // namespace

const Expr* contiguous_scan_term(const Spec& spec, const Expr& red) {
  const Expr& term = *red.args[0];
  if (term.kind != ExprKind::Read || term.args.empty() || printed_type(term) != printed_type(red) ||
      spec.tensors[term.ref].boundary != Boundary::None)
    return nullptr;
  for (size_t d = 0; d < term.args.size(); ++d) {
    const std::optional<Affine> a = decompose(*term.args[d]);
    if (!a || a->overflow) return nullptr;
    if (a->var(red.ref) != (d + 1 == term.args.size() ? 1 : 0)) return nullptr;
  }
  return &term;
}

bool scan_is_output(const Spec& spec, const Statement& st, const Expr& red) {
  return st.rhs.get() == &red && spec.tensors[st.out].type == printed_type(red);
}

std::string vector_scan_name(ReduceOp op, DType t) {
  return std::string("sb_scan_") + reduce_name(op) + "_" + scalar(t).suffix;
}

std::string vector_scan_mask(const std::vector<int>& mask) {
  std::string out;
  for (size_t q = 0; q < mask.size(); ++q) out += (q ? ", " : "") + std::to_string(mask[q]);
  return out;
}

int running_scan_reduction(const Statement& st) {
  if (st.rank() == 0) return -1;
  const std::vector<const Expr*> reds = reduces_of(*st.rhs);
  if (reds.size() != 1) return -1;
  const Expr& r = *reds.front();
  const int i = static_cast<int>(st.rank()) - 1;
  const IndexVar& kv = st.vars[r.ref];
  if (!kv.lo || !kv.hi || !var_free(*kv.lo)) return -1;
  const std::optional<Affine> hi = decompose(*kv.hi, var_free);
  if (!hi || hi->overflow || hi->vars.size() != 1 || hi->var(i) != 1) return -1;
  if (depends_on(*r.args[0], i, &st)) return -1;
  for (const Expr* read : reads_of(*st.rhs))
    if (read->ref == st.out) return -1;
  return r.ref;
}

void running_scans(Spec& spec) {
  Schedule& sched = spec.schedule;
  sched.running_scans.clear();
  for (const Statement& st : spec.stmts) sched.running_scans.push_back(running_scan_reduction(st));
  sched.running_scans_done = true;
}

const Expr* running_scan(const Spec& spec, const Statement& st, bool rows) {
  const Schedule& sched = spec.schedule;
  SB_ASSERT(sched.running_scans_done, "running_scans has not run on spec " + spec.name);
  const StmtSlot slot = stmt_slot(spec, st);
  if (slot.epilogue || sched.running_scans.at(slot.index) < 0) return nullptr;
  if (rows && st.rank() < 2) return nullptr;
  // The pass accepts a statement with exactly one reduction.
  return reduces_of(*st.rhs).front();
}

std::string dump_running_scans(const Spec& spec) {
  const Schedule& sched = spec.schedule;
  SB_ASSERT(sched.running_scans_done, "running_scans has not run on spec " + spec.name);
  std::string out;
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    const Statement& st = spec.stmts[k];
    out += "stmt " + std::to_string(k) + " (" + source_text(st, spec) + "): ";
    const int r = sched.running_scans[k];
    if (r < 0) {
      out += "no\n";
      continue;
    }
    const Expr* red = reduces_of(*st.rhs).front();
    out += std::string("running ") + reduce_name(red->rop) + " over " + st.vars[r].name +
           " along " + st.vars[st.rank() - 1].name + "\n";
  }
  return out;
}

}  // namespace sb
