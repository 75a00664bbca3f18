// Pieces shared by the C-family emitters (cpu, cuda): literal formatting, C names, small helper
// functions for generated code, and the lowering of one statement's expressions to C text.
//
// Contract of the lowering (StmtLowering): given a checked Spec and one of its statements, it
// prints expressions as C expressions over these names:
//   - tensors: a pointer named after the tensor (typed, row-major, one element for a scalar);
//   - sizes: a `const int64_t` named after the size;
//   - index variables: an `int64_t` named by var_name(ref), already bound by the caller for the
//     statement's output indices; reduction variables are bound by the loops it emits itself.
// Reductions inside an expression, and reads of `zero`-boundary tensors, are hoisted: their code
// is written to a CodeWriter at its current indentation before the expression that uses them
// (expressions are pure, so evaluating a hoisted term unconditionally is safe). The lowering
// records which tensors, sizes and helpers the printed code uses, so that callers can declare
// exactly those (no unused parameters or locals). Names the generated code invents start with
// `sb_`, which spec names may not, so they never clash with a spec's names.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/emitter.h"
#include "ir/affine.h"
#include "ir/ir.h"
#include "lower/patterns.h"

namespace sb {

// ---- Text -------------------------------------------------------------------------------------

// Lines of generated code with two-space indentation. Every line ends with '\n'.
class CodeWriter {
 public:
  explicit CodeWriter(int indent = 0) : indent_(indent) {}
  // Writes `text` at the current indentation; an empty `text` writes an empty line.
  void line(const std::string& text);
  // Writes `text` (e.g. "for (...) {") and indents what follows by one level.
  void open(const std::string& text);
  // Closes one level and writes `text` (default "}").
  void close(const std::string& text = "}");
  // Closes one level, writes `text` (e.g. "} else {") and indents what follows again.
  void close_open(const std::string& text);
  // Appends already-formatted text verbatim (each of its lines must end with '\n').
  void raw(const std::string& text) { out_ += text; }
  int indent() const { return indent_; }
  const std::string& str() const { return out_; }

