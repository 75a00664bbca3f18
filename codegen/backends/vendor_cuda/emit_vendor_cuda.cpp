#include "backends/vendor_cuda/emit_vendor_cuda.h"

#include <set>
#include <string>
#include <vector>

#include "backends/common/emit_common.h"
#include "backends/vendor_cuda/strategies/strategy.h"

namespace sb {

namespace {

class VendorCudaEmitter final : public Emitter {
 public:
  std::string backend() const override { return "vendor_cuda"; }
  std::string extension() const override { return "cu"; }
  std::vector<StrategyInfo> strategies() const override { return vendor_cuda::strategy_infos(); }
  Status check_variant(const Spec& spec, const Variant& v) const override {
    return vendor_cuda::check_fit(vendor_cuda::strategy_of(v), spec, v);
  }
  bool spells(Fn fn) const override { return c_spells(fn); }
  // f16 and bf16 tensors only as the operands of a product cuBLAS takes (cublas_takes).
  Status check_storage(const Spec& spec, const Loc& /*backend_loc*/) const override {
    return storage_only_in_products(
        spec, backend(),
        "as the operands of a matrix product (or a batch of them) of two f16 or two bf16 "
        "operands into an f32 output, which it passes to cublasGemmEx",
        vendor_cuda::cublas_takes);
  }

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

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

GeneratedFile VendorCudaEmitter::print(const Spec& spec) const {
  const std::vector<vendor_cuda::VendorCudaStrategy>& registry = vendor_cuda::strategy_registry();
  vendor_cuda::FileParts parts;
  std::string kernels, launchers;
  std::vector<bool> used(registry.size(), false);  // by registry index
  const auto& variants = backend_variants(spec, backend());

  for (const Variant& v : variants) {
    const vendor_cuda::VendorCudaStrategy& s = vendor_cuda::strategy_of(v);
    used[static_cast<size_t>(&s - registry.data())] = true;
    kernels += wrap_comment("// Variant " + v.name + ": " + s.info.doc + ".") + "\n";
    CodeWriter body(1);
    std::set<int> used_tensors, used_sizes;
    for (size_t k = 0; k < spec.stmts.size(); ++k) {
      const Statement& st = spec.stmts[k];
      const std::string text = source_text(st, spec);
      const std::string fn = "sb_" + v.name + "_s" + std::to_string(k);
      vendor_cuda::StmtCode code;
      s.lower(spec, st, fn, parts, code);
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
    if (s.launcher_setup) s.launcher_setup(fn);
    launchers += "// Variant " + v.name + " (strategy " + v.strategy + ").\n";
    launchers += "static int " + variant_fn(v) + "(const sb_args* sb_a) {\n";
    launchers += fn.str() + "\n" + body.str() + "  return 0;\n}\n\n";
  }

  // What the used strategies need, each once, in registry order.
  std::string library_includes, thrust_includes, macros;
  std::set<std::string> included;
  for (size_t i = 0; i < registry.size(); ++i) {
    if (!used[i]) continue;
    for (const std::string& h : registry[i].library_includes)
      if (included.insert(h).second) library_includes += "#include <" + h + ">\n";
    for (const std::string& h : registry[i].thrust_includes)
      if (included.insert(h).second) thrust_includes += "#include <" + h + ">\n";
    macros += registry[i].macros;
  }

  std::string out = file_header(spec, *this);
  out += "\n#include <cuda_runtime.h>\n";
  out += library_includes;
  out += "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n";
  out += thrust_includes;
  out += "\n#include \"specbench_abi.h\"\n\n";
  out += kMacros;
  // The f16 and bf16 element types the launchers' pointers name (cublasGemmEx reads them).
  if (!variants.empty()) out += storage_types(spec, StorageLang::Cuda);
  out += macros;
  if (!parts.helpers.empty())
    out += banner("Helpers") + parts.helpers.definitions("static inline __host__ __device__") + "\n";
  if (!parts.op_defs.empty()) out += banner("Reduction operators") + parts.op_defs;
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
