// mojo_gpusim's tests (label mojo-gpusim): hand-written Mojo GPU kernels (kernels.mojo) compiled
// to NVVM IR, rewritten for the host, and run on the CUDA simulator; each correct kernel gives the
// right answer under both thread orders, and each mutation is caught with the simulator's message.
// The Rewrite.* tests need only LLVM 19; Kernels.* need Mojo too and exit 77 (skipped) without it.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cudasim.h"
#include "rewrite.h"

namespace {

std::string mojo_path() {
  if (const char* m = std::getenv("SPECBENCH_MOJO"); m && *m) return m;
  return SB_SOURCE_DIR "/.venv/bin/mojo";
}

bool executable(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXUSR);
}

// kernels.mojo compiled, rewritten and loaded once per process.
void* g_module = nullptr;
std::string g_build_error;

void build_module() {
  const std::string dir = SB_WORK_DIR;
  const std::string ll = dir + "/kernels.ll";
  const std::string cmd = "mkdir -p '" + dir + "' && MODULAR_TELEMETRY_ENABLED=0 "
                          "MODULAR_CRASH_REPORTING_ENABLED=0 '" + mojo_path() +
                          "' build -g --emit llvm --target-triple nvptx64-nvidia-cuda "
                          "--target-accelerator nvidia:sm_90 -o '" + ll + "' '" SB_SOURCE_DIR
                          "/tests/mojo_gpusim/kernels.mojo' > '" + dir + "/mojo.log' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    g_build_error = "mojo build failed: see " + dir + "/mojo.log";
    return;
  }
  std::ifstream in(ll);
  std::stringstream ss;
  ss << in.rdbuf();
  sb::gpusim::RewriteResult r = sb::gpusim::rewrite(ss.str(), "kernels.ll");
  if (!r.error.empty()) {
    g_build_error = r.error;
    return;
  }
  const std::string so = dir + "/kernels.so";
  if (std::string e = sb::gpusim::compile(r.ir, so, "clang-19", SB_RUNTIME_DIR); !e.empty()) {
    g_build_error = e;
    return;
  }
  g_module = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!g_module) g_build_error = dlerror();
}

struct Buffer {
  float* p;
  size_t n;
  Buffer(size_t n_, float fill = 0) : n(n_) {
    p = static_cast<float*>(sb::sim::alloc(n * sizeof(float)));
    for (size_t i = 0; i < n; ++i) p[i] = fill;
  }
  ~Buffer() { sb::sim::free(p); }
  uint64_t arg() const { return reinterpret_cast<uint64_t>(p); }
};

// Launches `kernel` and returns the simulator's error ("" if none).
std::string launch(const char* kernel, unsigned grid, unsigned block, std::vector<uint64_t> args) {
  auto entry = reinterpret_cast<void (*)(void*)>(
      dlsym(g_module, (std::string(kernel) + "__sb_gpusim_entry").c_str()));
  if (!entry) return std::string("no entry for ") + kernel;
  sb_gpusim_launch(kernel, entry, args.data(), grid, 1, 1, block, 1, 1, 0);
  std::string e = sb::sim::take_error();
  ::testing::Test::RecordProperty(std::string("error_") + kernel, e);  // in --gtest_output=xml
  return e;
}

class Kernels : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    ASSERT_NE(g_module, nullptr) << g_build_error;
    sb::sim::set_schedule(GetParam());
  }
  void TearDown() override { sb::sim::set_schedule(0); }
};

// Mutations are run under the forward order (guard pages after each buffer).
class Mutations : public Kernels {};

TEST_P(Kernels, VaddIsRight) {
  const int n = 1000;
  Buffer a(n), b(n), c(n, -1);
  for (int i = 0; i < n; ++i) a.p[i] = static_cast<float>(i), b.p[i] = 2.0f * i;
  EXPECT_EQ(launch("vadd", 16, 64, {a.arg(), b.arg(), c.arg(), n}), "");
  for (int i = 0; i < n; ++i) ASSERT_EQ(c.p[i], 3.0f * i) << i;
}

