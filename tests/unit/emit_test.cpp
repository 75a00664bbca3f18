// Unit tests of the emitters: shared helpers (emit_common.h), the registry, the lowering of
// expressions on hand-made IR, and properties of whole emitted files (determinism, contract).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "driver.h"
#include "backends/common/emit_common.h"
#include "backends/emitter.h"
#include "lower/tile_transposes.h"

namespace sb {
namespace {

// ---- Literals and names -----------------------------------------------------------------------

TEST(EmitLiterals, FloatLiteralsAreShortAndExact) {
  EXPECT_EQ(float_literal(0.1, DType::F32), "0.1f");
  EXPECT_EQ(float_literal(0.1, DType::F64), "0.1");
  EXPECT_EQ(float_literal(1.0, DType::F32), "1.0f");
  EXPECT_EQ(float_literal(0.0, DType::F64), "0.0");
  EXPECT_EQ(float_literal(-0.5, DType::F32), "-0.5f");
  EXPECT_EQ(float_literal(2.5e-7, DType::F32), "2.5e-7f");
  EXPECT_EQ(float_literal(1e-5, DType::F64), "1.0e-5");
  EXPECT_EQ(float_literal(1e20, DType::F64), "1.0e20");
  EXPECT_EQ(float_literal(100000.0, DType::F32), "100000.0f");
  EXPECT_EQ(float_literal(3.141592653589793, DType::F32), "3.1415927f");
  EXPECT_EQ(float_literal(3.141592653589793, DType::F64), "3.141592653589793");
  EXPECT_EQ(float_literal(16777217.0, DType::F32), "16777216.0f");  // rounded to f32 first
  EXPECT_EQ(float_literal(1e9, DType::F32), "1.0e9f");
  EXPECT_EQ(float_literal(INFINITY, DType::F32), "INFINITY");
  EXPECT_EQ(float_literal(-INFINITY, DType::F64), "-INFINITY");
}

TEST(EmitLiterals, FloatLiteralsRoundTrip) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(-10, 10);
  std::uniform_int_distribution<int> ex(-40, 40);
  for (int i = 0; i < 20000; ++i) {
    const double v = mant(rng) * std::pow(10.0, ex(rng));
    const std::string d = float_literal(v, DType::F64);
    ASSERT_NE(d.find('.'), std::string::npos) << d;
    EXPECT_EQ(std::strtod(d.c_str(), nullptr), v) << d;
    const float f = static_cast<float>(v);
    if (!std::isfinite(f)) continue;
    std::string s = float_literal(v, DType::F32);
    ASSERT_EQ(s.back(), 'f') << s;
    ASSERT_NE(s.find('.'), std::string::npos) << s;
    s.pop_back();
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), f) << s;
  }
}

TEST(EmitLiterals, IntLiterals) {
  EXPECT_EQ(int_literal(0), "0");
  EXPECT_EQ(int_literal(-5), "-5");
  EXPECT_EQ(int_literal(2147483647), "2147483647");
  EXPECT_EQ(int_literal(2147483648LL), "2147483648LL");
  EXPECT_EQ(int_literal(std::numeric_limits<int64_t>::min()), "INT64_MIN");
}

TEST(EmitNames, ReservedNamesAreMangled) {
  EXPECT_EQ(c_name("x"), "x");
  EXPECT_EQ(c_name("rowmax"), "rowmax");
  EXPECT_EQ(c_name("expf"), "sb_u_expf");
  EXPECT_EQ(c_name("INFINITY"), "sb_u_INFINITY");
  EXPECT_EQ(c_name("threadIdx"), "sb_u_threadIdx");
  EXPECT_EQ(c_name("stderr"), "sb_u_stderr");
  EXPECT_EQ(c_name("BUFSIZ"), "sb_u_BUFSIZ");      // first of the list
  EXPECT_EQ(c_name("warpSize"), "sb_u_warpSize");  // last of the list
}

