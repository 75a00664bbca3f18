#include "ir/scalar_types.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "support/diag.h"

namespace sb {

namespace {

double same(double v) {
  return v;
}
double to_f32(double v) {
  return static_cast<double>(static_cast<float>(v));
}
double parse_f64(const char* s) {
  return std::strtod(s, nullptr);
}
double parse_f32(const char* s) {
  return static_cast<double>(std::strtof(s, nullptr));
}

template <typename T>
double load_as(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}
template <typename T>
void store_float(unsigned char* p, double v) {
  const T x = static_cast<T>(v);
  std::memcpy(p, &x, sizeof x);
}
// Round to nearest; NaN and out-of-range values become the minimum (like x86 conversions). The
// upper bound is -min, 2^(bits-1), exact in a double (the maximum of an int64_t is not).
template <typename T>
void store_int(unsigned char* p, double v) {
  T x = std::numeric_limits<T>::min();
  const double r = std::nearbyint(v);
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  if (r >= lo && r < -lo) x = static_cast<T>(r);
  std::memcpy(p, &x, sizeof x);
}

// Rounds v to a binary floating-point format of `precision` significant bits whose normal
// exponents are [emin, emax], to nearest with ties to even (the default rounding mode of
// nearbyint), with the format's subnormals, and to infinity past its range.
double round_to_format(double v, int precision, int emin, int emax) {
  if (!std::isfinite(v) || v == 0) return v;
  const int e = std::max(std::ilogb(v), emin);  // below emin the quantum stays 2^(emin - p + 1)
  const double q = std::ldexp(std::nearbyint(std::ldexp(v, precision - 1 - e)), e - precision + 1);
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), emax);
  return std::fabs(q) > max_finite ? std::copysign(HUGE_VAL, v) : q;
}
double to_f16(double v) {
  return round_to_format(v, 11, -14, 15);
}
double to_bf16(double v) {
  return round_to_format(v, 8, -126, 127);
}
double parse_f16(const char* s) {
  return to_f16(std::strtod(s, nullptr));
}
double parse_bf16(const char* s) {
  return to_bf16(std::strtod(s, nullptr));
}
// f16 and bf16 elements: IEEE binary16, and the upper half of an IEEE binary32.
double load_f16(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  const int exp = (h >> 10) & 0x1f;
  const int frac = h & 0x3ff;
  double v;
  if (exp == 0x1f)
    v = frac ? std::numeric_limits<double>::quiet_NaN() : HUGE_VAL;
  else if (exp == 0)
    v = std::ldexp(frac, -24);
  else
    v = std::ldexp(frac | 0x400, exp - 25);
  return (h & 0x8000) ? -v : v;
}
void store_f16(unsigned char* p, double v) {
  uint16_t h;
  const double r = to_f16(v);
  const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  if (std::isnan(r)) {
    h = 0x7e00;
  } else if (std::isinf(r)) {
    h = sign | 0x7c00;
  } else if (std::fabs(r) < std::ldexp(1.0, -14)) {  // zero or subnormal: a multiple of 2^-24
    h = sign | static_cast<uint16_t>(std::ldexp(std::fabs(r), 24));
  } else {
    const int e = std::ilogb(r);
    const uint16_t frac = static_cast<uint16_t>(std::ldexp(std::fabs(r), 10 - e)) & 0x3ff;
    h = sign | static_cast<uint16_t>((e + 15) << 10) | frac;
  }
  std::memcpy(p, &h, 2);
}
double load_bf16(const unsigned char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return static_cast<double>(f);
}
void store_bf16(unsigned char* p, double v) {
  // Exact in a float, whose upper half it then is (NaN: the quiet NaN 0x7fc0).
  const float f = std::isnan(v) ? std::numeric_limits<float>::quiet_NaN()
                                : static_cast<float>(to_bf16(v));
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t h = static_cast<uint16_t>(u >> 16);
  std::memcpy(p, &h, 2);
}