 private:
  int indent_;
  std::string out_;
};

// `head(arg0, arg1, ...)tail` on one line when it fits in 100 columns at `indent` spaces,
// otherwise with the arguments wrapped and aligned after the opening parenthesis. The result has
// no leading indentation and no trailing newline; continuation lines carry their own spaces.
std::string wrap_call(const std::string& head, const std::vector<std::string>& args,
                      const std::string& tail, int indent);

// ---- Literals and names -----------------------------------------------------------------------

// The C type of a value type: float, double, int32_t, int64_t (Index), bool.
const char* c_type(DType t);

// A floating-point literal of type F32 or F64 that reads back exactly: the shortest %g text
// that round-trips (at most 9 digits for f32, 17 for f64), always containing '.', with the 'f'
// suffix for f32, e.g. 0.1f, 1.0f, 2.5e-7f, 3.141592653589793. Infinities print as INFINITY and
// -INFINITY (the caller parenthesises the negative one where needed); NaN as NAN.
std::string float_literal(double v, DType t);

// An integer literal: plain decimal when it fits in 32 bits, else with an LL suffix;
// INT64_MIN prints as the macro.
std::string int_literal(int64_t v);

// The C identifier for a spec name: the name itself, unless it collides with an identifier the
// generated code relies on (a C library function or macro, a CUDA built-in), in which case
// "sb_u_<name>".
std::string c_name(const std::string& name);

// ---- Helpers in generated code ----------------------------------------------------------------

// Small static inline functions the generated code may call. They are emitted at the top of
// the file, only those used, in this enum's order.
enum class Helper {
  ClampIndex,  // sb_clamp(v, n): v clamped into [0, n - 1]
  AddI32,
  SubI32,
  MulI32,
  NegI32,  // i32 arithmetic that wraps (two's complement)
  AddI64,
  SubI64,
  MulI64,
  NegI64,  // i64 arithmetic that wraps
  MinI32,
  MaxI32,
  AbsI32,
  MinI64,
  MaxI64,
  AbsI64,
  MinF32,
  MaxF32,
  MinF64,
  MaxF64,  // min/max that propagate NaN
  F32ToI32,
  F64ToI32,
  F32ToI64,
  F64ToI64,  // truncation; NaN and out-of-range give the minimum
  kCount
};

// The helpers of type `t` (SB_ASSERT where it has none): min or max; abs (integers); the
// wrapping +, -, * (or unary - for no operator) of a wrapping integer type; the truncating cast
// of floating-point `from` to integer `to`.
Helper min_max_helper(DType t, bool max);
Helper abs_helper(DType t);
Helper wrapping_helper(DType t, std::optional<BinOp> op);
Helper float_to_int_helper(DType from, DType to);

// The identity of reduction `op` over type `t` as C spells it: 0 (0.0f), INT32_MIN, -INFINITY...
std::string reduce_identity(ReduceOp op, DType t);

class HelperSet;
// `acc = acc (op) value;` with the spec's arithmetic (wrapping signed integer sums and products,
// NaN-propagating floating-point max and min), the helpers it calls recorded in `h`; `value` a
// primary expression or one parenthesised for `+` and `*`.
std::string fold_line(ReduceOp op, DType t, const std::string& acc, const std::string& value,
                      HelperSet& h);

class HelperSet {
 public:
  void use(Helper h) { used_.insert(h); }
  // An OpenMP reduction identifier (`#pragma omp declare reduction`) combining with the min (or,
  // with `max`, the max) helper of floating-point type `t`, and the helper itself; returns the
  // identifier.
  std::string use_omp_reduction(DType t, bool max);
  // A scan of vector_scan_lanes(t) values in vector registers, for reduction `op` over type `t`
  // (vector_scan_fits, lower/running_scans.h), and the min or max helper it carries with;
  // returns its name, sb_scan_<op>_<type>. Called as `carry = sb_scan_sum_f32(src, dst, carry);`
  // on arrays of that many elements (dst may be src), it writes carry op src[0] op ... op src[q]
  // to dst[q] and returns the new carry (carry op src[0] op ... op src[last]). The lanes combine
  // in log2(lanes) steps, each adding a copy of the vector shifted by 1, 2, 4, ... lanes (the
  // identity shifted in), so a sum or product groups its terms as a tree within a vector, not
  // left to right. On AVX without AVX-512 it is written in intrinsics: a file that uses one must
  // include <immintrin.h> there (has_vector_scans).
  std::string use_vector_scan(ReduceOp op, DType t);
  bool has_vector_scans() const { return !scans_.empty(); }
  bool empty() const { return used_.empty() && omp_.empty() && scans_.empty(); }
  // Definitions of the used helpers, each prefixed by `qualifiers` (e.g. "static inline" or
  // "static inline __host__ __device__"), in a fixed order, then the OpenMP reductions, then the
  // vector scans.
  std::string definitions(const std::string& qualifiers) const;

