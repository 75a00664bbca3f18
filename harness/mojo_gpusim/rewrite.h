// mojo_gpusim: NVVM IR (from `mojo build --emit llvm --target-triple nvptx64-nvidia-cuda`)
// rewritten for the host, so that the kernels run on the CUDA simulator (harness/cudasim/).
//
// The rewrite: thread and block registers become calls into the simulator (sb_gpusim_sreg),
// barriers its block barrier, warp shuffles, votes and __syncwarp its warp operations;
// addrspace(3) globals become per-block shared arrays the simulator hands out
// (sb_gpusim_shared); every load, store, atomic and memory intrinsic that does not touch the
// stack is preceded by sb_gpusim_access (shared-memory races, global-memory races, traffic);
// NVVM math intrinsics and PTX inline-asm math become host math; address spaces are stripped;
// the ptx_kernel convention and NVPTX triple and datalayout become the host's. Each kernel
// `K(args...)` gets an entry `K__sb_gpusim_entry(ptr argv)` that reads its arguments from 8-byte
// slots, for sb_gpusim_launch. Anything NVVM-specific it does not know is an error naming it,
// never dropped silently.
#pragma once

#include <string>
#include <vector>

namespace sb::gpusim {

struct RewriteResult {
  std::string ir;                    // host LLVM IR text (empty on failure)
  std::vector<std::string> kernels;  // the ptx_kernel functions found
  std::string error;                 // "" on success
};

// Rewrites the NVVM IR text `nvvm_ir` (named `name` in messages).
RewriteResult rewrite(const std::string& nvvm_ir, const std::string& name);

// Compiles host IR text into a shared library with clang (`clang`, e.g. "clang-19"), linked
// against libspecbench_cudasim in `runtime_dir`. Returns "" or the error with clang's output.
std::string compile(const std::string& host_ir, const std::string& out_so,
                    const std::string& clang, const std::string& runtime_dir);

}  // namespace sb::gpusim
