// Unit tests of the shape matchers (codegen/lower/patterns.h) and of the check_variant() errors of the
// strategies built on them (cpu blocked_matmul, vendor_cpu blas, vendor_cuda cublas/cub_*).
#include <gtest/gtest.h>

#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "driver.h"
#include "backends/mlir/strategies.h"
#include "lower/patterns.h"

namespace sb {
namespace {

// Writes a spec with the given tensors, compute and variants to a temporary file and loads and
// checks it. Returns the spec, or the first line of the error in `error`.
struct Loaded {
  Spec spec;
  std::string error;
};

Loaded load(const std::string& tensors, const std::string& compute,
            const std::string& variants = "  cpu:\n    - {name: loops, strategy: loops}\n") {
  static int n = 0;
  const std::string text =
      "name: t\ndoc: test spec\nsizes:\n"
      "  M: {bench: [64], verify: [3]}\n"
      "  N: {bench: [64], verify: [5]}\n"
      "  K: {bench: [64], verify: [7]}\n"
      "tensors:\n" +
      tensors + "compute: |\n" + compute + "variants:\n" + variants;
  const auto path = std::filesystem::temp_directory_path() /
                    ("sb_patterns_test_" + std::to_string(::getpid()) + "_" +
                     std::to_string(n++) + ".yaml");
  std::ofstream(path) << text;
  Loaded out;
  Result<Spec> s = load_and_check(path.string());
  if (s.ok()) {
    out.spec = std::move(s.value());
  } else {
    const std::string f = format_error(s.error());
    out.error = f.substr(0, f.find('\n'));
  }
  std::filesystem::remove(path);
  return out;
}

const char* kMats =
    "  a: {type: f32, shape: [M, K], role: in}\n"
    "  at: {type: f32, shape: [K, M], role: in}\n"
    "  b: {type: f32, shape: [K, N], role: in}\n"
    "  bt: {type: f32, shape: [N, K], role: in}\n"
    "  bias: {type: f32, shape: [N], role: in}\n"
    "  c: {type: f32, shape: [M, N], role: out}\n";

// The specs that contraction() loaded; they stay alive for the pointers in its results.
std::deque<Loaded>& loaded_specs() {
  static std::deque<Loaded> alive;
  return alive;
}

// The spec of the latest contraction() call.
const Spec& contraction_spec() {
  return loaded_specs().back().spec;
}

// The match on the first statement.
std::optional<Contraction> contraction(const std::string& compute,
                                       const std::string& tensors = kMats) {
  std::deque<Loaded>& alive = loaded_specs();
  alive.push_back(load(tensors, "  " + compute + "\n"));
  const Loaded& l = alive.back();
  EXPECT_EQ(l.error, "") << compute;
  if (!l.error.empty()) return std::nullopt;
  return match_contraction(l.spec, l.spec.stmts[0]);
}

TEST(MatchContraction, PlainProduct) {
  auto m = contraction("c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->x, 0);
  EXPECT_EQ(m->y, 2);
  EXPECT_FALSE(m->x_trans);
  EXPECT_FALSE(m->y_trans);
  EXPECT_FALSE(m->epilogue);
  EXPECT_EQ(m->type, DType::F32);
  EXPECT_EQ(m->k, 2);
  ASSERT_NE(m->reduce, nullptr);
  EXPECT_EQ(m->reduce->kind, ExprKind::Reduce);
}

TEST(MatchContraction, OperandOrderAndLayouts) {
  auto swapped = contraction("c[i, j] = sum(k in 0..K: b[k, j] * a[i, k])");
  ASSERT_TRUE(swapped);
  EXPECT_EQ(swapped->x, 0);  // the operand carrying i, whatever its position
  EXPECT_EQ(swapped->y, 2);

  auto tt = contraction("c[i, j] = sum(k in 0..K: bt[j, k] * at[k, i])");
  ASSERT_TRUE(tt);
  EXPECT_EQ(tt->x, 1);
  EXPECT_EQ(tt->y, 3);
  EXPECT_TRUE(tt->x_trans);
  EXPECT_TRUE(tt->y_trans);

  auto nt = contraction("c[r, s] = sum(q in 1..K: a[r, q] * bt[s, q])");
  ASSERT_TRUE(nt);
  EXPECT_FALSE(nt->x_trans);
  EXPECT_TRUE(nt->y_trans);
}

TEST(GemmLayout, StepsFollowTheOperandsLayoutsAndTheSumsStart) {
  const Loaded plain = load(kMats, "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n");
  ASSERT_EQ(plain.error, "");
  const Statement& st = plain.spec.stmts[0];
  const GemmLayout o = gemm_layout(st, *match_contraction(plain.spec, st));
  EXPECT_EQ(o.x_i, GemmStep::Row);
  EXPECT_EQ(o.x_k, GemmStep::One);
  EXPECT_EQ(o.y_k, GemmStep::Row);
  EXPECT_EQ(o.y_j, GemmStep::One);
  EXPECT_EQ(o.k0, nullptr);
  EXPECT_EQ(o.k_end, st.vars[2].hi.get());

  const Loaded tt = load(kMats, "  c[i, j] = sum(k in 1..K: at[k, i] * bt[j, k])\n");
  ASSERT_EQ(tt.error, "");
  const Statement& st2 = tt.spec.stmts[0];
  const GemmLayout t = gemm_layout(st2, *match_contraction(tt.spec, st2));
  EXPECT_EQ(t.x_i, GemmStep::One);  // at[k, i]: i is contiguous, k steps over rows
  EXPECT_EQ(t.x_k, GemmStep::Row);
  EXPECT_EQ(t.y_k, GemmStep::One);  // bt[j, k]
  EXPECT_EQ(t.y_j, GemmStep::Row);
  ASSERT_NE(t.k0, nullptr);  // the sum starts at 1: the pointers move along k
  EXPECT_EQ(t.k0, st2.vars[2].lo.get());
}

TEST(MatchContraction, EpilogueTerms) {
  for (const char* c : {"c[i, j] = sum(k in 0..K: a[i, k] * b[k, j]) + bias[j]",
                        "c[i, j] = bias[j] + sum(k in 0..K: a[i, k] * b[k, j])",
                        "c[i, j] = max(2 * sum(k in 0..K: a[i, k] * b[k, j]), 0)"}) {
    auto m = contraction(c);
    ASSERT_TRUE(m) << c;
    EXPECT_TRUE(m->epilogue) << c;
  }
}

// The gathered GEMM (im2col) matcher: a convolution's parts, and the shapes it must reject.
std::optional<GatheredGemm> gathered(const std::string& compute) {
  static const char* const kConv =
      "  x: {type: f32, shape: [M, K, N], role: in, boundary: zero}\n"
      "  w: {type: f32, shape: [N, K, 3], role: in}\n"
      "  w2: {type: f32, shape: [N + 1, K], role: in}\n"
      "  w3: {type: f32, shape: [M, N, K], role: in}\n"
      "  y: {type: f32, shape: [M, N, N], role: out}\n";
  std::deque<Loaded>& alive = loaded_specs();
  alive.push_back(load(kConv, "  " + compute + "\n"));
  const Loaded& l = alive.back();
  EXPECT_EQ(l.error, "") << compute;
  if (!l.error.empty()) return std::nullopt;
  return match_gathered_gemm(l.spec, l.spec.stmts[0]);
}

TEST(MatchGatheredGemm, AConvolutionsBatchRowsColumnsAndSums) {
  auto g = gathered("y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, c, i + t - 1]))");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->w, 1);
  EXPECT_EQ(g->batch, std::vector<int>({0}));
  EXPECT_EQ(g->m, std::vector<int>({1}));
  EXPECT_EQ(g->n, std::vector<int>({2}));
  EXPECT_EQ(g->k, std::vector<int>({3, 4}));
  ASSERT_NE(g->gathered, nullptr);
  EXPECT_EQ(g->gathered->kind, ExprKind::Read);
  EXPECT_EQ(g->gathered->ref, 0);
  // The weights on the right, and a computed gathered term.
  auto r = gathered(
      "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: (2 * x[b, c, i + t] + 1) * w[o, c, t]))");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->w, 1);
  EXPECT_EQ(r->gathered->kind, ExprKind::Binary);
}

// A grouped GEMM: the gathered term uses the output's weight-row index o only as one quotient
// o / q (a grouped convolution's input channel); any other use of o is no gathered GEMM.
TEST(MatchGatheredGemm, AGroupedConvolutionsQuotient) {
  auto g = gathered(
      "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, (o / 2) * K + c, i + t]))");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->m, std::vector<int>({1}));
  ASSERT_NE(g->group, nullptr);
  ASSERT_NE(g->group_size, nullptr);
  EXPECT_EQ(g->group_size->kind, ExprKind::IntLit);
  EXPECT_EQ(g->group_size->ival, 2);
  auto by_size = gathered(
      "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, o / K + c + o / K, i]))");
  ASSERT_TRUE(by_size);
  ASSERT_NE(by_size->group_size, nullptr);
  EXPECT_EQ(by_size->group_size->kind, ExprKind::SizeRef);
  auto ungrouped =
      gathered("y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, c, i + t]))");
  ASSERT_TRUE(ungrouped);
  EXPECT_EQ(ungrouped->group, nullptr);
  for (const char* c : {
           // o beside its quotient
           "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, o / 2 + c, o + t]))",
           // two different quotients
           "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, o / 2 + o / 3, i + t]))",
           // the quotient of more than o
           "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, (o + c) / 2, i + t]))",
           // a remainder
           "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, o % 2, i + t]))",
       })
    EXPECT_FALSE(gathered(c)) << c;
}