 private:
  std::set<Helper> used_;
  std::set<std::pair<DType, bool>> omp_;  // (type, max) of each OpenMP reduction, in print order
  std::set<std::pair<ReduceOp, DType>> scans_;  // each vector scan, in print order
};

// ---- Statement lowering -----------------------------------------------------------------------

// Operator precedence of C, higher binds tighter.
enum Prec {
  kPrecTernary = 3,
  kPrecOr = 4,
  kPrecAnd = 5,
  kPrecEq = 9,
  kPrecRel = 10,
  kPrecAdd = 12,
  kPrecMul = 13,
  kPrecUnary = 15,
  kPrecPrimary = 16,
};

// What a hoisted reduction loop looks like to the caller, which may want a pragma on it.
struct ReduceSite {
  const Expr* reduce = nullptr;  // the Reduce node
  DType type = DType::Unknown;   // its value type
  std::string acc;               // its accumulator variable
  int depth = 0;                 // 0 when not nested in another hoisted reduction loop
  bool innermost = false;        // its body contains no other reduction
};
// What a printer wants before a reduction's `for`: the pragma line (without indentation), or "";
// with `partials`, an `omp simd` reduction accumulated into kReducePartialBytes of partials
// (lower/vectorize.h) when its range is long enough. With `chunks` as well, the range is cut
// into chunks of kReduceChunkBytes of terms (lower/parallelize.h), the loop over them after the
// `chunks` pragma line (a parallel loop with the reduction's clause), and each chunk's terms go
// into partials as above.
struct ReduceLoop {
  ReduceLoop(std::string p = "", bool partials_ = false,
             std::string chunks_ = "")  // NOLINT: a plain pragma converts
      : pragma(std::move(p)), partials(partials_), chunks(std::move(chunks_)) {}
  std::string pragma;
  bool partials = false;
  std::string chunks;
};
using ReducePragma = std::function<ReduceLoop(const ReduceSite&)>;

// "reduction(+:acc)", "reduction(*:acc)", "reduction(max:acc)" or "reduction(min:acc)" for an
// OpenMP clause. A floating-point max or min names a reduction declared in `helpers`
// ("reduction(sb_omp_max_f32:acc)"): OpenMP's own max and min do not propagate NaN.
std::string omp_reduction_clause(const ReduceSite& site, HelperSet& helpers);

// The math functions of a module's SIMD loops, collected while statements are printed.
struct VectorMath {
  // In: f32 exp and tanh print as inline polynomial forms (sb_approx_expf, sb_approx_tanhf)
  // instead of calls into the vector math library.
  bool approx = false;
  // Out: libm function names ("expf", "erf") called through vector_math_name(), with their value
  // type (F32 or F64) and their number of arguments.
  struct Fn {
    DType type;
    int arity;
    bool operator==(const Fn&) const = default;
  };
  std::map<std::string, Fn> libm;
  // Out: the functions printed as inline approximations.
  std::set<sb::Fn> approx_used;
  bool empty() const { return libm.empty() && approx_used.empty(); }
};

class StmtLowering {
 public:
  StmtLowering(const Spec& spec, const Statement& st, HelperSet* helpers);

  const Spec& spec() const { return spec_; }
  const Statement& stmt() const { return st_; }

  // The C name of index variable `ref` (unique within the statement).
  const std::string& var_name(int ref) const { return var_names_[ref]; }
  // The C name of tensor `t` / size `s`, recording the use.
  std::string tensor_name(int t);
  std::string size_name(int s);

  // Extent `d` of tensor `t` as a C expression, and the product of all its extents ("1" for a
  // scalar); both at the given minimum precedence (parenthesised when looser).
  std::string extent(int t, size_t d, int min_prec = kPrecPrimary);
  std::string element_count(int t, int min_prec = kPrecPrimary);

  // `e` as a C expression at precedence >= `min_prec`. Hoisted code goes to `w`; `pragma` is
  // consulted for every hoisted reduction loop.
  std::string expr(const Expr& e, CodeWriter& w, int min_prec = 0,
                   const ReducePragma& pragma = nullptr);

  // Writes `out[flat] = rhs;` for the statement (output indices must be bound), preceded by the
  // rhs's hoisted code.
  void assign(CodeWriter& w, const ReducePragma& pragma = nullptr);

  // The identity of reduction `op` over `t`, and the statement folding `value` into `acc`
  // (fold_line), as a loop IR printer's leaves spell them (backends/common/loop_leaves.h).
  std::string identity(ReduceOp op, DType t) const { return reduce_identity(op, t); }
  std::string update(ReduceOp op, DType t, const std::string& acc, const std::string& value) {
    return fold_line(op, t, acc, value, *helpers_);
  }

  // Row-major flat index of tensor `t` from per-dimension subscripts given as identifiers.
  std::string flat_index(int t, const std::vector<std::string>& subs);

  // Prints `text` (a primary expression) in place of node `e`, matched by address, instead of
  // lowering it: for strategies that compute a read or a reduction themselves (a value staged in
  // shared memory, a vector lane, a reduction's combined accumulator).
  void set_override(const Expr* e, const std::string& text) { overrides_[e] = text; }
  void clear_overrides() { overrides_.clear(); }
  void clear_override(const Expr* e) { overrides_.erase(e); }
  bool has_override(const Expr* e) const { return overrides_.count(e) != 0; }

