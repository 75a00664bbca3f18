// The cpu backend's printer of the loop IR (lower/loop_ir.h): C++17 with GCC vector extensions
// and OpenMP, built with g++ -O3 -march=native -fopenmp.
//
// Spellings: a native vector is `sb_simd_<t>` (vector_size(SB_SIMD_BYTES), the widest of
// AVX-512, AVX and SSE the compiler targets), loaded and stored with memcpy (no alignment
// assumed); Lanes(T) is SB_SIMD_BYTES / sizeof(T); Workers() is omp_get_max_threads() (1
// without OpenMP). Loops: parallel as `omp parallel for schedule(static)` (num_threads when the
// IR bounds the threads), vector as `omp simd`, unrolled as `GCC unroll` (`unroll` for nvcc).
// Fma as `a * b + c` (GCC contracts it, its default in C++). A persistent heap scratch buffer is a
// static pointer grown with aligned_alloc when too small; its on_fail runs when that returns NULL.
// A function with the inline hint is `static inline`, the others `static`.
#pragma once

#include <string>
#include <vector>

#include "lower/loop_ir.h"

namespace sb {

class CodeWriter;
class LoopLeaves;

// The C text of `modules`: first the definitions their native vectors and Workers() need (once),
// then each module's constants and functions. The file must include <string.h>, <stdlib.h> and
// (under _OPENMP) <omp.h>.
std::string print_cpu_loops(const std::vector<loops::Module>& modules);

// The compiler a kernel body is printed for: an unrolled loop is `GCC unroll` for g++, `unroll`
// for nvcc.
enum class CCompiler { Gcc, Nvcc };

// A kernel body (lower/gpu_bodies.h, lower/host_bodies.h) as C++ statements into `w`, its spec
// leaves and GPU nodes spelled by `leaves` (the cpu printer's, or the CUDA printer's).
void print_c_block(const loops::Block& b, LoopLeaves& leaves, CodeWriter& w,
                   CCompiler compiler = CCompiler::Gcc);

}  // namespace sb
