// The scalar types of the IR: one record per type, holding every fact that the checker, the
// printers and the harness need about it (kind, size, its spelling in each target language, the
// limits and identities printers spell, how its literals are formatted). Code that needs a fact
// about a type looks it up here instead of switching over DType; code that treats kinds of types
// differently (integer vs floating-point arithmetic) asks the record's kind (is_float, is_int).
//
// Adding a scalar type means: one DType enumerator and one record in scalar_types.cpp, plus
// whatever the new type needs that no record field describes (for example helper functions in
// generated code).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sb {

// Value types. Index is the integer type of index arithmetic (int64 in generated code); Bool
// is the type of comparisons. FloatLit and IntLit are the provisional types of untyped
// literals before check_spec() resolves them against their context.
enum class DType { Unknown, F32, F64, I32, I64, F16, BF16, Index, Bool, FloatLit, IntLit };

enum class ScalarKind {
  Float,      // IEEE binary floating point (f32, f64)
  SignedInt,  // two's complement integer of `bits` bits that wraps (i32, i64)
  Index,      // the integer of index arithmetic (int64)
  Bool,
  FloatLit,  // an untyped literal before checking
  IntLit,
  Unknown,
};

struct ScalarType {
  DType type;
  // As specs write it ("f32"), or a description for the internal types ("float literal").
  const char* name;
  // A tensor may have this type (a spec's `type:` and the cast functions f32(x) name it).
  bool tensor_type;
  ScalarKind kind;
  int bits;   // of the value as stored (0 for the literal and unknown types)
  int bytes;  // of a tensor element (the ABI's buffer element); 0 where no buffer holds one
  // The type a value of this type is printed as: itself, F64 for a float literal, Index for an
  // integer literal (and for Unknown).
  DType printed_as;
  // A storage type (f16, bf16) holds values that compute in another type: a read of such a
  // tensor is a value of `compute` (F32), and a value stored into one is rounded to nearest,
  // ties to even. Unknown for every other type, whose values compute in the type itself.
  DType compute;
  // The suffix of the helper functions of generated C, CUDA and Mojo ("f32", "i64" for index).
  const char* suffix;

  // ---- C, C++ and CUDA
  const char* c_type;            // "float", "int64_t"
  const char* c_literal_suffix;  // of a floating-point literal: "f" for float
  const char* c_libm_suffix;     // of the libm function: "f" for float (expf, fmodf, fabsf)
  const char* c_lowest;          // identity of max: "-INFINITY", "INT32_MIN"
  const char* c_highest;         // identity of min: "INFINITY", "INT32_MAX"
  // The unsigned integer of the same size, for compare-and-swap on the bits (CUDA atomics).
  const char* c_bits_type;
  const char* cuda_vector2;  // CUDA vector types of 2 and 4 lanes (nullptr where none)
  const char* cuda_vector4;
  // The prefix of the BLAS (and cuBLAS) routines of this type: "s" (sgemm), "d"; nullptr: none
  // (lower/patterns.h matches a contraction, a GEMM, only for a type that has one).
  const char* blas_prefix;
  // The cudaDataType naming an element of this type in cuBLAS's mixed-precision calls
  // (cublasGemmEx): "CUDA_R_16BF"; nullptr: none.
  const char* cuda_data_type;

  // ---- Mojo
  const char* mojo_type;    // "Float32", "Int" (index)
  const char* mojo_dtype;   // "DType.float32"
  const char* mojo_suffix;  // of Mojo helpers and width constants: "f32", "int" (index)

  // ---- MLIR
  const char* mlir_type;        // element type: "f32", "index", "i1" (nullptr: none)
  const char* mlir_int_type;    // the integer type fptosi/sitofp convert through: "i32", "i64"
  const char* mlir_lowest;      // integers: the minimum in decimal ("-2147483648")
  const char* mlir_highest;     // integers: the maximum in decimal ("2147483647")
  const char* mlir_nan;         // floats: bit patterns of NaN, +inf and -inf
  const char* mlir_inf;
  const char* mlir_neg_inf;

  // ---- Floating-point literals (kind Float)
  int max_digits;             // significant digits that always read back (9 for f32, 17 for f64)
  double integral_limit;      // integral values of smaller magnitude print in full ("100000.0f")
  double (*round)(double);    // the value rounded to this type
  double epsilon;             // the gap from 1 to the next value: 2^(1 - significand bits)
  double (*parse)(const char*);  // decimal text read as this type (strtof for f32)

  // The smallest magnitude that a double rounds to infinity when stored as this type (0: none
  // that a double can hold, as for f64).
  double rounds_to_inf;

  // ---- Integers: the range (kinds SignedInt, Index)
  int64_t min;
  int64_t max;

  // ---- Tensor buffers of the harness (tensor types): an element read as a double, and a double
  // stored as an element (integers: rounded to nearest; NaN and out-of-range give `min`).
  double (*load)(const unsigned char* p);
  void (*store)(unsigned char* p, double v);
};

// The record of `t` (every DType has one).
const ScalarType& scalar(DType t);
// The record of a tensor type as specs write it ("f32"); nullptr if there is none.
const ScalarType* tensor_scalar(std::string_view name);
// Every record, in DType order.
const std::vector<ScalarType>& scalar_types();
// The tensor types as specs write them, in order, joined for a message: "f32, f64 or i32".
const std::string& tensor_type_list();

const char* dtype_name(DType t);  // "f32", "f64", "i32", "index", "bool", ...
int dtype_bytes(DType t);         // 4 for f32/i32, 8 for f64/i64/index; 0 otherwise
bool is_float(DType t);           // F32, F64 (not FloatLit)
bool is_integer(DType t);         // I32, I64, Index (not IntLit, not Bool)
// The type the values of a tensor of type `t` compute in: F32 for the storage types f16 and
// bf16 (ScalarType::compute), `t` itself otherwise.
DType compute_type(DType t);
bool is_storage_type(DType t);    // F16, BF16

}  // namespace sb