  // When `math` is set, libm functions with a libmvec form (CMath::libmvec) print as
  // vector_math_name(<libm name>) and that
  // libm name ("expf", "tanh", ...) is recorded in math->libm with its type (F32 or F64): for
  // SIMD loops that call a vector math library (vector_math_declarations). With math->approx,
  // f32 exp and tanh print as their inline approximations instead, recorded in
  // math->approx_used. nullptr (the default) prints libm names.
  void set_vector_math(VectorMath* math) { vector_math_ = math; }

  // Holds tensor `t` (rank >= 1, no boundary rule) as one row in the local array `name`: every
  // access prints `name[flat index of dimensions 1..]`, dropping the first subscript, which the
  // caller guarantees is the row being computed. The tensor is then not a used tensor.
  void set_row_local(int t, const std::string& name);

  // Calls `prologue` at the start of the body of reduction `reduce`'s loop each time that loop is
  // printed, with the loop variable (var_name(reduce->ref)) bound: for a strategy that computes
  // another statement's element in the same loop (the producer of what the reduction reads).
  void set_reduce_prologue(const Expr* reduce, std::function<void(CodeWriter&)> prologue) {
    prologues_[reduce] = std::move(prologue);
  }
  // Calls `prologue` at the start of each block of reduction `reduce`'s partial-accumulator loop
  // (print_partials), with the block's first value of the loop variable and the block's length:
  // code that runs once per block rather than once per element (a prefetch).
  using BlockPrologue = std::function<void(CodeWriter&, const std::string& first, int count)>;
  void set_reduce_block_prologue(const Expr* reduce, BlockPrologue prologue) {
    block_prologues_[reduce] = std::move(prologue);
  }

  // A running reduction (lower/running_scans.h) of reduction `e`, which has none nested: its
  // terms are folded into `acc` as its range grows. open_running declares `acc` (the identity, of
  // value_type(e)) and the reduction's variable (int64_t, at the range's start), before the loop
  // over the growing index; fold_terms, inside that loop with the index bound, folds the terms
  // from the variable's current value up to the range's end. `acc` is then the reduction's value
  // (set_override).
  void open_running(const Expr& e, const std::string& acc, CodeWriter& w);
  void fold_terms(const Expr& e, const std::string& acc, CodeWriter& w);
  // The same walk with its terms computed ahead, `block` at a time, into a local array by an
  // `omp simd` loop, and folded from there in the same order: only the fold is then sequential,
  // and a term's selects and math run as vector code, without branches. open_running_ahead follows
  // open_running and declares the array and its window (sb_terms, sb_kb, sb_nb) and sb_kend, the
  // range's end at the last output, which `last_output` (a C declaration binding the growing index,
  // "const int64_t c = C - 1") gives: no term past it is computed. fold_terms_ahead replaces
  // fold_terms.
  void open_running_ahead(const Expr& e, int block, const std::string& last_output, CodeWriter& w);
  void fold_terms_ahead(const Expr& e, const std::string& acc, int block, CodeWriter& w);
  // The C text of reduction `e`'s range start (`hi` false) or end, with the variables it uses
  // bound.
  std::string range_bound(const Expr& e, bool hi, CodeWriter& w);

  // A reduction whose loop is printed apart from the loops of the outputs it feeds (a loop the
  // vectorize pass puts outside the vector loop: SimdChoice::outside, lower/vectorize.h).
  // open_reduction opens `for (int64_t k = lo; k < hi; ++k) {` of reduction `e` (the caller
  // closes it), after `pragma_line` when not empty, its bounds printed at hoisting depth `depth`;
  // fold_term, inside it with the output indices bound, writes `acc = acc op term;` for the term
  // at the current k. print_reduce opens its loops with it too.
  void open_reduction(const Expr& e, CodeWriter& w, int depth = 0,
                      const std::string& pragma_line = "");
  void fold_term(const Expr& e, const std::string& acc, CodeWriter& w);
  // The C text of reduction `e`'s term at the current value of its variable, with the variables
  // it uses bound (its lines hoisted into `w` at depth 1, as fold_term does).
  std::string term_text(const Expr& e, CodeWriter& w);
  // HelperSet::use_vector_scan for reduction `e` (vector_scan_fits of its operation and
  // value type), whose name it returns.
  std::string use_vector_scan(const Expr& e);

