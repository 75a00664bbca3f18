// The host backends' strategies as objects (cpu, mojo, mlir, vendor_cpu): one HostStrategy record
// per strategy, in one registry per backend (backends/<name>/strategies.cpp, one file per
// backend's strategy set, since each set is two or three records of a few lines). The cuda
// backend's richer records are in backends/cuda/strategies/.
//
// A record holds everything a backend knows about a strategy: its StrategyInfo (name, doc, typed
// parameters with default and range, algorithm class; what `list --strategies` and the README
// table show), its fit check (a located error when no statement of the spec has the shape the
// strategy needs), and the schedule facts its printer reads instead of comparing names.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/emitter.h"
#include "ir/ir.h"
#include "lower/tile_transposes.h"
#include "support/diag.h"

namespace sb::host {

// How a strategy lowers contraction statements (match_contraction, lower/patterns.h).
enum class Gemm {
  None,     // as any other statement
  Blocked,  // a call of the cache-blocked GEMM emitted into the file (cpu and mojo)
  Vendor,   // a call of the vendor BLAS (vendor_cpu)
  // Block products in cache blocks the printer writes, register-tiled and vectorised by MLIR's
  // transform dialect (mlir)
  Transform,
};

// The schedule a strategy applies: the facts the backend's printer reads.
// What a pass pipeline needs to know of the module it lowers (mlir).
struct PipelineFacts {
  bool explicit_loops = false;  // the module holds parallel loops of its own
  // A linalg.generic reads an operand with a stride other than 0 or 1 along its innermost
  // dimension (x[2 * i]): MLIR 19's affine-super-vectorize reads that as contiguous.
  bool strided_inner = false;
};

struct HostSchedule {
  // The outermost output loop (or a fused group's row loop) runs on parallel threads.
  bool parallel = false;
  // Inner loops are vectorised (omp simd, Mojo vectorize, affine-super-vectorize).
  bool simd = false;
  // Row groups (lower/row_fusion.h) are one parallel loop over rows.
  bool fuse_rows = false;
  // Sums may be reassociated; false keeps every sum in the spec's order.
  bool reassociate = false;
  // The strategy has an `approx_math` parameter; 1 selects the inline polynomial f32 math.
  bool approx_math = false;
  Gemm gemm = Gemm::None;
  // Gathered GEMMs (match_gathered_gemm, lower/patterns.h: convolutions) are an im2col gather
  // into a column buffer, then one GEMM call per batch element (vendor_cpu).
  bool im2col = false;
  // Attention groups (the fuse_attention pass's, lower/fuse_attention.h) are one pass over blocks
  // of keys with an online softmax: the scores are never written (cpu).
  bool attention = false;
  // For a backend whose variants are pass pipelines (mlir): the pipeline of a variant with these
  // parameter values (defaults filled in) for a module with these facts (PipelineFacts). Null
  // elsewhere.
  std::function<std::string(const std::map<std::string, int64_t>& params,
                            const PipelineFacts& facts)>
      pipeline;
};

struct HostStrategy {
  StrategyInfo info;
  // What the strategy needs, for the error of a variant whose spec has no statement it fits;
  // empty for a strategy that applies to every statement.
  std::string needs;
  // True when `st` has the strategy's shape. Null for a strategy that applies to every statement.
  std::function<bool(const Spec&, const Statement&)> matches;
  HostSchedule schedule;
};

// One backend's strategies, in the order `list --strategies` and the README show them.
class HostRegistry {
 public:
  // SB_ASSERTs that names are unique, every record has an algorithm class and a doc, parameter
  // defaults lie in their ranges, and a record has a shape check exactly when it has a needs
  // text.
  HostRegistry(std::string backend, std::vector<HostStrategy> strategies);
  const std::string& backend() const { return backend_; }
  const std::vector<HostStrategy>& all() const { return strategies_; }
  // The StrategyInfo of every record, in order (Emitter::strategies()).
  std::vector<StrategyInfo> infos() const;
  // The record of `name`; null when there is none.
  const HostStrategy* find(const std::string& name) const;
  // The record of a checked variant's strategy (SB_ASSERTs that it exists).
  const HostStrategy& of(const Variant& v) const;
  // The located fit check of a variant whose strategy and parameters are valid
  // (Emitter::check_variant): an error at the variant when its strategy needs a shape that no
  // statement of the spec has.
  Status check_fit(const Spec& spec, const Variant& v) const;

 private:
  std::string backend_;
  std::vector<HostStrategy> strategies_;
};

// The `loops` record of the C-family and Mojo backends: a scalar loop nest per statement, sums in
// the spec's order.
HostStrategy loops_strategy(const std::string& doc);

// The blocked_matmul record shared by cpu and mojo: its description and parameters (mc, kc, nc,
// with the same defaults in every backend, so that matched variants block alike), a fit check
// that some statement is a contraction, and the schedule: contractions as the blocked GEMM,
// other statements parallel and vectorised as `others` (named in the doc), without row fusion.
HostStrategy blocked_matmul_strategy(const std::string& others);
// im2col on cpu and mojo: gathered GEMMs (convolutions) as an im2col gather and a call of the
// blocked GEMM per batch element; contractions and other statements as blocked_matmul.
HostStrategy im2col_strategy(const std::string& others);
// flash_attention on cpu: attention groups as FlashAttention's online softmax over blocks of
// keys, both products by blocked_matmul's packing and micro-kernel; contractions and other
// statements as blocked_matmul.
HostStrategy flash_attention_strategy(const std::string& others);

// The parameters `tile` and `tile_inner` of a strategy that tiles reads across rows
// (lower/tile_transposes.h), with the same defaults in every backend, so that matched variants
// tile alike.
std::vector<ParamInfo> tile_params();
// A variant's tiles: its strategy's `tile` and `tile_inner` values where it has them, else the
// defaults (blocked_matmul's other statements).
Tiles variant_tiles(const Variant& v, const StrategyInfo& info);

// The shape check of a strategy that lowers contractions, batched or not: match_contraction.
bool is_contraction(const Spec& spec, const Statement& st);
// The needs text of such a strategy: "a contraction statement, <the shape>".
std::string contraction_needs();
// The same for a strategy that lowers gathered GEMMs (match_gathered_gemm: convolutions) and
// runs contractions as contractions: a gathered GEMM that is no contraction.
bool is_gathered_gemm(const Spec& spec, const Statement& st);
std::string gathered_gemm_needs();
// The needs text of a strategy that fuses attention (its shape check is starts_attention,
// lower/patterns.h).
std::string attention_needs();

}  // namespace sb::host
