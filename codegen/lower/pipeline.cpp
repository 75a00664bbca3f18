#include "lower/pipeline.h"

#include "lower/expand_intrinsics.h"
#include "lower/legalize_int_div.h"
#include "support/diag.h"

namespace sb {

const std::vector<LowerPass>& lower_passes() {
  static const std::vector<LowerPass> passes = {
      {"expand_intrinsics", "per backend: intrinsics it does not spell replaced by their "
                            "default expansions (lower/expand_intrinsics)"},
      {"legalize_int_div", "integer / and % as div_trunc and rem_trunc, with the guards that "
                           "define division by 0 and -1 (lower/legalize_int_div)"},
      {"blocked_gemm", "cpu, mojo: the blocked GEMM of strategy blocked_matmul as loop IR, one "
                       "module per element type (lower/blocked_gemm)"},
  };
  return passes;
}

Spec lower(const Spec& spec, const std::function<bool(Fn)>& spells, const std::string& dump_after,
           std::ostream* dump_to, const std::string& label) {
  auto after = [&](const char* pass, const Spec& s) {
    if (dump_to && dump_after == pass)
      *dump_to << "# IR after " << pass << (label.empty() ? "" : " for " + label) << "\n"
               << dump(s);
  };
  Spec out = clone(spec);
  for (Statement& st : out.stmts)
    if (st.source.empty()) st.source = to_string(st, out);
  out = expand_intrinsics(out, spells);
  after("expand_intrinsics", out);
  out = legalize_int_div(out);
  after("legalize_int_div", out);
  return out;
}

}  // namespace sb