// One record per DType, in enumerator order. A field a record leaves out is null (or 0, false):
// the type has no such spelling or property, and the code that needs it asserts it is there.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
// One record per DType, in enumerator order.
const std::vector<ScalarType> kTypes = {
    {.type = DType::Unknown,
     .name = "unknown",
     .kind = ScalarKind::Unknown,
     .printed_as = DType::Index,
     .suffix = "i64",
     .c_type = "int64_t",
     .mojo_type = "Int",
     .mojo_dtype = "DType.int",
     .mojo_suffix = "int"},
    {.type = DType::F32,
     .name = "f32",
     .tensor_type = true,
     .kind = ScalarKind::Float,
     .bits = 32,
     .bytes = 4,
     .printed_as = DType::F32,
     .suffix = "f32",
     .c_type = "float",
     .c_literal_suffix = "f",
     .c_libm_suffix = "f",
     .c_lowest = "-INFINITY",
     .c_highest = "INFINITY",
     .c_bits_type = "unsigned int",
     .cuda_vector2 = "float2",
     .cuda_vector4 = "float4",
     .blas_prefix = "s",
     .cuda_data_type = "CUDA_R_32F",
     .mojo_type = "Float32",
     .mojo_dtype = "DType.float32",
     .mojo_suffix = "f32",
     .mlir_type = "f32",
     .mlir_nan = "0x7FC00000",
     .mlir_inf = "0x7F800000",
     .mlir_neg_inf = "0xFF800000",
     .max_digits = 9,
     .integral_limit = 16777216.0,  // 2^24
     .round = to_f32,
     .epsilon = 0x1p-23,
     .parse = parse_f32,
     // FLT_MAX plus half an ulp, 2^128 - 2^103 (round to nearest).
     .rounds_to_inf = 340282356779733661637539395458142568448.0,
     .load = load_as<float>,
     .store = store_float<float>},
    {.type = DType::F64,
     .name = "f64",
     .tensor_type = true,
     .kind = ScalarKind::Float,
     .bits = 64,
     .bytes = 8,
     .printed_as = DType::F64,
     .suffix = "f64",
     .c_type = "double",
     .c_literal_suffix = "",
     .c_libm_suffix = "",
     .c_lowest = "-INFINITY",
     .c_highest = "INFINITY",
     .c_bits_type = "unsigned long long",
     .cuda_vector2 = "double2",
     .blas_prefix = "d",
     .cuda_data_type = "CUDA_R_64F",
     .mojo_type = "Float64",
     .mojo_dtype = "DType.float64",
     .mojo_suffix = "f64",
     .mlir_type = "f64",
     .mlir_nan = "0x7FF8000000000000",
     .mlir_inf = "0x7FF0000000000000",
     .mlir_neg_inf = "0xFFF0000000000000",
     .max_digits = 17,
     .integral_limit = 1e15,
     .round = same,
     .epsilon = 0x1p-52,
     .parse = parse_f64,
     .load = load_as<double>,
     .store = store_float<double>},
    {.type = DType::I32,
     .name = "i32",
     .tensor_type = true,
     .kind = ScalarKind::SignedInt,
     .bits = 32,
     .bytes = 4,
     .printed_as = DType::I32,
     .suffix = "i32",
     .c_type = "int32_t",
     .c_lowest = "INT32_MIN",
     .c_highest = "INT32_MAX",
     .c_bits_type = "unsigned int",
     .cuda_vector2 = "int2",
     .cuda_vector4 = "int4",
     .mojo_type = "Int32",
     .mojo_dtype = "DType.int32",
     .mojo_suffix = "i32",
     .mlir_type = "i32",
     .mlir_int_type = "i32",
     .mlir_lowest = "-2147483648",
     .mlir_highest = "2147483647",
     .min = std::numeric_limits<int32_t>::min(),
     .max = std::numeric_limits<int32_t>::max(),
     .load = load_as<int32_t>,
     .store = store_int<int32_t>},
    {.type = DType::I64,
     .name = "i64",
     .tensor_type = true,
     .kind = ScalarKind::SignedInt,
     .bits = 64,
     .bytes = 8,
     .printed_as = DType::I64,
     .suffix = "i64",
     .c_type = "int64_t",
     .c_lowest = "INT64_MIN",
     .c_highest = "INT64_MAX",
     .c_bits_type = "unsigned long long",
     .cuda_vector2 = "longlong2",
     .mojo_type = "Int64",
     .mojo_dtype = "DType.int64",
     .mojo_suffix = "i64",
     .mlir_type = "i64",
     .mlir_int_type = "i64",
     .mlir_lowest = "-9223372036854775808",
     .mlir_highest = "9223372036854775807",
     .min = std::numeric_limits<int64_t>::min(),
     .max = std::numeric_limits<int64_t>::max(),
     .load = load_as<int64_t>,
     .store = store_int<int64_t>},
    {.type = DType::F16,
     .name = "f16",
     .tensor_type = true,
     .kind = ScalarKind::Float,
     .bits = 16,
     .bytes = 2,
     .printed_as = DType::F16,
     .compute = DType::F32,
     .suffix = "f16",
     .c_type = "sb_f16",
     .c_bits_type = "unsigned short",
     .cuda_data_type = "CUDA_R_16F",
     .mojo_type = "Float16",
     .mojo_dtype = "DType.float16",
     .mojo_suffix = "f16",
     .mlir_type = "f16",
     .max_digits = 5,
     .integral_limit = 2048.0,  // 2^11
     .round = to_f16,
     .epsilon = 0x1p-10,
     .parse = parse_f16,
     .rounds_to_inf = 65520.0,  // 65504 plus half an ulp (16)
     .load = load_f16,
     .store = store_f16},
    {.type = DType::BF16,
     .name = "bf16",
     .tensor_type = true,
     .kind = ScalarKind::Float,
     .bits = 16,
     .bytes = 2,
     .printed_as = DType::BF16,
     .compute = DType::F32,
     .suffix = "bf16",
     .c_type = "sb_bf16",
     .c_bits_type = "unsigned short",
     .cuda_data_type = "CUDA_R_16BF",
     .mojo_type = "BFloat16",
     .mojo_dtype = "DType.bfloat16",
     .mojo_suffix = "bf16",
     .mlir_type = "bf16",
     .max_digits = 4,
     .integral_limit = 256.0,  // 2^8
     .round = to_bf16,
     .epsilon = 0x1p-7,
     .parse = parse_bf16,
     // The largest bf16, 2^128 - 2^120, plus half an ulp: 2^128 - 2^119.
     .rounds_to_inf = 339617752923046005526922703901628039168.0,
     .load = load_bf16,
     .store = store_bf16},
    {.type = DType::Index,
     .name = "index",
     .kind = ScalarKind::Index,
     .bits = 64,
     .bytes = 8,
     .printed_as = DType::Index,
     .suffix = "i64",
     .c_type = "int64_t",
     .c_lowest = "INT64_MIN",
     .c_highest = "INT64_MAX",
     .c_bits_type = "unsigned long long",
     .mojo_type = "Int",
     .mojo_dtype = "DType.int",
     .mojo_suffix = "int",
     .mlir_type = "index",
     .mlir_int_type = "i64",
     .mlir_lowest = "-9223372036854775808",
     .mlir_highest = "9223372036854775807",
     .min = std::numeric_limits<int64_t>::min(),
     .max = std::numeric_limits<int64_t>::max()},
    {.type = DType::Bool,
     .name = "bool",
     .kind = ScalarKind::Bool,
     .bits = 1,
     .printed_as = DType::Bool,
     .suffix = "bool",
     .c_type = "bool",
     .mojo_type = "Bool",
     .mojo_dtype = "DType.bool",
     .mojo_suffix = "bool",
     .mlir_type = "i1",
     .min = 0,
     .max = 1},
    {.type = DType::FloatLit,
     .name = "float literal",
     .kind = ScalarKind::FloatLit,
     .printed_as = DType::F64,
     .suffix = "f64",
     .c_type = "double",
     .mojo_type = "Float64",
     .mojo_dtype = "DType.float64",
     .mojo_suffix = "f64"},
    {.type = DType::IntLit,
     .name = "integer literal",
     .kind = ScalarKind::IntLit,
     .printed_as = DType::Index,
     .suffix = "i64",
     .c_type = "int64_t",
     .mojo_type = "Int",
     .mojo_dtype = "DType.int",
     .mojo_suffix = "int"},
};
#pragma GCC diagnostic pop

}  // namespace

