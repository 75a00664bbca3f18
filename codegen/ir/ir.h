// The typed IR of a kernel spec: plain structs, no behaviour beyond small queries.
//
// Produced by load_spec() (spec_loader.h), completed by check_spec() (check.h): after a
// successful check every Expr has a concrete `type`, every name is resolved (`ref` set), and
// every tensor read is either proven in bounds or covered by the tensor's boundary rule.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/scalar_types.h"  // DType and its records
#include "support/diag.h"

namespace sb {

enum class ExprKind {
  FloatLit,  // fval
  IntLit,    // ival
  Name,      // unresolved identifier (parser output only); `name`
  Const,     // named constant (pi, inf); fval holds its value, `name` its name
  IndexVar,  // ref = index into Statement::vars
  SizeRef,   // ref = index into Spec::sizes
  Read,      // ref = index into Spec::tensors; args = subscripts (empty for a scalar tensor)
  Unary,     // uop; args[0]
  Binary,    // bop; args[0], args[1]
  Call,      // fn; args
  Cast,      // cast_to (== type); args[0]
  Reduce,    // rop; ref = index into Statement::vars (the reduction variable); args[0] = body
             // (before checking: name = the variable, args = {body, lo, hi})
};

enum class UnOp { Neg, Not };
enum class BinOp { Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
// The intrinsics of the spec language; each has one record in ir/intrinsics.h (spelling, arity,
// type rule, reference, default expansion). select(c, a, b) is also spelled `where`.
enum class Fn {
  Min, Max, Abs, Exp, Log, Sqrt, Tanh, Erf, Select,
  Sigmoid, Log1p, Expm1, Pow, Sin, Cos, Floor, Ceil, Round, Sign, Rsqrt,
  // Internal: made by lowering (lower/legalize_int_div.h), never spelled in specs.
  DivTrunc, RemTrunc,
};
// ArgMax and ArgMin (the least index of the greatest or least value, an i64) exist only between
// parsing and check/arg_reductions.h, which rewrites each into a Max and a Min reduction.
enum class ReduceOp { Sum, Max, Min, Prod, ArgMax, ArgMin };

const char* binop_symbol(BinOp op);    // "+", "<=", "&&", ...
const char* fn_name(Fn fn);            // "min", "exp", "select", ... (its intrinsics record)
const char* reduce_name(ReduceOp op);  // "sum", "max", "min", "prod", "argmax", "argmin"
// Every reduction operator, in declaration order; the parser looks their spellings up here.
const std::vector<ReduceOp>& reduce_ops();

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::IntLit;
  Loc loc;
  DType type = DType::Unknown;
  double fval = 0;
  int64_t ival = 0;
  std::string name;
  int ref = -1;
  UnOp uop = UnOp::Neg;
  BinOp bop = BinOp::Add;
  Fn fn = Fn::Min;
  ReduceOp rop = ReduceOp::Sum;
  DType cast_to = DType::Unknown;
  std::vector<ExprPtr> args;
};

ExprPtr clone(const Expr& e);

// Structural equality: same kinds, operators, references and literals, ignoring locations.
bool same_expr(const Expr& a, const Expr& b);

// Every Read node of `e` (including reads inside subscripts and reductions), in print order.
std::vector<const Expr*> reads_of(const Expr& e);
// Every IndexVar node of `e`, in print order.
std::vector<const Expr*> index_vars_of(const Expr& e);
// Whether `node` is `e` or a node inside it.
bool contains(const Expr& e, const Expr* node);
// Whether `e` is the integer literal 0.
bool is_zero_literal(const Expr& e);
// Every Reduce node of `e` (including nested ones), outermost first.
std::vector<const Expr*> reduces_of(const Expr& e);
// The top-level Reduce nodes of `e` (those not inside another reduction), in print order.
std::vector<const Expr*> top_reduces_of(const Expr& e);

// An index variable of a statement: an output index (lo = 0, hi = the output's extent) or a
// reduction index (lo, hi from the spec, affine in sizes and outer index variables).
// The range is half-open: lo <= v < hi.
struct IndexVar {
  std::string name;
  Loc loc;
  ExprPtr lo;
  ExprPtr hi;
  bool is_reduction = false;
  // Set by typecheck: every quotient of sizes in lo and hi divides a value of at least 0 at every
  // size point (an output's ranges, copies of its shape, always; a reduction's where it holds),
  // so the bounds check may keep such a quotient whole and bound it as a floor (ir/affine.h).
  bool floor_bounds = false;
};

struct SizeParam {
  std::string name;
  Loc loc;
  std::vector<int64_t> bench;  // as written; see Spec::bench_points
  std::vector<int64_t> verify;
};

enum class Role { In, Out, Temp };
enum class Boundary { None, Zero, Clamp };
const char* role_name(Role r);
const char* boundary_name(Boundary b);

struct Tensor {
  std::string name;
  Loc loc;
  DType type = DType::F32;
  Role role = Role::In;
  std::vector<ExprPtr> shape;  // affine in sizes; empty = scalar
  Boundary boundary = Boundary::None;
  double init_lo = -1.0;  // random inputs are drawn uniformly from [init_lo, init_hi]
  double init_hi = 1.0;
  // i32 tensors: the inclusive range of their values, as integer expressions affine in sizes
  // (`init: [0, V - 1]`). Set for every i32 tensor with an `init`; a read of such an input used
  // as a subscript (a gather) is proven in bounds from this range.
  ExprPtr init_lo_expr;
  ExprPtr init_hi_expr;
  // A view (`view: x` in the spec): the index of the tensor whose storage this one names with
  // its own shape, in the same row-major order, with no copy; -1 for a tensor of its own. The
  // base is a tensor declared before the view and never itself a view, and the view takes its
  // type, role and `init`. An output's or a temp's storage is written by one statement, through
  // the tensor or one of its views, and read after that through any of them (typecheck).
  // A view is still an ABI tensor (specbench_abi.h): the harness passes the base's pointer for
  // it. Both have the same number of elements at every size point.
  int view_of = -1;
};

// out[lhs...] = rhs. `vars` holds every index variable of the statement: first the output
// indices in subscript order (vars[0..rank)), then reduction variables in order of appearance.
struct Statement {
  Loc loc;
  std::string target;  // the written tensor's name, as in the spec
  int out = -1;        // index into Spec::tensors (set by check_spec)
  std::vector<IndexVar> vars;
  ExprPtr rhs;
  // The statement as the spec wrote it (to_string before lowering; set by lower()), for the
  // comments of generated code. Empty before lowering.
  std::string source;
  size_t rank() const;  // number of output indices
};

struct Variant {
  std::string name;
  std::string strategy;
  Loc loc;                                // of the variant's name
  Loc strategy_loc;                       // of its strategy
  std::map<std::string, int64_t> params;  // as written in the spec; defaults are the emitter's
  std::map<std::string, Loc> param_locs;  // where each parameter is named
};

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

// One value per size parameter, in Spec::sizes order.
using SizePoint = std::vector<int64_t>;

// ---- Lowering decisions: data filled by the lowering passes (lower/pipeline.h), empty before ----

// Pass row_fusion (lower/row_fusion.h): statements [first, last] that run as one loop over rows
// under a strategy that fuses rows, and the temps among their outputs that can be held as one row
// per thread instead of in memory.
struct RowGroup {
  size_t first = 0;
  size_t last = 0;
  std::vector<int> row_local;
};

// Pass streaming (lower/streaming.h): whether one statement writes its output with streaming
// stores under a parallel strategy, when the tensors it touches total at least kStreamMinBytes.
struct StreamChoice {
  bool whole = false;     // when it runs on its own, over its whole output
  bool rows = false;      // when it runs row by row (in its row group, or alone row by row)
  std::set<int> tensors;  // on its own: the tensors whose bytes are compared with the threshold
  // The tensors read at the output's own indices (subscript d is output index d, no boundary
  // rule), which a streamed line prefetches ahead along the innermost index (lower/streaming.h):
  // on its own, and row by row (less its row group's row-local temps).
  std::set<int> prefetch, prefetch_rows;
  // A running scan (lower/running_scans.h): its vector walk may write whole lines of its output
  // with non-temporal stores when `tensors` reach the threshold.
  bool scan = false;
  // In a row group that streams: the tensors whose next row this statement prefetches while it
  // runs over its row, each with the index variable (an output or reduction variable of the
  // statement) along which it reads that row (lower/streaming.h: next-row prefetch).
  std::map<int, int> next_rows;
};

// Pass vectorize (lower/vectorize.h): the loops a SIMD strategy vectorises in one statement.
enum class SimdLoops {
  None,        // none: the statement is scalar code (a scalar or row element without reductions)
  Outputs,     // the innermost output loop (its reductions' loops inside it, if any)
  Reductions,  // the innermost reduction loops (the output loops stay scalar)
};
struct SimdChoice {
  SimdLoops whole = SimdLoops::None;  // when it runs on its own, over its whole output
  SimdLoops rows = SimdLoops::None;   // when it runs row by row, output dimension 0 bound
  // The top-level reductions (Expr::ref of each Reduce node) whose loops go outside the
  // innermost output loop, which is then the vector loop: some read inside them is contiguous in
  // the innermost output index (b[k, j] in a matrix product).
  std::set<int> outside;
};

// Pass parallelize (lower/parallelize.h): what a parallel strategy runs on worker threads in one
// statement that is not part of a row group (a row group's row loop is always the parallel one).
enum class ParallelLoops {
  None,        // nothing: a scalar statement without reductions
  Outputs,     // the leading output loops (ParallelChoice::collapse), in contiguous ranges
  Reductions,  // the top-level reductions of a scalar output, each split over the threads
};
struct ParallelChoice {
  ParallelLoops loops = ParallelLoops::None;
  // Under Outputs: how many leading output loops share one parallel range, collapsed into one
  // loop over their product (OpenMP collapse, one flat index in Mojo): 1 up to rank 3, all but
  // the last two above.
  int collapse = 1;
  // The reductions (Expr::ref of each Reduce node) outside every output loop's reach: top-level
  // (not nested in another reduction), their values and ranges independent of the output
  // indices. A backend that computes such a reduction apart from the output loops splits it over
  // the threads; under Reductions, these are the statement's top-level reductions.
  std::set<int> apart;
};

// Pass tile_transposes (lower/tile_transposes.h): the output dimension that a parallel strategy
// tiles together with the innermost one in an elementwise statement, or -1.
struct TileChoice {
  int dim = -1;
  int read = -1;  // the read that decided it, by its place in reads_of(*rhs)
  // The read's subscript that uses the innermost output index, when the read moves in blocks of
  // 16 by 8 elements transposed in registers (tile_transposes.h); -1 when it does not.
  int block_axis = -1;
};

// What the lowering passes decided for a spec; the printers read it instead of deciding.
struct Schedule {
  bool row_fusion_done = false;       // pass row_fusion ran
  bool streaming_done = false;        // pass streaming ran
  bool vectorize_done = false;        // pass vectorize ran
  bool parallelize_done = false;      // pass parallelize ran
  bool running_scans_done = false;    // pass running_scans ran
  bool tile_transposes_done = false;  // pass tile_transposes ran
  bool fuse_attention_done = false;   // pass fuse_attention ran
  std::vector<RowGroup> row_groups;   // in statement order, not overlapping
  // Pass fuse_attention (lower/fuse_attention.h): the first statement of each attention group,
  // in statement order; a group is kAttentionStatements statements (lower/patterns.h).
  std::vector<size_t> attention_groups;
  std::vector<StreamChoice> streams;  // one per statement
  // One per statement: for a contraction (match_contraction, lower/patterns.h) run as a GEMM call,
  // the choice of the elementwise rest of it (epilogue_statement); `whole` false elsewhere.
  std::vector<StreamChoice> epilogue_streams;
  // One per row group: the tensors in memory (less its row-local temps) that the group touches,
  // whose bytes are compared with the threshold when the group streams its rows.
  std::vector<std::set<int>> group_tensors;
  // One per statement, and one per statement for the epilogue of a contraction (as
  // epilogue_streams; the default choice elsewhere).
  std::vector<SimdChoice> simd;
  std::vector<SimdChoice> epilogue_simd;
  std::vector<ParallelChoice> parallel;
  std::vector<ParallelChoice> epilogue_parallel;
  // Pass running_scans (lower/running_scans.h), one per statement: the reduction (Expr::ref) it
  // can compute as a running accumulator along its innermost output index, or -1.
  std::vector<int> running_scans;
  // Pass tile_transposes, one per statement and one per contraction's epilogue (as simd).
  std::vector<TileChoice> tiles;
  std::vector<TileChoice> epilogue_tiles;
};

struct Spec {
  std::string name;
  std::string doc;
  std::string path;  // the spec file as given to the loader
  Loc loc;
  std::vector<SizeParam> sizes;
  std::vector<Tensor> tensors;
  std::vector<Statement> stmts;
  Tolerance tol;
  std::map<std::string, std::vector<Variant>> variants;  // backend -> variants, spec order
  std::map<std::string, Loc> backend_locs;               // backend -> where it is named
  Schedule schedule;  // set by lower(): the row_fusion, streaming, vectorize and parallelize passes

