// Which kernels OpenBLAS runs, so that the vendor_cpu column compares against the library at its
// best on this machine.
//
// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels when it is loaded, from the CPU's
// family and model. A model newer than the library knows falls back to its oldest x86-64 kernels:
// OpenBLAS 0.3.21 on this VM's Xeon (family 6, model 207, AVX-512) says "Prescott" (SSE3), and its
// sgemm at n = 2048 runs at 45 GFLOP/s where "SkylakeX" runs at 227. Every "x vs vendor" figure
// would then compare against a fifth of the library.
//
// The rule: when the core OpenBLAS detects uses a narrower vector ISA than the CPU offers, and the
// CPU's ISA has an OpenBLAS core of its own, specbench sets OPENBLAS_CORETYPE to that core before
// any module that links OpenBLAS is loaded. A user's own OPENBLAS_CORETYPE is left alone. What was
// chosen, and why, is recorded in every results file ("blas_core") and in the sgemm probe's detail.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sb {

enum class VectorIsa { Sse, Avx, Avx2, Avx512 };

const char* isa_name(VectorIsa isa);

// The widest vector ISA this CPU and OS support, as the compiler's cpu model reports it. Avx512
// needs the F, BW, DQ and VL subsets, which OpenBLAS's SkylakeX kernels use.
VectorIsa host_vector_isa();

// The vector ISA an OpenBLAS x86-64 core name stands for (as openblas_get_corename() spells it,
// case ignored); nullopt for a name not in the table.
std::optional<VectorIsa> openblas_core_isa(std::string_view core);

// The core to name in OPENBLAS_CORETYPE when `detected` uses a narrower ISA than `host` offers;
// empty when the detected core is right, or unknown (then the library knows better than we do).
std::string openblas_core_for(std::string_view detected, VectorIsa host);

struct BlasCoreChoice {
  std::string detected;  // what the library picked by itself; empty when it was not asked
  std::string used;      // what it runs with; empty when OpenBLAS is not there
  std::string why;       // one sentence: how `used` came about
};

// Asks the library at `library_path`, in a child process, which core it detects, and applies the
// rule above to this process's environment. An empty path (no OpenBLAS found at build time) gives
// an empty choice.
BlasCoreChoice choose_openblas_core(const std::string& library_path);

// choose_openblas_core once per process, before any module that links OpenBLAS is loaded (the
// library reads the variable when it is loaded). Later calls return the first answer.
const BlasCoreChoice& settle_openblas_core(const std::string& library_path);

}  // namespace sb