TEST(MatchGatheredGemm, RejectsWhatIsNoWeightMatrixTimesColumns) {
  for (const char* c : {
           // the reductions in w in another order than their nesting
           "y[b, o, i] = sum(t in 0..3: sum(c in 0..K: w[o, c, t] * x[b, c, i + t]))",
           // a reduction over part of its dimension of w
           "y[b, o, i] = sum(c in 0..K: sum(t in 0..2: w[o, c, t] * x[b, c, i + t]))",
           // a literal subscript of w
           "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, 0] * x[b, c, i + t]))",
           // the gathered term uses w's output index
           "y[b, o, i] = sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, c, o + t]))",
           // w's output indices are not adjacent dimensions of the output
           "y[o, i, p] = sum(c in 0..K: w3[o, p, c] * x[0, c, i])",
           // a max, not a sum
           "y[b, o, i] = max(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, c, i + t]))",
           // a term outside the sums
           "y[b, o, i] = 1 + sum(c in 0..K: sum(t in 0..3: w[o, c, t] * x[b, c, i + t]))",
           // w's output dimension (N + 1) is not the output's (N)
           "y[b, o, i] = sum(c in 0..K: w2[o, c] * x[b, c, i])",
       })
    EXPECT_FALSE(gathered(c)) << c;
}

