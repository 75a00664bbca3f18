#include "backends/mojo/emit_mojo.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../harness/abi/specbench_abi.h"
#include "backends/common/emit_common.h"
#include "backends/common/loop_leaves.h"
#include "backends/mojo/mojo_lowering.h"
#include "backends/mojo/print_loops.h"
#include "backends/mojo/py_writer.h"
#include "backends/mojo/strategies.h"
#include "ir/affine.h"
#include "ir/shadowing.h"
#include "lower/blocked_gemm.h"
#include "lower/host_bodies.h"
#include "lower/parallelize.h"
#include "lower/patterns.h"
#include "lower/row_fusion.h"
#include "lower/running_scans.h"
#include "lower/streaming.h"
#include "lower/tile_transposes.h"
#include "lower/vectorize.h"

namespace sb {

namespace {

// ---- Text -------------------------------------------------------------------------------------

// Lines of Mojo: PyWriter (py_writer.h), four-space indentation; blocks end by dedenting.
std::string mojo_banner(const std::string& title) {
  const std::string rule = "# " + std::string(77, '-') + "\n";
  return rule + "# " + title + "\n" + rule + "\n";
}

// The shared header (written with // comments for the C family) as # comments.
std::string hash_comments(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string l = text.substr(pos, end - pos);
    if (l.rfind("//", 0) == 0) l = "#" + l.substr(2);
    out += l + "\n";
    pos = end + 1;
  }
  return out;
}

// ---- Names and types --------------------------------------------------------------------------

// Names the generated Mojo uses (built-ins, imports, its own structs). A spec name equal to one
// of these is renamed sb_u_<name>. Spec names are never keywords (names.cpp). Sorted.
constexpr const char* kMojoReserved[] = {
    "Bool",
    "CStringSpan",
    "DType",
    "Float32",
    "Float64",
    "ImmStaticOrigin",
    "ImmUntrackedOrigin",
    "Int",
    "Int32",
    "Int64",
    "Layout",
    "MutUntrackedOrigin",
    "NoneType",
    "Pointer",
    "SIMD",
    "SbArgs",
    "SbModule",
    "SbVariant",
    "SbVariantFn",
    "Scalar",
    "String",
    "UInt8",
    "abs",
    "alloc",
    "dealloc",
    "external_call",
    "inf",
    "initialize_runtime",
    "len",
    "max",
    "min",
    "nan",
    "parallelism_level",
    "parallelize",
    "print",
    "range",
    "simd_width_of",
    "specbench_module",
    "vectorize",
};

// The Mojo spelling of the intrinsics its standard library has: the function's name, and
// whether it is imported from std.math (round is a builtin).
struct MojoMath {
  Fn fn;
  const char* name;
  bool import;
};

constexpr MojoMath kMojoMath[] = {
    {Fn::Exp, "exp", true},      {Fn::Log, "log", true},   {Fn::Sqrt, "sqrt", true},
    {Fn::Tanh, "tanh", true},    {Fn::Erf, "erf", true},   {Fn::Log1p, "log1p", true},
    {Fn::Expm1, "expm1", true},  {Fn::Sin, "sin", true},   {Fn::Cos, "cos", true},
    {Fn::Floor, "floor", true},  {Fn::Ceil, "ceil", true}, {Fn::Rsqrt, "rsqrt", true},
    {Fn::Round, "round", false},  // halves to even, as the spec language's round
};

const MojoMath* mojo_math(Fn fn) {
  for (const MojoMath& m : kMojoMath)
    if (m.fn == fn) return &m;
  return nullptr;
}

bool mojo_reserved(const std::string& name) {
  static const bool sorted =
      std::is_sorted(std::begin(kMojoReserved), std::end(kMojoReserved),
                     [](const char* a, const char* b) { return std::string(a) < std::string(b); });
  SB_ASSERT(sorted, "kMojoReserved must be sorted");
  if (std::binary_search(std::begin(kMojoReserved), std::end(kMojoReserved), name,
                         [](const std::string& a, const std::string& b) { return a < b; }))
    return true;
  for (const MojoMath& m : kMojoMath)  // the math functions generated code calls
    if (name == m.name) return true;
  return false;
}

std::string mojo_name(const std::string& name) {
  return mojo_reserved(name) ? "sb_u_" + name : name;
}

const char* mojo_type(DType t) {
  return sb::scalar(t).mojo_type;
}

const char* mojo_dtype(DType t) {
  return sb::scalar(t).mojo_dtype;
}

// The module-level SIMD width constant of a value type (its native vector length).
std::string width_const(DType t) {
  return std::string("sb_w_") + sb::scalar(t).mojo_suffix;
}

// The elements from sb_vr to `end` (fewer than `width`) in narrower vectors, each power of two
// below the width at most once.
void emit_vector_remainder(const std::string& width, const std::string& end, const std::string& fn,
                           PyWriter& w) {
  for (int h : {32, 16, 8, 4, 2, 1}) {
    const std::string hs = std::to_string(h);
    w.open("if " + width + " > " + hs + " and " + end + " - sb_vr >= " + hs + ":");
    w.line(fn + "[" + hs + "](sb_vr)");
    w.line("sb_vr += " + hs);
    w.dedent();
  }
}

// Calls closure `fn` (a `def fn[sb_w: Int](i: Int)`) over [0, n) as vectorize does, but with
// the remainder in narrower vectors, each power of two below the width at most once: vectorize
// runs its remainder one element at a time, so a row of 28 f32 took 12 scalar calls. Side by
// side (3 repetitions, 2 runs, 2-core VM), conv2d's vectorize_parallel at N=1, 32 channels of
// 28 x 28 went from 4.8-5.9 ms to 2.3-2.4 ms.
//
// With `group` > 1, whole groups of that many native vectors first, one call each (window_group),
// then native vectors, then the remainder.
void emit_vectorize(DType t, const std::string& n, const std::string& fn, PyWriter& w,
                    int group = 1) {
  const std::string width = width_const(t);
  w.line("var sb_vn = " + n);
  if (group > 1) {
    const std::string wide = std::to_string(group) + " * " + width;
    w.line("var sb_vg = sb_vn - sb_vn % (" + wide + ")");
    w.line("vectorize[" + wide + "](sb_vg, " + fn + ")");
    w.line("var sb_vr = sb_vn - sb_vn % " + width);
    w.open("for sb_v in range(sb_vg, sb_vr, " + width + "):");
    w.line(fn + "[" + width + "](sb_v)");
    w.dedent();
  } else {
    w.line("var sb_vr = sb_vn - sb_vn % " + width);
    w.line("vectorize[" + width + "](sb_vr, " + fn + ")");
  }
  emit_vector_remainder(width, "sb_vn", fn, w);
}

// Native vectors per call of a statement's vector closure (emit_vectorize's `group`): 4 where
// every top-level reduction runs inside the closure as a window along the row
// (lower/vectorize.h: terms_along_row), 1 otherwise. The closure keeps one accumulator per
// vector, so with one native vector each term waited on the last one's addition; with four,
// LLVM keeps four independent accumulators. conv1d and puzzle_conv1d took 0.61-0.75x the time
// (results/vm/mojo-window-groups-20261207).
int window_group(const Statement& st, const SimdChoice& simd) {
  const std::vector<const Expr*> tops = top_reduces_of(*st.rhs);
  if (tops.empty()) return 1;
  for (const Expr* r : tops)
    if (!simd.outside.count(r->ref) || !terms_along_row(st, *r)) return 1;
  return 4;
}

// The same over [lo, hi) (names of Int variables): whole vectors from lo, then the remainder in
// narrower ones.
void emit_vectorize_range(DType t, const std::string& lo, const std::string& hi,
                          const std::string& fn, PyWriter& w) {
  const std::string width = width_const(t);
  w.line("var sb_vr = " + hi + " - (" + hi + " - " + lo + ") % " + width);
  w.open("for sb_v in range(" + lo + ", sb_vr, " + width + "):");
  w.line(fn + "[" + width + "](sb_v)");
  w.dedent();
  emit_vector_remainder(width, hi, fn, w);
}

// Opens `if cond:` (a condition of terms joined by " and "): on one line where it fits in 100
// columns, else the condition inside parentheses, its terms as many to a line as fit.
void emit_if_lines(const std::string& cond, PyWriter& w) {
  const size_t cols = static_cast<size_t>(w.columns());
  if (cols + cond.size() + 4 <= 100) {
    w.open("if " + cond + ":");
    return;
  }
  const std::string sep = " and ";
  std::vector<std::string> lines{""};
  size_t at = 0;
  while (at <= cond.size()) {
    const size_t next = std::min(cond.find(sep, at), cond.size());
    const std::string term = cond.substr(at, next - at) + (next < cond.size() ? " and" : "");
    if (!lines.back().empty() && cols + 4 + lines.back().size() + 1 + term.size() > 100)
      lines.push_back(term);
    else
      lines.back() += (lines.back().empty() ? "" : " ") + term;
    at = next + sep.size();
  }
  w.line("if (");
  for (const std::string& l : lines) w.line("    " + l);
  w.open("):");
}

// A floating-point constant of type F32, F64, F16 or BF16 as Float32(...), .... The decimal text is
// the shortest that reads back to the value; for f32 it is checked to read back also through an
// f64 rounding (Mojo's literal may be rounded twice), otherwise the f32 value's exact f64 digits
// are printed.
std::string mojo_float(double v, DType t, std::set<std::string>& math) {
  const ScalarType& st = sb::scalar(t);
  const std::string dt = st.mojo_dtype;
  if (std::isnan(v)) {
    math.insert("nan");
    return "nan[" + dt + "]()";
  }
  if (std::isinf(v)) {
    math.insert("inf");
    return std::string(v > 0 ? "" : "-") + "inf[" + dt + "]()";
  }
  // An f16 or bf16 constant: the text of its rounded value as an f32, which holds it exactly.
  const DType lt = is_storage_type(t) ? compute_type(t) : t;
  std::string s = float_literal(st.round(v), lt);
  s.resize(s.size() - std::strlen(sb::scalar(lt).c_literal_suffix));  // C's suffix ('f')
  // Through f64 and then rounded to the type (a no-op for f64, where the text reads back).
  const double want = st.round(v);
  if (st.round(std::strtod(s.c_str(), nullptr)) != want) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", want);
    s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
  }
  return std::string(st.mojo_type) + "(" + s + ")";
}

// ---- Helpers in generated code ----------------------------------------------------------------

enum class MHelper {
  MinMax,  // sb_min, sb_max: NaN-propagating, any element type and SIMD width
  AbsInt,  // sb_abs: integer abs that wraps
  Clamp,   // sb_clamp
  Step2,   // sb_load_step2: lanes two elements apart, as two loads and a deinterleave
  DivI32,
  ModI32,
  DivI64,
  ModI64,
  DivInt,
  ModInt,
  F32ToI32,
  F64ToI32,
  F32ToI64,
  F64ToI64,
  F32ToInt,
  F64ToInt,
  ExpF32,  // sb_exp_f32: f32 exp that overflows and underflows where f32 does
  ExpF64,  // sb_exp_f64: an accurate f64 exp (Mojo's std exp is not, for f64)
  // sb_transpose_8x16: a transposed block of a read across rows (lower/tile_transposes.h)
  Transpose8x16,
};

// The integer helpers of each integer type: C division and remainder; and the truncating casts
// from each floating-point type to each integer type.
struct MojoIntHelpers {
  DType t;
  MHelper div, mod, from_f32, from_f64;
};
constexpr MojoIntHelpers kMojoIntHelpers[] = {
    {DType::I32, MHelper::DivI32, MHelper::ModI32, MHelper::F32ToI32, MHelper::F64ToI32},
    {DType::I64, MHelper::DivI64, MHelper::ModI64, MHelper::F32ToI64, MHelper::F64ToI64},
    {DType::Index, MHelper::DivInt, MHelper::ModInt, MHelper::F32ToInt, MHelper::F64ToInt},
};

const MojoIntHelpers& mojo_int_helpers(DType t) {
  for (const MojoIntHelpers& h : kMojoIntHelpers)
    if (h.t == t) return h;
  SB_ASSERT(false, std::string("no Mojo integer helpers for type ") + dtype_name(t));
  return kMojoIntHelpers[0];
}

// The row of kMojoIntHelpers that holds helper `h` (one of its four).
const MojoIntHelpers& mojo_int_helpers_of(MHelper h) {
  for (const MojoIntHelpers& r : kMojoIntHelpers)
    if (h == r.div || h == r.mod || h == r.from_f32 || h == r.from_f64) return r;
  SB_ASSERT(false, "not a Mojo integer helper");
  return kMojoIntHelpers[0];
}

// The truncating cast helper from floating-point `from` to integer `to`.
MHelper mojo_cast_helper(DType from, DType to) {
  SB_ASSERT(from == DType::F32 || from == DType::F64,
            std::string("no truncating cast helper from ") + dtype_name(from));
  const MojoIntHelpers& h = mojo_int_helpers(to);
  return from == DType::F32 ? h.from_f32 : h.from_f64;
}

// An integer constant of type `t`: Int32(5); a plain literal for Int (Int.MIN for its minimum).
std::string int_text(int64_t v, DType t) {
  const ScalarType& s = sb::scalar(t);
  if (s.kind == ScalarKind::Index && v == s.min) return std::string(s.mojo_type) + ".MIN";
  if (s.kind == ScalarKind::Index) return std::to_string(v);
  return std::string(s.mojo_type) + "(" + std::to_string(v) + ")";
}

// The vector scan sb_scan_<op>_<type>(x, carry) of lower/running_scans.h: lane q of the result is
// carry op x[0] op ... op x[q]; `id` is the identity of `op` as Mojo text.
std::string vector_scan_text(ReduceOp op, DType t, const std::string& id) {
  const int lanes = vector_scan_lanes(t);
  const std::string V = "SIMD[" + std::string(mojo_dtype(t)) + ", " + std::to_string(lanes) + "]";
  // `a op b` on vectors, a the earlier lanes.
  auto combine = [&](const std::string& a, const std::string& b) -> std::string {
    switch (op) {
      case ReduceOp::Sum:
        return a + " + " + b;
      case ReduceOp::Prod:
        return a + " * " + b;
      case ReduceOp::Max:
        return "sb_max(" + a + ", " + b + ")";
      case ReduceOp::Min:
        return "sb_min(" + a + ", " + b + ")";
      case ReduceOp::ArgMax:
      case ReduceOp::ArgMin:
        break;
    }
    SB_ASSERT(false, "a vector scan of an arg-reduction");
    return "";
  };
  std::string out = "# Running " + std::string(reduce_name(op)) + " of " + std::to_string(lanes) +
                    " lanes in log2(lanes) steps, each with a copy shifted by 1, 2, 4, ... lanes\n"
                    "# (the identity shifted in); the carry joins once (lower/running_scans.h).\n";
  out += "@always_inline\n";
  out += "def " + vector_scan_name(op, t) + "(x0: " + V + ", carry: " + mojo_type(t) + ") -> " +
         V + ":\n";
  out += "    var x = x0\n";
  out += "    var id = " + V + "(" + id + ")\n";
  for (const std::vector<int>& mask : vector_scan_steps(t))
    out += "    x = " + combine("x.shuffle[" + vector_scan_mask(mask) + "](id)", "x") + "\n";
  out += "    return " + combine(V + "(carry)", "x") + "\n";
  return out;
}

