// The vendor_cuda backend's strategies as objects: one VendorCudaStrategy record per strategy,
// registered in registry.cpp from one file per strategy (cublas.cpp, cub_reduce.cpp,
// cub_scan.cpp), with the lowering helpers they share in lowering.cpp.
//
// A record holds everything the backend knows about a strategy: its StrategyInfo (name, doc, no
// parameters, algorithm class; what `list --strategies` and the README table show), its fit
// check (every statement of the spec must have the strategy's shape, patterns.h; otherwise a
// located error naming the first statement that does not), and its printing: the lowering of
// each statement into kernels and a launcher block, the lines that open the variant's launcher,
// and what the file must include and define when a variant uses the strategy.
// emit_vendor_cuda.cpp looks each variant's record up once and prints from it.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "backends/common/emit_common.h"
#include "backends/emitter.h"
#include "ir/ir.h"
#include "support/diag.h"

namespace sb::vendor_cuda {

// What a strategy's lowering of one statement gives the file.
struct StmtCode {
  std::string kernels;  // functors and __global__ kernels
  std::string launch;   // the launcher's block for the statement (indent 1)
  std::set<int> tensors, sizes;
};

// What the lowerings of one file share: the helpers and the reduction operators they define.
struct FileParts {
  HelperSet helpers;
  std::set<std::string> ops;  // the reduction functors already in op_defs
  std::string op_defs;
};

struct VendorCudaStrategy {
  StrategyInfo info;
  // The shape every statement must have (a patterns.h text, e.g. kContractionShape), for the
  // error of a variant whose spec has a statement without it.
  const char* shape = nullptr;
  // True when `st` has the strategy's shape.
  std::function<bool(const Spec&, const Statement&)> matches;
  // Lowers statement `st` (which matches) into `out`; `fn` is the prefix of the names of the
  // statement's kernels and functors.
  std::function<void(const Spec&, const Statement& st, const std::string& fn, FileParts&,
                     StmtCode& out)>
      lower;
  // Lines the variant's launcher runs after binding its stream, before the statements (indent 1).
  // Null when there are none.
  std::function<void(CodeWriter&)> launcher_setup;
  // What the file needs when a variant uses the strategy: library headers (after
  // <cuda_runtime.h>), thrust headers (after the C headers), and definitions printed after the
  // CUDA check macros. Each is printed once, in registry order.
  std::vector<std::string> library_includes;
  std::vector<std::string> thrust_includes;
  std::string macros;
};

// Every vendor_cuda strategy, in the order `list --strategies` and the README show them.
// SB_ASSERTs on first use that names are unique and every record is complete.
const std::vector<VendorCudaStrategy>& strategy_registry();
// The StrategyInfo of every record, in order (Emitter::strategies()).
std::vector<StrategyInfo> strategy_infos();
// The record of `name`; null when there is none.
const VendorCudaStrategy* find_strategy(const std::string& name);
// The record of a checked variant's strategy (SB_ASSERTs that it exists).
const VendorCudaStrategy& strategy_of(const Variant& v);

// The located fit check of variant `v` under strategy `s`: an error at the variant naming the
// first statement of the spec that does not have the strategy's shape.
Status check_fit(const VendorCudaStrategy& s, const Spec& spec, const Variant& v);

// The records, each defined in its own file; registry.cpp lists them in order.
VendorCudaStrategy cublas_strategy();      // cublas.cpp
// Whether cuBLAS takes contraction `m` as one call: a product, or a batch of them, of operands
// of the output's type (cublasSgemm, cublasDgemm and their strided-batched forms), or of one f16
// or bf16 type into an f32 output (cublasGemmEx, cublasGemmStridedBatchedEx; f32 accumulation).
// cublas.cpp.
bool cublas_takes(const Contraction& m);
VendorCudaStrategy cub_reduce_strategy();  // cub_reduce.cpp
VendorCudaStrategy cub_scan_strategy();    // cub_scan.cpp

// Lowering helpers the strategies share (lowering.cpp).

// The reduction operator of `op` on type `t` as a functor name, defining it into `parts` once.
std::string reduce_op(ReduceOp op, DType t, FileParts& parts);
// The functor computing a reduction's term from its index k: `struct <name>`. Its initialiser
// (the captured names) goes to `init`; what it uses is added to `out`.
std::string term_functor(const Spec& spec, const Statement& st, const Expr& reduce, int k,
                         HelperSet& helpers, const std::string& name, std::string& init,
                         StmtCode& out);
// A grid-stride kernel (rank > 0) or a one-thread kernel (rank 0) finishing statement `st` from
// the value a library call left in its output: `E` lowers the epilogue statement.
void emit_rest_kernel(StmtLowering& E, const std::string& fn, StmtCode& out, CodeWriter& lw);
// Ends the launch code `w` of statement `st` lowered by `L`: when `epilogue_of` (the library's
// reduction) is not null, the kernel of the rest of the statement (emit_rest_kernel); then the
// block's closing brace. The launch text and what it uses go to `out`.
void finish_launch(const Spec& spec, const Statement& st, const Expr* epilogue_of,
                   HelperSet& helpers, const std::string& fn, const StmtLowering& L,
                   CodeWriter& w, StmtCode& out);

}  // namespace sb::vendor_cuda
