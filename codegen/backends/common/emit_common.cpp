#include "backends/common/emit_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

#include "ir/affine.h"
#include "ir/shadowing.h"
#include "lower/parallelize.h"
#include "lower/patterns.h"
#include "lower/running_scans.h"
#include "lower/vectorize.h"
#include "support/diag.h"

namespace sb {

// ---- Text -------------------------------------------------------------------------------------

void CodeWriter::line(const std::string& text) {
  if (!text.empty()) out_.append(static_cast<size_t>(indent_) * 2, ' ').append(text);
  out_ += '\n';
}

void CodeWriter::open(const std::string& text) {
  line(text);
  ++indent_;
}

void CodeWriter::close(const std::string& text) {
  SB_ASSERT(indent_ > 0, "unbalanced CodeWriter::close");
  --indent_;
  line(text);
}

void CodeWriter::close_open(const std::string& text) {
  close(text);
  ++indent_;
}

std::string wrap_call(const std::string& head, const std::vector<std::string>& args,
                      const std::string& tail, int indent) {
  constexpr size_t kColumns = 100;
  std::string one = head + "(";
  for (size_t i = 0; i < args.size(); ++i) one += (i ? ", " : "") + args[i];
  one += ")" + tail;
  if (indent + one.size() <= kColumns || args.empty()) return one;

  // Aligned after the parenthesis when that leaves room; otherwise (a long head) break after the
  // parenthesis and indent the arguments by four spaces, as clang-format does.
  const size_t aligned = indent + head.size() + 1;
  const bool hang = aligned > 50;
  const size_t align = hang ? indent + 4 : aligned;
  std::string out = head + "(";
  size_t col = indent + out.size();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string end = i + 1 == args.size() ? ")" + tail : ",";
    const bool first = i == 0;
    if (!(first && hang) && col + (first ? 0 : 1) + args[i].size() + end.size() <= kColumns) {
      out += (first ? "" : " ") + args[i];
      col += (first ? 0 : 1) + args[i].size();
    } else {
      out += "\n" + std::string(align, ' ') + args[i];
      col = align + args[i].size();
    }
    if (i + 1 < args.size()) {
      out += ",";
      ++col;
    }
  }
  return out + ")" + tail;
}

// ---- Literals and names -----------------------------------------------------------------------

const char* c_type(DType t) {
  return scalar(t).c_type;
}

std::string float_literal(double v, DType t) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  const ScalarType& st = scalar(t);
  SB_ASSERT(st.kind == ScalarKind::Float && !is_storage_type(t),
            std::string("a floating-point literal of type ") + st.name);
  const double x = st.round(v);
  char buf[64];
  // Integral values print in full ("100000.0f"); others as the shortest %g text that reads back.
  if (x == std::trunc(x) && std::fabs(x) < st.integral_limit) {
    std::snprintf(buf, sizeof buf, "%.0f", x);
  } else {
    for (int p = 1; p <= st.max_digits; ++p) {
      std::snprintf(buf, sizeof buf, "%.*g", p, x);
      if (st.parse(buf) == x) break;
    }
  }
  std::string s = buf;
  std::string mantissa = s, exponent;
  if (size_t e = s.find('e'); e != std::string::npos) {
    mantissa = s.substr(0, e);
    // "e-06" -> "e-6", "e+20" -> "e20".
    std::string digits = s.substr(e + 1);
    std::string sign;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
      if (digits[0] == '-') sign = "-";
      digits = digits.substr(1);
    }
    while (digits.size() > 1 && digits[0] == '0') digits = digits.substr(1);
    exponent = "e" + sign + digits;
  }
  if (mantissa.find('.') == std::string::npos) mantissa += ".0";
  return mantissa + exponent + st.c_literal_suffix;
}

std::string int_literal(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) return "INT64_MIN";
  std::string s = std::to_string(v);
  if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min()) s += "LL";
  return s;
}

namespace {

constexpr CMath kCMath[] = {
    {Fn::Exp, "exp", true},     {Fn::Log, "log", true},      {Fn::Sqrt, "sqrt", false},
    {Fn::Tanh, "tanh", true},   {Fn::Erf, "erf", true},      {Fn::Log1p, "log1p", true},
    {Fn::Expm1, "expm1", true}, {Fn::Pow, "pow", true},      {Fn::Sin, "sin", true},
    {Fn::Cos, "cos", true},     {Fn::Floor, "floor", false}, {Fn::Ceil, "ceil", false},
    {Fn::Round, "rint", false},  // halves to even in the default rounding mode
};

// Identifiers that generated code uses or that the headers it includes define as macros; a spec
// name equal to one of these would shadow or be replaced by it. Sorted for binary search.
constexpr const char* kReserved[] = {
    "BUFSIZ",
    "EOF",
    "FILE",
    "FILENAME_MAX",
    "FP_INFINITE",
    "FP_NAN",
    "FP_NORMAL",
    "FP_SUBNORMAL",
    "FP_ZERO",
    "HUGE_VAL",
    "HUGE_VALF",
    "HUGE_VALL",
    "INFINITY",
    "INT16_MAX",
    "INT16_MIN",
    "INT32_C",
    "INT32_MAX",
    "INT32_MIN",
    "INT64_C",
    "INT64_MAX",
    "INT64_MIN",
    "INT8_MAX",
    "INT8_MIN",
    "INTMAX_MAX",
    "INTMAX_MIN",
    "INTPTR_MAX",
    "INTPTR_MIN",
    "M_1_PI",
    "M_2_PI",
    "M_2_SQRTPI",
    "M_E",
    "M_LN10",
    "M_LN2",
    "M_LOG10E",
    "M_LOG2E",
    "M_PI",
    "M_PI_2",
    "M_PI_4",
    "M_SQRT1_2",
    "M_SQRT2",
    "NAN",
    "NULL",
    "PTRDIFF_MAX",
    "PTRDIFF_MIN",
    "SIZE_MAX",
    "SPECBENCH_ABI_H",
    "SPECBENCH_ABI_VERSION",
    "UINT16_MAX",
    "UINT32_C",
    "UINT32_MAX",
    "UINT64_C",
    "UINT64_MAX",
    "UINT8_MAX",
    "blockDim",
    "blockIdx",
    "cudaDevAttrMultiProcessorCount",
    "cudaDeviceGetAttribute",
    "cudaErrorInvalidValue",
    "cudaError_t",
    "cudaGetDevice",
    "cudaGetErrorString",
    "cudaGetLastError",
    "cudaStream_t",
    "cudaSuccess",
    "dim3",
    "errno",
    "fabs",
    "fabsf",
    "fmax",
    "fmaxf",
    "fmin",
    "fminf",
    "fmod",
    "fmodf",
    "fpclassify",
    "fprintf",
    "gridDim",
    "i386",
    "int16_t",
    "int32_t",
    "int64_t",
    "int8_t",
    "intptr_t",
    "isfinite",
    "isinf",
    "isnan",
    "linux",
    "math_errhandling",
    "printf",
    "ptrdiff_t",
    "signbit",
    "size_t",
    "stderr",
    "stdin",
    "stdout",
    "threadIdx",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "uint8_t",
    "uintptr_t",
    "unix",
    "warpSize",
};

bool is_reserved(const std::string& name) {
  static const bool sorted =
      std::is_sorted(std::begin(kReserved), std::end(kReserved),
                     [](const char* a, const char* b) { return std::string(a) < std::string(b); });
  SB_ASSERT(sorted, "kReserved must be sorted");
  if (std::binary_search(std::begin(kReserved), std::end(kReserved), name,
                         [](const std::string& a, const std::string& b) { return a < b; }))
    return true;
  for (const CMath& m : kCMath)  // the libm functions generated code calls
    if (name == m.libm || name == std::string(m.libm) + "f") return true;
  return false;
}

}  // namespace

std::string c_name(const std::string& name) {
  return is_reserved(name) ? "sb_u_" + name : name;
}

// ---- Helpers in generated code ----------------------------------------------------------------

namespace {

// Signature (after the qualifiers) and body of each helper, in Helper order.
struct HelperText {
  Helper h;
  const char* sig;
  const char* body;
};

constexpr HelperText kHelpers[] = {
    {Helper::ClampIndex, "int64_t sb_clamp(int64_t v, int64_t n)",
     "return v < 0 ? 0 : (v >= n ? n - 1 : v);"},
    {Helper::AddI32, "int32_t sb_add_i32(int32_t a, int32_t b)",
     "return (int32_t)((uint32_t)a + (uint32_t)b);"},
    {Helper::SubI32, "int32_t sb_sub_i32(int32_t a, int32_t b)",
     "return (int32_t)((uint32_t)a - (uint32_t)b);"},
    {Helper::MulI32, "int32_t sb_mul_i32(int32_t a, int32_t b)",
     "return (int32_t)((uint32_t)a * (uint32_t)b);"},
    {Helper::NegI32, "int32_t sb_neg_i32(int32_t a)", "return (int32_t)(0u - (uint32_t)a);"},
    {Helper::AddI64, "int64_t sb_add_i64(int64_t a, int64_t b)",
     "return (int64_t)((uint64_t)a + (uint64_t)b);"},
    {Helper::SubI64, "int64_t sb_sub_i64(int64_t a, int64_t b)",
     "return (int64_t)((uint64_t)a - (uint64_t)b);"},
    {Helper::MulI64, "int64_t sb_mul_i64(int64_t a, int64_t b)",
     "return (int64_t)((uint64_t)a * (uint64_t)b);"},
    {Helper::NegI64, "int64_t sb_neg_i64(int64_t a)",
     "return (int64_t)((uint64_t)0 - (uint64_t)a);"},
    {Helper::MinI32, "int32_t sb_min_i32(int32_t a, int32_t b)", "return a < b ? a : b;"},
    {Helper::MaxI32, "int32_t sb_max_i32(int32_t a, int32_t b)", "return a > b ? a : b;"},
    {Helper::AbsI32, "int32_t sb_abs_i32(int32_t a)",
     "return a < 0 ? (int32_t)(0u - (uint32_t)a) : a;"},
    {Helper::MinI64, "int64_t sb_min_i64(int64_t a, int64_t b)", "return a < b ? a : b;"},
    {Helper::MaxI64, "int64_t sb_max_i64(int64_t a, int64_t b)", "return a > b ? a : b;"},
    {Helper::AbsI64, "int64_t sb_abs_i64(int64_t a)",
     "return a < 0 ? (int64_t)((uint64_t)0 - (uint64_t)a) : a;"},
    // NaN from either side: b's through the select, a's through the test. Written as two
    // selects, not `(a > b || a != a) ? a : b`: with -fno-trapping-math (the cpu modules' flags,
    // harness/run/runtime.cpp) GCC 12 kept that form as branches in maxpool2d's plain loop nest,
    // 216.7 ms against 16.7 ms vectorised (one thread, N = 32, C = 64, H = W = 112, Zen 3); in
    // this form it vectorises again (16.9 ms).
    {Helper::MinF32, "float sb_min_f32(float a, float b)",
     "const float m = a < b ? a : b; return a != a ? a : m;"},
    {Helper::MaxF32, "float sb_max_f32(float a, float b)",
     "const float m = a > b ? a : b; return a != a ? a : m;"},
    {Helper::MinF64, "double sb_min_f64(double a, double b)",
     "const double m = a < b ? a : b; return a != a ? a : m;"},
    {Helper::MaxF64, "double sb_max_f64(double a, double b)",
     "const double m = a > b ? a : b; return a != a ? a : m;"},
    {Helper::F32ToI32, "int32_t sb_f32_to_i32(float x)",
     "return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;"},
    {Helper::F64ToI32, "int32_t sb_f64_to_i32(double x)",
     "return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;"},
    {Helper::F32ToI64, "int64_t sb_f32_to_i64(float x)",
     "return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN;"},
    {Helper::F64ToI64, "int64_t sb_f64_to_i64(double x)",
     "return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN;"},
};
static_assert(std::size(kHelpers) == static_cast<size_t>(Helper::kCount));

// Comments introducing groups of helpers, keyed by the first helper of the group.
const char* group_comment(Helper h) {
  switch (h) {
    case Helper::ClampIndex:
      return "// Subscript clamped into [0, n - 1] (boundary: clamp).";
    case Helper::AddI32:
      return "// i32 and i64 arithmetic wraps (two's complement); x / 0 and x % 0 are 0, as in "
             "the reference.";
    case Helper::MinI32:
      return "// Integer min, max and abs.";
    case Helper::MinF32:
      return "// Floating-point min and max; NaN propagates.";
    case Helper::F32ToI32:
      return "// Truncating casts; NaN and out-of-range values give the minimum.";
    default:
      return nullptr;
  }
}

// The group a helper belongs to: the nearest preceding helper with a group comment.
Helper group_of(Helper h) {
  for (int i = static_cast<int>(h); i >= 0; --i)
    if (group_comment(static_cast<Helper>(i))) return static_cast<Helper>(i);
  return Helper::ClampIndex;
}

}  // namespace