std::string helper_text(MHelper h) {
  switch (h) {
    case MHelper::ExpF32:
      return "# f32 exp with f32's own overflow and underflow. Mojo's std exp clamps its argument\n"
             "# to about [-88.38, 88.38]: beyond it a SIMD exp gives 2.4e38 (not inf) or 4.2e-39\n"
             "# (not the subnormal or 0), and a scalar one gives inf from 88.38 where f32 reaches\n"
             "# 88.72. A scalar goes through f64 exp (well inside its range, and cheaper than a\n"
             "# branch, which keeps the loop from vectorising); where a vector has a lane with\n"
             "# |x| > 87, that lane's e^x is (e^(x/2))^2, rounded once at the end.\n"
             "@always_inline\n"
             "def sb_exp_f32[w: SIMDLength](x: SIMD[DType.float32, w]) -> SIMD[DType.float32, w]:\n"
             "    comptime if w == 1:\n"
             "        return exp(x.cast[DType.float64]()).cast[DType.float32]()\n"
             "    var r = exp(x)\n"
             "    var far = abs(x).gt(87.0)\n"
             "    if far.reduce_or():\n"
             "        var h = exp(x * 0.5)\n"
             "        r = far.select(h * h, r)\n"
             "    return r\n";
    case MHelper::ExpF64:
      // Taylor coefficients 1/n! for n = 13 down to 2.
      {
        std::string t =
            "# f64 exp within about 1 ulp of libm's, for any SIMD width (Mojo's own f64 exp is\n"
            "# only within about 3e-10 relative): x = k ln2 + r with |r| <= ln2 / 2 (ln2 in two\n"
            "# parts, so r is exact), e^r by its Taylor polynomial to degree 13 (truncation below\n"
            "# 4e-18 relative), then times 2^k as two normal powers of two, so that a subnormal\n"
            "# result is rounded once.\n"
            "@always_inline\n"
            "def sb_exp_f64[w: SIMDLength](x: SIMD[DType.float64, w]) -> SIMD[DType.float64, w]:\n"
            "    var k = round(x * 1.4426950408889634)\n"
            "    var r = (x - k * 0.6931471803691238) - k * 1.9082149292705877e-10\n"
            "    var p = SIMD[DType.float64, w](1.0 / 6227020800.0)\n";
        const char* const inv[] = {"479001600.0", "39916800.0", "3628800.0", "362880.0",
                                   "40320.0",     "5040.0",     "720.0",     "120.0",
                                   "24.0",        "6.0",        "2.0",       "1.0"};
        for (const char* f : inv) t += std::string("    p = p * r + 1.0 / ") + f + "\n";
        t +=
            "    p = p * r + 1.0\n"
            "    var k1 = (k * 0.5).cast[DType.int64]()\n"
            "    var k2 = k.cast[DType.int64]() - k1\n"
            "    var y = p * bitcast[DType.float64, w]((k1 + 1023) << 52) * bitcast[DType.float64, "
            "w](\n"
            "        (k2 + 1023) << 52\n"
            "    )\n"
            "    y = x.gt(709.782712893384).select(SIMD[DType.float64, w](inf[DType.float64]()), "
            "y)\n"
            "    return x.lt(-745.1332191019412).select(SIMD[DType.float64, w](0.0), y)\n";
        return t;
      }

    case MHelper::MinMax:
      return "# Min and max that propagate NaN, for any element type and SIMD width\n"
             "# (~a.eq(a) is true for NaN; SIMD.ne is ordered, false for NaN).\n"
             "@always_inline\n"
             "def sb_min[dt: DType, w: SIMDLength](a: SIMD[dt, w], b: SIMD[dt, w]) -> SIMD[dt, "
             "w]:\n"
             "    return (a.lt(b) | ~a.eq(a)).select(a, b)\n\n\n"
             "@always_inline\n"
             "def sb_max[dt: DType, w: SIMDLength](a: SIMD[dt, w], b: SIMD[dt, w]) -> SIMD[dt, "
             "w]:\n"
             "    return (a.gt(b) | ~a.eq(a)).select(a, b)\n";
    case MHelper::AbsInt:
      return "# Integer abs that wraps: the abs of the minimum is the minimum.\n"
             "@always_inline\n"
             "def sb_abs[dt: DType, w: SIMDLength](a: SIMD[dt, w]) -> SIMD[dt, w]:\n"
             "    return a.lt(SIMD[dt, w](0)).select(-a, a)\n";
    case MHelper::Clamp:
      return "# Subscript clamped into [0, n - 1] (boundary: clamp).\n"
             "@always_inline\n"
             "def sb_clamp(v: Int, n: Int) -> Int:\n"
             "    return 0 if v < 0 else (n - 1 if v >= n else v)\n";
    case MHelper::Step2:
      return "# Lanes at[0], at[2], ..., at[2 * (w - 1)] of a buffer of n elements: one load of 2 * w\n"
             "# elements and the even lanes (or, where that would read past the end, the odd lanes of\n"
             "# the load one element earlier), never outside [0, n). On the 2-core AVX-512 VM,\n"
             "# maxpool2d's vectorize_parallel variant (N=32) took 3.5-5.2 ms this way, 10.2-11.9 ms\n"
             "# as scalars and 19-21 ms with a gather (strided_load) of stride 2.\n"
             "@always_inline\n"
             "def sb_load_step2[dt: DType, w: Int](\n"
             "    p: Pointer[Scalar[dt], _], at: Int, n: Int\n"
             ") -> SIMD[dt, w]:\n"
             "    comptime if w == 1:\n"
             "        return rebind[SIMD[dt, w]](p[unsafe_offset=at])\n"
             "    else:\n"
             "        if at + 2 * w <= n:\n"
             "            return rebind[SIMD[dt, w]](p.unsafe_load[width=2 * w](at).deinterleave()[0])\n"
             "        if at >= 1:\n"
             "            return rebind[SIMD[dt, w]](p.unsafe_load[width=2 * w](at - 1).deinterleave()[1])\n"
             "        var v = SIMD[dt, w]()\n"
             "        for l in range(w):\n"
             "            v[l] = p[unsafe_offset=at + 2 * l]\n"
             "        return v\n";
    case MHelper::Transpose8x16: {
      static_assert(kBlockInner == 16 && kBlockOuter == 8, "sb_transpose_8x16's block");
      const TransposeNetwork& net = transpose_8x8_network();
      std::string t =
          "# Transposes 16 rows of 8 four-byte elements (row p at src + p * stride) into "
          "dst[8][16]:\n"
          "# dst[q * 16 + p] = src[p * stride + q], each half of 8 rows in vector registers.\n"
          "@always_inline\n"
          "def sb_transpose_8x16[dt: DType](\n"
          "    src: Pointer[Scalar[dt], _], stride: Int, dst: Pointer[Scalar[dt], "
          "MutUntrackedOrigin]\n"
          "):\n"
          "    comptime for h in range(2):\n"
          "        var s = src.unsafe_offset(h * 8 * stride)\n";
      for (int p = 0; p < 8; ++p)
        t += "        var v" + std::to_string(p) + " = s.unsafe_load[width=8](" +
             (p == 0   ? std::string("0")
              : p == 1 ? "stride"
                       : std::to_string(p) + " * stride") +
             ")\n";
      for (size_t k = 0; k < net.steps.size(); ++k) {
        const Shuffle& sh = net.steps[k];
        std::string mask;
        for (int m : sh.mask) mask += (mask.empty() ? "" : ", ") + std::to_string(m);
        t += "        var v" + std::to_string(8 + k) + " = v" + std::to_string(sh.a) + ".shuffle[" +
             mask + "](v" + std::to_string(sh.b) + ")\n";
      }
      t += "        var d = dst.unsafe_offset(h * 8)\n";
      for (int q = 0; q < 8; ++q)
        t += "        d.unsafe_store(" + std::to_string(q * 16) + ", v" +
             std::to_string(net.rows_out[q]) + ")\n";
      return t;
    }
    case MHelper::DivI32:
    case MHelper::DivI64:
    case MHelper::DivInt: {
      const DType t = mojo_int_helpers_of(h).t;
      const std::string T = sb::scalar(t).mojo_type, n = sb::scalar(t).mojo_suffix;
      return "# " + T +
             " division as in C: it truncates toward zero (Mojo's // rounds toward negative\n"
             "# infinity). b is never 0 or -1: the guards around the call handle those.\n"
             "@always_inline\n"
             "def sb_div_" +
             n + "(a: " + T + ", b: " + T + ") -> " + T +
             ":\n"
             "    var q = a // b\n"
             "    if q * b != a and (a < 0) != (b < 0):\n"
             "        q += 1\n"
             "    return q\n";
    }
    case MHelper::ModI32:
    case MHelper::ModI64:
    case MHelper::ModInt: {
      const DType t = mojo_int_helpers_of(h).t;
      const std::string T = sb::scalar(t).mojo_type, n = sb::scalar(t).mojo_suffix;
      return "# " + T +
             " remainder as in C (the sign of the dividend); b is never 0 or -1.\n"
             "@always_inline\n"
             "def sb_mod_" +
             n + "(a: " + T + ", b: " + T + ") -> " + T +
             ":\n"
             "    return a - sb_div_" +
             n + "(a, b) * b\n";
    }
    case MHelper::F32ToI32:
    case MHelper::F64ToI32:
    case MHelper::F32ToI64:
    case MHelper::F64ToI64:
    case MHelper::F32ToInt:
    case MHelper::F64ToInt: {
      const MojoIntHelpers& row = mojo_int_helpers_of(h);
      const bool f32 = h == row.from_f32;
      const DType to_t = row.t;
      const bool i32 = sb::scalar(to_t).bits == 32;
      const std::string from = f32 ? "Float32" : "Float64";
      const std::string to = sb::scalar(to_t).mojo_type;
      const std::string name =
          std::string("sb_") + (f32 ? "f32" : "f64") + "_to_" + sb::scalar(to_t).mojo_suffix;
      const std::string lo = i32 ? "d > -2147483649.0" : "d >= -9223372036854775808.0";
      const std::string hi = i32 ? "d < 2147483648.0" : "d < 9223372036854775808.0";
      std::string s =
          "# Truncating cast; NaN and out-of-range values give the minimum.\n"
          "@always_inline\n"
          "def " +
          name + "(x: " + from + ") -> " + to + ":\n";
      if (f32)
        s += "    var d = Float64(x)\n";
      else
        s += "    var d = x\n";
      s += "    return " + to + "(d) if " + lo + " and " + hi + " else " + to + ".MIN\n";
      return s;
    }
  }
  return "";
}

// What the file needs besides its kernels: imports, width constants and helpers.
struct FileNeeds {
  std::set<std::string> math;  // names imported from std.math
  bool vectorize = false;
  bool parallel = false;  // parallelize, initialize_runtime, parallelism_level
  bool dealloc = false;
  bool external_call = false;
  bool stream = false;   // non-temporal stores: fence, sb_stream_min_bytes
  bool prefetch = false;  // prefetch, PrefetchOptions (streamed lines)
  bool chunks = false;    // sb_serial_iterations (open_chunks)
  bool bitcast = false;  // std.memory.bitcast (sb_exp_f64)
  // The blocked GEMMs (lower/blocked_gemm.h): per element type, the operand types of its calls.
  std::map<DType, std::set<GemmOperandTypes>> gemm;
  std::set<DType> widths;
  std::set<MHelper> helpers;
  // The vector scans used (lower/running_scans.h: vector_scan_fits), each with its identity.
  std::map<std::pair<ReduceOp, DType>, std::string> scans;
};

// ---- Precedence (Python's, which Mojo follows) ------------------------------------------------

enum MPrec {
  kMTernary = 1,  // a if c else b
  kMOr = 2,
  kMAnd = 3,
  kMNot = 4,
  kMCmp = 5,  // comparisons chain in Python: never nest them unparenthesised
  kMBitOr = 6,
  kMBitAnd = 8,
  kMAdd = 10,
  kMMul = 11,
  kMUnary = 12,
  kMPrimary = 14,
};
static_assert(int{kMojoPrecTernary} == int{kMTernary} && int{kMojoPrecOr} == int{kMOr} &&
                  int{kMojoPrecAnd} == int{kMAnd} && int{kMojoPrecCmp} == int{kMCmp} &&
                  int{kMojoPrecAdd} == int{kMAdd} && int{kMojoPrecMul} == int{kMMul} &&
                  int{kMojoPrecUnary} == int{kMUnary} && int{kMojoPrecPrimary} == int{kMPrimary},
              "mojo_lowering.h's precedences are these");

std::string mparen(const std::string& text, int prec, int min_prec) {
  return prec < min_prec ? "(" + text + ")" : text;
}

// An affine range bound (a name, a literal or a sum) on the right of a subtraction.
std::string subtrahend(const std::string& text) {
  return text.find(' ') == std::string::npos ? text : "(" + text + ")";
}

// ---- Statement lowering -----------------------------------------------------------------------

struct Piece {
  std::string text;
  int prec = kMPrimary;
  bool vec = false;  // a SIMD vector over the lanes of the vectorised variable
};

// Vector mode: expressions that depend on index variable `v` are SIMD vectors of `width` lanes,
// lane l holding the value at v + l (v itself is bound to the first lane's index).
struct Mode {
  int v = -1;
  std::string width;
  bool vector() const { return v >= 0; }
};

// Prints one statement's expressions as Mojo over: tensors as Pointers named after the tensor
// (mojo_name), sizes as Int, index variables as Int named var_name(ref). Reductions and guarded
// loads are hoisted as in the C lowering (emit_common.h).
class MojoLowering {
 public:
  MojoLowering(const Spec& spec, const Statement& st, FileNeeds* needs)
      : spec_(spec), st_(st), needs_(needs) {
    std::set<std::string> taken;
    for (const auto& t : spec.tensors) taken.insert(t.name);
    for (const auto& s : spec.sizes) taken.insert(s.name);
    const std::set<int> shadowing = shadowing_reductions(st);
    for (size_t i = 0; i < st.vars.size(); ++i) {
      const std::string& n = st.vars[i].name;
      const bool keep =
          !mojo_reserved(n) && !taken.count(n) && !shadowing.count(static_cast<int>(i));
      var_names_.push_back(keep ? n : "sb_" + n + "_" + std::to_string(i));
    }
  }

  const Spec& spec() const { return spec_; }
  const Statement& stmt() const { return st_; }
  const std::string& var_name(int ref) const { return var_names_[ref]; }
  const std::set<int>& used_tensors() const { return used_tensors_; }
  const std::set<int>& used_sizes() const { return used_sizes_; }
  FileNeeds& needs() { return *needs_; }

  // Strip-mine innermost reductions into SIMD accumulators where their reads are contiguous.
  bool strip = false;
  // Walk running scans a vector of outputs at a time where they allow it (walk_scan).
  bool vector_scans = false;

  // Tensor `t` is held as the current row only, in the buffer `name` (a Pointer): its reads and
  // writes drop the first subscript, and it is no longer one of used_tensors().
  void hold_row(int t, const std::string& name) { row_local_[t] = name; }

  std::string tensor_name(int t) {
    auto it = row_local_.find(t);
    if (it != row_local_.end()) return it->second;
    used_tensors_.insert(t);
    return mojo_name(spec_.tensors[t].name);
  }
  std::string size_name(int s) {
    used_sizes_.insert(s);
    return mojo_name(spec_.sizes[s].name);
  }

  std::string extent(int t, size_t d, int min_prec) {
    PyWriter none;
    Piece p = print(*spec_.tensors[t].shape[d], none, Mode{});
    SB_ASSERT(none.str().empty(), "a shape expression needed hoisted code");
    return mparen(p.text, p.prec, min_prec);
  }

  std::string scalar(const Expr& e, PyWriter& w, int min_prec) {
    Piece p = print(e, w, Mode{});
    return mparen(p.text, p.prec, min_prec);
  }

  void set_override(const Expr* e, const std::string& text) { overrides_[e] = text; }
  void clear_overrides() {
    overrides_.clear();
    vector_overrides_.clear();
  }
  // scalar() under the name a loop IR printer's leaves call (backends/common/loop_leaves.h).
  std::string expr(const Expr& e, PyWriter& w, int min_prec = 0) { return scalar(e, w, min_prec); }

  // The condition under which every check of a read of `e` with a boundary rule (but those
  // printed by an override) that does not vary with index variable `var` holds, the other output
  // indices bound and the statement's reductions over their whole ranges (ir/affine.h:
  // boundary_checks, each check at its corners): the part of a row's checks that one test per
  // row decides. "" when no such check is needed; nullopt when the condition cannot be put so.
  // `varies`: whether some check varies with `var` (those the row's edges keep).
  std::optional<std::string> uniform_condition(const Expr& e, int var, PyWriter& w, bool& varies) {
    std::set<int> reductions;
    for (size_t u = st_.rank(); u < st_.vars.size(); ++u) reductions.insert(static_cast<int>(u));
    const std::optional<std::vector<BoundaryCheck>> checks =
        boundary_checks(spec_, st_, e, var, reductions,
                        [this](const Expr& x) { return overrides_.count(&x) != 0; });
    if (!checks) return std::nullopt;
    varies = std::any_of(checks->begin(), checks->end(),
                         [](const BoundaryCheck& c) { return c.varies; });
    const std::vector<std::string> names = var_names_;
    CornerSpelling spelling;
    spelling.bind = [&](int u, bool at_last) {
      const IndexVar& v = st_.vars[u];
      var_names_[u] =
          at_last ? "(" + scalar(*v.hi, w, kMAdd) + " - 1)" : scalar(*v.lo, w, kMAdd + 1);
    };
    spelling.test = [&](const BoundaryCheck& c) {
      const Piece p = subscript(*c.sub, w);
      const std::string s = mparen(p.text, p.prec, kMCmp + 1);
      return s + " >= 0 and " + s + " < " + extent(c.tensor, c.dim, kMCmp + 1);
    };
    spelling.unbind = [&] { var_names_ = names; };
    spelling.conj = " and ";
    return corners_condition(*checks, var, /*leave_varying=*/true, spelling);
  }
  // While set, reads print without boundary handling: code that runs only where every read is
  // known to be inside (a row's middle where its uniform_condition holds).
  void set_assume_inside(bool on) { assume_inside_ = on; }

  // The flat index of the element of tensor `t` (the output, or a tensor of its rank) whose
  // innermost subscript is `last` (a text) and whose other subscripts are the output index
  // variables.
  std::string flat_at(int t, const std::string& last) {
    std::vector<Piece> subs;
    for (size_t d = 0; d + 1 < st_.rank(); ++d) subs.push_back({var_names_[d], kMPrimary, false});
    if (last == "0" && !subs.empty()) {  // the row's start: no "+ 0"
      subs.push_back({"0", kMPrimary, false});
      std::string flat = flat_index(t, subs);
      SB_ASSERT(flat.size() > 4 && flat.compare(flat.size() - 4, 4, " + 0") == 0,
                "unexpected flat index " + flat);
      return flat.substr(0, flat.size() - 4);
    }
    subs.push_back({last, last.find(' ') == std::string::npos ? kMPrimary : kMAdd, false});
    return flat_index(t, subs);
  }
  std::string out_flat_at(const std::string& last) { return flat_at(st_.out, last); }
  // The flat index of the element read `r` reads, its subscripts printed as scalars.
  std::string flat_of_read(const Expr& r, PyWriter& w) {
    std::vector<Piece> subs;
    for (const ExprPtr& a : r.args) {
      const Piece p = print(*a, w, Mode{});
      subs.push_back({p.text, p.prec, false});
    }
    return flat_index(r.ref, subs);
  }
  // The flat index of t[row, col] (texts) of a tensor of rank 2.
  std::string flat_2d(int t, const std::string& row, const std::string& col) {
    return flat_index(t, {{row, row.find(' ') == std::string::npos ? kMPrimary : kMAdd, false},
                          {col, col.find(' ') == std::string::npos ? kMPrimary : kMAdd, false}});
  }

  // The number of elements of tensor `t`: the product of its extents, "1" for a scalar.
  std::string element_count(int t) {
    std::string n;
    for (size_t d = 0; d < spec_.tensors[t].shape.size(); ++d)
      n += (n.empty() ? "" : " * ") + extent(t, d, kMMul + 1);
    return n.empty() ? "1" : n;
  }

  // True when `e` depends on index variable `v`, including through a reduction's range.
  bool depends(const Expr& e, int v) const { return depends_on(e, v, &st_); }

  // The statement's loop iterations as a Mojo expression: the product of its output extents and
  // of each reduction's range length where the range is the same at every point (a range that
  // depends on another index counts as one).
  std::string iterations(int min_prec = 0) {
    PyWriter scratch;
    std::vector<std::string> f;
    for (size_t d = 0; d < st_.rank(); ++d) f.push_back(extent(st_.out, d, kMMul + 1));
    std::function<void(const Expr&)> walk = [&](const Expr& x) {
      if (x.kind == ExprKind::Reduce) {
        const IndexVar& k = st_.vars[x.ref];
        if (k.lo && k.hi && var_free(*k.lo) && var_free(*k.hi)) {
          const bool zero = k.lo->kind == ExprKind::IntLit && k.lo->ival == 0;
          f.push_back(zero ? scalar(*k.hi, scratch, kMMul + 1)
                           : "(" + scalar(*k.hi, scratch, kMAdd) + " - " +
                                 scalar(*k.lo, scratch, kMAdd + 1) + ")");
        }
      }
      for (const auto& a : x.args) walk(*a);
    };
    walk(*st_.rhs);
    if (f.empty()) return "1";
    std::string out;
    for (const std::string& t : f) out += (out.empty() ? "" : " * ") + t;
    return mparen(out, kMMul, min_prec);
  }

