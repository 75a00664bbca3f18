// Lowering pass vectorize: the loops a SIMD strategy vectorises (see vectorize.h).
#include "lower/vectorize.h"

#include <functional>
#include <optional>
#include <vector>

#include "ir/affine.h"
#include "lower/patterns.h"
#include "support/diag.h"

namespace sb {

namespace {

// Whether some read inside a reduction of `e` varies with an enclosing reduction variable
// (`reductions`: the variables of the reductions around `e`) and has `out_var` in its last
// subscript.
bool contiguous_under_reductions(const Expr& e, int out_var, std::vector<int>& reductions) {
  if (e.kind == ExprKind::Read && !e.args.empty() && !reductions.empty() &&
      depends_on(*e.args.back(), out_var)) {
    for (int r : reductions)
      for (const auto& a : e.args)
        if (depends_on(*a, r)) return true;
  }
  if (e.kind == ExprKind::Reduce) reductions.push_back(e.ref);
  bool found = false;
  for (const auto& a : e.args) found = found || contiguous_under_reductions(*a, out_var, reductions);
  if (e.kind == ExprKind::Reduce) reductions.pop_back();
  return found;
}

SimdChoice choice(const Statement& st) {
  SimdChoice c;
  const std::vector<const Expr*> tops = top_reduces_of(*st.rhs);
  // A reduction's loop can leave the innermost output loop only when its range does not depend on
  // that loop's index. (No statement reads its own output: the checker rejects that.)
  if (st.rank() > 0) {
    const int inner = static_cast<int>(st.rank()) - 1;
    for (const Expr* r : tops) {
      const IndexVar& kv = st.vars[r->ref];
      if (!kv.lo || !kv.hi || depends_on(*kv.lo, inner, &st) || depends_on(*kv.hi, inner, &st))
        continue;
      std::vector<int> reductions;
      if (contiguous_under_reductions(*r, inner, reductions)) c.outside.insert(r->ref);
    }
  }
  // `bound` output dimensions already bound by an enclosing loop (0 on its own, 1 row by row).
  auto loops = [&](size_t bound) {
    if (st.rank() > bound && (tops.empty() || !c.outside.empty())) return SimdLoops::Outputs;
    return tops.empty() ? SimdLoops::None : SimdLoops::Reductions;
  };
  c.whole = loops(0);
  c.rows = loops(1);
  return c;
}

}  // namespace

const char* simd_loops_name(SimdLoops s) {
  switch (s) {
    case SimdLoops::None:
      return "none";
    case SimdLoops::Outputs:
      return "outputs";
    case SimdLoops::Reductions:
      return "reductions";
  }
  SB_ASSERT(false, "SimdLoops of unknown value");
  return "";
}

void vectorize(Spec& spec) {
  choose_per_statement(spec, choice, spec.schedule.simd, spec.schedule.epilogue_simd);
  spec.schedule.vectorize_done = true;
}

const SimdChoice& simd_choice(const Spec& spec, const Statement& st) {
  SB_ASSERT(spec.schedule.vectorize_done, "vectorize has not run on spec " + spec.name);
  return choice_of(spec, st, spec.schedule.simd, spec.schedule.epilogue_simd);
}

std::string dump_vectorize(const Spec& spec) {
  const Schedule& sched = spec.schedule;
  SB_ASSERT(sched.vectorize_done, "vectorize has not run on spec " + spec.name);
  std::string out;
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    const SimdChoice& c = sched.simd[k];
    out += "stmt " + std::to_string(k) + " (" + source_text(spec.stmts[k], spec) + "): alone " +
           simd_loops_name(c.whole) + "; by rows " + simd_loops_name(c.rows);
    std::string outside;
    for (int r : c.outside) outside += (outside.empty() ? "" : ", ") + spec.stmts[k].vars[r].name;
    if (!outside.empty()) out += "; outside the vector loop: " + outside;
    if (const std::optional<Contraction> m = match_contraction(spec, spec.stmts[k]);
        m && m->epilogue)
      out += std::string("; its rest after a GEMM call ") +
             simd_loops_name(sched.epilogue_simd[k].whole);
    out += "\n";
  }
  return out;
}

std::optional<std::pair<int64_t, int64_t>> constant_range(const IndexVar& v) {
  const std::optional<Affine> lo = v.lo ? decompose(*v.lo) : std::nullopt;
  const std::optional<Affine> hi = v.hi ? decompose(*v.hi) : std::nullopt;
  if (!lo || !hi || lo->overflow || hi->overflow || !lo->is_constant() || !hi->is_constant())
    return std::nullopt;
  return std::make_pair(lo->constant, hi->constant);
}

bool terms_along_row(const Statement& st, const Expr& red) {
  std::function<bool(const Expr&)> along = [&](const Expr& e) {
    if (e.kind == ExprKind::Read)
      for (size_t d = 0; d + 1 < e.args.size(); ++d)
        for (size_t v = st.rank(); v < st.vars.size(); ++v)
          if (depends_on(*e.args[d], static_cast<int>(v))) return false;
    for (const auto& a : e.args)
      if (!along(*a)) return false;
    return true;
  };
  return along(*red.args[0]);
}

std::optional<int64_t> exact_tap_edge(const Spec& spec, const Statement& st, const Expr& e) {
  const int inner = static_cast<int>(st.rank()) - 1;
  const std::optional<Affine> row = decompose(*spec.tensors[st.out].shape.back(), var_free);
  int64_t edge = 1;
  bool ok = row.has_value() && !row->overflow;
  std::function<void(const Expr&)> walk = [&](const Expr& x) {
    if (!ok) return;
    if (x.kind == ExprKind::Read && spec.tensors[x.ref].boundary != Boundary::None) {
      const Tensor& t = spec.tensors[x.ref];
      for (size_t d = 0; d < x.args.size() && ok; ++d) {
        if (!depends_on(*x.args[d], inner)) continue;
        const std::optional<Affine> sub = decompose(*x.args[d], var_free);
        const std::optional<Affine> off = sub ? offset_from(*sub, inner) : std::nullopt;
        const std::optional<Affine> ext = decompose(*t.shape[d], var_free);
        if (!off || off->overflow || !off->sizes.empty() || !off->atoms.empty() || !ext ||
            ext->overflow || ext->constant != row->constant || ext->sizes != row->sizes ||
            !ext->vars.empty() || !ext->atoms.empty() || !row->atoms.empty()) {
          ok = false;
          return;
        }
        // The offset's extremes over the reduction variables' constant ranges.
        int64_t lo = off->constant, hi = off->constant;
        for (const auto& [v, coef] : off->vars) {
          const IndexVar& iv = st.vars[v];
          const auto range = constant_range(iv);
          if (!iv.is_reduction || !range || range->second <= range->first) {
            ok = false;
            return;
          }
          const int64_t first = coef * range->first, last = coef * (range->second - 1);
          lo += std::min(first, last);
          hi += std::max(first, last);
        }
        edge = std::max({edge, -lo, hi});
      }
    }
    for (const auto& a : x.args) walk(*a);
  };
  walk(e);
  if (!ok) return std::nullopt;
  return edge;
}

}  // namespace sb
