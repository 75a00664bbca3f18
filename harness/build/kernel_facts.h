// Static facts of compiled CUDA kernels, as ptxas reports them.
//
// The cuda and vendor_cuda modules are compiled with `nvcc -Xptxas -v`, whose report gives, for
// every entry function (__global__ kernel) and every SM architecture compiled, the registers per
// thread, the barriers, the static shared memory, the stack frame and the bytes spilled. The
// build (toolchain.h) parses the report and keeps the facts in the module cache, beside the
// module (<entry>.so.facts, see write_facts_file), so that a cache hit gives them too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/diag.h"

namespace sb {

// One entry function compiled for one architecture.
struct KernelFacts {
  std::string symbol;          // as ptxas names it (mangled): "_Z18sb_tiled_matmul_s0PKfS0_Pfll"
  int arch = 0;                // the SM architecture: 80 for sm_80 (a suffix, sm_90a, is dropped)
  int registers = 0;           // per thread
  int barriers = 0;            // named barriers per block ("used N barriers"; 0 when not said)
  int64_t shared_bytes = 0;    // static shared memory per block ("N bytes smem"; 0 when not said)
  int64_t stack_bytes = 0;     // the entry's stack frame, per thread
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;

  bool operator==(const KernelFacts&) const = default;
};

// The entry functions of `nvcc -Xptxas -v` (or `ptxas -v`) output, in report order. Lines that
// are not ptxas's (compiler warnings) are ignored, and so are the properties of functions that
// are not entries (a __noinline__ __device__ function's stack frame). Error (naming the line)
// when the report does not have the shape of one: a "Used N registers" line outside an entry, an
// entry without one, a number that does not parse, one entry reported twice for an architecture.
Result<std::vector<KernelFacts>> parse_ptxas_report(std::string_view output);

// `output` without ptxas's own lines ("ptxas info    : ..." and the stack-frame lines under
// them): what is left is the compiler's warnings, as they would be without -Xptxas -v.
std::string strip_ptxas_report(std::string_view output);

// A readable name for a kernel symbol, without its parameter types: "_Z18sb_tiled_matmul_s0PKf..."
// gives "sb_tiled_matmul_s0", a nested name "cub::...::DeviceReduceKernel<…>" (template
// arguments elided), and an unmangled name (extern "C") itself. Only the name's prefix is
// decoded (Itanium ABI: <length><identifier>, nested N...E, template arguments I...E); a symbol
// it cannot read is returned as it is.
std::string readable_kernel_name(const std::string& symbol);

// The facts file kept beside a cached module: JSON {"format": "specbench-kernel-facts",
// "version": 1, "module": <the module's hash line, toolchain.h>, "error": "" or why the report
// could not be read, "kernels": [{symbol, arch, registers, barriers, shared_bytes, stack_bytes,
// spill_store_bytes, spill_load_bytes}, ...]}.
std::string facts_file_text(const std::vector<KernelFacts>& facts, const std::string& error,
                            const std::string& module_hash);

// Reads a facts file's text back; fails (saying why) unless it is one facts_file_text wrote for
// the module whose hash line is `module_hash`. `error` receives the recorded error.
Result<std::vector<KernelFacts>> read_facts_file_text(std::string_view text,
                                                      const std::string& module_hash,
                                                      std::string& error);

}  // namespace sb