  // Whether `e` has a SIMD lowering over the lanes of `v`.
  bool vec_ok(const Expr& e, int v) const {
    if (!depends(e, v)) return true;
    switch (e.kind) {
      case ExprKind::IndexVar:
        return true;  // the index itself as a value: consecutive integers (iota)
      case ExprKind::Read: {
        const Tensor& tn = spec_.tensors[e.ref];
        const size_t n = e.args.size();
        if (gathered(e, v)) return true;  // lane by lane (print_read)
        for (size_t d = 0; d + 1 < n; ++d)
          if (depends(*e.args[d], v)) return false;
        // Contiguous in v, or two elements apart (a stride-2 window) in a tensor held whole;
        // under a boundary rule, a guarded load (print_read).
        (void)tn;
        const int64_t step = lane_stride(*e.args[n - 1], v);
        return step == 1 || (step == 2 && !row_local_.count(e.ref));
      }
      case ExprKind::Binary: {
        const DType t = value_type(e);
        if ((e.bop == BinOp::Div || e.bop == BinOp::Mod) && !is_float(t)) return false;
        if (e.bop == BinOp::Mod) return false;  // fmod
        return vec_ok(*e.args[0], v) && vec_ok(*e.args[1], v);
      }
      case ExprKind::Cast: {
        const DType from = value_type(*e.args[0]);
        const DType to = e.cast_to == DType::Unknown ? value_type(e) : e.cast_to;
        if (is_float(from) && !is_float(to)) return false;
        return vec_ok(*e.args[0], v);
      }
      case ExprKind::Reduce:
        return vec_ok(*e.args[0], v);  // its range does not depend on v (checked above)
      case ExprKind::Call:
        if (e.fn == Fn::DivTrunc || e.fn == Fn::RemTrunc) return false;  // scalar only
        for (const auto& a : e.args)
          if (!vec_ok(*a, v)) return false;
        return true;
      default:
        for (const auto& a : e.args)
          if (!vec_ok(*a, v)) return false;
        return true;
    }
  }

  // out[...] = rhs, scalar.
  // The value `text` stored into tensor t: rounded to an f16 or bf16 element (nearest even),
  // except into a tensor held as one row, which holds f32 values.
  std::string stored(const std::string& text, int prec, int t) const {
    const DType type = spec_.tensors[t].type;
    if (!is_storage_type(type) || row_local_.count(t)) return text;
    return mparen(text, prec, kMPrimary) + ".cast[" + mojo_dtype(type) + "]()";
  }

  void assign(PyWriter& w) {
    const Piece value = print(*st_.rhs, w, Mode{});
    const std::string rhs = mparen(stored(value.text, value.prec, st_.out), 0, 0);
    const int t = st_.out;
    const std::string name = tensor_name(t);
    if (spec_.tensors[t].shape.empty()) {
      w.line(name + "[] = " + rhs);
      return;
    }
    w.line(name + "[unsafe_offset=" + out_flat() + "] = " + rhs);
  }

  // A running reduction (lower/running_scans.h) of reduction `e`, which has none nested:
  // open_running declares `acc` (the identity) and the reduction's variable (at the range's
  // start) before the loop over the growing index; fold_terms, inside that loop, folds the terms
  // from the variable's current value up to the range's end. `acc` is then the reduction's value
  // (set_override).
  void open_running(const Expr& e, const std::string& acc, PyWriter& w) {
    SB_ASSERT(!contains_reduce(*e.args[0]), "a running reduction with a nested one");
    w.line("var " + acc + " = " + identity(e.rop, value_type(e)));
    w.line("var " + var_names_[e.ref] + " = " + scalar(*st_.vars[e.ref].lo, w, 0));
  }
  void fold_terms(const Expr& e, const std::string& acc, PyWriter& w) {
    const std::string& k = var_names_[e.ref];
    w.open("while " + k + " < " + scalar(*st_.vars[e.ref].hi, w, kMCmp + 1) + ":");
    w.line(update(e.rop, value_type(e), acc, scalar(*e.args[0], w, 0)));
    w.line(k + " += 1");
    w.dedent();
  }

  // `e` as a SIMD vector of `width` lanes over index variable `v` (lane l holding the value at
  // v + l; vec_ok), of e's value type; hoisted code goes to `w`.
  std::string vector_value(const Expr& e, PyWriter& w, int v, const std::string& width) {
    const Mode m{v, width};
    return vec_text(print(e, w, m), value_type(e), m);
  }
  // out[..., v:v+width] = rhs, as one SIMD store (v is the innermost output index); with
  // `line`, a non-temporal store of one whole 64-byte-aligned line.
  void assign_vector(PyWriter& w, const Mode& m, bool line = false) {
    Piece rhs = print(*st_.rhs, w, m);
    const DType ot = spec_.tensors[st_.out].type;
    const std::string name = tensor_name(st_.out);
    std::string value =
        stored(vec_text(rhs, compute_type(ot), m), rhs.vec ? rhs.prec : kMPrimary, st_.out);
    const std::string head =
        name + ".unsafe_store[width=" + m.width +
        (line ? ", alignment=" + std::to_string(kStreamLineBytes) + ", non_temporal=True"
              : std::string()) +
        "](" + out_flat() + ", ";
    if (static_cast<size_t>(w.columns()) + head.size() + value.size() + 1 > 100) {
      w.line("var sb_val = " + value);
      value = "sb_val";
    }
    w.line(head + value + ")");
  }

  // The walk of running scan `e` along the innermost output index i over outputs [i, end): i and
  // the reduction's variable k are declared (i at the first output, k at the walk's next term),
  // `acc` holds the fold so far. Until an output adds exactly the one term at k, the general walk
  // (each output folds the terms from k up to its range's end); from then on each output adds
  // the last term of its range, i + c - 1 (the range's end is i + c: the pass's rule), the form
  // the cpu printer's emit_scan_walk gives too. The terms are folded in the loop nest's order.
  //
  // With `stream` (the streaming pass's StreamChoice::scan; sb_stream bound), a vector of outputs
  // that is one whole 64-byte line starting a cache line is stored non-temporally when sb_stream
  // is set; returns whether the walk has such stores.
  bool walk_scan(const Expr& e, const std::string& acc, const std::string& end, PyWriter& w,
                 bool stream = false) {
    bool streamed = false;
    const DType t = value_type(e);
    const std::string& i = var_names_[st_.rank() - 1];
    const std::string& k = var_names_[e.ref];
    auto store = [&] {
      set_override(&e, acc);
      assign(w);
      overrides_.clear();
      w.line(i + " += 1");
    };
    w.open("while " + i + " < " + end + ":");
    w.open("if " + k + " == " + scalar(*st_.vars[e.ref].hi, w, kMAdd) + " - 1:");
    w.line("break");
    w.dedent();
    fold_terms(e, acc, w);
    store();
    w.dedent();
    const int iv = static_cast<int>(st_.rank()) - 1;
    if (vector_scans && vector_scan_fits(e.rop, t) && vec_ok(*e.args[0], e.ref) &&
        vec_ok(*st_.rhs, iv)) {
      // lower/running_scans.h's vector form: the terms as one SIMD vector along k, scanned in
      // registers, the outputs stored as one SIMD vector along i.
      const int lanes = vector_scan_lanes(t);
      const std::string n = std::to_string(lanes);
      const std::string scan = use_vector_scan(e.rop, t);
      w.line("# " + n + " outputs at a time, one term each: the terms as one SIMD vector, " +
             "scanned in vector");
      w.line("# registers (" + scan + "), the outputs stored as one.");
      w.open("while " + i + " + " + n + " <= " + end + ":");
      w.line(k + " = " + scalar(*st_.vars[e.ref].hi, w, kMAdd) + " - 1");
      const Mode terms{e.ref, n};
      const Piece term = print(*e.args[0], w, terms);
      w.line("var sb_scan = " + scan + "(" + vec_text(term, t, terms) + ", " + acc + ")");
      w.line(acc + " = sb_scan[" + std::to_string(lanes - 1) + "]");
      set_override(&e, "sb_scan");
      vector_overrides_.insert(&e);
      streamed = stream && lanes * dtype_bytes(spec_.tensors[st_.out].type) == kStreamLineBytes;
      if (streamed) {
        needs_->stream = true;
        w.open("if sb_stream and Int(" + tensor_name(st_.out) + ".unsafe_offset(" + out_flat() +
               ")) % " + std::to_string(kStreamLineBytes) + " == 0:");
        assign_vector(w, Mode{iv, n}, /*line=*/true);
        w.dedent();
        w.open("else:");
      }
      assign_vector(w, Mode{iv, n});
      if (streamed) w.dedent();
      overrides_.clear();
      vector_overrides_.clear();
      w.line(i + " += " + n);
      w.dedent();
    }
    w.open("while " + i + " < " + end + ":");
    w.line(k + " = " + scalar(*st_.vars[e.ref].hi, w, kMAdd) + " - 1");
    w.line(update(e.rop, t, acc, scalar(*e.args[0], w, 0)));
    store();
    w.dedent();
    return streamed;
  }

  // A rank-1 running scan `e` of this statement in two parallel passes (lower/host_bodies.h:
  // scan_split_bodies), one block per parallel task. Returns whether its walk streams (walk_scan
  // with the streaming pass's StreamChoice::scan).
  class ScanLeaves;
  bool scan_split(const Expr& e, PyWriter& w);

  // A top-level reduction of a scalar output, split into chunks computed in parallel (one partial
  // result per chunk, combined in chunk order). Returns the variable holding the result.
  std::string parallel_reduce(const Expr& r, PyWriter& w) {
    const std::string id = std::to_string(next_acc_++);
    const IndexVar& v = st_.vars[r.ref];
    const std::string lo = scalar(*v.lo, w, 0);
    const std::string hi = scalar(*v.hi, w, kMAdd);
    const DType t = value_type(r);
    const std::string n = "sb_n" + id, chunks = "sb_chunks" + id, part = "sb_part" + id,
                      p = "sb_p" + id;
    needs_->parallel = true;
    needs_->dealloc = true;
    w.line("# " + to_string(r, spec_, &st_) + ": one partial result per chunk");
    w.line("var " + n + " = " + (lo == "0" ? hi : hi + " - " + subtrahend(lo)));
    w.line("var " + chunks + " = max(min(" + n + ", parallelism_level()), 1)");
    w.line("var " + part + " = alloc(Layout[" + mojo_type(t) + "](count=" + chunks + "))");
    w.line("var " + p + " = " + part + ".unsafe_ptr()");
    w.line("");
    w.open("def sb_chunk" + id + "(sb_c: Int) {imm}:");
    const std::string base = lo == "0" ? "" : lo + " + ";
    w.line("var sb_lo = " + base + "sb_c * " + n + " // " + chunks);
    w.line("var sb_hi = " + base + "(sb_c + 1) * " + n + " // " + chunks);
    const std::string acc = reduce_loop(r, w, "sb_lo", "sb_hi");
    w.line(p + "[unsafe_offset=sb_c] = " + acc);
    w.dedent();
    w.line("");
    w.line("parallelize(sb_chunk" + id + ", " + chunks + ")");
    const std::string total = "sb_acc" + std::to_string(next_acc_++);
    w.line("var " + total + " = " + identity(r.rop, t));
    w.open("for sb_c in range(" + chunks + "):");
    w.line(update(r.rop, t, total, p + "[unsafe_offset=sb_c]"));
    w.dedent();
    w.line("dealloc(" + part + "^)");
    return total;
  }

 private:
  // Whether read `e` is a gather along v: one of its subscripts varies with v through a tensor's
  // value (probs[r, targets[r]]), so that no lanes' elements stand a fixed step apart.
  bool gathered(const Expr& e, int v) const {
    std::function<bool(const Expr&)> through_read = [&](const Expr& x) {
      if (x.kind == ExprKind::Read && depends(x, v)) return true;
      for (const auto& a : x.args)
        if (through_read(*a)) return true;
      return false;
    };
    for (const auto& a : e.args)
      if (through_read(*a)) return true;
    return false;
  }

  // The step c >= 1 between the elements that consecutive lanes read when `e` is c * v + (terms
  // that do not depend on v), c a constant; 0 otherwise. 1: a contiguous read.
  int64_t lane_stride(const Expr& e, int v) const {
    const std::optional<Affine> a = decompose(e, [&](const Expr& x) { return !depends(x, v); });
    if (!a || a->overflow) return 0;
    const int64_t c = a->var(v);
    return c >= 1 ? c : 0;
  }

  // A SIMD load of `width` lanes of tensor t from flat index `flat`, each lane `step` (1 or 2,
  // vec_ok) elements after the previous.
  std::string vector_load(int t, const std::string& flat, int64_t step, const std::string& width) {
    const std::string name = tensor_name(t);
    if (step == 1) return name + ".unsafe_load[width=" + width + "](" + flat + ")";
    SB_ASSERT(step == 2, "a vector read of step " + std::to_string(step));
    needs_->helpers.insert(MHelper::Step2);
    return "sb_load_step2[" + std::string(mojo_dtype(spec_.tensors[t].type)) + ", " + width +
           "](" + name + ", " + flat + ", " + element_count(t) + ")";
  }

  bool obviously_inside(const Expr& sub, int t, size_t d) const {
    return sb::obviously_inside(spec_, st_, sub, t, d);
  }

  // An integer expression that is never negative (sizes are at least 1).
  bool nonneg(const Expr& e) const {
    switch (e.kind) {
      case ExprKind::IntLit:
        return e.ival >= 0;
      case ExprKind::SizeRef:
        return true;
      case ExprKind::IndexVar:
        return static_cast<size_t>(e.ref) < st_.rank() ||
               (st_.vars[e.ref].lo && nonneg(*st_.vars[e.ref].lo));
      case ExprKind::Binary:
        return (e.bop == BinOp::Add || e.bop == BinOp::Mul) && nonneg(*e.args[0]) &&
               nonneg(*e.args[1]);
      case ExprKind::Call:
        return (e.fn == Fn::DivTrunc || e.fn == Fn::RemTrunc) && nonneg(*e.args[0]) &&
               nonneg(*e.args[1]);
      default:
        return false;
    }
  }

  std::string out_flat() {
    std::vector<Piece> subs;
    for (size_t d = 0; d < st_.rank(); ++d) subs.push_back({var_names_[d], kMPrimary, false});
    return flat_index(st_.out, subs);
  }

  // Row-major flat index in Horner form from per-dimension subscripts (from the second one for a
  // tensor held as one row).
  std::string flat_index(int t, const std::vector<Piece>& subs) {
    const size_t first = row_local_.count(t) ? 1 : 0;
    if (subs.size() <= first) return "0";
    std::string acc = subs[first].text;
    int acc_prec = subs[first].prec;
    for (size_t d = first + 1; d < subs.size(); ++d) {
      if (acc == "0") {
        acc = subs[d].text;
        acc_prec = subs[d].prec;
        continue;
      }
      acc = mparen(acc, acc_prec, kMMul) + " * " + extent(t, d, kMMul + 1) + " + " +
            mparen(subs[d].text, subs[d].prec, kMAdd + 1);
      acc_prec = kMAdd;
    }
    return acc;
  }

  // A uniform value as a vector (broadcast), or a vector as is.
  std::string vec_text(const Piece& p, DType t, const Mode& m) {
    if (p.vec) return p.text;
    // A Bool is not a Scalar: it splats only by name.
    const std::string fill = t == DType::Bool ? "fill=" : "";
    return "SIMD[" + std::string(mojo_dtype(t)) + ", " + m.width + "](" + fill + p.text + ")";
  }

 public:
  // The identity of reduction `op` over `t`, and the statement folding `value` into `acc`.
  std::string identity(ReduceOp op, DType t) {
    const bool fl = is_float(t);
    switch (op) {
      case ReduceOp::Sum:
        return fl ? mojo_float(0.0, t, needs_->math) : int_text(0, t);
      case ReduceOp::Max:
        return fl ? mojo_float(-INFINITY, t, needs_->math) : std::string(mojo_type(t)) + ".MIN";
      case ReduceOp::Min:
        return fl ? mojo_float(INFINITY, t, needs_->math) : std::string(mojo_type(t)) + ".MAX";
      case ReduceOp::Prod:
        return fl ? mojo_float(1.0, t, needs_->math) : int_text(1, t);
      case ReduceOp::ArgMax:
      case ReduceOp::ArgMin:
        SB_ASSERT(false, "an arg-reduction after check (check/arg_reductions.h rewrites them)");
    }
    return "0";
  }

  std::string update(ReduceOp op, DType /*t*/, const std::string& acc, const std::string& value) {
    // Mojo's fixed-width integers wrap, as the spec language's i32 sums and products do.
    if (op == ReduceOp::Sum) return acc + " += " + value;
    if (op == ReduceOp::Prod) return acc + " *= " + value;
    needs_->helpers.insert(MHelper::MinMax);
    return acc + " = " + (op == ReduceOp::Max ? "sb_max(" : "sb_min(") + acc + ", " + value + ")";
  }

 private:
  // The vector scan of reduction `op` over type `t` (vector_scan_fits), recorded in the file's
  // needs with its identity; returns its name, sb_scan_<op>_<type>.
  std::string use_vector_scan(ReduceOp op, DType t) {
    SB_ASSERT(vector_scan_fits(op, t), "a vector scan that vector_scan_fits refuses");
    if (op == ReduceOp::Max || op == ReduceOp::Min) needs_->helpers.insert(MHelper::MinMax);
    needs_->scans[{op, t}] = identity(op, t);
    return vector_scan_name(op, t);
  }

  std::string range_text(const std::string& lo, const std::string& hi) {
    return lo == "0" ? "range(" + hi + ")" : "range(" + lo + ", " + hi + ")";
  }

