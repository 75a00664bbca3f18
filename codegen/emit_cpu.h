// The `cpu` backend: one C++17 translation unit per spec, generated/<spec>/cpu/<spec>.cpp,
// built by the harness with g++ -O3 -march=native -fopenmp -fPIC -shared.
//
// Strategies (no parameters):
//   loops     a scalar loop nest per statement.
//   omp_simd  `#pragma omp parallel for` on the outermost output loop. `#pragma omp simd` goes on
//             the innermost output loop when the statement has no reduction or that loop's index
//             reaches the contiguous (last) subscript of some read; otherwise on the innermost
//             reduction loops (`omp simd reduction(...)`). A scalar output's top-level reduction
//             becomes `#pragma omp parallel for [simd] reduction(+|max|min: acc)`.
// Each statement of each variant is a `static void sb_<variant>_s<k>(...)` kernel taking the
// tensors it touches as __restrict pointers and the sizes it uses as const int64_t; each variant
// is `static int sb_variant_<variant>(const sb_args*)`, which unpacks the arguments, calls the
// statement kernels in order and returns 0.
#pragma once

#include "emitter.h"

namespace sb {

// The cpu emitter (stateless; lives for the whole program).
const Emitter& cpu_emitter();

}  // namespace sb
