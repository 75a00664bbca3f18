#include "build/occupancy.h"

#include <algorithm>
#include <climits>

#include "support/diag.h"

namespace sb {

namespace {

int64_t round_up(int64_t x, int64_t unit) {
  return (x + unit - 1) / unit * unit;
}

SmLimits limits(int arch, int warps, int blocks, int64_t shared_kib, int64_t reserved,
                int shared_unit, int barrier_slots) {
  SmLimits s;
  s.arch = arch;
  s.max_warps_per_sm = warps;
  s.max_blocks_per_sm = blocks;
  s.shared_per_sm = shared_kib * 1024;
  s.reserved_shared_per_block = reserved;
  s.shared_alloc_unit = shared_unit;
  s.barriers_per_block_slot = barrier_slots;
  return s;
}

}  // namespace

const std::vector<SmLimits>& sm_limits_registry() {
  //                 arch  warps blocks  smem KiB/SM  reserved  unit  barriers per slot
  static const std::vector<SmLimits> kLimits = {
      limits(70, 64, 32, 96, 0, 256, 0),      // V100
      limits(75, 32, 16, 64, 0, 256, 0),      // T4, RTX 20
      limits(80, 64, 32, 164, 1024, 128, 0),  // A100
      limits(86, 48, 16, 100, 1024, 128, 0),  // RTX 30, A40
      limits(89, 48, 24, 100, 1024, 128, 0),  // RTX 40, L4, L40
      limits(90, 64, 32, 228, 1024, 128, 2),  // H100, H200
  };
  return kLimits;
}

const SmLimits* find_sm_limits(int arch) {
  for (const SmLimits& s : sm_limits_registry())
    if (s.arch == arch) return &s;
  return nullptr;
}

Occupancy theoretical_occupancy(const SmLimits& sm, int64_t block_threads, int registers,
                                int64_t shared_bytes, int barriers) {
  SB_ASSERT(block_threads >= 1 && registers >= 0 && shared_bytes >= 0 && barriers >= 0,
            "occupancy of a configuration with a negative resource or an empty block");
  SB_ASSERT(sm.max_warps_per_sm > 0 && sm.max_blocks_per_sm > 0 && sm.shared_alloc_unit > 0,
            "SM limits of sm_" + std::to_string(sm.arch) + " are incomplete");
  Occupancy o;
  o.max_warps = sm.max_warps_per_sm;
  o.warps_per_block = static_cast<int>(
      std::min<int64_t>((block_threads + sm.warp_size - 1) / sm.warp_size, INT_MAX));

  // Warps and blocks.
  o.by_warps = block_threads > sm.max_threads_per_block ? 0 : sm.max_warps_per_sm / o.warps_per_block;
  o.by_blocks = sm.max_blocks_per_sm;

  // Registers: a warp's are rounded up to the allocation unit, and warps are placed in the
  // register file's sub-partitions, each holding a whole number of them.
  const int64_t per_warp = round_up(int64_t{registers} * sm.warp_size, sm.register_alloc_unit);
  const int64_t per_block = per_warp * o.warps_per_block;
  // The hardware's per-block check counts the block's warps rounded up to the sub-partitions.
  const int64_t assumed = per_warp * round_up(o.warps_per_block, sm.sub_partitions);
  if (registers > sm.max_registers_per_thread || per_block > sm.registers_per_block ||
      assumed > sm.registers_per_block) {
    o.by_registers = 0;
  } else if (per_warp == 0) {
    o.by_registers = INT_MAX;
  } else {
    const int64_t warps_per_part = (sm.registers_per_sm / sm.sub_partitions) / per_warp;
    o.by_registers = static_cast<int>(warps_per_part * sm.sub_partitions / o.warps_per_block);
  }

  // Shared memory: the block's (with the driver's reserve) rounded up to the allocation unit.
  const int64_t smem = round_up(shared_bytes + sm.reserved_shared_per_block, sm.shared_alloc_unit);
  if (smem > sm.shared_per_block + sm.reserved_shared_per_block)
    o.by_shared = 0;
  else
    o.by_shared = smem == 0 ? INT_MAX : static_cast<int>(sm.shared_per_sm / smem);

  // Named barriers (a limit from sm_90 on): each resident block slot provides
  // barriers_per_block_slot of them.
  o.by_barriers = barriers == 0 || sm.barriers_per_block_slot == 0 ? INT_MAX
                                : sm.barriers_per_block_slot * sm.max_blocks_per_sm / barriers;

  o.blocks_per_sm =
      std::min({o.by_warps, o.by_blocks, o.by_registers, o.by_shared, o.by_barriers});
  const std::pair<int, const char*> named[] = {{o.by_warps, "warps"},
                                               {o.by_blocks, "blocks"},
                                               {o.by_registers, "registers"},
                                               {o.by_shared, "shared"},
                                               {o.by_barriers, "barriers"}};
  for (const auto& [v, name] : named)
    if (v == o.blocks_per_sm) o.limited_by += (o.limited_by.empty() ? "" : "+") + std::string(name);
  if (o.blocks_per_sm == 0) {
    o.valid = false;
    if (block_threads > sm.max_threads_per_block)
      o.invalid = std::to_string(block_threads) + " threads per block, more than " +
                  std::to_string(sm.max_threads_per_block);
    else if (o.by_registers == 0)
      o.invalid = std::to_string(registers) + " registers per thread do not fit a block of " +
                  std::to_string(block_threads);
    else if (o.by_shared == 0)
      o.invalid = std::to_string(shared_bytes) + " bytes of shared memory, more than a block has";
    else
      o.invalid = std::to_string(barriers) + " barriers, more than a block has";
  }
  o.active_warps = o.blocks_per_sm * o.warps_per_block;
  o.fraction = static_cast<double>(o.active_warps) / o.max_warps;
  return o;
}

}  // namespace sb