  // The loop of reduction `e` over [lo, hi) (texts), written to `w`; returns its accumulator.
  // Strip-mined into a SIMD accumulator when `strip` is set, the reduction is innermost and its
  // body is contiguous in the reduction variable.
  std::string reduce_loop(const Expr& e, PyWriter& w, const std::string& lo,
                          const std::string& hi) {
    const DType t = value_type(e);
    const std::string acc = "sb_acc" + std::to_string(next_acc_++);
    const std::string& k = var_names_[e.ref];
    const Expr& body = *e.args[0];
    const bool vectorise = strip && !contains_reduce(body) && depends(body, e.ref) &&
                           vec_ok(body, e.ref) && t != DType::Bool;
    if (vectorise) {
      const std::optional<FirstIndex> m = match_first_index(st_, e);
      if (m && vec_ok(*m->cond, e.ref)) return search_loop(e, *m, acc, w, lo, hi);
    }
    if (!vectorise) {
      w.line("var " + acc + " = " + identity(e.rop, t));
      w.open("for " + k + " in " + range_text(lo, hi) + ":");
      const std::string b = scalar(body, w, 0);
      w.line(update(e.rop, t, acc, b));
      w.dedent();
      return acc;
    }
    const std::string W = width_const(t);
    needs_->widths.insert(t);
    const std::string id = acc.substr(6);
    const std::string pacc = acc + "p", pend = "sb_endp" + id;
    const std::string vacc = acc + "v", end = "sb_end" + id;
    // First whole blocks of kReducePartialBytes (lower/vectorize.h) into one SIMD value that wide,
    // which the compiler splits into four independent vector accumulators; then whole native
    // vectors; then the rest as scalars.
    const std::string P = std::to_string(kReducePartialBytes / dtype_bytes(t));
    const std::string len = lo == "0" ? hi : hi + " - " + subtrahend(lo);
    w.line("var " + pacc + " = SIMD[" + mojo_dtype(t) + ", " + P + "](" + identity(e.rop, t) + ")");
    w.line("var " + pend + " = " + (lo == "0" ? "" : lo + " + ") + "max(" + len + ", 0) // " + P +
           " * " + P);
    w.open("for " + k + " in range(" + lo + ", " + pend + ", " + P + "):");
    {
      const Mode mp{e.ref, P};
      Piece pb = print(body, w, mp);
      w.line(update(e.rop, t, pacc, vec_text(pb, t, mp)));
    }
    w.dedent();
    const Mode m{e.ref, W};
    w.line("var " + vacc + " = SIMD[" + mojo_dtype(t) + ", " + W + "](" + identity(e.rop, t) + ")");
    w.line("var " + end + " = " + pend + " + max(" + hi + " - " + pend + ", 0) // " + W + " * " +
           W);
    w.open("for " + k + " in range(" + pend + ", " + end + ", " + W + "):");
    Piece vb = print(body, w, m);
    w.line(update(e.rop, t, vacc, vec_text(vb, t, m)));
    w.dedent();
    if (e.rop == ReduceOp::Sum) {
      w.line("var " + acc + " = " + pacc + ".reduce_add() + " + vacc + ".reduce_add()");
    } else {
      w.line("var " + acc + " = " + identity(e.rop, t));
      w.open("for sb_l in range(" + P + "):");
      w.line(update(e.rop, t, acc, pacc + "[sb_l]"));
      w.dedent();
      w.open("for sb_l in range(" + W + "):");
      w.line(update(e.rop, t, acc, vacc + "[sb_l]"));
      w.dedent();
    }
    w.open("for " + k + " in range(" + end + ", " + hi + "):");
    const std::string b = scalar(body, w, 0);
    w.line(update(e.rop, t, acc, b));
    w.dedent();
    return acc;
  }

  // A search (lower/patterns.h: FirstIndex `m`) of reduction `e` over [lo, hi) into `acc`, as the
  // cpu printer's (emit_common.h: print_search): each whole block of kSearchTerms terms ORs the
  // condition in native vectors of the compared values' type (search_type), up to the first
  // block where it holds for a term, whose terms are then tested one at a time; then the rest of
  // the range one term at a time. `acc` folds the index found, or the default when the range
  // holds terms and the condition held for none. One mask of kSearchTerms lanes instead took
  // 1.4-2.8x the time of folding every term (argmax_rows, 2-core VM).
  std::string search_loop(const Expr& e, const FirstIndex& m, const std::string& acc, PyWriter& w,
                          const std::string& lo, const std::string& hi) {
    const DType t = value_type(e);
    const std::string& k = var_names_[e.ref];
    const std::string id = acc.substr(6);
    const std::string at = "sb_at" + id, endp = "sb_endp" + id, mask = "sb_m" + id;
    const std::string block = "sb_b" + id;
    const std::string P = std::to_string(kSearchTerms);
    const DType vt = search_type(*m.cond);
    const std::string W = width_const(vt);
    needs_->widths.insert(vt);
    const std::string len = lo == "0" ? hi : hi + " - " + subtrahend(lo);
    w.line("# A search: the least " + k + " where the condition holds, its blocks of " + P +
           " terms tested as");
    w.line("# vectors in turn, the first block where it holds then one term at a time.");
    w.line("var " + acc + " = " + identity(e.rop, t));
    w.line("var " + at + " = " + hi);
    w.line("var " + endp + " = " + (lo == "0" ? "" : lo + " + ") + "max(" + len + ", 0) // " + P +
           " * " + P);
    // Terms [first, last) one at a time, up to the first where the condition holds (its index
    // into `at`).
    auto scan = [&](const std::string& first, const std::string& last) {
      w.open("for " + k + " in " + range_text(first, last) + ":");
      const std::string cond = scalar(*m.cond, w, 0);
      w.open("if " + cond + ":");
      w.line(at + " = " + k);
      w.line("break");
      w.dedent();
      w.dedent();
    };
    w.open("for " + block + " in range(" + lo + ", " + endp + ", " + P + "):");
    w.line("var " + mask + " = SIMD[DType.bool, " + W + "](fill=False)");
    w.open("for " + k + " in range(" + block + ", " + block + " + " + P + ", " + W + "):");
    const Mode mv{e.ref, W};
    const Piece c = print(*m.cond, w, mv);
    w.line(mask + " |= " + vec_text(c, DType::Bool, mv));
    w.dedent();
    w.open("if " + mask + ".reduce_or():");
    scan(block, block + " + " + P);
    w.open("if " + at + " != " + hi + ":");
    w.line("break");
    w.dedent();
    w.dedent();
    w.dedent();
    w.open("if " + at + " == " + hi + ":");
    scan(endp, hi);
    w.dedent();
    // The index found stands for the reduction's variable in the select's first arm.
    w.open("if " + at + " < " + hi + ":");
    overrides_[m.index] = at;
    w.line(update(e.rop, t, acc, scalar(*m.found, w, 0)));
    overrides_.erase(m.index);
    w.dedent();
    w.open("elif " + lo + " < " + hi + ":");
    w.line(update(e.rop, t, acc, scalar(*m.none, w, 0)));
    w.dedent();
    return acc;
  }

  // The type whose native vectors a search tests its condition in: that of the values compared by
  // its first comparison of values other than i64 (f32 for x[r, c] == m[r], also where an index
  // comparison comes first); i64 where every comparison compares i64 values, or there is none.
  DType search_type(const Expr& cond) const {
    const bool compares =
        cond.kind == ExprKind::Binary &&
        (cond.bop == BinOp::Lt || cond.bop == BinOp::Le || cond.bop == BinOp::Gt ||
         cond.bop == BinOp::Ge || cond.bop == BinOp::Eq || cond.bop == BinOp::Ne);
    if (compares) {
      const DType t = value_type(*cond.args[0]);
      if (is_float(t) || is_integer(t)) return t == DType::Index ? DType::I64 : t;
    }
    for (const auto& a : cond.args) {
      const DType t = search_type(*a);
      if (t != DType::I64) return t;
    }
    return DType::I64;
  }

  Piece print(const Expr& e, PyWriter& w, const Mode& m) {
    if (!overrides_.empty()) {
      auto it = overrides_.find(&e);
      if (it != overrides_.end()) return {it->second, kMPrimary, vector_overrides_.count(&e) > 0};
    }
    if (m.vector() && !depends(e, m.v)) return print(e, w, Mode{});
    const DType t = value_type(e);
    switch (e.kind) {
      case ExprKind::FloatLit:
      case ExprKind::IntLit: {
        if (is_float(t)) {
          const double v = e.kind == ExprKind::FloatLit ? e.fval : static_cast<double>(e.ival);
          return {mojo_float(v, t, needs_->math), kMPrimary, false};
        }
        SB_ASSERT(e.kind == ExprKind::IntLit, "float literal of integer type");
        std::string s = int_text(e.ival, t);
        return {s, s[0] == '-' ? kMUnary : kMPrimary, false};
      }
      case ExprKind::Const:
        return {mojo_float(e.fval, is_float(t) ? t : DType::F64, needs_->math), kMPrimary, false};
      case ExprKind::IndexVar:
        if (m.vector() && e.ref == m.v) {
          // Lane l holds the index plus l.
          needs_->math.insert("iota");
          return {std::string("iota[") + mojo_dtype(DType::Index) + ", " + m.width + "](" +
                      var_names_[e.ref] + ")",
                  kMPrimary, true};
        }
        return {var_names_[e.ref], kMPrimary, false};
      case ExprKind::SizeRef:
        return {size_name(e.ref), kMPrimary, false};
      case ExprKind::Read: {
        // An f16 or bf16 element (a vector of them) reads as the f32 it widens to. A tensor
        // held as one row holds those f32 values already.
        Piece r = print_read(e, w, m);
        const DType t = spec_.tensors[e.ref].type;
        if (!is_storage_type(t) || row_local_.count(e.ref)) return r;
        return {mparen(r.text, r.prec, kMPrimary) + ".cast[" + mojo_dtype(compute_type(t)) +
                    "]()",
                kMPrimary, r.vec};
      }
      case ExprKind::Unary: {
        Piece a = print(*e.args[0], w, m);
        if (e.uop == UnOp::Not) {
          if (a.vec) return {"~" + mparen(a.text, a.prec, kMUnary), kMUnary, true};
          return {"not " + mparen(a.text, a.prec, kMNot), kMNot, false};
        }
        std::string s = mparen(a.text, a.prec, kMUnary);
        if (s[0] == '-') s = "(" + s + ")";
        return {"-" + s, kMUnary, a.vec};
      }
      case ExprKind::Binary:
        return print_binary(e, w, m);
      case ExprKind::Call:
        return print_call(e, w, m);
      case ExprKind::Cast:
        return print_cast(e, w, m);
      case ExprKind::Reduce:
        return print_reduce(e, w, m);
      case ExprKind::Name:
        break;
    }
    SB_ASSERT(false, "unresolved name '" + e.name + "' reached the emitter");
    return {};
  }

  Piece print_binary(const Expr& e, PyWriter& w, const Mode& m) {
    const Expr& A = *e.args[0];
    const Expr& B = *e.args[1];
    Piece a = print(A, w, m);
    Piece b = print(B, w, m);
    const bool vec = a.vec || b.vec;
    switch (e.bop) {
      case BinOp::And:
      case BinOp::Or: {
        const bool is_and = e.bop == BinOp::And;
        if (vec) {
          const int self = is_and ? kMBitAnd : kMBitOr;
          std::string l = vec_text(a, DType::Bool, m), r = vec_text(b, DType::Bool, m);
          auto side = [&](const std::string& s, const Piece& p) {
            return (p.prec == kMBitAnd || p.prec == kMBitOr) && p.prec != self
                       ? "(" + s + ")"
                       : mparen(s, p.vec ? p.prec : kMPrimary, self);
          };
          return {side(l, a) + (is_and ? " & " : " | ") + side(r, b), self, true};
        }
        const int self = is_and ? kMAnd : kMOr;
        auto side = [&](const Piece& p, bool right) {
          const bool other = (p.prec == kMAnd || p.prec == kMOr) && p.prec != self;
          return other ? "(" + p.text + ")" : mparen(p.text, p.prec, right ? self + 1 : self);
        };
        return {side(a, false) + (is_and ? " and " : " or ") + side(b, true), self, false};
      }
      case BinOp::Lt:
      case BinOp::Le:
      case BinOp::Gt:
      case BinOp::Ge:
      case BinOp::Eq:
      case BinOp::Ne: {
        if (vec) {
          // A method of the vector operand; a uniform operand is broadcast implicitly. With the
          // vector on the right, the comparison is mirrored (a < v is v.gt(a)).
          BinOp op = e.bop;
          if (!a.vec) {
            std::swap(a, b);
            op = op == BinOp::Lt   ? BinOp::Gt
                 : op == BinOp::Le ? BinOp::Ge
                 : op == BinOp::Gt ? BinOp::Lt
                 : op == BinOp::Ge ? BinOp::Le
                                   : op;
          }
          // Not SIMD.ne: it is the ordered comparison (LLVM's `fcmp one`), false when either
          // operand is NaN, where the spec's != (C's, and Mojo's scalar !=) is true.
          const char* method = op == BinOp::Lt   ? ".lt("
                               : op == BinOp::Le ? ".le("
                               : op == BinOp::Gt ? ".gt("
                               : op == BinOp::Ge ? ".ge("
                                                 : ".eq(";
          const std::string cmp = mparen(a.text, a.prec, kMPrimary) + method + b.text + ")";
          if (op == BinOp::Ne) return {"~" + cmp, kMUnary, true};
          return {cmp, kMPrimary, true};
        }
        return {mparen(a.text, a.prec, kMCmp + 1) + " " + binop_symbol(e.bop) + " " +
                    mparen(b.text, b.prec, kMCmp + 1),
                kMCmp, false};
      }
      default:
        break;
    }
    const DType t = value_type(e);
    if (is_float(t) && e.bop == BinOp::Mod) {
      SB_ASSERT(!vec, "fmod in vector mode");
      needs_->external_call = true;
      return {std::string("external_call[\"fmod") + sb::scalar(t).c_libm_suffix + "\", " +
                  mojo_type(t) + "](" + a.text + ", " + b.text + ")",
              kMPrimary, false};
    }
    SB_ASSERT(
        is_float(t) || (e.bop != BinOp::Div && e.bop != BinOp::Mod),
        "an integer / or % reached the Mojo printer (lower/legalize_int_div makes them calls)");
    // A uniform operand of a vector one is broadcast implicitly.
    const int self = (e.bop == BinOp::Add || e.bop == BinOp::Sub) ? kMAdd : kMMul;
    return {mparen(a.text, a.prec, self) + " " + binop_symbol(e.bop) + " " +
                mparen(b.text, b.prec, self + 1),
            self, vec};
  }

  Piece print_call(const Expr& e, PyWriter& w, const Mode& m) {
    const DType t = value_type(e);
    std::vector<Piece> args;
    bool vec = false;
    for (const auto& a : e.args) {
      args.push_back(print(*a, w, m));
      vec = vec || args.back().vec;
    }
    if (e.fn == Fn::Select) {
      if (args[0].vec)  // the uniform branch, if any, is broadcast implicitly
        return {mparen(args[0].text, args[0].prec, kMPrimary) + ".select(" + args[1].text + ", " +
                    args[2].text + ")",
                kMPrimary, true};
      if (vec)  // a uniform condition choosing between vectors
        return {vec_text(args[1], t, m) + " if " +
                    mparen(args[0].text, args[0].prec, kMTernary + 1) + " else " +
                    vec_text(args[2], t, m),
                kMTernary, true};
      return {mparen(args[1].text, args[1].prec, kMTernary + 1) + " if " +
                  mparen(args[0].text, args[0].prec, kMTernary + 1) + " else " +
                  mparen(args[2].text, args[2].prec, kMTernary + 1),
              kMTernary, false};
    }
    auto arg = [&](size_t i) { return vec ? vec_text(args[i], t, m) : args[i].text; };
    switch (e.fn) {
      case Fn::Min:
      case Fn::Max:
        needs_->helpers.insert(MHelper::MinMax);
        return {std::string(e.fn == Fn::Min ? "sb_min(" : "sb_max(") + arg(0) + ", " + arg(1) + ")",
                kMPrimary, vec};
      case Fn::Abs:
        if (is_float(t)) return {"abs(" + arg(0) + ")", kMPrimary, vec};
        needs_->helpers.insert(MHelper::AbsInt);
        return {"sb_abs(" + arg(0) + ")", kMPrimary, vec};
      case Fn::Pow:
        SB_ASSERT(is_float(t), "pow of a non-floating-point value");
        return {"(" + arg(0) + " ** " + arg(1) + ")", kMPrimary, vec};
      case Fn::Exp:
      case Fn::Log:
      case Fn::Sqrt:
      case Fn::Tanh:
      case Fn::Erf:
      case Fn::Log1p:
      case Fn::Expm1:
      case Fn::Sin:
      case Fn::Cos:
      case Fn::Floor:
      case Fn::Ceil:
      case Fn::Round:
      case Fn::Rsqrt: {
        const MojoMath* mm = mojo_math(e.fn);
        SB_ASSERT(mm && is_float(t), std::string(fn_name(e.fn)) + " of a non-floating-point value");
        if (e.fn == Fn::Exp && t == DType::F32) {
          needs_->helpers.insert(MHelper::ExpF32);
          needs_->math.insert("exp");
          return {"sb_exp_f32(" + arg(0) + ")", kMPrimary, vec};
        }
        if (e.fn == Fn::Exp && t == DType::F64) {
          needs_->helpers.insert(MHelper::ExpF64);
          needs_->math.insert("inf");
          needs_->bitcast = true;
          return {"sb_exp_f64(" + arg(0) + ")", kMPrimary, vec};
        }
        if (mm->import) needs_->math.insert(mm->name);
        return {std::string(mm->name) + "(" + arg(0) + ")", kMPrimary, vec};
      }
      case Fn::DivTrunc:  // by a divisor never 0 or -1 (legalize_int_div)
      case Fn::RemTrunc: {
        SB_ASSERT(!vec, "integer division in vector mode");
        const bool div = e.fn == Fn::DivTrunc;
        // Mojo's // and % round toward negative infinity: the same as truncation when neither
        // operand is negative.
        if (nonneg(*e.args[0]) && nonneg(*e.args[1]))
          return {mparen(args[0].text, args[0].prec, kMMul) + (div ? " // " : " % ") +
                      mparen(args[1].text, args[1].prec, kMMul + 1),
                  kMMul, false};
        const MojoIntHelpers& ih = mojo_int_helpers(t);
        needs_->helpers.insert(ih.div);
        if (!div) needs_->helpers.insert(ih.mod);
        return {std::string(div ? "sb_div_" : "sb_mod_") + sb::scalar(t).mojo_suffix + "(" +
                    args[0].text + ", " + args[1].text + ")",
                kMPrimary, false};
      }
      case Fn::Select:   // printed above
      case Fn::Sigmoid:  // no Mojo spelling: expanded before printing (spells)
      case Fn::Sign:
        break;
    }
    SB_ASSERT(false, std::string("'") + fn_name(e.fn) + "' reached the Mojo printer unexpanded");
    return {};
  }

