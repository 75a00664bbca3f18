// Unit tests of the cuda emitter's optimised strategies: which statements each strategy targets
// (by shape, never by name), the generation-time errors of variants that fit nothing, and the
// shape of the code each one emits (shared memory through the simulator's macros, full-mask
// shuffles, every launch through SB_LAUNCH).
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

#include "backends/common/emit_common.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/emitter.h"
#include "driver.h"
#include "lower/gpu_bodies.h"
#include "lower/patterns.h"

namespace sb {
namespace {

namespace fs = std::filesystem;

// Writes a spec with the given sizes, tensors, compute and cuda variants to a temporary file
// and loads it (the variant checks run as part of load_and_check).
Result<Spec> load(const std::string& name, const std::string& sizes, const std::string& tensors,
                  const std::string& compute, const std::string& variants) {
  const fs::path dir =
      fs::temp_directory_path() / ("sb_emit_cuda_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / (name + ".yaml");
  std::ofstream(path) << "name: " << name << "\ndoc: test\nsizes:\n"
                      << sizes << "tensors:\n"
                      << tensors << "compute: |\n"
                      << compute << "variants:\n  cuda:\n"
                      << variants;
  return load_and_check(path.string());
}

const char* const kVecSizes = "  N: {bench: [64], verify: [1, 7]}\n";
const char* const kVecTensors =
    "  a: {type: f32, shape: [N], role: in}\n"
    "  b: {type: f32, shape: [N], role: in}\n"
    "  c: {type: f32, shape: [N], role: out}\n";
const char* const kVecCompute = "  c[i] = a[i] + b[i]\n";

std::string vadd_error(const std::string& variant) {
  Result<Spec> r = load("vadd", kVecSizes, kVecTensors, kVecCompute, "    - " + variant + "\n");
  EXPECT_FALSE(r.ok()) << variant << " was accepted on a vector add";
  return r.ok() ? "" : r.error().message;
}

TEST(EmitCudaCheck, MatmulStrategiesRejectAVectorAdd) {
  const std::string e = vadd_error("{name: tm, strategy: tiled_matmul}");
  EXPECT_NE(e.find("strategy 'tiled_matmul' of variant 'tm' fits no statement of kernel 'vadd'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])"), std::string::npos) << e;
  EXPECT_NE(e.find("'c[i] = a[i] + b[i]' does not fit: it has rank 1, not 2"), std::string::npos)
      << e;
  EXPECT_NE(vadd_error("{name: rb, strategy: register_blocked_matmul}").find("rank 1, not 2"),
            std::string::npos);
}

TEST(EmitCudaCheck, ErrorsPointAtTheVariant) {
  Result<Spec> r = load("vadd", kVecSizes, kVecTensors, kVecCompute,
                        "    - {name: ok, strategy: vectorized}\n"
                        "    - {name: bad, strategy: warp_reduce}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().loc.line, 14);  // the second variant's line
  EXPECT_NE(r.error().message.find("fits no statement"), std::string::npos);
  EXPECT_NE(r.error().message.find("it has rank 1, not a scalar output"), std::string::npos)
      << r.error().message;
}

TEST(EmitCudaCheck, EveryShapeStrategyRejectsWhatItCannotLower) {
  EXPECT_NE(vadd_error("{name: x, strategy: block_reduce}").find("not a scalar output"),
            std::string::npos);
  EXPECT_NE(vadd_error("{name: x, strategy: atomic_reduce}").find("not a scalar output"),
            std::string::npos);
  EXPECT_NE(vadd_error("{name: x, strategy: warp_per_row}").find("it has no reduction"),
            std::string::npos);
  EXPECT_NE(vadd_error("{name: x, strategy: block_per_row}").find("it has no reduction"),
            std::string::npos);
  EXPECT_NE(vadd_error("{name: x, strategy: tiled_transpose}").find("rank 1, not 2"),
            std::string::npos);
  EXPECT_NE(vadd_error("{name: x, strategy: scan}").find("it has no reduction"), std::string::npos);
  EXPECT_NE(vadd_error("{name: x, strategy: tiled_stencil}").find("only at the output's own index"),
            std::string::npos);

  // A dot product is no elementwise statement, and a row sum no scalar reduction.
  const std::string dot_sizes = kVecSizes;
  const std::string dot_tensors =
      "  x: {type: f32, shape: [N], role: in}\n  d: {type: f32, shape: [], role: out}\n";
  Result<Spec> r = load("dotv", dot_sizes, dot_tensors, "  d = sum(i in 0..N: x[i])\n",
                        "    - {name: v, strategy: vectorized}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("it writes a scalar"), std::string::npos) << r.error().message;

  // Matmul through warp_per_row: k is not contiguous in b[k, j].
  const std::string mm_sizes =
      "  M: {bench: [8], verify: [3]}\n  N: {bench: [8], verify: [3]}\n"
      "  K: {bench: [8], verify: [3]}\n";
  const std::string mm_tensors =
      "  a: {type: f32, shape: [M, K], role: in}\n  b: {type: f32, shape: [K, N], role: in}\n"
      "  c: {type: f32, shape: [M, N], role: out}\n";
  r = load("mmrow", mm_sizes, mm_tensors, "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n",
           "    - {name: w, strategy: warp_per_row}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'k' is not contiguous in the read 'b[k, j]'"),
            std::string::npos)
      << r.error().message;

  // atomic_reduce accumulates in the output: the types must agree.
  r = load("castsum", kVecSizes,
           "  x: {type: i32, shape: [N], role: in}\n  d: {type: f32, shape: [], role: out}\n",
           "  d = f32(sum(i in 0..N: x[i]))\n", "    - {name: a, strategy: atomic_reduce}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("type i32 but the output has type f32"), std::string::npos)
      << r.error().message;
}

TEST(EmitCudaCheck, ParametersMustFitTogether) {
  const std::string mm_sizes =
      "  M: {bench: [8], verify: [3]}\n  N: {bench: [8], verify: [3]}\n"
      "  K: {bench: [8], verify: [3]}\n";
  const std::string mm_tensors =
      "  a: {type: f32, shape: [M, K], role: in}\n  b: {type: f32, shape: [K, N], role: in}\n"
      "  c: {type: f32, shape: [M, N], role: out}\n";
  const std::string mm = "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n";
  Result<Spec> r = load("mmp", mm_sizes, mm_tensors, mm,
                        "    - {name: r, strategy: register_blocked_matmul, bm: 256, bn: 256, "
                        "tm: 1, tn: 1}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("variant 'r' would run (bm / tm) * (bn / tn) = 65536 threads"),
            std::string::npos)
      << r.error().message;
  r = load("mmp", mm_sizes, mm_tensors, mm,
           "    - {name: r, strategy: register_blocked_matmul, bm: 16, bn: 16, tm: 4, tn: 4}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("= 16 threads per block"), std::string::npos)
      << r.error().message;
  r = load("mmp", mm_sizes, mm_tensors, mm,
           "    - {name: r, strategy: register_blocked_matmul, bm: 256, bn: 256, bk: 64, "
           "tm: 16, tn: 16}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("needs 131072 bytes of shared memory"), std::string::npos)
      << r.error().message;
  // Two f64 transposed reads in 64 x 65 tiles: 66560 bytes of shared memory.
  r = load("tp", "  R: {bench: [8], verify: [3]}\n  C: {bench: [8], verify: [3]}\n",
           "  a: {type: f64, shape: [R, C], role: in}\n  b: {type: f64, shape: [R, C], role: in}\n"
           "  t: {type: f64, shape: [C, R], role: out}\n",
           "  t[j, i] = a[i, j] - b[i, j]\n",
           "    - {name: t, strategy: tiled_transpose, tile: 64, block_rows: 16}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("variant 't' needs 66560 bytes of shared memory"),
            std::string::npos)
      << r.error().message;
  r = load("mmp", mm_sizes, mm_tensors, mm, "    - {name: t, strategy: tiled_matmul, tile: 64}\n");
  ASSERT_FALSE(r.ok());  // outside the parameter's range: 64 x 64 threads
  r = load("mmp", mm_sizes, mm_tensors, mm,
           "    - {name: r, strategy: register_blocked_matmul}\n"
           "    - {name: t, strategy: tiled_matmul, tile: 32}\n");
  EXPECT_TRUE(r.ok()) << format_error(r.error());
}

// ---- Which statements a strategy targets -------------------------------------------------------

const char* const kSoftmaxSizes =
    "  R: {bench: [8], verify: [3]}\n  C: {bench: [8], verify: [5]}\n";
const char* const kSoftmaxTensors =
    "  x: {type: f32, shape: [R, C], role: in}\n"
    "  rowmax: {type: f32, shape: [R], role: temp}\n"
    "  e: {type: f32, shape: [R, C], role: temp}\n"
    "  rowsum: {type: f32, shape: [R], role: temp}\n"
    "  y: {type: f32, shape: [R, C], role: out}\n";
const char* const kSoftmaxCompute =
    "  rowmax[r] = max(c in 0..C: x[r, c])\n"
    "  e[r, c] = exp(x[r, c] - rowmax[r])\n"
    "  rowsum[r] = sum(c in 0..C: e[r, c])\n"
    "  y[r, c] = e[r, c] / rowsum[r]\n";

TEST(EmitCudaShapes, SoftmaxRowsAndElementwiseStatements) {
  Result<Spec> r = load("smax", kSoftmaxSizes, kSoftmaxTensors, kSoftmaxCompute,
                        "    - {name: w, strategy: warp_per_row}\n"
                        "    - {name: b, strategy: block_per_row, block_size: 128}\n"
                        "    - {name: v, strategy: vectorized}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const Spec& s = r.value();
  std::string why;
  ReduceMatch rm;
  VectorizeMatch vm;
  EXPECT_TRUE(match_row_reduce(s, s.stmts[0], &rm, &why));
  EXPECT_FALSE(match_row_reduce(s, s.stmts[1], &rm, &why));
  EXPECT_TRUE(match_row_reduce(s, s.stmts[2], &rm, &why));
  EXPECT_FALSE(match_vectorized(s, s.stmts[0], &vm, &why));
  ASSERT_TRUE(match_vectorized(s, s.stmts[1], &vm, &why));
  EXPECT_EQ(vm.contiguous.size(), 1u);  // x[r, c]; rowmax[r] is a broadcast read

  const std::string c = find_emitter("cuda")->emit(s).content;
  // The four statements are one row group (lower/row_fusion.h): under warp_per_row and
  // block_per_row one kernel (and its global-memory twin), no kernel per statement; the rows
  // reduce with warp shuffles, the block variant combining its warps through shared memory.
  EXPECT_NE(c.find("sb_acc_rowmax = sb_warp_max_f32(sb_acc_rowmax);"), std::string::npos);
  EXPECT_NE(c.find("sb_acc_rowsum = sb_warp_sum_f32(sb_acc_rowsum);"), std::string::npos);
  for (const std::string v : {"w", "b"}) {
    EXPECT_NE(c.find("__global__ void __launch_bounds__"), std::string::npos);
    EXPECT_NE(c.find(" sb_" + v + "_s0_rows("), std::string::npos) << v;
    EXPECT_NE(c.find(" sb_" + v + "_s0_rows_global("), std::string::npos) << v;
    for (const char* k : {"_s0(", "_s1(", "_s2(", "_s3("})
      EXPECT_EQ(c.find(" sb_" + v + k), std::string::npos) << v << k;
  }
  EXPECT_NE(c.find("SB_SHARED_ARRAY(float, sb_warps_f32, 4);"), std::string::npos);
  EXPECT_NE(c.find("SB_DYNAMIC_SHARED(float, sb_rows_f32);"), std::string::npos);
  EXPECT_NE(c.find("const float4 sb_vec_x = *reinterpret_cast<const float4*>(&x[4 * sb_v]);"),
            std::string::npos);
  EXPECT_NE(c.find("#define SB_SHARED_ARRAY(T, name, n) __shared__ T name[n]"), std::string::npos);
  EXPECT_EQ(c.find("<<<"), c.rfind("<<<")) << "only the SB_LAUNCH definition launches";
  EXPECT_EQ(c.find("__shared__ float"), std::string::npos) << "shared memory bypasses the macros";
}

TEST(EmitCudaShapes, VectorizedLoadsRowReadsAsVectorsWhenRowsHoldWholeVectors) {
  Result<Spec> r = load(
      "outer", "  M: {bench: [64], verify: [3]}\n  N: {bench: [64], verify: [8]}\n",
      "  a: {type: f32, shape: [M], role: in}\n"
      "  b: {type: f32, shape: [N], role: in}\n"
      "  bt: {type: f32, shape: [N, M], role: in}\n"
      "  w: {type: f64, shape: [N], role: in}\n"
      "  c: {type: f32, shape: [M, N], role: out}\n",
      "  c[i, j] = a[i] + b[j] + bt[j, i] + f32(w[j])\n", "    - {name: v, strategy: vectorized}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const Spec& s = r.value();
  std::string why;
  VectorizeMatch vm;
  ASSERT_TRUE(match_vectorized(s, s.stmts[0], &vm, &why));
  EXPECT_TRUE(vm.contiguous.empty());
  // b[j] and w[j]; not a[i] (no innermost index) nor bt[j, i] (innermost index not last).
  ASSERT_EQ(vm.row_contiguous.size(), 2u);
  EXPECT_EQ(s.tensors[vm.row_contiguous[0]->ref].name, "b");
  EXPECT_EQ(s.tensors[vm.row_contiguous[1]->ref].name, "w");

  const std::string c = find_emitter("cuda")->emit(s).content;
  EXPECT_NE(c.find("if (N % 4 == 0 && (uintptr_t)b % 16 == 0) {"), std::string::npos) << c;
  EXPECT_NE(c.find("const float4 sb_row0 = *reinterpret_cast<const float4*>(&b[j]);"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("sb_res.x = a[i] + sb_row0.x + bt[j * M + i] + (float)w[j];"), std::string::npos)
      << c;
  // Lane 1 binds the indices the per-lane reads need again; the row's own j is lane 0's.
  EXPECT_NE(c.find("i = (4 * sb_v + 1) / N;\n"), std::string::npos) << c;
  // The f64 read is not of the 4-lane width: per lane in both loops.
  EXPECT_EQ(c.find("reinterpret_cast<const double2*>"), std::string::npos) << c;
  EXPECT_NE(c.find("} else {"), std::string::npos);
}

TEST(EmitCudaShapes, MatmulWithAnEpilogue) {
  const std::string sizes =
      "  M: {bench: [8], verify: [3]}\n  N: {bench: [8], verify: [3]}\n"
      "  K: {bench: [8], verify: [3]}\n";
  const std::string tensors =
      "  w: {type: f32, shape: [K, N], role: in}\n  p: {type: f32, shape: [M, K], role: in}\n"
      "  bias: {type: f32, shape: [N], role: in}\n  q: {type: f32, shape: [M, N], role: out}\n";
  // Operand order and names differ from the textbook form; the shape is what counts.
  Result<Spec> r = load("mmb", sizes, tensors,
                        "  q[m, n] = max(sum(t in 0..K: w[t, n] * p[m, t]) + bias[n], 0)\n",
                        "    - {name: t, strategy: tiled_matmul}\n"
                        "    - {name: r, strategy: register_blocked_matmul}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  MatmulMatch m;
  std::string why;
  ASSERT_TRUE(match_matmul(r.value(), r.value().stmts[0], &m, &why)) << why;
  EXPECT_EQ(r.value().tensors[m.a->ref].name, "p");
  EXPECT_EQ(r.value().tensors[m.b->ref].name, "w");
  const std::string c = find_emitter("cuda")->emit(r.value()).content;
  EXPECT_NE(c.find("q[m * N + n] = sb_max_f32(sb_acc + bias[n], 0.0f);"), std::string::npos) << c;
  EXPECT_NE(c.find("const float4 sb_v = *reinterpret_cast<const float4*>(&p[sb_gx * K + sb_gk]);"),
            std::string::npos);
}

TEST(EmitCudaShapes, TransposedMatmulOperands) {
  const std::string sizes =
      "  BT: {bench: [8], verify: [3]}\n  C: {bench: [8], verify: [3]}\n"
      "  OC: {bench: [8], verify: [3]}\n";
  const std::string tensors =
      "  inp: {type: f32, shape: [BT, C], role: in}\n"
      "  weight: {type: f32, shape: [OC, C], role: in}\n"
      "  bias: {type: f32, shape: [OC], role: in}\n"
      "  y: {type: f32, shape: [BT, OC], role: out}\n"
      "  z: {type: f32, shape: [OC, OC], role: out}\n";
  // y = inp weight^T + bias (b stored [j, k]); z = y^T y (a stored [k, i], b [k, j]).
  Result<Spec> r = load("mmnt", sizes, tensors,
                        "  y[r, o] = sum(c in 0..C: inp[r, c] * weight[o, c]) + bias[o]\n"
                        "  z[p, q] = sum(t in 0..BT: y[t, p] * y[t, q])\n",
                        "    - {name: t, strategy: tiled_matmul}\n"
                        "    - {name: r, strategy: register_blocked_matmul}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const Spec& s = r.value();
  MatmulMatch m;
  std::string why;
  ASSERT_TRUE(match_matmul(s, s.stmts[0], &m, &why)) << why;
  EXPECT_TRUE(m.a_k_inner);
  EXPECT_TRUE(m.b_k_inner);
  ASSERT_TRUE(match_matmul(s, s.stmts[1], &m, &why)) << why;
  EXPECT_FALSE(m.a_k_inner);
  EXPECT_FALSE(m.b_k_inner);
  const std::string c = find_emitter("cuda")->emit(s).content;
  // weight[o, c] is loaded along c (its contiguous subscript), in float4 vectors when aligned.
  EXPECT_NE(c.find("// Tile of weight[o, c]: 8 k x 64, loaded along c in vectors of 4."),
            std::string::npos);
  EXPECT_NE(c.find("*reinterpret_cast<const float4*>(&weight[sb_gx * C + sb_gk]);"),
            std::string::npos);
  EXPECT_NE(c.find("// Tile of y[t, q]: 8 k x 64, loaded along q in vectors of 4."),
            std::string::npos);
}

// A batch of products (match_batched_matmul): tiled_matmul and register_blocked_matmul take
// it, the products along the grid's z.
TEST(EmitCudaShapes, BatchedProductsAlongTheGridsZ) {
  const std::string sizes =
      "  B: {bench: [2], verify: [2]}\n  M: {bench: [8], verify: [3]}\n"
      "  N: {bench: [8], verify: [3]}\n  K: {bench: [8], verify: [3]}\n";
  const std::string tensors =
      "  a: {type: f32, shape: [B, M, K], role: in}\n  w: {type: f32, shape: [K, N], role: in}\n"
      "  c: {type: f32, shape: [B, M, N], role: out}\n";
  const std::string compute = "  c[h, i, j] = sum(k in 0..K: a[h, i, k] * w[k, j])\n";
  Result<Spec> r = load("bmmt", sizes, tensors, compute, "    - {name: t, strategy: tiled_matmul}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const Spec& s = r.value();
  MatmulMatch m;
  std::string why;
  EXPECT_FALSE(match_matmul(s, s.stmts[0], &m, &why));
  ASSERT_TRUE(match_batched_matmul(s, s.stmts[0], &m, &why)) << why;
  EXPECT_TRUE(m.batched);
  EXPECT_TRUE(m.a_batched);
  EXPECT_FALSE(m.b_batched);  // w is shared by the batch
  const std::string c = find_emitter("cuda")->emit(s).content;
  EXPECT_NE(c.find("for (int64_t sb_bz = (int64_t)blockIdx.z; sb_bz < B; sb_bz += "
                   "(int64_t)gridDim.z) {"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("(unsigned)(sb_nb < 65535 ? sb_nb : 65535));"), std::string::npos) << c;
  Result<Spec> rb =
      load("bmmr", sizes, tensors, compute, "    - {name: r, strategy: register_blocked_matmul}\n");
  ASSERT_TRUE(rb.ok()) << format_error(rb.error());
  const std::string rc = find_emitter("cuda")->emit(rb.value()).content;
  EXPECT_NE(
      rc.find(
          "for (int64_t sb_bz = (int64_t)blockIdx.z; sb_bz < B; sb_bz += (int64_t)gridDim.z) {"),
      std::string::npos)
      << rc;
  EXPECT_NE(rc.find("(unsigned)(sb_nb < 65535 ? sb_nb : 65535));"), std::string::npos) << rc;
  // Vector loads of the batched a: its rows (K, its last extent) a whole number of vectors, so
  // that every product, K * M elements on, starts on a vector too; the load is at (h, i, k).
  EXPECT_NE(rc.find("const bool sb_vec_a = (uintptr_t)a % 16 == 0 && K % 4 == 0;"),
            std::string::npos)
      << rc;
  EXPECT_NE(rc.find("reinterpret_cast<const float4*>(&a[(sb_bz * M + sb_gx) * K + sb_gk])"),
            std::string::npos)
      << rc;
  // w is shared: no batch subscript.
  EXPECT_NE(rc.find("reinterpret_cast<const float4*>(&w[sb_gk * N + sb_gx])"), std::string::npos)
      << rc;
  const std::string mg = find_emitter("mojo_gpu")->emit(rb.value()).content;
  EXPECT_NE(mg.find("for sb_bz in range(Int(block_idx.z), B, Int(grid_dim.z)):"),
            std::string::npos)
      << mg;
  EXPECT_NE(mg.find("a.unsafe_load[width=4, alignment=16]((sb_bz * M + sb_gx) * K + sb_gk)"),
            std::string::npos)
      << mg;
}

TEST(EmitCudaShapes, StencilOffsetsAndScans) {
  const std::string sizes = "  N: {bench: [8], verify: [3]}\n  K: {bench: [3], verify: [3]}\n";
  Result<Spec> r = load("conv", sizes,
                        "  x: {type: f32, shape: [N], role: in, boundary: zero}\n"
                        "  w: {type: f32, shape: [K], role: in}\n"
                        "  y: {type: f32, shape: [N], role: out}\n"
                        "  z: {type: f32, shape: [N], role: out}\n",
                        "  y[i] = sum(k in 0..K: x[i + k - K / 2] * w[k])\n"
                        "  z[i] = sum(j in 0..i + 1: x[j])\n",
                        "    - {name: t, strategy: tiled_stencil}\n"
                        "    - {name: s, strategy: scan}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const Spec& s = r.value();
  StencilMatch sm;
  ScanMatch scm;
  std::string why;
  ASSERT_TRUE(match_stencil(s, s.stmts[0], &sm, &why)) << why;
  EXPECT_EQ(s.tensors[sm.tensor].name, "x");
  ASSERT_EQ(sm.offsets.size(), 1u);
  EXPECT_EQ(sm.offsets[0][0].vars.size(), 1u);   // k
  EXPECT_EQ(sm.offsets[0][0].atoms.size(), 1u);  // -(K / 2)
  EXPECT_EQ(sm.offsets[0][0].atoms[0].coef, -1);
  EXPECT_FALSE(match_stencil(s, s.stmts[1], &sm, &why));
  EXPECT_TRUE(match_scan(s, s.stmts[1], &scm, &why)) << why;
  EXPECT_FALSE(match_scan(s, s.stmts[0], &scm, &why));
  const std::string c = find_emitter("cuda")->emit(s).content;
  EXPECT_NE(c.find("SB_DYNAMIC_SHARED(float, sb_tile_f32);"), std::string::npos);
  EXPECT_NE(c.find("sb_acc0 += sb_tile_f32[i + k - K / 2 - sb_base0] * w[k];"), std::string::npos)
      << c;
  EXPECT_NE(c.find("static __device__ float sb_part_s_s1[1024];"), std::string::npos);
  EXPECT_NE(c.find("__shfl_up_sync(0xffffffffu, v, sb_d)"), std::string::npos);
}

TEST(EmitCudaShapes, AffineSubscripts) {
  Result<Spec> r =
      load("aff", kVecSizes,
           "  x: {type: f32, shape: [3 * N + 4], role: in}\n"
           "  y: {type: f32, shape: [N], role: out}\n",
           "  y[i] = x[2 * (i + 1) - i + N]\n", "    - {name: g, strategy: grid_stride}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const Statement& st = r.value().stmts[0];
  const Expr& sub = *st.rhs->args[0];
  const std::optional<Affine> a = launch_affine(sub);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->vars.size(), 1u);
  EXPECT_EQ(a->var(0), 1);  // 2i - i
  EXPECT_EQ(a->size(0), 1);  // N
  EXPECT_EQ(a->constant, 2);  // 2 * 1
  EXPECT_TRUE(a->atoms.empty());
}

// register_blocked_matmul's kernel body (lower/gpu_bodies.h), which the cuda and mojo_gpu
// printers both print, for 64 x 64 tiles `bk` deep: how it loads its operand tiles.
std::string register_body(const std::string& b_type, const std::string& lo, int64_t bk) {
  Result<Spec> r = load("mm", "  M: {bench: [64], verify: [5]}\n  N: {bench: [64], verify: [6]}\n"
                              "  K: {bench: [64], verify: [7]}\n",
                        "  a: {type: f32, shape: [M, K], role: in}\n"
                        "  b: {type: " + b_type + ", shape: [K, N], role: in}\n"
                        "  c: {type: f32, shape: [M, N], role: out}\n",
                        "  c[i, j] = sum(k in " + lo + "..K: a[i, k] * b[k, j])\n",
                        "    - {name: rb, strategy: register_blocked_matmul}\n");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  const Spec& spec = r.value();
  MatmulMatch m;
  std::string why;
  EXPECT_TRUE(match_matmul(spec, spec.stmts[0], &m, &why)) << why;
  return loops::dump(register_blocked_body(spec, spec.stmts[0], m, {64, 64, bk, 4, 4}));
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(EmitCudaTiles, OperandsLoadVectorsWhereTheirTypeAndTileAllow) {
  // a[i, k] loads along k, b[k, j] along j; each in vectors of 16 bytes where it may, behind a
  // run-time check of its address and rows.
  const std::string f32 = register_body("f32", "0", 8);
  EXPECT_TRUE(has(f32, "Tile of a[i, k]: 8 k x 64, loaded along k in vectors of 4.")) << f32;
  EXPECT_TRUE(has(f32, "Tile of b[k, j]: 8 k x 64, loaded along j in vectors of 4.")) << f32;
  EXPECT_TRUE(has(f32,
                  "let sb_vec_a: bool = (((address<a> % 16) == 0) && ((extent<a, 1> % 4) == "
                  "0))\n"))
      << f32;
  EXPECT_TRUE(has(f32, "let sb_v: vec<f32 x 4> = element<a>[((sb_gx * extent<a, 1>) + sb_gk)]"))
      << f32;
  // The registers: a 4 x 4 tile of outputs per thread, folded from the tiles' values.
  EXPECT_TRUE(has(f32, "alloc sb_acc: f32[4][4] register")) << f32;
  EXPECT_TRUE(has(f32,
                  "sb_acc[sb_m][sb_n] = sum<f32>(sb_acc[sb_m][sb_n], spec<a[i, k] * b[k, j] "
                  "with a[i, k] = sb_ra[sb_m], b[k, j] = sb_rb[sb_n]>)"))
      << f32;
  // a loads along k: a tile 6 deep is not whole vectors; b loads along its 64 columns.
  const std::string deep6 = register_body("f32", "0", 6);
  EXPECT_FALSE(has(deep6, "let sb_vec_a")) << deep6;
  EXPECT_TRUE(has(deep6, "let sb_vec_b")) << deep6;
  // f16 loads one element at a time, widened.
  const std::string half = register_body("f16", "0", 8);
  EXPECT_FALSE(has(half, "let sb_vec_b")) << half;
  EXPECT_TRUE(has(half, "let sb_vec_a")) << half;
  // k from 1: a's vectors along k need the bound checked; b's along j do not.
  const std::string from1 = register_body("f32", "1", 8);
  EXPECT_TRUE(has(from1, "((extent<a, 1> % 4) == 0)) && ((sb_lo % 4) == 0))")) << from1;
  EXPECT_TRUE(has(from1,
                  "let sb_vec_b: bool = (((address<b> % 16) == 0) && ((extent<b, 1> % 4) "
                  "== 0))\n"))
      << from1;
  const std::string from4 = register_body("f32", "4", 8);
  EXPECT_FALSE(has(from4, "sb_lo % 4")) << from4;
}

}  // namespace
}  // namespace sb