namespace {

std::string omp_reduction_name(DType t, bool max) {
  return std::string("sb_omp_") + (max ? "max_" : "min_") + scalar(t).suffix;
}

}  // namespace

std::string HelperSet::use_omp_reduction(DType t, bool max) {
  SB_ASSERT(scalar(t).kind == ScalarKind::Float,
            "an OpenMP reduction of a helper that is no floating-point min or max");
  used_.insert(min_max_helper(t, max));
  omp_.insert({t, max});
  return omp_reduction_name(t, max);
}

std::string HelperSet::definitions(const std::string& qualifiers) const {
  std::string out;
  int last_group = -1;
  for (const HelperText& t : kHelpers) {
    if (!used_.count(t.h)) continue;
    const int group = static_cast<int>(group_of(t.h));
    if (group != last_group) {
      if (!out.empty()) out += "\n";
      out += std::string(group_comment(static_cast<Helper>(group))) + "\n";
      last_group = group;
    }
    std::string one = qualifiers + " " + t.sig + " { " + t.body + " }";
    if (one.size() <= 100) {
      out += one + "\n";
    } else {
      out += qualifiers + " " + t.sig + " {\n  " + t.body + "\n}\n";
    }
  }
  if (!omp_.empty())
    out +=
        "\n// OpenMP reductions that combine threads and SIMD lanes with the helpers above "
        "(OpenMP's\n"
        "// own max and min do not propagate NaN).\n";
  for (const auto& [t, max] : omp_) {
    const std::string fn = std::string(max ? "sb_max_" : "sb_min_") + scalar(t).suffix;
    out += "#pragma omp declare reduction(" + omp_reduction_name(t, max) + " : " + c_type(t) +
           " : omp_out = " + fn + "(omp_out, omp_in)) \\\n    initializer(omp_priv = " +
           reduce_identity(max ? ReduceOp::Max : ReduceOp::Min, t) + ")\n";
  }
  if (!scans_.empty())
    out += std::string(out.empty() ? "" : "\n") +
           "// Running scans a vector at a time: sb_scan_<op>_<type>(src, dst, carry) writes\n"
           "// carry op src[0] op ... op src[q] to dst[q] (dst may be src) and returns the new\n"
           "// carry. The lanes combine in log2(lanes) steps, each with a copy shifted by 1, 2,\n"
           "// 4, ... lanes (the identity shifted in); the carry joins once per vector.\n";
  for (const auto& [op, t] : scans_) {
    const std::string T = c_type(t), sfx = scalar(t).suffix;
    const int lanes = vector_scan_lanes(t);
    // `a op b` on vectors (a the earlier lanes) and on the scalar carry, as the scalar walk
    // combines its accumulator (a) with the next term (b).
    auto vec_op = [&](const std::string& a, const std::string& b) -> std::string {
      switch (op) {
        case ReduceOp::Sum:
          return a + " + " + b;
        case ReduceOp::Prod:
          return a + " * " + b;
        case ReduceOp::Max:
          return "(" + a + " > " + b + " | " + a + " != " + a + ") ? " + a + " : " + b;
        case ReduceOp::Min:
          return "(" + a + " < " + b + " | " + a + " != " + a + ") ? " + a + " : " + b;
        case ReduceOp::ArgMax:
        case ReduceOp::ArgMin:
          break;
      }
      SB_ASSERT(false, "a vector scan of an arg-reduction");
      return "";
    };
    auto scalar_op = [&](const std::string& a, const std::string& b) -> std::string {
      if (op == ReduceOp::Sum) return a + " + " + b;
      if (op == ReduceOp::Prod) return a + " * " + b;
      return std::string(op == ReduceOp::Max ? "sb_max_" : "sb_min_") + sfx + "(" + a + ", " +
             b + ")";
    };
    out += qualifiers + " " + T + " " + vector_scan_name(op, t) + "(const " + T + "* src, " + T +
           "* dst, " + T + " carry) {\n";
    // With AVX and without AVX-512, two 32-byte halves in intrinsics, the first's total carried
    // into the second. Each half takes the steps within its 16-byte lanes first (one-cycle
    // in-lane permutes), then one across them. GCC 12 splits the 64-byte vector's shuffles
    // below, and a half's shuffles in the other order, into many more instructions on AVX2
    // (prefix_sum's 8192-element walk: 3.5 us against 2.5 us in intrinsics; cummax's compares
    // and selects went lane by lane, 8x slower). Elsewhere, one 64-byte vector.
    const bool f32 = t == DType::F32;
    const std::string V = f32 ? "__m256" : "__m256d", X = f32 ? "ps" : "pd";
    const int half = f32 ? 8 : 4;
    SB_ASSERT(2 * half == lanes, "the AVX halves of a vector scan");
    // `a op b` on AVX vectors, a and b plain names (each may be read twice).
    auto avx_op = [&](const std::string& a, const std::string& b) -> std::string {
      const std::string fn = "_mm256_";
      switch (op) {
        case ReduceOp::Sum:
          return fn + "add_" + X + "(" + a + ", " + b + ")";
        case ReduceOp::Prod:
          return fn + "mul_" + X + "(" + a + ", " + b + ")";
        case ReduceOp::Max:
        case ReduceOp::Min:
          return fn + "blendv_" + X + "(" + b + ", " + a + ", " + fn + "or_" + X + "(" + fn +
                 "cmp_" + X + "(" + a + ", " + b +
                 (op == ReduceOp::Max ? ", _CMP_GT_OQ)" : ", _CMP_LT_OQ)") + ", " + fn + "cmp_" +
                 X + "(" + a + ", " + a + ", _CMP_UNORD_Q)))";
        case ReduceOp::ArgMax:
        case ReduceOp::ArgMin:
          break;
      }
      SB_ASSERT(false, "a vector scan of an arg-reduction");
      return "";
    };
    // Lane q of step k's copy of `x` holds x[q - 2^k] within the half, the identity where q < 2^k;
    // the last step's copy is lane half/2 - 1 broadcast into the upper 16-byte lane.
    auto avx_steps = [&](const std::string& x) -> std::vector<std::string> {
      if (f32)
        return {"_mm256_blend_ps(_mm256_permute_ps(" + x + ", 0x90), id, 0x11)",
                "_mm256_blend_ps(_mm256_permute_ps(" + x + ", 0x40), id, 0x33)",
                "_mm256_blend_ps(_mm256_permute_ps(_mm256_permute2f128_ps(" + x + ", " + x +
                    ", 0x00), 0xFF), id, 0x0F)"};
      return {"_mm256_blend_pd(_mm256_permute_pd(" + x + ", 0x0), id, 0x5)",
              "_mm256_blend_pd(_mm256_permute_pd(_mm256_permute2f128_pd(" + x + ", " + x +
                  ", 0x00), 0xF), id, 0x3)"};
    };
    const std::string H = std::to_string(half), last = std::to_string(half - 1);
    out += "#if defined(__AVX__) && !defined(__AVX512F__)\n";
    out += "  const " + V + " id = _mm256_set1_" + X + "(" + reduce_identity(op, t) + ");\n";
    out += "  " + V + " a = _mm256_loadu_" + X + "(src), b = _mm256_loadu_" + X + "(src + " + H +
           ");\n";
    for (size_t k = 0; k < avx_steps("a").size(); ++k)
      for (const std::string x : {"a", "b"}) {
        out += "  {\n    const " + V + " s = " + avx_steps(x)[k] + ";\n";
        out += "    " + x + " = " + avx_op("s", x) + ";\n  }\n";
      }
    out += "  const " + T + " mid = " + scalar_op("carry", "a[" + last + "]") + ";\n";
    out += "  const " + T + " total = " + scalar_op("mid", "b[" + last + "]") + ";\n";
    out +=
        "  const " + V + " ca = _mm256_set1_" + X + "(carry), cb = _mm256_set1_" + X + "(mid);\n";
    out += "  _mm256_storeu_" + X + "(dst, " + avx_op("ca", "a") + ");\n";
    out += "  _mm256_storeu_" + X + "(dst + " + H + ", " + avx_op("cb", "b") + ");\n";
    out += "  return total;\n";
    out += "#else\n";
    out += "  typedef " + T + " sb_vec __attribute__((vector_size(64)));\n";
    out += "  const sb_vec id = sb_vec{} + " + reduce_identity(op, t) + ";\n";
    out += "  sb_vec x;\n  __builtin_memcpy(&x, src, sizeof x);\n";
    for (const std::vector<int>& mask : vector_scan_steps(lanes)) {
      out += "  {\n    const sb_vec s = __builtin_shufflevector(x, id, " + vector_scan_mask(mask) +
             ");\n";
      out += "    x = " + vec_op("s", "x") + ";\n  }\n";
    }
    out += "  const " + T + " total = x[" + std::to_string(lanes - 1) + "];\n";
    out += "  x = " + vec_op("(sb_vec{} + carry)", "x") + ";\n";
    out += "  __builtin_memcpy(dst, &x, sizeof x);\n";
    out += "  return " + scalar_op("carry", "total") + ";\n";
    out += "#endif\n}\n";
  }
  return out;
}

std::string HelperSet::use_vector_scan(ReduceOp op, DType t) {
  SB_ASSERT(vector_scan_fits(op, t), "a vector scan that vector_scan_fits refuses");
  if (op == ReduceOp::Max || op == ReduceOp::Min)
    used_.insert(min_max_helper(t, op == ReduceOp::Max));
  scans_.insert({op, t});
  return vector_scan_name(op, t);
}