// Attention (match_attention) over M queries and N keys of depth K, rank 2 or, with a batch of
// M, rank 3. `compute` holds the statements, one per line; the match is tried at `first`.
const char* const kAttentionTensors =
    "  q: {type: f32, shape: [M, K], role: in}\n"
    "  kk: {type: f32, shape: [N, K], role: in}\n"
    "  kt: {type: f32, shape: [K, N], role: in}\n"
    "  v: {type: f32, shape: [N, K], role: in}\n"
    "  mask: {type: f32, shape: [M, N], role: in}\n"
    "  s: {type: f32, shape: [M, N], role: temp}\n"
    "  m: {type: f32, shape: [M], role: temp}\n"
    "  p: {type: f32, shape: [M, N], role: temp}\n"
    "  l: {type: f32, shape: [M], role: temp}\n"
    "  lo: {type: f32, shape: [M], role: out}\n"
    "  y: {type: f32, shape: [M, K], role: out}\n"
    "  z: {type: f32, shape: [M], role: out}\n"
    "  q3: {type: f32, shape: [M, M, K], role: in}\n"
    "  v3: {type: f32, shape: [M, N, K], role: in}\n"
    "  s3: {type: f32, shape: [M, M, N], role: temp}\n"
    "  m3: {type: f32, shape: [M, M], role: temp}\n"
    "  p3: {type: f32, shape: [M, M, N], role: temp}\n"
    "  l3: {type: f32, shape: [M, M], role: temp}\n"
    "  y3: {type: f32, shape: [M, M, K], role: out}\n"
    "  qh: {type: bf16, shape: [M, K], role: in}\n"
    "  vh: {type: f16, shape: [N, K], role: in}\n";

const char* const kAttention =
    "  s[i, j] = sum(d in 0..K: q[i, d] * kk[j, d]) * 0.5\n"
    "  m[i] = max(j in 0..N: s[i, j])\n"
    "  p[i, j] = exp(s[i, j] - m[i])\n"
    "  l[i] = sum(j in 0..N: p[i, j])\n"
    "  y[i, e] = sum(j in 0..N: p[i, j] * v[j, e]) / l[i]\n";

std::optional<Attention> attention(const std::string& compute, size_t first = 0) {
  // The tensors that `compute` names (a spec declares no tensor it does not use).
  std::string tensors;
  std::istringstream lines(kAttentionTensors);
  for (std::string line; std::getline(lines, line);) {
    const std::string name = line.substr(2, line.find(':') - 2);
    if (std::regex_search(compute, std::regex("\\b" + name + "\\["))) tensors += line + "\n";
  }
  std::deque<Loaded>& alive = loaded_specs();
  alive.push_back(load(tensors, compute));
  const Loaded& l = alive.back();
  EXPECT_EQ(l.error, "") << compute;
  if (!l.error.empty()) return std::nullopt;
  return match_attention(l.spec, first);
}

// `text` with its first occurrence of `from` replaced by `to` (which must be there).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(MatchAttention, TheFiveStatementsWithAScale) {
  auto a = attention(kAttention);
  ASSERT_TRUE(a);
  const Spec& spec = contraction_spec();
  EXPECT_EQ(a->first, 0u);
  EXPECT_EQ(spec.tensors[a->s].name, "s");
  EXPECT_EQ(spec.tensors[a->m].name, "m");
  EXPECT_EQ(spec.tensors[a->p].name, "p");
  EXPECT_EQ(spec.tensors[a->l].name, "l");
  EXPECT_EQ(spec.tensors[a->scores.x].name, "q");
  EXPECT_EQ(spec.tensors[a->scores.y].name, "kk");
  EXPECT_TRUE(a->scores.y_trans);
  EXPECT_TRUE(a->scores.epilogue);
  EXPECT_EQ(spec.tensors[a->values.y].name, "v");
  EXPECT_FALSE(a->scores.batched);
  ASSERT_NE(a->weight_s, nullptr);
  EXPECT_EQ(a->weight_s->ref, a->s);
  EXPECT_EQ(a->weight_m->ref, a->m);
  // Only at the scores' statement.
  EXPECT_FALSE(attention(kAttention, 1));
}

TEST(MatchAttention, AMaskTransposedKeysABatchAndAPrologue) {
  // A masked score and keys read as kt[d, j].
  auto masked = attention(
      replaced(kAttention, "q[i, d] * kk[j, d]) * 0.5", "kt[d, j] * q[i, d]) + mask[i, j]"));
  ASSERT_TRUE(masked);
  EXPECT_FALSE(masked->scores.y_trans);
  // Scores over part of the depth (the product's operands then start at d = 1).
  EXPECT_TRUE(attention(replaced(kAttention, "sum(d in 0..K:", "sum(d in 1..K:")));
  // After another statement, with a batch whose keys are shared.
  auto batched = attention(
      "  z[i] = q[i, 0]\n"
      "  s3[b, i, j] = select(j <= i, sum(d in 0..K: q3[b, i, d] * kk[j, d]), -inf)\n"
      "  m3[b, i] = max(j in 0..N: s3[b, i, j])\n"
      "  p3[b, i, j] = exp(s3[b, i, j] - m3[b, i])\n"
      "  l3[b, i] = sum(j in 0..N: p3[b, i, j])\n"
      "  y3[b, i, e] = sum(j in 0..N: p3[b, i, j] * v3[b, j, e]) / l3[b, i]\n",
      1);
  ASSERT_TRUE(batched);
  EXPECT_TRUE(batched->scores.batched);
  EXPECT_FALSE(batched->scores.y_batched);
  EXPECT_TRUE(batched->values.y_batched);
}

TEST(MatchAttention, RejectsOperandsToWiden) {
  // bf16 queries or f16 values: the products are contractions whose GEMM widens them, but the
  // fused kernel packs operands of its own type only.
  for (const auto& [from, to] :
       std::vector<std::pair<const char*, const char*>>{{"q[i, d]", "qh[i, d]"},
                                                        {"* v[j, e]", "* vh[j, e]"}}) {
    const std::string compute = replaced(kAttention, from, to);
    EXPECT_FALSE(attention(compute)) << compute;
    const Spec& spec = contraction_spec();
    EXPECT_TRUE(match_contraction(spec, spec.stmts[0]));
    EXPECT_TRUE(match_contraction(spec, spec.stmts[4]));
  }
  EXPECT_TRUE(attention(kAttention));
}

