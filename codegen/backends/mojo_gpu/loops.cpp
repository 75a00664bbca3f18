// The mojo_gpu printer's spelling of a kernel body written once as loop IR (lower/gpu_bodies.h),
// which the Mojo loop printer (backends/mojo/print_loops.h) prints.
#include "backends/common/loop_leaves.h"
#include "backends/mojo/print_loops.h"
#include "backends/mojo_gpu/gpu_gen.h"

namespace sb::mojo_gpu {

class Gen::Leaves : public GpuLeaves<MojoStmt, PyWriter> {
 public:
  Leaves(Gen& g, MojoStmt& L, PyWriter& w) : GpuLeaves(L, w), g_(g) {}
  std::string warp(loops::WarpOp w, ReduceOp op, DType t, const std::string& value) override {
    switch (w) {
      case loops::WarpOp::AllReduce:
        return g_.warp_allreduce(L_, op, t) + "(" + value + ")";
      case loops::WarpOp::Scan:
        return g_.warp_scan(L_, op, t) + "(" + value + ")";
    }
    SB_ASSERT(false, "a warp reduction the mojo_gpu printer does not spell");
    return "";
  }
  // Relaxed, as CUDA's atomics (Mojo's default orders them sequentially): fetch_add for sums,
  // Mojo's integer atomic max and min (CUDA's atomicMax, atomicMin), else a compare-and-swap
  // loop on the bits (atomic_cas).
  void atomic_fold(int tensor, const std::string& index, ReduceOp op, DType t,
                   const std::string& value) override {
    g_.use("std.atomic", {"Atomic", "Ordering"});
    const std::string name = L_.tensor_name(tensor);
    const std::string p = index == "0" ? name : name + ".unsafe_offset(" + index + ")";
    if (op == ReduceOp::Sum)
      w_.line("_ = Atomic.fetch_add[ordering=Ordering.RELAXED](" + p + ", " + value + ")");
    else if (!is_float(t) && op != ReduceOp::Prod)
      w_.line(std::string("Atomic.") + (op == ReduceOp::Max ? "max" : "min") +
              "[ordering=Ordering.RELAXED](" + p + ", " + value + ")");
    else
      w_.line(g_.atomic_cas(L_, op, t) + "(" + p + ", " + value + ")");
  }
  // The loop IR names a GPU index as Mojo does (thread_idx.x, ...); the module imports its
  // first part.
  std::string gpu_index(loops::GpuIndex g) override {
    const std::string name = loops::gpu_index_name(g);
    g_.use_gpu({name.substr(0, name.find('.')).c_str()});
    return "Int(" + name + ")";
  }
  void barrier(bool warp) override {
    const char* name = warp ? "syncwarp" : "barrier";
    g_.use_gpu({name});
    w_.line(std::string(name) + "()");
  }
  // The dynamic array is external memory, named after itself (one name per element type, as in
  // the cuda file).
  void shared_array(const std::string& name, DType t, const std::string& count) override {
    if (!count.empty()) {
      w_.line(g_.shared_array(name, count, t));
      return;
    }
    g_.use("max.gpu.memory", {"AddressSpace", "external_memory"});
    w_.line("var " + name + " = external_memory[" + mojo_scalar_type(t) +
            ", address_space=AddressSpace.SHARED, alignment=16, name=\"" + name + "\"]()");
  }
  // f16 and bf16 elements widened to f32 as they are loaded.
  std::string element(int t, const std::string& flat) override {
    return widened(g_.spec_.tensors[t].type, L_.tensor_name(t) + "[unsafe_offset=" + flat + "]");
  }
  std::string element_vector(int t, const std::string& flat, int lanes) override {
    return L_.tensor_name(t) + ".unsafe_load[" + width(t, lanes) + "](" + flat + ")";
  }
  std::string address(int t) override { return "Int(" + L_.tensor_name(t) + ")"; }
  void put(int t, const std::string& flat, const std::string& value, int lanes) override {
    const DType d = g_.spec_.tensors[t].type;
    if (lanes == 0) {
      w_.line(L_.tensor_name(t) + "[unsafe_offset=" + flat + "] = " + narrowed(d, value));
      return;
    }
    SB_ASSERT(!is_storage_type(d), "a vector store of f16 or bf16 elements through put");
    w_.line(L_.tensor_name(t) + ".unsafe_store[" + width(t, lanes) + "](" + flat + ", " + value +
            ")");
  }

 private:
  // The parameters of a vector access of `lanes` elements of tensor `t`, aligned to its size.
  std::string width(int t, int lanes) const {
    return "width=" + std::to_string(lanes) +
           ", alignment=" + std::to_string(lanes * dtype_bytes(g_.spec_.tensors[t].type));
  }
  Gen& g_;
};

void Gen::print_body(const loops::Block& b, MojoStmt& L, PyWriter& w,
                     std::function<MojoStmt&(int)> others) {
  Leaves leaves(*this, L, w);
  if (others) leaves.set_statements(std::move(others));
  print_mojo_block(b, leaves, w);
}

}  // namespace sb::mojo_gpu
