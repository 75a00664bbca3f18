// Unit tests of the GPU mapping pass (codegen/lower/gpu_mapping.h): which steps a strategy's
// schedule gives a spec, fused row groups and their plans, and the dump.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "backends/cuda/strategies/strategy.h"
#include "lower/fuse_attention.h"
#include "lower/gpu_mapping.h"
#include "lower/row_fusion.h"
#include "rc_spec.h"

namespace sb {
namespace {

Spec load(const std::string& tensors, const std::string& compute) {
  Spec spec = load_rc_spec(tensors, compute);
  row_fusion(spec);  // the passes before gpu_mapping that it reads
  fuse_attention(spec);
  return spec;
}

const char* kSoftmaxTensors =
    "  x: {type: f32, shape: [R, C], role: in}\n"
    "  w: {type: f32, shape: [C], role: in}\n"
    "  m: {type: f32, shape: [R], role: temp}\n"
    "  e: {type: f32, shape: [R, C], role: temp}\n"
    "  s: {type: f32, shape: [R], role: temp}\n"
    "  y: {type: f32, shape: [R, C], role: out}\n";
const char* kSoftmax =
    "  m[r] = max(c in 0..C: x[r, c])\n"
    "  e[r, c] = exp(x[r, c] - m[r])\n"
    "  s[r] = sum(c in 0..C: e[r, c])\n"
    "  y[r, c] = e[r, c] / s[r] * w[c]\n";

GpuMapping map_with(const Spec& spec, const char* strategy) {
  const cuda::CudaStrategy* s = cuda::find_cuda_strategy(strategy);
  EXPECT_NE(s, nullptr) << strategy;
  return gpu_mapping(spec, s->fuse, s->place);
}

TEST(GpuMapping, AFusingStrategyMapsTheRowGroupToOneKernel) {
  const Spec spec = load(kSoftmaxTensors, kSoftmax);
  for (const char* strategy : {"warp_per_row", "block_per_row"}) {
    const GpuMapping m = map_with(spec, strategy);
    ASSERT_EQ(m.steps.size(), 1u) << strategy;
    const GpuStep& g = m.steps[0];
    EXPECT_EQ(g.kind, GpuKernel::FusedRows);
    EXPECT_EQ(g.first, 0u);
    EXPECT_EQ(g.last, 3u);
    EXPECT_EQ(g.unit, std::string(strategy) == "warp_per_row" ? RowUnit::Warp : RowUnit::Block);
    const int x = spec.find_tensor("x"), w = spec.find_tensor("w"), e = spec.find_tensor("e");
    EXPECT_EQ(g.rows.regs, (std::vector<int>{spec.find_tensor("m"), spec.find_tensor("s")}));
    EXPECT_EQ(g.rows.rows, std::vector<int>{e});
    EXPECT_EQ(g.rows.cached, std::vector<int>{x});  // read by two statements of the group
    EXPECT_EQ(g.rows.bcast, std::vector<int>{w});   // the same for every row
  }
}

// The decisions every GPU printer's fused row kernel and launch read from the plan.
TEST(GpuMapping, ARowPlanNamesItsAnchorItsKeptOutputsAndItsSharedRows) {
  const Spec spec = load(kSoftmaxTensors, kSoftmax);
  const RowPlan p = map_with(spec, "warp_per_row").steps.at(0).rows;
  // e is the first rank-2 output, but a row temp: the first one stored to memory is y.
  EXPECT_EQ(p.anchor, spec.find_tensor("y"));
  EXPECT_TRUE(p.kept.empty());  // m and s are temps
  EXPECT_EQ(p.reduce_types, std::set<DType>{DType::F32});  // m's max and s's sum
  EXPECT_TRUE(stages_rows(p));
  EXPECT_EQ(worker_rows(p), (std::vector<int>{spec.find_tensor("x"), spec.find_tensor("e")}));
  // w is staged once per block, so a block takes kMinRowsPerBlock rows whatever its unit.
  EXPECT_EQ(rows_per_block(p, RowUnit::Warp, 256), kMinRowsPerBlock);
  EXPECT_EQ(rows_per_block(p, RowUnit::Warp, 1024), 32);
  EXPECT_EQ(rows_per_block(p, RowUnit::Block, 256), kMinRowsPerBlock);

  const Spec norm = load(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  mean: {type: f32, shape: [R], role: out}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  mean[r] = sum(c in 0..C: x[r, c]) * 0.5\n"
      "  y[r, c] = x[r, c] - mean[r]\n");
  const RowPlan q = map_with(norm, "block_per_row").steps.at(0).rows;
  EXPECT_EQ(q.kept, std::vector<int>{norm.find_tensor("mean")});  // an output: stored
  EXPECT_EQ(q.anchor, norm.find_tensor("y"));
  EXPECT_EQ(worker_rows(q), std::vector<int>{norm.find_tensor("x")});
  // No broadcast tensor: under a warp per row, one row per warp of the block.
  EXPECT_EQ(rows_per_block(q, RowUnit::Warp, 256), 8);
  EXPECT_EQ(rows_per_block(q, RowUnit::Warp, 64), 2);
  EXPECT_EQ(rows_per_block(q, RowUnit::Block, 64), kMinRowsPerBlock);

  const Spec once = load(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  z: {type: f32, shape: [R, C], role: in}\n"
      "  m: {type: f32, shape: [R], role: temp}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  m[r] = max(c in 0..C: x[r, c])\n"
      "  y[r, c] = z[r, c] - m[r]\n");
  const GpuMapping om = map_with(once, "warp_per_row");
  ASSERT_EQ(om.steps.size(), 1u);
  EXPECT_EQ(om.steps[0].kind, GpuKernel::FusedRows);
  EXPECT_FALSE(stages_rows(om.steps[0].rows));  // every row is read once: nothing to stage
  EXPECT_TRUE(worker_rows(om.steps[0].rows).empty());
}

TEST(GpuMapping, AFusedKernelReadsEachTensorFromWhereThePlanKeepsIt) {
  const Spec spec = load(kSoftmaxTensors, kSoftmax);
  const RowPlan p = map_with(spec, "warp_per_row").steps.at(0).rows;
  const int x = spec.find_tensor("x"), w = spec.find_tensor("w"), m = spec.find_tensor("m"),
            e = spec.find_tensor("e"), s = spec.find_tensor("s");
  EXPECT_EQ(row_read(p, m, true), RowRead::Register);
  EXPECT_EQ(row_read(p, s, false), RowRead::Register);
  EXPECT_EQ(row_read(p, x, true), RowRead::SharedRow);
  EXPECT_EQ(row_read(p, e, true), RowRead::SharedRow);
  EXPECT_EQ(row_read(p, w, true), RowRead::SharedBlock);
  // Without shared memory, x and w are read from memory and e is computed again.
  EXPECT_EQ(row_read(p, x, false), RowRead::Global);
  EXPECT_EQ(row_read(p, w, false), RowRead::Global);
  EXPECT_EQ(row_read(p, e, false), RowRead::Recompute);
  // Between statements always; after the last only where the next row's staging follows.
  EXPECT_TRUE(barrier_after(p, 0, false));
  EXPECT_TRUE(barrier_after(p, 2, false));
  EXPECT_FALSE(barrier_after(p, 3, false));
  EXPECT_TRUE(barrier_after(p, 3, true));
}

TEST(GpuMapping, ARecomputedRowTempBindsItsStatementToTheReadsSubscripts) {
  const Spec spec = load(kSoftmaxTensors, kSoftmax);
  const RowPlan p = map_with(spec, "warp_per_row").steps.at(0).rows;
  // s[r] = sum(c in 0..C: e[r, c]): the read of e.
  const Expr& sum = *spec.stmts[2].rhs;
  const Expr* read = nullptr;
  for (const Expr* r : reads_of(sum))
    if (r->ref == spec.find_tensor("e")) read = r;
  ASSERT_NE(read, nullptr);
  const Recompute rc = recompute(spec, p, *read);
  EXPECT_EQ(rc.producer, &spec.stmts[1]);  // e[r, c] = exp(x[r, c] - m[r])
  ASSERT_EQ(rc.binds.size(), 3u);           // x's r and c, m's r
  for (const auto& [v, sub] : rc.binds) {
    EXPECT_EQ(v->kind, ExprKind::IndexVar);
    EXPECT_EQ(sub, read->args[static_cast<size_t>(v->ref)].get());
  }
  EXPECT_EQ(rc.binds[1].second, read->args[1].get());  // c
}

TEST(GpuMapping, TheFusedKernelsDescriptionSaysWhereEachTensorLives) {
  const Spec spec = load(kSoftmaxTensors, kSoftmax);
  const RowPlan p = map_with(spec, "block_per_row").steps.at(0).rows;
  const std::string staged = describe(p, spec, RowUnit::Block, true);
  EXPECT_EQ(staged,
            "Row group fused into one kernel: each block owns a row at a time (rows grid-stride "
            "over a bounded grid) and computes these statements for it in order; m, s stay in "
            "registers (every thread holds its row's value); the row of e lives in shared "
            "memory; the row of x is staged in shared memory, read once; w (the same for every "
            "row) is staged once per block.");
  const std::string global = describe(p, spec, RowUnit::Warp, false);
  EXPECT_NE(global.find("each warp owns a row"), std::string::npos) << global;
  EXPECT_NE(global.find("; the rows did not fit in shared memory, so reads go to global memory "
                        "and e is recomputed where it is read (no temp is stored)."),
            std::string::npos)
      << global;
}

TEST(GpuMapping, OtherStrategiesPlaceEachStatement) {
  const Spec spec = load(kSoftmaxTensors, kSoftmax);
  const GpuMapping t = map_with(spec, "thread_per_output");
  ASSERT_EQ(t.steps.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(t.steps[k].kind, GpuKernel::ThreadPerElement);
    EXPECT_EQ(t.steps[k].first, k);
    EXPECT_EQ(t.steps[k].last, k);
  }
  // vectorized takes the elementwise statements and leaves the reductions generic.
  const GpuMapping v = map_with(spec, "vectorized");
  ASSERT_EQ(v.steps.size(), 4u);
  EXPECT_EQ(v.steps[0].kind, GpuKernel::GridStride);
  EXPECT_EQ(v.steps[1].kind, GpuKernel::Vectorized);
  EXPECT_EQ(v.steps[2].kind, GpuKernel::GridStride);
  EXPECT_EQ(v.steps[3].kind, GpuKernel::Vectorized);
}

TEST(GpuMapping, AGroupThatCannotBeOneKernelIsPlacedStatementByStatement) {
  // A row temp with a boundary rule cannot be a fused kernel's output (plan_rows).
  const Spec spec = load(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  m: {type: f32, shape: [R], role: temp, boundary: clamp}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  m[r] = max(c in 0..C: x[r, c])\n"
      "  y[r, c] = x[r, c] - m[r]\n");
  const GpuMapping m = map_with(spec, "warp_per_row");
  ASSERT_EQ(m.steps.size(), 2u);
  EXPECT_EQ(m.steps[0].kind, GpuKernel::WarpPerRow);
  EXPECT_EQ(m.steps[1].kind, GpuKernel::GridStride);
}

TEST(GpuMapping, DumpNamesEveryStepAndWhereTheRowTensorsLive) {
  const Spec spec = load(kSoftmaxTensors, kSoftmax);
  const std::string d = dump(map_with(spec, "warp_per_row"), spec);
  EXPECT_NE(d.find("kernel 0: stmts 0..3 fused_rows, a warp per row; registers m, s; shared rows "
                   "e; staged rows x; staged per block w; rows in the segment order of y\n"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("  y[r, c] = e[r, c] / s[r] * w[c]\n"), std::string::npos) << d;
  const std::string g = dump(map_with(spec, "grid_stride"), spec);
  EXPECT_NE(g.find("kernel 3: stmt 3 grid_stride\n"), std::string::npos) << g;
}

const char* kAttentionTensors =
    "  q: {type: f32, shape: [R, C], role: in}\n"
    "  k: {type: f32, shape: [R, C], role: in}\n"
    "  v: {type: f32, shape: [R, C], role: in}\n"
    "  s: {type: f32, shape: [R, R], role: temp}\n"
    "  m: {type: f32, shape: [R], role: temp}\n"
    "  p: {type: f32, shape: [R, R], role: temp}\n"
    "  l: {type: f32, shape: [R], role: temp}\n"
    "  y: {type: f32, shape: [R, C], role: out}\n"
    "  u: {type: f32, shape: [R, C], role: out}\n";
const char* kAttention =
    "  s[i, j] = sum(d in 0..C: q[i, d] * k[j, d]) * 0.5\n"
    "  m[i] = max(j in 0..R: s[i, j])\n"
    "  p[i, j] = exp(s[i, j] - m[i])\n"
    "  l[i] = sum(j in 0..R: p[i, j])\n"
    "  y[i, e] = sum(j in 0..R: p[i, j] * v[j, e]) / l[i]\n"
    "  u[i, c] = q[i, c] + 1.0\n";

TEST(GpuMapping, FlashAttentionMapsAnAttentionGroupToOneKernel) {
  const Spec spec = load(kAttentionTensors, kAttention);
  const GpuMapping m = map_with(spec, "flash_attention");
  ASSERT_EQ(m.steps.size(), 2u);
  EXPECT_EQ(m.steps[0].kind, GpuKernel::FusedAttention);
  EXPECT_EQ(m.steps[0].first, 0u);
  EXPECT_EQ(m.steps[0].last, 4u);
  EXPECT_EQ(m.steps[0].att.s, spec.find_tensor("s"));
  EXPECT_EQ(m.steps[0].att.l, spec.find_tensor("l"));
  EXPECT_EQ(m.steps[1].kind, GpuKernel::GridStride);
  EXPECT_EQ(m.steps[1].first, 5u);
  const std::string d = dump(m, spec);
  EXPECT_NE(d.find("kernel 0: stmts 0..4 fused_attention, an online softmax over blocks of keys; "
                   "never written s, m, p, l\n"),
            std::string::npos)
      << d;
  // Any other strategy places the five statements one by one.
  EXPECT_EQ(map_with(spec, "thread_per_output").steps.size(), 6u);
  EXPECT_EQ(map_with(spec, "block_per_row").steps.size(), 6u);
}

TEST(GpuMapping, FlashAttentionFitsOnlyAnAttentionGroup) {
  // With the row sums read by another statement, the five are no attention group.
  const Spec spec = load(std::string(kAttentionTensors) + "  w: {type: f32, shape: [R], role: out}\n",
                         std::string(kAttention) + "  w[i] = l[i]\n");
  const GpuMapping m = map_with(spec, "flash_attention");
  ASSERT_EQ(m.steps.size(), 7u);
  for (const GpuStep& g : m.steps) EXPECT_EQ(g.kind, GpuKernel::GridStride);
}

}  // namespace
}  // namespace sb