// The helpers of each type that has them; types without a row have none.
namespace {

struct TypeHelpers {
  DType t;
  Helper min, max;
  std::optional<Helper> abs;  // integers (floating-point abs is libm's fabs)
  // Wrapping arithmetic (kind SignedInt): +, -, *, unary -.
  std::optional<Helper> add, sub, mul, neg;
  // Truncating casts from this floating-point type to I32 and Index.
  std::optional<Helper> to_i32, to_index;
};

const TypeHelpers kTypeHelpers[] = {
    {DType::F32,
     Helper::MinF32,
     Helper::MaxF32,
     {},
     {},
     {},
     {},
     {},
     Helper::F32ToI32,
     Helper::F32ToI64},
    {DType::F64,
     Helper::MinF64,
     Helper::MaxF64,
     {},
     {},
     {},
     {},
     {},
     Helper::F64ToI32,
     Helper::F64ToI64},
    {DType::I32,
     Helper::MinI32,
     Helper::MaxI32,
     Helper::AbsI32,
     Helper::AddI32,
     Helper::SubI32,
     Helper::MulI32,
     Helper::NegI32,
     {},
     {}},
    {DType::I64,
     Helper::MinI64,
     Helper::MaxI64,
     Helper::AbsI64,
     Helper::AddI64,
     Helper::SubI64,
     Helper::MulI64,
     Helper::NegI64,
     {},
     {}},
    {DType::Index, Helper::MinI64, Helper::MaxI64, Helper::AbsI64, {}, {}, {}, {}, {}, {}},
};

const TypeHelpers& type_helpers(DType t) {
  for (const TypeHelpers& h : kTypeHelpers)
    if (h.t == t) return h;
  SB_ASSERT(false, std::string("no helpers of generated code for type ") + dtype_name(t));
  return kTypeHelpers[0];
}

Helper need(std::optional<Helper> h, const char* what, DType t) {
  SB_ASSERT(h.has_value(), std::string("no ") + what + " helper for type " + dtype_name(t));
  return *h;
}

}  // namespace

Helper min_max_helper(DType t, bool max) {
  const TypeHelpers& h = type_helpers(t);
  return max ? h.max : h.min;
}

Helper abs_helper(DType t) {
  return need(type_helpers(t).abs, "abs", t);
}

Helper wrapping_helper(DType t, std::optional<BinOp> op) {
  const TypeHelpers& h = type_helpers(t);
  if (!op) return need(h.neg, "wrapping negation", t);
  switch (*op) {
    case BinOp::Add:
      return need(h.add, "wrapping +", t);
    case BinOp::Sub:
      return need(h.sub, "wrapping -", t);
    case BinOp::Mul:
      return need(h.mul, "wrapping *", t);
    default:
      break;
  }
  SB_ASSERT(false, std::string("no wrapping helper for operator ") + binop_symbol(*op));
  return Helper::kCount;
}

Helper float_to_int_helper(DType from, DType to) {
  const TypeHelpers& h = type_helpers(from);
  // The 64-bit cast serves index and i64 alike.
  const bool wide = scalar(to).bits == 64;
  return need(wide ? h.to_index : h.to_i32, "truncating cast", from);
}

std::string reduce_identity(ReduceOp op, DType t) {
  const ScalarType& s = scalar(t);
  switch (op) {
    case ReduceOp::Sum:
      return s.kind == ScalarKind::Float ? float_literal(0.0, t) : "0";
    case ReduceOp::Max:
      return s.c_lowest;
    case ReduceOp::Min:
      return s.c_highest;
    case ReduceOp::Prod:
      return s.kind == ScalarKind::Float ? float_literal(1.0, t) : "1";
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      SB_ASSERT(false, "an arg-reduction after check (check/arg_reductions.h rewrites them)");
  }
  return "0";
}

std::string fold_line(ReduceOp op, DType t, const std::string& acc, const std::string& value,
                      HelperSet& h) {
  const bool wraps = scalar(t).kind == ScalarKind::SignedInt;
  const std::string sfx = scalar(t).suffix;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod: {
      const bool add = op == ReduceOp::Sum;
      if (!wraps) return acc + (add ? " += " : " *= ") + value + ";";
      h.use(wrapping_helper(t, add ? BinOp::Add : BinOp::Mul));
      return acc + " = " + (add ? "sb_add_" : "sb_mul_") + sfx + "(" + acc + ", " + value + ");";
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
      const bool mx = op == ReduceOp::Max;
      h.use(min_max_helper(t, mx));
      return acc + " = " + (mx ? "sb_max_" : "sb_min_") + sfx + "(" + acc + ", " + value + ");";
    }
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      SB_ASSERT(false, "an arg-reduction after check (check/arg_reductions.h rewrites them)");
  }
  return acc + " = " + value + ";";
}

const CMath* c_math(Fn fn) {
  for (const CMath& m : kCMath)
    if (m.fn == fn) return &m;
  return nullptr;
}

bool c_spells(Fn fn) {
  return fn == Fn::Min || fn == Fn::Max || fn == Fn::Abs || fn == Fn::Select ||
         fn == Fn::DivTrunc || fn == Fn::RemTrunc || c_math(fn);
}

std::string vector_math_name(const std::string& libm_name) {
  return "sb_vec_" + libm_name;
}

namespace {

// The inline approximations, branch-free so that SIMD loops evaluate them in registers.
// e^x = 2^k e^r with k = round(x / ln 2) and |r| <= ln(2) / 2 (ln 2 split in two parts, the first
// exact in products with |k| < 512); e^r by its Taylor polynomial to degree 7 (truncation
// under 6e-9 relative); 2^k as two factors, so that no factor overflows before the result does.
// tanh |x| = |x| P(x^2) / Q(x^2) on [0, 9], P and Q of degree 4, fitted to the relative error by
// harness/scripts/fit_tanh.py (2.1e-8 at worst in exact arithmetic; the f32 evaluation adds the
// rest). Odd, so tanh(-0) = -0; beyond 9 tanh rounds to 1.
const char* const kApproxExp = R"(static inline float sb_pow2i_f32(int32_t k) {
  const uint32_t bits = (uint32_t)(k + 127) << 23;
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}
static inline float sb_approx_expf(float x) {
  x = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);  // beyond: 0 and +inf; NaN stays
  const float shift = 12582912.0f;  // 1.5 * 2^23: the low bits of t hold k = round(x / ln 2)
  const float t = x * 1.44269504f + shift;
  const float n = t - shift;
  int32_t k;
  __builtin_memcpy(&k, &t, sizeof k);
  k -= 0x4B400000;
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682e-6f;
  const float e = 1.0f + r * (1.0f + r * (0.5f + r * (0.166666672f + r * (0.0416666679f +
                  r * (0.00833333377f + r * (0.00138888892f + r * 0.000198412701f))))));
  const int32_t k1 = k >> 1;
  return e * sb_pow2i_f32(k1) * sb_pow2i_f32(k - k1);
}
)";

const char* const kApproxTanh = R"(static inline float sb_approx_tanhf(float x) {
  float a = fabsf(x);
  a = a > 9.0f ? 9.0f : a;  // tanh(9) rounds to 1; NaN stays
  const float s = a * a;
  const float p = (((1.33544154e-08f * s + 2.06091045e-05f) * s + 0.00349559984f) * s +
                   0.133810401f) * s + 1.0f;
  const float q = (((7.77651337e-07f * s + 0.000328564638f) * s + 0.0258770399f) * s +
                   0.467143565f) * s + 1.0f;
  return copysignf(a * p / q, x);
}
)";

}  // namespace

std::string vector_math_declarations(const VectorMath& math) {
  if (math.empty()) return "";
  std::string out;
  if (!math.libm.empty()) {
    out +=
        "// libm functions under names that vectorised loops call: on x86-64 glibc they carry the\n"
        "// simd attribute, so `omp simd` loops call libmvec's vector versions (linked -lmvec).\n"
        "#if defined(__x86_64__) && defined(__GLIBC__)\n"
        "#define SB_VECTOR_MATH __attribute__((simd(\"notinbranch\")))\n"
        "#else\n"
        "#define SB_VECTOR_MATH\n"
        "#endif\n";
    for (const auto& [n, f] : math.libm) {
      const std::string t = c_type(f.type);
      std::string params;
      for (int i = 0; i < f.arity; ++i) params += (i ? ", " : "") + t;
      out += "extern \"C\" SB_VECTOR_MATH " + t + " " + vector_math_name(n) + "(" + params +
             ") noexcept __asm__(\"" + n + "\");\n";
    }
  }
  if (!math.approx_used.empty()) {
    if (!out.empty()) out += "\n";
    out +=
        "// f32 exp and tanh as branch-free polynomial forms that vectorise in place (variant\n"
        "// parameter approx_math): exp within 4 ulp, tanh within 6 ulp of the correctly rounded\n"
        "// result.\n";
    if (math.approx_used.count(Fn::Exp)) out += kApproxExp;
    if (math.approx_used.count(Fn::Tanh)) out += kApproxTanh;
  }
  return out;
}

// ---- Statement lowering -----------------------------------------------------------------------

std::string paren(const std::string& text, int prec, int min_prec) {
  return prec < min_prec ? "(" + text + ")" : text;
}

LibraryGemm library_gemm(StmtLowering& L, const Contraction& m, CodeWriter& w,
                         const std::string& x_base, const std::string& y_base) {
  const Statement& st = L.stmt();
  const GemmLayout o = gemm_layout(st, m);
  LibraryGemm g;
  g.x = L.tensor_name(m.x);
  g.y = L.tensor_name(m.y);
  g.c = L.tensor_name(st.out);
  const int xr = m.x_row_dim(), yr = m.y_row_dim(), cr = m.out_row_dim();
  const std::string xw = L.extent(m.x, xr + 1, kPrecMul), yw = L.extent(m.y, yr + 1, kPrecMul);
  g.xs_i = o.x_i == GemmStep::Row ? xw : "1";
  g.xs_k = o.x_k == GemmStep::Row ? xw : "1";
  g.ys_k = o.y_k == GemmStep::Row ? yw : "1";
  g.ys_j = o.y_j == GemmStep::Row ? yw : "1";
  const std::string lo = o.k0 ? L.expr(*o.k0, w, kPrecMul) : "0";
  const std::string hi = L.expr(*o.k_end, w, kPrecAdd);
  g.xp = x_base.empty() ? g.x : x_base;
  g.yp = y_base.empty() ? g.y : y_base;
  if (o.k0) {
    // X(i, k0 + k) and Y(k0 + k, j): offset the base pointers along k.
    g.xp += " + " + lo + (o.x_k == GemmStep::Row ? " * " + xw : "");
    g.yp += " + " + lo + (o.y_k == GemmStep::Row ? " * " + yw : "");
  }
  w.line("const int64_t sb_m = " + L.extent(st.out, cr, 0) + ";");
  w.line("const int64_t sb_n = " + L.extent(st.out, cr + 1, 0) + ";");
  w.line("const int64_t sb_k = " + (o.k0 ? hi + " - " + lo : hi) + ";");
  if (m.batched) {
    // One product's matrix of an operand read with the batch index: its last two extents.
    auto matrix = [&L](int t, bool batched) {
      return batched ? L.extent(t, 1, kPrecMul) + " * " + L.extent(t, 2, kPrecMul + 1)
                     : std::string("0");
    };
    w.line("const int64_t sb_batch = " + L.extent(st.out, 0, 0) + ";");
    g.xs_b = matrix(m.x, m.x_batched);
    g.ys_b = matrix(m.y, m.y_batched);
    g.cs_b = "sb_m * sb_n";
  }
  return g;
}

std::string GatheredIndex::product(const std::vector<int>& vars) const {
  std::string p;
  for (int v : vars) p += (p.empty() ? "" : " * ") + extent(v);
  return p.empty() ? std::string("1") : p;
}