const std::vector<ScalarType>& scalar_types() {
  return kTypes;
}

const ScalarType& scalar(DType t) {
  const size_t i = static_cast<size_t>(t);
  SB_ASSERT(i < kTypes.size() && kTypes[i].type == t, "scalar type without a record");
  return kTypes[i];
}

const ScalarType* tensor_scalar(std::string_view name) {
  for (const ScalarType& s : kTypes)
    if (s.tensor_type && name == s.name) return &s;
  return nullptr;
}

const std::string& tensor_type_list() {
  static const std::string list = [] {
    std::vector<std::string> names;
    for (const ScalarType& s : kTypes)
      if (s.tensor_type) names.push_back(s.name);
    std::string out;
    for (size_t i = 0; i < names.size(); ++i)
      out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
  }();
  return list;
}

const char* dtype_name(DType t) {
  return scalar(t).name;
}

int dtype_bytes(DType t) {
  return scalar(t).bytes;
}

bool is_float(DType t) {
  return scalar(t).kind == ScalarKind::Float;
}

DType compute_type(DType t) {
  const DType c = scalar(t).compute;
  return c == DType::Unknown ? t : c;
}

bool is_storage_type(DType t) {
  return scalar(t).compute != DType::Unknown;
}

bool is_integer(DType t) {
  const ScalarKind k = scalar(t).kind;
  return k == ScalarKind::SignedInt || k == ScalarKind::Index;
}

}  // namespace sb