TEST(EmitText, CodeWriterIndents) {
  CodeWriter w(1);
  w.open("for (;;) {");
  w.line("x = 1;");
  w.line("");
  w.close();
  EXPECT_EQ(w.str(), "  for (;;) {\n    x = 1;\n\n  }\n");
}

TEST(EmitText, WrapCall) {
  EXPECT_EQ(wrap_call("f", {"a", "b"}, ";", 2), "f(a, b);");
  const std::vector<std::string> args = {"const float* __restrict alpha_beta_gamma",
                                         "float* __restrict delta_epsilon", "const int64_t N",
                                         "const int64_t K"};
  const std::string aligned = wrap_call("static void sb_loops_s0", args, " {", 0);
  for (size_t p = 0, q; p < aligned.size(); p = q + 1) {
    q = aligned.find('\n', p);
    if (q == std::string::npos) q = aligned.size();
    EXPECT_LE(q - p, 100u) << aligned;
  }
  EXPECT_NE(aligned.find(",\n                        "), std::string::npos) << aligned;
  const std::string hang =
      wrap_call("__global__ void __launch_bounds__(256) sb_thread_per_output_s0", args, " {", 0);
  EXPECT_NE(hang.find("(\n    const float*"), std::string::npos) << hang;
}

TEST(EmitText, HelpersOnlyWhenUsedInFixedOrder) {
  HelperSet h;
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.definitions("static inline"), "");
  h.use(Helper::MaxF32);
  h.use(Helper::ClampIndex);
  const std::string d = h.definitions("static inline __host__ __device__");
  const size_t clamp = d.find("static inline __host__ __device__ int64_t sb_clamp(");
  const size_t max = d.find("float sb_max_f32(");
  ASSERT_NE(clamp, std::string::npos) << d;
  ASSERT_NE(max, std::string::npos) << d;
  EXPECT_LT(clamp, max);
  EXPECT_EQ(d.find("sb_min_f32"), std::string::npos);
}

// A scan helper takes two 32-byte halves in AVX intrinsics where the target has AVX and no
// AVX-512 (GCC splits the 64-byte vector's shuffles into many more instructions there), and one
// 64-byte vector elsewhere; it reads `src` and writes `dst`.
TEST(EmitText, VectorScanHelpersTakeAvxHalvesWithoutAvx512) {
  HelperSet h;
  EXPECT_EQ(h.use_vector_scan(ReduceOp::Max, DType::F64), "sb_scan_max_f64");
  EXPECT_TRUE(h.has_vector_scans());
  const std::string max = h.definitions("static inline");
  EXPECT_NE(max.find("double sb_scan_max_f64(const double* src, double* dst, double carry) {\n"
                     "#if defined(__AVX__) && !defined(__AVX512F__)\n"),
            std::string::npos)
      << max;
  const size_t halves = max.find("__m256d a = _mm256_loadu_pd(src), b = _mm256_loadu_pd(src + 4);");
  const size_t wide = max.find("#else\n  typedef double sb_vec __attribute__((vector_size(64)));");
  ASSERT_NE(halves, std::string::npos) << max;
  ASSERT_NE(wide, std::string::npos) << max;
  EXPECT_LT(halves, wide);
  // Two steps per f64 half (one within the 16-byte lanes, one across); the max propagates NaN;
  // the first half's total carries into the second.
  EXPECT_NE(max.find("_mm256_blend_pd(_mm256_permute_pd(a, 0x0), id, 0x5)"), std::string::npos);
  EXPECT_NE(max.find("_mm256_blend_pd(_mm256_permute_pd(_mm256_permute2f128_pd(b, b, 0x00), 0xF), "
                     "id, 0x3)"),
            std::string::npos);
  EXPECT_NE(max.find("_mm256_cmp_pd(s, a, _CMP_GT_OQ), _mm256_cmp_pd(s, s, _CMP_UNORD_Q)"),
            std::string::npos);
  EXPECT_NE(max.find("const double mid = sb_max_f64(carry, a[3]);\n"
                     "  const double total = sb_max_f64(mid, b[3]);"),
            std::string::npos)
      << max;
  EXPECT_NE(max.find("_mm256_storeu_pd(dst + 4, "), std::string::npos) << max;
  EXPECT_NE(max.find("__builtin_memcpy(dst, &x, sizeof x);"), std::string::npos) << max;
  HelperSet s;
  EXPECT_FALSE(s.has_vector_scans());
  s.use_vector_scan(ReduceOp::Sum, DType::F32);
  const std::string sum = s.definitions("static inline");
  // Three steps per f32 half: shifts by 1 and 2 within the 16-byte lanes, then one across.
  EXPECT_NE(sum.find("_mm256_blend_ps(_mm256_permute_ps(a, 0x90), id, 0x11)"), std::string::npos);
  EXPECT_NE(sum.find("_mm256_blend_ps(_mm256_permute_ps(b, 0x40), id, 0x33)"), std::string::npos);
  EXPECT_NE(sum.find("_mm256_permute2f128_ps(a, a, 0x00), 0xFF), id, 0x0F)"), std::string::npos);
  EXPECT_NE(sum.find("a = _mm256_add_ps(s, a);"), std::string::npos) << sum;
  EXPECT_NE(sum.find("typedef float sb_vec __attribute__((vector_size(64)));"), std::string::npos)
      << sum;
}

