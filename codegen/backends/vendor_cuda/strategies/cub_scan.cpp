// The cub_scan strategy (strategy.h): a prefix scan through cub::DeviceScan::InclusiveScan or
// ExclusiveScan over a transform iterator of the scan's terms.
#include <optional>
#include <string>
#include <vector>

#include "backends/vendor_cuda/strategies/strategy.h"
#include "lower/patterns.h"

namespace sb::vendor_cuda {

namespace {

void emit_cub_scan(const Spec& spec, const Statement& st, const Scan& m, FileParts& parts,
                   const std::string& fn, StmtCode& out) {
  HelperSet& helpers = parts.helpers;
  std::string init;
  out.kernels += term_functor(spec, st, *m.reduce, m.k, helpers, fn + "_term", init, out);
  StmtLowering L(spec, st, &helpers);
  CodeWriter w(1);
  w.open("{");
  const std::string out_name = L.tensor_name(st.out);
  const std::string op = reduce_op(m.op, m.type, parts);
  w.line("const int64_t sb_count = " + L.extent(st.out, 0, 0) + ";");
  w.line("const " + fn + "_term sb_term = {" + init + "};");
  w.line("const auto sb_in = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), "
         "sb_term);");
  std::vector<std::string> args = {"sb_tmp", "sb_tmp_bytes", "sb_in", out_name, op + "()"};
  if (!m.inclusive) args.push_back(reduce_identity(m.op, m.type));
  args.push_back("sb_count");
  args.push_back("sb_stream");
  const std::string call =
      m.inclusive ? "cub::DeviceScan::InclusiveScan" : "cub::DeviceScan::ExclusiveScan";
  w.open("if (sb_count > 0) {");
  const std::string text = wrap_call("SB_CUDA_CHECK(" + call, args, ");", 2 * w.indent());
  w.line("// Ask cub for its temporary storage size, allocate it on the stream, scan, free.");
  w.line("void* sb_tmp = NULL;");
  w.line("size_t sb_tmp_bytes = 0;");
  w.line(text);
  w.line("SB_CUDA_CHECK(cudaMallocAsync(&sb_tmp, sb_tmp_bytes, sb_stream));");
  w.line(text);
  w.line("SB_CUDA_CHECK(cudaFreeAsync(sb_tmp, sb_stream));");
  w.close();
  finish_launch(spec, st, nullptr, helpers, fn, L, w, out);
}

}  // namespace

VendorCudaStrategy cub_scan_strategy() {
  VendorCudaStrategy s;
  s.info = {"cub_scan", "inclusive/exclusive prefix scans through cub::DeviceScan", {},
            "vendor_scan"};
  s.shape = kScanShape;
  s.matches = [](const Spec& spec, const Statement& st) {
    return match_scan(spec, st).has_value();
  };
  s.lower = [](const Spec& spec, const Statement& st, const std::string& fn, FileParts& parts,
               StmtCode& out) {
    std::optional<Scan> m = match_scan(spec, st);
    SB_ASSERT(m.has_value(), "cub_scan variant on a statement that is not a scan");
    emit_cub_scan(spec, st, *m, parts, fn, out);
  };
  s.library_includes = {"cub/device/device_scan.cuh"};
  s.thrust_includes = {"thrust/iterator/counting_iterator.h", "thrust/iterator/transform_iterator.h"};
  return s;
}

}  // namespace sb::vendor_cuda