std::string GatheredIndex::flat(const std::vector<int>& vars) const {
  // `x` as a factor of a product: parenthesised when it is a sum (holds a space).
  auto factor = [](const std::string& x) {
    return x.find(' ') == std::string::npos ? x : "(" + x + ")";
  };
  std::string f;
  for (int v : vars) f = f.empty() ? name(v) : factor(f) + " * " + extent(v) + " + " + name(v);
  return f.empty() ? std::string("0") : factor(f);
}

std::pair<int, size_t> gathered_extent(const Spec& spec, const Statement& st, const GatheredGemm& g,
                                       int v) {
  if (static_cast<size_t>(v) < st.rank()) return {st.out, static_cast<size_t>(v)};
  const size_t w_rank = spec.tensors[g.w].shape.size();
  for (size_t j = 0; j < g.k.size(); ++j)
    if (g.k[j] == v) return {g.w, w_rank - g.k.size() + j};
  SB_ASSERT(false, "a variable of no dimension of a gathered GEMM");
  return {st.out, 0};
}

void emit_im2col(StmtLowering& L, const GatheredGemm& g, bool parallel_gather, CodeWriter& w,
                 const Im2colGemmCall& gemm, bool groups_side_by_side) {
  const Statement& st = L.stmt();
  const std::string ty = c_type(g.type);
  auto extent = [&](int v, int prec) {
    const auto [t, d] = gathered_extent(L.spec(), st, g, v);
    return L.extent(t, d, prec);
  };
  const GatheredIndex ix{[&](int v) { return extent(v, kPrecMul + 1); },
                         [&](int v) { return L.var_name(v); }};
  auto open_for = [&](int v) {
    const std::string& n = L.var_name(v);
    w.open("for (int64_t " + n + " = 0; " + n + " < " + extent(v, kPrecRel + 1) + "; ++" + n +
           ") {");
  };
  const std::string y = L.tensor_name(st.out), wt = L.tensor_name(g.w);
  w.line("const int64_t sb_m = " + ix.product(g.m) + ";");
  w.line("const int64_t sb_n = " + ix.product(g.n) + ";");
  w.line("const int64_t sb_k = " + ix.product(g.k) + ";");
  w.line("const int64_t sb_batch = " + ix.product(g.batch) + ";");
  w.line("if (sb_m <= 0 || sb_n <= 0 || sb_batch <= 0) return 0;");
  w.open("if (sb_k <= 0) {  // an empty sum");
  w.line("for (int64_t sb_i = 0; sb_i < sb_batch * sb_m * sb_n; ++sb_i) " + y +
         "[sb_i] = " + float_literal(0.0, g.type) + ";");
  w.line("return 0;");
  w.close();
  const std::string alloc_col =
      ty + "* sb_col = (" + ty + "*)malloc(sizeof(" + ty + ") * (size_t)sb_k * (size_t)sb_n);";
  // The gather: every (k..., N...) once, the innermost vectorised, and with `parallel` the outer
  // loops shared out.
  auto gather = [&](bool parallel) {
    std::vector<int> loops = g.k;
    loops.insert(loops.end(), g.n.begin(), g.n.end());
    w.line(
        "// The columns: sb_col[k][p] for k over the reduction indices, p over the output's last.");
    if (parallel && loops.size() > 1)
      w.line("#pragma omp parallel for collapse(" + std::to_string(loops.size() - 1) +
             ") schedule(static)");
    else if (parallel)
      w.line("#pragma omp parallel for simd schedule(static)");
    for (size_t i = 0; i < loops.size(); ++i) {
      if (i + 1 == loops.size() && (loops.size() > 1 || !parallel)) w.line("#pragma omp simd");
      open_for(loops[i]);
    }
    const std::string value = L.expr(*g.gathered, w, 0);
    w.line("sb_col[" + ix.flat(g.k) + " * sb_n + " + ix.flat(g.n) + "] = " + value + ";");
    for (size_t i = 0; i < loops.size(); ++i) w.close();
  };
  const std::string out = g.batch.empty() ? y : y + " + " + ix.flat(g.batch) + " * sb_m * sb_n";
  // Group sb_g's gather and product, inside the loop over the groups.
  auto group = [&](bool parallel, const std::vector<std::string>& on_fail) {
    w.line("const int64_t sb_rows = sb_q < sb_m - sb_g * sb_q ? sb_q : sb_m - sb_g * sb_q;");
    L.set_override(g.group, "sb_g");
    gather(parallel);
    L.clear_override(g.group);
    w.line("// group sb_g's rows of " + y + " = its rows of " + wt +
           " (sb_rows x K) * sb_col (K x N), row-major");
    gemm(wt + " + sb_g * sb_q * sb_k", out + " + sb_g * sb_q * sb_n", "sb_rows", on_fail, w);
  };
  if (g.group) {
    // A grouped GEMM: rows sb_g * sb_q .. of the weights and outputs are group sb_g's, whose
    // columns are the gathered term at m0 / q = sb_g.
    std::vector<int> inner(g.m.begin() + 1, g.m.end());
    w.line("const int64_t sb_q = " + L.expr(*g.group_size, w, kPrecMul + 1) +
           (inner.empty() ? "" : " * " + ix.product(inner)) + ";  // rows per group");
    w.line("const int64_t sb_groups = (sb_m + sb_q - 1) / sb_q;");
  }
  if (g.group && groups_side_by_side) {
    w.line("// Groups enough for the threads: each thread gathers and multiplies whole groups");
    w.line("// in its own columns, one after another; else one group at a time, each shared out.");
    w.open("if (sb_batch * sb_groups >= 2 * sb_workers()) {");
    w.line("int sb_failed = 0;");
    w.line("#pragma omp parallel");
    w.open("{");
    w.line(alloc_col);
    w.open("if (sb_col == NULL) {");
    w.line("#pragma omp atomic write");
    w.line("sb_failed = 1;");
    w.close();
    w.line("#pragma omp for collapse(" + std::to_string(g.batch.size() + 1) +
           ") schedule(dynamic)");
    for (int v : g.batch) open_for(v);
    w.open("for (int64_t sb_g = 0; sb_g < sb_groups; ++sb_g) {");
    w.line("if (sb_col == NULL) continue;");
    group(/*parallel=*/false, {"#pragma omp atomic write", "sb_failed = 1;"});
    w.close();
    for (size_t i = 0; i < g.batch.size(); ++i) w.close();
    w.line("free(sb_col);");
    w.close();
    w.line("return sb_failed;");
    w.close();
  }
  w.line(alloc_col);
  w.line("if (sb_col == NULL) return 1;");
  for (int v : g.batch) open_for(v);
  if (g.group) {
    w.open("for (int64_t sb_g = 0; sb_g < sb_groups; ++sb_g) {");
    group(parallel_gather, {"free(sb_col);", "return 1;"});
    w.close();
  } else {
    gather(parallel_gather);
    w.line("// " + y + " = " + wt + " (M x K) * sb_col (K x N), row-major");
    gemm(wt, out, "sb_m", {"free(sb_col);", "return 1;"}, w);
  }
  for (size_t i = 0; i < g.batch.size(); ++i) w.close();
  w.line("free(sb_col);");
  w.line("return 0;");
}

bool contains_reduce(const Expr& e) {
  if (e.kind == ExprKind::Reduce) return true;
  for (const auto& a : e.args)
    if (contains_reduce(*a)) return true;
  return false;
}

DType value_type(const Expr& e) {
  return scalar(e.type).printed_as;
}

std::string omp_reduction_clause(const ReduceSite& site, HelperSet& helpers) {
  const bool is_max = site.reduce->rop == ReduceOp::Max;
  if ((is_max || site.reduce->rop == ReduceOp::Min) && scalar(site.type).kind == ScalarKind::Float)
    return "reduction(" + helpers.use_omp_reduction(site.type, is_max) + ":" + site.acc + ")";
  const char* op = "+";
  switch (site.reduce->rop) {
    case ReduceOp::Sum:
      op = "+";
      break;
    case ReduceOp::Prod:
      op = "*";
      break;
    case ReduceOp::Max:
      op = "max";
      break;
    case ReduceOp::Min:
      op = "min";
      break;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      SB_ASSERT(false, "an arg-reduction after check (check/arg_reductions.h rewrites them)");
      break;
  }
  return std::string("reduction(") + op + ":" + site.acc + ")";
}

StmtLowering::StmtLowering(const Spec& spec, const Statement& st, HelperSet* helpers)
    : spec_(spec), st_(st), helpers_(helpers) {
  // (Looked up per variable rather than collected into a set per statement: a spec with many
  // statements and tensors would otherwise cost statements x tensors set insertions.)
  auto taken = [&spec](const std::string& n) {
    return spec.find_tensor(n) >= 0 || spec.find_size(n) >= 0;
  };
  const std::set<int> shadowing = shadowing_reductions(st);
  // A variable keeps its name unless that would clash with a tensor, a size, a name the generated
  // code uses, or a variable bound around its loop; then it becomes sb_<name>_<index>.
  for (size_t i = 0; i < st.vars.size(); ++i) {
    const std::string& n = st.vars[i].name;
    const bool keep = c_name(n) == n && !taken(n) && !shadowing.count(static_cast<int>(i));
    var_names_.push_back(keep ? n : "sb_" + n + "_" + std::to_string(i));
  }
}

void StmtLowering::set_row_local(int t, const std::string& name) {
  SB_ASSERT(t >= 0 && t < static_cast<int>(spec_.tensors.size()), "tensor ref out of range");
  SB_ASSERT(!spec_.tensors[t].shape.empty() && spec_.tensors[t].boundary == Boundary::None,
            "a row-local tensor needs rank >= 1 and no boundary rule");
  row_local_[t] = name;
}

std::string StmtLowering::tensor_name(int t) {
  SB_ASSERT(t >= 0 && t < static_cast<int>(spec_.tensors.size()), "tensor ref out of range");
  if (auto it = row_local_.find(t); it != row_local_.end()) return it->second;
  used_tensors_.insert(t);
  return c_name(spec_.tensors[t].name);
}

std::string StmtLowering::size_name(int s) {
  SB_ASSERT(s >= 0 && s < static_cast<int>(spec_.sizes.size()), "size ref out of range");
  used_sizes_.insert(s);
  return c_name(spec_.sizes[s].name);
}

std::string StmtLowering::extent(int t, size_t d, int min_prec) {
  const Tensor& tn = spec_.tensors[t];
  SB_ASSERT(d < tn.shape.size(), "extent of a missing dimension");
  CodeWriter none;
  Piece p = print(*tn.shape[d], none, 0, nullptr);
  SB_ASSERT(none.str().empty(), "a shape expression needed hoisted code");
  return paren(p.text, p.prec, min_prec);
}

std::string StmtLowering::element_count(int t, int min_prec) {
  const Tensor& tn = spec_.tensors[t];
  if (tn.shape.empty()) return "1";
  if (tn.shape.size() == 1) return extent(t, 0, min_prec);
  std::string s = extent(t, 0, kPrecMul);
  for (size_t d = 1; d < tn.shape.size(); ++d) s += " * " + extent(t, d, kPrecMul + 1);
  return paren(s, kPrecMul, min_prec);
}

std::string StmtLowering::expr(const Expr& e, CodeWriter& w, int min_prec,
                               const ReducePragma& pragma) {
  Piece p = print(e, w, 0, pragma);
  return paren(p.text, p.prec, min_prec);
}