// ---- Lowering of hand-made IR ------------------------------------------------------------------

ExprPtr node(ExprKind k, DType t) {
  auto e = std::make_unique<Expr>();
  e->kind = k;
  e->type = t;
  return e;
}
ExprPtr lit(double v, DType t = DType::F32) {
  auto e = node(ExprKind::FloatLit, t);
  e->fval = v;
  return e;
}
ExprPtr ilit(int64_t v, DType t = DType::Index) {
  auto e = node(ExprKind::IntLit, t);
  e->ival = v;
  return e;
}
ExprPtr ref(ExprKind k, int r, DType t = DType::Index) {
  auto e = node(k, t);
  e->ref = r;
  return e;
}
ExprPtr bin(BinOp op, ExprPtr a, ExprPtr b, DType t) {
  auto e = node(ExprKind::Binary, t);
  e->bop = op;
  e->args.push_back(std::move(a));
  e->args.push_back(std::move(b));
  return e;
}
ExprPtr read(int t, DType ty, ExprPtr sub) {
  auto e = ref(ExprKind::Read, t, ty);
  if (sub) e->args.push_back(std::move(sub));
  return e;
}

// sizes N; tensors x: f32[N] (in, `boundary`), y: f32[N] (out); y[i] = rhs.
Spec tiny_spec(Boundary boundary = Boundary::None) {
  Spec s;
  s.name = "tiny";
  SizeParam n;
  n.name = "N";
  n.bench = {8};
  n.verify = {8};
  s.sizes.push_back(n);
  Tensor x;
  x.name = "x";
  x.shape.push_back(ref(ExprKind::SizeRef, 0));
  x.boundary = boundary;
  Tensor y;
  y.name = "y";
  y.role = Role::Out;
  y.shape.push_back(ref(ExprKind::SizeRef, 0));
  s.tensors.push_back(std::move(x));
  s.tensors.push_back(std::move(y));
  Statement st;
  st.out = 1;
  IndexVar i;
  i.name = "i";
  i.lo = ilit(0);
  i.hi = ref(ExprKind::SizeRef, 0);
  st.vars.push_back(std::move(i));
  s.stmts.push_back(std::move(st));
  return s;
}

std::string lower(const Spec& s, const Expr& e, std::string* hoisted = nullptr) {
  HelperSet h;
  StmtLowering L(s, s.stmts[0], &h);
  CodeWriter w;
  std::string out = L.expr(e, w);
  if (hoisted) *hoisted = w.str();
  return out;
}