  // Size points: each parameter's list is zipped with the others; a list of length 1 is
  // broadcast. Lengths are validated by the loader.
  std::vector<SizePoint> bench_points() const;
  std::vector<SizePoint> verify_points() const;

  int find_tensor(const std::string& n) const;  // -1 when absent
  int find_size(const std::string& n) const;    // -1 when absent
};

// A deep copy of `s` (its expressions cloned), for passes that rewrite a spec for one backend.
Spec clone(const Spec& s);

// The tensor whose storage tensor `t` names: its base for a view (Tensor::view_of), else itself.
int storage_of(const Spec& spec, int t);
// Whether some statement of a checked spec reads a storage through a name other than the one the
// statement that writes it uses (a view of a temp or an output read after the write through
// another shape). The fusing passes (row_fusion, fuse_attention) leave such a spec's statements
// unfused: they match rows and reads by name.
bool reads_across_names(const Spec& spec);

// Evaluates an integer expression (shape, range bound, subscript) given sizes and index-variable
// values (`vars` indexed like Statement::vars; may be empty when the expression uses none).
// Integer / and % truncate toward zero, as in C.
// An overflow of 64-bit arithmetic is an internal error here: the checks refuse every shape,
// range and subscript whose value leaves the 64-bit range at a size point (eval_int_checked).
int64_t eval_int(const Expr& e, const SizePoint& sizes, const std::vector<int64_t>& vars = {});
// The same, returning nullopt when a value leaves the 64-bit range (the operator that overflowed
// is stored in *where, when given and still null).
std::optional<int64_t> eval_int_checked(const Expr& e, const SizePoint& sizes,
                                        const std::vector<int64_t>& vars, const Expr** where);

// Extents of tensor `t` at `sizes`, and its element count (1 for a scalar).
std::vector<int64_t> tensor_extents(const Spec& s, int t, const SizePoint& sizes);
int64_t tensor_elements(const Spec& s, int t, const SizePoint& sizes);

// Canonical text of an expression, regenerated from the AST (never the spec's own text).
// Names print as written; e.g. "sum(k in 0..K: a[i, k] * b[k, j])".
std::string to_string(const Expr& e, const Spec& s, const Statement* st);
std::string to_string(const Statement& st, const Spec& s);
// The statement as written in the spec: `source` once lowered, else to_string.
std::string source_text(const Statement& st, const Spec& s);

// A readable dump of the whole IR, for `specbench gen --dump-ir`.
std::string dump(const Spec& s);

}  // namespace sb
