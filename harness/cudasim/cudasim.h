// cudasim control API: how the harness drives the CUDA simulator (libspecbench_cudasim.so).
//
// What the simulator checks, beyond the answer itself:
// - barrier divergence and deadlock: threads waiting at __syncthreads while others exited or
//   wait elsewhere, and warp operations whose mask names lanes that never arrive;
// - shared-memory races: two threads touching one element of an SB_SHARED_ARRAY or
//   SB_DYNAMIC_SHARED array within one barrier interval, at least one writing (atomics exempt;
//   lanes of one warp are ordered by the warp operations between their accesses);
// - out-of-bounds global accesses: buffers from alloc() sit against inaccessible guard pages,
//   placed after the end under even schedules and before the start under odd ones;
// - schedule-order dependence: each schedule runs a block's threads in another order
//   (0 forward, 1 reversed, n >= 2 a shuffle seeded with n).
// What it cannot check: timing, memory coalescing, bank conflicts, or races on raw __shared__
// arrays and global memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sb::sim {

// Thread order (and guard-page placement) used by the following launches.
void set_schedule(int schedule);

// Device memory for simulated kernels, bordered by guard pages as described above.
void* alloc(size_t bytes);
void free(void* p);

// The first failure since the last call, with kernel, block and threads named ("" if none);
// clears it and the sticky launch error.
std::string take_error();

struct Stats {
  uint64_t threads = 0;  // simulated threads run
  uint64_t steps = 0;    // fiber resumptions (a thread runs from one sync point to the next)
  double seconds = 0;    // wall time inside launches
};
Stats stats();
void reset_stats();

}  // namespace sb::sim
