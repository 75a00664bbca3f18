// The inline f32 exp and tanh approximations of the cpu backend (approx_math): compiled with the
// cpu backend's own compile command, run in a vectorised loop, and compared with double-precision
// libm over a sweep of f32 bit patterns that covers every binade, and at special values.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "backends/common/emit_common.h"
#include "run/runtime.h"
#include "build/toolchain.h"

namespace fs = std::filesystem;

namespace {

using ApplyFn = void (*)(const float*, float*, int64_t);

// The error of `got` against `ref` in units in the last place of the f32 rounding of `ref`
// (subnormal results: the smallest subnormal); 0 when both are the same NaN or infinity.
double ulp_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : INFINITY;
  const float rf = static_cast<float>(ref);
  if (std::isinf(rf)) return got == rf ? 0 : INFINITY;
  if (!std::isfinite(got)) return INFINITY;
  int e = 0;
  std::frexp(rf == 0 ? std::numeric_limits<float>::denorm_min() : rf, &e);
  const double ulp = std::max(std::ldexp(1.0, e - 24), std::ldexp(1.0, -149));
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

class ApproxMathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("specbench_approx_math_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    sb::VectorMath math;
    math.approx_used = {sb::Fn::Exp, sb::Fn::Tanh};
    const std::string src = (dir_ / "approx.cpp").string();
    std::ofstream(src) << "#include <math.h>\n#include <stdint.h>\n\n"
                       << sb::vector_math_declarations(math) << R"(
extern "C" void apply_exp(const float* x, float* y, int64_t n) {
  #pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = sb_approx_expf(x[i]);
}
extern "C" void apply_tanh(const float* x, float* y, int64_t n) {
  #pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = sb_approx_tanhf(x[i]);
}
)";
    const sb::ToolchainOptions tools = sb::default_toolchain_options();
    std::vector<std::string> argv{tools.cxx};
    for (const auto& f : sb::cpu_module_flags(tools)) argv.push_back(f);
    const std::string so = (dir_ / "approx.so").string();
    argv.insert(argv.end(), {"-o", so, src});
    const sb::ProcessResult r = sb::run_process(argv);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    exp_ = reinterpret_cast<ApplyFn>(dlsym(handle_, "apply_exp"));
    tanh_ = reinterpret_cast<ApplyFn>(dlsym(handle_, "apply_tanh"));
    ASSERT_NE(exp_, nullptr);
    ASSERT_NE(tanh_, nullptr);
  }
  void TearDown() override {
    if (handle_) dlclose(handle_);
    fs::remove_all(dir_);
  }

  // The worst ulp error of `fn` against `ref` over every 251st f32 bit pattern (both signs, all
  // exponents, NaNs and infinities included) and the values in `extra`; `at` receives its input.
  double worst(ApplyFn fn, double (*ref)(double), const std::vector<float>& extra, float& at) {
    std::vector<float> x;
    for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 251) {
      const auto bits = static_cast<uint32_t>(b);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      x.push_back(f);
    }
    x.insert(x.end(), extra.begin(), extra.end());
    std::vector<float> y(x.size());
    fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double w = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = ulp_error(y[i], ref(x[i]));
      if (e > w) {
        w = e;
        at = x[i];
      }
    }
    return w;
  }

  fs::path dir_;
  void* handle_ = nullptr;
  ApplyFn exp_ = nullptr;
  ApplyFn tanh_ = nullptr;
};

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST_F(ApproxMathTest, ExpWithinFourUlpEverywhere) {
  // Around the overflow threshold, the subnormal range and exact zero.
  const std::vector<float> extra{0.0f,    -0.0f,    kInf,       -kInf,   kNaN,    88.72f, 88.73f,
                                 89.5f,   -87.3f,   -103.97f,   -104.5f, -200.0f, 1e-30f, -1e-30f,
                                 0.3466f, -0.3466f, 0.6931472f, -10.0f,  10.0f};
  float at = 0;
  const double w = worst(
      exp_, [](double v) { return std::exp(v); }, extra, at);
  EXPECT_LE(w, 4.0) << "at x = " << at;
}

TEST_F(ApproxMathTest, TanhWithinSixUlpEverywhere) {
  // Tiny arguments (relative accuracy near 0), the end of the fitted range, saturation.
  const std::vector<float> extra{0.0f,  -0.0f,  kInf,   -kInf,   kNaN,   1e-30f,  -1e-30f,
                                 1e-6f, -1e-6f, 0.173f, -0.173f, 0.347f, 9.0f,    -9.0f,
                                 9.01f, 20.0f,  -20.0f, 1e30f,   -1e30f, 0.5493f, -0.5493f};
  float at = 0;
  const double w = worst(
      tanh_, [](double v) { return std::tanh(v); }, extra, at);
  EXPECT_LE(w, 6.0) << "at x = " << at;
}

TEST_F(ApproxMathTest, SignsAndSpecialValues) {
  const std::vector<float> x{0.0f, -0.0f, kInf, -kInf, kNaN, -1e-30f};
  std::vector<float> e(x.size()), t(x.size());
  exp_(x.data(), e.data(), static_cast<int64_t>(x.size()));
  tanh_(x.data(), t.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(e[0], 1.0f);
  EXPECT_EQ(e[2], kInf);
  EXPECT_EQ(e[3], 0.0f);
  EXPECT_TRUE(std::isnan(e[4]));
  EXPECT_TRUE(std::signbit(t[1]) && t[1] == 0.0f);  // tanh(-0) = -0
  EXPECT_EQ(t[2], 1.0f);
  EXPECT_EQ(t[3], -1.0f);
  EXPECT_TRUE(std::isnan(t[4]));
  EXPECT_EQ(t[5], -1e-30f);
}

}  // namespace