  // The reads of `e` that need boundary handling (a zero or clamp rule, a subscript that may
  // fall outside; ir/affine.h: boundary_checks), outside the nodes printed by an override: the C
  // condition under which all of them are inside their tensors for every value of index
  // variable `var` from `first` to `last` (C expressions, inclusive), with the other variables
  // they use bound. "" when no read needs it; nullopt when the condition cannot be put so: a
  // subscript that is not affine, or that uses a variable of `unbound` (one of a reduction nested
  // in `e`, say) whose range's bounds use an index variable. Affine subscripts take their
  // extremes at `first` and `last`, and at the first and last value of each variable of
  // `unbound` they use.
  // With `varies`, also whether the condition depends on `var` (some subscript checked uses it).
  std::optional<std::string> inside_condition(const Expr& e, int var, const std::string& first,
                                              const std::string& last, const std::set<int>& unbound,
                                              CodeWriter& w, bool* varies = nullptr);
  // While set, reads print without boundary handling: code that runs only where
  // inside_condition holds.
  void set_assume_inside(bool on) { assume_inside_ = on; }

  // Tensors and sizes the printed code used, ascending (spec order).
  const std::set<int>& used_tensors() const { return used_tensors_; }
  const std::set<int>& used_sizes() const { return used_sizes_; }
  HelperSet& helpers() { return *helpers_; }

 private:
  struct Piece {
    std::string text;
    int prec;
  };
  Piece print(const Expr& e, CodeWriter& w, int depth, const ReducePragma& pragma);
  Piece print_binary(const Expr& e, CodeWriter& w, int depth, const ReducePragma& pragma);
  Piece print_call(const Expr& e, CodeWriter& w, int depth, const ReducePragma& pragma);
  Piece print_cast(const Expr& e, CodeWriter& w, int depth, const ReducePragma& pragma);
  Piece print_read(const Expr& e, CodeWriter& w, int depth, const ReducePragma& pragma);
  Piece print_reduce(const Expr& e, CodeWriter& w, int depth, const ReducePragma& pragma);
  // The loops of innermost reduction `e` into `acc` with kReducePartialBytes of partial
  // accumulators (ReduceLoop::partials): when its range holds at least two partials' worth of
  // terms, whole blocks of them go into the partials by `omp simd` loops and the partials into
  // `acc` (after `pragma`); the rest of the range goes into `acc` by the plain loop (after
  // `pragma`). The range is `e`'s own, or [lo, hi) where those are given (variables in scope).
  void print_partials(const Expr& e, const std::string& acc, const std::string& pragma,
                      CodeWriter& w, int depth, const std::string& lo = "",
                      const std::string& hi = "");
  // The same, for the range cut into chunks (ReduceLoop::chunks): the loop over the chunks after
  // `chunks_pragma`, and in each chunk print_partials over the chunk.
  void print_chunked_partials(const Expr& e, const std::string& acc, const std::string& pragma,
                              const std::string& chunks_pragma, CodeWriter& w, int depth);
  // A search (lower/patterns.h: FirstIndex `m`) into `acc` in place of print_partials: blocks of
  // kSearchTerms terms (lower/vectorize.h), each an `omp simd` loop ORing the condition over the
  // block, up to the first block where it holds for a term, whose terms are then tested one at a
  // time; `acc` folds the index found, or the search's default when the range holds terms and
  // no condition held. Not for a reduction with a prologue (set_reduce_prologue).
  void print_search(const Expr& e, const FirstIndex& m, const std::string& acc, CodeWriter& w,
                    int depth);
  // Writes `acc = acc op body;` for reduction `e` (wrapping and NaN-propagating helpers as needed).
  void combine(const Expr& e, const std::string& acc, const std::string& body, CodeWriter& w);
  std::string sub(const Expr& e, CodeWriter& w, int depth, const ReducePragma& pragma, int prec);
  std::string flat_index_p(int t, const std::vector<Piece>& subs);
  // True when subscript `sub` of dimension `d` of tensor `t` is a bare index variable whose
  // range is exactly that dimension, so it needs no boundary handling.
  bool obviously_inside(const Expr& sub, int t, size_t d) const;

