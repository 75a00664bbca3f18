// Tests of the CUDA simulator on hand-written kernels: semantics it must reproduce, and
// mutations it must reject for the right reason.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "cudasim.h"
#include "sim_kernels.cuh"

namespace {

// Device buffer from the simulator's guarded allocator, copied from and to host vectors.
template <typename T>
struct DevBuf {
  explicit DevBuf(const std::vector<T>& h) : n(h.size()) {
    p = static_cast<T*>(sb::sim::alloc(n * sizeof(T)));
    std::copy(h.begin(), h.end(), p);
  }
  ~DevBuf() { sb::sim::free(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  std::vector<T> host() const { return std::vector<T>(p, p + n); }
  T* p;
  size_t n;
};

// Launch error text after a launch ("" when the launch succeeded).
std::string launch_error() {
  cudaError_t e = cudaGetLastError();
  std::string msg = sb::sim::take_error();
  if (e == cudaSuccess) {
    EXPECT_EQ(msg, "");
  }
  return e == cudaSuccess ? "" : msg;
}

class SimTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    sb::sim::set_schedule(GetParam());
    sb::sim::take_error();
  }
};

TEST_P(SimTest, ThreeDimensionalIndices) {
  int nx = 5, ny = 3, nz = 2;
  DevBuf<int> out(std::vector<int>(nx * ny * nz, -1));
  SB_LAUNCH(coords3d, dim3(2, 2, 1), dim3(4, 2, 2), 0, nullptr, out.p, nx, ny, nz);
  ASSERT_EQ(launch_error(), "");
  auto h = out.host();
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) EXPECT_EQ(h[(z * ny + y) * nx + x], x + 1000 * y + 1000000 * z);
}

TEST_P(SimTest, SharedReductionWithBarriers) {
  int n = 1000;
  std::vector<float> in(n);
  std::iota(in.begin(), in.end(), 1.0f);
  DevBuf<float> d_in(in), part(std::vector<float>(4, 0));
  SB_LAUNCH(reduce_shared<false>, dim3(4), dim3(256), 0, nullptr, d_in.p, part.p, n);
  ASSERT_EQ(launch_error(), "");
  auto h = part.host();
  EXPECT_FLOAT_EQ(h[0] + h[1] + h[2] + h[3], 500500.0f);
}

TEST_P(SimTest, MutationMissingSyncthreadsIsARace) {
  int n = 256;
  DevBuf<float> d_in(std::vector<float>(n, 1.0f)), part(std::vector<float>(1, 0));
  SB_LAUNCH(reduce_shared<true>, dim3(1), dim3(256), 0, nullptr, d_in.p, part.p, n);
  std::string err = launch_error();
  EXPECT_NE(err.find("shared-memory race on s["), std::string::npos) << err;
  EXPECT_NE(err.find("kernel reduce_shared<true>"), std::string::npos) << err;
}

TEST_P(SimTest, ReadingTwiceAfterAWarpBarrierIsNoRace) {
  // The second read must still be ordered after the other lane's write (the shadow cell keeps
  // the write's warp-barrier count apart from the reads').
  std::vector<float> in(32);
  std::iota(in.begin(), in.end(), 0.0f);
  DevBuf<float> x(in);
  SB_LAUNCH(read_twice_after_syncwarp<false>, dim3(1), dim3(32), 0, nullptr, x.p);
  ASSERT_EQ(launch_error(), "");
  auto h = x.host();
  for (int t = 0; t < 32; ++t) EXPECT_EQ(h[t], 2.0f * static_cast<float>((t + 31) % 32)) << t;
}

TEST_P(SimTest, MutationMissingSyncwarpIsARace) {
  DevBuf<float> x(std::vector<float>(32, 1.0f));
  SB_LAUNCH(read_twice_after_syncwarp<true>, dim3(1), dim3(32), 0, nullptr, x.p);
  std::string err = launch_error();
  EXPECT_NE(err.find("shared-memory race on s["), std::string::npos) << err;
}

TEST_P(SimTest, GuardIsExact) {
  int n = 37;
  DevBuf<float> x(std::vector<float>(n, 1.5f));
  SB_LAUNCH(scale<false>, dim3(2), dim3(32), 0, nullptr, x.p, n);
  ASSERT_EQ(launch_error(), "");
  for (float v : x.host()) EXPECT_EQ(v, 3.0f);
}

