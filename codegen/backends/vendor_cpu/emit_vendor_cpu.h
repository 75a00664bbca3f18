// The `vendor_cpu` backend: contractions through OpenBLAS's CBLAS interface, as a baseline for
// the generated CPU code. One C++17 translation unit per spec,
// generated/<spec>/vendor_cpu/<spec>.cpp, built by the harness with g++ -O3 -march=native
// -fopenmp and linked with OpenBLAS (harness/run/runtime_vendor.cpp).
//
// Strategy:
//   blas  (no parameters) every statement that match_contraction() accepts (patterns.h) becomes
//         one cblas_sgemm/cblas_dgemm call (row-major; transposed operands as CblasTrans, a
//         sum starting at k0 > 0 as offset pointers), followed by an OpenMP loop for the rest
//         of the statement (a bias term, ...). f16 and bf16 operands are first widened into
//         f32 copies allocated for the call (OpenBLAS here has no bf16 GEMM to call); the
//         backend takes such tensors nowhere else (check_storage). Other statements are
//         lowered as the cpu backend's omp_simd. check_variant() rejects a spec without a
//         contraction statement.
// Kernels and launchers follow the cpu backend's conventions (emit_cpu.h).
#pragma once

#include "backends/emitter.h"

namespace sb {

const Emitter& vendor_cpu_emitter();

}  // namespace sb
