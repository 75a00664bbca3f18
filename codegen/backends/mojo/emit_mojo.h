// The `mojo` backend: one Mojo source file per spec, generated/<spec>/mojo/<spec>.mojo, built by
// the harness (harness/run/runtime_mojo.cpp) with
//   mojo build --emit shared-lib -O3 --fp-mode contract=fast -o <module>.so <spec>.mojo
// into a module with the same C ABI as every C++ module: the file declares the structs of
// harness/abi/specbench_abi.h in Mojo and exports `specbench_module()`.
//
// Strategies (no parameters):
//   loops               a scalar loop nest per statement (the same nest as the cpu backend's
//                       `loops`).
//   vectorize_parallel  `parallelize` (max.algorithm) over contiguous chunks of the outermost
//                       output dimension, one chunk per worker thread (as OpenMP's static
//                       schedule), and `vectorize` (std.algorithm) over the innermost output
//                       dimension when every read that varies with it is contiguous (unit stride
//                       in the last subscript, no boundary rule) and every operation has a SIMD
//                       form. Otherwise the innermost reductions are strip-mined into SIMD
//                       accumulators when their reads are contiguous in the reduction variable
//                       (the choice between the two follows the cpu backend's omp_simd). A scalar
//                       output's top-level reductions are split into per-chunk partial results
//                       computed in parallel and combined in chunk order. Launchers call
//                       `initialize_runtime()` first, as the Mojo documentation requires of a
//                       shared library called from a non-Mojo host.
//
// Each statement of each variant is a `def sb_<variant>_s<k>(...)` taking the tensors it touches
// as `Pointer`s and the sizes it uses as `Int`; each variant is a C-ABI function
// `sb_variant_<variant>(sb_a) -> Int32` that unpacks the arguments, calls the statement kernels in
// order and returns 0.
#pragma once

#include "backends/emitter.h"

namespace sb {

// The mojo emitter (stateless; lives for the whole program).
const Emitter& mojo_emitter();

}  // namespace sb
