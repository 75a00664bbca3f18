#include "ir/names.h"

#include "ir/intrinsics.h"
#include "ir/scalar_types.h"

#include <set>
#include <string_view>

namespace sb {

namespace {

// Keywords and reserved names of every target language. A spec name becomes a C++/CUDA local,
// a Mojo variable and a Python-visible result key. (MLIR values are %-prefixed, so MLIR
// reserves no plain identifiers.)
const std::set<std::string_view>& target_keywords() {
  static const std::set<std::string_view> k = {
      // C and C++
      "alignas",
      "alignof",
      "and",
      "and_eq",
      "asm",
      "auto",
      "bitand",
      "bitor",
      "bool",
      "break",
      "case",
      "catch",
      "char",
      "char8_t",
      "char16_t",
      "char32_t",
      "class",
      "compl",
      "concept",
      "const",
      "consteval",
      "constexpr",
      "constinit",
      "const_cast",
      "continue",
      "co_await",
      "co_return",
      "co_yield",
      "decltype",
      "default",
      "delete",
      "do",
      "double",
      "dynamic_cast",
      "else",
      "enum",
      "explicit",
      "export",
      "extern",
      "false",
      "float",
      "for",
      "friend",
      "goto",
      "if",
      "inline",
      "int",
      "long",
      "mutable",
      "namespace",
      "new",
      "noexcept",
      "not",
      "not_eq",
      "nullptr",
      "operator",
      "or",
      "or_eq",
      "private",
      "protected",
      "public",
      "register",
      "reinterpret_cast",
      "requires",
      "restrict",
      "return",
      "short",
      "signed",
      "sizeof",
      "static",
      "static_assert",
      "static_cast",
      "struct",
      "switch",
      "template",
      "this",
      "thread_local",
      "throw",
      "true",
      "try",
      "typedef",
      "typeid",
      "typename",
      "union",
      "unsigned",
      "using",
      "virtual",
      "void",
      "volatile",
      "wchar_t",
      "while",
      "xor",
      "xor_eq",
      "main",
      "NULL",
      "size_t",
      "int64_t",
      "int32_t",
      "uint64_t",
      "INFINITY",
      "NAN",
      // CUDA
      "__global__",
      "__device__",
      "__host__",
      "__shared__",
      "__constant__",
      "__restrict__",
      "threadIdx",
      "blockIdx",
      "blockDim",
      "gridDim",
      "warpSize",
      "dim3",
      "cudaStream_t",
      // CUDA's half and bfloat16 types (cuda_fp16.h, cuda_bf16.h)
      "half",
      "half2",
      "nv_bfloat16",
      "nv_bfloat162",
      // Mojo
      "fn",
      "def",
      "var",
      "let",
      "alias",
      "comptime",
      "struct",
      "trait",
      "raises",
      "inout",
      "owned",
      "borrowed",
      "ref",
      "mut",
      "out",
      "read",
      "self",
      "Self",
      "import",
      "from",
      "as",
      "with",
      "pass",
      "lambda",
      "in",
      "is",
      "elif",
      "raise",
      "except",
      "finally",
      "yield",
      "global",
      "nonlocal",
      "assert",
      "del",
      "async",
      "await",
      "None",
      "True",
      "False",
      "Int",
      "Float32",
      "Float64",
      "Int32",
      "SIMD",
      "DType",
      "Pointer",
      "UnsafePointer",
  };
  return k;
}

// The spec language's own names: reductions, casts, constants and every intrinsic's spelling
// (ir/intrinsics.h).
const std::set<std::string_view>& builtins() {
  static const std::set<std::string_view> b = [] {
    std::set<std::string_view> n = {"pi", "inf"};
    for (ReduceOp r : reduce_ops()) n.insert(reduce_name(r));
    for (const ScalarType& s : scalar_types())  // the casts f32(x), ...
      if (s.tensor_type) n.insert(s.name);
    for (std::string_view s : intrinsic_spellings()) n.insert(s);
    return n;
  }();
  return b;
}

}  // namespace

// The vector types of CUDA's vector_types.h (char1 ... ulonglong4, float1 ... double4, and the
// aligned double4_16a-style variants of CUDA 13): the generated CUDA includes
// cuda_runtime.h, so a parameter with one of these names is a syntax error there.
static bool is_cuda_vector_type(const std::string& name) {
  static const char* const bases[] = {"char",  "uchar",    "short",     "ushort", "int",
                                      "uint",  "long",     "ulong",     "longlong",
                                      "ulonglong", "float", "double"};
  for (const char* b : bases) {
    const std::string base(b);
    if (name.size() <= base.size() || name.compare(0, base.size(), base) != 0) continue;
    const std::string rest = name.substr(base.size());
    if (rest.size() == 1 && rest[0] >= '1' && rest[0] <= '4') return true;
    if (rest.size() > 1 && rest[0] >= '1' && rest[0] <= '4' &&
        (rest.substr(1) == "_16a" || rest.substr(1) == "_32a"))
      return true;
  }
  return false;
}

bool is_builtin_name(const std::string& name) {
  return builtins().count(name) > 0;
}

std::string check_identifier(const std::string& name) {
  if (name.empty()) return "a name must not be empty";
  bool ok = (name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z');
  for (char c : name) {
    ok = ok &&
         ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (!ok) return "'" + name + "' is not an identifier (expected [A-Za-z][A-Za-z0-9_]*)";
  if (name.size() > 64) return "'" + name + "' is longer than 64 characters";
  if (name.rfind("sb_", 0) == 0 || name.rfind("SB_", 0) == 0)
    return "'" + name + "' uses the reserved prefix 'sb_'";
  if (is_builtin_name(name)) return "'" + name + "' is a built-in name of the spec language";
  if (target_keywords().count(name)) return "'" + name + "' is a keyword in a target language";
  if (is_cuda_vector_type(name)) return "'" + name + "' is a CUDA vector type name";
  return "";
}

std::string check_kernel_name(const std::string& name) {
  std::string why = check_identifier(name);
  if (!why.empty()) return "invalid kernel name: " + why;
  for (char c : name)
    if (c >= 'A' && c <= 'Z')
      return "kernel name '" + name + "' must be lower case (it names a folder)";
  return "";
}

}  // namespace sb
