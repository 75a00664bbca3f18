// The cub_reduce strategy (strategy.h): a scalar reduction through
// cub::DeviceReduce::TransformReduce over a counting iterator with the reduction's body as the
// transform, then a one-thread kernel for the rest of the statement (`sqrt(...)`, ...).
#include <optional>
#include <string>
#include <vector>

#include "backends/vendor_cuda/strategies/strategy.h"
#include "lower/patterns.h"

namespace sb::vendor_cuda {

namespace {

void emit_cub_reduce(const Spec& spec, const Statement& st, const ScalarReduction& m,
                     FileParts& parts, const std::string& fn, StmtCode& out) {
  HelperSet& helpers = parts.helpers;
  std::string init;
  out.kernels += term_functor(spec, st, *m.reduce, m.k, helpers, fn + "_term", init, out);
  StmtLowering L(spec, st, &helpers);
  CodeWriter w(1);
  w.open("{");
  const IndexVar& kv = st.vars[m.k];
  const std::string lo = L.expr(*kv.lo, w, 0);
  const std::string hi = L.expr(*kv.hi, w, kPrecAdd);
  const std::string out_name = L.tensor_name(st.out);
  const std::string op = reduce_op(m.op, m.type, parts);
  w.line("const int64_t sb_lo = " + lo + ", sb_hi = " + hi + ";");
  w.line("const int64_t sb_count = sb_hi > sb_lo ? sb_hi - sb_lo : 0;  // 0: cub writes the init");
  w.line("const " + fn + "_term sb_term = {" + init + "};");
  w.line("const thrust::counting_iterator<int64_t> sb_index(sb_lo);");
  const std::vector<std::string> args = {
      "sb_tmp",   "sb_tmp_bytes", "sb_index", out_name,
      "sb_count", op + "()",      "sb_term",  reduce_identity(m.op, m.type),
      "sb_stream"};
  const std::string call =
      wrap_call("SB_CUDA_CHECK(cub::DeviceReduce::TransformReduce", args, ");", 2 * w.indent());
  w.line("// Ask cub for its temporary storage size, allocate it on the stream, reduce, free.");
  w.line("void* sb_tmp = NULL;");
  w.line("size_t sb_tmp_bytes = 0;");
  w.line(call);
  w.line("SB_CUDA_CHECK(cudaMallocAsync(&sb_tmp, sb_tmp_bytes, sb_stream));");
  w.line(call);
  w.line("SB_CUDA_CHECK(cudaFreeAsync(sb_tmp, sb_stream));");
  finish_launch(spec, st, m.epilogue ? m.reduce : nullptr, helpers, fn, L, w, out);
}

}  // namespace

VendorCudaStrategy cub_reduce_strategy() {
  VendorCudaStrategy s;
  s.info = {"cub_reduce", "scalar reductions through cub::DeviceReduce", {}, "vendor_reduce"};
  s.shape = kScalarReductionShape;
  s.matches = [](const Spec& spec, const Statement& st) {
    return match_scalar_reduction(spec, st).has_value();
  };
  s.lower = [](const Spec& spec, const Statement& st, const std::string& fn, FileParts& parts,
               StmtCode& out) {
    std::optional<ScalarReduction> m = match_scalar_reduction(spec, st);
    SB_ASSERT(m.has_value(), "cub_reduce variant on a statement that is not a reduction");
    emit_cub_reduce(spec, st, *m, parts, fn, out);
  };
  s.library_includes = {"cub/device/device_reduce.cuh"};
  s.thrust_includes = {"thrust/iterator/counting_iterator.h"};
  return s;
}

}  // namespace sb::vendor_cuda
