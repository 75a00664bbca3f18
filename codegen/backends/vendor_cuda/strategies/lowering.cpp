// The lowering helpers the vendor_cuda strategies share (strategy.h): reduction functors and
// identities, the term functor of a reduction, and the kernel finishing a statement after a
// library call.
#include <string>
#include <vector>

#include "backends/vendor_cuda/strategies/strategy.h"
#include "lower/patterns.h"

namespace sb::vendor_cuda {

namespace {

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

}  // namespace

std::string reduce_op(ReduceOp op, DType t, FileParts& parts) {
  HelperSet& helpers = parts.helpers;
  std::string& defs = parts.op_defs;
  const std::string sfx = scalar(t).suffix;
  const std::string name = std::string("sb_op_") + reduce_name(op) + "_" + sfx;
  if (parts.ops.insert(name).second) {
    std::string body;
    if (op == ReduceOp::Sum || op == ReduceOp::Prod) {
      const bool add = op == ReduceOp::Sum;
      if (scalar(t).kind == ScalarKind::SignedInt) {  // wraps
        helpers.use(wrapping_helper(t, add ? BinOp::Add : BinOp::Mul));
        body = std::string(add ? "sb_add_" : "sb_mul_") + sfx + "(a, b)";
      } else {
        body = add ? "a + b" : "a * b";
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

void finish_launch(const Spec& spec, const Statement& st, const Expr* epilogue_of,
                   HelperSet& helpers, const std::string& fn, const StmtLowering& L,
                   CodeWriter& w, StmtCode& out) {
  if (epilogue_of) {
    Statement epi = epilogue_statement(spec, st, epilogue_of);
    StmtLowering E(spec, epi, &helpers);
    emit_rest_kernel(E, fn + "_rest", out, w);
  }
  w.close();
  out.launch = w.str();
  out.tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
  out.sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
}

}  // namespace sb::vendor_cuda