std::string StmtLowering::sub(const Expr& e, CodeWriter& w, int depth, const ReducePragma& pragma,
                              int min_prec) {
  Piece p = print(e, w, depth, pragma);
  return paren(p.text, p.prec, min_prec);
}

void StmtLowering::assign(CodeWriter& w, const ReducePragma& pragma) {
  SB_ASSERT(st_.rhs != nullptr, "statement without a right-hand side");
  const std::string rhs = expr(*st_.rhs, w, 0, pragma);
  const int t = st_.out;
  const std::string name = tensor_name(t);
  if (spec_.tensors[t].shape.empty()) {
    w.line(name + "[0] = " + rhs + ";");
    return;
  }
  std::vector<std::string> subs;
  for (size_t d = 0; d < st_.rank(); ++d) subs.push_back(var_names_[d]);
  w.line(name + "[" + flat_index(t, subs) + "] = " + rhs + ";");
}

std::string StmtLowering::flat_index(int t, const std::vector<std::string>& subs) {
  std::vector<Piece> pieces;
  for (const auto& s : subs) pieces.push_back({s, kPrecPrimary});
  return flat_index_p(t, pieces);
}

std::string StmtLowering::flat_index_p(int t, const std::vector<Piece>& subs) {
  const Tensor& tn = spec_.tensors[t];
  SB_ASSERT(subs.size() == tn.shape.size(), "subscript count differs from the tensor's rank");
  const size_t first = row_local_.count(t) ? 1 : 0;  // a row-local tensor drops the row
  if (subs.size() <= first) return "0";
  // Horner form: ((s0 * d1 + s1) * d2 + s2) ...
  std::string acc = subs[first].text;
  int acc_prec = subs[first].prec;
  for (size_t d = first + 1; d < subs.size(); ++d) {
    if (acc == "0") {  // a leading zero subscript contributes nothing
      acc = subs[d].text;
      acc_prec = subs[d].prec;
      continue;
    }
    acc = paren(acc, acc_prec, kPrecMul) + " * " + extent(t, d, kPrecMul + 1) + " + " +
          paren(subs[d].text, subs[d].prec, kPrecAdd + 1);
    acc_prec = kPrecAdd;
  }
  return acc;
}

StmtLowering::Piece StmtLowering::print(const Expr& e, CodeWriter& w, int depth,
                                        const ReducePragma& pragma) {
  if (!overrides_.empty()) {
    auto it = overrides_.find(&e);
    if (it != overrides_.end()) return {it->second, kPrecPrimary};
  }
  const DType t = value_type(e);
  switch (e.kind) {
    case ExprKind::FloatLit:
    case ExprKind::IntLit: {
      if (is_float(t)) {
        const double v = e.kind == ExprKind::FloatLit ? e.fval : static_cast<double>(e.ival);
        std::string s = float_literal(v, t);
        return {s, s[0] == '-' ? kPrecUnary : kPrecPrimary};
      }
      SB_ASSERT(e.kind == ExprKind::IntLit,
                "float literal of integer type " + std::string(dtype_name(e.type)));
      std::string s = int_literal(e.ival);
      return {s, s[0] == '-' ? kPrecUnary : kPrecPrimary};
    }
    case ExprKind::Const: {
      std::string s = float_literal(e.fval, is_float(t) ? t : DType::F64);
      return {s, s[0] == '-' ? kPrecUnary : kPrecPrimary};
    }
    case ExprKind::IndexVar:
      SB_ASSERT(e.ref >= 0 && e.ref < static_cast<int>(var_names_.size()), "bad index var ref");
      return {var_names_[e.ref], kPrecPrimary};
    case ExprKind::SizeRef:
      return {size_name(e.ref), kPrecPrimary};
    case ExprKind::Read:
      return print_read(e, w, depth, pragma);
    case ExprKind::Unary: {
      const Expr& a = *e.args[0];
      if (e.uop == UnOp::Not) return {"!" + sub(a, w, depth, pragma, kPrecUnary), kPrecUnary};
      if (scalar(t).kind == ScalarKind::SignedInt) {  // wraps
        helpers_->use(wrapping_helper(t, std::nullopt));
        return {std::string("sb_neg_") + scalar(t).suffix + "(" + sub(a, w, depth, pragma, 0) + ")",
                kPrecPrimary};
      }
      std::string s = sub(a, w, depth, pragma, kPrecUnary);
      if (s[0] == '-') s = "(" + s + ")";  // never "--x"
      return {"-" + s, kPrecUnary};
    }
    case ExprKind::Binary:
      return print_binary(e, w, depth, pragma);
    case ExprKind::Call:
      return print_call(e, w, depth, pragma);
    case ExprKind::Cast:
      return print_cast(e, w, depth, pragma);
    case ExprKind::Reduce:
      return print_reduce(e, w, depth, pragma);
    case ExprKind::Name:
      break;
  }
  SB_ASSERT(false, "unresolved name '" + e.name + "' reached the emitter");
  return {};
}

namespace {

// A divisor that is never 0 or -1, so plain C / and % agree with the reference.
}  // namespace

StmtLowering::Piece StmtLowering::print_binary(const Expr& e, CodeWriter& w, int depth,
                                               const ReducePragma& pragma) {
  const Expr& a = *e.args[0];
  const Expr& b = *e.args[1];
  const std::string op = binop_symbol(e.bop);
  switch (e.bop) {
    case BinOp::And:
    case BinOp::Or: {
      // && inside || gets parentheses (as -Wparentheses asks), so does || inside &&.
      const int self = e.bop == BinOp::And ? kPrecAnd : kPrecOr;
      auto side = [&](const Expr& x, bool right) {
        Piece p = print(x, w, depth, pragma);
        const bool other_logic = (p.prec == kPrecAnd || p.prec == kPrecOr) && p.prec != self;
        return other_logic ? "(" + p.text + ")" : paren(p.text, p.prec, right ? self + 1 : self);
      };
      std::string l = side(a, false);
      std::string r = side(b, true);
      return {l + " " + op + " " + r, self};
    }
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge:
    case BinOp::Eq:
    case BinOp::Ne: {
      const bool eq = e.bop == BinOp::Eq || e.bop == BinOp::Ne;
      std::string l = sub(a, w, depth, pragma, kPrecAdd);
      std::string r = sub(b, w, depth, pragma, kPrecAdd);
      return {l + " " + op + " " + r, eq ? kPrecEq : kPrecRel};
    }
    default:
      break;
  }

  const DType t = value_type(e);
  if (is_float(t)) {
    if (e.bop == BinOp::Mod) {
      std::string l = sub(a, w, depth, pragma, 0);
      std::string r = sub(b, w, depth, pragma, 0);
      return {std::string("fmod") + scalar(t).c_libm_suffix + "(" + l + ", " + r + ")",
              kPrecPrimary};
    }
  } else if (scalar(t).kind == ScalarKind::SignedInt &&  // wraps
             (e.bop == BinOp::Add || e.bop == BinOp::Sub || e.bop == BinOp::Mul)) {
    const std::string fn = std::string(e.bop == BinOp::Add   ? "sb_add_"
                                       : e.bop == BinOp::Sub ? "sb_sub_"
                                                             : "sb_mul_") +
                           scalar(t).suffix + "(";
    helpers_->use(wrapping_helper(t, e.bop));
    std::string l = sub(a, w, depth, pragma, 0);
    std::string r = sub(b, w, depth, pragma, 0);
    return {fn + l + ", " + r + ")", kPrecPrimary};
  } else {
    SB_ASSERT(e.bop != BinOp::Div && e.bop != BinOp::Mod,
              "an integer / or % reached the C printer (lower/legalize_int_div makes them calls)");
  }
  const int self = (e.bop == BinOp::Add || e.bop == BinOp::Sub) ? kPrecAdd : kPrecMul;
  std::string l = sub(a, w, depth, pragma, self);
  std::string r = sub(b, w, depth, pragma, self + 1);
  return {l + " " + op + " " + r, self};
}

StmtLowering::Piece StmtLowering::print_call(const Expr& e, CodeWriter& w, int depth,
                                             const ReducePragma& pragma) {
  const DType t = value_type(e);
  if (e.fn == Fn::Select) {
    std::string c = sub(*e.args[0], w, depth, pragma, kPrecTernary + 1);
    std::string a = sub(*e.args[1], w, depth, pragma, kPrecTernary + 1);
    std::string b = sub(*e.args[2], w, depth, pragma, kPrecTernary + 1);
    return {c + " ? " + a + " : " + b, kPrecTernary};
  }
  std::string fn;
  switch (e.fn) {
    case Fn::Min:
    case Fn::Max: {
      const bool mn = e.fn == Fn::Min;
      helpers_->use(min_max_helper(t, !mn));
      fn = std::string(mn ? "sb_min_" : "sb_max_") + scalar(t).suffix;
      break;
    }
    case Fn::Abs:
      if (is_float(t)) {
        fn = std::string("fabs") + scalar(t).c_libm_suffix;
      } else {
        helpers_->use(abs_helper(t));
        fn = std::string("sb_abs_") + scalar(t).suffix;
      }
      break;
    case Fn::Exp:
    case Fn::Log:
    case Fn::Sqrt:
    case Fn::Tanh:
    case Fn::Erf:
    case Fn::Log1p:
    case Fn::Expm1:
    case Fn::Pow:
    case Fn::Sin:
    case Fn::Cos:
    case Fn::Floor:
    case Fn::Ceil:
    case Fn::Round: {
      const CMath* m = c_math(e.fn);
      SB_ASSERT(m && is_float(t), std::string(fn_name(e.fn)) + " of a non-floating-point value");
      fn = std::string(m->libm) + scalar(t).c_libm_suffix;
      // An approximation only where the statement calls no libmvec function besides: GCC 12
      // does not if-convert the approximation's clamp in a loop that also calls one, and leaves
      // the loop scalar (softplus, log1p(exp(x)) with approx_math, ran 28x slower, 10.5 against
      // 0.36 ms at 2^20 f32 on the 2-core VM).
      auto approximated = [&](Fn f, DType ty) {
        return ty == DType::F32 && (f == Fn::Exp || f == Fn::Tanh);  // approx_math.h: f32 only
      };
      std::function<bool(const Expr&)> other_vector_math = [&](const Expr& x) {
        if (x.kind == ExprKind::Call && is_float(value_type(x)) &&
            !approximated(x.fn, value_type(x)))
          if (const CMath* cm = c_math(x.fn); cm && cm->libmvec) return true;
        for (const auto& a : x.args)
          if (other_vector_math(*a)) return true;
        return false;
      };
      if (vector_math_ && vector_math_->approx && approximated(e.fn, t) &&
          !other_vector_math(*st_.rhs)) {
        vector_math_->approx_used.insert(e.fn);
        fn = "sb_approx_" + fn;
      } else if (vector_math_ && m->libmvec) {
        vector_math_->libm.emplace(fn, VectorMath::Fn{t, static_cast<int>(e.args.size())});
        fn = vector_math_name(fn);
      }
      break;
    }
    case Fn::DivTrunc:  // C's / and % by a divisor that is never 0 or -1 (legalize_int_div)
    case Fn::RemTrunc: {
      std::string l = sub(*e.args[0], w, depth, pragma, kPrecMul);
      std::string r = sub(*e.args[1], w, depth, pragma, kPrecMul + 1);
      return {l + (e.fn == Fn::DivTrunc ? " / " : " % ") + r, kPrecMul};
    }
    case Fn::Select:   // printed above
    case Fn::Sigmoid:  // no C spelling: expanded before printing (c_spells)
    case Fn::Sign:
    case Fn::Rsqrt:
      SB_ASSERT(false, std::string("'") + fn_name(e.fn) + "' reached the C printer unexpanded");
      break;
  }
  std::string args;
  for (size_t i = 0; i < e.args.size(); ++i)
    args += (i ? ", " : "") + sub(*e.args[i], w, depth, pragma, 0);
  return {fn + "(" + args + ")", kPrecPrimary};
}