  const Spec& spec_;
  const Statement& st_;
  HelperSet* helpers_;
  std::vector<std::string> var_names_;
  std::set<int> used_tensors_;
  std::set<int> used_sizes_;
  int next_acc_ = 0;
  int next_load_ = 0;
  std::map<const Expr*, std::string> overrides_;
  std::map<const Expr*, std::function<void(CodeWriter&)>> prologues_;
  std::map<const Expr*, BlockPrologue> block_prologues_;
  VectorMath* vector_math_ = nullptr;
  std::map<int, std::string> row_local_;
  bool assume_inside_ = false;
};

// The C spelling of the intrinsics that libm provides: the double function's name (f32 appends
// "f"), and whether glibc's libmvec has vector forms of it for SIMD loops.
struct CMath {
  Fn fn;
  const char* libm;
  bool libmvec;
};
// The libm record of `fn`, or nullptr when libm has no such function.
const CMath* c_math(Fn fn);
// Whether the C-family printers (cpu, cuda, vendor_*) spell `fn`: min, max, abs, select and the
// libm functions; the other intrinsics reach them expanded.
bool c_spells(Fn fn);

// The name generated code uses for the vector form of libm function `libm_name`: "sb_vec_expf".
std::string vector_math_name(const std::string& libm_name);

// Declarations of vector_math_name(n) for every n in `math.libm` (by name): each is libm's
// function under another C++ name, declared with GCC's simd attribute on x86-64 glibc so that
// vectorised loops call glibc's libmvec (the module must link -lmvec there), and a plain alias of
// the libm function elsewhere. Then the definitions of the approximations in `math.approx_used`:
// branch-free C++ (static inline) that vectorises in place, over the whole f32 range (NaN and
// infinities included) within 4 ulp (exp) and 6 ulp (tanh) of the correctly rounded result. ""
// when `math` is empty.
std::string vector_math_declarations(const VectorMath& math);

// ---- The blocked GEMM call (cpu and mojo; its strategy record: host_strategy.h) -------------

// The operands of a blocked GEMM call, as texts of the backend's language: C (M x N, row stride
// ldc) = X * Y with X(i, k) = x[i * xs_i + k * xs_k] and Y(k, j) = y[k * ys_k + j * ys_j].
struct GemmOperands {
  std::string m, n, k, x, xs_i, xs_k, y, ys_k, ys_j, c, ldc;
};
// The arguments of sb_gemm_<type> in every backend that has it: the operands, then mc, kc, nc.
std::vector<std::string> gemm_args(const GemmOperands& g, int64_t mc, int64_t kc, int64_t nc);
// The comment above such a call: "c = x^T * y, blocked with mc = 128, kc = 512, nc = 4096."
// (without the comment marker), from the tensor names and whether each operand is transposed.
std::string gemm_comment(const std::string& c, const std::string& x, bool x_trans,
                         const std::string& y, bool y_trans, int64_t mc, int64_t kc, int64_t nc);

// How a printer spells a boundary condition (corners_condition).
struct CornerSpelling {
  // Binds index variable `u` to its value at its range's first (false) or last (true) value.
  std::function<void(int u, bool last)> bind;
  // Check c's two comparisons, under the current bindings.
  std::function<std::string(const BoundaryCheck& c)> test;
  // Undoes every binding.
  std::function<void()> unbind;
  std::string conj;  // " && ", " and "
  // Where set, joins the condition so far and one more test instead of `conj` (mlir: an
  // arith.andi of two i1 values, emitted as it goes).
  std::function<std::string(const std::string& cond, const std::string& test)> join;
};
// The condition under which every check of `checks` (ir/affine.h: boundary_checks over `var`)
// holds at each of its corners (check_corners), those that vary with `var` left out with
// `leave_varying`, in a printer's spelling; "" when nothing is tested.
std::string corners_condition(const std::vector<BoundaryCheck>& checks, int var, bool leave_varying,
                              const CornerSpelling& s);

// ---- File assembly ----------------------------------------------------------------------------

// The header comment of a generated file: spec name and path (specs/<name>.yaml), backend,
// tensors and sizes in ABI order, every variant of this backend with its strategy and all of
// its parameters (defaults marked), and the regenerate command.
std::string file_header(const Spec& spec, const Emitter& em);

// A section banner: a rule, "// <title>", a rule, then an empty line.
std::string banner(const std::string& title);

// The C++ types of the storage types (f16, bf16) that `spec`'s tensors use, or "": structs whose
// element reads as a float and takes a float by assignment, rounded to nearest even, so that the
// C family prints a read and a store of such an element as of any other. Cuda adds
// __host__ __device__ and converts f16 with PTX on the device.
// A "// ..." comment line wrapped at 100 columns, with its newline (continuation lines start
// with "// " too); other text is returned as it is, with a newline.
std::string wrap_comment(const std::string& line);

// The storage-type check of a backend that takes f16 and bf16 tensors only as the operands of
// the contractions its library GEMM reads (vendor_cpu widening them for OpenBLAS, vendor_cuda
// passing them to cublasGemmEx): an error naming `backend` and, after "takes f16 tensors only",
// `why`, at the first other use: a write, a read outside a contraction's product (an
// elementwise statement, an epilogue, a gathered term), or a contraction that `takes` refuses.
Status storage_only_in_products(const Spec& spec, const std::string& backend,
                                const std::string& why,
                                const std::function<bool(const Contraction&)>& takes);

enum class StorageLang { Cpu, Cuda };
std::string storage_types(const Spec& spec, StorageLang lang);

// The name of a variant's function: "sb_variant_<name>".
std::string variant_fn(const Variant& v);

// The spec's variants for `backend` (empty when it has none).
const std::vector<Variant>& backend_variants(const Spec& spec, const std::string& backend);

// Declares one local per tensor (typed pointer, const for role In) and per size (const int64_t)
// from `args->tensors[i]` / `args->sizes[i]`; those not in the used sets are cast to void.
void unpack_args(const Spec& spec, const std::string& args, const std::set<int>& used_tensors,
                 const std::set<int>& used_sizes, CodeWriter& w);

// Parameter declarations for a kernel using `tensors` and `sizes`: pointers first (spec order;
// const unless the tensor is `out_tensor`, qualified by `restrict_kw`), then `const int64_t`
// sizes. The matching call arguments are the names alone (call_args).
// As kernel_params above, with every tensor in `out_tensors` writable.
std::vector<std::string> kernel_params(const Spec& spec, const std::set<int>& tensors,
                                       const std::set<int>& sizes, const std::set<int>& out_tensors,
                                       const std::string& restrict_kw);
std::vector<std::string> kernel_params(const Spec& spec, const std::set<int>& tensors,
                                       const std::set<int>& sizes, int out_tensor,
                                       const std::string& restrict_kw);
std::vector<std::string> call_args(const Spec& spec, const std::set<int>& tensors,
                                   const std::set<int>& sizes);

// The dispatch section body: the variant table and the exported specbench_module().
std::string dispatch_section(const Spec& spec, const std::string& backend);

// `mult * text`, `text` printed at unary precedence: "x", "-x", "3 * x" (C and Mojo alike).
std::string scaled_term(int64_t mult, const std::string& text);
// The index-free part of an affine form as C terms: each size and atom (a var-free subtree,
// printed as written) times its coefficient, then the constant when it is not zero.
std::vector<std::string> var_free_terms(StmtLowering& L, const Affine& a);

// Parenthesises `text` when its precedence is below `min_prec`.
std::string paren(const std::string& text, int prec, int min_prec);

// The operands of a GEMM call (BLAS, cuBLAS, the blocked GEMM) for contraction `m` lowered by
// `L`, in C (their layout: gemm_layout, lower/patterns.h): the tensors' C names, the operands'
// base pointers, offset along k to the sum's first k when its range does not start at 0, and
// their steps. Writes `sb_m`, `sb_n` and `sb_k` (the extents of one product and the length of
// the sum) to `w`, after whatever the range's bounds hoist; for a batch of products also
// `sb_batch`, their count, and the steps from one product's operands and output to the next's.
struct LibraryGemm {
  std::string x, y, c;     // the tensors
  std::string xp, yp;      // the pointers passed for x and y
  std::string xs_i, xs_k;  // x's steps along i and k: "1" or its row length
  std::string ys_k, ys_j;  // y's steps along k and j
  // Batched: x's, y's and c's steps along the batch, in elements ("0" for an operand read
  // without the batch index, the same matrix for every product); empty for a single product.
  std::string xs_b, ys_b, cs_b;
};
// `x_base` and `y_base`, where not empty, name what is passed for x and y instead of their
// tensors (a copy of the tensor with its layout: vendor_cpu's widened f16 and bf16 operands).
LibraryGemm library_gemm(StmtLowering& L, const Contraction& m, CodeWriter& w,
                         const std::string& x_base = "", const std::string& y_base = "");

// The index arithmetic of a gathered GEMM's kernel (match_gathered_gemm), in the syntax C and
// Mojo share: `extent(v)` is index variable v's extent as a factor of a product (its dimension
// of the output or of w: gathered_extent), `name(v)` its loop variable.
struct GatheredIndex {
  std::function<std::string(int)> extent, name;
  // The product of the extents of `vars`: "1" for none.
  std::string product(const std::vector<int>& vars) const;
  // The row-major flat index of `vars` over their extents, parenthesised when it is a sum, so
  // that it is a factor of a product: "0" for none.
  std::string flat(const std::vector<int>& vars) const;
};
// The tensor and dimension that give index variable `v` of a gathered GEMM its extent: the
// output's dimension for an output index, w's for a reduction variable.
std::pair<int, size_t> gathered_extent(const Spec& spec, const Statement& st, const GatheredGemm& g,
                                       int v);

// The body of a gathered GEMM's kernel (match_gathered_gemm, lower/patterns.h: a convolution as
// im2col): `sb_m`, `sb_n`, `sb_k` and `sb_batch`; the gathered term at every (k..., N...) into
// sb_col, a malloc'ed row-major K x N buffer, by a loop nest, vectorised, and parallel when
// `parallel_gather` is set (the kernel returns 1 when the buffer cannot be allocated); then, per
// batch element, `gemm` writes the call computing the element's `rows` x N outputs `out` (a
// pointer text) as the weights `weights` (a rows x K row-major matrix) times sb_col, writing the
// lines `on_fail` to run if the call can fail and fails. The kernel returns
// int. A grouped GEMM (GatheredGemm::group) gathers and multiplies group by group: rows are then
// the group's, weights and out offset to them. With `groups_side_by_side` (OpenMP; the printed
// code calls sb_workers() and the GEMM call must run on the calling thread alone when called
// inside a parallel region), a grouped GEMM with at least two groups per thread runs them side
// by side instead, each thread gathering whole groups into its own columns.
using Im2colGemmCall =
    std::function<void(const std::string& weights, const std::string& out, const std::string& rows,
                       const std::vector<std::string>& on_fail, CodeWriter& w)>;
void emit_im2col(StmtLowering& L, const GatheredGemm& g, bool parallel_gather, CodeWriter& w,
                 const Im2colGemmCall& gemm, bool groups_side_by_side = false);

// True when `e` contains a Reduce node.
bool contains_reduce(const Expr& e);

// The value type of integer-ish expressions: FloatLit/IntLit/Unknown are read as F64/Index.
DType value_type(const Expr& e);

}  // namespace sb
