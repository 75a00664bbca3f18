// The mojo backend's printer of the loop IR (lower/loop_ir.h).
//
// Spellings: a native vector is SIMD[DType.<t>, W] with W the module constant that holds
// Lanes(T) (`simd_width_of[DType.<t>]()`); Workers() is parallelism_level(). Loops: parallel as
// a nested `def ... {imm}` closure run by `parallelize` over the iteration count; unrolled loops
// are unrolled here, while printing: the extent is a compile-time constant whose possible values
// v1 < v2 < ... are known (possible_values), so the iterations below v1 are printed as they are
// and each further range under `comptime if EXTENT > v:`. That keeps a register buffer as named
// variables (`acc3_0`, declared as zeros: a leading zero fill of them is not printed), which
// Mojo keeps in registers. A register buffer of scalars of a power-of-two count (a GPU thread's
// tile) is one SIMD value instead, its elements lanes at their row-major index, and a loop over
// it stays a `comptime for`. Vector loops print as plain loops (LLVM
// vectorises them). Heap and stack buffers are `alloc(Layout[T](count=n))`, freed after their
// body; Mojo keeps no buffer between calls (persistent is ignored) and its alloc reports no
// failure to the caller, so on_fail is not printed. The inline hint is not printed.
#pragma once

#include <string>
#include <vector>

#include "backends/mojo/py_writer.h"
#include "lower/loop_ir.h"

namespace sb {

// The Mojo text of `modules` (their constants and functions). The file must import alloc,
// Layout, dealloc, parallelism_level, parallelize and simd_width_of.
std::string print_mojo_loops(const std::vector<loops::Module>& modules);

class LoopLeaves;

// A kernel body (lower/gpu_bodies.h) as Mojo statements into `w` at its indentation, its spec
// leaves and GPU nodes spelled by `leaves` (the mojo_gpu printer's).
void print_mojo_block(const loops::Block& b, LoopLeaves& leaves, PyWriter& w);

// Runs closure `fn` (a `def fn(i: Int)`) for i in [0, count): `parallelize(fn, count)`, or, for
// one item, `fn(0)` on this thread. A parallelize of one item inside a task of another (a
// product run side by side with others) made the grouped im2col 2-4x slower, and the OpenMP
// kernels timed after it in the same process 10-40x slower (measured 2026-12-05).
void print_parallel_call(const std::string& fn, const std::string& count, PyWriter& w);

}  // namespace sb
