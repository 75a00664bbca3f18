// The `mojo_gpu` printer: the cuda variants of a spec again as Mojo GPU kernels,
// generated/<spec>/mojo_gpu/<spec>.mojo, compiled for NVPTX by Mojo's compiler:
//   mojo build --emit asm --target-triple nvptx64-nvidia-cuda --target-cpu sm_90
//              --target-accelerator nvidia:sm_90 -o <spec>.ptx <spec>.mojo
// then assembled by ptxas (tests/mojo_gpu/, label mojo-gpu-compile).
//
// Variants. mojo_gpu has no strategies of its own: every cuda variant whose GPU mapping
// (lower/gpu_mapping.h, under its cuda strategy record) has only kernel forms this printer
// prints (strategies.h: thread_per_element, grid_stride, vectorized, the scalar reductions, and
// warp and block per row outside fused row groups) is a mojo_gpu variant of the same name,
// strategy and parameters; the file's header names the others with the form that is missing. A
// spec without such a variant has no file.
//
// Not a backend yet: the printer is not in all_emitters() and has no harness record, because
// nothing can run these kernels here (no launch route from the harness's CUDA buffers and stream
// into Mojo kernels, no simulator at the NVVM IR level); `gen` writes the files beside the
// emitters' (driver.cpp). The file holds only kernels: no launcher and no specbench_module().
//
// Generated-code contract:
//   - Kernels are `@export("sb_<variant>_s<k>") def sb_<variant>_s<k>(...) abi("C")`, the names
//     the cuda file gives the same kernels; tensors are Pointer[T, Mut/ImmUntrackedOrigin]
//     parameters named after the tensor, sizes `sb_arg_<size>: Int64` parameters (kernel integer
//     arguments must be fixed width), bound to Ints of the size's name on entry.
//   - A comment above each kernel gives its launch geometry, as the cuda launcher computes it.
#pragma once

#include <optional>

#include "backends/emitter.h"

namespace sb {

// The mojo_gpu file of a checked spec; nullopt when none of its cuda variants has a Mojo GPU
// counterpart (or it has none).
std::optional<GeneratedFile> emit_mojo_gpu(const Spec& spec);

}  // namespace sb
