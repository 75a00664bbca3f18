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
// What it cannot check: timing, bank conflicts, or races on raw __shared__ arrays and global
// memory. It can count global-memory traffic as warp requests and 32-byte sectors (traffic()),
// the coalescing measure of a profiler's transaction counts, without caches or timing.
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

// Global-memory traffic of simulated threads while counting is on (off by default): `requests`
// are warp-level memory instructions (the lanes of a warp that execute one load or store
// instruction between the same two warp-synchronous points, on the same visit of it, form one),
// `sectors` the distinct 32-byte sectors each request touches, summed (a profiler's
// transactions), `bytes` the bytes the threads asked for. Only accesses to alloc() buffers
// count, in modules compiled with the access hooks (see the end of cudasim.cpp).
struct Traffic {
  uint64_t requests = 0;
  uint64_t sectors = 0;
  uint64_t bytes = 0;
};
void count_traffic(bool on);
Traffic traffic();
void reset_traffic();

// Records one access of `size` bytes at `addr` by the running simulated thread, made by the
// instruction at `site` (a no-op outside simulated threads, for addresses outside alloc()
// buffers, or while counting is off).
void note_access(uintptr_t addr, size_t size, uintptr_t site);

}  // namespace sb::sim

// mojo_gpusim (harness/mojo_gpusim/): runs `entry(argv)`, the entry of a kernel rewritten from
// NVVM IR, once per thread of grid x block; `argv` holds its arguments in 8-byte slots. Returns 0,
// or 1 with the failure in sb::sim::take_error(). Global-memory races are checked in these
// launches (two threads of the launch touch one byte, at least one writing, not both atomic,
// from different blocks or in one barrier interval of a block), besides everything cudasim checks.
extern "C" int sb_gpusim_launch(const char* kernel, void (*entry)(void*), void* argv, unsigned gx,
                                unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                size_t smem);
