// The scalar type table (codegen/ir/scalar_types.h): every DType has its record, and every type
// a spec can name has every fact the printers and the harness look up.
#include "ir/scalar_types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace sb {
namespace {

constexpr DType kAll[] = {DType::Unknown, DType::F32,   DType::F64,  DType::I32,
                          DType::I64,     DType::F16,   DType::BF16, DType::Index,
                          DType::Bool,    DType::FloatLit, DType::IntLit};

bool set(const char* s) {
  return s != nullptr && *s != '\0';
}

TEST(ScalarTypes, EveryDTypeHasItsRecordInOrder) {
  ASSERT_EQ(scalar_types().size(), std::size(kAll));
  for (size_t i = 0; i < std::size(kAll); ++i) {
    EXPECT_EQ(scalar_types()[i].type, kAll[i]) << i;
    const ScalarType& s = scalar(kAll[i]);
    EXPECT_EQ(s.type, kAll[i]);
    EXPECT_TRUE(set(s.name)) << i;
    EXPECT_TRUE(set(s.c_type)) << s.name;
    EXPECT_TRUE(set(s.mojo_type)) << s.name;
    EXPECT_TRUE(set(s.mojo_dtype)) << s.name;
    // What a value of the type prints as is a type that has an MLIR spelling.
    EXPECT_TRUE(set(scalar(s.printed_as).mlir_type)) << s.name;
    EXPECT_EQ(scalar(s.printed_as).printed_as, s.printed_as) << s.name;
  }
}

TEST(ScalarTypes, EveryTensorTypeHasACompleteRecord) {
  int tensor_types = 0;
  for (const ScalarType& s : scalar_types()) {
    if (!s.tensor_type) continue;
    ++tensor_types;
    SCOPED_TRACE(s.name);
    EXPECT_EQ(tensor_scalar(s.name), &s);
    EXPECT_EQ(s.printed_as, s.type);
    EXPECT_GT(s.bits, 0);
    EXPECT_EQ(s.bytes * 8, s.bits);
    EXPECT_EQ(dtype_bytes(s.type), s.bytes);
    EXPECT_TRUE(set(s.suffix));
    EXPECT_TRUE(set(s.mojo_suffix));
    EXPECT_TRUE(set(s.mlir_type));
    EXPECT_TRUE(set(s.c_bits_type));
    // A storage type's values compute in f32, whose record holds their identities and
    // spellings; it has none of its own.
    EXPECT_EQ(is_storage_type(s.type), s.compute != DType::Unknown);
    if (is_storage_type(s.type)) {
      EXPECT_EQ(s.compute, DType::F32);
      EXPECT_EQ(compute_type(s.type), DType::F32);
    } else {
      EXPECT_EQ(compute_type(s.type), s.type);
      EXPECT_TRUE(set(s.c_lowest));
      EXPECT_TRUE(set(s.c_highest));
      EXPECT_TRUE(set(s.cuda_vector2));
    }
    ASSERT_NE(s.load, nullptr);
    ASSERT_NE(s.store, nullptr);
    // A buffer element stores and loads back a value the type holds.
    unsigned char buf[16] = {};
    s.store(buf, -3.0);
    EXPECT_EQ(s.load(buf), -3.0);
    if (s.kind == ScalarKind::Float) {
      EXPECT_TRUE(is_float(s.type));
      EXPECT_FALSE(is_integer(s.type));
      if (!is_storage_type(s.type)) {
        EXPECT_NE(s.c_literal_suffix, nullptr);
        EXPECT_NE(s.c_libm_suffix, nullptr);
        EXPECT_TRUE(set(s.mlir_nan) && set(s.mlir_inf) && set(s.mlir_neg_inf));
        EXPECT_TRUE(set(s.blas_prefix));
      }
      EXPECT_EQ(s.round(1.0 + s.epsilon), 1.0 + s.epsilon);
      EXPECT_EQ(s.round(1.0 + s.epsilon / 4), 1.0);
      ASSERT_NE(s.round, nullptr);
      ASSERT_NE(s.parse, nullptr);
      EXPECT_GT(s.max_digits, 0);
      EXPECT_GT(s.integral_limit, 0);
      // The literal functions agree: the decimal text of a value parses to its rounding.
      EXPECT_EQ(s.parse("0.1"), s.round(0.1));
      EXPECT_EQ(s.round(s.round(1.0 / 3.0)), s.round(1.0 / 3.0));
      s.store(buf, 0.1);
      EXPECT_EQ(s.load(buf), s.round(0.1));
      // Integral values below the full-print limit are exact in the type.
      EXPECT_EQ(s.round(s.integral_limit - 1), s.integral_limit - 1);
    } else {
      ASSERT_EQ(s.kind, ScalarKind::SignedInt);
      EXPECT_TRUE(is_integer(s.type));
      EXPECT_FALSE(is_float(s.type));
      EXPECT_EQ(s.min, -(s.max)-1);
      EXPECT_EQ(static_cast<double>(s.max) + 1, std::ldexp(1.0, s.bits - 1));
      EXPECT_EQ(std::to_string(s.min), s.mlir_lowest);
      EXPECT_EQ(std::to_string(s.max), s.mlir_highest);
      EXPECT_TRUE(set(s.mlir_int_type));
      // Out-of-range values and NaN store as the minimum.
      s.store(buf, 1e300);
      EXPECT_EQ(s.load(buf), static_cast<double>(s.min));
      s.store(buf, NAN);
      EXPECT_EQ(s.load(buf), static_cast<double>(s.min));
      // 2^(bits-1), one past the maximum, is out of range too (for i64 the maximum itself is not
      // a double); the value below it is stored exactly when a double holds it.
      s.store(buf, std::ldexp(1.0, s.bits - 1));
      EXPECT_EQ(s.load(buf), static_cast<double>(s.min));
      s.store(buf, -std::ldexp(1.0, s.bits - 1));
      EXPECT_EQ(s.load(buf), static_cast<double>(s.min));
      s.store(buf, std::ldexp(1.0, std::min(s.bits - 1, 53)) - 1);
      EXPECT_EQ(s.load(buf), std::ldexp(1.0, std::min(s.bits - 1, 53)) - 1);
    }
  }
  EXPECT_EQ(tensor_types, 6);
  EXPECT_EQ(tensor_type_list(), "f32, f64, i32, i64, f16 or bf16");
}

// f16 and bf16 round to nearest with ties to even, keep their subnormals, overflow to infinity
// past the largest value plus half an ulp, and store NaN as a NaN; a stored element loads back
// the rounded value, bit for bit in the formats' encodings.
TEST(ScalarTypes, HalfPrecisionRoundingAndEncoding) {
  const ScalarType& h = scalar(DType::F16);
  const ScalarType& b = scalar(DType::BF16);
  EXPECT_EQ(h.round(1.0 + 0x1p-11), 1.0);                 // a tie: to the even 1.0
  EXPECT_EQ(h.round(1.0 + 3 * 0x1p-11), 1.0 + 0x1p-9);   // a tie: to the even 1 + 2^-9
  EXPECT_EQ(h.round(65504.0), 65504.0);
  EXPECT_EQ(h.round(65519.0), 65504.0);
  EXPECT_TRUE(std::isinf(h.round(65520.0)));
  EXPECT_EQ(h.round(0x1p-24), 0x1p-24);                  // the least subnormal
  EXPECT_EQ(h.round(0x1p-26), 0.0);
  EXPECT_EQ(h.round(3 * 0x1p-25), 0x1p-23);              // 1.5 subnormal quanta: to even 2
  EXPECT_EQ(b.round(1.0 + 0x1p-8), 1.0);
  EXPECT_EQ(b.round(1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6);
  EXPECT_EQ(b.round(0x1p-133), 0x1p-133);                // the least bf16 subnormal
  EXPECT_TRUE(std::isinf(b.round(b.rounds_to_inf)));
  EXPECT_FALSE(std::isinf(b.round(std::nextafter(b.rounds_to_inf, 0.0))));
  EXPECT_TRUE(std::isinf(h.round(h.rounds_to_inf)));

  unsigned char buf[2];
  auto bits = [&] { return static_cast<unsigned>(buf[0] | (buf[1] << 8)); };
  h.store(buf, 1.0);
  EXPECT_EQ(bits(), 0x3c00u);
  h.store(buf, -2.5);
  EXPECT_EQ(bits(), 0xc100u);
  h.store(buf, 0x1p-24);
  EXPECT_EQ(bits(), 0x0001u);
  h.store(buf, 1e6);
  EXPECT_EQ(bits(), 0x7c00u);
  h.store(buf, NAN);
  EXPECT_TRUE(std::isnan(h.load(buf)));
  b.store(buf, 1.0);
  EXPECT_EQ(bits(), 0x3f80u);
  b.store(buf, -0x1p-133);
  EXPECT_EQ(bits(), 0x8001u);
  b.store(buf, NAN);
  EXPECT_TRUE(std::isnan(b.load(buf)));
  for (double v : {0.1, -3.75, 1e-6, 12345.678, 6e-8}) {
    h.store(buf, v);
    EXPECT_EQ(h.load(buf), h.round(v)) << v;
    b.store(buf, v);
    EXPECT_EQ(b.load(buf), b.round(v)) << v;
  }
}

TEST(ScalarTypes, IndexAndLiterals) {
  EXPECT_TRUE(is_integer(DType::Index));
  EXPECT_FALSE(is_integer(DType::IntLit));
  EXPECT_FALSE(is_float(DType::FloatLit));
  EXPECT_EQ(scalar(DType::FloatLit).printed_as, DType::F64);
  EXPECT_EQ(scalar(DType::IntLit).printed_as, DType::Index);
  EXPECT_EQ(scalar(DType::Unknown).printed_as, DType::Index);
  const ScalarType& ix = scalar(DType::Index);
  EXPECT_EQ(std::to_string(ix.min), ix.mlir_lowest);
  EXPECT_EQ(std::to_string(ix.max), ix.mlir_highest);
  EXPECT_STREQ(ix.mlir_int_type, "i64");
  EXPECT_EQ(tensor_scalar("index"), nullptr);  // not a tensor type
  EXPECT_EQ(tensor_scalar("f8"), nullptr);
  EXPECT_STREQ(dtype_name(DType::FloatLit), "float literal");
}

}  // namespace
}  // namespace sb
