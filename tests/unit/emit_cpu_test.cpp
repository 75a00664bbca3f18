// Unit tests of the cpu emitter's strategies (omp_simd streaming, blocked_matmul) and of the
// vendor emitters (vendor_cpu blas, vendor_cuda cublas/cub_reduce/cub_scan): what the emitted
// text must contain for hand-written specs. Running the code is the e2e tests' job.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "backends/emitter.h"
#include "driver.h"
#include "lower/running_scans.h"

namespace sb {
namespace {

Spec load(const std::string& tensors, const std::string& compute, const std::string& variants) {
  static int n = 0;
  const std::string text =
      "name: t\ndoc: test spec\nsizes:\n"
      "  M: {bench: [64], verify: [3]}\n"
      "  N: {bench: [64], verify: [5]}\n"
      "  K: {bench: [64], verify: [7]}\n"
      "tensors:\n" +
      tensors + "compute: |\n" + compute + "variants:\n" + variants;
  const auto path =
      std::filesystem::temp_directory_path() /
      ("sb_emit_cpu_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".yaml");
  std::ofstream(path) << text;
  Result<Spec> s = load_and_check(path.string());
  std::filesystem::remove(path);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : format_error(s.error()));
  return s.ok() ? std::move(s.value()) : Spec{};
}

std::string emit(const std::string& backend, const Spec& s) {
  const Emitter* e = find_emitter(backend);
  EXPECT_NE(e, nullptr) << backend;
  return e ? e->emit(s).content : "";
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const char* kMats =
    "  a: {type: f32, shape: [M, K], role: in}\n"
    "  at: {type: f32, shape: [K, M], role: in}\n"
    "  b: {type: f32, shape: [K, N], role: in}\n"
    "  bt: {type: f32, shape: [N, K], role: in}\n"
    "  bias: {type: f32, shape: [N], role: in}\n"
    "  c: {type: f32, shape: [M, N], role: out}\n"
    "  d: {type: f32, shape: [M, N], role: out}\n"
    "  r: {type: f32, shape: [M], role: out}\n";

const char* kGemmCompute =
    "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n"
    "  d[i, j] = sum(k in 1..K: bt[j, k] * at[k, i]) + bias[j]\n"
    "  r[i] = sum(j in 0..N: d[i, j])\n";

TEST(EmitCpuStrategies, BlockedMatmulParameters) {
  const Emitter& cpu = *find_emitter("cpu");
  const StrategyInfo* bm = find_strategy(cpu, "blocked_matmul");
  ASSERT_NE(bm, nullptr);
  ASSERT_EQ(bm->params.size(), 3u);
  Variant v;
  v.strategy = "blocked_matmul";
  v.params["kc"] = 64;
  EXPECT_EQ(param(v, *bm, "mc"), 128);
  EXPECT_EQ(param(v, *bm, "kc"), 64);
  EXPECT_EQ(param(v, *bm, "nc"), 4096);
  EXPECT_NE(find_strategy(*find_emitter("vendor_cpu"), "blas"), nullptr);
  for (const char* s : {"cublas", "cub_reduce", "cub_scan"})
    EXPECT_NE(find_strategy(*find_emitter("vendor_cuda"), s), nullptr) << s;
  EXPECT_EQ(find_emitter("vendor_cuda")->extension(), "cu");
  EXPECT_EQ(find_emitter("vendor_cpu")->extension(), "cpp");
}

TEST(EmitCpuBlockedMatmul, GemmCallsEpilogueAndOtherStatements) {
  const Spec s = load(kMats, kGemmCompute,
                      "  cpu:\n    - {name: bm, strategy: blocked_matmul, mc: 96, nc: 1024}\n");
  const std::string c = emit("cpu", s);
  // One f32 GEMM, no f64 one; the micro-kernel and packing routines come with it.
  EXPECT_TRUE(has(c, "static int64_t sb_gemm_f32(int64_t M, int64_t N, int64_t K,")) << c;
  EXPECT_FALSE(has(c, "sb_gemm_f64"));
  EXPECT_TRUE(has(c, "static inline void sb_gemm_tile_f32("));
  EXPECT_TRUE(has(c, "static inline void sb_gemm_pack_x_f32("));
  EXPECT_TRUE(has(c, "#if defined(__AVX512F__)\n#define SB_SIMD_BYTES 64\n"));
  EXPECT_TRUE(has(c, "static constexpr int64_t sb_gemm_mr_f32 = sb_gemm_vl_f32 * 4 >= 64 ? 12"));
  // Plain layout; then both operands transposed, with the sum starting at k = 1.
  EXPECT_TRUE(
      has(c,
          "  const int64_t sb_m = M;\n  const int64_t sb_n = N;\n  const int64_t sb_k = K;\n"
          "  if (sb_gemm_f32(sb_m, sb_n, sb_k, a, K, 1, b, N, 1, c, sb_n, 96, 512, 1024) "
          "!= 0) return 1;"))
      << c;
  EXPECT_TRUE(has(c, "const int64_t sb_k = K - 1;\n"));
  EXPECT_TRUE(has(c, "sb_gemm_f32(sb_m, sb_n, sb_k, at + 1 * M, 1, M, bt + 1, 1, K, d, sb_n,"))
      << c;
  // The bias is a second, elementwise pass reading the product back.
  EXPECT_TRUE(has(c, "d[i * N + j] = d[i * N + j] + bias[j];")) << c;
  // The row sum is lowered as omp_simd; the launcher checks the GEMM kernels' status.
  EXPECT_TRUE(has(c, "static int sb_bm_s0("));
  EXPECT_TRUE(has(c, "static void sb_bm_s2("));
  EXPECT_TRUE(has(c, "#pragma omp simd reduction(+:sb_acc"));
  EXPECT_TRUE(has(c, "  if (sb_bm_s0(a, b, c, M, N, K) != 0) return 1;")) << c;
  EXPECT_TRUE(has(c, "#include <omp.h>"));
}

TEST(EmitCpuBlockedMatmul, F64AndNoGemmWithoutTheStrategy) {
  const Spec s = load(
      "  a: {type: f64, shape: [M, K], role: in}\n  b: {type: f64, shape: [K, N], role: in}\n"
      "  c: {type: f64, shape: [M, N], role: out}\n",
      "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n    - {name: bm, strategy: "
      "blocked_matmul}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c, "static int64_t sb_gemm_f64("));
  EXPECT_FALSE(has(c, "sb_gemm_f32"));
  EXPECT_TRUE(has(c, "typedef double sb_simd_f64"));

  const Spec plain = load(
      "  a: {type: f64, shape: [M, K], role: in}\n  b: {type: f64, shape: [K, N], role: in}\n"
      "  c: {type: f64, shape: [M, N], role: out}\n",
      "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string p = emit("cpu", plain);
  EXPECT_FALSE(has(p, "sb_gemm"));
  EXPECT_FALSE(has(p, "#include <omp.h>"));
}

TEST(EmitCpuOmpSimd, ApproxMathOnlyForF32ExpAndTanhOfThatVariant) {
  const Spec s = load(
      "  x: {type: f32, shape: [N], role: in}\n  w: {type: f64, shape: [N], role: in}\n"
      "  y: {type: f32, shape: [N], role: out}\n  z: {type: f64, shape: [N], role: out}\n"
      "  v: {type: f32, shape: [N], role: out}\n",
      "  y[i] = exp(x[i]) + tanh(x[i])\n  z[i] = exp(w[i])\n  v[i] = exp(x[i]) + log(x[i])\n",
      "  cpu:\n    - {name: loops, strategy: loops}\n    - {name: omp, strategy: omp_simd}\n"
      "    - {name: fast, strategy: omp_simd, approx_math: 1}\n");
  const std::string c = emit("cpu", s);
  // loops calls libm, omp the vector library, fast the inline forms for f32 exp and tanh only.
  EXPECT_TRUE(has(c, "expf(x[i]) + tanhf(x[i])")) << c;
  EXPECT_TRUE(has(c, "sb_vec_expf(x[i]) + sb_vec_tanhf(x[i])")) << c;
  EXPECT_TRUE(has(c, "sb_approx_expf(x[i]) + sb_approx_tanhf(x[i])")) << c;
  EXPECT_FALSE(has(c, "sb_approx_exp(w[i])")) << c;
  // A statement that also calls the vector library keeps it for exp too: GCC leaves a loop that
  // mixes the inline form with a vector-library call scalar.
  EXPECT_TRUE(has(c, "sb_vec_expf(x[i]) + sb_vec_logf(x[i])")) << c;
  EXPECT_FALSE(has(c, "sb_approx_expf(x[i]) + sb_vec_logf(x[i])")) << c;
  EXPECT_TRUE(has(c, "static inline float sb_approx_expf(float x) {"));
  EXPECT_TRUE(has(c, "static inline float sb_approx_tanhf(float x) {"));
  EXPECT_TRUE(has(c, "//   fast   strategy omp_simd: approx_math = 1")) << c;

  // Without the parameter no approximation is emitted at all.
  const Spec plain = load(
      "  x: {type: f32, shape: [N], role: in}\n"
      "  y: {type: f32, shape: [N], role: out}\n",
      "  y[i] = exp(x[i])\n", "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string p = emit("cpu", plain);
  EXPECT_TRUE(has(p, "sb_vec_expf(x[i])")) << p;
  EXPECT_FALSE(has(p, "sb_approx")) << p;
}

// An output of rank 4 shares its two outer loops as one collapsed OpenMP range (the parallelize
// pass): with M = 1 every thread still gets planes. A rank-3 output keeps its outer loop alone.
TEST(EmitCpuOmpSimd, OuterOutputLoopsOfRankFourAreOneCollapsedRange) {
  const Spec s = load(
      "  x: {type: f32, shape: [M, N, K, K], role: in}\n"
      "  y: {type: f32, shape: [M, N, K, K], role: out}\n"
      "  z: {type: f32, shape: [N, K, K], role: out}\n",
      "  y[m, n, k, l] = x[m, n, k, l] * 2\n  z[n, k, l] = x[0, n, k, l] + 1\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  // The plain (in-cache) form; the streamed form collapses its line blocks too, as before.
  EXPECT_TRUE(has(c,
                  "    #pragma omp parallel for schedule(static) collapse(2)\n"
                  "    for (int64_t m = 0; m < M; ++m) {\n"
                  "      for (int64_t n = 0; n < N; ++n) {\n"
                  "        for (int64_t k = 0; k < K; ++k) {\n"))
      << c;
  EXPECT_EQ(count(c, "#pragma omp parallel for schedule(static) collapse("), 1u) << c;
  EXPECT_TRUE(has(c,
                  "    #pragma omp parallel for schedule(static)\n"
                  "    for (int64_t n = 0; n < N; ++n) {\n"))
      << c;
}

TEST(EmitCpuOmpSimd, StreamedLinesPrefetchAndAreOneVector) {
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in}\n  y: {type: f32, shape: [N], role: in}\n"
      "  z: {type: f32, shape: [M, N], role: out}\n",
      "  z[i, j] = x[i, j] * y[j]\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  // x is read along the output (the streaming pass's prefetch list), y is broadcast over i.
  EXPECT_TRUE(has(c, "__builtin_prefetch(&x[i * N + (sb_j + 1024 < N ? sb_j + 1024 : N - 1)], "
                     "0, 3);"))
      << c;
  EXPECT_FALSE(has(c, "__builtin_prefetch(&y[")) << c;
  EXPECT_TRUE(has(c, "#pragma omp simd simdlen(16)\n")) << c;
}

TEST(EmitCpuOmpSimd, TransposedReadsMoveInBlocksEveryReadOfTheElementFromIt) {
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in}\n  b: {type: f32, shape: [N, M], role: in}\n"
      "  y: {type: f32, shape: [N, M], role: out}\n",
      "  y[j, i] = x[i, j] * x[i, j] + b[j, i]\n",
      "  cpu:\n    - {name: loops, strategy: loops}\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c, "static inline void sb_transpose_8x16_b32(")) << c;
  // One block per 8 rows of j and 16 elements of i, in both forms (streamed and plain).
  EXPECT_EQ(count(c, "sb_transpose_8x16_b32(&x[i * N + j], N, sb_tb);"), 2u) << c;
  // Stored plainly in both.
  EXPECT_EQ(count(c, "y[j * M + i] = sb_tb[sb_p][sb_q] * sb_tb[sb_p][sb_q] + b[j * M + i];"), 2u)
      << c;
  // The rows after the last whole block, and each block row's end, read x itself.
  EXPECT_TRUE(has(c, "for (int64_t j = sb_b; j < sb_te0; ++j) {")) << c;
  EXPECT_TRUE(has(c, "y[j * M + i] = x[i * N + j] * x[i * N + j] + b[j * M + i];")) << c;
  // An f64 transpose keeps its gathers, and the file no block code.
  const Spec d = load(
      "  x: {type: f64, shape: [M, N], role: in}\n  y: {type: f64, shape: [N, M], role: out}\n",
      "  y[j, i] = x[i, j]\n", "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string f = emit("cpu", d);
  EXPECT_TRUE(has(f, "sb_t1")) << f;
  EXPECT_FALSE(has(f, "sb_transpose_8x16_b32")) << f;
}

TEST(EmitCpuOmpSimd, RowGroupsPrefetchTheNextRowWhereTheyReadItLast) {
  // A softmax: x's last reader is exp, computed inside the sum's loop, so the sum's blocks of
  // partial accumulators prefetch the next row's lines of x (four f32 lines per 64 elements),
  // when the group streams. The row's last pass reads no x and prefetches no next row.
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in}\n  m: {type: f32, shape: [M], role: temp}\n"
      "  e: {type: f32, shape: [M, N], role: temp}\n  t: {type: f32, shape: [M], role: temp}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n",
      "  m[r] = max(c in 0..N: x[r, c])\n  e[r, c] = exp(x[r, c] - m[r])\n"
      "  t[r] = sum(c in 0..N: e[r, c])\n  y[r, c] = e[r, c] / t[r]\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c, "const int64_t sb_next_row = sb_row + 1 < M ? sb_row + 1 : sb_row;")) << c;
  // Each statement numbers its accumulators from 0: the max pass's blocks come first, the sum's
  // second.
  const std::string header = "for (; sb_k0 + 64 <= sb_h0; sb_k0 += 64) {";
  const size_t first = c.find(header);
  ASSERT_NE(first, std::string::npos) << c;
  const size_t block = c.find(header, first + 1);
  ASSERT_NE(block, std::string::npos) << c;
  const std::string body = c.substr(block, c.find("#pragma omp simd", block) - block);
  EXPECT_TRUE(has(body, "if (sb_stream) {")) << body;
  for (const char* at : {"sb_k0]", "sb_k0 + 16]", "sb_k0 + 32]", "sb_k0 + 48]"})
    EXPECT_TRUE(has(body, std::string("__builtin_prefetch(&x[sb_next_row * N + ") + at)) << body;
  // The max pass reads x too, but not last: its blocks prefetch nothing.
  EXPECT_FALSE(has(c.substr(first, c.find("#pragma omp simd", first) - first), "prefetch")) << c;
}

TEST(EmitCpuOmpSimd, StreamedRowLinesPrefetchTheNextRow) {
  // An rmsnorm: the output's streamed lines are x's last read, so each line prefetches the same
  // line of the next row; w (rank 1) is not prefetched.
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in}\n  w: {type: f32, shape: [N], role: in}\n"
      "  q: {type: f32, shape: [M], role: temp}\n  y: {type: f32, shape: [M, N], role: out}\n",
      "  q[r] = sum(c in 0..N: x[r, c] * x[r, c])\n  y[r, c] = w[c] * q[r] * x[r, c]\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c, "// The next row, for its first pass:\n")) << c;
  EXPECT_TRUE(has(c, "__builtin_prefetch(&x[sb_next_row * N + sb_j], 0, 3);")) << c;
  EXPECT_FALSE(has(c, "__builtin_prefetch(&w[sb_next_row")) << c;
}

TEST(EmitCpuOmpSimd, LongScansStreamTheirVectorBlocks) {
  const Spec s = load(
      "  x: {type: f32, shape: [N], role: in}\n  y: {type: f32, shape: [N], role: out}\n",
      "  y[i] = sum(j in 0..i + 1: x[j])\n",
      "  cpu:\n    - {name: loops, strategy: loops}\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  // Past the streaming threshold the two passes stream their walks (lower/running_scans.h): a
  // vector block that starts a cache line is written a line at a time with non-temporal stores,
  // and each block's walk fences them. Below it, the same two passes with plain stores only.
  const size_t streamed_at = c.find("if (4 * N + 4 * N >= SB_STREAM_MIN_BYTES) {");
  ASSERT_NE(streamed_at, std::string::npos) << c;
  const size_t two = c.find("} else {", streamed_at);
  ASSERT_NE(two, std::string::npos) << c;
  const std::string streamed = c.substr(streamed_at, two - streamed_at);
  EXPECT_FALSE(has(c, "omp ordered")) << c;
  EXPECT_TRUE(has(streamed, "sb_part[sb_b] = sb_fold;")) << c;
  EXPECT_TRUE(has(streamed, "if (((uintptr_t)&y[sb_i] & 63) == 0) {")) << c;
  EXPECT_TRUE(has(streamed, "sb_line[sb_q - sb_l] = sb_v[sb_q];")) << c;
  EXPECT_TRUE(has(streamed, "sb_store_line(&y[sb_i + sb_l], sb_line, 64);")) << c;
  EXPECT_TRUE(has(streamed, "sb_stream_fence();")) << c;
  const std::string rest = c.substr(two);
  EXPECT_TRUE(has(rest, "sb_part[sb_b] = sb_fold;")) << c;
  EXPECT_FALSE(has(rest.substr(0, rest.find("static int sb_variant_loops")), "sb_store_line("))
      << c;
  EXPECT_TRUE(has(c, "SB_STREAM_KERNEL static void sb_omp_s0(")) << c;
  // The loops variant walks the scan plainly.
  EXPECT_FALSE(has(c, "SB_STREAM_KERNEL static void sb_loops_s0(")) << c;
}

// The vector walk reads a term that is plain memory in place and writes an output that is the
// scan itself in place; a computed term goes through the block's array, as do the outputs of a
// scan inside an expression and the streamed lines.
TEST(EmitCpuOmpSimd, VectorScansReadAndWritePlainMemoryInPlace) {
  const Spec s = load(
      "  x: {type: f32, shape: [N], role: in}\n  y: {type: f32, shape: [N], role: out}\n"
      "  z: {type: f32, shape: [N], role: out}\n  u: {type: f32, shape: [N], role: out}\n",
      "  y[i] = sum(j in 0..i + 1: x[j])\n"
      "  z[i] = max(j in 0..i + 1: x[j] * x[j])\n"
      "  u[i] = 1 + min(j in 0..i + 1: x[j])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  auto kernel = [&](int k) {
    const size_t at = c.find("static void sb_omp_s" + std::to_string(k) + "(");
    EXPECT_NE(at, std::string::npos) << c;
    return c.substr(at, c.find("\n}\n", at) - at);
  };
  const std::string y = kernel(0), z = kernel(1), u = kernel(2);
  // Below the split, the walk of y: both in place, no array.
  const std::string y_walk = y.substr(y.rfind("} else {"));
  EXPECT_TRUE(has(y_walk, "sb_src = &x[j];")) << y;
  EXPECT_TRUE(has(y_walk, "sb_run = sb_scan_sum_f32(sb_src + sb_q, &y[sb_i] + sb_q, sb_run);"))
      << y;
  EXPECT_FALSE(has(y_walk, "sb_v[")) << y;
  // Streamed lines still take the array.
  EXPECT_TRUE(has(y, "sb_run = sb_scan_sum_f32(sb_src + sb_q, sb_v + sb_q, sb_run);")) << y;
  EXPECT_TRUE(has(z, "sb_v[sb_q] = x[j] * x[j];")) << z;
  EXPECT_TRUE(has(z, "sb_scan_max_f32(sb_v + sb_q, &z[sb_i] + sb_q, sb_run);")) << z;
  EXPECT_TRUE(has(u, "sb_scan_min_f32(sb_src + sb_q, sb_v + sb_q, sb_run);")) << u;
  EXPECT_TRUE(has(u, "u[i] = 1.0f + sb_v[sb_q];")) << u;
}

// A stencil's rows set apart one cache line of outputs at each end: 8 f64, 16 f32.
TEST(EmitCpuOmpSimd, StencilEdgesAreOneLineOfOutputs) {
  for (const auto& [type, edge] : {std::pair<std::string, std::string>{"f64", "8"}, {"f32", "16"}}) {
    const Spec s = load("  x: {type: " + type + ", shape: [M, N], role: in, boundary: clamp}\n"
                        "  y: {type: " + type + ", shape: [M, N], role: out}\n",
                        "  y[i, j] = x[i - 1, j] + x[i, j + 1]\n",
                        "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
    const std::string c = emit("cpu", s);
    EXPECT_TRUE(has(c, "// Its first and last " + edge + " elements apart")) << type << "\n" << c;
    EXPECT_TRUE(has(c, "const int64_t sb_p = N < " + edge + " ? N : " + edge + ";")) << c;
  }
}

// A convolution's reductions run outside the vector loop (lower/vectorize.h); a row shorter than
// a block would take the boundary checks throughout, so each block of a row goes in edge
// segments, and the middle one reads without checks for every tap: the condition spans the
// inner reduction's range (k at 0 and at K - 1) as well as the segment's ends.
TEST(EmitCpuOmpSimd, ConvolutionRowsSetTheirEdgesApartForEveryTap) {
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in, boundary: zero}\n"
      "  w: {type: f32, shape: [K, K], role: in}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n",
      "  y[i, j] = sum(a in 0..K: sum(k in 0..K: x[i + a - 1, j + k - 1] * w[a, k]))\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c, "// Its first and last 8 elements apart")) << c;
  EXPECT_TRUE(has(c, "for (int sb_seg = 0; sb_seg < 3; ++sb_seg) {")) << c;
  EXPECT_TRUE(has(c, "i + a - 1 >= 0 && i + a - 1 < M && sb_lo + 0 - 1 >= 0")) << c;
  EXPECT_TRUE(has(c, "(sb_hi - 1) + (K - 1) - 1 < N) {")) << c;
  EXPECT_TRUE(has(c, "x[(i + a - 1) * N + (j + k - 1)] * w[a * K + k]")) << c;  // unchecked
}

// A window of a constant few terms (lower/vectorize.h: kUnrolledTerms) whose reads reach a fixed
// distance along the row, in a dimension as long as the output's row, sets apart exactly the
// outputs whose window crosses the row's edge (1 at each end for taps at -1, 0 and +1), and
// keeps one vector's accumulators although the window also crosses the rows above and below.
TEST(EmitCpuOmpSimd, ConstantWindowsSetApartExactlyTheOutputsPastAnEdge) {
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in, boundary: zero}\n"
      "  w: {type: f32, shape: [3, 3], role: in}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n",
      "  y[i, j] = sum(a in 0..3: sum(k in 0..3: x[i + a - 1, j + k - 1] * w[a, k]))\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c, "// Its first and last element apart")) << c;
  EXPECT_TRUE(has(c, "const int64_t sb_p = sb_je - sb_jb < 1 ? sb_je : sb_jb + 1;")) << c;
  EXPECT_TRUE(has(c, "if (i + 0 - 1 >= 0 && i + 0 - 1 < M && i + (3 - 1) - 1 >= 0")) << c;
  EXPECT_TRUE(has(c,
                  "for (int64_t j = sb_lo; j < sb_hi; ++j) {\n"
                  "              float sb_acc0 = 0.0f;\n"
                  "              for (int64_t a = 0; a < 3; ++a) {"))
      << c;
  EXPECT_FALSE(has(c, "sb_block0")) << c;
  // Reads reaching 2 elements each way (2 * k - 2, k in 0..3): edges of 2.
  const Spec r = load(
      "  x: {type: f32, shape: [M, N], role: in, boundary: zero}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n",
      "  y[i, j] = sum(a in 0..2: sum(k in 0..3: x[i + a, 2 * k + j - 2]))\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string d = emit("cpu", r);
  EXPECT_TRUE(has(d, "// Its first and last 2 elements apart")) << d;
  EXPECT_FALSE(has(d, "sb_block0")) << d;
}

// Where no check depends on the position along the row (a read whose row alone may fall
// outside), the block stays whole: one condition for it, no segments.
TEST(EmitCpuOmpSimd, RowChecksThatDoNotVaryAlongTheRowKeepTheBlockWhole) {
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in, boundary: zero}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n",
      "  y[i, j] = sum(a in 0..K: x[i + a - 1, j])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_FALSE(has(c, "sb_seg")) << c;
  EXPECT_TRUE(has(c, "if (i + a - 1 >= 0 && i + a - 1 < M) {")) << c;
}

TEST(EmitCpuOmpSimd, RowsOfRankThreeStreamAlongTheirLastDimension) {
  const Spec s = load(
      "  x: {type: f32, shape: [M, N, K], role: in}\n  m: {type: f32, shape: [M], role: temp}\n"
      "  y: {type: f32, shape: [M, N, K], role: out}\n",
      "  m[i] = sum(j in 0..N: sum(k in 0..K: x[i, j, k]))\n  y[i, j, k] = x[i, j, k] - m[i]\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  // A row of the group is N x K: its middle dimension a plain loop, lines along k.
  EXPECT_TRUE(has(c, "if (sb_stream) {\n          for (int64_t j = 0; j < N; ++j) {")) << c;
  EXPECT_TRUE(has(c, "sb_store_line(&y[(i * N + j) * K + sb_j], sb_line, 64);")) << c;
  EXPECT_TRUE(has(c, "if (sb_stream) sb_stream_fence();")) << c;
}

TEST(EmitCpuOmpSimd, RowReductionsKeepPartialAccumulators) {
  const Spec s = load(
      "  x: {type: f64, shape: [M, N], role: in}\n  r: {type: f64, shape: [M], role: out}\n"
      "  t: {type: f64, shape: [], role: out}\n",
      "  r[i] = max(j in 0..N: x[i, j])\n  t = sum(i in 0..M: x[i, 0])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  // The row's reduction: 32 f64 partials (256 bytes) when the range holds at least 64 terms,
  // combined with the NaN-propagating max; the rest of the range by the plain loop.
  EXPECT_TRUE(has(c, "if (sb_h0 - sb_k0 >= 2 * 32) {")) << c;
  EXPECT_TRUE(has(c, "double sb_part0[32] __attribute__((aligned(64)));")) << c;
  EXPECT_TRUE(has(c, "#pragma omp simd simdlen(8)\n")) << c;
  EXPECT_TRUE(has(c, "sb_part0[sb_q] = sb_max_f64(sb_part0[sb_q], x[i * N + j]);")) << c;
  EXPECT_TRUE(has(c, "sb_acc0 = sb_max_f64(sb_acc0, sb_part0[sb_q]);")) << c;
  EXPECT_TRUE(has(c, "for (int64_t j = sb_k0; j < sb_h0; ++j) {")) << c;
  // A reduction shared out over threads: chunks of 8192 f64 terms (64 KiB) over the threads, by
  // the reduction's OpenMP clause, each chunk's terms into the partials.
  EXPECT_TRUE(has(c,
                  "  #pragma omp parallel for schedule(static) reduction(+:sb_acc0)\n"
                  "  for (int64_t sb_c0 = sb_lo0; sb_c0 < sb_hi0; sb_c0 += 8192) {\n"
                  "    const int64_t sb_e0 = sb_hi0 - sb_c0 < 8192 ? sb_hi0 : sb_c0 + 8192;\n"
                  "    int64_t sb_k0 = sb_c0;\n"
                  "    const int64_t sb_h0 = sb_e0;\n"
                  "    if (sb_h0 - sb_k0 >= 2 * 32) {\n"))
      << c;
  EXPECT_TRUE(has(c, "sb_part0[sb_q] += x[i * N + 0];")) << c;
  EXPECT_TRUE(
      has(c, "#pragma omp simd reduction(+:sb_acc0)\n    for (int64_t i = sb_k0; i < sb_h0;"))
      << c;
  EXPECT_EQ(c.find("parallel for simd"), std::string::npos) << c;
}

TEST(EmitCpuOmpSimd, SplitReductionsOfNestedOnesKeepOneParallelLoop) {
  const Spec s =
      load("  x: {type: f32, shape: [M, N], role: in}\n  t: {type: f32, shape: [], role: out}\n",
           "  t = sum(i in 0..M: max(j in 0..N: x[i, j]))\n",
           "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  // The outer reduction holds another: its loop is the parallel one, without chunks; the inner
  // one, innermost, keeps its partials.
  EXPECT_TRUE(has(c,
                  "#pragma omp parallel for schedule(static) reduction(+:sb_acc0)\n"
                  "  for (int64_t i = 0; i < M; ++i) {"))
      << c;
  EXPECT_EQ(c.find("sb_c0"), std::string::npos) << c;
  EXPECT_TRUE(has(c, "float sb_part1[64]")) << c;
}

TEST(EmitCpuOmpSimd, ShortConstantWindowsKeepOneVectorsAccumulators) {
  const Spec s = load(
      "  x: {type: f32, shape: [N], role: in, boundary: zero}\n"
      "  y: {type: f32, shape: [N], role: out}\n  z: {type: f32, shape: [N], role: out}\n",
      "  y[i] = sum(k in 0..3: x[i - k])\n  z[i] = sum(k in 0..17: x[i + k])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  // Three terms: the window's loop inside the block's vector loop, one accumulator per output.
  EXPECT_TRUE(has(c,
                  "      #pragma omp simd\n"
                  "      for (int64_t i = sb_jb; i < sb_je; ++i) {\n"
                  "        float sb_acc0 = 0.0f;\n"
                  "        for (int64_t k = 0; k < 3; ++k) {\n"
                  "          sb_acc0 += x[i - k];\n"))
      << c;
  // Seventeen terms (more than kUnrolledTerms): the block's array, one k at a time.
  EXPECT_TRUE(
      has(c, "float sb_block0[128] __attribute__((aligned(64)));\n      #pragma omp simd\n"))
      << c;
  EXPECT_TRUE(has(c, "for (int64_t k = 0; k < 17; ++k) {")) << c;
  EXPECT_EQ(c.find("sb_block1"), std::string::npos) << c;
}

TEST(EmitCpuOmpSimd, ConstantWindowsCopyTheirTapsOncePerBlock) {
  // w[c, a, b] does not move along the row: one copy per block, read by the window's loops.
  // x moves along it, and v has a boundary rule: both stay reads of the tensor.
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in, boundary: zero}\n"
      "  w: {type: f32, shape: [M, 3, 2], role: in}\n"
      "  v: {type: f32, shape: [M, 3], role: in, boundary: zero}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n",
      "  y[c, j] = sum(a in 1..4: sum(b in 0..2: x[c, j + a + b] * w[c, a - 1, b] + v[c, a + "
      "b]))\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c,
                  "float sb_tap0[6];\n"
                  "      for (int64_t a = 1; a < 4; ++a) {\n"
                  "        for (int64_t b = 0; b < 2; ++b) {\n"
                  "          sb_tap0[(a - 1) * 2 + b] = w[(c * 3 + (a - 1)) * 2 + b];\n"))
      << c;
  EXPECT_TRUE(has(c, "* sb_tap0[(a - 1) * 2 + b]")) << c;
  EXPECT_EQ(c.find("sb_tap1"), std::string::npos) << c;
  EXPECT_EQ(c.find("* w[("), std::string::npos) << c;
  EXPECT_TRUE(has(c, "x[c * N + (j + a + b)] * sb_tap0")) << c;
}

TEST(EmitCpuOmpSimd, WindowsAlongTheRowTakeWholeBlocksOfAConstantCount) {
  // A window of K terms along the row: a whole block with every read inside runs loops of a
  // constant count without checks (the compiler keeps its accumulators in registers); the
  // others keep the checks.
  const Spec s = load(
      "  x: {type: f32, shape: [N], role: in, boundary: zero}\n"
      "  w: {type: f32, shape: [K], role: in}\n  y: {type: f32, shape: [N], role: out}\n",
      "  y[i] = sum(k in 0..K: x[i + k] * w[k])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c, "    if (sb_je - sb_jb == 128 && sb_jb + 0 >= 0 && sb_jb + 0 < N &&")) << c;
  EXPECT_TRUE(has(c,
                  "        #pragma omp simd\n"
                  "        for (int64_t i = sb_jb; i < sb_jb + 128; ++i) {\n"
                  "          sb_block0[i - sb_jb] += x[i + k] * w[k];\n"))
      << c;
  EXPECT_TRUE(has(c, "    } else {\n      float sb_block0[128]")) << c;
  EXPECT_TRUE(has(c, "for (int64_t i = sb_jb; i < sb_je; ++i) {")) << c;
  EXPECT_TRUE(has(c, "(sb_ld")) << c;  // the checked reads, in the other blocks
  // A sum down the columns: each term reads another row, and the block keeps its array only.
  const Spec t =
      load("  x: {type: f32, shape: [M, N], role: in}\n  y: {type: f32, shape: [N], role: out}\n",
           "  y[j] = sum(i in 0..M: x[i, j])\n", "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string d = emit("cpu", t);
  EXPECT_TRUE(has(d, "float sb_block0[128]")) << d;
  EXPECT_FALSE(has(d, "sb_je - sb_jb == 128")) << d;
}

TEST(EmitCpuOmpSimd, WindowsAcrossRowsKeepTheBlockUnlessTheirRowEdgesAreExact) {
  // The window's edge is across the vector loop (rows above and below); along the row its reads
  // are plain (j in a row as long as the output's): one vector's accumulators, the block's check
  // for the rows of the whole window.
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in, boundary: zero}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n",
      "  y[i, j] = sum(k in 0..3: x[i + k - 1, j])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_FALSE(has(c, "sb_block0")) << c;
  EXPECT_TRUE(has(c, "if (i + 0 - 1 >= 0 && i + 0 - 1 < M && i + (3 - 1) - 1 >= 0")) << c;
  // A row of another length: its edges are not exact, and the block checks only the terms past
  // the edge.
  const Spec r = load(
      "  x: {type: f32, shape: [M, N + 1], role: in, boundary: zero}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n",
      "  y[i, j] = sum(k in 0..3: x[i + k - 1, j + 1])\n",
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  const std::string d = emit("cpu", r);
  EXPECT_TRUE(has(d, "float sb_block0[128]")) << d;
}

// A search written as a reduction (lower/patterns.h: FirstIndex) ORs its condition over blocks of
// kSearchTerms terms as vectors, up to the first block where it holds, whose terms it then tests
// one at a time; the default where the range holds terms and no condition held.
TEST(EmitCpuOmpSimd, SearchesStopAtTheFirstBlockWhereTheyHold) {
  const Spec s =
      load("  x: {type: f32, shape: [M, N], role: in}\n  y: {type: i64, shape: [M], role: out}\n",
           "  y[i] = min(j in 0..N: select(x[i, j] < 0, i64(j), i64(N - 1)))\n",
           "  cpu:\n    - {name: loops, strategy: loops}\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c,
                  "    for (int64_t sb_b0 = sb_k0; sb_b0 < sb_h0; sb_b0 += 128) {\n"
                  "      const int64_t sb_e0 = sb_h0 - sb_b0 < 128 ? sb_h0 : sb_b0 + 128;\n"
                  "      int sb_any0 = 0;\n"
                  "      #pragma omp simd reduction(|:sb_any0)\n"
                  "      for (int64_t j = sb_b0; j < sb_e0; ++j) {\n"
                  "        sb_any0 |= x[i * N + j] < 0.0f ? 1 : 0;\n"
                  "      }\n"
                  "      if (!sb_any0) continue;\n"
                  "      int64_t j = sb_b0;\n"
                  "      for (; j < sb_e0; ++j) {\n"
                  "        if (x[i * N + j] < 0.0f) break;\n"
                  "      }\n"
                  "      if (j < sb_e0) {\n"
                  "        sb_acc0 = sb_min_i64(sb_acc0, (int64_t)j);\n"
                  "        sb_found0 = 1;\n"
                  "        break;"))
      << c;
  EXPECT_TRUE(has(c,
                  "    if (!sb_found0 && sb_k0 < sb_h0) {\n"
                  "      sb_acc0 = sb_min_i64(sb_acc0, (int64_t)(N - 1));"))
      << c;
  // The loops variant folds every term.
  EXPECT_TRUE(has(c,
                  "sb_acc0 = sb_min_i64(sb_acc0, x[i * N + j] < 0.0f ? (int64_t)j : "
                  "(int64_t)(N - 1));"))
      << c;
}

TEST(EmitCpuOmpSimd, StaticScheduleAndStreamingForElementwise) {
  const Spec s = load(
      "  x: {type: f32, shape: [M, N], role: in}\n  y: {type: f32, shape: [N], role: in}\n"
      "  z: {type: f32, shape: [M, N], role: out}\n  t: {type: f32, shape: [], role: out}\n",
      "  z[i, j] = x[i, j] * y[j]\n  t = sum(i in 0..N: y[i])\n",
      "  cpu:\n    - {name: loops, strategy: loops}\n    - {name: omp, strategy: omp_simd}\n");
  const std::string c = emit("cpu", s);
  EXPECT_TRUE(has(c, "#pragma omp parallel for schedule(static)\n")) << c;
  EXPECT_TRUE(has(c, "#pragma omp parallel for schedule(static) reduction(+:sb_acc0)")) << c;
  // The elementwise statement: a run-time choice between streaming and plain loops.
  EXPECT_TRUE(has(c, "const int64_t sb_bytes = 4 * (M * N) + 4 * N + 4 * (M * N);")) << c;
  EXPECT_TRUE(has(c, "if (sb_bytes >= SB_STREAM_MIN_BYTES) {"));
  EXPECT_TRUE(has(c, "#pragma omp for schedule(static) nowait collapse(2)"));
  // The head up to the first line boundary with plain stores, then whole lines with a constant
  // count (whole vectors), each one non-temporal store, then the partial last line.
  EXPECT_TRUE(has(c,
                  "const int64_t sb_h = sb_b + sb_head_elems(&z[i * N + sb_b], "
                  "(int64_t)sizeof(float), sb_e - sb_b);"))
      << c;
  EXPECT_TRUE(has(c,
                  "for (int64_t j = sb_b; j < sb_h; ++j) {\n"
                  "              z[i * N + j] = x[i * N + j] * y[j];"))
      << c;
  EXPECT_TRUE(has(c,
                  "for (; sb_j + (int64_t)(64 / sizeof(float)) <= sb_e; "
                  "sb_j += (int64_t)(64 / sizeof(float))) {"));
  EXPECT_TRUE(has(c, "const int64_t j = sb_j + sb_q;"));
  EXPECT_TRUE(has(c, "sb_line[sb_q] = x[i * N + j] * y[j];"));
  EXPECT_TRUE(has(c, "for (int64_t sb_q = 0; sb_q < (int64_t)(64 / sizeof(float)); ++sb_q) {"));
  EXPECT_TRUE(has(c, "sb_store_line(&z[i * N + sb_j], sb_line, 64);"));
  EXPECT_TRUE(has(c, "for (int64_t j = sb_j; j < sb_e; ++j) {"));
  EXPECT_TRUE(
      has(c, "static inline void sb_store_line(void* dst, const void* line, int64_t bytes)"));
  EXPECT_TRUE(has(c, "_mm512_stream_si512"));
  EXPECT_TRUE(has(c, "#include <immintrin.h>"));
  // The loops variant never streams: exactly one streaming kernel (its one line store).
  const size_t first_store = c.find("sb_store_line(&z");
  ASSERT_NE(first_store, std::string::npos);
  EXPECT_EQ(c.find("sb_store_line(&z", first_store + 1), std::string::npos);

  // Without elementwise statements there is no streaming support code.
  const Spec r =
      load("  y: {type: f32, shape: [N], role: in}\n  t: {type: f32, shape: [], role: out}\n",
           "  t = sum(i in 0..N: y[i])\n", "  cpu:\n    - {name: omp, strategy: omp_simd}\n");
  EXPECT_FALSE(has(emit("cpu", r), "sb_stream"));
}

TEST(EmitCpuOmpSimd, RowReductionRunsInTheLoopOfTheRowItReads) {
  const char* tensors =
      "  x: {type: f32, shape: [M, N], role: in}\n"
      "  e: {type: f32, shape: [M, N], role: temp}\n"
      "  s: {type: f32, shape: [M], role: temp}\n"
      "  y: {type: f32, shape: [M, N], role: out}\n";
  const char* variants =
      "  cpu:\n    - {name: omp, strategy: omp_simd}\n"
      "    - {name: fast, strategy: omp_simd, approx_math: 1}\n";
  auto emit_compute = [&](const char* compute) {
    return emit("cpu", load(tensors, compute, variants));
  };
  const std::string c = emit_compute(
      "  e[i, j] = exp(x[i, j])\n  s[i] = sum(k in 0..N: e[i, k] * x[i, k])\n"
      "  y[i, j] = e[i, j] / (s[i] + 1.0)\n");
  // e's row is computed inside the sum's loops, with the sum's index as its column: in the loop
  // of its partial accumulators and in the loop of the rest of the range.
  EXPECT_TRUE(has(c, "// e[i, j] = exp(x[i, j]), computed in the loop of:\n")) << c;
  EXPECT_TRUE(has(c,
                  "              const int64_t k = sb_k0 + sb_q;\n"
                  "              const int64_t sb_col = k;\n"
                  "              {\n"
                  "                [[maybe_unused]] const int64_t i = sb_row;\n"
                  "                const int64_t j = sb_col;\n"
                  "                sb_row_e[j] = sb_vec_expf(x[i * N + j]);\n"
                  "              }\n"
                  "              sb_part0[sb_q] += sb_row_e[k] * x[i * N + k];\n"))
      << c;
  EXPECT_TRUE(has(c,
                  "for (int64_t k = sb_k0; k < sb_h0; ++k) {\n"
                  "          const int64_t sb_col = k;\n"
                  "          {\n"
                  "            [[maybe_unused]] const int64_t i = sb_row;\n"
                  "            const int64_t j = sb_col;\n"
                  "            sb_row_e[j] = sb_vec_expf(x[i * N + j]);\n"
                  "          }\n"
                  "          sb_acc0 += sb_row_e[k] * x[i * N + k];\n"))
      << c;
  // With approx_math only, the division by the row's value becomes a multiplication.
  EXPECT_TRUE(has(c, "sb_line[sb_q] = sb_row_e[j] / (sb_row_s[0] + 1.0f);")) << c;
  EXPECT_TRUE(has(c, "const float sb_rcp0 = 1.0f / (sb_row_s[0] + 1.0f);")) << c;
  EXPECT_TRUE(has(c, "sb_line[sb_q] = (sb_row_e[j] * sb_rcp0);")) << c;
  EXPECT_EQ(c.find("sb_rcp0 ="), c.rfind("sb_rcp0 ="));

  // A sum that reads e at another column than its own iteration's stays a loop of its own.
  const std::string o = emit_compute(
      "  e[i, j] = exp(x[i, j])\n  s[i] = sum(k in 0..N: e[i, N - 1 - k])\n"
      "  y[i, j] = e[i, j] / s[i]\n");
  EXPECT_FALSE(has(o, "computed in the loop of")) << o;
  EXPECT_TRUE(has(o, "{  // s[i] = sum(k in 0..N: e[i, N - 1 - k])")) << o;
}

TEST(EmitVendorCpu, CblasCalls) {
  const Spec s = load(kMats, kGemmCompute, "  vendor_cpu:\n    - {name: ob, strategy: blas}\n");
  const std::string c = emit("vendor_cpu", s);
  EXPECT_TRUE(has(c, "#include <cblas.h>"));
  EXPECT_TRUE(has(c,
                  "cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)sb_m, (int)sb_n, "
                  "(int)sb_k, 1.0f, a,"))
      << c;
  EXPECT_TRUE(has(c, "(int)K, b, (int)N, 0.0f, c, (int)sb_n);"));
  EXPECT_TRUE(has(c, "cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans,")) << c;
  EXPECT_TRUE(has(c, "at + 1 * M, (int)M, bt + 1, (int)K")) << c;
  EXPECT_TRUE(has(c, "const int64_t sb_k = K - 1;"));
  EXPECT_TRUE(has(c, "d[i * N + j] = d[i * N + j] + bias[j];"));
  EXPECT_TRUE(has(c, "static void sb_ob_s2("));  // the row sum, as omp_simd
}

TEST(EmitVendorCuda, CublasRowMajorTrick) {
  const Spec s = load(
      "  a: {type: f64, shape: [M, K], role: in}\n  bt: {type: f64, shape: [N, K], role: in}\n"
      "  bias: {type: f64, shape: [N], role: in}\n  c: {type: f64, shape: [M, N], role: out}\n",
      "  c[i, j] = sum(k in 0..K: a[i, k] * bt[j, k]) + bias[j]\n",
      "  vendor_cuda:\n    - {name: cb, strategy: cublas}\n");
  const std::string c = emit("vendor_cuda", s);
  EXPECT_TRUE(has(c, "#include <cublas_v2.h>"));
  EXPECT_FALSE(has(c, "#include <cub/"));
  // Column-major c^T = bt * a^T: bt transposed back (op T), a as stored (op N), n and m swapped.
  EXPECT_TRUE(has(c, "cublasDgemm(sb_cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)sb_n, (int)sb_m,"))
      << c;
  EXPECT_TRUE(has(c, "&sb_one, bt, (int)K, a, (int)K, &sb_zero, c,")) << c;
  EXPECT_TRUE(has(c, "SB_CUBLAS_CHECK(cublasSetStream(sb_cublas, sb_stream));"));
  EXPECT_TRUE(has(c, "c[i * N + j] = c[i * N + j] + bias[j];"));
  EXPECT_TRUE(has(c, "sb_cb_s0_rest<<<sb_grid, 256, 0, sb_stream>>>(bias, c, M, N);")) << c;
}

TEST(EmitVendorCuda, CubReduceAndScan) {
  const Spec r =
      load("  x: {type: f32, shape: [N], role: in}\n  d: {type: f32, shape: [], role: out}\n",
           "  d = sqrt(max(i in 0..N: x[i] * x[i]))\n",
           "  vendor_cuda:\n    - {name: cub, strategy: cub_reduce}\n");
  const std::string c = emit("vendor_cuda", r);
  EXPECT_TRUE(has(c, "#include <cub/device/device_reduce.cuh>"));
  EXPECT_TRUE(has(c, "struct sb_op_max_f32 {"));
  EXPECT_TRUE(has(c, "return sb_max_f32(a, b);"));
  EXPECT_TRUE(has(c, "return x[i] * x[i];"));
  EXPECT_TRUE(has(c, "cub::DeviceReduce::TransformReduce("));
  EXPECT_TRUE(has(c,
                  "sb_tmp, sb_tmp_bytes, sb_index, d, sb_count, sb_op_max_f32(), sb_term, "
                  "-INFINITY,"))
      << c;
  EXPECT_TRUE(has(c, "cudaMallocAsync(&sb_tmp, sb_tmp_bytes, sb_stream)"));
  EXPECT_TRUE(has(c, "cudaFreeAsync(sb_tmp, sb_stream)"));
  EXPECT_TRUE(has(c, "d[0] = sqrtf(d[0]);")) << c;
  EXPECT_FALSE(has(c, "(void)x;"));  // captured by the term functor, so used

  const Spec sc = load(
      "  x: {type: f64, shape: [N], role: in}\n  y: {type: f64, shape: [N], role: out}\n"
      "  z: {type: f64, shape: [N], role: out}\n",
      "  y[i] = sum(k in 0..i + 1: x[k])\n  z[i] = min(k in 0..i: 2 * x[k])\n",
      "  vendor_cuda:\n    - {name: scan, strategy: cub_scan}\n");
  const std::string t = emit("vendor_cuda", sc);
  EXPECT_TRUE(has(t, "#include <cub/device/device_scan.cuh>"));
  EXPECT_TRUE(has(t, "cub::DeviceScan::InclusiveScan("));
  EXPECT_TRUE(has(t, "sb_tmp, sb_tmp_bytes, sb_in, y, sb_op_sum_f64(), sb_count, sb_stream));"))
      << t;
  EXPECT_TRUE(has(t, "cub::DeviceScan::ExclusiveScan("));
  EXPECT_TRUE(has(t,
                  "sb_tmp, sb_tmp_bytes, sb_in, z, sb_op_min_f64(), INFINITY, sb_count, "
                  "sb_stream));"))
      << t;
  EXPECT_TRUE(has(t, "return 2.0 * x[k];"));
}

// A rank-1 running scan (lower/running_scans.h): every host printer walks it once under its
// sequential strategy, and under its parallel one chooses at run time between that walk and the
// two parallel passes over kScanBlocks blocks (from kScanSplitMin outputs on; cpu chains its
// blocks instead where the scan streams, EmitCpuOmpSimd.LongScansStreamTheirVectorBlocks).
TEST(EmitScans, ParallelStrategiesSplitLongRankOneScans) {
  const Spec s = load(
      "  x: {type: f32, shape: [N], role: in}\n"
      "  v: {type: f32, shape: [N], role: out}\n",
      "  v[i] = max(k in 0..i + 1: x[k])\n",
      "  cpu:\n    - {name: loops, strategy: loops}\n"
      "    - {name: omp_simd, strategy: omp_simd}\n"
      "  mojo:\n    - {name: loops, strategy: loops}\n"
      "    - {name: vectorize_parallel, strategy: vectorize_parallel}\n"
      "  mlir:\n    - {name: loops, strategy: loops}\n"
      "    - {name: openmp, strategy: openmp}\n");
  const std::string split = std::to_string(kScanSplitMin);
  const std::string blocks = std::to_string(kScanBlocks);
  const std::string cpu = emit("cpu", s);
  EXPECT_TRUE(has(cpu, "if (N >= " + split + ") {")) << cpu;
  EXPECT_TRUE(has(cpu, "const int64_t sb_nb = " + blocks + ";")) << cpu;
  EXPECT_TRUE(has(cpu, "for (int64_t sb_b = 0; sb_b < sb_nb; ++sb_b) {")) << cpu;
  const size_t loops = cpu.find("static void sb_loops_s0"),
               omp = cpu.find("static void sb_omp_simd_s0");
  ASSERT_NE(loops, std::string::npos);
  ASSERT_NE(omp, std::string::npos);
  EXPECT_EQ(cpu.substr(loops, omp - loops).find("sb_part"), std::string::npos);  // loops: one walk
  EXPECT_TRUE(has(cpu.substr(loops, omp - loops), "for (; k < i + 1; ++k) {")) << cpu;
  const std::string mojo = emit("mojo", s);
  EXPECT_TRUE(has(mojo, "if N >= " + split + ":")) << mojo;
  // The same two passes (lower/host_bodies.h), the second a closure of its own.
  EXPECT_TRUE(has(mojo, "var sb_nb = " + blocks)) << mojo;
  EXPECT_TRUE(has(mojo, "parallelize(sb_par_sb_b, sb_nb)")) << mojo;
  EXPECT_TRUE(has(mojo, "parallelize(sb_par_sb_b_2, sb_nb)")) << mojo;
  const std::string mlir = emit("mlir", s);
  EXPECT_TRUE(has(mlir, "arith.constant " + split + " : index")) << mlir;
  EXPECT_TRUE(has(mlir, "memref<" + blocks + "xf32>")) << mlir;
  // Only the openmp variant splits: one pair of block buffers in the file.
  const std::string buffer = "memref.alloca() : memref<" + blocks + "xindex>";
  ASSERT_NE(mlir.find(buffer), std::string::npos) << mlir;
  EXPECT_EQ(mlir.find(buffer), mlir.rfind(buffer)) << mlir;
}

}  // namespace
}  // namespace sb
