#include "lower/fuse_attention.h"

#include <optional>

#include "lower/patterns.h"
#include "support/diag.h"

namespace sb {

void fuse_attention(Spec& spec) {
  std::vector<size_t>& groups = spec.schedule.attention_groups;
  groups.clear();
  // Matched by name, as row_fusion's rows: nothing fuses across a storage's names.
  const size_t n = reads_across_names(spec) ? 0 : spec.stmts.size();
  for (size_t k = 0; k < n; ++k) {
    if (!match_attention(spec, k)) continue;
    groups.push_back(k);
    k += kAttentionStatements - 1;
  }
  spec.schedule.fuse_attention_done = true;
}

std::string dump_fuse_attention(const Spec& spec) {
  SB_ASSERT(spec.schedule.fuse_attention_done, "fuse_attention has not run on spec " + spec.name);
  if (spec.schedule.attention_groups.empty()) return "no attention groups\n";
  std::string out;
  for (size_t first : spec.schedule.attention_groups) {
    const std::optional<Attention> a = match_attention(spec, first);
    SB_ASSERT(a.has_value(), "an attention group that match_attention does not match");
    const size_t last = first + kAttentionStatements - 1;
    out += "attention group stmts " + std::to_string(first) + ".." + std::to_string(last) +
           ", temps never written when fused: ";
    const char* sep = "";
    for (int t : {a->s, a->m, a->p, a->l}) {
      out += sep + spec.tensors[t].name;
      sep = ", ";
    }
    out += "\n";
    for (size_t k = first; k <= last; ++k)
      out += "  stmt " + std::to_string(k) + ": " + source_text(spec.stmts[k], spec) + "\n";
  }
  return out;
}

}  // namespace sb