TEST(MatchAttention, RejectsWhatTheOnlineSoftmaxWouldChange) {
  const std::vector<std::pair<const char*, const char*>> misses = {
      // the row sums are an output, which the fused form never writes
      {"  l[i] = sum(j in 0..N: p[i, j])\n  y[i, e] = sum(j in 0..N: p[i, j] * v[j, e]) / l[i]",
       "  lo[i] = sum(j in 0..N: p[i, j])\n  y[i, e] = sum(j in 0..N: p[i, j] * v[j, e]) / lo[i]"},
      // the sum over fewer keys than the max
      {"l[i] = sum(j in 0..N: p", "l[i] = sum(j in 0..N - 1: p"},
      // the weighted sum over fewer keys
      {"y[i, e] = sum(j in 0..N:", "y[i, e] = sum(j in 1..N:"},
      // the weights are not exp(s - m)
      {"exp(s[i, j] - m[i])", "exp(s[i, j] - m[i]) * 2"},
      {"exp(s[i, j] - m[i])", "exp(m[i] - s[i, j])"},
      // a min, not a max
      {"m[i] = max(", "m[i] = min("},
      // the output is not divided by the row sums
      {"/ l[i]", "/ (l[i] + 1)"},
  };
  for (const auto& [from, to] : misses) {
    const std::string compute = replaced(kAttention, from, to);
    EXPECT_FALSE(attention(compute)) << compute;
  }
  // A later statement reads a temp.
  EXPECT_FALSE(attention(std::string(kAttention) + "  z[i] = l[i]\n"));
}

TEST(MatchContraction, F64) {
  auto m = contraction("c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])",
                       "  a: {type: f64, shape: [M, K], role: in}\n"
                       "  b: {type: f64, shape: [K, N], role: in}\n"
                       "  c: {type: f64, shape: [M, N], role: out}\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, DType::F64);
}

// f16 and bf16 operands into an f32 output: their reads widen to f32, so the GEMM may widen
// them as it packs. The contraction records each operand's tensor type.
const std::string kHalfInputs =
    "  a: {type: bf16, shape: [M, K], role: in}\n"
    "  h: {type: f16, shape: [M, K], role: in}\n"
    "  bt: {type: bf16, shape: [N, K], role: in}\n"
    "  b: {type: f32, shape: [K, N], role: in}\n"
    "  bb: {type: bf16, shape: [M, K, N], role: in}\n";
const std::string kHalves = kHalfInputs + "  c: {type: f32, shape: [M, N], role: out}\n";

TEST(MatchContraction, StorageTypeOperandsWidenToTheOutputsType) {
  auto both = contraction("c[i, j] = sum(k in 0..K: a[i, k] * bt[j, k])", kHalves);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->type, DType::F32);
  EXPECT_EQ(both->x_type, DType::BF16);
  EXPECT_EQ(both->y_type, DType::BF16);
  EXPECT_TRUE(both->y_trans);
  EXPECT_TRUE(both->widens());
  // Neither a lowering of one element type (cuBLAS's plain GEMM) nor an attention group takes
  // them; mlir's blocked_matmul widens them while it copies their blocks.
  EXPECT_FALSE(match_single_contraction(contraction_spec(), contraction_spec().stmts[0]));
  EXPECT_TRUE(match_mlir_gemm(contraction_spec(), contraction_spec().stmts[0]));

  // One operand of each kind, in either order; f16 with bf16.
  auto mixed = contraction("c[i, j] = sum(k in 0..K: b[k, j] * h[i, k]) + 1", kHalves);
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->x_type, DType::F16);
  EXPECT_EQ(mixed->y_type, DType::F32);
  EXPECT_TRUE(mixed->epilogue);
  EXPECT_TRUE(mixed->widens());
  auto halves = contraction("c[i, j] = sum(k in 0..K: h[i, k] * bt[j, k])", kHalves);
  ASSERT_TRUE(halves);
  EXPECT_EQ(halves->x_type, DType::F16);
  EXPECT_EQ(halves->y_type, DType::BF16);

  // A batch.
  auto batch = contraction("cb[g, i, j] = sum(k in 0..K: a[i, k] * bb[g, k, j])",
                           kHalfInputs + "  cb: {type: f32, shape: [M, M, N], role: out}\n");
  ASSERT_TRUE(batch);
  EXPECT_TRUE(batch->batched);
  EXPECT_EQ(batch->y_type, DType::BF16);

  // f32 operands: nothing to widen, the operand types are the output's.
  auto plain = contraction("c[i, j] = sum(k in 0..K: a[i, k] * bt[j, k])", kMats);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->x_type, DType::F32);
  EXPECT_EQ(plain->y_type, DType::F32);
  EXPECT_FALSE(plain->widens());
  EXPECT_TRUE(match_single_contraction(contraction_spec(), contraction_spec().stmts[0]));

  // Not a contraction: an f64 sum of widened reads (an f32 read cast to f64 is no operand), and a
  // bf16 output (no GEMM writes one).
  EXPECT_FALSE(contraction("c64[i, j] = sum(k in 0..K: f64(a[i, k]) * f64(bt[j, k]))",
                           kHalfInputs + "  c64: {type: f64, shape: [M, N], role: out}\n"));
  EXPECT_FALSE(contraction("ch[i, j] = sum(k in 0..K: a[i, k] * bt[j, k])",
                           kHalfInputs + "  ch: {type: bf16, shape: [M, N], role: out}\n"));
}

// Batches: the sizes M, N and K stand in for a batch count where a tensor needs one.
const char* kBatches =
    "  a: {type: f32, shape: [N, M, K], role: in}\n"
    "  a2: {type: f32, shape: [M, K], role: in}\n"
    "  ax: {type: f32, shape: [M, N, K], role: in}\n"
    "  at: {type: f32, shape: [N, K, M], role: in}\n"
    "  b: {type: f32, shape: [N, K, N], role: in}\n"
    "  b2: {type: f32, shape: [K, N], role: in}\n"
    "  bt: {type: f32, shape: [N, N, K], role: in}\n"
    "  c: {type: f32, shape: [N, M, N], role: out}\n";

