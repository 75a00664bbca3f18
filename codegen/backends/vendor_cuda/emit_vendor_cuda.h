// The `vendor_cuda` backend: NVIDIA's libraries as baselines for the generated CUDA code. One
// CUDA translation unit per spec, generated/<spec>/vendor_cuda/<spec>.cu, built by the harness
// with nvcc like the cuda backend and linked with cuBLAS (harness/run/runtime_vendor.cpp).
//
// Strategies (no parameters), one record each in strategies/ (strategy.h); every statement of the
// spec must have the strategy's shape (patterns.h), otherwise check_variant() names the first
// statement that does not:
//   cublas      contractions (match_contraction): cublasSgemm/cublasDgemm with the row-major
//               trick (C^T = Y^T X^T in column-major, so no transposition is copied), then a
//               grid-stride kernel for the rest of the statement (a bias term, ...).
//   cub_reduce  scalar reductions (match_scalar_reduction): cub::DeviceReduce::TransformReduce
//               over a counting iterator with the reduction's body as the transform, then a
//               one-thread kernel for the rest of the statement (`sqrt(...)`, ...).
//   cub_scan    prefix scans (match_scan): cub::DeviceScan::InclusiveScan / ExclusiveScan over a
//               transform iterator.
// cub's temporary storage comes from cudaMallocAsync/cudaFreeAsync on the variant's stream; the
// cuBLAS handle is created once per module and bound to the stream on every call. Reduction
// operators are the generated code's own (NaN-propagating max/min, wrapping i32 sums), so the
// results mean what the spec says. Errors print file:line and return a cudaError_t (cuBLAS
// failures return cudaErrorUnknown after printing cuBLAS's status string).
#pragma once

#include "backends/emitter.h"

namespace sb {

const Emitter& vendor_cuda_emitter();

}  // namespace sb
