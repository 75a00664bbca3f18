#include "lower/pipeline.h"

#include "lower/expand_intrinsics.h"
#include "lower/legalize_int_div.h"
#include "lower/row_fusion.h"
#include "lower/streaming.h"
#include "support/diag.h"

namespace sb {

const std::vector<LowerPass>& lower_passes() {
  static const std::vector<LowerPass> passes = {
      {"expand_intrinsics", "per backend: intrinsics it does not spell replaced by their "
                            "default expansions (lower/expand_intrinsics)"},
      {"legalize_int_div", "integer / and % as div_trunc and rem_trunc, with the guards that "
                           "define division by 0 and -1 (lower/legalize_int_div)"},
      {"row_fusion", "the row groups: consecutive statements run as one parallel loop over "
                     "rows by strategies that fuse rows, and their row-local temps "
                     "(lower/row_fusion)"},
      {"streaming", "per statement, whether a parallel strategy writes its output with "
                    "streaming stores, and the tensors whose bytes decide (lower/streaming)"},
      {"gpu_mapping", "cuda: per variant, the kernels its strategy maps the statements and "
                      "row groups onto, and where a fused group's tensors live "
                      "(lower/gpu_mapping)"},
      {"blocked_gemm", "cpu, mojo: the blocked GEMM of strategy blocked_matmul as loop IR, one "
                       "module per element type (lower/blocked_gemm)"},
  };
  return passes;
}

Spec lower(const Spec& spec, const std::function<bool(Fn)>& spells, const std::string& dump_after,
           std::ostream* dump_to, const std::string& label) {
  auto after = [&](const std::string& pass, const Spec& s) {
    if (!dump_to || dump_after != pass) return;
    *dump_to << "# IR after " << pass << (label.empty() ? "" : " for " + label) << "\n";
    // The decision passes add data to the IR, not statements: their dump is that data.
    *dump_to << (pass == "row_fusion"  ? dump_row_fusion(s)
                 : pass == "streaming" ? dump_streaming(s)
                                       : dump(s));
  };
  Spec out = clone(spec);
  for (Statement& st : out.stmts)
    if (st.source.empty()) st.source = to_string(st, out);
  out = expand_intrinsics(out, spells);
  after("expand_intrinsics", out);
  out = legalize_int_div(out);
  after("legalize_int_div", out);
  row_fusion(out);
  after("row_fusion", out);
  streaming(out);
  after("streaming", out);
  return out;
}

}  // namespace sb