TEST(MatchContraction, Batches) {
  auto both = contraction("c[h, i, j] = sum(k in 0..K: a[h, i, k] * b[h, k, j])", kBatches);
  ASSERT_TRUE(both);
  EXPECT_TRUE(both->batched);
  EXPECT_TRUE(both->x_batched);
  EXPECT_TRUE(both->y_batched);
  EXPECT_EQ(both->out_row_dim(), 1);
  EXPECT_EQ(both->x_row_dim(), 1);
  EXPECT_EQ(both->k, 3);
  EXPECT_FALSE(match_single_contraction(contraction_spec(), contraction_spec().stmts[0]));
  EXPECT_FALSE(match_mlir_gemm(contraction_spec(), contraction_spec().stmts[0]));

  // One operand shared by every product, read without the batch index; transposed operands.
  auto shared = contraction("c[h, i, j] = sum(k in 0..K: a2[i, k] * bt[h, j, k])", kBatches);
  ASSERT_TRUE(shared);
  EXPECT_FALSE(shared->x_batched);
  EXPECT_EQ(shared->x_row_dim(), 0);
  EXPECT_TRUE(shared->y_batched);
  EXPECT_TRUE(shared->y_trans);
  auto tt = contraction("c[h, i, j] = sum(k in 0..K: b2[k, j] * at[h, k, i]) + 1", kBatches);
  ASSERT_TRUE(tt);
  EXPECT_TRUE(tt->x_trans);
  EXPECT_TRUE(tt->epilogue);
  EXPECT_EQ(tt->x, 3);  // at carries i
  EXPECT_FALSE(tt->y_batched);

  // Not a batch: the batch index elsewhere than first, another batch's matrix, a batch index in
  // the range, or a rank-4 output.
  for (const char* c : {
           "c[h, i, j] = sum(k in 0..K: ax[i, h, k] * b[h, k, j])",
           "c[h, i, j] = sum(k in 0..K: a[0, i, k] * b[h, k, j])",
           "c[h, i, j] = sum(k in 0..K: a[h, i, k] * b[j, k, h])",
           "c[h, i, j] = sum(k in 0..K - h: a[h, i, k] * b[h, k, j])",
       })
    EXPECT_FALSE(contraction(c, kBatches)) << c;
}

TEST(MatchContraction, RejectsOtherShapes) {
  for (const char* c : {
           "c[i, j] = sum(k in 0..K: a[i, k] * b[k, j] * 2)",            // not a bare product
           "c[i, j] = sum(k in 0..K: a[i, k] + b[k, j])",                // not a product
           "c[i, j] = max(k in 0..K: a[i, k] * b[k, j])",                // not a sum
           "c[i, j] = sum(k in 0..K: a[i, k] * bt[j, k]) + sum(k in 0..K: a[i, k] * b[k, j])",
           "c[i, j] = sum(k in 0..K: a[i, k] * at[k, i]) + bias[j]",     // no operand carries j
           "c[i, j] = sum(k in 0..K: a[i, k] * b[k, N - 1 - j])",         // not a bare index
           "c[i, j] = sum(k in 0..K - i: a[i, k] * b[k, j])",            // bounds use i
       }) {
    EXPECT_FALSE(contraction(c)) << c;
  }
  // A rank-1 output (a matrix-vector product) is not a GEMM.
  Loaded mv = load(
      "  a: {type: f32, shape: [M, K], role: in}\n  x: {type: f32, shape: [K], role: in}\n"
      "  y: {type: f32, shape: [M], role: out}\n",
      "  y[i] = sum(k in 0..K: a[i, k] * x[k])\n");
  ASSERT_EQ(mv.error, "");
  EXPECT_FALSE(match_contraction(mv.spec, mv.spec.stmts[0]));
  // Mixed types (f32 operands cast into an f64 sum) and boundary rules do not match.
  Loaded mixed = load(
      "  a: {type: f32, shape: [M, K], role: in}\n  b: {type: f32, shape: [K, N], role: in}\n"
      "  c: {type: f64, shape: [M, N], role: out}\n",
      "  c[i, j] = sum(k in 0..K: f64(a[i, k]) * f64(b[k, j]))\n");
  ASSERT_EQ(mixed.error, "");
  EXPECT_FALSE(match_contraction(mixed.spec, mixed.spec.stmts[0]));
  Loaded padded = load(
      "  a: {type: f32, shape: [M, K], role: in, boundary: zero}\n"
      "  b: {type: f32, shape: [K, N], role: in}\n  c: {type: f32, shape: [M, N], role: out}\n",
      "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n");
  ASSERT_EQ(padded.error, "");
  EXPECT_FALSE(match_contraction(padded.spec, padded.spec.stmts[0]));
}

TEST(EpilogueStatement, ReplacesTheSumByTheOutput) {
  Loaded l = load(kMats, "  c[i, j] = max(sum(k in 0..K: a[i, k] * b[k, j]) + bias[j], 0)\n");
  ASSERT_EQ(l.error, "");
  const Statement& st = l.spec.stmts[0];
  auto m = match_contraction(l.spec, st);
  ASSERT_TRUE(m);
  const Statement e = epilogue_statement(l.spec, st, m->reduce);
  EXPECT_EQ(to_string(e, l.spec), "c[i, j] = max(c[i, j] + bias[j], 0.0)");
  EXPECT_EQ(e.rank(), 2u);
  EXPECT_EQ(e.out, st.out);
  // The original is untouched.
  EXPECT_EQ(to_string(st, l.spec), "c[i, j] = max(sum(k in 0..K: a[i, k] * b[k, j]) + bias[j], 0.0)");
}

const char* kVecIn =
    "  x: {type: f32, shape: [N], role: in}\n"
    "  y: {type: f32, shape: [N], role: in}\n"
    "  v: {type: i32, shape: [N], role: in}\n";
const std::string kD = "  d: {type: f32, shape: [], role: out}\n";
const std::string kN = "  n: {type: i32, shape: [], role: out}\n";
const std::string kS = "  s: {type: f32, shape: [N], role: out}\n";
const std::string kVecs = kVecIn + kD + kN + kS;