StmtLowering::Piece StmtLowering::print_cast(const Expr& e, CodeWriter& w, int depth,
                                             const ReducePragma& pragma) {
  const Expr& a = *e.args[0];
  const DType from = value_type(a);
  const DType to = e.cast_to == DType::Unknown ? value_type(e) : e.cast_to;
  if (from == to) return print(a, w, depth, pragma);
  if (is_float(to) || (!is_float(from) && is_integer(to))) {
    return {"(" + std::string(c_type(to)) + ")" + sub(a, w, depth, pragma, kPrecUnary), kPrecUnary};
  }
  SB_ASSERT(is_integer(to), std::string("unsupported cast to ") + dtype_name(to));
  // Floating-point to integer: truncation with the reference's out-of-range rule.
  helpers_->use(float_to_int_helper(from, to));
  const std::string fn =
      std::string("sb_") + scalar(from).suffix + "_to_" + scalar(to).suffix + "(";
  return {fn + sub(a, w, depth, pragma, 0) + ")", kPrecPrimary};
}

bool StmtLowering::obviously_inside(const Expr& sub, int t, size_t d) const {
  return sb::obviously_inside(spec_, st_, sub, t, d);
}

StmtLowering::Piece StmtLowering::print_read(const Expr& e, CodeWriter& w, int depth,
                                             const ReducePragma& pragma) {
  const int t = e.ref;
  const std::string name = tensor_name(t);
  const Tensor& tn = spec_.tensors[t];
  if (e.args.empty()) return {name + "[0]", kPrecPrimary};
  SB_ASSERT(e.args.size() == tn.shape.size(), "read with the wrong number of subscripts");

  std::vector<Piece> subs;
  if (assume_inside_) {
    for (const auto& a : e.args) subs.push_back(print(*a, w, depth, pragma));
    return {name + "[" + flat_index_p(t, subs) + "]", kPrecPrimary};
  }
  switch (tn.boundary) {
    case Boundary::None:
      for (const auto& a : e.args) subs.push_back(print(*a, w, depth, pragma));
      return {name + "[" + flat_index_p(t, subs) + "]", kPrecPrimary};
    case Boundary::Clamp:
      for (size_t d = 0; d < e.args.size(); ++d) {
        if (obviously_inside(*e.args[d], t, d)) {
          subs.push_back(print(*e.args[d], w, depth, pragma));
          continue;
        }
        helpers_->use(Helper::ClampIndex);
        subs.push_back(
            {"sb_clamp(" + sub(*e.args[d], w, depth, pragma, 0) + ", " + extent(t, d, 0) + ")",
             kPrecPrimary});
      }
      return {name + "[" + flat_index_p(t, subs) + "]", kPrecPrimary};
    case Boundary::Zero: {
      // Compound subscripts that may fall outside get a local (sb_ld<n>_<tensor>_i<d>); the
      // value is a guarded load into sb_ld<n>_<tensor>. Subscripts print first (they may hoist
      // loads of their own), then this load takes its number.
      std::vector<Piece> printed;
      std::vector<bool> checked;
      for (size_t d = 0; d < e.args.size(); ++d) {
        printed.push_back(print(*e.args[d], w, depth, pragma));
        checked.push_back(!obviously_inside(*e.args[d], t, d));
      }
      const std::string value = "sb_ld" + std::to_string(next_load_) + "_" + name;
      std::string inside;
      for (size_t d = 0; d < e.args.size(); ++d) {
        std::string s = printed[d].text;
        if (checked[d]) {
          if (printed[d].prec != kPrecPrimary || s.find('(') != std::string::npos) {
            s = value + "_i" + std::to_string(d);
            w.line("const int64_t " + s + " = " + printed[d].text + ";");
          }
          inside +=
              (inside.empty() ? "" : " && ") + s + " >= 0 && " + s + " < " + extent(t, d, kPrecAdd);
        }
        subs.push_back({s, kPrecPrimary});
      }
      const std::string load = name + "[" + flat_index_p(t, subs) + "]";
      if (inside.empty()) return {load, kPrecPrimary};
      ++next_load_;
      const DType vt = compute_type(tn.type);  // an f16 or bf16 element reads as f32
      const std::string lhs = "const " + std::string(c_type(vt)) + " " + value + " =";
      const std::string rhs =
          "(" + inside + ") ? " + load + " : " + reduce_identity(ReduceOp::Sum, vt) + ";";
      if (2 * w.indent() + lhs.size() + 1 + rhs.size() <= 100) {
        w.line(lhs + " " + rhs);
      } else {
        w.line(lhs);
        w.line("    " + rhs);
      }
      return {value, kPrecPrimary};
    }
  }
  return {};
}

StmtLowering::Piece StmtLowering::print_reduce(const Expr& e, CodeWriter& w, int depth,
                                               const ReducePragma& pragma) {
  SB_ASSERT(e.ref >= 0 && e.ref < static_cast<int>(st_.vars.size()), "bad reduction var ref");
  const DType t = value_type(e);
  const std::string acc = "sb_acc" + std::to_string(next_acc_++);
  const std::string identity = reduce_identity(e.rop, t);
  w.line(std::string(c_type(t)) + " " + acc + " = " + identity + ";");

  ReduceLoop loop;
  if (pragma) loop = pragma(ReduceSite{&e, t, acc, depth, !contains_reduce(*e.args[0])});
  if (loop.partials) {
    SB_ASSERT(!contains_reduce(*e.args[0]), "partial accumulators of a nested reduction");
    if (loop.chunks.empty()) {
      // A search, unless the loop also computes another statement's element for every term
      // (set_reduce_prologue), which a search that stops early would leave unwritten.
      const std::optional<FirstIndex> m =
          prologues_.count(&e) ? std::nullopt : match_first_index(st_, e);
      if (m)
        print_search(e, *m, acc, w, depth);
      else
        print_partials(e, acc, loop.pragma, w, depth);
    } else
      print_chunked_partials(e, acc, loop.pragma, loop.chunks, w, depth);
    return {acc, kPrecPrimary};
  }
  open_reduction(e, w, depth, loop.pragma);
  combine(e, acc, sub(*e.args[0], w, depth + 1, pragma, 0), w);
  w.close();
  return {acc, kPrecPrimary};
}

void StmtLowering::print_chunked_partials(const Expr& e, const std::string& acc,
                                          const std::string& pragma,
                                          const std::string& chunks_pragma, CodeWriter& w,
                                          int depth) {
  const IndexVar& v = st_.vars[e.ref];
  SB_ASSERT(v.lo && v.hi, "reduction variable without a range");
  static_assert(kReduceChunkBytes % kReducePartialBytes == 0, "a chunk of whole partials");
  const std::string id = std::to_string(next_acc_ - 1);
  const std::string lo = "sb_lo" + id, hi = "sb_hi" + id, c = "sb_c" + id, end = "sb_e" + id;
  const std::string n = std::to_string(kReduceChunkBytes / dtype_bytes(value_type(e)));
  w.line("const int64_t " + lo + " = " + sub(*v.lo, w, depth, nullptr, 0) + ";");
  w.line("const int64_t " + hi + " = " + sub(*v.hi, w, depth, nullptr, 0) + ";");
  w.line("// Chunks of " + n + " terms, split over the threads, each into partial accumulators.");
  w.line(chunks_pragma);
  w.open("for (int64_t " + c + " = " + lo + "; " + c + " < " + hi + "; " + c + " += " + n + ") {");
  w.line("const int64_t " + end + " = " + hi + " - " + c + " < " + n + " ? " + hi + " : " + c +
         " + " + n + ";");
  print_partials(e, acc, pragma, w, depth, c, end);
  w.close();
}

void StmtLowering::print_partials(const Expr& e, const std::string& acc, const std::string& pragma,
                                  CodeWriter& w, int depth, const std::string& lo,
                                  const std::string& hi) {
  const IndexVar& v = st_.vars[e.ref];
  SB_ASSERT(v.lo && v.hi, "reduction variable without a range");
  const DType t = value_type(e);
  const std::string ty = c_type(t);
  const std::string n = std::to_string(kReducePartialBytes / dtype_bytes(t));
  // One vector of the four (lower/vectorize.h: kReducePartialBytes).
  const std::string lanes = std::to_string(kReducePartialBytes / 4 / dtype_bytes(t));
  const std::string& k = var_names_[e.ref];
  const std::string id = std::to_string(next_acc_ - 1);
  const std::string from = "sb_k" + id, to = "sb_h" + id, part = "sb_part" + id;
  w.line("int64_t " + from + " = " + (lo.empty() ? sub(*v.lo, w, depth, nullptr, 0) : lo) + ";");
  w.line("const int64_t " + to + " = " + (hi.empty() ? sub(*v.hi, w, depth, nullptr, 0) : hi) +
         ";");
  w.open("if (" + to + " - " + from + " >= 2 * " + n + ") {");
  w.line("// " + n + " partial accumulators: the vector additions do not wait on each other.");
  w.line(ty + " " + part + "[" + n + "] __attribute__((aligned(64)));");
  w.line("for (int sb_q = 0; sb_q < " + n + "; ++sb_q) " + part + "[sb_q] = " +
         reduce_identity(e.rop, t) + ";");
  w.open("for (; " + from + " + " + n + " <= " + to + "; " + from + " += " + n + ") {");
  if (auto p = block_prologues_.find(&e); p != block_prologues_.end())
    p->second(w, from, kReducePartialBytes / dtype_bytes(t));
  w.line("#pragma omp simd simdlen(" + lanes + ")");
  w.open("for (int64_t sb_q = 0; sb_q < " + n + "; ++sb_q) {");
  w.line("const int64_t " + k + " = " + from + " + sb_q;");
  if (auto p = prologues_.find(&e); p != prologues_.end()) p->second(w);
  combine(e, part + "[sb_q]", sub(*e.args[0], w, depth + 1, nullptr, 0), w);
  w.close();
  w.close();
  if (!pragma.empty()) w.line(pragma);
  w.open("for (int sb_q = 0; sb_q < " + n + "; ++sb_q) {");
  combine(e, acc, part + "[sb_q]", w);
  w.close();
  w.close();
  if (!pragma.empty()) w.line(pragma);
  w.open("for (int64_t " + k + " = " + from + "; " + k + " < " + to + "; ++" + k + ") {");
  if (auto p = prologues_.find(&e); p != prologues_.end()) p->second(w);
  combine(e, acc, sub(*e.args[0], w, depth + 1, nullptr, 0), w);
  w.close();
}

