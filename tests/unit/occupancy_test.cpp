// Theoretical occupancy (harness/build/occupancy.h): values computed by hand from the rules of
// the CUDA occupancy calculator, and, where the toolkit's cuda_occupancy.h is on the include
// path, the same answer as its cudaOccMaxActiveBlocksPerMultiprocessor over a grid of
// configurations.
#include <gtest/gtest.h>

#include <climits>
#include <set>

#include "build/occupancy.h"

#if __has_include(<cuda_occupancy.h>)
#include <cuda_occupancy.h>
#define SB_HAVE_CUDA_OCCUPANCY 1
#endif

namespace sb {
namespace {

const SmLimits& sm(int arch) {
  const SmLimits* s = find_sm_limits(arch);
  EXPECT_NE(s, nullptr) << arch;
  return *s;
}

TEST(SmLimits, Registry) {
  std::set<int> archs;
  for (const SmLimits& s : sm_limits_registry()) {
    EXPECT_TRUE(archs.insert(s.arch).second) << "sm_" << s.arch << " twice";
    EXPECT_EQ(find_sm_limits(s.arch), &s);
  }
  EXPECT_EQ(sm(80).shared_per_sm, 164 * 1024);
  EXPECT_EQ(sm(90).shared_per_sm, 228 * 1024);
  EXPECT_EQ(sm(80).reserved_shared_per_block, 1024);
  EXPECT_EQ(sm(90).max_warps_per_sm, 64);
  EXPECT_EQ(sm(90).max_blocks_per_sm, 32);
  EXPECT_EQ(sm(80).registers_per_sm, 65536);
  EXPECT_EQ(sm(86).max_warps_per_sm, 48);
  EXPECT_EQ(find_sm_limits(61), nullptr);
  EXPECT_EQ(find_sm_limits(0), nullptr);
}

TEST(Occupancy, RegistersBySubPartition) {
  // 256 threads (8 warps) x 32 registers: 1024 per warp, 16 warps in each 16384-register
  // sub-partition, 64 per SM: 8 blocks, as many as the warp slots allow.
  Occupancy o = theoretical_occupancy(sm(90), 256, 32, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 8);
  EXPECT_EQ(o.active_warps, 64);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
  EXPECT_EQ(o.limited_by, "warps+registers");
  // 128 registers: 4096 per warp, 4 per sub-partition, 16 per SM: 2 blocks, 25%.
  o = theoretical_occupancy(sm(90), 256, 128, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(o.fraction, 0.25);
  EXPECT_EQ(o.limited_by, "registers");
  // 39 registers: 1248 rounded up to 1280 per warp; 12 per sub-partition, 48 per SM: 6 blocks.
  o = theoretical_occupancy(sm(80), 256, 39, 32, 1);
  EXPECT_EQ(o.blocks_per_sm, 6);
  EXPECT_DOUBLE_EQ(o.fraction, 0.75);
  // 42 registers: 1344 -> 1536 per warp; 10 per sub-partition, 40 per SM: 5 blocks, 62.5%.
  o = theoretical_occupancy(sm(80), 256, 42, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 5);
  EXPECT_DOUBLE_EQ(o.fraction, 0.625);
  // 3-warp blocks x 48 registers (1536 per warp): 10 warps per sub-partition, 40 per SM,
  // 13 blocks (39 warps), where 65536 / (3 x 1536) would say 14.
  o = theoretical_occupancy(sm(80), 96, 48, 0, 0);
  EXPECT_EQ(o.warps_per_block, 3);
  EXPECT_EQ(o.by_registers, 13);
  EXPECT_EQ(o.blocks_per_sm, 13);
  EXPECT_DOUBLE_EQ(o.fraction, 39.0 / 64);
  // 1024 threads x 64 registers: exactly the register file, one block, 50%.
  o = theoretical_occupancy(sm(90), 1024, 64, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  EXPECT_EQ(o.limited_by, "registers");
  // No registers at all (an empty kernel): registers do not limit.
  o = theoretical_occupancy(sm(90), 128, 0, 0, 0);
  EXPECT_EQ(o.by_registers, INT_MAX);
  EXPECT_EQ(o.blocks_per_sm, 16);
}

TEST(Occupancy, WarpsAndBlocks) {
  // 32-thread blocks: 32 resident blocks at most, 32 of 64 warps.
  Occupancy o = theoretical_occupancy(sm(80), 32, 16, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  EXPECT_EQ(o.limited_by, "blocks");
  // One thread is one warp's slot.
  o = theoretical_occupancy(sm(90), 1, 6, 0, 0);
  EXPECT_EQ(o.warps_per_block, 1);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  // 33 threads take two warps: 32 blocks, 64 warps.
  o = theoretical_occupancy(sm(90), 33, 16, 0, 0);
  EXPECT_EQ(o.warps_per_block, 2);
  EXPECT_EQ(o.active_warps, 64);
  // 384 threads (12 warps): 5 blocks fill 60 of 64 warp slots.
  o = theoretical_occupancy(sm(90), 384, 16, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 5);
  EXPECT_DOUBLE_EQ(o.fraction, 60.0 / 64);
  EXPECT_EQ(o.limited_by, "warps");
  // sm_86 holds 48 warps: 256-thread blocks, 6 of them.
  o = theoretical_occupancy(sm(86), 256, 16, 0, 0);
  EXPECT_EQ(o.blocks_per_sm, 6);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
}

TEST(Occupancy, SharedMemory) {
  // 48 KiB + the 1 KiB reserve = 50176 bytes a block: 3 fit in 164 KiB (37.5%), 4 in 228 KiB.
  Occupancy o = theoretical_occupancy(sm(80), 256, 16, 48 * 1024, 0);
  EXPECT_EQ(o.by_shared, 3);
  EXPECT_DOUBLE_EQ(o.fraction, 0.375);
  EXPECT_EQ(o.limited_by, "shared");
  o = theoretical_occupancy(sm(90), 256, 16, 48 * 1024, 0);
  EXPECT_EQ(o.by_shared, 4);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  // 4096 bytes: 5120 a block, 32 fit in 164 KiB: shared does not bind 256-thread blocks.
  o = theoretical_occupancy(sm(80), 256, 16, 4096, 0);
  EXPECT_EQ(o.by_shared, 32);
  EXPECT_EQ(o.blocks_per_sm, 8);
  // Rounded up to 128 bytes: 12000 + 1024 = 13024 -> 13056; 167936 / 13056 = 12.
  o = theoretical_occupancy(sm(80), 64, 16, 12000, 0);
  EXPECT_EQ(o.by_shared, 12);
  // The 1 KiB reserve alone caps sm_80 at 164 blocks: never binding (32 blocks at most).
  o = theoretical_occupancy(sm(80), 32, 16, 0, 0);
  EXPECT_EQ(o.by_shared, 164);
}

TEST(Occupancy, Barriers) {
  // From sm_90 on, 2 barriers per block slot (64): 16 barriers a block allow 4 blocks.
  Occupancy o = theoretical_occupancy(sm(90), 256, 16, 0, 16);
  EXPECT_EQ(o.by_barriers, 4);
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
  EXPECT_EQ(o.limited_by, "barriers");
  // Before sm_90 they do not limit.
  o = theoretical_occupancy(sm(80), 256, 16, 0, 16);
  EXPECT_EQ(o.by_barriers, INT_MAX);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
}

TEST(Occupancy, LaunchesThatCannotRun) {
  Occupancy o = theoretical_occupancy(sm(90), 1025, 16, 0, 0);
  EXPECT_FALSE(o.valid);
  EXPECT_EQ(o.blocks_per_sm, 0);
  EXPECT_DOUBLE_EQ(o.fraction, 0.0);
  EXPECT_NE(o.invalid.find("1025 threads per block"), std::string::npos);
  // 65 registers: 2080 -> 2304 per warp, x 32 warps = 73728 > 65536.
  o = theoretical_occupancy(sm(90), 1024, 65, 0, 0);
  EXPECT_FALSE(o.valid);
  EXPECT_NE(o.invalid.find("65 registers"), std::string::npos);
  // Over 48 KiB of shared memory (no opt-in).
  o = theoretical_occupancy(sm(80), 256, 16, 48 * 1024 + 1, 0);
  EXPECT_FALSE(o.valid);
  EXPECT_NE(o.invalid.find("shared memory"), std::string::npos);
  // 256 registers per thread is over the 255 a thread can have.
  o = theoretical_occupancy(sm(80), 32, 256, 0, 0);
  EXPECT_FALSE(o.valid);
}

#ifdef SB_HAVE_CUDA_OCCUPANCY
// The toolkit's own calculator on a device described by the registry's limits.
int toolkit_blocks(const SmLimits& s, int threads, int regs, int64_t smem, int barriers) {
  cudaOccDeviceProp p;
  p.computeMajor = s.arch / 10;
  p.computeMinor = s.arch % 10;
  p.maxThreadsPerBlock = s.max_threads_per_block;
  p.maxThreadsPerMultiprocessor = s.max_warps_per_sm * s.warp_size;
  p.regsPerBlock = s.registers_per_block;
  p.regsPerMultiprocessor = s.registers_per_sm;
  p.warpSize = s.warp_size;
  p.sharedMemPerBlock = static_cast<size_t>(s.shared_per_block);
  p.sharedMemPerMultiprocessor = static_cast<size_t>(s.shared_per_sm);
  p.numSms = 1;
  p.sharedMemPerBlockOptin = static_cast<size_t>(s.shared_per_sm - s.reserved_shared_per_block);
  p.reservedSharedMemPerBlock = static_cast<size_t>(s.reserved_shared_per_block);
  cudaOccFuncAttributes a;
  a.maxThreadsPerBlock = 1024;
  a.numRegs = regs;
  a.sharedSizeBytes = static_cast<size_t>(smem);
  a.numBlockBarriers = barriers;
  cudaOccDeviceState st;
  cudaOccResult r{};
  cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &st, threads, 0);
  EXPECT_EQ(e, CUDA_OCC_SUCCESS);
  return r.activeBlocksPerMultiprocessor;
}

TEST(Occupancy, AgreesWithTheToolkitCalculator) {
  int compared = 0;
  for (int arch : {80, 86, 89, 90}) {
    for (int threads : {1, 32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024}) {
      for (int regs : {0, 8, 16, 24, 32, 39, 40, 42, 48, 56, 64, 65, 72, 96, 128, 168, 200, 255}) {
        for (int64_t smem : {0, 32, 2176, 4096, 12000, 40000, 49152}) {
          for (int barriers : {0, 1, 16}) {
            Occupancy o = theoretical_occupancy(sm(arch), threads, regs, smem, barriers);
            ASSERT_EQ(o.blocks_per_sm, toolkit_blocks(sm(arch), threads, regs, smem, barriers))
                << "sm_" << arch << ", " << threads << " threads, " << regs << " registers, "
                << smem << " bytes of shared memory, " << barriers << " barriers";
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 10000);
}
#endif

}  // namespace
}  // namespace sb
