#include "backends/vendor_cuda/emit_vendor_cuda.h"

#include <cctype>
#include <optional>
#include <string>

#include "backends/common/emit_common.h"
#include "lower/patterns.h"

namespace sb {

namespace {

class VendorCudaEmitter final : public Emitter {
 public:
  std::string backend() const override { return "vendor_cuda"; }
  std::string extension() const override { return "cu"; }
  std::vector<StrategyInfo> strategies() const override {
    return {
        {"cublas",
         "contractions through cublasSgemm/cublasDgemm (row-major as C^T = B^T A^T)",
         {},
         "vendor_gemm"},
        {"cub_reduce", "scalar reductions through cub::DeviceReduce", {}, "vendor_reduce"},
        {"cub_scan", "inclusive/exclusive prefix scans through cub::DeviceScan", {}, "vendor_scan"},
    };
  }
  Status check_variant(const Spec& spec, const Variant& v) const override;
  bool spells(Fn fn) const override { return c_spells(fn); }

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

bool fits(const Spec& spec, const Statement& st, const std::string& strategy) {
  if (strategy == "cublas") return match_contraction(spec, st).has_value();
  if (strategy == "cub_reduce") return match_scalar_reduction(spec, st).has_value();
  if (strategy == "cub_scan") return match_scan(spec, st).has_value();
  return false;
}

Status VendorCudaEmitter::check_variant(const Spec& spec, const Variant& v) const {
  const char* shape = v.strategy == "cublas"       ? kContractionShape
                      : v.strategy == "cub_reduce" ? kScalarReductionShape
                                                   : kScanShape;
  for (const Statement& st : spec.stmts) {
    if (fits(spec, st, v.strategy)) continue;
    return make_error(v.loc, "variant '" + v.name + "' (strategy " + v.strategy +
                                 ") needs every statement to have the shape " + shape +
                                 "; statement '" + source_text(st, spec) + "' (line " +
                                 std::to_string(st.loc.line) + ") does not");
  }
  return {};
}

const char* const kMacros =
    R"(// Checks a CUDA runtime call, or the launch just made: on failure, prints file:line, what failed
// and the CUDA error string, and returns the error code from the enclosing launcher.
#define SB_CUDA_CHECK(call) SB_CUDA_CHECK_TEXT((call), #call)
#define SB_CHECK_LAUNCH(kernel) SB_CUDA_CHECK_TEXT(cudaGetLastError(), "launch of " #kernel)
#define SB_CUDA_CHECK_TEXT(call, text)                                               \
  do {                                                                               \
    const cudaError_t sb_err = (call);                                               \
    if (sb_err != cudaSuccess) {                                                     \
      fprintf(stderr, "%s:%d: CUDA error in %s: %s\n", __FILE__, __LINE__, text,     \
              cudaGetErrorString(sb_err));                                           \
      return (int)sb_err;                                                            \
    }                                                                                \
  } while (0)

)";

const char* const kCublasMacros =
    R"(// Checks a cuBLAS call: on failure, prints file:line, the call and cuBLAS's status string, and
// returns cudaErrorUnknown from the enclosing launcher.
#define SB_CUBLAS_CHECK(call)                                                        \
  do {                                                                               \
    const cublasStatus_t sb_st = (call);                                             \
    if (sb_st != CUBLAS_STATUS_SUCCESS) {                                            \
      fprintf(stderr, "%s:%d: cuBLAS error in %s: %s\n", __FILE__, __LINE__, #call,  \
              cublasGetStatusString(sb_st));                                         \
      return (int)cudaErrorUnknown;                                                  \
    }                                                                                \
  } while (0)

// One cuBLAS handle per module, created on first use and never destroyed (the CUDA runtime may
// already be shut down when static destructors run).
static cublasHandle_t sb_cublas = NULL;

)";

// The reduction operator of `op` on type `t` as a functor name, defining it into `defs` once.
std::string reduce_op(ReduceOp op, DType t, HelperSet& helpers, std::set<std::string>& defined,
                      std::string& defs) {
  const std::string sfx = scalar(t).suffix;
  const std::string name = std::string("sb_op_") + reduce_name(op) + "_" + sfx;
  if (defined.insert(name).second) {
    std::string body;
    if (op == ReduceOp::Sum) {
      if (scalar(t).kind == ScalarKind::SignedInt) {  // wraps
        helpers.use(wrapping_helper(t, BinOp::Add));
        body = "sb_add_" + sfx + "(a, b)";
      } else {
        body = "a + b";
      }
    } else {
      const bool mx = op == ReduceOp::Max;
      helpers.use(min_max_helper(t, mx));
      body = std::string(mx ? "sb_max_" : "sb_min_") + sfx + "(a, b)";
    }
    const std::string ty = c_type(t);
    defs += "struct " + name + " {\n";
    defs += "  __host__ __device__ " + ty + " operator()(" + ty + " a, " + ty + " b) const { return " +
            body + "; }\n";
    defs += "};\n\n";
  }
  return name;
}

std::string identity(ReduceOp op, DType t) {
  const bool fl = is_float(t);
  switch (op) {
    case ReduceOp::Sum:
      return fl ? float_literal(0.0, t) : "0";
    case ReduceOp::Max:
      return fl ? "-INFINITY" : "INT32_MIN";
    case ReduceOp::Min:
      return fl ? "INFINITY" : "INT32_MAX";
  }
  return "0";
}

// Member declarations and the brace initialiser for a functor capturing `tensors` and `sizes`
// under their C names (so that lowered expressions refer to them unchanged).
void capture(const Spec& spec, const std::set<int>& tensors, const std::set<int>& sizes,
             std::string& members, std::string& init) {
  std::vector<std::string> names;
  for (int t : tensors) {
    const Tensor& tn = spec.tensors[t];
    members += std::string("  const ") + c_type(tn.type) + "* " + c_name(tn.name) + ";\n";
    names.push_back(c_name(tn.name));
  }
  for (int s : sizes) {
    members += "  int64_t " + c_name(spec.sizes[s].name) + ";\n";
    names.push_back(c_name(spec.sizes[s].name));
  }
  for (size_t i = 0; i < names.size(); ++i) init += (i ? ", " : "") + names[i];
}

struct StmtCode {
  std::string kernels;  // functors and __global__ kernels
  std::string launch;   // the launcher's block for the statement (indent 1)
  std::set<int> tensors, sizes;
};

// A grid-stride kernel (rank > 0) or a one-thread kernel (rank 0) finishing statement `st` from
// the value a library call left in its output: `E` lowers the epilogue statement.
void emit_rest_kernel(StmtLowering& E, const std::string& fn, StmtCode& out, CodeWriter& lw) {
  const Spec& spec = E.spec();
  const Statement& st = E.stmt();
  const size_t rank = st.rank();
  CodeWriter kb(1);
  std::string total = "1";
  if (rank > 0) {
    total = E.element_count(st.out, 0);
    kb.line("const int64_t sb_total = " + total + ";");
    kb.line("const int64_t sb_first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;");
    kb.line("const int64_t sb_stride = (int64_t)blockDim.x * gridDim.x;");
    kb.open("for (int64_t sb_t = sb_first; sb_t < sb_total; sb_t += sb_stride) {");
    for (size_t d = 0; d < rank; ++d) {
      std::string e = "sb_t";
      for (size_t j = rank - 1; j > d; --j) e += " / " + E.extent(st.out, j, kPrecMul + 1);
      if (d > 0) e += " % " + E.extent(st.out, d, kPrecMul + 1);
      kb.line("const int64_t " + E.var_name(static_cast<int>(d)) + " = " + e + ";");
    }
    E.assign(kb);
    kb.close();
  } else {
    E.assign(kb);
  }
  const std::set<int> kt = E.used_tensors(), ks = E.used_sizes();
  out.kernels += wrap_call("__global__ void " + fn,
                           kernel_params(spec, kt, ks, st.out, "__restrict__"), " {", 0) +
                 "\n" + kb.str() + "}\n\n";
  out.tensors.insert(kt.begin(), kt.end());
  out.sizes.insert(ks.begin(), ks.end());
  lw.line("// The rest of the statement, elementwise, with the library's result read back.");
  std::vector<std::string> args = call_args(spec, kt, ks);
  std::string cfg = "<<<1, 1, 0, sb_stream>>>";
  if (rank > 0) {
    lw.open("{");
    lw.line("const int64_t sb_total = " + total + ";");
    lw.line("const unsigned sb_grid = (unsigned)(sb_total < 65536 * 256 ? (sb_total + 255) / 256 : "
            "65536);");
    cfg = "<<<sb_grid, 256, 0, sb_stream>>>";
  }
  lw.line(wrap_call(fn + cfg, args, ";", 2 * lw.indent()));
  lw.line("SB_CHECK_LAUNCH(" + fn + ");");
  if (rank > 0) lw.close();
}

void emit_cublas(const Spec& spec, const Statement& st, const Contraction& m, HelperSet& helpers,
                 const std::string& fn, StmtCode& out) {
  StmtLowering L(spec, st, &helpers);
  CodeWriter w(1);
  const IndexVar& kv = st.vars[m.k];
  const bool zero_lo = kv.lo->kind == ExprKind::IntLit && kv.lo->ival == 0;
  w.open("{");
  const std::string x = L.tensor_name(m.x), y = L.tensor_name(m.y), c = L.tensor_name(st.out);
  const std::string xw = L.extent(m.x, 1, kPrecMul), yw = L.extent(m.y, 1, kPrecMul);
  const std::string lo = L.expr(*kv.lo, w, kPrecMul);
  const std::string hi = L.expr(*kv.hi, w, kPrecAdd);
  std::string xp = x, yp = y;
  if (!zero_lo) {
    xp = x + " + " + lo + (m.x_trans ? " * " + xw : "");
    yp = y + " + " + lo + (m.y_trans ? "" : " * " + yw);
  }
  const char* blas = scalar(m.type).blas_prefix;
  SB_ASSERT(blas, std::string("no cuBLAS GEMM of ") + dtype_name(m.type));
  const std::string gemm = std::string("cublas") + static_cast<char>(std::toupper(*blas)) + "gemm";
  const std::string ty = c_type(m.type);
  w.line("const int64_t sb_m = " + L.extent(st.out, 0, 0) + ";");
  w.line("const int64_t sb_n = " + L.extent(st.out, 1, 0) + ";");
  w.line("const int64_t sb_k = " + (zero_lo ? hi : hi + " - " + lo) + ";");
  w.open("if (sb_m > 0 && sb_n > 0 && sb_k <= 0) {  // an empty sum");
  w.line("SB_CUDA_CHECK(cudaMemsetAsync(" + c + ", 0, sizeof(" + ty +
         ") * sb_m * sb_n, sb_stream));");
  w.close();
  w.open("if (sb_m > 0 && sb_n > 0 && sb_k > 0) {");
  w.line("// Row-major " + c + " = " + x + (m.x_trans ? "^T" : "") + " * " + y +
         (m.y_trans ? "^T" : "") + " is column-major " + c + "^T = " + y +
         (m.y_trans ? "" : "^T") + " * " + x + (m.x_trans ? "" : "^T") + ".");
  w.line("const " + ty + " sb_one = " + float_literal(1.0, m.type) + ", sb_zero = " +
         float_literal(0.0, m.type) + ";");
  const std::vector<std::string> args = {"sb_cublas",
                                         m.y_trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N",
                                         m.x_trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N",
                                         "(int)sb_n",
                                         "(int)sb_m",
                                         "(int)sb_k",
                                         "&sb_one",
                                         yp,
                                         "(int)" + L.extent(m.y, 1, kPrecUnary),
                                         xp,
                                         "(int)" + L.extent(m.x, 1, kPrecUnary),
                                         "&sb_zero",
                                         c,
                                         "(int)sb_n"};
  w.line(wrap_call(std::string("SB_CUBLAS_CHECK(") + gemm, args,
                   ");", 2 * w.indent()));
  w.close();
  if (m.epilogue) {
    Statement epi = epilogue_statement(spec, st, m.reduce);
    StmtLowering E(spec, epi, &helpers);
    emit_rest_kernel(E, fn + "_rest", out, w);
  }
  w.close();
  out.launch = w.str();
  out.tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
  out.sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
}

// The functor computing a reduction's term from its index: `struct <fn>_term`.
// Its initialiser (the captured names) goes to `init`; what it uses is added to `out`.
std::string term_functor(const Spec& spec, const Statement& st, const Expr& reduce, int k,
                         HelperSet& helpers, const std::string& name, std::string& init,
                         StmtCode& out) {
  StmtLowering B(spec, st, &helpers);
  CodeWriter fb(2);
  const std::string body = B.expr(*reduce.args[0], fb, 0);
  std::string members;
  capture(spec, B.used_tensors(), B.used_sizes(), members, init);
  out.tensors.insert(B.used_tensors().begin(), B.used_tensors().end());
  out.sizes.insert(B.used_sizes().begin(), B.used_sizes().end());
  std::string s = "// The terms of " + to_string(reduce, spec, &st) + ", by index.\n";
  s += "struct " + name + " {\n" + members;
  s += std::string("  __host__ __device__ ") + c_type(value_type(reduce)) + " operator()(int64_t " +
       B.var_name(k) + ") const {\n";
  s += fb.str();
  s += "    return " + body + ";\n  }\n};\n\n";
  return s;
}

void emit_cub_reduce(const Spec& spec, const Statement& st, const ScalarReduction& m,
                     HelperSet& helpers, std::set<std::string>& ops, std::string& op_defs,
                     const std::string& fn, StmtCode& out) {
  std::string init;
  out.kernels += term_functor(spec, st, *m.reduce, m.k, helpers, fn + "_term", init, out);
  StmtLowering L(spec, st, &helpers);
  CodeWriter w(1);
  w.open("{");
  const IndexVar& kv = st.vars[m.k];
  const std::string lo = L.expr(*kv.lo, w, 0);
  const std::string hi = L.expr(*kv.hi, w, kPrecAdd);
  const std::string out_name = L.tensor_name(st.out);
  const std::string op = reduce_op(m.op, m.type, helpers, ops, op_defs);
  w.line("const int64_t sb_lo = " + lo + ", sb_hi = " + hi + ";");
  w.line("const int64_t sb_count = sb_hi > sb_lo ? sb_hi - sb_lo : 0;  // 0: cub writes the init");
  w.line("const " + fn + "_term sb_term = {" + init + "};");
  w.line("const thrust::counting_iterator<int64_t> sb_index(sb_lo);");
  const std::vector<std::string> args = {"sb_tmp",  "sb_tmp_bytes", "sb_index",
                                         out_name,  "sb_count",     op + "()",
                                         "sb_term", identity(m.op, m.type), "sb_stream"};
  const std::string call =
      wrap_call("SB_CUDA_CHECK(cub::DeviceReduce::TransformReduce", args, ");", 2 * w.indent());
  w.line("// Ask cub for its temporary storage size, allocate it on the stream, reduce, free.");
  w.line("void* sb_tmp = NULL;");
  w.line("size_t sb_tmp_bytes = 0;");
  w.line(call);
  w.line("SB_CUDA_CHECK(cudaMallocAsync(&sb_tmp, sb_tmp_bytes, sb_stream));");
  w.line(call);
  w.line("SB_CUDA_CHECK(cudaFreeAsync(sb_tmp, sb_stream));");
  if (m.epilogue) {
    Statement epi = epilogue_statement(spec, st, m.reduce);
    StmtLowering E(spec, epi, &helpers);
    emit_rest_kernel(E, fn + "_rest", out, w);
  }
  w.close();
  out.launch = w.str();
  out.tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
  out.sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
}

void emit_cub_scan(const Spec& spec, const Statement& st, const Scan& m, HelperSet& helpers,
                   std::set<std::string>& ops, std::string& op_defs, const std::string& fn,
                   StmtCode& out) {
  std::string init;
  out.kernels += term_functor(spec, st, *m.reduce, m.k, helpers, fn + "_term", init, out);
  StmtLowering L(spec, st, &helpers);
  CodeWriter w(1);
  w.open("{");
  const std::string out_name = L.tensor_name(st.out);
  const std::string op = reduce_op(m.op, m.type, helpers, ops, op_defs);
  w.line("const int64_t sb_count = " + L.extent(st.out, 0, 0) + ";");
  w.line("const " + fn + "_term sb_term = {" + init + "};");
  w.line("const auto sb_in = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), "
         "sb_term);");
  std::vector<std::string> args = {"sb_tmp", "sb_tmp_bytes", "sb_in", out_name, op + "()"};
  if (!m.inclusive) args.push_back(identity(m.op, m.type));
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
  w.close();
  out.launch = w.str();
  out.tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
  out.sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
}

GeneratedFile VendorCudaEmitter::print(const Spec& spec) const {
  HelperSet helpers;
  std::string kernels, launchers, op_defs;
  std::set<std::string> ops;
  bool cublas = false, reduce = false, scan = false;
  const auto& variants = backend_variants(spec, backend());

  for (const Variant& v : variants) {
    const StrategyInfo* info = find_strategy(*this, v.strategy);
    SB_ASSERT(info != nullptr, "unknown vendor_cuda strategy " + v.strategy);
    kernels += "// Variant " + v.name + ": " + info->doc + ".\n\n";
    CodeWriter body(1);
    std::set<int> used_tensors, used_sizes;
    for (size_t k = 0; k < spec.stmts.size(); ++k) {
      const Statement& st = spec.stmts[k];
      const std::string text = source_text(st, spec);
      const std::string fn = "sb_" + v.name + "_s" + std::to_string(k);
      StmtCode code;
      if (v.strategy == "cublas") {
        std::optional<Contraction> m = match_contraction(spec, st);
        SB_ASSERT(m.has_value(), "cublas variant on a statement that is not a contraction");
        emit_cublas(spec, st, *m, helpers, fn, code);
        cublas = true;
      } else if (v.strategy == "cub_reduce") {
        std::optional<ScalarReduction> m = match_scalar_reduction(spec, st);
        SB_ASSERT(m.has_value(), "cub_reduce variant on a statement that is not a reduction");
        emit_cub_reduce(spec, st, *m, helpers, ops, op_defs, fn, code);
        reduce = true;
      } else {
        SB_ASSERT(v.strategy == "cub_scan", "vendor_cuda strategy without a lowering");
        std::optional<Scan> m = match_scan(spec, st);
        SB_ASSERT(m.has_value(), "cub_scan variant on a statement that is not a scan");
        emit_cub_scan(spec, st, *m, helpers, ops, op_defs, fn, code);
        scan = true;
      }
      if (!code.kernels.empty()) kernels += "// " + text + "\n" + code.kernels;
      if (k > 0) body.line("");
      body.line("// " + text);
      body.raw(code.launch);
      used_tensors.insert(code.tensors.begin(), code.tensors.end());
      used_sizes.insert(code.sizes.begin(), code.sizes.end());
    }
    CodeWriter fn(1);
    unpack_args(spec, "sb_a", used_tensors, used_sizes, fn);
    fn.line("cudaStream_t sb_stream = (cudaStream_t)sb_a->stream;");
    if (v.strategy == "cublas") {
      fn.line("if (!sb_cublas) SB_CUBLAS_CHECK(cublasCreate(&sb_cublas));");
      fn.line("SB_CUBLAS_CHECK(cublasSetStream(sb_cublas, sb_stream));");
    }
    launchers += "// Variant " + v.name + " (strategy " + v.strategy + ").\n";
    launchers += "static int " + variant_fn(v) + "(const sb_args* sb_a) {\n";
    launchers += fn.str() + "\n" + body.str() + "  return 0;\n}\n\n";
  }

  std::string out = file_header(spec, *this);
  out += "\n#include <cuda_runtime.h>\n";
  if (cublas) out += "#include <cublas_v2.h>\n";
  if (reduce) out += "#include <cub/device/device_reduce.cuh>\n";
  if (scan) out += "#include <cub/device/device_scan.cuh>\n";
  out += "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n";
  if (reduce || scan) out += "#include <thrust/iterator/counting_iterator.h>\n";
  if (scan) out += "#include <thrust/iterator/transform_iterator.h>\n";
  out += "\n#include \"specbench_abi.h\"\n\n";
  out += kMacros;
  if (cublas) out += kCublasMacros;
  if (!helpers.empty())
    out += banner("Helpers") + helpers.definitions("static inline __host__ __device__") + "\n";
  if (!op_defs.empty()) out += banner("Reduction operators") + op_defs;
  out += banner("Kernels and functors: per variant and statement") + kernels;
  out += banner("Launchers: one function per variant, running its statements in order") + launchers;
  out += banner("Dispatch") + dispatch_section(spec, backend());
  return {spec.name + "/" + backend() + "/" + spec.name + "." + extension(), out};
}

}  // namespace

const Emitter& vendor_cuda_emitter() {
  static const VendorCudaEmitter kEmitter;
  return kEmitter;
}

}  // namespace sb
