// The `mojo_gpu` backend's printer: the cuda variants of a spec again as Mojo GPU kernels,
// generated/<spec>/mojo_gpu/<spec>.mojo, with their host launchers beside them in
// generated/<spec>/mojo_gpu/<spec>.launch.cpp.
//
// Variants. mojo_gpu is a derived backend (Emitter::derived_from() is "cuda"): it has no
// strategies of its own, and specs declare no mojo_gpu variants. Every cuda variant whose GPU
// mapping (lower/gpu_mapping.h, under its cuda strategy record) has only kernel forms this
// printer prints (strategies.h) is a mojo_gpu variant of the same name, strategy and parameters
// (set by check/derive_variants.h); the file's header names the others with the form that is
// missing. A spec without such a variant has no mojo_gpu files.
//
// Generated-code contract:
//   - <spec>.mojo holds only device code. Kernels are `@export("sb_<variant>_s<k>[_part]") def
//     ...(...) abi("C")`, the names the cuda file gives the same kernels; tensors are
//     Pointer[T, Mut/ImmUntrackedOrigin] parameters named after the tensor, sizes
//     `sb_arg_<size>: Int64` parameters (kernel integer arguments must be fixed width), bound to
//     Ints of the size's name on entry; a reduction's partials buffer and count come last.
//   - <spec>.launch.cpp is the module's translation unit in the ABI's sense: it includes
//     specbench_abi.h and specbench_mojo_gpu.h, names every kernel with SB_MOJO_KERNEL, has one
//     launcher per variant launching its kernels in order with SB_MOJO_LAUNCH (the grids of the
//     cuda launcher of the same variant), and defines specbench_module(). The launch runtime
//     (harness/abi/specbench_mojo_gpu.h) runs them on the simulator (mojo_gpusim) or, through
//     the CUDA driver API, on a GPU (mojo_gpu).
//   - A comment above each kernel gives its launch geometry.
#pragma once

#include "backends/emitter.h"

namespace sb {

const Emitter& mojo_gpu_emitter();

}  // namespace sb