  Piece print_cast(const Expr& e, PyWriter& w, const Mode& m) {
    const Expr& A = *e.args[0];
    const DType from = value_type(A);
    const DType to = e.cast_to == DType::Unknown ? value_type(e) : e.cast_to;
    if (from == to) return print(A, w, m);
    Piece a = print(A, w, m);
    if (a.vec)
      return {mparen(a.text, a.prec, kMPrimary) + ".cast[" + mojo_dtype(to) + "]()", kMPrimary,
              true};
    if (from == DType::Bool)
      return {std::string(mojo_type(to)) + "(Int(" + a.text + "))", kMPrimary, false};
    if (is_float(to) || !is_float(from))
      return {std::string(mojo_type(to)) + "(" + a.text + ")", kMPrimary, false};
    needs_->helpers.insert(mojo_cast_helper(from, to));
    return {std::string("sb_") + sb::scalar(from).mojo_suffix + "_to_" +
                sb::scalar(to).mojo_suffix + "(" + a.text + ")",
            kMPrimary, false};
  }

  // A subscript as an Int (a gathered i32 value is converted).
  Piece subscript(const Expr& e, PyWriter& w) {
    Piece p = print(e, w, Mode{});
    if (sb::scalar(value_type(e)).kind == ScalarKind::SignedInt)
      return {"Int(" + p.text + ")", kMPrimary, false};
    return p;
  }

  Piece print_read(const Expr& e, PyWriter& w, const Mode& m) {
    const int t = e.ref;
    const std::string name = tensor_name(t);
    const Tensor& tn = spec_.tensors[t];
    if (e.args.empty()) return {name + "[]", kMPrimary, false};
    SB_ASSERT(e.args.size() == tn.shape.size(), "read with the wrong number of subscripts");
    SB_ASSERT(!row_local_.count(t) || tn.boundary == Boundary::None,
              "a tensor held as one row has a boundary rule");
    std::vector<Piece> subs;
    if (m.vector() && gathered(e, m.v)) {
      // A gather: lane by lane, each the scalar read at index v + l.
      const std::string value = "sb_ld" + std::to_string(next_load_++) + "_" + name;
      w.line("var " + value + " = SIMD[" + mojo_dtype(tn.type) + ", " + m.width + "]()");
      w.open("for sb_l in range(" + m.width + "):");
      const std::string saved = var_names_[m.v];
      var_names_[m.v] = "(" + saved + " + sb_l)";
      const Piece one = print_read(e, w, Mode{});
      var_names_[m.v] = saved;
      w.line(value + "[sb_l] = " + one.text);
      w.dedent();
      return {value, kMPrimary, true};
    }
    if (m.vector()) {  // a constant step in the lanes (vec_ok)
      bool inside = true;
      for (size_t d = 0; d < e.args.size(); ++d)
        inside = inside && obviously_inside(*e.args[d], t, d);
      if (tn.boundary == Boundary::None || inside || assume_inside_) {
        for (const auto& a : e.args) subs.push_back(subscript(*a, w));
        return {vector_load(t, flat_index(t, subs), lane_stride(*e.args.back(), m.v), m.width),
                kMPrimary, true};
      }
      return guarded_vector_read(e, w, m);
    }
    switch (assume_inside_ ? Boundary::None : tn.boundary) {
      case Boundary::None:
        for (const auto& a : e.args) subs.push_back(subscript(*a, w));
        return {name + "[unsafe_offset=" + flat_index(t, subs) + "]", kMPrimary, false};
      case Boundary::Clamp:
        for (size_t d = 0; d < e.args.size(); ++d) {
          Piece s = subscript(*e.args[d], w);
          if (!obviously_inside(*e.args[d], t, d)) {
            needs_->helpers.insert(MHelper::Clamp);
            s = {"sb_clamp(" + s.text + ", " + extent(t, d, 0) + ")", kMPrimary, false};
          }
          subs.push_back(s);
        }
        return {name + "[unsafe_offset=" + flat_index(t, subs) + "]", kMPrimary, false};
      case Boundary::Zero: {
        std::vector<Piece> printed;
        std::vector<bool> checked;
        for (size_t d = 0; d < e.args.size(); ++d) {
          printed.push_back(subscript(*e.args[d], w));
          checked.push_back(!obviously_inside(*e.args[d], t, d));
        }
        const std::string value = "sb_ld" + std::to_string(next_load_) + "_" + name;
        std::string inside;
        for (size_t d = 0; d < e.args.size(); ++d) {
          std::string s = printed[d].text;
          if (checked[d]) {
            if (printed[d].prec != kMPrimary || s.find('(') != std::string::npos) {
              s = value + "_i" + std::to_string(d);
              w.line("var " + s + " = " + printed[d].text);
            }
            inside += (inside.empty() ? "" : " and ") + s + " >= 0 and " + s + " < " +
                      extent(t, d, kMAdd);
          }
          subs.push_back({s, kMPrimary, false});
        }
        const std::string load = name + "[unsafe_offset=" + flat_index(t, subs) + "]";
        if (inside.empty()) return {load, kMPrimary, false};
        ++next_load_;
        const std::string zero =
            is_float(tn.type) ? mojo_float(0.0, tn.type, needs_->math) : int_text(0, tn.type);
        const std::string lhs = "var " + value + " = ";
        const std::string rhs = load + " if " + inside + " else " + zero;
        if (static_cast<size_t>(w.columns()) + lhs.size() + rhs.size() <= 100) {
          w.line(lhs + rhs);
        } else {
          w.line(lhs + "(");
          w.line("    " + load);
          w.line("    if " + inside);
          w.line("    else " + zero);
          w.line(")");
        }
        return {value, kMPrimary, false};
      }
    }
    return {};
  }

  // A read under a boundary rule whose last subscript runs over the lanes: one SIMD load when
  // every lane is inside the tensor, else lane by lane with the rule applied.
  Piece guarded_vector_read(const Expr& e, PyWriter& w, const Mode& m) {
    const int t = e.ref;
    const std::string name = tensor_name(t);
    const Tensor& tn = spec_.tensors[t];
    const size_t n = e.args.size();
    const std::string value = "sb_ld" + std::to_string(next_load_++) + "_" + name;
    const std::string base = value + "_i" + std::to_string(n - 1);
    std::vector<Piece> subs;
    std::string uniform;  // the other subscripts inside (boundary zero)
    for (size_t d = 0; d + 1 < n; ++d) {
      Piece s = subscript(*e.args[d], w);
      if (!obviously_inside(*e.args[d], t, d)) {
        if (tn.boundary == Boundary::Clamp) {
          needs_->helpers.insert(MHelper::Clamp);
          s = {"sb_clamp(" + s.text + ", " + extent(t, d, 0) + ")", kMPrimary, false};
        } else {
          if (s.prec != kMPrimary || s.text.find('(') != std::string::npos) {
            const std::string local = value + "_i" + std::to_string(d);
            w.line("var " + local + " = " + s.text);
            s = {local, kMPrimary, false};
          }
          uniform += s.text + " >= 0 and " + s.text + " < " + extent(t, d, kMAdd) + " and ";
        }
      }
      subs.push_back(s);
    }
    const std::string ext = extent(t, n - 1, kMAdd);
    const int64_t step = lane_stride(*e.args[n - 1], m.v);
    const std::string lane = step == 1 ? "sb_l" : std::to_string(step) + " * sb_l";
    w.line("var " + base + " = " + subscript(*e.args[n - 1], w).text);
    const std::string zero =
        is_float(tn.type) ? mojo_float(0.0, tn.type, needs_->math) : int_text(0, tn.type);
    w.line("var " + value + " = SIMD[" + mojo_dtype(tn.type) + ", " + m.width + "](" + zero + ")");
    subs.push_back({base, kMPrimary, false});
    const std::string last = step == 1 ? base + " + " + m.width + " <= " + ext
                                       : base + " + " + std::to_string(step) + " * (" + m.width +
                                             " - 1) < " + ext;
    w.open("if " + uniform + base + " >= 0 and " + last + ":");
    w.line(value + " = " + vector_load(t, flat_index(t, subs), step, m.width));
    w.dedent();
    w.open("else:");
    w.open("for sb_l in range(" + m.width + "):");
    subs.pop_back();
    if (tn.boundary == Boundary::Clamp) {
      needs_->helpers.insert(MHelper::Clamp);
      subs.push_back(
          {"sb_clamp(" + base + " + " + lane + ", " + extent(t, n - 1, 0) + ")", kMPrimary, false});
      w.line(value + "[sb_l] = " + name + "[unsafe_offset=" + flat_index(t, subs) + "]");
    } else {
      subs.push_back({base + " + " + lane, kMAdd, false});
      w.open("if " + uniform + base + " + " + lane + " >= 0 and " + base + " + " + lane + " < " +
             ext + ":");
      w.line(value + "[sb_l] = " + name + "[unsafe_offset=" + flat_index(t, subs) + "]");
      w.dedent();
    }
    w.dedent();
    w.dedent();
    return {value, kMPrimary, true};
  }

  Piece print_reduce(const Expr& e, PyWriter& w, const Mode& m) {
    const IndexVar& v = st_.vars[e.ref];
    SB_ASSERT(v.lo && v.hi, "reduction variable without a range");
    const std::string lo = scalar(*v.lo, w, 0);
    const std::string hi = scalar(*v.hi, w, 0);
    if (!m.vector()) return {reduce_loop(e, w, lo, hi), kMPrimary, false};
    // One SIMD accumulator: lane l reduces for output index v + l.
    const DType t = value_type(e);
    const std::string acc = "sb_acc" + std::to_string(next_acc_++);
    w.line("var " + acc + " = SIMD[" + mojo_dtype(t) + ", " + m.width + "](" + identity(e.rop, t) +
           ")");
    w.open("for " + var_names_[e.ref] + " in " + range_text(lo, hi) + ":");
    Piece b = print(*e.args[0], w, m);
    w.line(update(e.rop, t, acc, vec_text(b, t, m)));
    w.dedent();
    return {acc, kMPrimary, true};
  }

  const Spec& spec_;
  const Statement& st_;
  FileNeeds* needs_;
  std::vector<std::string> var_names_;
  std::set<int> used_tensors_;
  std::set<int> used_sizes_;
  int next_acc_ = 0;
  int next_load_ = 0;
  std::map<const Expr*, std::string> overrides_;
  std::set<const Expr*> vector_overrides_;  // overrides whose text is a SIMD vector
  std::map<int, std::string> row_local_;
  bool assume_inside_ = false;
};

// A running scan's fold and walk in a host kernel body (lower/host_bodies.h), spelled by this
// printer: the fold of a range of terms as reduce_loop's strip-mined SIMD reduction where the
// term allows, and the walk of walk_scan, streaming with `stream` (then fenced under sb_stream).
class MojoLowering::ScanLeaves : public HostLeaves<MojoLowering, PyWriter> {
 public:
  ScanLeaves(MojoLowering& L, PyWriter& w, bool stream) : HostLeaves(L, w), stream_(stream) {}
  void fold_range(const Expr& red, const std::string& acc, const std::string& lo,
                  const std::string& hi) override {
    const bool strip_was = L_.strip;
    L_.strip = true;
    const std::string folded = L_.reduce_loop(red, w_, lo, hi);
    L_.strip = strip_was;
    w_.line(L_.update(red.rop, value_type(red), acc, folded));
  }
  void scan_walk(const Expr& red, const std::string& acc, const std::string& end) override {
    if (!L_.walk_scan(red, acc, end, w_, stream_)) return;
    streamed = true;
    w_.open("if sb_stream:");
    w_.line("fence()");
    w_.dedent();
  }
  bool streamed = false;  // a walk stores non-temporally

 private:
  bool stream_;
};

bool MojoLowering::scan_split(const Expr& e, PyWriter& w) {
  needs_->parallel = true;
  needs_->dealloc = true;
  const ScanSplitBodies bodies = scan_split_bodies(spec_, st_, e);
  ScanLeaves leaves(*this, w, stream_choice(spec_, st_).scan);
  print_mojo_block(bodies.head, leaves, w);
  print_mojo_block(bodies.two_pass, leaves, w);
  return leaves.streamed;
}

// ---- Strategies -------------------------------------------------------------------------------

bool emit_running_scan(MojoLowering& L, const Expr& red, size_t first, PyWriter& w,
                       bool stream = false);

// A scalar loop nest; a running scan (lower/running_scans.h) walks its innermost index once.
void emit_loops(MojoLowering& L, PyWriter& w) {
  const Statement& st = L.stmt();
  if (const Expr* red = running_scan(L.spec(), st, /*rows=*/false)) {
    emit_running_scan(L, *red, 0, w);
    return;
  }
  for (size_t d = 0; d < st.rank(); ++d)
    w.open("for " + L.var_name(static_cast<int>(d)) + " in range(" + L.extent(st.out, d, 0) + "):");
  L.assign(w);
  for (size_t d = 0; d < st.rank(); ++d) w.dedent();
}

// The row group's next row, which next-row prefetches (lower/streaming.h) read: bound at the
// start of a row's code (emit_row_body) when the statement has any.
constexpr const char* kNextRow = "sb_next_row";

// The next-row prefetches of `next_rows` (StreamChoice::next_rows) along statement L's innermost
// output variable: the cache lines of t[kNextRow, col .. col + count) for each such tensor t,
// `count` a text (a number, or a SIMD width parameter). `streaming`: the code runs only when the
// group streams, else it checks sb_stream.
void emit_next_row_prefetches(MojoLowering& L, const std::map<int, int>& next_rows,
                              const std::string& col, const std::string& count, bool streaming,
                              PyWriter& w) {
  const Statement& st = L.stmt();
  const int v = static_cast<int>(st.rank()) - 1;
  std::vector<int> tensors;
  for (const auto& [t, var] : next_rows)
    if (var == v) tensors.push_back(t);
  if (tensors.empty()) return;
  L.needs().prefetch = true;
  if (streaming)
    w.line("# The next row, for its first pass:");
  else
    w.open("if sb_stream:  # the next row, for its first pass");
  for (int t : tensors) {
    const int step = std::max(1, kStreamLineBytes / dtype_bytes(L.spec().tensors[t].type));
    const bool one = count.find_first_not_of("0123456789") == std::string::npos &&
                     std::stoi(count) <= step;
    const std::string at = one ? col : col + " + sb_p";
    if (!one) w.open("for sb_p in range(0, " + count + ", " + std::to_string(step) + "):");
    w.line("prefetch[PrefetchOptions().for_read().high_locality().to_data_cache()](" +
           L.tensor_name(t) + ".unsafe_offset(" +
           L.flat_2d(t, kNextRow, at) +
           "))");
    if (!one) w.dedent();
  }
  if (!streaming) w.dedent();
}

// A row split by its reads' exact reach along it (row_split).
struct RowSplit {
  std::string uniform;  // the checks that do not vary along the row ("" when none)
  bool along = false;   // some check varies along the row: the row's ends are set apart
  int64_t edge = 0;     // then the outputs at each end that can reach past an edge
};

// Where statement L, vectorised over its innermost output index, has reads with a boundary rule
// whose reach along the row is exact (lower/vectorize.h: exact_tap_edge), its row is split as the
// cpu printer's edge segments split it: where the checks that do not vary along the row hold
// (the rows above and below inside, say), the row's first and last `edge` outputs run the
// checked loop and the middle, whose reads are inside by the edges' construction, a copy without
// checks; elsewhere the whole row runs the checked loop. Without the split every vector load
// tests its subscripts. nullopt where no read needs checks, or the reach is not exact. A
// streamed row (emit_stream_lines) keeps its checks: with its middle lines split so too,
// stencil2d at 2048^2 and 4096^2 and stencil3d at 256^3 ran within the machine's noise
// (0.98-1.0x; 6-8 alternations of 5 repetitions, 2-core VM), bound by memory.
std::optional<RowSplit> row_split(MojoLowering& L) {
  const Statement& st = L.stmt();
  if (st.rank() < 2) return std::nullopt;
  const std::optional<int64_t> edge = exact_tap_edge(L.spec(), st, *st.rhs);
  if (!edge) return std::nullopt;
  PyWriter cond_code;
  RowSplit s;
  const std::optional<std::string> uniform =
      L.uniform_condition(*st.rhs, static_cast<int>(st.rank()) - 1, cond_code, s.along);
  if (!uniform || (!s.along && uniform->empty()) || !cond_code.str().empty()) return std::nullopt;
  s.uniform = *uniform;
  s.edge = *edge;
  return s;
}