TEST_P(Kernels, BlockSumIsRight) {
  const int n = 200;
  Buffer a(n), out(4, -1);
  for (int i = 0; i < n; ++i) a.p[i] = static_cast<float>(i % 7);
  EXPECT_EQ(launch("block_sum", 4, 64, {a.arg(), out.arg(), n}), "");
  for (int blk = 0; blk < 4; ++blk) {
    float want = 0;
    for (int i = blk * 64; i < std::min(n, blk * 64 + 64); ++i) want += a.p[i];
    EXPECT_EQ(out.p[blk], want) << blk;
  }
}

TEST_P(Kernels, WarpSumIsRight) {
  Buffer a(128), out(4, -1);
  for (int i = 0; i < 128; ++i) a.p[i] = static_cast<float>(i);
  EXPECT_EQ(launch("warp_sum", 2, 64, {a.arg(), out.arg()}), "");
  for (int w = 0; w < 4; ++w) EXPECT_EQ(out.p[w], 32.0f * 32 * w + 496.0f) << w;
}

TEST_P(Kernels, TotalSumWithAtomicsIsRightAndRaceFree) {
  const int n = 200;
  Buffer a(n), out(1, 0);
  for (int i = 0; i < n; ++i) a.p[i] = static_cast<float>(i % 5);
  EXPECT_EQ(launch("total_sum", 4, 64, {a.arg(), out.arg(), n}), "");
  EXPECT_EQ(out.p[0], 400.0f);
}

TEST_P(Kernels, CountsSectors) {
  const int n = 1024;
  Buffer a(n), b(n), c(n);
  sb::sim::reset_traffic();
  sb::sim::count_traffic(true);
  std::string err = launch("vadd", 16, 64, {a.arg(), b.arg(), c.arg(), n});
  sb::sim::count_traffic(false);
  EXPECT_EQ(err, "");
  sb::sim::Traffic t = sb::sim::traffic();
  EXPECT_EQ(t.requests, 3u * 32);  // two loads and a store per warp
  EXPECT_EQ(t.sectors, 3u * n * 4 / 32);
  EXPECT_EQ(t.bytes, 3u * n * 4);
}

// Under the forward order only: the reversed order puts the guard page before each buffer, so
// one element past the end stays inside the buffer's last page.
TEST(MutationsForward, GuardWidenedByOneIsOutOfBounds) {
  ASSERT_NE(g_module, nullptr) << g_build_error;
  sb::sim::set_schedule(0);
  const int n = 1000;
  Buffer a(n), b(n), c(n);
  EXPECT_EQ(launch("vadd_guard_widened", 16, 64, {a.arg(), b.arg(), c.arg(), n}),
            "cudasim: kernel vadd_guard_widened (mojo_gpusim), block (15,0,0): "
            "out-of-bounds global access by thread (40,0,0): byte offset 4000 of a buffer of "
            "4000 bytes");
}

TEST_P(Mutations, RemovedBarrierIsASharedMemoryRace) {
  const int n = 200;
  Buffer a(n), out(4);
  std::string e = launch("block_sum_no_barrier", 4, 64, {a.arg(), out.arg(), n});
  EXPECT_NE(e.find("cudasim: kernel block_sum_no_barrier (mojo_gpusim), block "),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("shared-memory race on block_sum_no_barrier._global_alloc_0._gpu_shared_mem["),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("in the same barrier interval"), std::string::npos) << e;
}

TEST_P(Mutations, EarlyReturnBeforeBarrierIsBarrierDivergence) {
  const int n = 200;
  Buffer a(n), out(4);
  std::string e = launch("block_sum_early_return", 4, 64, {a.arg(), out.arg(), n});
  EXPECT_NE(e.find("block (3,0,0): barrier divergence: thread "), std::string::npos) << e;
  EXPECT_NE(e.find("waits at __syncthreads (kernels.mojo:"), std::string::npos) << e;
  EXPECT_NE(e.find("but 56 thread(s) of the block already exited without reaching it"),
            std::string::npos)
      << e;
}

