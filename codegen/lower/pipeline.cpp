#include "lower/pipeline.h"

#include "lower/expand_intrinsics.h"
#include "lower/fuse_attention.h"
#include "lower/legalize_int_div.h"
#include "lower/parallelize.h"
#include "lower/row_fusion.h"
#include "lower/running_scans.h"
#include "lower/streaming.h"
#include "lower/tile_transposes.h"
#include "lower/vectorize.h"
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
      {"fuse_attention", "the attention groups: five statements from scores to weighted sum that a "
                         "strategy fusing attention runs as one pass over blocks of keys with an "
                         "online softmax (lower/fuse_attention)"},
      {"streaming", "per statement, whether a parallel strategy writes its output with "
                    "streaming stores, and the tensors whose bytes decide (lower/streaming)"},
      {"vectorize", "per statement, the loops a SIMD strategy vectorises: the innermost output "
                    "loop, the innermost reduction loops, or none (lower/vectorize)"},
      {"parallelize", "per statement, what a parallel strategy runs on threads: the outermost "
                      "output loop, or a scalar's reductions; the reductions computed apart "
                      "(lower/parallelize)"},
      {"running_scans", "per statement, the scan it can compute as a running accumulator along "
                        "its innermost output index, in O(n) (lower/running_scans)"},
      {"tile_transposes", "per statement, the output dimension a parallel strategy tiles with "
                          "the innermost one, for a read across rows (lower/tile_transposes)"},
      {"gpu_mapping", "cuda: per variant, the kernels its strategy maps the statements and "
                      "row groups onto, and where a fused group's tensors live "
                      "(lower/gpu_mapping)"},
      {"gpu_bodies", "cuda, mojo_gpu: per variant, the kernel bodies both GPU printers print "
                     "from loop IR (lower/gpu_bodies)"},
      {"host_bodies", "cpu, mojo, mlir: per statement, the host kernel bodies the host "
                      "printers print from loop IR: a long rank-1 running scan's two parallel "
                      "passes (lower/host_bodies)"},
      {"blocked_gemm", "cpu, mojo: the blocked GEMM of strategy blocked_matmul as loop IR, one "
                       "module per element type (lower/blocked_gemm)"},
  };
  return passes;
}

Spec lower(const Spec& spec, const std::function<bool(Fn)>& spells, const std::string& dump_after,
           std::ostream* dump_to, const std::string& label) {
  // The passes on the spec, in lower_passes() order. The rewriting passes print the statements
  // after them; the decision passes add data to the IR, not statements, and print that data.
  struct SpecPass {
    const char* name;
    std::function<void(Spec&)> run;
    std::function<std::string(const Spec&)> dump;
  };
  const auto statements = [](const Spec& s) { return dump(s); };
  const std::vector<SpecPass> passes = {
      {"expand_intrinsics", [&](Spec& s) { s = expand_intrinsics(s, spells); }, statements},
      {"legalize_int_div", [](Spec& s) { s = legalize_int_div(s); }, statements},
      {"row_fusion", row_fusion, dump_row_fusion},
      {"fuse_attention", fuse_attention, dump_fuse_attention},
      {"streaming", streaming, dump_streaming},
      {"vectorize", vectorize, dump_vectorize},
      {"parallelize", parallelize, dump_parallelize},
      {"running_scans", running_scans, dump_running_scans},
      {"tile_transposes", tile_transposes, dump_tile_transposes},
  };
  Spec out = clone(spec);
  for (Statement& st : out.stmts)
    if (st.source.empty()) st.source = to_string(st, out);
  for (size_t i = 0; i < passes.size(); ++i) {
    SB_ASSERT(lower_passes()[i].name == std::string(passes[i].name),
              std::string("lowering pass out of lower_passes() order: ") + passes[i].name);
    passes[i].run(out);
    if (dump_to && dump_after == passes[i].name)
      *dump_to << "# IR after " << passes[i].name << (label.empty() ? "" : " for " + label) << "\n"
               << passes[i].dump(out);
  }
  return out;
}

}  // namespace sb
