// Traffic counting of the CUDA simulator: warp requests and 32-byte sectors of known patterns.
#include <gtest/gtest.h>

#include <vector>

#include "cudasim.h"
#include "traffic_kernels.h"

namespace {

struct Buf {
  explicit Buf(size_t n) : p(static_cast<float*>(sb::sim::alloc(n * sizeof(float)))) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i);
  }
  ~Buf() { sb::sim::free(p); }
  float* p;
};

class TrafficTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sb::sim::set_schedule(1);  // buffers start at a page boundary: sectors align with elements
    sb::sim::take_error();
    sb::sim::reset_traffic();
    sb::sim::count_traffic(true);
  }
  void TearDown() override {
    sb::sim::count_traffic(false);
    EXPECT_EQ(sb::sim::take_error(), "");
  }
};

TEST_F(TrafficTest, CoalescedCopyCostsItsBytes) {
  const int n = 1024;
  Buf in(n), out(n);
  launch_copy_coalesced(in.p, out.p, n, 256);
  const sb::sim::Traffic t = sb::sim::traffic();
  EXPECT_EQ(t.requests, 2u * n / 32);          // one load and one store per warp
  EXPECT_EQ(t.sectors, 2u * n * 4 / 32);       // every byte once
  EXPECT_EQ(t.bytes, 2u * n * 4);
  EXPECT_EQ(out.p[n - 1], static_cast<float>(n - 1));
}

TEST_F(TrafficTest, StridedGatherCostsASectorPerLane) {
  const int n = 256, stride = 32;
  Buf in(static_cast<size_t>(n) * stride), out(n);
  launch_gather_strided(in.p, out.p, n, stride, 128);
  const sb::sim::Traffic t = sb::sim::traffic();
  EXPECT_EQ(t.requests, 2u * n / 32);
  EXPECT_EQ(t.sectors, static_cast<uint64_t>(n) + n * 4 / 32);  // loads: 32 per warp
  EXPECT_EQ(out.p[3], static_cast<float>(3 * stride));
}

TEST_F(TrafficTest, VectorLoadIsOneRequest) {
  const int n4 = 256;
  Buf in(4 * n4), out(4 * n4);
  launch_copy_float4(in.p, out.p, n4, 64);
  const sb::sim::Traffic t = sb::sim::traffic();
  EXPECT_EQ(t.requests, 2u * n4 / 32);
  EXPECT_EQ(t.sectors, 2u * n4 * 16 / 32);
}

// Rows of 36 floats: each row is two warp loads and two warp stores, 32 lanes and then lanes
// 0-3. Rows start in the middle of a sector, so a sector can hold the end of one row and the start
// of the next. The lanes' extra iterations are requests of their own and do not shift how the
// next rows' accesses pair up: the sectors are those of each instruction's own lanes.
TEST_F(TrafficTest, PartialLastIterationIsItsOwnRequest) {
  const int rows = 8, cols = 36;
  Buf in(rows * cols), out(rows * cols);
  launch_copy_rows_one_warp(in.p, out.p, rows, cols);
  // Elements [a, b) of a page-aligned float buffer touch sectors a / 8 .. (b - 1) / 8.
  auto span = [](uint64_t a, uint64_t b) { return (b - 1) / 8 - a / 8 + 1; };
  uint64_t want = 0;
  for (uint64_t r = 0; r < rows; ++r)
    want += 2 * (span(r * cols, r * cols + 32) + span(r * cols + 32, (r + 1) * cols));
  const sb::sim::Traffic t = sb::sim::traffic();
  EXPECT_EQ(t.requests, 4u * rows);
  EXPECT_EQ(t.sectors, want);
  EXPECT_EQ(t.bytes, 2u * rows * cols * 4);
  EXPECT_EQ(out.p[rows * cols - 1], static_cast<float>(rows * cols - 1));
}

TEST_F(TrafficTest, NothingCountedWhenOff) {
  sb::sim::count_traffic(false);
  const int n = 512;
  Buf in(n), out(n);
  launch_copy_coalesced(in.p, out.p, n, 128);
  EXPECT_EQ(sb::sim::traffic().sectors, 0u);
  EXPECT_EQ(sb::sim::traffic().requests, 0u);
}

TEST_F(TrafficTest, HostAccessesAreNotCounted) {
  Buf in(64);  // the constructor writes every element from the host
  EXPECT_EQ(sb::sim::traffic().bytes, 0u);
}

}  // namespace