// The output elements [lo, hi) (texts) of statement L's innermost dimension, its other indices
// bound, with non-temporal stores: plain stores up to the first 64-byte boundary, one SIMD store
// per whole line, plain stores for the rest, so that a large output costs no read-for-ownership
// traffic. The statement is elementwise and vectorises over its innermost index. Each line
// first prefetches the tensors in `prefetch` (the streaming pass's StreamChoice::prefetch or
// prefetch_rows) kStreamPrefetchBytes ahead, clamped to the last element of the output's
// innermost dimension, and in a row group the next row's line of each of `next_rows`.
void emit_stream_lines(MojoLowering& L, const std::string& lo, const std::string& hi,
                       const std::set<int>& prefetch, PyWriter& w,
                       const std::map<int, int>& next_rows = {}) {
  const Statement& st = L.stmt();
  const int v = static_cast<int>(st.rank()) - 1;
  const std::string& name = L.var_name(v);
  const int bytes = dtype_bytes(L.spec().tensors[st.out].type);
  const std::string line = std::to_string(kStreamLineBytes);
  const std::string lanes = std::to_string(kStreamLineBytes / bytes);
  const std::string len = lo == "0" ? hi : hi + " - " + subtrahend(lo);
  const std::string from = lo == "0" ? "" : lo + " + ";
  L.needs().stream = true;
  w.line("# Non-temporal stores: plain head and tail, whole " + line + "-byte lines in between.");
  w.line("var sb_first = Int(" + L.tensor_name(st.out) + ".unsafe_offset(" + L.out_flat_at(lo) +
         "))");
  w.line("var sb_head = min((" + line + " - sb_first % " + line + ") % " + line + " // " +
         std::to_string(bytes) + ", " + len + ")");
  w.line("var sb_lines_end = sb_head + (" + len + " - sb_head) // " + lanes + " * " + lanes);
  w.line("");
  w.open("def sb_line(" + name + ": Int) {imm}:");
  for (int t : prefetch) {
    const std::string ahead =
        std::to_string(kStreamPrefetchBytes / dtype_bytes(L.spec().tensors[t].type));
    L.needs().prefetch = true;
    w.line("prefetch[PrefetchOptions().for_read().high_locality().to_data_cache()](" +
           L.tensor_name(t) + ".unsafe_offset(" +
           L.flat_at(t, "min(" + name + " + " + ahead + ", " +
                            L.extent(st.out, static_cast<size_t>(v), kMAdd + 1) + " - 1)") +
           "))");
  }
  emit_next_row_prefetches(L, next_rows, name, lanes, /*streaming=*/true, w);
  L.assign_vector(w, Mode{v, lanes}, /*line=*/true);
  w.dedent();
  w.line("");
  w.open("def sb_one(" + name + ": Int) {imm}:");
  L.assign(w);
  w.dedent();
  w.line("");
  w.open("for " + name + " in range(" + lo + ", " + from + "sb_head):");
  w.line("sb_one(" + name + ")");
  w.dedent();
  w.open("for " + name + " in range(" + from + "sb_head, " + from + "sb_lines_end, " + lanes +
         "):");
  w.line("sb_line(" + name + ")");
  w.dedent();
  w.open("for " + name + " in range(" + from + "sb_lines_end, " + hi + "):");
  w.line("sb_one(" + name + ")");
  w.dedent();
}

// Whether statement L is computed as SIMD vectors over its innermost output index: the vectorize
// pass chose that loop (lower/vectorize.h; `rows`: its choice row by row), every read that varies
// with the index is contiguous in it (vec_ok), and the value is not a Bool.
bool vectorises_outputs(MojoLowering& L, bool rows) {
  const Statement& st = L.stmt();
  const SimdChoice& c = simd_choice(L.spec(), st);
  const int v = static_cast<int>(st.rank()) - 1;
  return (rows ? c.rows : c.whole) == SimdLoops::Outputs && L.vec_ok(*st.rhs, v) &&
         st.rhs->type != DType::Bool;
}

// A running scan (lower/running_scans.h) of statement L: loops over the output dimensions from
// `first` up to the innermost, then one accumulator carried along the innermost index
// (MojoLowering::walk_scan, streaming its whole lines under sb_stream with `stream`). Returns
// whether the walk has non-temporal stores.
bool emit_running_scan(MojoLowering& L, const Expr& red, size_t first, PyWriter& w,
                       bool stream) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  for (size_t d = first; d + 1 < rank; ++d)
    w.open("for " + L.var_name(static_cast<int>(d)) + " in range(" + L.extent(st.out, d, 0) + "):");
  w.line("# Running: each output's range extends the previous one's by its new terms.");
  L.open_running(red, "sb_run", w);
  w.line("var " + L.var_name(static_cast<int>(rank) - 1) + " = 0");
  const bool streamed =
      L.walk_scan(red, "sb_run", L.extent(st.out, rank - 1, kMCmp + 1), w, stream);
  for (size_t d = first; d + 1 < rank; ++d) w.dedent();
  return streamed;
}

// Statement L's code for one row, its first `first` indices already bound: loops over its other
// output dimensions, the innermost vectorised where its expression allows (else its innermost
// reductions are strip-mined). With `stream`, an elementwise statement vectorised over its
// innermost index chooses at run time (sb_stream) between that and emit_stream_lines; with
// `scan_stream`, a running scan's walk stores its whole lines non-temporally under sb_stream.
// Returns whether the row has such stores.
bool emit_row_body(MojoLowering& L, PyWriter& w, bool stream = false,
                   const std::set<int>& prefetch = {}, bool scan_stream = false,
                   const std::map<int, int>& next_rows = {}, size_t first = 1) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  SB_ASSERT(first >= 1 && first < std::max<size_t>(rank, 2), "a row body with no row to walk");
  if (const Expr* red = running_scan(L.spec(), L.stmt(), /*rows=*/true))
    return emit_running_scan(L, *red, first, w, scan_stream);
  const int v = static_cast<int>(rank) - 1;
  const bool vec = vectorises_outputs(L, /*rows=*/true);
  // Next-row prefetches (lower/streaming.h) go in the vector loop along the innermost output
  // variable, one line per vector; a statement this printer does not vectorise declines them.
  bool next = false;
  if (vec)
    for (const auto& [t, var] : next_rows) next = next || var == v;
  if (next)
    w.line("var " + std::string(kNextRow) + " = min(" + L.var_name(0) + " + 1, " +
           L.extent(st.out, 0, kMAdd + 1) + " - 1)");
  L.strip = !vec;
  stream = stream && vec;  // a candidate of lower/streaming.h that this printer vectorises
  size_t opened = 0;
  for (size_t d = first; d < rank; ++d) {
    if (vec && d + 1 == rank) break;
    w.open("for " + L.var_name(static_cast<int>(d)) + " in range(" + L.extent(st.out, d, 0) + "):");
    ++opened;
  }
  const std::optional<RowSplit> split = vec ? row_split(L) : std::nullopt;
  if (stream) {
    w.open("if sb_stream:");
    emit_stream_lines(L, "0", L.extent(st.out, rank - 1, kMAdd + 1), prefetch, w, next_rows);
    w.dedent();
    w.open("else:");
    ++opened;
  }
  if (vec) {
    const DType t = value_type(*st.rhs);
    L.needs().vectorize = true;
    L.needs().widths.insert(t);
    // The row split by its reads' exact reach (row_split). Edges of exactly the reach, not of
    // whole vectors: with a vector at each end, conv2d's rows of 28 f32 took 0.92x the unsplit
    // form's time against 0.45-0.59x, depthwise_conv2d 0.54-0.76x against 0.41-0.58x (side by
    // side, 4 runs of 5 repetitions, 2-core VM; results/vm/mojo-row-edges-20261207).
    for (const bool in : split ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
      w.open("def sb_vec" + std::string(in ? "_in" : "") + "[sb_w: Int](" + L.var_name(v) +
             ": Int) {imm}:");
      // In cache (the else of a streamed row) the group does not stream: no next-row prefetch.
      if (!stream) emit_next_row_prefetches(L, next_rows, L.var_name(v), "sb_w", false, w);
      L.set_assume_inside(in);
      L.assign_vector(w, Mode{v, "sb_w"});
      L.set_assume_inside(false);
      w.dedent();
      w.line("");
    }
    const std::string n = L.extent(st.out, rank - 1, 0);
    const int group = window_group(st, simd_choice(L.spec(), st));
    if (!split) {
      emit_vectorize(t, n, "sb_vec", w, group);
    } else {
      if (!split->uniform.empty()) emit_if_lines(split->uniform, w);
      if (!split->along) {
        emit_vectorize(t, n, "sb_vec_in", w, group);
      } else {
        const std::string e = std::to_string(split->edge);
        w.line("# Its first and last " +
               (split->edge == 1 ? std::string("output") : e + " outputs") +
               " apart: only they can reach past an edge.");
        w.line("var sb_p = min(" + e + ", " + n + ")");
        w.line("var sb_t = max(" + L.extent(st.out, rank - 1, kMAdd + 1) + " - " + e + ", sb_p)");
        // The edges, a few outputs each, one at a time.
        w.open("for sb_v in range(sb_p):");
        w.line("sb_vec[1](sb_v)");
        w.dedent();
        emit_vectorize_range(t, "sb_p", "sb_t", "sb_vec_in", w);
        w.open("for sb_v in range(sb_t, " + n + "):");
        w.line("sb_vec[1](sb_v)");
        w.dedent();
      }
      if (!split->uniform.empty()) {
        w.dedent();
        w.open("else:");
        emit_vectorize(t, n, "sb_vec", w, group);
        w.dedent();
      }
    }
  } else {
    L.assign(w);
  }
  for (size_t d = 0; d < opened; ++d) w.dedent();
  return stream || next;
}

// Ends a chunk that may have stored non-temporally: orders those stores before what follows.
void emit_stream_fence(PyWriter& w) {
  w.open("if sb_stream:");
  w.line("fence()");
  w.dedent();
}

// The loop iterations below which a statement's chunks run as one, on the calling thread. Mojo's
// parallelize costs about 12-16 us a call on the 2-core development VM (cross_entropy's 128 rows:
// 17 us through parallelize, 0.3 us called directly), where OpenMP's team costs 1-2 us. Side by
// side (3 repetitions, 2-3 runs each), gelu took 6 us on one thread against 14-16 us in parallel
// at 16384 elements, 28-32 against 23-24 us at 65536; relu 1-2 against 17-20 us at 16384.
constexpr int64_t kMojoSerialIterations = 32768;

// The start of a loop over the rows [0, extent) in parallel chunks: opens the chunk closure and
// binds sb_lo and sb_hi, the chunk's rows. close_chunks ends it. A statement of `iterations`
// loop iterations (MojoLowering::iterations; texts) has one chunk per worker, or one under
// kMojoSerialIterations (sb_serial_iterations, which -D SB_SERIAL_ITERATIONS=n overrides), which
// close_chunks calls on this thread.
void open_chunks(const std::string& extent, const std::string& iterations, FileNeeds& needs,
                 PyWriter& w) {
  needs.chunks = true;
  w.line("var sb_n = " + extent);
  w.line("var sb_chunks = 1 if " + iterations +
         " < sb_serial_iterations else min(sb_n, parallelism_level())");
  w.line("");
  w.open("def sb_chunk(sb_c: Int) {imm}:");
  w.line("var sb_lo = sb_c * sb_n // sb_chunks");
  w.line("var sb_hi = (sb_c + 1) * sb_n // sb_chunks");
}

void close_chunks(PyWriter& w) {
  w.dedent();
  w.line("");
  print_parallel_call("sb_chunk", "sb_chunks", w);
}

// The tile of emit_tiled_chunks whose read moves in blocks (lower/tile_transposes.h), as the cpu
// backend's emit_transposed_blocks prints it: for each kBlockOuter rows of `dim` from the tile's
// first (sb_b), each kBlockInner elements of the innermost index from the tile's first (sb_e),
// the read's block transposed in registers into sb_tb (sb_transpose_8x16, the chunk's buffer),
// then each row's piece computed from it (the read, and any read of the same element, printed as
// an element of sb_tb); the piece of each row left at the tile's end, then the rows after the
// last whole block, read the tensor itself. `td`, `ti`: the tile's extents; `hd`, `hi`: the ends
// of the two dimensions' ranges.
void emit_transposed_blocks(MojoLowering& L, int dim, const TileChoice& c, const std::string& td,
                            const std::string& ti, const std::string& hd, const std::string& hi,
                            PyWriter& w) {
  const Statement& st = L.stmt();
  const int inner = static_cast<int>(st.rank()) - 1;
  const Expr& read = tiled_read(L.spec(), st);
  const std::string& vd = L.var_name(dim);
  const std::string& vi = L.var_name(inner);
  const std::string D = std::to_string(dim), I = std::to_string(inner);
  const std::string outer = std::to_string(kBlockOuter), in = std::to_string(kBlockInner);
  L.needs().helpers.insert(MHelper::Transpose8x16);
  w.line("var sb_te" + D + " = min(sb_t" + D + " + " + td + ", " + hd + ")");
  w.line("var sb_te" + I + " = min(sb_t" + I + " + " + ti + ", " + hi + ")");
  w.line("# " + to_string(read, L.spec(), &st) + " in blocks of " + in + " " + vi + " by " + outer +
         " " + vd + ", each transposed in registers.");
  w.line("var sb_b = sb_t" + D);
  w.open("while sb_b + " + outer + " <= sb_te" + D + ":");
  w.line("var sb_e = sb_t" + I);
  w.open("while sb_e + " + in + " <= sb_te" + I + ":");
  w.line("var " + vd + " = sb_b");
  w.line("var " + vi + " = sb_e");
  // Elements between rows of the block: the read's extents after its subscript block_axis.
  std::string stride;
  for (size_t a = static_cast<size_t>(c.block_axis) + 1; a < read.args.size(); ++a)
    stride += (stride.empty() ? "" : " * ") + L.extent(read.ref, a, kMMul + 1);
  w.line("sb_transpose_8x16[" + std::string(mojo_dtype(L.spec().tensors[read.ref].type)) + "](" +
         L.tensor_name(read.ref) + ".unsafe_offset(" + L.flat_of_read(read, w) + "), " + stride +
         ", sb_tb)");
  for (const Expr* r : block_reads(L.spec(), st))
    L.set_override(r, "sb_tb[unsafe_offset=sb_p * " + in + " + sb_q]");
  w.open("for sb_p in range(" + outer + "):");
  w.line("var " + vd + " = sb_b + sb_p");
  w.open("for sb_q in range(" + in + "):");
  w.line("var " + vi + " = sb_e + sb_q");
  L.assign(w);
  w.dedent();
  w.dedent();
  L.clear_overrides();
  w.line("sb_e += " + in);
  w.dedent();
  w.open("for " + vd + " in range(sb_b, sb_b + " + outer + "):");
  w.open("for " + vi + " in range(sb_e, sb_te" + I + "):");
  L.assign(w);
  w.dedent();
  w.dedent();
  w.line("sb_b += " + outer);
  w.dedent();
  w.open("for " + vd + " in range(sb_b, sb_te" + D + "):");
  w.open("for " + vi + " in range(sb_t" + I + ", sb_te" + I + "):");
  L.assign(w);
  w.dedent();
  w.dedent();
}

// An elementwise statement of L that reads across rows (lower/tile_transposes.h: y[j, i] =
// x[i, j]) and is not vectorised: the chunks of output dimension 0, and in each, tiles of
// `tiles.outer` elements of output dimension `dim` by `tiles.inner` of the innermost, their other
// dimensions as plain loops outside them, so that the lines of the read's tensor that a tile
// touches stay in the first-level cache while it uses them. The order of the cpu omp_simd form's
// tiles; a tile whose read moves in blocks as emit_transposed_blocks prints it.
void emit_tiled_chunks(MojoLowering& L, int dim, const Tiles& tiles, PyWriter& w) {
  const Statement& st = L.stmt();
  const int rank = static_cast<int>(st.rank());
  const int inner = rank - 1;
  SB_ASSERT(dim >= 0 && dim < inner, "a tiled dimension that is not an outer output dimension");
  auto t = [&](int d) { return std::to_string(d == dim ? tiles.outer : tiles.inner); };
  open_chunks(L.extent(st.out, 0, 0), L.iterations(), L.needs(), w);
  if (const int r = tile_choice(L.spec(), st).read; tile_choice(L.spec(), st).block_axis >= 0) {
    const Tensor& x = L.spec().tensors[reads_of(*st.rhs).at(r)->ref];
    w.line("var sb_tb = stack_allocation[" + std::to_string(kBlockInner * kBlockOuter) + ", " +
           mojo_type(x.type) + ", alignment=64]()");
  }
  int opened = 0;
  // The tile loops' ranges: dimension 0's within the chunk.
  auto lo = [&](int d) { return d == 0 ? std::string("sb_lo") : std::string("0"); };
  auto hi = [&](int d) { return d == 0 ? std::string("sb_hi") : L.extent(st.out, d, 0); };
  // The outer dimensions in order, `dim` as its tile loop, then the innermost one's tile loop.
  for (int d = 0; d <= inner; ++d) {
    if (d == dim || d == inner)
      w.open("for sb_t" + std::to_string(d) + " in range(" + lo(d) + ", " + hi(d) + ", " + t(d) +
             "):");
    else
      w.open("for " + L.var_name(d) + " in range(" + lo(d) + ", " + hi(d) + "):");
    ++opened;
  }
  const TileChoice& c = tile_choice(L.spec(), st);
  if (c.block_axis < 0) {
    for (int d : {dim, inner}) {
      const std::string b = "sb_t" + std::to_string(d);
      w.open("for " + L.var_name(d) + " in range(" + b + ", min(" + b + " + " + t(d) + ", " +
             hi(d) + ")):");
      ++opened;
    }
    L.assign(w);
  } else {
    emit_transposed_blocks(L, dim, c, t(dim), t(inner), hi(dim), hi(inner), w);
  }
  for (int d = 0; d < opened; ++d) w.dedent();
  close_chunks(w);
}