TEST(MatchScalarReduction, SumsMaxMinWithEpilogue) {
  Loaded l = load(kVecs,
                  "  d = sqrt(sum(i in 0..N: x[i] * y[i]))\n  n = max(i in 1..N: v[i])\n"
                  "  s[i] = x[i]\n");
  ASSERT_EQ(l.error, "");
  auto d = match_scalar_reduction(l.spec, l.spec.stmts[0]);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->op, ReduceOp::Sum);
  EXPECT_TRUE(d->epilogue);
  EXPECT_EQ(d->type, DType::F32);
  auto n = match_scalar_reduction(l.spec, l.spec.stmts[1]);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->op, ReduceOp::Max);
  EXPECT_FALSE(n->epilogue);
  EXPECT_EQ(n->type, DType::I32);
  EXPECT_FALSE(match_scalar_reduction(l.spec, l.spec.stmts[2]));  // not a scalar
  EXPECT_FALSE(match_scan(l.spec, l.spec.stmts[0]));
  EXPECT_FALSE(match_contraction(l.spec, l.spec.stmts[0]));
}

TEST(MatchScalarReduction, RejectsNestedOrSeveralReductions) {
  Loaded l = load(kVecIn + kD + kN,
                  "  d = sum(i in 0..N: x[i]) + max(i in 0..N: y[i])\n"
                  "  n = sum(i in 0..N: max(j in 0..N: v[j]))\n");
  ASSERT_EQ(l.error, "");
  EXPECT_FALSE(match_scalar_reduction(l.spec, l.spec.stmts[0]));
  EXPECT_FALSE(match_scalar_reduction(l.spec, l.spec.stmts[1]));
}

TEST(MatchScan, InclusiveAndExclusive) {
  Loaded l = load(
      "  x: {type: f64, shape: [N], role: in}\n  y: {type: f64, shape: [N], role: out}\n"
      "  z: {type: f64, shape: [N], role: out}\n  w: {type: f64, shape: [N], role: out}\n",
      "  y[i] = sum(k in 0..i + 1: x[k])\n  z[i] = max(k in 0..i: x[k] * x[k])\n"
      "  w[i] = min(k in 0..1 + i: 2 * x[k])\n");
  ASSERT_EQ(l.error, "");
  auto y = match_scan(l.spec, l.spec.stmts[0]);
  ASSERT_TRUE(y);
  EXPECT_TRUE(y->inclusive);
  EXPECT_EQ(y->op, ReduceOp::Sum);
  EXPECT_EQ(y->type, DType::F64);
  auto z = match_scan(l.spec, l.spec.stmts[1]);
  ASSERT_TRUE(z);
  EXPECT_FALSE(z->inclusive);
  EXPECT_EQ(z->op, ReduceOp::Max);
  auto w = match_scan(l.spec, l.spec.stmts[2]);
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->inclusive);
}

TEST(MatchScan, RangeEndsAreReadAsAffineForms) {
  Loaded l = load(
      "  x: {type: f64, shape: [N], role: in}\n  y: {type: f64, shape: [N], role: out}\n"
      "  z: {type: f64, shape: [N], role: out}\n",
      "  y[i] = sum(k in 0..2 + i - 1: x[k])\n  z[i] = sum(k in 0..2 * i - i: x[k])\n");
  ASSERT_EQ(l.error, "");
  auto y = match_scan(l.spec, l.spec.stmts[0]);
  ASSERT_TRUE(y);
  EXPECT_TRUE(y->inclusive);
  auto z = match_scan(l.spec, l.spec.stmts[1]);
  ASSERT_TRUE(z);
  EXPECT_FALSE(z->inclusive);
}

TEST(MatchScan, RejectsOtherRanges) {
  Loaded l = load(
      "  x: {type: f64, shape: [N + 1], role: in}\n  y: {type: f64, shape: [N], role: out}\n"
      "  z: {type: f64, shape: [N], role: out}\n  w: {type: f64, shape: [N], role: out}\n"
      "  u: {type: f64, shape: [N], role: out}\n",
      "  y[i] = sum(k in 0..i + 2: x[k])\n"      // not i + 1
      "  z[i] = sum(k in 1..i + 1: x[k])\n"      // does not start at 0
      "  w[i] = sum(k in 0..i + 1: x[k] * x[i])\n"  // the body uses i
      "  u[i] = 2 * sum(k in 0..i + 1: x[k])\n");  // more than the scan
  ASSERT_EQ(l.error, "");
  for (const Statement& st : l.spec.stmts) EXPECT_FALSE(match_scan(l.spec, st)) << st.target;
}

// The library-callable scans are a subset of the general scan shape (the cuda scan strategy's):
// every statement the subset takes, the general matcher takes; the general one also takes
// ranges from another start or end and an epilogue, which the subset rejects.
TEST(MatchScan, TheLibrarySubsetRefinesTheGeneralShape) {
  Loaded l = load(
      "  x: {type: f64, shape: [N + 1], role: in}\n  y: {type: f64, shape: [N], role: out}\n"
      "  z: {type: f64, shape: [N], role: out}\n  w: {type: f64, shape: [N], role: out}\n"
      "  u: {type: f64, shape: [N], role: out}\n  v: {type: f64, shape: [N], role: out}\n",
      "  y[i] = sum(k in 0..i + 1: x[k])\n"
      "  z[i] = sum(k in 0..i + 2: x[k])\n"
      "  w[i] = sum(k in 1..i + 1: x[k])\n"
      "  u[i] = 2 * sum(k in 0..i + 1: x[k])\n"
      "  v[i] = sum(k in 0..i + 1: x[k] * x[i])\n");
  ASSERT_EQ(l.error, "");
  const bool general[] = {true, true, true, true, false};
  const bool subset[] = {true, false, false, false, false};
  for (size_t s = 0; s < l.spec.stmts.size(); ++s) {
    ScanMatch m;
    std::string why;
    EXPECT_EQ(match_scan(l.spec, l.spec.stmts[s], &m, &why), general[s]) << s << ": " << why;
    EXPECT_EQ(match_scan(l.spec, l.spec.stmts[s]).has_value(), subset[s]) << s;
  }
}