void StmtLowering::print_search(const Expr& e, const FirstIndex& m, const std::string& acc,
                                CodeWriter& w, int depth) {
  const IndexVar& v = st_.vars[e.ref];
  SB_ASSERT(v.lo && v.hi, "reduction variable without a range");
  const std::string& k = var_names_[e.ref];
  const std::string id = std::to_string(next_acc_ - 1);
  const std::string from = "sb_k" + id, to = "sb_h" + id, block = "sb_b" + id, end = "sb_e" + id;
  const std::string any = "sb_any" + id, found = "sb_found" + id;
  const std::string n = std::to_string(kSearchTerms);
  w.line("// A search: the least " + k + " where the condition holds, its blocks of " + n +
         " terms tested");
  w.line("// as vectors in turn, the first block where it holds then one term at a time.");
  w.line("const int64_t " + from + " = " + sub(*v.lo, w, depth, nullptr, 0) + ";");
  w.line("const int64_t " + to + " = " + sub(*v.hi, w, depth, nullptr, 0) + ";");
  w.line("int " + found + " = 0;");
  w.open("for (int64_t " + block + " = " + from + "; " + block + " < " + to + "; " + block +
         " += " + n + ") {");
  w.line("const int64_t " + end + " = " + to + " - " + block + " < " + n + " ? " + to + " : " +
         block + " + " + n + ";");
  if (auto p = block_prologues_.find(&e); p != block_prologues_.end())
    p->second(w, block, kSearchTerms);
  w.line("int " + any + " = 0;");
  w.line("#pragma omp simd reduction(|:" + any + ")");
  w.open("for (int64_t " + k + " = " + block + "; " + k + " < " + end + "; ++" + k + ") {");
  w.line(any + " |= " + sub(*m.cond, w, depth + 1, nullptr, kPrecTernary + 1) + " ? 1 : 0;");
  w.close();
  w.line("if (!" + any + ") continue;");
  // The block's terms again, one at a time; a term the vector test flagged and this one does not
  // (a vector math function's rounding) moves the search on.
  w.line("int64_t " + k + " = " + block + ";");
  w.open("for (; " + k + " < " + end + "; ++" + k + ") {");
  w.line("if (" + sub(*m.cond, w, depth + 1, nullptr, 0) + ") break;");
  w.close();
  w.open("if (" + k + " < " + end + ") {");
  combine(e, acc, sub(*m.found, w, depth + 1, nullptr, 0), w);
  w.line(found + " = 1;");
  w.line("break;");
  w.close();
  w.close();
  w.open("if (!" + found + " && " + from + " < " + to + ") {");
  combine(e, acc, sub(*m.none, w, depth + 1, nullptr, 0), w);
  w.close();
}

void StmtLowering::combine(const Expr& e, const std::string& acc, const std::string& body,
                           CodeWriter& w) {
  w.line(fold_line(e.rop, value_type(e), acc, body, *helpers_));
}

void StmtLowering::open_running(const Expr& e, const std::string& acc, CodeWriter& w) {
  SB_ASSERT(e.kind == ExprKind::Reduce && !contains_reduce(*e.args[0]),
            "a running reduction with a nested one");
  const DType t = value_type(e);
  w.line(std::string(c_type(t)) + " " + acc + " = " + reduce_identity(e.rop, t) + ";");
  w.line("int64_t " + var_names_[e.ref] + " = " + sub(*st_.vars[e.ref].lo, w, 0, nullptr, 0) + ";");
}

void StmtLowering::fold_terms(const Expr& e, const std::string& acc, CodeWriter& w) {
  const std::string& k = var_names_[e.ref];
  w.open("for (; " + k + " < " + sub(*st_.vars[e.ref].hi, w, 0, nullptr, kPrecRel + 1) + "; ++" +
         k + ") {");
  combine(e, acc, sub(*e.args[0], w, 1, nullptr, 0), w);
  w.close();
}

std::string StmtLowering::range_bound(const Expr& e, bool hi, CodeWriter& w) {
  SB_ASSERT(e.kind == ExprKind::Reduce, "range_bound of an expression that is not a reduction");
  const IndexVar& v = st_.vars[e.ref];
  return sub(hi ? *v.hi : *v.lo, w, 0, nullptr, 0);
}

void StmtLowering::open_running_ahead(const Expr& e, int block, const std::string& last_output,
                                      CodeWriter& w) {
  const std::string& k = var_names_[e.ref];
  const std::string b = std::to_string(block);
  w.line("// Terms computed " + b + " at a time as vectors, then folded in order.");
  w.line(std::string(c_type(value_type(*e.args[0]))) + " sb_terms[" + b +
         "] __attribute__((aligned(64)));");
  w.line("int64_t sb_kb = " + k + ", sb_nb = 0;");
  w.line("int64_t sb_kend;");
  w.open("{");
  w.line(last_output + ";");
  w.line("sb_kend = " + sub(*st_.vars[e.ref].hi, w, 0, nullptr, 0) + ";");
  w.close();
}

void StmtLowering::fold_terms_ahead(const Expr& e, const std::string& acc, int block,
                                    CodeWriter& w) {
  const std::string& k = var_names_[e.ref];
  const std::string b = std::to_string(block);
  w.open("for (; " + k + " < " + sub(*st_.vars[e.ref].hi, w, 0, nullptr, kPrecRel + 1) + "; ++" +
         k + ") {");
  w.open("if (" + k + " == sb_kb + sb_nb) {");
  w.line("sb_kb = " + k + ";");
  w.line("sb_nb = sb_kend - " + k + " < " + b + " ? sb_kend - " + k + " : " + b + ";");
  w.line("#pragma omp simd");
  w.open("for (int64_t sb_q = 0; sb_q < sb_nb; ++sb_q) {");
  w.line("const int64_t " + k + " = sb_kb + sb_q;");
  w.line("sb_terms[sb_q] = " + sub(*e.args[0], w, 1, nullptr, 0) + ";");
  w.close();
  w.close();
  combine(e, acc, "sb_terms[" + k + " - sb_kb]", w);
  w.close();
}

void StmtLowering::open_reduction(const Expr& e, CodeWriter& w, int depth,
                                  const std::string& pragma_line) {
  SB_ASSERT(e.kind == ExprKind::Reduce, "open_reduction of an expression that is not a reduction");
  const IndexVar& v = st_.vars[e.ref];
  SB_ASSERT(v.lo && v.hi, "reduction variable without a range");
  const std::string& k = var_names_[e.ref];
  const std::string lo = sub(*v.lo, w, depth, nullptr, 0);
  const std::string hi = sub(*v.hi, w, depth, nullptr, kPrecRel + 1);
  if (!pragma_line.empty()) w.line(pragma_line);
  w.open("for (int64_t " + k + " = " + lo + "; " + k + " < " + hi + "; ++" + k + ") {");
  if (auto p = prologues_.find(&e); p != prologues_.end()) p->second(w);
}

void StmtLowering::fold_term(const Expr& e, const std::string& acc, CodeWriter& w) {
  combine(e, acc, term_text(e, w), w);
}

std::string StmtLowering::term_text(const Expr& e, CodeWriter& w) {
  return sub(*e.args[0], w, 1, nullptr, 0);
}

std::string StmtLowering::use_vector_scan(const Expr& e) {
  return helpers_->use_vector_scan(e.rop, value_type(e));
}

std::optional<std::string> StmtLowering::inside_condition(const Expr& e, int var,
                                                          const std::string& first,
                                                          const std::string& last,
                                                          const std::set<int>& unbound,
                                                          CodeWriter& w, bool* varies) {
  const std::optional<std::vector<BoundaryCheck>> checked = boundary_checks(
      spec_, st_, e, var, unbound, [this](const Expr& x) { return overrides_.count(&x) != 0; });
  if (!checked) return std::nullopt;
  if (varies)
    *varies = std::any_of(checked->begin(), checked->end(),
                          [](const BoundaryCheck& c) { return c.varies; });
  const std::vector<std::string> names = var_names_;
  CornerSpelling spelling;
  spelling.bind = [&](int u, bool at_last) {
    if (u == var) {
      var_names_[u] = at_last ? last : first;
      return;
    }
    const IndexVar& v = st_.vars[u];
    var_names_[u] = at_last ? "(" + sub(*v.hi, w, 0, nullptr, kPrecAdd) + " - 1)"
                            : sub(*v.lo, w, 0, nullptr, kPrecAdd + 1);
  };
  spelling.test = [&](const BoundaryCheck& c) {
    const std::string s = sub(*c.sub, w, 0, nullptr, kPrecRel + 1);
    return s + " >= 0 && " + s + " < " + extent(c.tensor, c.dim, kPrecRel + 1);
  };
  spelling.unbind = [&] { var_names_ = names; };
  spelling.conj = " && ";
  return corners_condition(*checked, var, false, spelling);
}

std::string corners_condition(const std::vector<BoundaryCheck>& checks, int var, bool leave_varying,
                              const CornerSpelling& s) {
  std::string cond;
  for (const BoundaryCheck& c : checks) {
    if (leave_varying && c.varies) continue;
    for (const auto& corner : check_corners(c, var)) {
      for (const auto& [u, at_last] : corner) s.bind(u, at_last);
      const std::string test = s.test(c);
      s.unbind();
      if (cond.empty())
        cond = test;
      else
        cond = s.join ? s.join(cond, test) : cond + s.conj + test;
    }
  }
  return cond;
}

}  // namespace sb

// ---- File assembly ----------------------------------------------------------------------------

namespace sb {

namespace {

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string shape_text(const Spec& spec, const Tensor& t) {
  std::string s = std::string(dtype_name(t.type)) + "[";
  for (size_t d = 0; d < t.shape.size(); ++d)
    s += (d ? ", " : "") + to_string(*t.shape[d], spec, nullptr);
  return s + "]";
}

}  // namespace

const std::vector<Variant>& backend_variants(const Spec& spec, const std::string& backend) {
  static const std::vector<Variant> kNone;
  auto it = spec.variants.find(backend);
  return it == spec.variants.end() ? kNone : it->second;
}

std::string file_header(const Spec& spec, const Emitter& em) {
  const std::string path = "specs/" + spec.name + ".yaml";
  std::string h;
  h += "// Generated by specbench from " + path + " (kernel \"" + spec.name + "\") for the " +
       em.backend() + " backend.\n";
  h += "// Do not edit: regenerate with `specbench gen " + path + "`.\n";
  h += "//\n";

  size_t tw = 0, sw = 0;
  for (const auto& t : spec.tensors) {
    tw = std::max(tw, t.name.size());
    sw = std::max(sw, shape_text(spec, t).size());
  }
  h += "// Tensors (ABI order):\n";
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const Tensor& t = spec.tensors[i];
    std::string line = "//   " + std::to_string(i) + "  " + pad(t.name, tw) + "  " +
                       pad(shape_text(spec, t), sw) + "  " + role_name(t.role);
    if (t.view_of >= 0) line += ", a view of " + spec.tensors[t.view_of].name;
    if (t.boundary != Boundary::None)
      line += std::string(", boundary ") + boundary_name(t.boundary);
    h += line + "\n";
  }
  std::string sizes;
  for (const auto& s : spec.sizes) sizes += (sizes.empty() ? "" : ", ") + s.name;
  h += "// Sizes (ABI order): " + (sizes.empty() ? std::string("none") : sizes) + "\n";

  const auto& vs = backend_variants(spec, em.backend());
  h += "// Variants:";
  if (vs.empty()) h += " none";
  h += "\n";
  size_t vw = 0;
  for (const auto& v : vs) vw = std::max(vw, v.name.size());
  for (const auto& v : vs) {
    std::string line = "//   " + pad(v.name, vw) + "  strategy " + v.strategy;
    const StrategyInfo* info = find_strategy(em, v.strategy);
    SB_ASSERT(info != nullptr, "variant '" + v.name + "' has unknown strategy " + v.strategy);
    for (size_t i = 0; i < info->params.size(); ++i) {
      const ParamInfo& p = info->params[i];
      line +=
          std::string(i ? ", " : ": ") + p.name + " = " + std::to_string(param(v, *info, p.name));
      if (!v.params.count(p.name)) line += " (default)";
    }
    h += line + "\n";
  }
  return h;
}

