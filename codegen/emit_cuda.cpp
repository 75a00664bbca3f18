#include "emit_cuda.h"

#include "emit_common.h"

namespace sb {

namespace {

class CudaEmitter final : public Emitter {
 public:
  std::string backend() const override { return "cuda"; }
  std::string extension() const override { return "cu"; }
  std::vector<StrategyInfo> strategies() const override {
    const ParamInfo block{"block_size", 256, 32, 1024, true, "threads per block"};
    const ParamInfo per_sm{
        "blocks_per_sm", 4, 1, 32, false, "grid size cap, in blocks per streaming multiprocessor"};
    return {
        {"thread_per_output", "one thread per output element, one launch per statement", {block}},
        {"grid_stride", "a grid-stride loop over output elements", {block, per_sm}},
    };
  }
  GeneratedFile emit(const Spec& spec) const override;
};

const char* const kMacros =
    R"(// Every launch goes through SB_LAUNCH. A CUDA simulator may define it (and the CUDA names used
// here) before this point to compile the same text with a plain C++ compiler.
#ifndef SB_LAUNCH
#define SB_LAUNCH(kernel, grid, block, smem, stream, ...) \
  kernel<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#endif

// Checks a CUDA runtime call, or the launch just made: on failure, prints file:line, what failed
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

// Binds the output indices from the flat output index sb_t (row-major de-linearisation).
void bind_outputs(StmtLowering& L, CodeWriter& w) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  for (size_t d = 0; d < rank; ++d) {
    // Index d = sb_t / (extents after d) % extent d; the outermost needs no modulo.
    std::string e = "sb_t";
    for (size_t j = rank - 1; j > d; --j) e += " / " + L.extent(st.out, j, kPrecMul + 1);
    if (d > 0) e += " % " + L.extent(st.out, d, kPrecMul + 1);
    w.line("const int64_t " + L.var_name(static_cast<int>(d)) + " = " + e + ";");
  }
}

// Writes the body of the statement's kernel into `w`.
void emit_kernel_body(StmtLowering& L, bool grid_stride, CodeWriter& w) {
  const Statement& st = L.stmt();
  if (st.rank() == 0) {
    w.line("// A scalar output: one thread (the launch is <<<1, 1>>>).");
    L.assign(w);
    return;
  }
  w.line("const int64_t sb_total = " + L.element_count(st.out, 0) + ";");
  if (grid_stride) {
    w.line("const int64_t sb_first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;");
    w.line("const int64_t sb_stride = (int64_t)blockDim.x * gridDim.x;");
    w.open("for (int64_t sb_t = sb_first; sb_t < sb_total; sb_t += sb_stride) {");
  } else {
    w.line("const int64_t sb_t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;");
    w.line("if (sb_t >= sb_total) return;");
  }
  bind_outputs(L, w);
  L.assign(w);
  if (grid_stride) w.close();
}

GeneratedFile CudaEmitter::emit(const Spec& spec) const {
  HelperSet helpers;
  std::string kernels, launchers;
  const auto& variants = backend_variants(spec, backend());

  for (const Variant& v : variants) {
    const StrategyInfo* info = find_strategy(*this, v.strategy);
    SB_ASSERT(info != nullptr, "unknown cuda strategy " + v.strategy);
    const bool grid_stride = v.strategy == "grid_stride";
    SB_ASSERT(grid_stride || v.strategy == "thread_per_output",
              "cuda strategy without a lowering: " + v.strategy);
    const int64_t block = param(v, *info, "block_size");
    const std::string bs = std::to_string(block);

    kernels += "// Variant " + v.name + ": " + info->doc + ".\n\n";
    CodeWriter body(1);
    std::set<int> used_tensors, used_sizes;
    bool any_rank = false;
    for (size_t k = 0; k < spec.stmts.size(); ++k) {
      const Statement& st = spec.stmts[k];
      const std::string text = to_string(st, spec);
      const bool scalar = st.rank() == 0;
      any_rank = any_rank || !scalar;
      StmtLowering L(spec, st, &helpers);
      CodeWriter kb(1);
      emit_kernel_body(L, grid_stride, kb);

      const std::string fn = "sb_" + v.name + "_s" + std::to_string(k);
      const std::string head =
          "__global__ void " + (scalar ? std::string() : "__launch_bounds__(" + bs + ") ") + fn;
      kernels += "// " + text + "\n";
      kernels +=
          wrap_call(head,
                    kernel_params(spec, L.used_tensors(), L.used_sizes(), st.out, "__restrict__"),
                    " {", 0) +
          "\n";
      kernels += kb.str() + "}\n\n";

      // The launcher's block for this statement. The launch passes exactly the kernel's
      // parameters, so take them before the launcher's own code records more uses.
      const std::set<int> kt = L.used_tensors(), ks = L.used_sizes();
      if (k > 0) body.line("");
      body.line("// " + text);
      body.open("{");
      std::string grid = "1", threads = "1";
      if (!scalar) {
        body.line("const int64_t sb_total = " + L.element_count(st.out, 0) + ";");
        if (grid_stride) {
          body.line("const int64_t sb_blocks = (sb_total + " + std::to_string(block - 1) + ") / " +
                    bs + ";");
          body.line(
              "const unsigned sb_grid = (unsigned)(sb_blocks < sb_max_grid ? sb_blocks : "
              "sb_max_grid);");
        } else {
          body.line("const unsigned sb_grid = (unsigned)((sb_total + " + std::to_string(block - 1) +
                    ") / " + bs + ");");
        }
        grid = "sb_grid";
        threads = bs;
      }
      std::vector<std::string> args = {fn, grid, threads, "0", "sb_stream"};
      for (const auto& a : call_args(spec, kt, ks)) args.push_back(a);
      body.line(wrap_call("SB_LAUNCH", args, ";", 2 * body.indent()));
      body.line("SB_CHECK_LAUNCH(" + fn + ");");
      body.close();
      used_tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
      used_sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
    }

    CodeWriter fn(1);
    unpack_args(spec, "sb_a", used_tensors, used_sizes, fn);
    fn.line("cudaStream_t sb_stream = (cudaStream_t)sb_a->stream;");
    if (grid_stride && any_rank) {
      fn.line("int sb_device = 0;");
      fn.line("SB_CUDA_CHECK(cudaGetDevice(&sb_device));");
      fn.line("int sb_sm_count = 0;");
      fn.line("SB_CUDA_CHECK(");
      fn.line(
          "    cudaDeviceGetAttribute(&sb_sm_count, cudaDevAttrMultiProcessorCount, sb_device));");
      fn.line("const int64_t sb_max_grid = (int64_t)sb_sm_count * " +
              std::to_string(param(v, *info, "blocks_per_sm")) + ";  // blocks_per_sm");
    }
    launchers += "// Variant " + v.name + " (strategy " + v.strategy + ").\n";
    launchers += "static int " + variant_fn(v) + "(const sb_args* sb_a) {\n";
    launchers += fn.str() + "\n" + body.str() + "  return 0;\n}\n\n";
  }

  std::string out = file_header(spec, *this);
  out +=
      "\n#include <cuda_runtime.h>\n#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n\n";
  out += "#include \"specbench_abi.h\"\n\n";
  out += kMacros;
  if (!helpers.empty())
    out += banner("Helpers") + helpers.definitions("static inline __host__ __device__") + "\n";
  out += banner("Kernels: one __global__ function per variant and statement") + kernels;
  out +=
      banner("Launchers: one function per variant, launching its statements in order") + launchers;
  out += banner("Dispatch") + dispatch_section(spec, backend());
  return {spec.name + "/" + backend() + "/" + spec.name + "." + extension(), out};
}

}  // namespace

const Emitter& cuda_emitter() {
  static const CudaEmitter kEmitter;
  return kEmitter;
}

}  // namespace sb
