// sb_host_alloc (harness/abi/specbench_host_alloc.h): the buffers of host kernels and probes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "specbench_host_alloc.h"

namespace {

uintptr_t addr(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

TEST(HostAlloc, SmallBuffersAreCacheLineAligned) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{100000}}) {
    void* p = sb_host_alloc(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(addr(p) % 64, 0u) << bytes;
    std::memset(p, 1, bytes);
    free(p);
  }
}

TEST(HostAlloc, LargeBuffersStartOnAHugePageAndAreWholePages) {
  const size_t bytes = SB_HUGE_PAGE_BYTES * 3 + 5;
  auto* p = static_cast<unsigned char*>(sb_host_alloc(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(addr(p) % SB_HUGE_PAGE_BYTES, 0u);
  // The rounded-up tail belongs to the buffer too (the advice covers whole huge pages).
  std::memset(p, 7, SB_HUGE_PAGE_BYTES * 4);
  EXPECT_EQ(p[SB_HUGE_PAGE_BYTES * 4 - 1], 7);
  free(p);
}

}  // namespace