// Likewise for contractions: the general matmul shape (tiled_matmul) takes any body of the two
// reads; the GEMM-callable subset only their product, of plain tensors.
TEST(MatchContraction, TheLibrarySubsetRefinesTheGeneralShape) {
  Loaded l = load(std::string(kMats) + "  d: {type: f32, shape: [M, N], role: out}\n"
                  "  e: {type: f32, shape: [M, N], role: out}\n",
                  "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n"
                  "  d[i, j] = sum(k in 0..K: a[i, k] - b[k, j])\n"
                  "  e[i, j] = max(k in 0..K: a[i, k] * b[k, j])\n");
  ASSERT_EQ(l.error, "");
  for (size_t s = 0; s < l.spec.stmts.size(); ++s) {
    MatmulMatch m;
    std::string why;
    EXPECT_TRUE(match_matmul(l.spec, l.spec.stmts[s], &m, &why)) << s << ": " << why;
    EXPECT_EQ(match_contraction(l.spec, l.spec.stmts[s]).has_value(), s == 0) << s;
  }
}

// ---- check_variant errors ---------------------------------------------------------------------

// A search written as a reduction: min over k of select(p, k, d), d at least the range's last
// index and not using k; anything else is not one.
TEST(MatchFirstIndex, TheLeastIndexWherePHoldsWithADefaultPastTheRange) {
  const Loaded l = load(
      "  x: {type: f32, shape: [M, N], role: in}\n"
      "  y0: {type: i64, shape: [M], role: out}\n  y1: {type: i64, shape: [M], role: out}\n"
      "  y2: {type: i64, shape: [M], role: out}\n  y3: {type: i64, shape: [M], role: out}\n"
      "  y4: {type: i64, shape: [M], role: out}\n  y5: {type: i64, shape: [M], role: out}\n"
      "  y6: {type: i64, shape: [M], role: out}\n",
      "  y0[i] = min(j in 0..N: select(x[i, j] > 0, i64(j), i64(N - 1)))\n"
      "  y1[i] = min(j in i..N + i: select(x[i, j - i] > 0, i64(j), i64(N + i + 4)))\n"
      "  y2[i] = min(j in 0..N: select(x[i, j] > 0, i64(j), i64(N - 2)))\n"
      "  y3[i] = max(j in 0..N: select(x[i, j] > 0, i64(j), i64(N)))\n"
      "  y4[i] = min(j in 0..N: select(x[i, j] > 0, i64(j + 1), i64(N)))\n"
      "  y5[i] = min(j in 0..N: select(x[i, j] > 0, i64(j), i64(N + j)))\n"
      "  y6[i] = min(j in 0..N: select(x[i, j] > 0, i64(N), i64(j)))\n");
  ASSERT_TRUE(l.error.empty()) << l.error;
  auto match = [&](size_t k) {
    const Statement& st = l.spec.stmts[k];
    return match_first_index(st, *st.rhs);
  };
  const std::optional<FirstIndex> m = match(0);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->reduce, l.spec.stmts[0].rhs.get());
  EXPECT_EQ(m->cond, l.spec.stmts[0].rhs->args[0]->args[0].get());
  EXPECT_EQ(m->none, l.spec.stmts[0].rhs->args[0]->args[2].get());
  EXPECT_EQ(m->index, l.spec.stmts[0].rhs->args[0]->args[1]->args[0].get());  // j under i64()
  EXPECT_TRUE(match(1).has_value());   // a default well past the range's end
  EXPECT_FALSE(match(2).has_value());  // a default below the last index
  EXPECT_FALSE(match(3).has_value());  // max: the last index, not the first
  EXPECT_FALSE(match(4).has_value());  // not the index itself
  EXPECT_FALSE(match(5).has_value());  // a default that uses the index
  EXPECT_FALSE(match(6).has_value());  // the arms the other way round
}

TEST(StrategyChecks, BlockedMatmulNeedsAContraction) {
  Loaded ok = load(kMats, "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j]) + bias[j]\n",
                   "  cpu:\n    - {name: blocked, strategy: blocked_matmul, mc: 64}\n"
                   "  vendor_cpu:\n    - {name: blas, strategy: blas}\n"
                   "  vendor_cuda:\n    - {name: cublas, strategy: cublas}\n");
  EXPECT_EQ(ok.error, "");

  Loaded bad = load(kVecIn + kS, "  s[i] = x[i] + y[i]\n",
                    "  cpu:\n    - {name: loops, strategy: loops}\n"
                    "    - {name: blocked, strategy: blocked_matmul}\n");
  EXPECT_NE(bad.error.find(":17:14: error: variant 'blocked' (strategy blocked_matmul) needs a "
                           "contraction statement"),
            std::string::npos)
      << bad.error;

  Loaded blas = load(kVecIn + kS, "  s[i] = x[i] + y[i]\n",
                     "  vendor_cpu:\n    - {name: ob, strategy: blas}\n");
  EXPECT_NE(blas.error.find(":16:14: error: variant 'ob' (strategy blas) needs a contraction"),
            std::string::npos)
      << blas.error;
}