TEST_P(Mutations, NarrowedShuffleMaskIsAMaskError) {
  Buffer a(64), out(2);
  std::string e = launch("warp_sum_narrow_mask", 1, 64, {a.arg(), out.arg()});
  EXPECT_NE(e.find("calls __shfl_down_sync with mask 0x0000ffff, which does not include "
                   "its own lane (kernels.mojo:"),
            std::string::npos)
      << e;
}

TEST_P(Mutations, TwoBlocksWritingOneElementIsAGlobalRace) {
  const int n = 200;
  Buffer a(n), out(1);
  std::string e = launch("total_sum_no_atomic", 4, 64, {a.arg(), out.arg(), n});
  EXPECT_NE(e.find("global-memory race at byte offset 0 of a buffer of 4 bytes: thread (0,0,0) "),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("with no barrier between blocks; at least one is not atomic"),
            std::string::npos)
      << e;
}

INSTANTIATE_TEST_SUITE_P(Orders, Kernels, ::testing::Values(0, 1),
                         [](const auto& i) { return i.param ? "reversed" : "forward"; });
INSTANTIATE_TEST_SUITE_P(Orders, Mutations, ::testing::Values(0, 1),
                         [](const auto& i) { return i.param ? "reversed" : "forward"; });

// The rewriter alone, on hand-written NVVM IR.
const char* kHead =
    "target datalayout = \"e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64\"\n"
    "target triple = \"nvptx64-nvidia-cuda\"\n";

TEST(Rewrite, UnknownNvvmIntrinsicIsAnError) {
  std::string ir = std::string(kHead) +
                   "define ptx_kernel void @k(ptr %p) {\n"
                   "  %c = call i64 @llvm.nvvm.read.ptx.sreg.clock64()\n"
                   "  store i64 %c, ptr %p\n  ret void\n}\n"
                   "declare i64 @llvm.nvvm.read.ptx.sreg.clock64()\n";
  sb::gpusim::RewriteResult r = sb::gpusim::rewrite(ir, "k.ll");
  EXPECT_EQ(r.error, "k.ll: not supported yet: llvm.nvvm.read.ptx.sreg.clock64 in @k");
}

TEST(Rewrite, UnknownInlinePtxIsAnError) {
  std::string ir = std::string(kHead) +
                   "define ptx_kernel void @k(ptr %p) {\n"
                   "  %v = call float asm \"ex2.approx.f16x2 $0, $1;\", \"=f,f\"(float 1.0)\n"
                   "  store float %v, ptr %p\n  ret void\n}\n";
  sb::gpusim::RewriteResult r = sb::gpusim::rewrite(ir, "k.ll");
  EXPECT_EQ(r.error, "k.ll: not supported yet: inline PTX \"ex2.approx.f16x2 $0, $1;\" in @k");
}

TEST(Rewrite, NotNvvmIsAnError) {
  sb::gpusim::RewriteResult r = sb::gpusim::rewrite(
      "target triple = \"x86_64-pc-linux-gnu\"\ndefine void @f() {\n  ret void\n}\n", "f.ll");
  EXPECT_EQ(r.error, "f.ll: not NVVM IR (target triple \"x86_64-pc-linux-gnu\")");
}

