// Theoretical occupancy of a CUDA kernel: the warps an SM holds at once for one launch
// configuration, over the most it can hold, as the CUDA occupancy calculator computes it
// (cuda_occupancy.h's cudaOccMaxActiveBlocksPerMultiprocessor, with the default shared-memory
// carveout and no opt-in to more than 48 KiB of shared memory per block).
//
// The per-SM limits live in one registry keyed by architecture (sm_limits_registry); an
// architecture that is not in it has no occupancy ("unknown"), never a guessed one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sb {

// What one SM of an architecture holds, and how it allocates. Sources: the CUDA C++
// Programming Guide's "Technical Specifications per Compute Capability" table (warps, blocks,
// registers and shared memory per SM) and the allocation rules of the toolkit's
// cuda_occupancy.h (register and shared-memory granularity, sub-partitions, the memory the
// driver reserves per block from compute capability 8.0 on, barriers per block slot).
struct SmLimits {
  int arch = 0;                     // 80 for sm_80
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_warps_per_sm = 0;         // resident warps
  int max_blocks_per_sm = 0;        // resident blocks
  int registers_per_sm = 65536;
  int registers_per_block = 65536;
  int max_registers_per_thread = 255;
  int register_alloc_unit = 256;    // a warp's registers are allocated in units of this many
  int sub_partitions = 4;           // the register file is split this many ways; a warp uses one
  int64_t shared_per_sm = 0;        // bytes, at the largest carveout (the default's choice)
  int64_t shared_per_block = 48 * 1024;  // bytes a block may use without opting in
  int64_t reserved_shared_per_block = 0;  // bytes the driver takes per block (8.0 and later)
  int shared_alloc_unit = 0;        // a block's shared memory is allocated in units of this many
  // Named barriers available per resident block slot; 0 where barriers do not limit occupancy
  // (before sm_90, as cuda_occupancy.h counts them).
  int barriers_per_block_slot = 0;
};

// Every architecture with known limits, by arch.
const std::vector<SmLimits>& sm_limits_registry();
// The limits of `arch`, or nullptr when the registry does not have them.
const SmLimits* find_sm_limits(int arch);

struct Occupancy {
  // False when a block of this configuration cannot run at all (too many threads, registers or
  // bytes of shared memory): blocks_per_sm is 0 and `invalid` says why.
  bool valid = true;
  std::string invalid;
  int warps_per_block = 0;
  int blocks_per_sm = 0;     // resident blocks: the least of the four limits below
  int active_warps = 0;      // blocks_per_sm x warps_per_block
  int max_warps = 0;         // the SM's
  double fraction = 0;       // active_warps / max_warps
  // The limits, in blocks per SM (INT_MAX when a resource does not limit).
  int by_warps = 0, by_blocks = 0, by_registers = 0, by_shared = 0, by_barriers = 0;
  // The resources whose limit is blocks_per_sm, joined by '+': "warps", "blocks",
  // "registers", "shared", "barriers".
  std::string limited_by;
};

// The occupancy of blocks of `block_threads` threads, each thread using `registers` registers,
// each block `shared_bytes` of shared memory (static and dynamic together) and `barriers` named
// barriers. block_threads must be at least 1 and the others at least 0 (SB_ASSERT).
Occupancy theoretical_occupancy(const SmLimits& sm, int64_t block_threads, int registers,
                                int64_t shared_bytes, int barriers);

}  // namespace sb
