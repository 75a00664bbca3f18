// Unit tests of the mojo emitter: the ABI it declares, which loops `vectorize_parallel`
// vectorises (by shape, never by kernel name), how it treats boundary reads, C integer semantics
// and names that clash with Mojo's. Whether the emitted code compiles and computes the right
// values is checked by the `mojo` CTest label (tests/mojo/), where Mojo is installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "driver.h"
#include "backends/emitter.h"

namespace sb {
namespace {

namespace fs = std::filesystem;

// Writes a spec with both mojo strategies (unless `variants` is given) and loads it.
Result<Spec> load(const std::string& name, const std::string& sizes, const std::string& tensors,
                  const std::string& compute,
                  const std::string& variants =
                      "  mojo:\n"
                      "    - {name: loops, strategy: loops}\n"
                      "    - {name: vp, strategy: vectorize_parallel}\n") {
  const fs::path dir =
      fs::temp_directory_path() / ("sb_emit_mojo_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / (name + ".yaml");
  std::ofstream(path) << "name: " << name << "\ndoc: test\nsizes:\n"
                      << sizes << "tensors:\n"
                      << tensors << "compute: |\n"
                      << compute << "variants:\n"
                      << variants;
  return load_and_check(path.string());
}

std::string emit(const Spec& spec) {
  const Emitter* em = find_emitter("mojo");
  EXPECT_NE(em, nullptr);
  return em ? em->emit(spec).content : "";
}

// The text of the vectorize_parallel kernels (from its variant comment to the launchers).
std::string vp_kernels(const std::string& file) {
  const size_t b = file.find("# Variant vp:");
  const size_t e = file.find("# Launchers");
  EXPECT_NE(b, std::string::npos);
  EXPECT_NE(e, std::string::npos);
  return b == std::string::npos || e == std::string::npos ? "" : file.substr(b, e - b);
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

const char* const kN = "  N: {bench: [64], verify: [1, 7]}\n";
const char* const kRC = "  R: {bench: [64], verify: [1, 7]}\n  C: {bench: [64], verify: [3, 9]}\n";

TEST(EmitMojo, RegisteredWithItsStrategies) {
  const Emitter* em = find_emitter("mojo");
  ASSERT_NE(em, nullptr);
  EXPECT_EQ(em->extension(), "mojo");
  EXPECT_NE(find_strategy(*em, "loops"), nullptr);
  EXPECT_NE(find_strategy(*em, "vectorize_parallel"), nullptr);
  // blocked_matmul with the cpu backend's parameters and defaults, so matched variants block alike.
  const StrategyInfo* b = find_strategy(*em, "blocked_matmul");
  const StrategyInfo* cpu = find_strategy(*find_emitter("cpu"), "blocked_matmul");
  ASSERT_NE(b, nullptr);
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(b->params.size(), cpu->params.size());
  for (size_t i = 0; i < b->params.size(); ++i) {
    EXPECT_EQ(b->params[i].name, cpu->params[i].name);
    EXPECT_EQ(b->params[i].def, cpu->params[i].def);
  }
}

TEST(EmitMojo, BlockedMatmulCallsTheGemmWithTheOperandsStridesThenTheEpilogue) {
  Result<Spec> r = load("gemm",
                        "  M: {bench: [64], verify: [1, 7]}\n  N: {bench: [64], verify: [1, 9]}\n"
                        "  K: {bench: [64], verify: [2, 5]}\n",
                        "  a: {type: f32, shape: [M, K], role: in}\n"
                        "  bt: {type: f32, shape: [N, K], role: in}\n"
                        "  bias: {type: f32, shape: [N], role: in}\n"
                        "  y: {type: f32, shape: [M, N], role: out}\n"
                        "  s: {type: f32, shape: [M], role: out}\n",
                        "  y[i, j] = sum(k in 1..K: a[i, k] * bt[j, k]) + bias[j]\n"
                        "  s[i] = sum(j in 0..N: y[i, j])\n",
                        "  mojo:\n    - {name: bm, strategy: blocked_matmul, kc: 256}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string file = emit(r.value());
  // The GEMM, once per element type, with the micro-kernel's accumulators as named variables.
  EXPECT_TRUE(has(file, "comptime sb_gemm_mr_f32 = 12 if sb_gemm_vl_f32 * 4 >= 64 else 6")) << file;
  EXPECT_TRUE(has(file, "acc11_1 = a11.fma(b1, acc11_1)")) << file;
  EXPECT_FALSE(has(file, "def sb_gemm_f64(")) << file;
  // The contraction: k from 1, bt read transposed (its k stride 1, its j stride K).
  EXPECT_TRUE(has(file, "var sb_k0 = 1  # first k of the sum")) << file;
  EXPECT_TRUE(has(file, "# y = a * bt^T, blocked with mc = 128, kc = 256, nc = 4096.")) << file;
  EXPECT_TRUE(has(file,
                  "_ = sb_gemm_f32(M, N, K - sb_k0, a.unsafe_offset(sb_k0), K, 1, "
                  "bt.unsafe_offset(sb_k0), 1, K, y,"))
      << file;
  // The epilogue reads the sum back from y; the other statement is vectorize_parallel's.
  EXPECT_TRUE(has(file, "y.unsafe_load[width=sb_w](i * N + j) + bias.unsafe_load[width=sb_w](j)"))
      << file;
  EXPECT_TRUE(has(file, "def sb_bm_s1(")) << file;
  EXPECT_TRUE(has(file, "parallelize(sb_par_t, nt)")) << file;
}

TEST(EmitMojo, Im2colGathersItsColumnsInVectors) {
  // A convolution under im2col: the columns' innermost index, contiguous in sb_col and in x,
  // gathered in SIMD vectors (each load checked, then stored whole), then the GEMM.
  Result<Spec> r =
      load("conv",
           "  C: {bench: [8], verify: [1, 3]}\n  O: {bench: [8], verify: [2, 5]}\n"
           "  W: {bench: [64], verify: [1, 9]}\n",
           "  x: {type: f32, shape: [C, W], role: in, boundary: zero}\n"
           "  w: {type: f32, shape: [O, C, 3], role: in}\n"
           "  y: {type: f32, shape: [O, W], role: out}\n",
           "  y[o, j] = sum(c in 0..C: sum(b in 0..3: x[c, j + b - 1] * w[o, c, b]))\n",
           "  mojo:\n    - {name: ic, strategy: im2col}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string file = emit(r.value());
  EXPECT_TRUE(has(file, "def sb_column[sb_w: Int](j: Int) {imm}:")) << file;
  EXPECT_TRUE(has(file, "sb_col.unsafe_store[width=sb_w]((c * 3 + b) * sb_gn + j, sb_ld0_x)"))
      << file;
  EXPECT_TRUE(has(file, "vectorize[sb_w_f32](sb_vr, sb_column)")) << file;
  EXPECT_TRUE(has(file, "parallelize(sb_gather, C)")) << file;
  EXPECT_FALSE(has(file, "sb_col[unsafe_offset=")) << file;
}

TEST(EmitMojo, DeclaresTheCAbiAndExportsTheModuleTable) {
  Result<Spec> r = load("vadd", kN,
                        "  a: {type: f32, shape: [N], role: in}\n"
                        "  b: {type: f32, shape: [N], role: in}\n"
                        "  c: {type: f32, shape: [N], role: out}\n",
                        "  c[i] = a[i] + b[i]\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const GeneratedFile f = find_emitter("mojo")->emit(r.value());
  EXPECT_EQ(f.path, "vadd/mojo/vadd.mojo");
  const std::string& s = f.content;
  EXPECT_EQ(s, emit(r.value())) << "not deterministic";
  EXPECT_EQ(s.rfind("# Generated by specbench from specs/vadd.yaml", 0), 0u);
  EXPECT_TRUE(has(s, "regenerate with `specbench gen specs/vadd.yaml`"));
  EXPECT_TRUE(has(s, "struct SbArgs(TrivialRegisterPassable):"));
  EXPECT_TRUE(has(s, "@export(\"specbench_module\")"));
  EXPECT_TRUE(has(s, "abi_version=1,"));
  EXPECT_TRUE(has(s, "backend=\"mojo\".as_c_string_span(),"));
  EXPECT_TRUE(has(s, "num_tensors=3,"));
  EXPECT_TRUE(has(s, "num_variants=2,"));
  EXPECT_TRUE(has(s, "SbVariant(\"vp\".as_c_string_span(), sb_variant_vp)"));
  EXPECT_TRUE(has(s, "def sb_variant_loops(sb_a: Pointer[SbArgs, ImmUntrackedOrigin]) abi(\"C\")"));
  // Only the parallel launcher initialises the runtime.
  const std::string loops = s.substr(s.find("def sb_variant_loops"), 200);
  EXPECT_FALSE(has(loops, "initialize_runtime()"));
  EXPECT_TRUE(has(s.substr(s.find("def sb_variant_vp")), "initialize_runtime()"));
  // Every section is there; no C left over.
  for (const char* section : {"# The C ABI", "# Kernels", "# Launchers", "# Dispatch"})
    EXPECT_TRUE(has(s, section)) << section;
  EXPECT_FALSE(has(s, "\n//"));
  EXPECT_FALSE(has(s, ";\n"));
}

TEST(EmitMojo, ElementwiseIsParallelAndVectorised) {
  Result<Spec> r = load("vadd", kN,
                        "  a: {type: f32, shape: [N], role: in}\n"
                        "  b: {type: f32, shape: [N], role: in}\n"
                        "  c: {type: f32, shape: [N], role: out}\n",
                        "  c[i] = a[i] + b[i]\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  EXPECT_TRUE(has(k, "parallelize(sb_chunk, sb_chunks)")) << k;
  // Under kMojoSerialIterations loop iterations, one chunk, called on this thread.
  const std::string file = emit(r.value());
  EXPECT_TRUE(has(file, "comptime sb_serial_iterations = get_defined_int[\"SB_SERIAL_ITERATIONS\", "
                        "32768]()"))
      << file;
  EXPECT_TRUE(has(k, "var sb_chunks = 1 if N < sb_serial_iterations else min(sb_n, "
                     "parallelism_level())"))
      << k;
  EXPECT_TRUE(has(k, "    if sb_chunks == 1:\n        sb_chunk(0)\n    else:\n")) << k;
  // Whole vectors by vectorize, then the remainder in narrower ones (vectorize would run it one
  // element at a time): each power of two below the width at most once.
  EXPECT_TRUE(has(k, "var sb_vn = sb_hi - sb_lo\n")) << k;
  EXPECT_TRUE(has(k, "var sb_vr = sb_vn - sb_vn % sb_w_f32\n")) << k;
  EXPECT_TRUE(has(k, "vectorize[sb_w_f32](sb_vr, sb_vec)")) << k;
  for (const char* h : {"32", "16", "8", "4", "2", "1"}) {
    const std::string n(h);
    EXPECT_TRUE(has(k, "if sb_w_f32 > " + n + " and sb_vn - sb_vr >= " + n + ":\n")) << k;
    EXPECT_TRUE(has(k, "sb_vec[" + n + "](sb_vr)\n")) << k;
  }
  EXPECT_TRUE(has(k, "var sb_val = a.unsafe_load[width=sb_w](i) + b.unsafe_load[width=sb_w](i)"))
      << k;
  EXPECT_TRUE(has(k, "c.unsafe_store[width=sb_w](i, sb_val)")) << k;
}

// An output of rank 4 runs its two outer loops as one range of their product in parallel
// chunks, each index recovered from the flat one (the parallelize pass's collapse), so that a
// batch of one still gives every worker planes; each plane's rows stay a loop, and the innermost
// the vector loop.
TEST(EmitMojo, OuterOutputLoopsOfRankFourAreOneFlatParallelRange) {
  Result<Spec> r = load("batch",
                        "  N: {bench: [1], verify: [1, 2]}\n  C: {bench: [3], verify: [3]}\n"
                        "  H: {bench: [5], verify: [5]}\n  W: {bench: [7], verify: [7]}\n",
                        "  x: {type: f32, shape: [N, C, H, W], role: in}\n"
                        "  y: {type: f32, shape: [N, C, H, W], role: out}\n",
                        "  y[n, c, i, j] = x[n, c, i, j] * 2\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  EXPECT_TRUE(has(k, "var sb_n = N * C\n")) << k;
  EXPECT_TRUE(has(k,
                  "        for sb_f in range(sb_lo, sb_hi):\n"
                  "            var n = sb_f // C\n"
                  "            var c = sb_f % C\n"
                  "            for i in range(H):\n"))
      << k;
  EXPECT_FALSE(has(k, "for c in range(")) << k;
  EXPECT_TRUE(has(k, "def sb_vec[sb_w: Int](j: Int)")) << k;
}

TEST(EmitMojo, WindowsAlongTheRowRunFourVectorsPerCall) {
  // A window along the row: each call of the closure computes four native vectors.
  Result<Spec> r = load("win", kN,
                        "  x: {type: f32, shape: [N + 8], role: in}\n"
                        "  w: {type: f32, shape: [8], role: in}\n"
                        "  y: {type: f32, shape: [N], role: out}\n",
                        "  y[i] = sum(k in 0..8: x[i + k] * w[k])\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  EXPECT_TRUE(has(k,
                  "var sb_vg = sb_vn - sb_vn % (4 * sb_w_f32)\n"
                  "        vectorize[4 * sb_w_f32](sb_vg, sb_vec)\n"
                  "        var sb_vr = sb_vn - sb_vn % sb_w_f32\n"
                  "        for sb_v in range(sb_vg, sb_vr, sb_w_f32):\n"
                  "            sb_vec[sb_w_f32](sb_v)\n"))
      << k;
  // A sum down the columns reads another row with each term: one native vector per call.
  Result<Spec> c = load("cols", kN,
                        "  x: {type: f32, shape: [8, N], role: in}\n"
                        "  y: {type: f32, shape: [N], role: out}\n",
                        "  y[j] = sum(i in 0..8: x[i, j])\n");
  ASSERT_TRUE(c.ok()) << format_error(c.error());
  const std::string d = vp_kernels(emit(c.value()));
  EXPECT_TRUE(has(d, "vectorize[sb_w_f32](sb_vr, sb_vec)")) << d;
  EXPECT_FALSE(has(d, "sb_vg")) << d;
}

TEST(EmitMojo, LongScansStreamWholeLines) {
  Result<Spec> r = load("csum", kN,
                        "  x: {type: f32, shape: [N], role: in}\n"
                        "  y: {type: f32, shape: [N], role: out}\n",
                        "  y[i] = sum(j in 0..i + 1: x[j])\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  // In the two-pass form, a vector of 16 outputs that starts a cache line is stored
  // non-temporally when the tensors reach the threshold; each block fences its stores.
  EXPECT_TRUE(has(k, "var sb_stream = 4 * N + 4 * N >= sb_stream_min_bytes")) << k;
  EXPECT_TRUE(has(k, "if sb_stream and Int(y.unsafe_offset(i)) % 64 == 0:")) << k;
  EXPECT_TRUE(has(k, "y.unsafe_store[width=16, alignment=64, non_temporal=True](i, sb_scan)")) << k;
  EXPECT_TRUE(has(k, "y.unsafe_store[width=16](i, sb_scan)")) << k;
  EXPECT_TRUE(has(k, "            if sb_stream:\n                fence()")) << k;
}

TEST(EmitMojo, RowSumsKeepPartialAccumulatorsThenNativeVectors) {
  Result<Spec> r = load("rsum",
                        "  R: {bench: [4], verify: [3]}\n  C: {bench: [300], verify: [200]}\n",
                        "  x: {type: f64, shape: [R, C], role: in}\n"
                        "  s: {type: f64, shape: [R], role: out}\n",
                        "  s[i] = sum(j in 0..C: x[i, j] * 2.0)\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  // Whole blocks of 256 bytes (32 f64) into one SIMD value that wide, then native vectors, then
  // scalars; the two accumulators joined at the end.
  EXPECT_TRUE(has(k, "var sb_acc0p = SIMD[DType.float64, 32](Float64(0.0))")) << k;
  EXPECT_TRUE(has(k, "var sb_endp0 = max(C, 0) // 32 * 32")) << k;
  EXPECT_TRUE(has(k, "for j in range(0, sb_endp0, 32):")) << k;
  EXPECT_TRUE(has(k, "x.unsafe_load[width=32](i * C + j)")) << k;
  EXPECT_TRUE(has(k, "var sb_end0 = sb_endp0 + max(C - sb_endp0, 0) // sb_w_f64 * sb_w_f64")) << k;
  EXPECT_TRUE(has(k, "var sb_acc0 = sb_acc0p.reduce_add() + sb_acc0v.reduce_add()")) << k;
}

TEST(EmitMojo, RowGroupsPrefetchTheNextRowWhereTheyReadItLast) {
  // A softmax: exp is x's last reader; its vector closure prefetches the next row's lines of x
  // (one per 16 f32 of a vector) when the group streams. The max pass prefetches nothing.
  Result<Spec> r = load("sm", kRC,
                        "  x: {type: f32, shape: [R, C], role: in}\n"
                        "  m: {type: f32, shape: [R], role: temp}\n"
                        "  e: {type: f32, shape: [R, C], role: temp}\n"
                        "  t: {type: f32, shape: [R], role: temp}\n"
                        "  y: {type: f32, shape: [R, C], role: out}\n",
                        "  m[r] = max(c in 0..C: x[r, c])\n  e[r, c] = exp(x[r, c] - m[r])\n"
                        "  t[r] = sum(c in 0..C: e[r, c])\n  y[r, c] = e[r, c] / t[r]\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  // One closure per statement of the row: sb_row1 is exp, sb_row2 the sum.
  const size_t exp_row = k.find("def sb_row1(");
  const size_t sum_row = k.find("def sb_row2(");
  ASSERT_NE(exp_row, std::string::npos) << k;
  ASSERT_NE(sum_row, std::string::npos) << k;
  const std::string e = k.substr(exp_row, sum_row - exp_row);
  EXPECT_TRUE(has(e, "var sb_next_row = min(r + 1, R - 1)")) << e;
  EXPECT_TRUE(has(e, "if sb_stream:  # the next row, for its first pass")) << e;
  EXPECT_TRUE(has(e, "for sb_p in range(0, sb_w, 16):")) << e;
  EXPECT_TRUE(has(e, "x.unsafe_offset(sb_next_row * C + (c + sb_p))")) << e;
  EXPECT_FALSE(has(k.substr(0, exp_row), "sb_next_row")) << k;
  EXPECT_FALSE(has(k.substr(sum_row), "sb_next_row")) << k;
}

TEST(EmitMojo, LargeElementwiseOutputsStreamWholeAlignedLines) {
  Result<Spec> r = load("vadd", kN,
                        "  a: {type: f32, shape: [N], role: in}\n"
                        "  b: {type: f64, shape: [N], role: in}\n"
                        "  c: {type: f64, shape: [N], role: out}\n",
                        "  c[i] = f64(a[i]) + b[i]\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string file = emit(r.value());
  const std::string k = vp_kernels(file);
  // The same run-time choice as the cpu backend: the bytes of the tensors touched.
  EXPECT_TRUE(has(file,
                  "comptime sb_stream_min_bytes = get_defined_int[\"SB_STREAM_MIN_BYTES\", "
                  "50331648]()"))
      << file;
  EXPECT_TRUE(has(k, "var sb_stream = 4 * N + 8 * N + 8 * N >= sb_stream_min_bytes")) << k;
  EXPECT_TRUE(has(k, "if sb_stream:")) << k;
  // Plain stores up to the first 64-byte boundary of the chunk, then whole lines of 8 f64.
  EXPECT_TRUE(has(k, "var sb_first = Int(c.unsafe_offset(sb_lo))")) << k;
  EXPECT_TRUE(has(k, "var sb_head = min((64 - sb_first % 64) % 64 // 8, sb_hi - sb_lo)")) << k;
  EXPECT_TRUE(has(k, "var sb_lines_end = sb_head + (sb_hi - sb_lo - sb_head) // 8 * 8")) << k;
  EXPECT_TRUE(has(k, "c.unsafe_store[width=8, alignment=64, non_temporal=True](i, sb_val)")) << k;
  EXPECT_TRUE(has(k, "for i in range(sb_lo + sb_head, sb_lo + sb_lines_end, 8):")) << k;
  EXPECT_TRUE(has(k, "for i in range(sb_lo + sb_lines_end, sb_hi):")) << k;
  EXPECT_TRUE(has(k, "fence()")) << k;
  // Otherwise the plain vectorised loop.
  EXPECT_TRUE(has(k, "var sb_vn = sb_hi - sb_lo\n")) << k;
  EXPECT_TRUE(has(k, "vectorize[sb_w_f64](sb_vr, sb_vec)")) << k;
  // The loops variant never streams.
  const size_t loops = file.find("# Variant loops:");
  ASSERT_NE(loops, std::string::npos);
  EXPECT_FALSE(has(file.substr(loops, file.find("# Variant vp:") - loops), "sb_stream")) << file;

  // Reductions write no large output: no streaming code at all.
  Result<Spec> red = load("rmax", kRC,
                          "  x: {type: f32, shape: [R, C], role: in}\n"
                          "  m: {type: f32, shape: [R], role: out}\n",
                          "  m[r] = max(c in 0..C: x[r, c])\n");
  ASSERT_TRUE(red.ok()) << format_error(red.error());
  EXPECT_FALSE(has(emit(red.value()), "sb_stream")) << emit(red.value());
}

TEST(EmitMojo, MatmulVectorisesOverColumnsWithSimdAccumulators) {
  Result<Spec> r = load("mm",
                        "  M: {bench: [8], verify: [3]}\n  N: {bench: [8], verify: [5]}\n"
                        "  K: {bench: [8], verify: [7]}\n",
                        "  a: {type: f32, shape: [M, K], role: in}\n"
                        "  b: {type: f32, shape: [K, N], role: in}\n"
                        "  c: {type: f32, shape: [M, N], role: out}\n",
                        "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  EXPECT_TRUE(has(k, "for i in range(sb_lo, sb_hi):")) << k;
  EXPECT_TRUE(has(k, "def sb_vec[sb_w: Int](j: Int) {imm}:")) << k;
  EXPECT_TRUE(has(k, "var sb_acc0 = SIMD[DType.float32, sb_w](Float32(0.0))")) << k;
  EXPECT_TRUE(has(k, "b.unsafe_load[width=sb_w](k * N + j)")) << k;
  EXPECT_TRUE(has(k, "var sb_vn = N\n")) << k;
  EXPECT_TRUE(has(k, "vectorize[sb_w_f32](sb_vr, sb_vec)")) << k;
}

TEST(EmitMojo, ReadsTwoElementsApartLoadTwoVectorsAndDeinterleave) {
  // A stride-2 window (a 2 x 2 max pool): vectorised over the outputs, each read one load of
  // twice the lanes and its even (or odd) lanes, through the helper.
  Result<Spec> r = load("pool", kN,
                        "  x: {type: f32, shape: [2 * N + 1], role: in}\n"
                        "  y: {type: f32, shape: [N], role: out}\n",
                        "  y[i] = max(b in 0..2: x[2 * i + b])\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string file = emit(r.value());
  const std::string k = vp_kernels(file);
  EXPECT_TRUE(has(k, "def sb_vec[sb_w: Int](sb_k: Int) {imm}:")) << k;
  EXPECT_TRUE(has(k, "sb_load_step2[DType.float32, sb_w](x, 2 * i + b, (2 * N + 1))")) << k;
  EXPECT_TRUE(has(file, "def sb_load_step2[dt: DType, w: Int](")) << file;
  EXPECT_TRUE(has(file, ".deinterleave()[0]")) << file;
  EXPECT_TRUE(has(file, ".deinterleave()[1]")) << file;
  // Three apart: no SIMD form here, so the outputs stay scalar.
  Result<Spec> r3 = load("pool3", kN,
                         "  x: {type: f32, shape: [3 * N + 1], role: in}\n"
                         "  y: {type: f32, shape: [N], role: out}\n",
                         "  y[i] = max(b in 0..2: x[3 * i + b])\n");
  ASSERT_TRUE(r3.ok()) << format_error(r3.error());
  const std::string f3 = emit(r3.value());
  EXPECT_FALSE(has(vp_kernels(f3), "def sb_vec[")) << f3;
  EXPECT_FALSE(has(f3, "sb_load_step2")) << f3;
}

TEST(EmitMojo, TransposedReadsMoveInBlocksTransposedInRegisters) {
  // The tile_transposes pass's blocks (lower/tile_transposes.h): each block of x through the
  // helper into the chunk's buffer, every read of the same element from it.
  Result<Spec> r = load("tb", kRC,
                        "  x: {type: i32, shape: [R, C], role: in}\n"
                        "  y: {type: i32, shape: [C, R], role: out}\n",
                        "  y[j, i] = x[i, j] * x[i, j] + 1\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string file = emit(r.value());
  const std::string k = vp_kernels(file);
  EXPECT_TRUE(has(file, "from std.memory import Layout, alloc, stack_allocation\n")) << file;
  EXPECT_TRUE(has(file, "def sb_transpose_8x16[dt: DType](")) << file;
  EXPECT_TRUE(has(k, "var sb_tb = stack_allocation[128, Int32, alignment=64]()")) << k;
  EXPECT_TRUE(has(k, "sb_transpose_8x16[DType.int32](x.unsafe_offset(i * C + j), C, sb_tb)")) << k;
  EXPECT_TRUE(has(k,
                  "y[unsafe_offset=j * R + i] = sb_tb[unsafe_offset=sb_p * 16 + sb_q] * "
                  "sb_tb[unsafe_offset=sb_p * 16 + sb_q] + Int32(1)"))
      << k;
  // The ends of a block's rows and the rows after the last block read x itself.
  EXPECT_TRUE(has(k, "for i in range(sb_e, sb_te1):")) << k;
  EXPECT_TRUE(has(k, "for j in range(sb_b, sb_te0):")) << k;
  // f64 elements keep the plain tiles.
  Result<Spec> d = load("td", kRC,
                        "  x: {type: f64, shape: [R, C], role: in}\n"
                        "  y: {type: f64, shape: [C, R], role: out}\n",
                        "  y[j, i] = x[i, j]\n");
  ASSERT_TRUE(d.ok()) << format_error(d.error());
  const std::string f = emit(d.value());
  EXPECT_TRUE(has(vp_kernels(f), "for sb_t1 in range(0, R, 16):")) << f;
  EXPECT_FALSE(has(f, "sb_transpose_8x16")) << f;
  EXPECT_FALSE(has(f, "stack_allocation")) << f;
}

TEST(EmitMojo, TheIndexAsAValueIsAnIotaVector) {
  // The last index of a row's maximum: the index as a value vectorises as consecutive integers,
  // and the comparison and the select as SIMD masks.
  Result<Spec> r = load("last", kRC,
                        "  x: {type: f32, shape: [R, C], role: in}\n"
                        "  m: {type: f32, shape: [R], role: in}\n"
                        "  y: {type: i64, shape: [R], role: out}\n",
                        "  y[r] = max(c in 0..C: select(x[r, c] == m[r], i64(c), i64(0)))\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string file = emit(r.value());
  const std::string k = vp_kernels(file);
  EXPECT_TRUE(has(file, "from std.math import iota")) << file;
  EXPECT_TRUE(has(k, "iota[DType.int, sb_w_i64](c).cast[DType.int64]()")) << k;
  EXPECT_TRUE(has(k, ".eq(m[unsafe_offset=r]).select(")) << k;
  // A uniform Bool splats by name (it is not a Scalar).
  Result<Spec> b = load("mask", kRC,
                        "  x: {type: f32, shape: [R, C], role: in}\n"
                        "  y: {type: f32, shape: [R], role: out}\n",
                        "  y[r] = max(c in 0..C: select(r == 0 && c == 0, 0.0, x[r, c]))\n");
  ASSERT_TRUE(b.ok()) << format_error(b.error());
  const std::string kb = vp_kernels(emit(b.value()));
  EXPECT_TRUE(has(kb, "SIMD[DType.bool, sb_w_f32](fill=r == 0)")) << kb;
}

TEST(EmitMojo, SearchesStopAtTheFirstBlockWhereTheyHold) {
  // The first index of a row's maximum (argmax's second pass, lower/patterns.h: FirstIndex):
  // blocks of kSearchTerms conditions ORed in native vectors of the compared type, up to the
  // first block where one holds, whose terms are then tested one at a time; the rest of the range
  // term by term; the index found, or the default when the range holds terms.
  Result<Spec> r = load("first", kRC,
                        "  x: {type: f32, shape: [R, C], role: in}\n"
                        "  m: {type: f32, shape: [R], role: in}\n"
                        "  y: {type: i64, shape: [R], role: out}\n",
                        "  y[r] = min(c in 0..C: select(x[r, c] == m[r], i64(c), i64(C - 1)))\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  EXPECT_TRUE(has(k,
                  "for sb_b0 in range(0, sb_endp0, 128):\n"
                  "                var sb_m0 = SIMD[DType.bool, sb_w_f32](fill=False)\n"
                  "                for c in range(sb_b0, sb_b0 + 128, sb_w_f32):\n"
                  "                    sb_m0 |= x.unsafe_load[width=sb_w_f32](r * C + c)"
                  ".eq(m[unsafe_offset=r])\n"
                  "                if sb_m0.reduce_or():\n"
                  "                    for c in range(sb_b0, sb_b0 + 128):"))
      << k;
  EXPECT_TRUE(has(k, "if sb_at0 == C:\n                for c in range(sb_endp0, C):")) << k;
  EXPECT_TRUE(
      has(k,
          "if sb_at0 < C:\n                sb_acc0 = sb_min(sb_acc0, Int64(sb_at0))\n"
          "            elif 0 < C:\n                sb_acc0 = sb_min(sb_acc0, Int64(C - 1))"))
      << k;
  EXPECT_FALSE(has(k, "iota")) << k;
}

TEST(EmitMojo, GathersVectoriseLaneByLane) {
  // A gathered read (cross_entropy's probs[r, targets[r]]): the lanes' elements read one by one
  // into a vector, each at index r + l, so that the rest of the statement (the log) runs on
  // vectors; an affine read across rows (a transpose) is not vectorised so.
  Result<Spec> r = load("pick", kRC,
                        "  p: {type: f32, shape: [R, C], role: in}\n"
                        "  t: {type: i32, shape: [R], role: in, init: [0, C - 1]}\n"
                        "  y: {type: f32, shape: [R], role: out}\n",
                        "  y[r] = -log(p[r, t[r]])\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  EXPECT_TRUE(has(k, "var sb_ld1_p = SIMD[DType.float32, sb_w]()\n")) << k;
  EXPECT_TRUE(has(k, "for sb_l in range(sb_w):\n")) << k;
  EXPECT_TRUE(has(k, "sb_ld1_p[sb_l] = p[unsafe_offset=(r + sb_l) * C + Int(t[unsafe_offset=(r + sb_l)])]"))
      << k;
  EXPECT_TRUE(has(k, "-log(sb_ld1_p)")) << k;
  // The streamed lines gather alike, 16 lanes at a time.
  EXPECT_TRUE(has(k, "for sb_l in range(16):\n")) << k;
  Result<Spec> tr = load("tr", kRC,
                         "  x: {type: f32, shape: [C, R], role: in}\n"
                         "  y: {type: f32, shape: [R, C], role: out}\n",
                         "  y[i, j] = x[j, i]\n");
  ASSERT_TRUE(tr.ok()) << format_error(tr.error());
  EXPECT_FALSE(has(vp_kernels(emit(tr.value())), "for sb_l in range(sb_w)")) << emit(tr.value());
}

TEST(EmitMojo, RowReductionsAreStripMined) {
  Result<Spec> r = load("rmax", kRC,
                        "  x: {type: f32, shape: [R, C], role: in}\n"
                        "  m: {type: f32, shape: [R], role: out}\n",
                        "  m[r] = max(c in 0..C: x[r, c])\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  EXPECT_FALSE(has(k, "vectorize[")) << k;  // the row loop is not contiguous
  // The iterations count the reduction's range too.
  EXPECT_TRUE(has(k, "var sb_chunks = 1 if R * C < sb_serial_iterations")) << k;
  EXPECT_TRUE(has(k, "var sb_acc0v = SIMD[DType.float32, sb_w_f32](-inf[DType.float32]())")) << k;
  EXPECT_TRUE(has(k, "for c in range(sb_endp0, sb_end0, sb_w_f32):")) << k;
  EXPECT_TRUE(has(k, "sb_acc0v = sb_max(sb_acc0v, x.unsafe_load[width=sb_w_f32](r * C + c))")) << k;
  // The partial accumulators' block (64 f32) before it, both joined by the NaN-propagating max.
  EXPECT_TRUE(has(k, "sb_acc0p = sb_max(sb_acc0p, x.unsafe_load[width=64](r * C + c))")) << k;
  EXPECT_TRUE(has(k, "sb_acc0 = sb_max(sb_acc0, sb_acc0p[sb_l])")) << k;
  EXPECT_TRUE(has(k, "sb_acc0 = sb_max(sb_acc0, sb_acc0v[sb_l])")) << k;
  EXPECT_TRUE(has(k, "for c in range(sb_end0, C):")) << k;  // the scalar remainder
}

TEST(EmitMojo, RowGroupRunsInOneLoopOverRowsWithItsTempsAsOneRow) {
  // The same row groups (codegen/lower/row_fusion.h) as the cpu omp_simd and mlir openmp variants.
  Result<Spec> r = load("rows", kRC,
                        "  x: {type: f32, shape: [R, C], role: in}\n"
                        "  m: {type: f32, shape: [R], role: temp}\n"
                        "  e: {type: f32, shape: [R, C], role: temp}\n"
                        "  y: {type: f32, shape: [R, C], role: out}\n",
                        "  m[r] = max(c in 0..C: x[r, c])\n"
                        "  e[r, c] = x[r, c] - m[r]\n"
                        "  y[r, c] = e[r, c] * 2.0\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string file = emit(r.value());
  const std::string k = vp_kernels(file);
  EXPECT_TRUE(has(k,
                  "# Statements 0 to 2 in one parallel loop over rows (m, e kept as one row "
                  "per chunk):"))
      << k;
  EXPECT_TRUE(has(k, "def sb_vp_s0_2(x: Pointer[Float32, ImmUntrackedOrigin],")) << k;
  EXPECT_FALSE(has(k, "def sb_vp_s1(")) << k;
  // The temps are neither parameters nor written to memory outside the chunk's row buffers.
  EXPECT_FALSE(has(k, "e: Pointer")) << k;
  EXPECT_FALSE(has(k, "m: Pointer")) << k;
  EXPECT_TRUE(has(k, "var sb_buf_e = alloc(Layout[Float32](count=C))")) << k;
  EXPECT_TRUE(has(k, "sb_row_m[unsafe_offset=0] = sb_acc0")) << k;
  EXPECT_TRUE(has(k, "sb_row_e.unsafe_store[width=sb_w](c, ")) << k;
  EXPECT_TRUE(has(k, "sb_row_e.unsafe_load[width=sb_w](c) * Float32(2.0)")) << k;
  EXPECT_TRUE(has(k, "x.unsafe_load[width=sb_w](r * C + c) - sb_row_m[unsafe_offset=0]")) << k;
  // Each row runs the three statements in order.
  const size_t loop = k.find("for sb_row in range(sb_lo, sb_hi):");
  ASSERT_NE(loop, std::string::npos) << k;
  const size_t s0 = k.find("sb_row0(sb_row)", loop), s1 = k.find("sb_row1(sb_row)", loop),
               s2 = k.find("sb_row2(sb_row)", loop);
  EXPECT_TRUE(s0 != std::string::npos && s0 < s1 && s1 < s2 && s2 != std::string::npos) << k;
  EXPECT_TRUE(has(k, "dealloc(sb_buf_e^)")) << k;
  // Only y, in memory, may stream; the row buffers never do.
  EXPECT_TRUE(
      has(k, "y.unsafe_store[width=16, alignment=64, non_temporal=True](r * C + c, sb_val)"))
      << k;
  EXPECT_TRUE(has(k, "var sb_first = Int(y.unsafe_offset(r * C))")) << k;
  EXPECT_FALSE(has(k, "sb_row_e.unsafe_store[width=16")) << k;
  // The loops variant keeps one function per statement.
  EXPECT_TRUE(has(file, "def sb_loops_s1(")) << file;
}

TEST(EmitMojo, ScalarOutputReducesInParallelChunks) {
  Result<Spec> r = load("dot", kN,
                        "  x: {type: f32, shape: [N], role: in}\n"
                        "  y: {type: f32, shape: [N], role: in}\n"
                        "  d: {type: f32, shape: [], role: out}\n",
                        "  d = sum(i in 0..N: x[i] * y[i])\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string k = vp_kernels(emit(r.value()));
  EXPECT_TRUE(has(k, "var sb_chunks0 = max(min(sb_n0, parallelism_level()), 1)")) << k;
  EXPECT_TRUE(has(k, "parallelize(sb_chunk0, sb_chunks0)")) << k;
  EXPECT_TRUE(has(k, "x.unsafe_load[width=sb_w_f32](i) * y.unsafe_load[width=sb_w_f32](i)")) << k;
  EXPECT_TRUE(has(k, "dealloc(sb_part0^)")) << k;
  EXPECT_TRUE(has(k, "d[] = sb_acc")) << k;
}

TEST(EmitMojo, ZeroBoundaryReadsAreGuarded) {
  Result<Spec> r =
      load("conv", "  N: {bench: [64], verify: [1, 7]}\n  K: {bench: [3], verify: [3]}\n",
           "  x: {type: f32, shape: [N], role: in, boundary: zero}\n"
           "  w: {type: f32, shape: [K], role: in}\n"
           "  y: {type: f32, shape: [N], role: out}\n",
           "  y[i] = sum(k in 0..K: x[i + k - K / 2] * w[k])\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string s = emit(r.value());
  // Scalar: a guarded load. Sizes are positive, so K / 2 is a plain floor division.
  EXPECT_TRUE(has(s, "var sb_ld0_x_i0 = i + k - K // 2")) << s;
  EXPECT_TRUE(has(s, "x[unsafe_offset=sb_ld0_x_i0]\n")) << s;
  EXPECT_TRUE(has(s, "if sb_ld0_x_i0 >= 0 and sb_ld0_x_i0 < N\n")) << s;
  EXPECT_TRUE(has(s, "else Float32(0.0)\n")) << s;
  // Vector: one load when every lane is inside, else lane by lane.
  const std::string k = vp_kernels(s);
  EXPECT_TRUE(has(k, "if sb_ld0_x_i0 >= 0 and sb_ld0_x_i0 + sb_w <= N:")) << k;
  EXPECT_TRUE(has(k, "sb_ld0_x[sb_l] = x[unsafe_offset=sb_ld0_x_i0 + sb_l]")) << k;
}

TEST(EmitMojo, RowsWithExactEdgesSetThemApartAndRunTheMiddleUnchecked) {
  // A 3 x 3 window under a zero rule, its reach along the row exactly 1 (lower/vectorize.h:
  // exact_tap_edge): where the rows above and below are inside (the checks that do not vary
  // along the row, at the corners of a), the row's first and last output run the checked vector
  // loop one at a time and the middle a copy without checks (sb_vec_in); elsewhere the whole row
  // runs the checked loop.
  Result<Spec> r = load("win", kRC,
                        "  x: {type: f32, shape: [R, C], role: in, boundary: zero}\n"
                        "  y: {type: f32, shape: [R, C], role: out}\n",
                        "  y[i, j] = sum(a in 0..3: sum(b in 0..3: x[i + a - 1, j + b - 1]))\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  // The kernels' lines without their indentation.
  auto unindented = [](const std::string& text) {
    std::string out;
    bool start = true;
    for (char ch : text) {
      if (start && ch == ' ') continue;
      out += ch;
      start = ch == '\n';
    }
    return out;
  };
  const std::string k = unindented(vp_kernels(emit(r.value())));
  EXPECT_TRUE(has(k, "def sb_vec_in[sb_w: Int](j: Int) {imm}:")) << k;
  EXPECT_TRUE(has(k, "x.unsafe_load[width=sb_w]((i + a - 1) * C + (j + b - 1))")) << k;
  EXPECT_TRUE(has(k,
                  "if i + 0 - 1 >= 0 and i + 0 - 1 < R and i + (3 - 1) - 1 >= 0 and "
                  "i + (3 - 1) - 1 < R:\n"))
      << k;
  EXPECT_TRUE(has(k, "var sb_p = min(1, C)\n")) << k;
  EXPECT_TRUE(has(k, "var sb_t = max(C - 1, sb_p)\n")) << k;
  EXPECT_TRUE(has(k, "for sb_v in range(sb_p):\nsb_vec[1](sb_v)")) << k;
  EXPECT_TRUE(has(k, "for sb_v in range(sb_p, sb_vr, sb_w_f32):\nsb_vec_in[sb_w_f32](sb_v)")) << k;
  EXPECT_TRUE(has(k, "for sb_v in range(sb_t, C):\nsb_vec[1](sb_v)")) << k;
  EXPECT_TRUE(has(k, "else:\nvar sb_vn = C\n")) << k;
  // The checked copy still tests its loads.
  EXPECT_TRUE(has(k, "sb_ld0_x_i1 + sb_w <= C")) << k;

  // A window across rows only: one test per row, the whole row without checks where it holds.
  Result<Spec> rows = load("rows", kRC,
                           "  x: {type: f32, shape: [R, C], role: in, boundary: zero}\n"
                           "  y: {type: f32, shape: [R, C], role: out}\n",
                           "  y[i, j] = sum(a in 0..3: x[i + a - 1, j])\n");
  ASSERT_TRUE(rows.ok()) << format_error(rows.error());
  const std::string kr = vp_kernels(emit(rows.value()));
  EXPECT_TRUE(has(kr, "vectorize[sb_w_f32](sb_vr, sb_vec_in)")) << kr;
  EXPECT_FALSE(has(kr, "sb_p")) << kr;

  // Strided along the row (x[i, 2 * j + b]): the reach is not exact, so every load is checked
  // and there is no second copy.
  Result<Spec> s = load("strided", kRC,
                        "  x: {type: f32, shape: [R, C], role: in, boundary: zero}\n"
                        "  y: {type: f32, shape: [R, C], role: out}\n",
                        "  y[i, j] = sum(b in 0..3: x[i, 2 * j + b - 1])\n");
  ASSERT_TRUE(s.ok()) << format_error(s.error());
  const std::string ks = vp_kernels(emit(s.value()));
  EXPECT_FALSE(has(ks, "sb_vec_in")) << ks;
}

TEST(EmitMojo, IntegerDivisionTruncatesAsInC) {
  Result<Spec> r = load("idiv", kN,
                        "  a: {type: i32, shape: [N], role: in, init: [-9, 9]}\n"
                        "  b: {type: i32, shape: [N], role: in, init: [-3, 3]}\n"
                        "  q: {type: i32, shape: [N], role: out}\n",
                        "  q[i] = a[i] / b[i] + a[i] % 2\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string s = emit(r.value());
  EXPECT_TRUE(has(s, "def sb_div_i32(a: Int32, b: Int32) -> Int32:")) << s;
  EXPECT_TRUE(has(s, "def sb_mod_i32(a: Int32, b: Int32) -> Int32:")) << s;
  // The guards of lower/legalize_int_div around a truncating division by a divisor never 0 or
  // -1; a remainder by 2 of a value that may be negative truncates too (Mojo's % floors).
  EXPECT_TRUE(has(s,
                  "(Int32(0) if b[unsafe_offset=i] == Int32(0) else (-a[unsafe_offset=i] if "
                  "b[unsafe_offset=i] == Int32(-1) else sb_div_i32(a[unsafe_offset=i], Int32(1) "
                  "if b[unsafe_offset=i] == Int32(0) or b[unsafe_offset=i] == Int32(-1) else "
                  "b[unsafe_offset=i]))) + sb_mod_i32(a[unsafe_offset=i], Int32(2))"))
      << s;
  // The comment shows the statement as written, not its lowered form.
  EXPECT_TRUE(has(s, "# q[i] = a[i] / b[i] + a[i] % 2\n")) << s;
  // Not vectorised: integer division has no SIMD form here.
  EXPECT_FALSE(has(vp_kernels(s), "vectorize[")) << s;
}

TEST(EmitMojo, NamesThatClashWithMojoAreRenamed) {
  Result<Spec> r = load("clash", kN,
                        "  range: {type: f32, shape: [N], role: in}\n"
                        "  Layout: {type: f32, shape: [N], role: out}\n",
                        "  Layout[i] = range[i] * 2\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string s = emit(r.value());
  EXPECT_TRUE(has(s, "sb_u_Layout[unsafe_offset=i] = sb_u_range[unsafe_offset=i] * Float32(2.0)"))
      << s;
  EXPECT_TRUE(has(s, "var sb_u_range = sb_a[].tensors[unsafe_offset=0]")) << s;
}

TEST(EmitMojo, SpecWithoutMojoVariantsStillEmitsAModule) {
  Result<Spec> r = load("cpuonly", kN,
                        "  a: {type: f32, shape: [N], role: in}\n"
                        "  c: {type: f32, shape: [N], role: out}\n",
                        "  c[i] = a[i]\n", "  cpu:\n    - {name: loops, strategy: loops}\n");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const std::string s = emit(r.value());
  EXPECT_TRUE(has(s, "# Variants: none")) << s;
  EXPECT_TRUE(has(s, "num_variants=0,")) << s;
  EXPECT_TRUE(has(s, "alloc(Layout[SbVariant](count=1))")) << s;
}

}  // namespace
}  // namespace sb