// A "// ..." comment line wrapped at 100 columns (continuation lines start with "// " too).
std::string wrap_comment(const std::string& line) {
  constexpr size_t kColumns = 100;
  if (line.size() <= kColumns || line.rfind("// ", 0) != 0) return line + "\n";
  std::string out, cur = "//";
  size_t i = 3;
  while (i < line.size()) {
    size_t j = line.find(' ', i);
    if (j == std::string::npos) j = line.size();
    const std::string word = line.substr(i, j - i);
    if (cur.size() > 2 && cur.size() + 1 + word.size() > kColumns) {
      out += cur + "\n";
      cur = "//";
    }
    cur += " " + word;
    i = j + 1;
  }
  return out + cur + "\n";
}

Status storage_only_in_products(const Spec& spec, const std::string& backend,
                                const std::string& why,
                                const std::function<bool(const Contraction&)>& takes) {
  for (const Statement& st : spec.stmts) {
    const Tensor& out = spec.tensors[st.out];
    auto refuse = [&](const Loc& loc, DType t, const std::string& what) {
      return make_error(loc, "backend '" + backend + "' takes " + dtype_name(t) +
                                 " tensors only " + why + "; " + what);
    };
    if (is_storage_type(out.type))
      return refuse(st.loc, out.type, "'" + out.name + "' is written here");
    std::set<const Expr*> operands;
    const std::optional<Contraction> m = match_contraction(spec, st);
    if (m)
      for (const Expr* r : reads_of(*m->reduce)) operands.insert(r);
    for (const Expr* r : reads_of(*st.rhs)) {
      const Tensor& t = spec.tensors[r->ref];
      if (!is_storage_type(t.type)) continue;
      if (!operands.count(r))
        return refuse(r->loc, t.type, "'" + t.name + "' is read here outside one");
      if (!takes(*m))
        return refuse(r->loc, t.type, "'" + t.name + "' is read here by a product it cannot take");
    }
  }
  return {};
}

std::string storage_types(const Spec& spec, StorageLang lang) {
  std::set<DType> used;
  for (const Tensor& t : spec.tensors)
    if (is_storage_type(t.type)) used.insert(t.type);
  if (used.empty()) return "";
  const std::string q = lang == StorageLang::Cuda ? "__host__ __device__ " : "";
  std::string out = banner("Storage types: elements read as float, floats stored rounded to nearest even");
  out += "union sb_f32_bits {\n  float f;\n  uint32_t u;\n};\n\n";
  if (used.count(DType::BF16)) {
    out += "// bf16: the upper half of an IEEE binary32 (a quiet NaN stays one).\n";
    out += "struct sb_bf16 {\n  uint16_t bits;\n";
    out += "  " + q + "operator float() const {\n";
    out += "    sb_f32_bits c;\n    c.u = (uint32_t)bits << 16;\n    return c.f;\n  }\n";
    out += "  " + q + "sb_bf16& operator=(float f) {\n";
    out += "    sb_f32_bits c;\n    c.f = f;\n";
    out += "    bits = f != f ? (uint16_t)0x7fc0u\n";
    out += "                  : (uint16_t)((c.u + 0x7fffu + ((c.u >> 16) & 1u)) >> 16);\n";
    out += "    return *this;\n  }\n};\n\n";
  }
  if (used.count(DType::F16)) {
    // In integer arithmetic and selects, so that a loop of conversions vectorises (GCC 12 does
    // not vectorise _Float16 conversions without AVX512-FP16); on a CUDA device, PTX's cvt.
    const bool cuda = lang == StorageLang::Cuda;
    out += "// f16: IEEE binary16.\n";
    out += "struct sb_f16 {\n  uint16_t bits;\n";
    out += "  " + q + "operator float() const {\n";
    if (cuda) {
      out += "#ifdef __CUDA_ARCH__\n    float f;\n";
      out += "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(bits));\n    return f;\n#else\n";
    }
    out += "    const uint32_t e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;\n";
    out += "    sb_f32_bits c, sub;\n";
    out += "    sub.f = (float)m * 5.9604644775390625e-8f;  // zero or subnormal: m * 2^-24\n";
    out += "    c.u = e == 0x1fu ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13);\n";
    out += "    c.u = (e == 0 ? sub.u : c.u) | ((uint32_t)(bits & 0x8000u) << 16);\n";
    out += "    return c.f;\n";
    if (cuda) out += "#endif\n";
    out += "  }\n";
    out += "  " + q + "sb_f16& operator=(float f) {\n";
    if (cuda) {
      out += "#ifdef __CUDA_ARCH__\n";
      out += "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(bits) : \"f\"(f));\n#else\n";
    }
    out += "    sb_f32_bits c, a;\n    c.f = f;\n";
    out += "    a.u = c.u & 0x7fffffffu;\n";
    out += "    // Below 2^-14 a multiple of 2^-24; else the exponent rebiased and 13 bits of the\n";
    out += "    // mantissa rounded away; from 65520 infinity; NaN a quiet NaN.\n";
    out += "    const uint32_t sub = (uint32_t)(int32_t)rintf(fminf(a.f, 6.103515625e-05f) * 16777216.0f);\n";
    out += "    const uint32_t nor = (a.u - 0x38000000u + 0xfffu + ((a.u >> 13) & 1u)) >> 13;\n";
    out += "    const uint32_t h = a.u > 0x7f800000u   ? 0x7e00u\n";
    out += "                       : a.u >= 0x477ff000u ? 0x7c00u\n";
    out += "                       : a.u < 0x38800000u  ? sub\n";
    out += "                                            : nor;\n";
    out += "    bits = (uint16_t)(((c.u >> 16) & 0x8000u) | h);\n";
    if (cuda) out += "#endif\n";
    out += "    return *this;\n  }\n};\n\n";
  }
  return out;
}

std::string banner(const std::string& title) {
  const std::string rule = "// " + std::string(77, '-') + "\n";
  return rule + "// " + title + "\n" + rule + "\n";
}

std::string variant_fn(const Variant& v) {
  return "sb_variant_" + v.name;
}

void unpack_args(const Spec& spec, const std::string& args, const std::set<int>& used_tensors,
                 const std::set<int>& used_sizes, CodeWriter& w) {
  std::vector<std::string> unused;
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    const Tensor& t = spec.tensors[i];
    const std::string ty = std::string(t.role == Role::In ? "const " : "") + c_type(t.type) + "*";
    const std::string n = c_name(t.name);
    w.line(ty + " " + n + " = (" + ty + ")" + args + "->tensors[" + std::to_string(i) + "];");
    if (!used_tensors.count(static_cast<int>(i))) unused.push_back(n);
  }
  for (size_t i = 0; i < spec.sizes.size(); ++i) {
    const std::string n = c_name(spec.sizes[i].name);
    w.line("const int64_t " + n + " = " + args + "->sizes[" + std::to_string(i) + "];");
    if (!used_sizes.count(static_cast<int>(i))) unused.push_back(n);
  }
  for (const auto& n : unused) w.line("(void)" + n + ";  // not used by any statement");
}

std::vector<std::string> kernel_params(const Spec& spec, const std::set<int>& tensors,
                                       const std::set<int>& sizes, const std::set<int>& out_tensors,
                                       const std::string& restrict_kw) {
  std::vector<std::string> ps;
  for (int t : tensors) {
    const Tensor& tn = spec.tensors[t];
    ps.push_back(std::string(out_tensors.count(t) ? "" : "const ") + c_type(tn.type) + "* " +
                 restrict_kw + " " + c_name(tn.name));
  }
  for (int s : sizes) ps.push_back("const int64_t " + c_name(spec.sizes[s].name));
  return ps;
}

std::vector<std::string> kernel_params(const Spec& spec, const std::set<int>& tensors,
                                       const std::set<int>& sizes, int out_tensor,
                                       const std::string& restrict_kw) {
  return kernel_params(spec, tensors, sizes, std::set<int>{out_tensor}, restrict_kw);
}

std::vector<std::string> call_args(const Spec& spec, const std::set<int>& tensors,
                                   const std::set<int>& sizes) {
  std::vector<std::string> as;
  for (int t : tensors) as.push_back(c_name(spec.tensors[t].name));
  for (int s : sizes) as.push_back(c_name(spec.sizes[s].name));
  return as;
}

std::string scaled_term(int64_t mult, const std::string& text) {
  if (mult == 1) return text;
  if (mult == -1) return "-" + text;
  return std::to_string(mult) + " * " + text;
}

std::vector<std::string> var_free_terms(StmtLowering& L, const Affine& a) {
  CodeWriter none;
  std::vector<std::string> terms;
  for (const auto& [s, c] : a.sizes) terms.push_back(scaled_term(c, L.size_name(s)));
  for (const AffineAtom& t : a.atoms)
    terms.push_back(scaled_term(t.coef, L.expr(*t.expr, none, kPrecUnary)));
  if (a.constant != 0) terms.push_back(int_literal(a.constant));
  return terms;
}

std::string dispatch_section(const Spec& spec, const std::string& backend) {
  const auto& vs = backend_variants(spec, backend);
  std::string d;
  if (vs.empty()) {
    d += "static const sb_variant* const sb_variants = NULL;\n\n";
  } else {
    d += "static const sb_variant sb_variants[] = {\n";
    for (const auto& v : vs) d += "    {\"" + v.name + "\", " + variant_fn(v) + "},\n";
    d += "};\n\n";
  }
  d += "static const sb_module sb_module_info = {\n";
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"SPECBENCH_ABI_VERSION,", ""},
      {"\"" + spec.name + "\",", "spec"},
      {"\"" + backend + "\",", "backend"},
      {std::to_string(spec.tensors.size()) + ",", "tensors"},
      {std::to_string(spec.sizes.size()) + ",", "sizes"},
      {std::to_string(vs.size()) + ",", "variants"},
      {"sb_variants,", ""},
  };
  size_t width = 0;
  for (const auto& [value, comment] : fields)
    if (!comment.empty()) width = std::max(width, value.size());
  for (const auto& [value, comment] : fields)
    d += "    " + (comment.empty() ? value : pad(value, width) + "  // " + comment) + "\n";
  d += "};\n\n";
  d += "extern \"C\" __attribute__((visibility(\"default\"))) const sb_module* "
       "specbench_module(void) "
       "{\n";
  d += "  return &sb_module_info;\n";
  d += "}\n";
  return d;
}

std::vector<std::string> gemm_args(const GemmOperands& g, int64_t mc, int64_t kc, int64_t nc) {
  return {g.m,
          g.n,
          g.k,
          g.x,
          g.xs_i,
          g.xs_k,
          g.y,
          g.ys_k,
          g.ys_j,
          g.c,
          g.ldc,
          std::to_string(mc),
          std::to_string(kc),
          std::to_string(nc)};
}

std::string gemm_comment(const std::string& c, const std::string& x, bool x_trans,
                         const std::string& y, bool y_trans, int64_t mc, int64_t kc, int64_t nc) {
  return c + " = " + x + (x_trans ? "^T" : "") + " * " + y + (y_trans ? "^T" : "") +
         ", blocked with mc = " + std::to_string(mc) + ", kc = " + std::to_string(kc) +
         ", nc = " + std::to_string(nc) + ".";
}

}  // namespace sb