TEST(SimMutation, GuardOffByOneIsOutOfBounds) {
  // Schedule 0 places buffers against the trailing guard page, so x[n] faults.
  sb::sim::set_schedule(0);
  int n = 37;
  DevBuf<float> x(std::vector<float>(n, 1.5f));
  SB_LAUNCH(scale<true>, dim3(2), dim3(32), 0, nullptr, x.p, n);
  std::string err = launch_error();
  EXPECT_NE(err.find("out-of-bounds global access by thread (5,0,0)"), std::string::npos) << err;
  EXPECT_NE(err.find("byte offset 148 of a buffer of 148 bytes"), std::string::npos) << err;
}

TEST_P(SimTest, ShuffleInsideWarpZeroBranch) {
  int n = 300;
  DevBuf<float> in(std::vector<float>(n, 2.0f)), out(std::vector<float>(1, 0));
  SB_LAUNCH(warp_sum<0xffffffffu>, dim3(2), dim3(256), 0, nullptr, in.p, out.p, n);
  ASSERT_EQ(launch_error(), "");
  EXPECT_FLOAT_EQ(out.host()[0], 600.0f);
}

TEST_P(SimTest, MutationShuffleWithWrongMask) {
  int n = 64;
  DevBuf<float> in(std::vector<float>(n, 1.0f)), out(std::vector<float>(1, 0));
  SB_LAUNCH(warp_sum<0x0000ffffu>, dim3(1), dim3(64), 0, nullptr, in.p, out.p, n);
  std::string err = launch_error();
  EXPECT_NE(err.find("with mask 0x0000ffff"), std::string::npos) << err;
  EXPECT_TRUE(err.find("does not include its own lane") != std::string::npos ||
              err.find("does not include that lane") != std::string::npos)
      << err;
}

TEST_P(SimTest, MutationEarlyReturnBeforeBarrier) {
  int n = 128;
  DevBuf<float> x(std::vector<float>(n, 1.0f));
  SB_LAUNCH(early_exit<true>, dim3(1), dim3(128), 0, nullptr, x.p, n);
  std::string err = launch_error();
  EXPECT_NE(err.find("barrier divergence"), std::string::npos) << err;
  EXPECT_NE(err.find("already exited without reaching it ((0,0,0))"), std::string::npos) << err;
  SB_LAUNCH(early_exit<false>, dim3(1), dim3(128), 0, nullptr, x.p, n);
  EXPECT_EQ(launch_error(), "");
}

TEST_P(SimTest, DynamicSharedMemory) {
  int n = 100;
  std::vector<float> h(n);
  std::iota(h.begin(), h.end(), 0.0f);
  DevBuf<float> x(h);
  SB_LAUNCH(reverse_block, dim3(1), dim3(100), 100 * sizeof(float), nullptr, x.p, n);
  ASSERT_EQ(launch_error(), "");
  auto r = x.host();
  for (int i = 0; i < n; ++i) EXPECT_EQ(r[i], float(n - 1 - i));
}

TEST_P(SimTest, GlobalAtomics) {
  int n = 1000;
  std::vector<int> h(n);
  std::iota(h.begin(), h.end(), 0);
  DevBuf<int> x(h), bins(std::vector<int>(7, 0)), mx(std::vector<int>(1, -1));
  SB_LAUNCH(histogram, dim3(8), dim3(128), 0, nullptr, x.p, bins.p, mx.p, n, 7);
  ASSERT_EQ(launch_error(), "");
  auto b = bins.host();
  EXPECT_EQ(std::accumulate(b.begin(), b.end(), 0), n);
  EXPECT_EQ(b[0], 143);
  EXPECT_EQ(mx.host()[0], 999);
}

INSTANTIATE_TEST_SUITE_P(Schedules, SimTest, ::testing::Values(0, 1, 7));

TEST(SimSchedules, OrderDependenceShowsUnderTwoSchedules) {
  std::vector<std::vector<float>> results;
  for (int sched : {0, 1}) {
    sb::sim::set_schedule(sched);
    DevBuf<float> x(std::vector<float>(64, 0.0f));
    SB_LAUNCH(order_dependent, dim3(1), dim3(64), 0, nullptr, x.p, 64);
    ASSERT_EQ(launch_error(), "");
    results.push_back(x.host());
  }
  EXPECT_EQ(results[0][63], 63.0f);  // forward order: each thread sees its neighbour's write
  EXPECT_EQ(results[1][63], 1.0f);   // reversed: it sees the original value
}

TEST(SimStats, CountsThreads) {
  sb::sim::reset_stats();
  sb::sim::set_schedule(0);
  DevBuf<float> x(std::vector<float>(64, 1.0f));
  SB_LAUNCH(scale<false>, dim3(2), dim3(32), 0, nullptr, x.p, 64);
  ASSERT_EQ(launch_error(), "");
  EXPECT_EQ(sb::sim::stats().threads, 64u);
  EXPECT_GE(sb::sim::stats().steps, 64u);
}

}  // namespace
