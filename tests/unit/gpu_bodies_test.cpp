// Unit tests of the GPU kernel bodies written once as loop IR (codegen/lower/gpu_bodies.h): what
// each body holds (its shared arrays, barriers, loops over the spec's index variables and the
// statement's assignment with the reads replaced), read from the loop IR itself.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "lower/gpu_bodies.h"
#include "lower/patterns.h"
#include "lower/row_fusion.h"
#include "rc_spec.h"

namespace sb {
namespace {

struct Counts {
  int barriers = 0, shared = 0, computes = 0, folds = 0, returns = 0, index_lets = 0, whiles = 0,
      atomics = 0;
};

Counts count(const loops::Block& b) {
  Counts c;
  loops::for_each_stmt(b, [&](const loops::Stmt& s) {
    c.barriers += s.kind == loops::StmtKind::Barrier;
    c.shared += s.kind == loops::StmtKind::Alloc && s.scope == loops::MemScope::Shared;
    c.computes += s.kind == loops::StmtKind::Compute;
    c.folds += s.kind == loops::StmtKind::Fold;
    c.returns += s.kind == loops::StmtKind::Return;
    c.index_lets += s.kind == loops::StmtKind::Let && s.index_var >= 0;
    c.whiles += s.kind == loops::StmtKind::While;
    c.atomics += s.kind == loops::StmtKind::Atomic;
  });
  return c;
}

TEST(GpuBodies, ATransposeStagesEachReadInAPaddedTileAndStoresFromIt) {
  const Spec spec = load_rc_spec(rc_tensors({"t", "y"}), "  y[r, c] = t[c, r] * 2.0\n");
  TransposeMatch m;
  std::string why;
  ASSERT_TRUE(match_transpose(spec, spec.stmts[0], &m, &why)) << why;
  const loops::Block b = transpose_tile(spec, spec.stmts[0], m, 32, 8);
  const Counts c = count(b);
  EXPECT_EQ(c.shared, 1);
  EXPECT_EQ(c.barriers, 1);
  EXPECT_EQ(c.computes, 1);
  EXPECT_EQ(c.index_lets, 4);  // both indices, in the load loop and in the store loop
  const std::string d = loops::dump(b);
  EXPECT_NE(d.find("alloc sb_tile0: f32[1056] shared"), std::string::npos) << d;
  EXPECT_NE(d.find("sb_tile0[((sb_y * 33) + sb_tx)] = spec<t[c, r]>"), std::string::npos) << d;
  EXPECT_NE(d.find("compute with t[c, r] = sb_tile0[((sb_tx * 33) + sb_y)]"), std::string::npos)
      << d;
}

TEST(GpuBodies, ATiledMatmulFoldsTheTilesProductsAndBatchesAlongZ) {
  const Spec spec = load_rc_spec(
      "  a: {type: f32, shape: [R, C, C], role: in}\n"
      "  w: {type: bf16, shape: [C, C], role: in}\n"
      "  y: {type: f32, shape: [R, C, C], role: out}\n",
      "  y[b, i, j] = sum(k in 0..C: a[b, i, k] * w[k, j])\n");
  MatmulMatch m;
  std::string why;
  ASSERT_TRUE(match_batched_matmul(spec, spec.stmts[0], &m, &why)) << why;
  ASSERT_TRUE(m.batched && m.a_batched && !m.b_batched);
  const loops::Block b = matmul_tile(spec, spec.stmts[0], m, 16);
  const Counts c = count(b);
  EXPECT_EQ(c.shared, 2);
  EXPECT_EQ(c.barriers, 2);
  EXPECT_EQ(c.folds, 2);  // the whole tile (unrolled) and the last partial one
  EXPECT_EQ(c.computes, 1);
  EXPECT_EQ(c.index_lets, 8);  // a: b, i, k; w: j, k; the output: b, i, j
  const std::string d = loops::dump(b);
  EXPECT_NE(d.find("alloc sb_ta: f32[272] shared"), std::string::npos) << d;
  EXPECT_NE(d.find("alloc sb_tb: f32[272] shared"), std::string::npos) << d;  // bf16 widened
  EXPECT_NE(d.find("for sb_bz in [block_idx.z, extent<y, 0>) step grid_dim.z serial"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("for sb_kk in [0, 16) step 1 unrolled"), std::string::npos) << d;
  EXPECT_NE(d.find("for sb_kk in [0, (sb_hi - sb_k0)) step 1 serial"), std::string::npos) << d;
  EXPECT_NE(d.find("spec<a[b, i, k] * w[k, j] with a[b, i, k] = sb_a, w[k, j] = sb_b>"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("compute with sum(k in 0..C: a[b, i, k] * w[k, j]) = sb_acc"), std::string::npos)
      << d;
}

TEST(GpuBodies, ElementKernelsBindEveryOutputIndexFromTheFlatIndex) {
  const Spec spec = load_rc_spec(rc_tensors({"a", "y"}), "  y[r, c] = a[r, c] + 1.0\n");
  const loops::Block one = element_body(spec, spec.stmts[0], false);
  const loops::Block strided = element_body(spec, spec.stmts[0], true);
  EXPECT_EQ(count(one).returns, 1);  // threads past the end return
  EXPECT_EQ(count(strided).returns, 0);
  EXPECT_EQ(count(one).index_lets, 2);
  const std::string d = loops::dump(strided);
  EXPECT_NE(d.find("for sb_t in [sb_first, sb_total) step sb_stride serial"), std::string::npos)
      << d;
  EXPECT_NE(d.find("let index<r>: int = (sb_t / extent<y, 1>)"), std::string::npos) << d;
  EXPECT_NE(d.find("let index<c>: int = (sb_t % extent<y, 1>)"), std::string::npos) << d;
}

TEST(GpuBodies, AVectorizedLoopSetsItsLanesByTheWidestElementAndLoadsRowsAsVectors) {
  // a is contiguous (f64: 2 lanes of 16 bytes), b a row read of f32 (8 bytes a vector of 2: per
  // lane), w a row read of f64 (a vector).
  const Spec spec = load_rc_spec(
      "  a: {type: f64, shape: [R, C], role: in}\n"
      "  b: {type: f32, shape: [C], role: in}\n"
      "  w: {type: f64, shape: [C], role: in}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  y[r, c] = f32(a[r, c] + w[c]) + b[c] * f32(r)\n");
  VectorizeMatch m;
  std::string why;
  ASSERT_TRUE(match_vectorized(spec, spec.stmts[0], &m, &why)) << why;
  EXPECT_EQ(vector_lanes(spec, spec.stmts[0], m), 2);
  const loops::Block b = vectorized_body(spec, spec.stmts[0], m);
  const std::string d = loops::dump(b);
  EXPECT_NE(d.find("if (((address<a> % 16) == 0) && ((address<y> % 16) == 0)) {"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("let sb_vec_a: vec<f64 x 2> = element<a>[(2 * sb_v)]:vec<f64 x 2>"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("if (((extent<y, 1> % 2) == 0) && ((address<w> % 16) == 0)) {"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("let sb_row0: vec<f64 x 2> = element<w>[spec<c>]:vec<f64 x 2>"),
            std::string::npos)
      << d;
  EXPECT_EQ(d.find("element<b>"), std::string::npos) << "an f32 row read stays per lane: " << d;
  // Lane 1 of the row form: r (read by arithmetic) and c (by b[c]) bound again, the lane's
  // vector values in place of the reads.
  EXPECT_NE(d.find("index<r> = (((2 * sb_v) + 1) / extent<y, 1>)"), std::string::npos) << d;
  EXPECT_NE(d.find("sb_res.lane<1> = spec<f32(a[r, c] + w[c]) + b[c] * f32(r) with a[r, c] = "
                   "sb_vec_a.lane<1>, w[c] = sb_row0.lane<1>>"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("element<y>[(2 * sb_v)]:vec<f32 x 2> = sb_res"), std::string::npos) << d;
  // Every output element not stored by a vector is computed by the scalar tail.
  EXPECT_NE(d.find("for sb_t in [(sb_done + sb_first), sb_total) step sb_stride serial {"),
            std::string::npos)
      << d;
  EXPECT_EQ(count(b).computes, 1);
}

TEST(GpuBodies, ScalarReductionsFoldPerBlockByTheirKind) {
  const Spec spec = load_rc_spec(rc_tensors({"x", "z"}), "  z = sum(c in 0..C: x[c] * x[c])\n");
  const Expr& red = *spec.stmts[0].rhs;
  const ScalarReduceBodies tree =
      scalar_reduce_bodies(spec, spec.stmts[0], red, GpuKernel::TreeReduce, 256, "sb_part");
  const ScalarReduceBodies warp =
      scalar_reduce_bodies(spec, spec.stmts[0], red, GpuKernel::WarpReduce, 256, "sb_part");
  const ScalarReduceBodies atomic =
      scalar_reduce_bodies(spec, spec.stmts[0], red, GpuKernel::AtomicReduce, 256, "sb_part");
  EXPECT_EQ(count(tree.partial).whiles, 1);  // the tree halves in a loop
  EXPECT_EQ(count(warp.partial).whiles, 0);
  EXPECT_EQ(count(warp.partial).shared, 1);  // one value per warp
  EXPECT_EQ(count(atomic.partial).atomics, 1);
  EXPECT_TRUE(atomic.final.empty());
  EXPECT_EQ(count(tree.final).computes, 1);
  EXPECT_EQ(count(warp.final).computes, 1);
  // 32 threads: one warp, no shared array.
  const ScalarReduceBodies small =
      scalar_reduce_bodies(spec, spec.stmts[0], red, GpuKernel::WarpReduce, 32, "sb_part");
  EXPECT_EQ(count(small.partial).shared, 0);
}

TEST(GpuBodies, AScanScansTilesBlockWideAndStoresShiftedOutputs) {
  const Spec spec = load_rc_spec(rc_tensors({"x", "v"}), "  v[c] = sum(k in 0..c + 1: x[k])\n");
  ScanMatch m;
  std::string why;
  ASSERT_TRUE(match_scan(spec, spec.stmts[0], &m, &why)) << why;
  const ScanBodies known = scan_bodies(spec, spec.stmts[0], m, 256, "sb_part", 0);
  const ScanBodies unknown = scan_bodies(spec, spec.stmts[0], m, 256, "sb_part", std::nullopt);
  EXPECT_EQ(count(known.carry).barriers, 3);  // two in the block scan, one after each tile
  EXPECT_EQ(count(known.offsets).barriers, 3);
  EXPECT_EQ(count(known.offsets).computes, 1);    // no outputs before the first: shift 0
  EXPECT_EQ(count(unknown.offsets).computes, 2);  // the identity below sb_shift, then the scan
  const std::string d = loops::dump(unknown.offsets);
  EXPECT_NE(d.find("((sb_p < sb_end) && ((sb_p + sb_shift) >= 0))"), std::string::npos) << d;
}

TEST(GpuBodies, AStencilStagesItsWindowByItsBoundaryRule) {
  auto body = [](const char* boundary) {
    const Spec spec =
        load_rc_spec(std::string("  x: {type: f32, shape: [C], role: in, boundary: ") + boundary +
                         "}\n  y: {type: f32, shape: [C], role: out}\n",
                     "  y[i] = x[i - 1] + x[i + 2]\n");
    StencilMatch m;
    std::string why;
    EXPECT_TRUE(match_stencil(spec, spec.stmts[0], &m, &why)) << why;
    return loops::dump(stencil_tile(spec, spec.stmts[0], m, {256}));
  };
  const std::string zero = body("zero"), clamp = body("clamp");
  // The window is the kernel's dynamic shared memory, loaded once, then read by both reads.
  EXPECT_NE(zero.find("alloc sb_tile_f32: f32 shared {"), std::string::npos) << zero;
  EXPECT_NE(zero.find("let sb_lo0: int = -1\n  let sb_hi0: int = 2\n"), std::string::npos) << zero;
  EXPECT_NE(zero.find("var sb_x: f32 = identity<sum, f32>"), std::string::npos) << zero;
  EXPECT_NE(zero.find("sb_x = element<x>[sb_g0]"), std::string::npos) << zero;
  EXPECT_NE(zero.find("compute with x[i - 1] = sb_tile_f32[(spec<i - 1> - sb_base0)], x[i + 2] = "
                      "sb_tile_f32[(spec<i + 2> - sb_base0)]"),
            std::string::npos)
      << zero;
  // Clamped: every position reads its clamped element, with no branch.
  EXPECT_EQ(clamp.find("identity<sum"), std::string::npos) << clamp;
  EXPECT_NE(clamp.find("let sb_x: f32 = element<x>[min(max(sb_g0, 0), (extent<x, 0> - 1))]"),
            std::string::npos)
      << clamp;
}

// A fused row group (softmax with a per-row output m and a broadcast weight w): the staged
// kernel stages w once per block and x once per row in segment order, keeps e in shared memory
// and m, s in registers, and stores m from the thread keeping it; the global kernel computes e
// again where it is read.
TEST(GpuBodies, AFusedRowGroupStagesRowsOrComputesItsTempsAgain) {
  Spec spec = load_rc_spec(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  w: {type: f32, shape: [C], role: in}\n"
      "  m: {type: f32, shape: [R], role: out}\n"
      "  e: {type: f32, shape: [R, C], role: temp}\n"
      "  s: {type: f32, shape: [R], role: temp}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  m[r] = max(c in 0..C: x[r, c])\n"
      "  e[r, c] = exp(x[r, c] - m[r])\n"
      "  s[r] = sum(c in 0..C: e[r, c])\n"
      "  y[r, c] = e[r, c] / s[r] * w[c]\n");
  row_fusion(spec);
  ASSERT_EQ(spec.schedule.row_groups.size(), 1u);
  RowPlan p;
  ASSERT_TRUE(plan_rows(spec, spec.schedule.row_groups[0], &p));
  ASSERT_TRUE(stages_rows(p));
  const int m = spec.find_tensor("m"), y = spec.find_tensor("y");

  const FusedRowsBody staged = fused_rows_body(spec, p, RowUnit::Block, true, 128);
  EXPECT_EQ(staged.outs, (std::set<int>{m, y}));
  const std::string d = loops::dump(staged.body);
  EXPECT_NE(d.find("alloc sb_warps_f32: f32[4] shared {\n  alloc sb_rows_f32: f32 shared {"),
            std::string::npos)
      << d;
  // w once per block by all its threads, then x per row by the block, in segment order.
  EXPECT_NE(d.find("let sb_lead_w: int = ((address<w> / 4) % 32)"), std::string::npos) << d;
  EXPECT_NE(d.find("let sb_lead_x: int = (((address<x> / 4) + (sb_row * extent<x, 1>)) % 32)"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("for sb_j0 in [0, extent<x, 1>) step 128 serial"), std::string::npos) << d;
  EXPECT_NE(d.find("if ((sb_j0 + ((sb_lane / 32) * 32)) < extent<x, 1>)"), std::string::npos) << d;
  // Every loop along the row visits y's row in segment order.
  EXPECT_NE(d.find("let sb_lead: int = (((address<y> / 4) + (sb_row * extent<y, 1>)) % 32)"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("let sb_q: int = select((sb_j < sb_body), (sb_head + sb_j), "
                   "select((sb_j < (sb_body + sb_head)), (sb_j - sb_body), sb_j))"),
            std::string::npos)
      << d;
  // e in shared memory, m in a register and kept for its store.
  EXPECT_NE(d.find("sb_rows_f32[(sb_off_e + sb_q)] = spec<s1: exp(x[r, c] - m[r])"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("m[r] = sb_row_m"), std::string::npos) << d;
  EXPECT_NE(d.find("sb_kept_m = sb_row_m"), std::string::npos) << d;
  EXPECT_NE(d.find("element<m>[sb_kept_row] = sb_kept_m"), std::string::npos) << d;
  EXPECT_NE(d.find("sb_acc_s = warp_all<sum>(sb_acc_s)"), std::string::npos) << d;
  EXPECT_NE(d.find("sb_acc_s = sum<f32>(sb_acc_s, sb_warps_f32[sb_w])"), std::string::npos) << d;
  EXPECT_EQ(d.find("barrier warp"), std::string::npos) << d;
  // Each read of r (and of c) is replaced alike; the dump names each replacement once.
  EXPECT_NE(d.find("spec<s3: e[r, c] / s[r] * w[c] with r = sb_row, c = sb_q, e[r, c] = "),
            std::string::npos)
      << d;

  // A warp per row syncs the warp only; the global kernel has no shared rows and computes e
  // again from x where s and y read it.
  const std::string w = loops::dump(fused_rows_body(spec, p, RowUnit::Warp, true, 128).body);
  EXPECT_NE(w.find("barrier warp"), std::string::npos) << w;
  const FusedRowsBody global = fused_rows_body(spec, p, RowUnit::Warp, false, 128);
  const std::string g = loops::dump(global.body);
  EXPECT_EQ(global.outs, (std::set<int>{m, y}));
  EXPECT_EQ(g.find("shared"), std::string::npos) << g;
  EXPECT_NE(g.find("// e is not stored: it is recomputed where it is read."), std::string::npos)
      << g;
  EXPECT_NE(g.find("e[r, c] = spec<s1: exp(x[r, c] - m[r]) with r = spec<s2: r with r = sb_row>, "
                   "c = spec<s2: c with c = sb_k>"),
            std::string::npos)
      << g;
}

// A fused attention group: the block's shared arrays, its dot products and outputs in registers,
// the weights' statement where each weight is computed, and the weighted sum's statement at the
// kernel's end with its sum and l replaced; the scores' statement computes from the dot product.
TEST(GpuBodies, AnAttentionGroupWalksTheKeysWithAnOnlineSoftmax) {
  Spec spec = load_rc_spec(
      "  q: {type: f32, shape: [R, C], role: in}\n"
      "  kk: {type: f32, shape: [R, C], role: in}\n"
      "  v: {type: f32, shape: [R, C], role: in}\n"
      "  s: {type: f32, shape: [R, R], role: temp}\n"
      "  m: {type: f32, shape: [R], role: temp}\n"
      "  p: {type: f32, shape: [R, R], role: temp}\n"
      "  l: {type: f32, shape: [R], role: temp}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  s[i, j] = sum(d in 0..C: q[i, d] * kk[j, d]) * 0.5\n"
      "  m[i] = max(j in 0..R: s[i, j])\n"
      "  p[i, j] = exp(s[i, j] - m[i])\n"
      "  l[i] = sum(j in 0..R: p[i, j])\n"
      "  y[i, e] = sum(j in 0..R: p[i, j] * v[j, e]) / l[i]\n");
  const std::optional<Attention> a = match_attention(spec, 0);
  ASSERT_TRUE(a.has_value());
  const loops::Block b = attention_body(spec, *a, {16, 32, 32}, 128);
  const Counts c = count(b);
  EXPECT_EQ(c.shared, 7);
  EXPECT_EQ(c.barriers, 5);  // the q and k tiles (twice), the values, the weights, the outputs
  EXPECT_EQ(c.computes, 1);
  EXPECT_EQ(c.index_lets, 2);  // the output's i and e (no batch)
  const std::string d = loops::dump(b);
  EXPECT_NE(d.find("alloc sb_qs: f32[528] shared"), std::string::npos) << d;   // 16 x (32 + 1)
  EXPECT_NE(d.find("alloc sb_ps: f32[528] shared"), std::string::npos) << d;   // 16 x (32 + 1)
  EXPECT_NE(d.find("alloc sb_acc: f32[4] register"), std::string::npos) << d;  // 16 * 32 / 128
  EXPECT_NE(d.find("alloc sb_dot: f32[4] register"), std::string::npos) << d;
  EXPECT_NE(d.find("for sb_dd in [0, 32) step 1 serial unroll 8"), std::string::npos) << d;
  EXPECT_NE(d.find("sb_x = spec<s0: q[i, d] with i = (sb_i0 + sb_qi), d = (sb_d0 + sb_dd)>"),
            std::string::npos)
      << d;
  // i and j are only inside the sum, which the dot product replaces.
  EXPECT_NE(d.find("sb_s = spec<s0: sum(d in 0..C: q[i, d] * kk[j, d]) * 0.5 with sum(d in 0..C: "
                   "q[i, d] * kk[j, d]) = sb_dot[sb_r]>"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("sb_w = spec<s2: exp(s[i, j] - m[i]) with s[i, j] = sb_ps[((sb_t * 33) + "
                   "sb_kj)], m[i] = sb_safe>"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("compute with sum(j in 0..R: p[i, j] * v[j, e]) = sb_acc[sb_r], l[i] = "
                   "sb_sum[sb_qi]"),
            std::string::npos)
      << d;
}

}  // namespace
}  // namespace sb
