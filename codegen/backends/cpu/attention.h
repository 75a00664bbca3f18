// The cpu backend's fused attention (strategy flash_attention): an attention group
// (match_attention, lower/patterns.h) as FlashAttention's online softmax over blocks of keys.
//
// The algorithm is written once per element type, as a function template in the generated file
// (sb_attention_f32/_f64, cpu_attention_support): it takes the scores' epilogue and the
// exponential as two lambdas that each group's kernel prints from the spec's own statements, so
// the kernel computes what the spec says (a scale, a mask, the type's exp), and the softmax's
// policy (the running max, the safe max of -inf, NaN through the max) has one home. Both
// products run through the blocked GEMM's packing and micro-kernel (lower/blocked_gemm.h), which
// the file must then contain for the type.
#pragma once

#include <cstdint>
#include <string>

#include "ir/ir.h"
#include "lower/patterns.h"

namespace sb {

class StmtLowering;
class CodeWriter;

// The definition of sb_attention_<type> (f32 or f64), after the blocked GEMM of that type.
std::string cpu_attention_support(DType type);

// The body of an attention group's kernel: the extents and steps of both products
// (library_gemm), the two lambdas, and the call of sb_attention_<type> with blocks of `bk`
// keys, returning its status. `scores`, `weights` and `values` lower the
// group's first, third and last statements (`weights` prints exp(s - m) from two scalars).
void emit_attention(StmtLowering& scores, StmtLowering& weights, StmtLowering& values,
                    const Attention& a, int64_t bk, CodeWriter& w);

}  // namespace sb