// vendor_cpu takes f16 and bf16 tensors as the operands of a contraction only (widened into f32
// copies for cblas_sgemm), and vendor_cuda as the two operands of one product (cublasGemmEx): any
// other use is an error at that use. mlir's blocked_matmul widens the operands of one product.
TEST(StrategyChecks, StorageOperandsOnTheHostGemms) {
  const std::string product = "  c[i, j] = sum(k in 0..K: a[i, k] * bt[j, k]) + 1\n";
  Loaded ok = load(kHalves, product,
                   "  cpu:\n    - {name: blocked, strategy: blocked_matmul}\n"
                   "  mojo:\n    - {name: blocked, strategy: blocked_matmul}\n"
                   "  vendor_cpu:\n    - {name: blas, strategy: blas}\n");
  EXPECT_EQ(ok.error, "");

  Loaded epilogue = load(kHalves, "  c[i, j] = sum(k in 0..K: a[i, k] * bt[j, k]) + h[i, 0]\n",
                         "  vendor_cpu:\n    - {name: blas, strategy: blas}\n");
  EXPECT_NE(epilogue.error.find(":15:50: error: backend 'vendor_cpu' takes f16 tensors only as the "
                                "operands of a matrix product, which it widens into f32 copies "
                                "for OpenBLAS's cblas_sgemm; 'h' is read here outside one"),
            std::string::npos)
      << epilogue.error;
  Loaded written = load(kHalves + "  ch: {type: bf16, shape: [M, N], role: out}\n",
                        product + "  ch[i, j] = c[i, j]\n",
                        "  vendor_cpu:\n    - {name: blas, strategy: blas}\n");
  EXPECT_NE(written.error.find(":17:3: error: backend 'vendor_cpu' takes bf16 tensors only as the "
                               "operands of a matrix product"),
            std::string::npos)
      << written.error;
  // A gathered term of im2col reads its tensors outside the product.
  Loaded gathered = load(
      "  w: {type: f32, shape: [M, K], role: in}\n  x: {type: bf16, shape: [K, N], role: in}\n"
      "  c: {type: f32, shape: [M, N], role: out}\n",
      "  c[i, j] = sum(k in 0..K: w[i, k] * (x[k, j] + 1))\n",
      "  vendor_cpu:\n    - {name: im2col, strategy: im2col}\n");
  EXPECT_NE(gathered.error.find(":12:39: error: backend 'vendor_cpu' takes bf16 tensors only"),
            std::string::npos)
      << gathered.error;

  Loaded mlir = load(kHalves, product, "  mlir:\n    - {name: blocked, strategy: blocked_matmul}\n");
  EXPECT_EQ(mlir.error, "");
  // cuBLAS takes two operands of one storage type (cublasGemmEx), nothing else.
  Loaded cublas = load(kHalves, product, "  vendor_cuda:\n    - {name: g, strategy: cublas}\n");
  EXPECT_EQ(cublas.error, "");
  Loaded mixed = load(kHalves, "  c[i, j] = sum(k in 0..K: h[i, k] * bt[j, k])\n",
                      "  vendor_cuda:\n    - {name: g, strategy: cublas}\n");
  EXPECT_NE(mixed.error.find(":15:28: error: backend 'vendor_cuda' takes f16 tensors only as the "
                             "operands of a matrix product (or a batch of them) of two f16 or two "
                             "bf16 operands into an f32 output, which it passes to cublasGemmEx; "
                             "'h' is read here by a product it cannot take"),
            std::string::npos)
      << mixed.error;
  // A batch of bf16 products (cublasGemmStridedBatchedEx), one operand read transposed.
  Loaded batch = load(kHalfInputs + "  cb: {type: f32, shape: [M, N, N], role: out}\n",
                      "  cb[m, i, j] = sum(k in 0..K: bb[m, k, i] * bb[m, k, j])\n",
                      "  vendor_cuda:\n    - {name: g, strategy: cublas}\n");
  EXPECT_EQ(batch.error, "");
  Loaded half_b = load(kHalves, "  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])\n",
                       "  vendor_cuda:\n    - {name: g, strategy: cublas}\n");
  EXPECT_NE(half_b.error.find("'a' is read here by a product it cannot take"), std::string::npos)
      << half_b.error;
  Loaded elementwise = load(kHalves, "  c[i, j] = a[i, 0]\n",
                            "  vendor_cuda:\n    - {name: g, strategy: cublas}\n");
  EXPECT_NE(elementwise.error.find("'a' is read here outside one"), std::string::npos)
      << elementwise.error;
}

TEST(StrategyChecks, VendorCudaNamesTheStatementThatDoesNotFit) {
  Loaded ok = load(kVecIn + kD + kN, "  d = sum(i in 0..N: x[i] * y[i])\n  n = min(i in 0..N: v[i])\n",
                   "  vendor_cuda:\n    - {name: cub, strategy: cub_reduce}\n");
  EXPECT_EQ(ok.error, "");

  Loaded reduce = load(kVecIn + kD + kS, "  d = sum(i in 0..N: x[i] * y[i])\n  s[i] = x[i] * d\n",
                       "  vendor_cuda:\n    - {name: cub, strategy: cub_reduce}\n");
  EXPECT_NE(reduce.error.find("error: variant 'cub' (strategy cub_reduce) needs every statement "
                              "to have the shape d = sum|prod|max|min"),
            std::string::npos)
      << reduce.error;
  EXPECT_NE(reduce.error.find("statement 's[i] = x[i] * d' (line 15) does not"), std::string::npos)
      << reduce.error;

  Loaded scan = load(kVecIn + kS, "  s[i] = sum(k in 0..i + 1: x[k]) + 1\n",
                     "  vendor_cuda:\n    - {name: scan, strategy: cub_scan}\n");
  EXPECT_NE(scan.error.find("variant 'scan' (strategy cub_scan) needs every statement"),
            std::string::npos)
      << scan.error;

  Loaded gemm = load(kVecIn + kD, "  d = sum(i in 0..N: x[i] * y[i])\n",
                     "  vendor_cuda:\n    - {name: g, strategy: cublas}\n");
  EXPECT_NE(gemm.error.find(":16:14: error: variant 'g' (strategy cublas) needs every statement "
                            "to have the shape c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])"),
            std::string::npos)
      << gemm.error;
}

}  // namespace
}  // namespace sb