// The newer LLVM's syntax that LLVM 19 cannot read, as Mojo 1.2.0 writes it: words for infinities,
// f0x doubles, floats as their shortest decimal, inline comments, captures(none) and one-operand
// lifetime markers. Each is translated, keeping the values.
TEST(Rewrite, NewerLlvmSyntaxIsTranslated) {
  std::string ir = std::string(kHead) +
                   "define ptx_kernel void @k(ptr captures(none) %p, ptr %q, i1 %c) {\n"
                   "  %a = alloca float, align 4\n"
                   "  call void @llvm.lifetime.start.p0(ptr %a)\n"
                   "  %v = select i1 %c, float -inf, float 4.471500e-02\n"
                   "  store float %v, ptr %p\n"
                   "  %n = call i1 @llvm.is.fpclass.f32(float %v, /* (nan) */ i32 3)\n"
                   "  %d = select i1 %n, double f0xC0862B7D369A5715, double 0.5\n"
                   "  store double %d, ptr %q\n"
                   "  call void @llvm.lifetime.end.p0(ptr %a)\n"
                   "  ret void\n}\n"
                   "declare i1 @llvm.is.fpclass.f32(float, i32)\n"
                   "declare void @llvm.lifetime.start.p0(ptr captures(none))\n"
                   "declare void @llvm.lifetime.end.p0(ptr captures(none))\n";
  sb::gpusim::RewriteResult r = sb::gpusim::rewrite(ir, "k.ll");
  ASSERT_EQ(r.error, "");
  EXPECT_NE(r.ir.find("0xFFF0000000000000"), std::string::npos) << r.ir;  // -inf
  // 4.471500e-02 as the nearest float, written as that float's double bits.
  EXPECT_NE(r.ir.find("0x3FA6E4E260000000"), std::string::npos) << r.ir;
  EXPECT_NE(r.ir.find("0xC0862B7D369A5715"), std::string::npos) << r.ir;
  EXPECT_EQ(r.ir.find("lifetime"), std::string::npos) << r.ir;
  EXPECT_EQ(r.ir.find("captures"), std::string::npos) << r.ir;
}

TEST(Rewrite, SharedGlobalsAndRegistersBecomeSimulatorCalls) {
  std::string ir = std::string(kHead) +
                   "@sh = internal addrspace(3) global [64 x float] undef, align 4\n"
                   "define ptx_kernel void @k(ptr %p) {\n"
                   "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
                   "  %q = getelementptr float, ptr addrspace(3) @sh, i32 %t\n"
                   "  store float 1.0, ptr addrspace(3) %q\n"
                   "  call void @llvm.nvvm.barrier0()\n"
                   "  %v = load float, ptr addrspace(3) @sh\n"
                   "  store float %v, ptr %p\n  ret void\n}\n"
                   "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
                   "declare void @llvm.nvvm.barrier0()\n";
  sb::gpusim::RewriteResult r = sb::gpusim::rewrite(ir, "k.ll");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.ir.find("addrspace"), std::string::npos) << r.ir;
  EXPECT_EQ(r.ir.find("llvm.nvvm"), std::string::npos) << r.ir;
  EXPECT_EQ(r.ir.find("ptx_kernel"), std::string::npos) << r.ir;
  EXPECT_NE(r.ir.find("call ptr @sb_gpusim_shared(i32 0, i64 256, i64 4, i64 4"),
            std::string::npos) << r.ir;
  EXPECT_NE(r.ir.find("call i32 @sb_gpusim_sreg(i32 0)"), std::string::npos) << r.ir;
  EXPECT_NE(r.ir.find("call void @sb_gpusim_barrier("), std::string::npos) << r.ir;
  EXPECT_NE(r.ir.find("define void @k__sb_gpusim_entry(ptr"), std::string::npos) << r.ir;
  EXPECT_NE(r.ir.find("x86_64"), std::string::npos) << r.ir;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string filter = ::testing::GTEST_FLAG(filter);
  const bool needs_mojo = filter.find("Rewrite") == std::string::npos;
  if (needs_mojo) {
    if (!executable(mojo_path())) {
      std::printf("SKIPPED: mojo not found at %s (harness/scripts/setup.sh installs it)\n",
                  mojo_path().c_str());
      return 77;
    }
    if (std::system("command -v clang-19 > /dev/null 2>&1") != 0) {
      std::printf("SKIPPED: clang-19 not found\n");
      return 77;
    }
    build_module();
  }
  return RUN_ALL_TESTS();
}
