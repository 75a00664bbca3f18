// Unit tests of the blocked GEMM as loop IR (codegen/lower/blocked_gemm.h) and of its two
// printers (backends/cpu/print_loops.h, backends/mojo/print_loops.h).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "backends/cpu/print_loops.h"
#include "backends/emitter.h"
#include "backends/mojo/print_loops.h"
#include "lower/blocked_gemm.h"

namespace sb {
namespace {

using loops::ForKind;
using loops::MemScope;
using loops::Stmt;
using loops::StmtKind;

const loops::Function& function(const loops::Module& m, const std::string& name) {
  for (const loops::Function& f : m.functions)
    if (f.name == name) return f;
  ADD_FAILURE() << "no function " << name;
  return m.functions.front();
}

// The first statement of `b` (pre-order) that `pred` accepts, or null.
const Stmt* find(const loops::Block& b, const std::function<bool(const Stmt&)>& pred) {
  const Stmt* hit = nullptr;
  loops::for_each_stmt(b, [&](const Stmt& s) {
    if (!hit && pred(s)) hit = &s;
  });
  return hit;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(BlockedGemm, FourRoutinesInCallOrder) {
  const loops::Module m = blocked_gemm(DType::F32, gemm_target_cpu());
  ASSERT_EQ(m.functions.size(), 4u);
  EXPECT_EQ(m.functions[0].name, "sb_gemm_pack_x_f32");
  EXPECT_EQ(m.functions[1].name, "sb_gemm_pack_y_f32");
  EXPECT_EQ(m.functions[2].name, "sb_gemm_tile_f32");
  EXPECT_EQ(m.functions[3].name, "sb_gemm_f32");
  EXPECT_EQ(m.functions[3].result, loops::int_t());
  EXPECT_EQ(blocked_gemm(DType::F64, gemm_target_mojo()).functions[3].name, "sb_gemm_f64");
}

TEST(BlockedGemm, RegisterTileRulesPerTarget) {
  // MR by native vector size: 12 from 64 bytes, 6 from 32, and below that each target's own.
  for (const GemmTarget* t : {&gemm_target_cpu(), &gemm_target_mojo()}) {
    const loops::Module m = blocked_gemm(DType::F32, *t);
    const std::set<int64_t> mr = loops::possible_values(*loops::var("sb_gemm_mr_f32", loops::int_t()), m);
    EXPECT_EQ(mr, (std::set<int64_t>{t->mr_narrow, 6, 12})) << t->name;
  }
  EXPECT_EQ(gemm_target_cpu().mr_narrow, 4);
  EXPECT_EQ(gemm_target_mojo().mr_narrow, 6);
}

TEST(BlockedGemm, MicroKernelLoopNest) {
  const loops::Module m = blocked_gemm(DType::F32, gemm_target_cpu());
  const loops::Function& tile = function(m, "sb_gemm_tile_f32");
  // The accumulators: MR x 2 vectors in registers.
  const Stmt* acc = find(tile.body, [](const Stmt& s) {
    return s.kind == StmtKind::Alloc && s.scope == MemScope::Register;
  });
  ASSERT_NE(acc, nullptr);
  EXPECT_EQ(acc->type, loops::vec_t(DType::F32));
  ASSERT_EQ(acc->exprs.size(), 2u);
  // Inside: the serial k loop, and in it the unrolled loop over rows with two fmas.
  const Stmt* k = find(acc->body, [](const Stmt& s) {
    return s.kind == StmtKind::For && s.name == "p" && s.for_kind == ForKind::Serial;
  });
  ASSERT_NE(k, nullptr);
  const Stmt* rows = find(k->body, [](const Stmt& s) {
    return s.kind == StmtKind::For && s.for_kind == ForKind::Unrolled;
  });
  ASSERT_NE(rows, nullptr);
  int fmas = 0;
  loops::for_each_stmt(rows->body, [&](const Stmt& s) {
    fmas += s.kind == StmtKind::Store && s.name == "acc" &&
            s.exprs[0]->kind == loops::ExprKind::Fma;
  });
  EXPECT_EQ(fmas, 2);
  // The ragged edge through a stack-local tile.
  EXPECT_NE(find(tile.body,
                 [](const Stmt& s) {
                   return s.kind == StmtKind::Alloc && s.scope == MemScope::StackLocal;
                 }),
            nullptr);
}

TEST(BlockedGemm, DriverSplitsRowBlocksOverThreadsInOneAlignedScratchBuffer) {
  const loops::Module m = blocked_gemm(DType::F64, gemm_target_cpu());
  const loops::Function& g = function(m, "sb_gemm_f64");
  const Stmt* scratch = find(g.body, [](const Stmt& s) {
    return s.kind == StmtKind::Alloc && s.scope == MemScope::HeapScratch;
  });
  ASSERT_NE(scratch, nullptr);
  EXPECT_EQ(scratch->align, kGemmPanelAlign);
  EXPECT_TRUE(scratch->persistent);
  ASSERT_EQ(scratch->other.size(), 1u);  // on_fail: return 1
  EXPECT_EQ(scratch->other[0]->kind, StmtKind::Return);
  EXPECT_EQ(loops::to_string(*scratch->other[0]->exprs[0]), "1");
  // One parallel loop over the thread chunks, bounded by nt; the loop order inside it.
  ASSERT_EQ(scratch->body.size(), 1u);
  const Stmt& par = *scratch->body[0];
  EXPECT_EQ(par.kind, StmtKind::For);
  EXPECT_EQ(par.for_kind, ForKind::Parallel);
  ASSERT_NE(par.threads, nullptr);
  EXPECT_EQ(loops::to_string(*par.threads), "nt");
  std::vector<std::string> order;
  loops::for_each_stmt(par.body, [&](const Stmt& s) {
    if (s.kind == StmtKind::For) order.push_back(s.name);
  });
  EXPECT_EQ(order, (std::vector<std::string>{"jc", "pc", "jp", "blk", "ip", "jr", "ir"}));
}

TEST(BlockedGemm, WholeContiguousStripsOfYCopyAsVectors) {
  // pack_y: a whole strip (w == NR) of a Y with contiguous columns (ys_j == 1) copies each step's
  // NR elements as two vector loads and stores; any other strip, and pack_x, element by element.
  const loops::Module m = blocked_gemm(DType::F32, gemm_target_cpu());
  const loops::Function& y = function(m, "sb_gemm_pack_y_f32");
  ASSERT_EQ(y.body.size(), 1u);
  ASSERT_EQ(y.body[0]->kind, StmtKind::If);
  int vector_stores = 0;
  loops::for_each_stmt(y.body[0]->body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Store && s.width == loops::Width::Vector) ++vector_stores;
  });
  EXPECT_EQ(vector_stores, 2);
  EXPECT_FALSE(y.body[0]->other.empty());
  const loops::Function& x = function(m, "sb_gemm_pack_x_f32");
  EXPECT_EQ(find(x.body, [](const Stmt& s) { return s.kind == StmtKind::If; }), nullptr);
  const std::string c = print_cpu_loops({m});
  EXPECT_TRUE(
      has(c,
          "  if (ys_j == 1 && w == sb_gemm_nr_f32) {\n"
          "    for (int64_t p = 0; p < kc; ++p) {\n"
          "      sb_simd_store_f32(dst + p * sb_gemm_nr_f32, sb_simd_load_f32(y + p * ys_k));\n"))
      << c;
  EXPECT_TRUE(has(c, "  } else {\n    for (int64_t p = 0; p < kc; ++p) {")) << c;
  const std::string mojo = print_mojo_loops({blocked_gemm(DType::F32, gemm_target_mojo())});
  EXPECT_TRUE(has(mojo, "    if ys_j == 1 and w == sb_gemm_nr_f32:\n")) << mojo;
  EXPECT_TRUE(has(mojo, "y.unsafe_load[width=sb_gemm_vl_f32](p * ys_k + sb_gemm_vl_f32)")) << mojo;
  // An operand that widens as it is packed keeps the element loop.
  const loops::Module h = blocked_gemm(DType::F32, gemm_target_cpu(), {{DType::BF16, DType::BF16}});
  EXPECT_EQ(find(function(h, "sb_gemm_pack_y_bf16_f32").body,
                 [](const Stmt& s) { return s.kind == StmtKind::If; }),
            nullptr);
}

TEST(BlockedGemm, CpuPrinterKeepsTheCForm) {
  const std::string c = print_cpu_loops({blocked_gemm(DType::F32, gemm_target_cpu())});
  EXPECT_TRUE(has(c, "#if defined(__AVX512F__)\n#define SB_SIMD_BYTES 64\n")) << c;
  EXPECT_TRUE(has(c, "typedef float sb_simd_f32 __attribute__((vector_size(SB_SIMD_BYTES)));"));
  EXPECT_TRUE(has(c, "static constexpr int64_t sb_gemm_mr_f32 = sb_gemm_vl_f32 * 4 >= 64 ? 12 : "
                     "sb_gemm_vl_f32 * 4 >= 32 ? 6 : 4;"))
      << c;
  EXPECT_TRUE(has(c, "static inline void sb_gemm_tile_f32(int64_t kc, const float* __restrict ap,"));
  EXPECT_TRUE(has(c, "  sb_simd_f32 acc[sb_gemm_mr_f32][2];\n  #pragma GCC unroll 12\n")) << c;
  EXPECT_TRUE(has(c, "acc[r][0] += a * b0;")) << c;
  EXPECT_TRUE(has(c, "#pragma omp parallel for schedule(static) num_threads(nt)")) << c;
  EXPECT_TRUE(has(c, "static thread_local float* sb_gemm_f32_scratch = NULL;"));
  EXPECT_TRUE(has(c, "aligned_alloc(64, ")) << c;
  EXPECT_TRUE(has(c, "sb_gemm_f32_scratch_cap = 0;\n      return 1;")) << c;
}

TEST(BlockedGemm, MojoPrinterUnrollsTheTileIntoNamedAccumulators) {
  const std::string m = print_mojo_loops({blocked_gemm(DType::F32, gemm_target_mojo())});
  EXPECT_TRUE(has(m, "comptime sb_gemm_vl_f32 = simd_width_of[DType.float32]()")) << m;
  EXPECT_TRUE(has(m, "comptime sb_gemm_mr_f32 = 12 if sb_gemm_vl_f32 * 4 >= 64 else 6 if "
                     "sb_gemm_vl_f32 * 4 >= 32 else 6"))
      << m;
  EXPECT_TRUE(has(m, "var acc11_1 = SIMD[DType.float32, sb_gemm_vl_f32](0)")) << m;
  // The declarations are the zeros: the IR's zero fill is not printed again.
  EXPECT_FALSE(has(m, "    acc0_0 = SIMD[")) << m;
  EXPECT_TRUE(has(m, "acc5_1 = a5.fma(b1, acc5_1)")) << m;
  EXPECT_TRUE(has(m, "comptime if sb_gemm_mr_f32 > 6:")) << m;
  EXPECT_TRUE(has(m, "acc11_1 = a11.fma(b1, acc11_1)")) << m;
  EXPECT_FALSE(has(m, "comptime if sb_gemm_mr_f32 > 12:")) << m;
  EXPECT_TRUE(has(m, "parallelize(sb_par_t, nt)")) << m;
  // One thread's share runs on the calling thread, with no parallelize: a product run side by
  // side with others calls the GEMM from a task of another parallelize.
  EXPECT_TRUE(has(m, "    if nt == 1:\n        sb_par_t(0)\n    else:\n        parallelize(sb_par_t, nt)\n"))
      << m;
  EXPECT_TRUE(has(m, "def sb_gemm_f32(")) << m;
}

// Operands of a storage type: a packing routine per operand type and side that widens each
// element (a Cast of the load to f32), one micro-kernel, a driver per pair of operand types.
TEST(BlockedGemm, StorageOperandsAreWidenedWhileTheyArePacked) {
  const loops::Module m = blocked_gemm(
      DType::F32, gemm_target_cpu(),
      {{DType::BF16, DType::BF16}, {DType::F16, DType::F32}, {DType::F32, DType::F32}});
  std::vector<std::string> names;
  for (const loops::Function& f : m.functions) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "sb_gemm_pack_x_f32", "sb_gemm_pack_x_f16_f32", "sb_gemm_pack_x_bf16_f32",
                       "sb_gemm_pack_y_f32", "sb_gemm_pack_y_bf16_f32", "sb_gemm_tile_f32",
                       "sb_gemm_f32", "sb_gemm_f16_f32_f32", "sb_gemm_bf16_bf16_f32"}));
  EXPECT_EQ(blocked_gemm_name(DType::F32, DType::BF16, DType::BF16), "sb_gemm_bf16_bf16_f32");
  EXPECT_EQ(blocked_gemm_name(DType::F64, DType::F64, DType::F64), "sb_gemm_f64");

  // The widening pack reads bf16 through its pointer and stores the f32 it widens to.
  const loops::Function& pack = function(m, "sb_gemm_pack_y_bf16_f32");
  EXPECT_EQ(pack.params[2].name, "y");
  EXPECT_EQ(pack.params[2].type.elem, DType::BF16);
  const Stmt* st = find(pack.body, [](const Stmt& s) {
    return s.kind == StmtKind::Store && s.exprs[0]->kind == loops::ExprKind::Cast;
  });
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->type.elem, DType::F32);
  EXPECT_EQ(st->exprs[0]->type.elem, DType::F32);
  EXPECT_EQ(st->exprs[0]->args[0]->kind, loops::ExprKind::Load);
  EXPECT_EQ(st->exprs[0]->args[0]->type.elem, DType::BF16);
  // f32 operands pack without a conversion.
  EXPECT_EQ(find(function(m, "sb_gemm_pack_y_f32").body,
                 [](const Stmt& s) {
                   return s.kind == StmtKind::Store && s.exprs[0]->kind == loops::ExprKind::Cast;
                 }),
            nullptr);

  // The driver of a pair calls that pair's packing routines and the one micro-kernel.
  const loops::Function& drv = function(m, "sb_gemm_f16_f32_f32");
  EXPECT_EQ(drv.params[3].type.elem, DType::F16);
  EXPECT_EQ(drv.params[6].type.elem, DType::F32);
  std::set<std::string> calls;
  loops::for_each_stmt(drv.body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Evaluate) calls.insert(s.exprs[0]->name);
  });
  EXPECT_EQ(calls, (std::set<std::string>{"sb_gemm_pack_x_f16_f32", "sb_gemm_pack_y_f32",
                                          "sb_gemm_tile_f32"}));

  // The printers: C converts through the element struct's operator float, Mojo by SIMD.cast.
  const std::string c = print_cpu_loops({m});
  EXPECT_TRUE(has(c, "static inline void sb_gemm_pack_y_bf16_f32(int64_t kc, int64_t w, const "
                     "sb_bf16* y,"))
      << c;
  EXPECT_TRUE(has(c, "dst[p * sb_gemm_nr_f32 + q] = (float)y[p * ys_k + q * ys_j];")) << c;
  EXPECT_TRUE(has(c, "static int64_t sb_gemm_bf16_bf16_f32(int64_t M, int64_t N, int64_t K, const "
                     "sb_bf16* x,"))
      << c;
  const std::string mj = print_mojo_loops({blocked_gemm(DType::F32, gemm_target_mojo(),
                                                        {{DType::BF16, DType::F16}})});
  EXPECT_TRUE(has(mj, "x: Pointer[BFloat16, ImmUntrackedOrigin]")) << mj;
  EXPECT_TRUE(has(mj, "= y[unsafe_offset=p * ys_k + q * ys_j].cast[DType.float32]()")) << mj;
  EXPECT_TRUE(has(mj, "def sb_gemm_bf16_f16_f32(")) << mj;
  EXPECT_FALSE(has(mj, "def sb_gemm_f32(")) << mj;
}

TEST(BlockedGemm, DumpWithoutAContractionSaysNoGemm) {
  Spec s;
  s.name = "relu";
  Variant v;
  v.name = "bm";
  v.strategy = "blocked_matmul";
  s.variants["cpu"] = {v};
  const Emitter* cpu = find_emitter("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->uses_blocked_gemm(v));
  const auto uses = [cpu](const Variant& x) { return cpu->uses_blocked_gemm(x); };
  const std::string d = dump_blocked_gemm(s, "cpu", cpu->gemm_target(), uses);
  EXPECT_TRUE(has(d, "# IR after blocked_gemm for backend cpu\n")) << d;
  EXPECT_TRUE(has(d, "no GEMM")) << d;
  // A backend that does not print the loop IR has no target and dumps nothing.
  const Emitter* mlir = find_emitter("mlir");
  ASSERT_NE(mlir, nullptr);
  EXPECT_EQ(mlir->gemm_target(), nullptr);
  EXPECT_EQ(dump_blocked_gemm(s, "mlir", mlir->gemm_target(), uses), "");
}

}  // namespace
}  // namespace sb