// Statement L under vectorize_parallel. Returns whether it streams its output (then the caller
// binds sb_stream first).
bool emit_vectorize_parallel(MojoLowering& L, PyWriter& w, const Tiles& tiles) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  L.needs().parallel = true;
  if (rank == 0) {
    // The parallelize pass's reductions (lower/parallelize.h) are split over the threads; the
    // others, and nested ones, are strip-mined SIMD loops (lower/vectorize.h).
    L.strip = true;
    const ParallelChoice& par = parallel_choice(L.spec(), st);
    for (const Expr* r : top_reduces_of(*st.rhs))
      if (par.loops == ParallelLoops::Reductions && par.apart.count(r->ref))
        L.set_override(r, L.parallel_reduce(*r, w));
    L.assign(w);
    return false;
  }
  SB_ASSERT(parallel_choice(L.spec(), st).loops == ParallelLoops::Outputs,
            "a statement of rank > 0 whose parallel loop is not its outermost output loop");
  if (const Expr* red = rank == 1 ? running_scan(L.spec(), st, /*rows=*/false) : nullptr) {
    // A rank-1 running scan: one sequential walk, or two parallel passes when it is long
    // (lower/running_scans.h: kScanSplitMin).
    w.open("if " + L.extent(st.out, 0, kMCmp + 1) + " >= " + std::to_string(kScanSplitMin) + ":");
    const bool stream = L.scan_split(*red, w);
    w.dedent();
    w.open("else:");
    emit_running_scan(L, *red, 0, w);
    w.dedent();
    return stream;  // the caller binds sb_stream from the statement's tensors
  }
  // The tile_transposes pass's tiles (lower/tile_transposes.h), for a read across rows.
  if (const int dim = tile_choice(L.spec(), st).dim;
      dim >= 0 && !vectorises_outputs(L, /*rows=*/false)) {
    emit_tiled_chunks(L, dim, tiles, w);
    return false;
  }
  // The parallelize pass's leading output loops, collapsed into one range of their product.
  const size_t collapse = static_cast<size_t>(parallel_choice(L.spec(), st).collapse);
  SB_ASSERT(collapse == 1 || collapse + 1 < rank, "a collapse that reaches the innermost loop");
  std::vector<std::string> extents;
  for (size_t d = 0; d < collapse; ++d)
    extents.push_back(L.extent(st.out, static_cast<int>(d), collapse > 1 ? kMMul + 1 : 0));
  auto product = [&](size_t from) {
    std::string p;
    for (size_t d = from; d < collapse; ++d) p += (p.empty() ? "" : " * ") + extents[d];
    return p;
  };
  open_chunks(product(0), L.iterations(), L.needs(), w);
  const bool vec_rows = rank == 1 && vectorises_outputs(L, /*rows=*/false);
  bool stream = false;
  if (vec_rows) {
    // Rank 1: the lanes run over the chunk's rows.
    const DType t = value_type(*st.rhs);
    L.strip = false;
    stream = stream_choice(L.spec(), st).whole;  // the streaming pass's (lower/streaming.h)
    if (stream) {
      w.open("if sb_stream:");
      emit_stream_lines(L, "sb_lo", "sb_hi", stream_choice(L.spec(), st).prefetch, w);
      w.line("fence()");
      w.dedent();
      w.open("else:");
    }
    L.needs().vectorize = true;
    L.needs().widths.insert(t);
    w.open("def sb_vec[sb_w: Int](sb_k: Int) {imm}:");
    w.line("var " + L.var_name(0) + " = sb_lo + sb_k");
    L.assign_vector(w, Mode{0, "sb_w"});
    w.dedent();
    w.line("");
    emit_vectorize(t, "sb_hi - sb_lo", "sb_vec", w, window_group(st, simd_choice(L.spec(), st)));
    if (stream) w.dedent();
  } else if (collapse > 1) {
    // One flat index over the collapsed loops; each of their indices recovered from it.
    w.open("for sb_f in range(sb_lo, sb_hi):");
    for (size_t d = 0; d < collapse; ++d) {
      std::string v = "sb_f";
      if (d + 1 < collapse)
        v += " // " + (d + 2 < collapse ? "(" + product(d + 1) + ")" : product(d + 1));
      if (d > 0) v = (d + 1 < collapse ? "(" + v + ")" : v) + " % " + extents[d];
      w.line("var " + L.var_name(static_cast<int>(d)) + " = " + v);
    }
    stream =
        emit_row_body(L, w, stream_choice(L.spec(), st).whole, stream_choice(L.spec(), st).prefetch,
                      stream_choice(L.spec(), st).scan, {}, collapse);
    w.dedent();
    if (stream) emit_stream_fence(w);
  } else {
    w.open("for " + L.var_name(0) + " in range(sb_lo, sb_hi):");
    stream = emit_row_body(L, w, stream_choice(L.spec(), st).whole,
                           stream_choice(L.spec(), st).prefetch, stream_choice(L.spec(), st).scan);
    w.dedent();
    if (stream) emit_stream_fence(w);
  }
  close_chunks(w);
  return stream;
}

// Statements `Ls` (one row group, codegen/lower/row_fusion.h) as one loop over rows in parallel
// chunks: each chunk computes, row by row, every statement of the group in order, each in its own
// closure taking the row. The group's row-local tensors live as one row per chunk, in buffers the
// chunk allocates.
bool emit_vectorize_parallel_rows(std::vector<MojoLowering>& Ls, const RowGroup& g,
                                  const Spec& spec, PyWriter& w) {
  MojoLowering& first = Ls.front();
  first.needs().parallel = true;
  std::string iterations;
  for (MojoLowering& L : Ls)
    iterations += (iterations.empty() ? "" : " + ") + L.iterations(kMAdd + 1);
  open_chunks(first.extent(first.stmt().out, 0, 0), iterations, first.needs(), w);
  for (int t : g.row_local) {
    const Tensor& tn = spec.tensors[t];
    std::string count;
    for (size_t d = 1; d < tn.shape.size(); ++d)
      count += (count.empty() ? "" : " * ") + first.extent(t, d, kMMul + 1);
    const std::string row = "sb_row_" + tn.name;
    // A row-local temp holds values, in the type they compute in (f32 for f16 and bf16).
    w.line("var sb_buf_" + tn.name + " = alloc(Layout[" + mojo_type(compute_type(tn.type)) +
           "](count=" + (count.empty() ? "1" : count) + "))");
    w.line("var " + row + " = sb_buf_" + tn.name + ".unsafe_ptr()");
    for (MojoLowering& L : Ls) L.hold_row(t, row);
  }
  if (!g.row_local.empty()) first.needs().dealloc = true;
  bool stream = false;
  for (size_t i = 0; i < Ls.size(); ++i) {
    MojoLowering& L = Ls[i];
    w.line("");
    w.line("# " + source_text(L.stmt(), spec));
    w.open("def sb_row" + std::to_string(i) + "(" + L.var_name(0) + ": Int) {imm}:");
    // Outputs in memory stream when rows are longer than one element, as in the cpu backend.
    const StreamChoice& c = spec.schedule.streams[g.first + i];
    stream = emit_row_body(L, w, c.rows, c.prefetch_rows, false, c.next_rows) || stream;
    w.dedent();
  }
  w.line("");
  w.open("for sb_row in range(sb_lo, sb_hi):");
  for (size_t i = 0; i < Ls.size(); ++i) w.line("sb_row" + std::to_string(i) + "(sb_row)");
  w.dedent();
  if (stream) emit_stream_fence(w);
  for (int t : g.row_local) w.line("dealloc(sb_buf_" + spec.tensors[t].name + "^)");
  close_chunks(w);
  return stream;
}

// A contraction statement (match_contraction) of strategy blocked_matmul: one call of the
// blocked GEMM (lower/blocked_gemm.h) with the operands' strides, then the rest of the statement,
// `E` (epilogue_statement, patterns.h), elementwise under vectorize_parallel. Returns whether that
// streams its output.
bool emit_gemm_call(MojoLowering& L, MojoLowering* E, const Contraction& m, int64_t mc, int64_t kc,
                    int64_t nc, PyWriter& w) {
  const Statement& st = L.stmt();
  const GemmLayout o = gemm_layout(st, m);
  const std::string x = L.tensor_name(m.x), y = L.tensor_name(m.y), c = L.tensor_name(st.out);
  const int cr = m.out_row_dim();
  const std::string xw = L.extent(m.x, m.x_row_dim() + 1, kMMul);
  const std::string yw = L.extent(m.y, m.y_row_dim() + 1, kMMul);
  auto step = [](GemmStep s, const std::string& row) { return s == GemmStep::Row ? row : "1"; };
  const std::string xs_i = step(o.x_i, xw), xs_k = step(o.x_k, xw);
  const std::string ys_k = step(o.y_k, yw), ys_j = step(o.y_j, yw);
  std::string kext = L.scalar(*o.k_end, w, 0), xp = x, yp = y;
  if (o.k0) {
    w.line("var sb_k0 = " + L.scalar(*o.k0, w, 0) + "  # first k of the sum");
    kext = L.scalar(*o.k_end, w, kMAdd) + " - sb_k0";
    xp = x + ".unsafe_offset(sb_k0" + (o.x_k == GemmStep::Row ? " * " + xs_k : "") + ")";
    yp = y + ".unsafe_offset(sb_k0" + (o.y_k == GemmStep::Row ? " * " + ys_k : "") + ")";
  }
  L.needs().gemm[m.type].insert({m.x_type, m.y_type});
  L.needs().parallel = true;
  L.needs().dealloc = true;
  L.needs().widths.insert(m.type);
  const std::string sfx = dtype_name(m.type);
  // f16 and bf16 operands are widened to f32 as the GEMM packs them (lower/blocked_gemm.h).
  const std::string gemm = blocked_gemm_name(m.type, m.x_type, m.y_type);
  w.line("# " + gemm_comment(c, x, m.x_trans, y, m.y_trans, mc, kc, nc));
  // sb_gemm_<t> returns non-zero where its buffers cannot be allocated; the Mojo backend does not
  // report that (alloc gives no null allocation to check).
  if (!m.batched) {
    const std::vector<std::string> args =
        gemm_args({L.extent(st.out, 0, 0), L.extent(st.out, 1, 0), kext, xp, xs_i, xs_k, yp, ys_k,
                   ys_j, c, L.extent(st.out, 1, 0)},
                  mc, kc, nc);
    w.line("_ = " + wrap_call(gemm, args, "", w.columns() + 4));
  } else {
    // Product sb_b's operands and output: a step of the batch's stride, none for an operand
    // read without the batch index (every product shares it). (sb_gm, sb_gn, sb_gk: the names
    // sb_m, sb_n and sb_k are the epilogue's.)
    auto at = [&](const std::string& p, int t, bool batched) {
      if (!batched) return p;
      return p + ".unsafe_offset(sb_b * " + L.extent(t, 1, kMMul) + " * " +
             L.extent(t, 2, kMMul + 1) + ")";
    };
    w.line("var sb_gm = " + L.extent(st.out, cr, 0));
    w.line("var sb_gn = " + L.extent(st.out, cr + 1, 0));
    w.line("var sb_gk = " + kext);
    const std::vector<std::string> args = gemm_args(
        {"sb_gm", "sb_gn", "sb_gk", at(xp, m.x, m.x_batched), xs_i, xs_k, at(yp, m.y, m.y_batched),
         ys_k, ys_j, c + ".unsafe_offset(sb_b * sb_gm * sb_gn)", "sb_gn"},
        mc, kc, nc);
    w.line("# One GEMM per product of the batch. Products too small to use every thread (the");
    w.line("# GEMM runs them on one) run side by side instead, one per thread.");
    w.open("def sb_product(sb_b: Int) {imm}:");
    w.line("_ = " + wrap_call(gemm, args, "", w.columns() + 4));
    w.dedent();
    w.line("");
    w.open("if Float64(sb_gm) * Float64(sb_gn) * Float64(sb_gk) < Float64(sb_gemm_min_parallel_" +
           sfx + "):");
    w.line("parallelize(sb_product, " + L.extent(st.out, 0, 0) + ")");
    w.dedent();
    w.open("else:");
    w.open("for sb_b in range(" + L.extent(st.out, 0, 0) + "):");
    w.line("sb_product(sb_b)");
    w.dedent();
    w.dedent();
  }
  if (!E) return false;
  w.line("# The rest of the statement, elementwise, with the sum read back from " + c + ".");
  return emit_vectorize_parallel(*E, w, Tiles{});
}

// A gathered GEMM (match_gathered_gemm, lower/patterns.h: a convolution) of strategy im2col: the
// gathered term at every (k..., N...) into sb_col, a row-major K x N buffer, by loops shared out
// over the first reduction variable, then one call of the blocked GEMM (lower/blocked_gemm.h) per
// batch element of the weights (M x K) by those columns into the element's M x N outputs (the cpu
// printer's emit_im2col).
void emit_im2col_call(MojoLowering& L, const GatheredGemm& g, int64_t mc, int64_t kc, int64_t nc,
                      PyWriter& w) {
  const Statement& st = L.stmt();
  auto extent = [&](int v, int prec) {
    const auto [t, d] = gathered_extent(L.spec(), st, g, v);
    return L.extent(t, d, prec);
  };
  const GatheredIndex ix{[&](int v) { return extent(v, kMMul + 1); },
                         [&](int v) { return L.var_name(v); }};
  const std::string y = L.tensor_name(st.out), wt = L.tensor_name(g.w);
  const std::string ty = mojo_type(g.type);
  L.needs().gemm[g.type].insert({g.type, g.type});
  L.needs().parallel = true;
  L.needs().dealloc = true;
  L.needs().widths.insert(g.type);
  w.line("var sb_gm = " + ix.product(g.m));
  w.line("var sb_gn = " + ix.product(g.n));
  w.line("var sb_gk = " + ix.product(g.k));
  w.line("var sb_gb = " + ix.product(g.batch));
  w.open("if sb_gk <= 0:  # an empty sum");
  w.open("for sb_i in range(sb_gb * sb_gm * sb_gn):");
  w.line(y + "[unsafe_offset=sb_i] = " + ty + "(0)");
  w.dedent();
  w.dedent();
  w.open("elif sb_gm > 0 and sb_gn > 0 and sb_gb > 0:");
  const std::string alloc_col = "var sb_colbuf = alloc(Layout[" + ty + "](count=sb_gk * sb_gn))";
  const std::string col_ptr =
      "var sb_col = sb_colbuf.unsafe_ptr().unsafe_origin_cast[MutUntrackedOrigin]()";
  // The gather into sb_col, then the product: shared out when `parallel`, else on this thread.
  std::string out =
      g.batch.empty() ? y : y + ".unsafe_offset(" + ix.flat(g.batch) + " * sb_gm * sb_gn)";
  std::string weights = wt, rows = "sb_gm";
  if (g.group) {
    out = "(" + out + ").unsafe_offset(sb_g * sb_q * sb_gn)";
    weights = wt + ".unsafe_offset(sb_g * sb_q * sb_gk)";
    rows = "sb_rows";
  }
  auto gather_and_multiply = [&](bool parallel) {
    w.line(
        "# The columns: sb_col[k][p] for k over the reduction indices, p over the output's last.");
    std::vector<int> loops(g.k.begin() + (parallel ? 1 : 0), g.k.end());
    loops.insert(loops.end(), g.n.begin(), g.n.end());
    if (parallel) w.open("def sb_gather(" + L.var_name(g.k.front()) + ": Int) {imm}:");
    // The innermost output index, contiguous in sb_col, in SIMD vectors where the gathered term's
    // reads allow (the cpu printer's `omp simd` loop): with the scalar loop, conv2d's im2col at
    // N=4, 64 x 64 channels of 28 x 28 took 2.6x the C++ time.
    const int inner = g.n.empty() ? -1 : g.n.back();
    const bool vec = inner >= 0 && !loops.empty() && loops.back() == inner &&
                     value_type(*g.gathered) == g.type && g.type != DType::Bool &&
                     L.vec_ok(*g.gathered, inner);
    const size_t opened = loops.size() - (vec ? 1 : 0);
    for (size_t i = 0; i < opened; ++i)
      w.open("for " + L.var_name(loops[i]) + " in range(" + extent(loops[i], 0) + "):");
    if (g.group) L.set_override(g.group, "sb_g");
    const std::string at = ix.flat(g.k) + " * sb_gn + " + ix.flat(g.n);
    if (vec) {
      L.needs().vectorize = true;
      w.open("def sb_column[sb_w: Int](" + L.var_name(inner) + ": Int) {imm}:");
      const std::string value = L.vector_value(*g.gathered, w, inner, "sb_w");
      w.line("sb_col.unsafe_store[width=sb_w](" + at + ", " + value + ")");
      w.dedent();
      w.line("");
      emit_vectorize(g.type, extent(inner, 0), "sb_column", w);
    } else {
      const std::string value = L.scalar(*g.gathered, w, 0);
      w.line("sb_col[unsafe_offset=" + at + "] = " + value);
    }
    if (g.group) L.clear_overrides();
    for (size_t i = 0; i < opened; ++i) w.dedent();
    if (parallel) {
      w.dedent();
      w.line("");
      w.line("parallelize(sb_gather, " + extent(g.k.front(), 0) + ")");
    }
    w.line("# " + y + " = " + wt +
           " (M x K) * sb_col (K x N), row-major, blocked with mc = " + std::to_string(mc) +
           ", kc = " + std::to_string(kc) + ", nc = " + std::to_string(nc) + ".");
    if (g.group) w.line("# (group sb_g's rows only)");
    const std::vector<std::string> args = gemm_args(
        {rows, "sb_gn", "sb_gk", weights, "sb_gk", "1", "sb_col", "sb_gn", "1", out, "sb_gn"}, mc,
        kc, nc);
    w.line("_ = " +
           wrap_call(blocked_gemm_name(g.type, g.type, g.type), args, "", w.columns() + 4));
  };
  if (g.group) {
    // A grouped GEMM, as the cpu printer's: group sb_g's rows, its columns at m0 / q = sb_g.
    std::vector<int> inner(g.m.begin() + 1, g.m.end());
    const Expr& q = *g.group_size;
    const std::string qs =
        q.kind == ExprKind::IntLit ? std::to_string(q.ival) : L.size_name(q.ref);
    w.line("var sb_q = " + qs + (inner.empty() ? "" : " * " + ix.product(inner)) +
           "  # rows per group");
    w.line("var sb_groups = (sb_gm + sb_q - 1) // sb_q");
    w.line("# Groups too small to use every thread (the GEMM runs each on one) run side by side,");
    w.line("# each task gathering its group's columns into its own buffer.");
    w.open("if Float64(sb_q) * Float64(sb_gn) * Float64(sb_gk) < Float64(sb_gemm_min_parallel_" + std::string(
           dtype_name(g.type)) + "):");
    w.open("def sb_group_task(sb_t: Int) {imm}:");
    w.line("var sb_g = sb_t % sb_groups");
    w.line("var sb_rows = min(sb_q, sb_gm - sb_g * sb_q)");
    if (!g.batch.empty()) {
      w.line("var sb_tb = sb_t // sb_groups");
      for (size_t i = g.batch.size(); i-- > 0;) {
        const int v = g.batch[i];
        const std::string n = L.var_name(v);
        if (i == 0) {
          w.line("var " + n + " = sb_tb");
        } else {
          w.line("var " + n + " = sb_tb % " + extent(v, kMMul + 1));
          w.line("sb_tb = sb_tb // " + extent(v, kMMul + 1));
        }
      }
    }
    w.line(alloc_col);
    w.line(col_ptr);
    gather_and_multiply(/*parallel=*/false);
    w.line("dealloc(sb_colbuf^)");
    w.dedent();
    w.line("");
    w.line("parallelize(sb_group_task, sb_gb * sb_groups)");
    w.dedent();
    w.open("else:");
  }
  w.line(alloc_col);
  w.line(col_ptr);
  for (int v : g.batch) w.open("for " + L.var_name(v) + " in range(" + extent(v, 0) + "):");
  if (g.group) {
    w.open("for sb_g in range(sb_groups):");
    w.line("var sb_rows = min(sb_q, sb_gm - sb_g * sb_q)");
  }
  gather_and_multiply(/*parallel=*/true);
  if (g.group) w.dedent();
  for (size_t i = 0; i < g.batch.size(); ++i) w.dedent();
  w.line("dealloc(sb_colbuf^)");
  if (g.group) w.dedent();
  w.dedent();
}