TEST(EmitLowering, PrecedenceKeepsMeaning) {
  Spec s = tiny_spec();
  auto xi = [] { return read(0, DType::F32, ref(ExprKind::IndexVar, 0)); };
  // x[i] - (x[i] - 1.0f): the right operand keeps its parentheses.
  auto e = bin(BinOp::Sub, xi(), bin(BinOp::Sub, xi(), lit(1), DType::F32), DType::F32);
  EXPECT_EQ(lower(s, *e), "x[i] - (x[i] - 1.0f)");
  // (x[i] + 2.0f) * x[i]
  e = bin(BinOp::Mul, bin(BinOp::Add, xi(), lit(2), DType::F32), xi(), DType::F32);
  EXPECT_EQ(lower(s, *e), "(x[i] + 2.0f) * x[i]");
  // -(-x[i]) never prints "--".
  auto neg = node(ExprKind::Unary, DType::F32);
  neg->uop = UnOp::Neg;
  auto inner = node(ExprKind::Unary, DType::F32);
  inner->uop = UnOp::Neg;
  inner->args.push_back(xi());
  neg->args.push_back(std::move(inner));
  EXPECT_EQ(lower(s, *neg), "-(-x[i])");
  // a < b && c < d || e: && inside || is parenthesised.
  auto cmp = [&](double v) { return bin(BinOp::Lt, xi(), lit(v), DType::Bool); };
  e = bin(BinOp::Or, bin(BinOp::And, cmp(1), cmp(2), DType::Bool), cmp(3), DType::Bool);
  EXPECT_EQ(lower(s, *e), "(x[i] < 1.0f && x[i] < 2.0f) || x[i] < 3.0f");
}

TEST(EmitLowering, IntegerDivisionPrintsTheLegalisedCalls) {
  // lower/legalize_int_div turns integer / and % into div_trunc and rem_trunc (with guards where
  // the divisor may be 0 or -1, tested in legalize_int_div_test.cpp); C spells them natively.
  Spec s = tiny_spec();
  auto i = [] { return ref(ExprKind::IndexVar, 0); };
  auto call = [](Fn fn, ExprPtr a, ExprPtr b) {
    auto e = std::make_unique<Expr>();
    e->kind = ExprKind::Call;
    e->fn = fn;
    e->type = DType::Index;
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  };
  auto e = call(Fn::DivTrunc, i(), ilit(2));
  EXPECT_EQ(lower(s, *e), "i / 2");
  e = call(Fn::RemTrunc, i(), ref(ExprKind::SizeRef, 0));
  EXPECT_EQ(lower(s, *e), "i % N");
  e = call(Fn::DivTrunc, i(), bin(BinOp::Sub, i(), ilit(1), DType::Index));
  EXPECT_EQ(lower(s, *e), "i / (i - 1)");
  e = bin(BinOp::Mul, i(), call(Fn::RemTrunc, i(), ilit(3)), DType::Index);
  EXPECT_EQ(lower(s, *e), "i * (i % 3)");
  auto a = [] { return read(0, DType::I32, ref(ExprKind::IndexVar, 0)); };
  e = bin(BinOp::Add, a(), ilit(1, DType::I32), DType::I32);
  EXPECT_EQ(lower(s, *e), "sb_add_i32(x[i], 1)");
}

TEST(EmitLowering, BoundaryReads) {
  // x[i - 1] with boundary zero: a guarded load hoisted before the use.
  Spec z = tiny_spec(Boundary::Zero);
  auto shifted =
      read(0, DType::F32, bin(BinOp::Sub, ref(ExprKind::IndexVar, 0), ilit(1), DType::Index));
  std::string hoisted;
  EXPECT_EQ(lower(z, *shifted, &hoisted), "sb_ld0_x");
  EXPECT_EQ(
      hoisted,
      "const int64_t sb_ld0_x_i0 = i - 1;\n"
      "const float sb_ld0_x = (sb_ld0_x_i0 >= 0 && sb_ld0_x_i0 < N) ? x[sb_ld0_x_i0] : 0.0f;\n");
  // x[i] needs no guard: i ranges exactly over x's extent.
  auto plain = read(0, DType::F32, ref(ExprKind::IndexVar, 0));
  EXPECT_EQ(lower(z, *plain, &hoisted), "x[i]");
  EXPECT_EQ(hoisted, "");
  // boundary clamp clamps the subscript in place.
  Spec c = tiny_spec(Boundary::Clamp);
  EXPECT_EQ(lower(c, *shifted), "x[sb_clamp(i - 1, N)]");
}

