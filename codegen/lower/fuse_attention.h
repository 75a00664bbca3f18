// Lowering pass fuse_attention: where attention groups start, the five statements that a fused
// attention strategy (cpu and cuda flash_attention) runs as one pass over blocks of keys with an
// online softmax. The one home of the choice of groups; the shape itself is match_attention
// (lower/patterns.h). Its result is data in the lowered spec (Spec::schedule.attention_groups,
// ir.h), which a strategy that fuses attention runs (HostSchedule::attention on the hosts, a
// FusedAttention step of the GPU mapping under GpuFusion::attention, lower/gpu_mapping.h); any
// other runs each statement on its own.
#pragma once

#include <string>

#include "ir/ir.h"

namespace sb {

// Fills spec.schedule.attention_groups of a typechecked Spec: the first statement of each group
// (match_attention), in statement order, the groups not overlapping (a match inside an earlier
// group's five statements is not one).
void fuse_attention(Spec& spec);

// The `--dump-ir fuse_attention` text: one line per group, e.g.
// `attention group stmts 0..4, temps never written when fused: s, m, p, l`, each followed by its
// statements; or `no attention groups`.
std::string dump_fuse_attention(const Spec& spec);

}  // namespace sb
