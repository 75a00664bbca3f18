#include "backends/cuda/emit_cuda.h"

#include "backends/cuda/cuda_kernels.h"
#include "backends/common/emit_common.h"

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
    auto pow2 = [](const char* name, int64_t def, int64_t lo, int64_t hi, const char* doc) {
      return ParamInfo{name, def, lo, hi, true, doc};
    };
    return {
        {"thread_per_output", "one thread per output element, one launch per statement", {block}},
        {"grid_stride", "a grid-stride loop over output elements", {block, per_sm}},
        {"vectorized",
         "elementwise statements with 16-byte vector loads and stores (float4, double2, int4) "
         "and a scalar tail; scalar when a buffer is not 16-byte aligned",
         {block, per_sm}},
        {"block_reduce",
         "a reduction to a scalar: per-block shared-memory trees, then one block over the "
         "partial results",
         {block, per_sm}},
        {"warp_reduce",
         "a reduction to a scalar: warp shuffles and one value per warp in shared memory, then "
         "one block over the partial results",
         {block, per_sm}},
        {"atomic_reduce",
         "a reduction to a scalar: per-block warp-shuffle reductions combined atomically into "
         "the output",
         {block, per_sm}},
        {"warp_per_row",
         "row-wise reductions: one warp per output element, lanes striding the reduction, a "
         "shuffle combine; a row group is one kernel, a warp owning a row, row temps in "
         "registers or shared memory",
         {block}},
        {"block_per_row",
         "row-wise reductions: one block per output element, a shared-memory tree; a row group "
         "is one kernel, a block owning a row (shuffle and shared-memory reductions), row temps "
         "in registers or shared memory, row-invariant reads staged once per block",
         {block}},
        {"tiled_matmul",
         "matrix products: tile x tile output tiles, with a and b staged through shared memory",
         {pow2("tile", 16, 8, 32, "output tile edge; the block is tile x tile threads")}},
        {"register_blocked_matmul",
         "matrix products: bm x bn output tiles, tm x tn outputs per thread in registers, "
         "vector loads of a and b where aligned",
         {pow2("bm", 64, 16, 256, "rows of the block's output tile"),
          pow2("bn", 64, 16, 256, "columns of the block's output tile"),
          pow2("bk", 8, 4, 64, "k values per shared-memory stage"),
          pow2("tm", 4, 1, 16, "rows per thread"), pow2("tn", 4, 1, 16, "columns per thread")}},
        {"tiled_transpose",
         "transposed reads through padded shared-memory tiles ([tile][tile + 1])",
         {pow2("tile", 32, 8, 64, "tile edge"),
          pow2("block_rows", 8, 1, 64, "thread rows per block; each does tile / block_rows rows")}},
        {"tiled_stencil",
         "reads at offsets of the output index, staged with their halo in dynamic shared "
         "memory",
         {block,
          pow2("tile_x", 32, 1, 1024,
               "2D and 3D: tile width; a 2D block is tile_x x (block_size / tile_x)"),
          pow2(
              "tile_y", 4, 1, 1024,
              "3D: tile height; the block is tile_x x tile_y x (block_size / (tile_x * tile_y))")}},
        {"scan",
         "prefix reductions in three phases: per-block totals, their scan in one block, and a "
         "block scan of each chunk from its carry",
         {block}},
    };
  }
  Status check_variant(const Spec& spec, const Variant& v) const override {
    const StrategyInfo* info = find_strategy(*this, v.strategy);
    SB_ASSERT(info != nullptr, "unknown cuda strategy " + v.strategy);
    return cuda::check_strategy(spec, v, *info);
  }
  bool spells(Fn fn) const override { return c_spells(fn); }

 protected:
  GeneratedFile print(const Spec& spec) const override;
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

const char* const kSharedMacros =
    R"(// Shared memory is declared through these, so that a CUDA simulator can track each access
// (races, indices out of range); under nvcc they are plain __shared__ arrays.
#ifndef SB_SHARED_ARRAY
#define SB_SHARED_ARRAY(T, name, n) __shared__ T name[n]
#endif
#ifndef SB_DYNAMIC_SHARED
#define SB_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#endif

)";

GeneratedFile CudaEmitter::print(const Spec& spec) const {
  cuda::FileParts file;
  std::string kernels, launchers;
  for (const Variant& v : backend_variants(spec, backend())) {
    const StrategyInfo* info = find_strategy(*this, v.strategy);
    SB_ASSERT(info != nullptr, "unknown cuda strategy " + v.strategy);
    const cuda::VariantCode code = cuda::lower_variant(spec, v, *info, file);
    kernels += code.kernels;
    launchers += code.launcher;
  }

  std::string out = file_header(spec, *this);
  out +=
      "\n#include <cuda_runtime.h>\n#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n";
  if (file.needs_string_h) out += "#include <string.h>\n";
  out += "\n#include \"specbench_abi.h\"\n\n";
  out += kMacros;
  const bool shared = kernels.find("SB_SHARED_ARRAY(") != std::string::npos ||
                      kernels.find("SB_DYNAMIC_SHARED(") != std::string::npos;
  if (shared) out += kSharedMacros;
  if (!file.helpers.empty())
    out += banner("Helpers") + file.helpers.definitions("static inline __host__ __device__") + "\n";
  if (!file.device_helpers.empty()) {
    out += banner("Device helpers");
    for (const auto& [name, def] : file.device_helpers) out += def + "\n";
  }
  if (!file.globals.empty())
    out += banner("Scratch buffers in device memory (one launch of a variant at a time)") +
           file.globals + "\n";
  out += banner("Kernels: one __global__ function per variant and statement (or row group)") + kernels;
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