TEST(EmitLowering, ReductionsAreHoistedIntoAccumulatorLoops) {
  Spec s = tiny_spec();
  Statement& st = s.stmts[0];
  IndexVar k;
  k.name = "k";
  k.is_reduction = true;
  k.lo = ilit(0);
  k.hi = bin(BinOp::Add, ref(ExprKind::IndexVar, 0), ilit(1), DType::Index);
  st.vars.push_back(std::move(k));
  auto red = node(ExprKind::Reduce, DType::F32);
  red->rop = ReduceOp::Max;
  red->ref = 1;
  red->args.push_back(read(0, DType::F32, ref(ExprKind::IndexVar, 1)));
  auto e = bin(BinOp::Mul, lit(2), std::move(red), DType::F32);
  std::string hoisted;
  EXPECT_EQ(lower(s, *e, &hoisted), "2.0f * sb_acc0");
  EXPECT_EQ(hoisted,
            "float sb_acc0 = -INFINITY;\n"
            "for (int64_t k = 0; k < i + 1; ++k) {\n"
            "  sb_acc0 = sb_max_f32(sb_acc0, x[k]);\n"
            "}\n");
}

// ---- Registry ----------------------------------------------------------------------------------

TEST(EmitRegistry, OrderLookupAndParameters) {
  const auto& all = all_emitters();
  ASSERT_GE(all.size(), 2u);  // cpu and cuda first, then the other backends
  EXPECT_EQ(all[0]->backend(), "cpu");
  EXPECT_EQ(all[1]->backend(), "cuda");
  EXPECT_EQ(find_emitter("cpu")->extension(), "cpp");
  EXPECT_EQ(find_emitter("cuda")->extension(), "cu");
  EXPECT_EQ(find_emitter("metal"), nullptr);

  const Emitter& cuda = *find_emitter("cuda");
  const StrategyInfo* gs = find_strategy(cuda, "grid_stride");
  ASSERT_NE(gs, nullptr);
  EXPECT_EQ(gs, find_strategy(cuda, "grid_stride"));  // stable pointer
  EXPECT_EQ(find_strategy(cuda, "loops"), nullptr);
  Variant v;
  v.name = "g";
  v.strategy = "grid_stride";
  v.params["block_size"] = 128;
  EXPECT_EQ(param(v, *gs, "block_size"), 128);
  EXPECT_EQ(param(v, *gs, "blocks_per_sm"), 4);
  const StrategyInfo* tpo = find_strategy(cuda, "thread_per_output");
  ASSERT_NE(tpo, nullptr);
  ASSERT_EQ(tpo->params.size(), 1u);
  EXPECT_EQ(tpo->params[0].def, 256);
  EXPECT_TRUE(tpo->params[0].power_of_two);
  EXPECT_EQ(tpo->params[0].min, 32);
  EXPECT_EQ(tpo->params[0].max, 1024);
  const StrategyInfo* omp = find_strategy(*find_emitter("cpu"), "omp_simd");
  ASSERT_NE(omp, nullptr);
  ASSERT_EQ(omp->params.size(), 3u);
  EXPECT_EQ(omp->params[0].name, "approx_math");
  EXPECT_EQ(omp->params[0].def, 0);
  EXPECT_EQ(omp->params[0].min, 0);
  EXPECT_EQ(omp->params[0].max, 1);
  // The tiles of lower/tile_transposes.h, shared with mojo's vectorize_parallel.
  EXPECT_EQ(omp->params[1].name, "tile");
  EXPECT_EQ(omp->params[1].def, Tiles{}.outer);
  EXPECT_EQ(omp->params[2].name, "tile_inner");
  EXPECT_EQ(omp->params[2].def, Tiles{}.inner);
  EXPECT_EQ(param_or(Variant{}, *omp, "tile_inner", -1), Tiles{}.inner);
  EXPECT_EQ(param_or(Variant{}, *omp, "mc", -1), -1);
  EXPECT_TRUE(cuda.check_variant(Spec{}, v).ok());
}