// ---- The emitter ------------------------------------------------------------------------------

class MojoEmitter final : public Emitter {
 public:
  std::string backend() const override { return "mojo"; }
  std::string extension() const override { return "mojo"; }
  std::vector<StrategyInfo> strategies() const override { return mojo_strategies().infos(); }
  Status check_variant(const Spec& spec, const Variant& v) const override {
    return mojo_strategies().check_fit(spec, v);
  }
  const GemmTarget* gemm_target() const override { return &gemm_target_mojo(); }
  bool prints_host_bodies() const override { return true; }
  bool uses_blocked_gemm(const Variant& v) const override {
    return mojo_strategies().of(v).schedule.gemm == host::Gemm::Blocked;
  }
  // f16 and bf16 elements read with .cast to f32 and store with .cast back (rounding to nearest
  // even); row-local temps hold f32.
  bool takes_storage(DType) const override { return true; }
  bool spells(Fn fn) const override {
    return fn == Fn::Min || fn == Fn::Max || fn == Fn::Abs || fn == Fn::Select || fn == Fn::Pow ||
           fn == Fn::DivTrunc || fn == Fn::RemTrunc || mojo_math(fn);
  }

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

std::string pointer_type(const Spec& spec, int t, bool mut) {
  return std::string("Pointer[") + mojo_type(spec.tensors[t].type) + ", " +
         (mut ? "MutUntrackedOrigin" : "ImmUntrackedOrigin") + "]";
}

GeneratedFile MojoEmitter::print(const Spec& spec) const {
  FileNeeds needs;
  std::string kernels, launchers;
  const auto& variants = backend_variants(spec, backend());

  for (const Variant& v : variants) {
    const host::HostStrategy& strategy = mojo_strategies().of(v);
    const StrategyInfo* info = &strategy.info;
    const host::HostSchedule& sched = strategy.schedule;
    // The Mojo lowering has parallel chunks and SIMD loops together or neither.
    SB_ASSERT(sched.parallel == sched.simd,
              "mojo strategy with only one of parallel and simd: " + v.strategy);
    SB_ASSERT(sched.gemm != host::Gemm::Vendor, "mojo strategy with a vendor GEMM: " + v.strategy);
    const bool blocked = sched.gemm == host::Gemm::Blocked;
    const bool vp = sched.parallel;  // blocked: for the other statements

    kernels += "# Variant " + v.name + ": " + info->doc + ".\n\n";
    PyWriter calls(1);
    std::set<int> used_tensors, used_sizes;
    // The row_fusion pass's groups (lower/row_fusion.h), run by a strategy that fuses rows.
    const std::vector<RowGroup> no_groups;
    const std::vector<RowGroup>& groups = sched.fuse_rows ? spec.schedule.row_groups : no_groups;
    size_t next_group = 0;
    for (size_t k = 0; k < spec.stmts.size();) {
      // Statements [k, last]: one row group, or statement k alone.
      const RowGroup* g = next_group < groups.size() && groups[next_group].first == k
                              ? &groups[next_group++]
                              : nullptr;
      const size_t last = g ? g->last : k;
      Statement epilogue;  // the rest of a contraction's statement, if any
      std::vector<MojoLowering> Ls;
      Ls.reserve(last - k + 2);
      for (size_t j = k; j <= last; ++j) {
        Ls.emplace_back(spec, spec.stmts[j], &needs);
        Ls.back().vector_scans = vp;
      }
      const std::optional<Contraction> m =
          blocked ? match_contraction(spec, spec.stmts[k]) : std::nullopt;
      const std::optional<GatheredGemm> gathered =
          sched.im2col && !m && !g ? match_gathered_gemm(spec, spec.stmts[k]) : std::nullopt;
      PyWriter body(1);
      bool stream = false;
      if (gathered) {
        emit_im2col_call(Ls.front(), *gathered, param(v, *info, "mc"), param(v, *info, "kc"),
                         param(v, *info, "nc"), body);
      } else if (m) {
        if (m->epilogue) {
          epilogue = epilogue_statement(spec, spec.stmts[k], m->reduce);
          Ls.emplace_back(spec, epilogue, &needs);
        }
        stream = emit_gemm_call(Ls.front(), m->epilogue ? &Ls.back() : nullptr, *m,
                                param(v, *info, "mc"), param(v, *info, "kc"), param(v, *info, "nc"),
                                body);
      } else if (g)
        stream = emit_vectorize_parallel_rows(Ls, *g, spec, body);
      else if (vp)
        stream = emit_vectorize_parallel(Ls.front(), body, host::variant_tiles(v, *info));
      else
        emit_loops(Ls.front(), body);

      std::set<int> tensors, sizes, written;
      for (const MojoLowering& L : Ls) {
        tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
        written.insert(L.stmt().out);
      }
      PyWriter head(1);
      if (stream) {
        // The tensors whose bytes decide, from the streaming pass (lower/streaming.h): the row
        // group's; after a GEMM call, those of the elementwise rest that streams
        // (epilogue_streams, as the cpu printer counts them); else the statement's.
        const std::set<int>& decide = g   ? spec.schedule.group_tensors[next_group - 1]
                                      : m ? spec.schedule.epilogue_streams[k].tensors
                                          : spec.schedule.streams[k].tensors;
        std::string bytes;
        for (int t : decide)
          bytes += (bytes.empty() ? "" : " + ") +
                   std::to_string(dtype_bytes(spec.tensors[t].type)) + " * " +
                   Ls.front().element_count(t);
        head.line("# Stream the outputs when the tensors this touches outgrow the caches.");
        head.line("var sb_stream = " + bytes + " >= sb_stream_min_bytes");
      }
      for (const MojoLowering& L : Ls) sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
      std::vector<std::string> params, args;
      for (int t : tensors) {
        const std::string n = mojo_name(spec.tensors[t].name);
        params.push_back(n + ": " + pointer_type(spec, t, written.count(t) > 0));
        args.push_back(n);
      }
      for (int s : sizes) {
        const std::string n = mojo_name(spec.sizes[s].name);
        params.push_back(n + ": Int");
        args.push_back(n);
      }
      std::string fn = "sb_" + v.name + "_s" + std::to_string(k);
      if (g) {
        fn += "_" + std::to_string(last);
        std::string held;
        for (int t : g->row_local) held += (held.empty() ? "" : ", ") + spec.tensors[t].name;
        kernels += "# Statements " + std::to_string(k) + " to " + std::to_string(last) +
                   " in one parallel loop over rows" +
                   (held.empty() ? "" : " (" + held + " kept as one row per chunk)") + ":\n";
      }
      for (const MojoLowering& L : Ls) {
        const std::string text = source_text(L.stmt(), spec);
        kernels += "# " + text + "\n";
        calls.line("# " + text);
      }
      kernels += wrap_call("def " + fn, params, ":", 0) + "\n";
      kernels += head.str() + body.str() + "\n\n";
      calls.line(wrap_call(fn, args, "", 4));
      used_tensors.insert(tensors.begin(), tensors.end());
      used_sizes.insert(sizes.begin(), sizes.end());
      k = last + 1;
    }

    launchers += "# Variant " + v.name + " (strategy " + v.strategy + ").\n";
    launchers += "def " + variant_fn(v) +
                 "(sb_a: Pointer[SbArgs, ImmUntrackedOrigin]) abi(\"C\") -> Int32:\n";
    if (vp) launchers += "    initialize_runtime()\n";
    for (int t : used_tensors) {
      launchers += "    var " + mojo_name(spec.tensors[t].name) +
                   " = sb_a[].tensors[unsafe_offset=" + std::to_string(t) + "].unsafe_bitcast[" +
                   mojo_type(spec.tensors[t].type) + "]()\n";
    }
    for (int s : used_sizes) {
      launchers += "    var " + mojo_name(spec.sizes[s].name) +
                   " = Int(sb_a[].sizes[unsafe_offset=" + std::to_string(s) + "])\n";
    }
    launchers += "\n" + calls.str() + "    return 0\n\n\n";
  }

  // Imports.
  std::string imports;
  if (needs.vectorize) imports += "from std.algorithm.functional import vectorize\n";
  if (needs.stream) imports += "from std.atomic import fence\n";
  imports += std::string("from std.ffi import CStringSpan") +
             (needs.external_call ? ", external_call" : "") + "\n";
  if (!needs.math.empty()) {
    std::string names;
    for (const auto& n : needs.math) names += (names.empty() ? "" : ", ") + n;
    imports += "from std.math import " + names + "\n";
  }
  imports += std::string("from std.memory import Layout, alloc") +
             (needs.bitcast ? ", bitcast" : "") + (needs.dealloc ? ", dealloc" : "") +
             (needs.helpers.count(MHelper::Transpose8x16) ? ", stack_allocation" : "") + "\n";
  if (needs.parallel) imports += "from std.runtime import initialize_runtime, parallelism_level\n";
  if (!needs.widths.empty()) imports += "from std.sys import simd_width_of\n";
  if (needs.stream || needs.chunks) imports += "from std.sys.defines import get_defined_int\n";
  if (needs.prefetch) imports += "from std.sys.intrinsics import PrefetchOptions, prefetch\n";
  if (needs.parallel) imports += "\nfrom max.algorithm import parallelize\n";

  std::string out = hash_comments(file_header(spec, *this));
  out +=
      "#\n# Built by the harness's mojo runtime (harness/run/runtime_mojo.cpp) into a shared "
      "library "
      "that\n# exports specbench_module(), the C ABI of harness/abi/specbench_abi.h.\n\n";
  out += imports + "\n";
  if (needs.stream) {
    out +=
        "# Elementwise outputs stream (non-temporal stores) when the tensors they touch total at "
        "least\n# this many bytes, 1.5x the last-level cache, as in the cpu backend; "
        "-D SB_STREAM_MIN_BYTES=n\n# overrides it.\n"
        "comptime sb_stream_min_bytes = get_defined_int[\"SB_STREAM_MIN_BYTES\", " +
        std::to_string(kStreamMinBytes) + "]()\n\n";
  }
  if (needs.chunks) {
    out += "# Statements of fewer loop iterations than this run on the calling thread: a parallelize\n"
           "# costs more than their work; -D SB_SERIAL_ITERATIONS=n overrides it.\n"
           "comptime sb_serial_iterations = get_defined_int[\"SB_SERIAL_ITERATIONS\", " +
           std::to_string(kMojoSerialIterations) + "]()\n\n";
  }
  if (!needs.widths.empty()) {
    out += "# Native SIMD widths of this machine.\n";
    for (DType t : needs.widths)
      out += "comptime " + width_const(t) + " = simd_width_of[" + mojo_dtype(t) + "]()\n";
    out += "\n";
  }
  out += "\n" + mojo_banner("The C ABI (harness/abi/specbench_abi.h)");
  out +=
      "@fieldwise_init\n"
      "struct SbArgs(TrivialRegisterPassable):\n"
      "    var tensors: Pointer[Pointer[NoneType, MutUntrackedOrigin], ImmUntrackedOrigin]\n"
      "    var sizes: Pointer[Int64, ImmUntrackedOrigin]\n"
      "    var stream: Pointer[NoneType, MutUntrackedOrigin]\n"
      "\n\n"
      "comptime SbVariantFn = def(Pointer[SbArgs, ImmUntrackedOrigin]) abi(\"C\") thin -> Int32\n"
      "\n\n"
      "@fieldwise_init\n"
      "struct SbVariant(TrivialRegisterPassable):\n"
      "    var name: CStringSpan[ImmStaticOrigin]\n"
      "    var function: SbVariantFn\n"
      "\n\n"
      "@fieldwise_init\n"
      "struct SbModule(TrivialRegisterPassable):\n"
      "    var abi_version: Int32\n"
      "    var spec: CStringSpan[ImmStaticOrigin]\n"
      "    var backend: CStringSpan[ImmStaticOrigin]\n"
      "    var num_tensors: Int32\n"
      "    var num_sizes: Int32\n"
      "    var num_variants: Int32\n"
      "    var variants: Pointer[SbVariant, ImmUntrackedOrigin]\n"
      "\n\n";
  if (!needs.helpers.empty() || !needs.scans.empty()) {
    out += mojo_banner("Helpers");
    for (MHelper h : needs.helpers) out += helper_text(h) + "\n\n";
    for (const auto& [scan, id] : needs.scans)
      out += vector_scan_text(scan.first, scan.second, id) + "\n\n";
  }
  if (!needs.gemm.empty()) {
    out += mojo_banner("Blocked GEMM: packing, register-blocked micro-kernel, cache blocking");
    std::vector<loops::Module> gemms;  // written once as loop IR (lower/blocked_gemm.h)
    for (const auto& [t, operands] : needs.gemm)
      gemms.push_back(blocked_gemm(t, gemm_target_mojo(), operands));
    out += print_mojo_loops(gemms);
  }
  out += mojo_banner("Kernels: one function per variant and statement") + kernels;
  out += mojo_banner("Launchers: one function per variant, running its statements in order") +
         launchers;

  // Dispatch.
  std::string d = mojo_banner("Dispatch");
  d += "@export(\"specbench_module\")\n";
  d += "def specbench_module() abi(\"C\") -> Pointer[SbModule, ImmUntrackedOrigin]:\n";
  d +=
      "    # Mojo has no global variables and a global_constant cannot hold pointers, so the table "
      "is\n"
      "    # built in memory that is never freed; the harness calls this once per module load.\n";
  d += "    var variants = alloc(Layout[SbVariant](count=" +
       std::to_string(std::max<size_t>(variants.size(), 1)) + ")).unsafe_leak()\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    d += "    variants.unsafe_offset(" + std::to_string(i) + ").unsafe_write(SbVariant(\"" +
         variants[i].name + "\".as_c_string_span(), " + variant_fn(variants[i]) + "))\n";
  }
  d += "    var info = alloc(Layout[SbModule].single()).unsafe_leak()\n";
  d += "    info.unsafe_write(\n";
  d += "        SbModule(\n";
  d += "            abi_version=" + std::to_string(SPECBENCH_ABI_VERSION) + ",\n";
  d += "            spec=\"" + spec.name + "\".as_c_string_span(),\n";
  d += "            backend=\"" + backend() + "\".as_c_string_span(),\n";
  d += "            num_tensors=" + std::to_string(spec.tensors.size()) + ",\n";
  d += "            num_sizes=" + std::to_string(spec.sizes.size()) + ",\n";
  d += "            num_variants=" + std::to_string(variants.size()) + ",\n";
  d += "            variants=variants,\n";
  d += "        )\n";
  d += "    )\n";
  d += "    return info\n";
  out += d;
  return {spec.name + "/" + backend() + "/" + spec.name + "." + extension(), out};
}

}  // namespace

// ---- The lowering for other Mojo printers (mojo_lowering.h) ------------------------------------

struct MojoNeeds::Impl {
  FileNeeds needs;
};

MojoNeeds::MojoNeeds() : impl_(std::make_unique<Impl>()) {}
MojoNeeds::~MojoNeeds() = default;

std::map<std::string, std::set<std::string>> MojoNeeds::imports() const {
  const FileNeeds& n = impl_->needs;
  std::map<std::string, std::set<std::string>> out;
  if (!n.math.empty()) out["std.math"] = n.math;
  if (n.bitcast) out["std.memory"].insert("bitcast");
  return out;
}

std::string MojoNeeds::helpers() const {
  std::string out;
  for (MHelper h : impl_->needs.helpers) out += helper_text(h) + "\n\n";
  return out;
}

struct MojoStmt::Impl {
  MojoLowering L;
};

MojoStmt::MojoStmt(const Spec& spec, const Statement& st, MojoNeeds& needs)
    : impl_(std::make_unique<Impl>(Impl{MojoLowering(spec, st, &needs.impl().needs)})) {}
MojoStmt::~MojoStmt() = default;
MojoStmt::MojoStmt(MojoStmt&&) noexcept = default;

const Statement& MojoStmt::stmt() const { return impl_->L.stmt(); }
const std::string& MojoStmt::var_name(int ref) const { return impl_->L.var_name(ref); }
std::string MojoStmt::tensor_name(int t) { return impl_->L.tensor_name(t); }
std::string MojoStmt::size_name(int s) { return impl_->L.size_name(s); }
std::string MojoStmt::extent(int t, size_t d, int min_prec) {
  return impl_->L.extent(t, d, min_prec);
}
std::string MojoStmt::element_count(int t) { return impl_->L.element_count(t); }
std::string MojoStmt::expr(const Expr& e, PyWriter& w, int min_prec) {
  return impl_->L.expr(e, w, min_prec);
}
void MojoStmt::assign(PyWriter& w) { impl_->L.assign(w); }
void MojoStmt::set_override(const Expr* e, const std::string& text) {
  impl_->L.set_override(e, text);
}
void MojoStmt::clear_overrides() { impl_->L.clear_overrides(); }
std::string MojoStmt::identity(ReduceOp op, DType t) {
  return impl_->L.identity(op, t);
}
std::string MojoStmt::update(ReduceOp op, DType t, const std::string& acc,
                             const std::string& value) {
  return impl_->L.update(op, t, acc, value);
}
const std::set<int>& MojoStmt::used_tensors() const { return impl_->L.used_tensors(); }
const std::set<int>& MojoStmt::used_sizes() const { return impl_->L.used_sizes(); }

std::string mojo_ident(const std::string& name) { return mojo_name(name); }
const char* mojo_scalar_type(DType t) { return mojo_type(t); }
const char* mojo_dtype_name(DType t) { return mojo_dtype(t); }
std::string mojo_section(const std::string& title) { return mojo_banner(title); }
std::string mojo_hash_comments(const std::string& text) { return hash_comments(text); }

const Emitter& mojo_emitter() {
  static const MojoEmitter kEmitter;
  return kEmitter;
}

}  // namespace sb
