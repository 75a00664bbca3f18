#include "backends/mojo_gpu/strategies.h"

#include "backends/common/emit_common.h"
#include "support/diag.h"

namespace sb::mojo_gpu {

const std::vector<KernelForm>& kernel_forms() {
  static const std::vector<KernelForm> kForms = {
      {GpuKernel::ThreadPerElement, true, "one thread per output element"},
      {GpuKernel::GridStride, true, "a grid-stride loop over output elements"},
      {GpuKernel::Vectorized, true, "a grid-stride loop over 16-byte SIMD loads and stores"},
      {GpuKernel::TreeReduce, true, "per-block shared-memory trees, then one block"},
      {GpuKernel::WarpReduce, true, "per-block warp shuffles, then one block"},
      {GpuKernel::AtomicReduce, true, "per-block warp shuffles added atomically"},
      {GpuKernel::WarpPerRow, true, "a warp per output element, lanes striding its reduction"},
      {GpuKernel::BlockPerRow, true, "a block per output element, a shared-memory tree"},
      {GpuKernel::TiledMatmul, true, "shared-memory matmul tiles"},
      {GpuKernel::RegisterBlocked, true, "register-blocked matmul tiles, vector loads"},
      {GpuKernel::TiledTranspose, true, "padded shared-memory transpose tiles"},
      {GpuKernel::TiledStencil, true, "a shared-memory stencil tile with halo"},
      {GpuKernel::Scan, true, "a three-phase scan: block totals, their scan, chunk scans"},
      {GpuKernel::FusedRows, true, "a row group as one kernel, a warp or a block owning a row"},
      {GpuKernel::FusedAttention, true,
       "an attention group as one kernel, an online softmax over blocks of keys"},
  };
  return kForms;
}

const KernelForm& kernel_form(GpuKernel kind) {
  for (const KernelForm& f : kernel_forms())
    if (f.kind == kind) return f;
  SB_ASSERT(false, std::string("GPU kernel form without a mojo_gpu record: ") +
                       gpu_kernel_name(kind));
  return kernel_forms().front();
}

GpuMapping variant_mapping(const Spec& spec, const Variant& v) {
  const cuda::CudaStrategy* s = cuda::find_cuda_strategy(v.strategy);
  SB_ASSERT(s != nullptr, "unknown cuda strategy " + v.strategy);
  return gpu_mapping(spec, s->fuse, s->place);
}

namespace {

// The first call in `e` that Mojo's std.math cannot compile for NVIDIA GPUs: in Mojo 1.2.0,
// f64 sin and cos ("DType.float64 is not supported for cos on NVIDIA GPU"). Null when none.
const Expr* unsupported_call(const Expr& e) {
  if (e.kind == ExprKind::Call && (e.fn == Fn::Sin || e.fn == Fn::Cos) &&
      value_type(e) == DType::F64)
    return &e;
  for (const auto& a : e.args)
    if (const Expr* c = unsupported_call(*a)) return c;
  return nullptr;
}

}  // namespace

std::string missing_reason(const Spec& spec, const Variant& v) {
  for (const Statement& st : spec.stmts) {
    if (const Expr* c = unsupported_call(*st.rhs))
      return std::string("f64 ") + (c->fn == Fn::Sin ? "sin" : "cos") + " in '" +
             source_text(st, spec) + "' (Mojo 1.2.0's std.math has no f64 sin or cos on NVIDIA " +
             "GPUs)";
  }
  for (const GpuStep& g : variant_mapping(spec, v).steps) {
    const KernelForm& f = kernel_form(g.kind);
    if (!f.printed)
      return std::string("its ") + gpu_kernel_name(g.kind) + " kernel (" + f.about + ")";
  }
  return "";
}

}  // namespace sb::mojo_gpu