// ---- Whole files -------------------------------------------------------------------------------

class EmitFiles : public ::testing::TestWithParam<std::string> {};

TEST_P(EmitFiles, DeterministicAndFollowTheContract) {
  const std::string path = std::string(SB_TESTS_DIR) + "/" + GetParam();
  Result<Spec> a = load_and_check(path);
  ASSERT_TRUE(a.ok()) << format_error(a.error());
  Result<Spec> b = load_and_check(path);
  ASSERT_TRUE(b.ok());
  const Spec& s = a.value();
  for (const Emitter* em : all_emitters()) {
    SCOPED_TRACE(em->backend());
    const GeneratedFile f = em->emit(s);
    EXPECT_EQ(f.content, em->emit(s).content);
    EXPECT_EQ(f.content, em->emit(b.value()).content);
    EXPECT_EQ(f.path, s.name + "/" + em->backend() + "/" + s.name + "." + em->extension());
    const std::string& c = f.content;
    EXPECT_NE(c.find("specbench gen specs/" + s.name + ".yaml"), std::string::npos);
    EXPECT_EQ(c.find(s.doc), std::string::npos) << "the doc string must not be pasted";
    // A derived backend's translation unit in the ABI's sense is its launcher file (mojo_gpu:
    // <name>.launch.cpp), which holds the C-family contract checked below.
    if (!em->derived_from().empty()) {
      ASSERT_EQ(f.companions.size(), 1u);
      EXPECT_EQ(f.companions[0].path, s.name + "/" + em->backend() + "/" + s.name + ".launch.cpp");
      EXPECT_EQ(f.companions[0].content, em->emit(s).companions[0].content);
      const std::string& l = f.companions[0].content;
      EXPECT_NE(l.find("#include \"specbench_abi.h\""), std::string::npos);
      EXPECT_NE(l.find("const sb_module* specbench_module(void)"), std::string::npos);
      for (const Variant& v : backend_variants(s, em->backend()))
        EXPECT_NE(l.find("static int sb_variant_" + v.name + "(const sb_args* sb_a)"),
                  std::string::npos);
      continue;
    }
    // The C-family contract; other languages export the same table their own way.
    if (em->extension() != "cpp" && em->extension() != "cu") {
      EXPECT_NE(c.find("specbench_module"), std::string::npos);
      continue;
    }
    EXPECT_NE(c.find("#include \"specbench_abi.h\""), std::string::npos);
    EXPECT_NE(c.find("const sb_module* specbench_module(void)"), std::string::npos);
    for (const Variant& v : backend_variants(s, em->backend()))
      EXPECT_NE(c.find("static int sb_variant_" + v.name + "(const sb_args* sb_a)"),
                std::string::npos);
    if (!backend_variants(s, em->backend()).empty()) {
      for (const Statement& st : s.stmts)
        EXPECT_NE(c.find("// " + to_string(st, s) + "\n"), std::string::npos);
    }
    if (em->backend() == "cuda") {
      EXPECT_NE(c.find("#ifndef SB_LAUNCH"), std::string::npos);
      EXPECT_EQ(c.find("<<<"), c.rfind("<<<")) << "only the SB_LAUNCH definition launches";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Specs, EmitFiles,
                         ::testing::Values("unit/specs/softmax.yaml", "unit/specs/conv1d.yaml",
                                           "unit/specs/intops.yaml", "unit/specs/dot.yaml",
                                           "golden/specs/stencil.yaml"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param.substr(i.param.rfind('/') + 1);
                           return n.substr(0, n.find('.'));
                         });

}  // namespace
}  // namespace sb
