// The loop-level IR: what a lowering pass produces and a backend prints, in the manner of
// Halide's lowered IR (plain structs, a strict functor per node family, a printer for dumps).
// A module holds named constants and functions; a function holds typed parameters and a body of
// statements (loops marked serial, parallel, vector or unrolled; conditionals; variables;
// allocations by scope; stores; calls; returns) over expressions (immediates, variables,
// arithmetic, min/max, loads, broadcasts, fused multiply-adds, calls).
//
// What the backends differ in stays a symbol here: Lanes(T) is the target's native vector lane
// count for T, Workers() the number of worker threads it offers. A vector value (type Vec) is one
// native vector; a load or store of width Vector moves Lanes(T) consecutive elements.
//
// Semantics a printer must keep:
// - Div and Mod are the quotient and remainder of non-negative integers (a builder only divides
//   non-negative values, where C's truncation and Mojo's floor agree).
// - A For runs var = min, min + step, ... while var < end; kind Parallel splits its iterations
//   over at most `threads` worker threads (null: as many as the target offers; no order between
//   iterations, each must be independent), Vector
//   asks for SIMD, Unrolled for a full unroll (its extent is a compile-time constant: a module
//   constant or an immediate); a Serial loop's `unroll` hints at a partial unroll.
// - Alloc's body sees the buffer; the buffer lives until the body ends. Scope Register: an array
//   indexed only by compile-time constants (after unrolling), meant to stay in registers;
//   StackLocal: a small local array; HeapScratch: heap memory aligned to `align` bytes, which
//   the target may keep between calls (`persistent`, grown when too small); `on_fail` runs when
//   the allocation fails, where the target can detect that.
// - Store to a Register buffer is an assignment of one element.
//
// A GPU kernel's body (lower/gpu_bodies.h) uses further nodes, which only the GPU printers
// print (a host printer asserts on them):
// - Gpu: a thread's index in its block, its block's in the grid, or a dimension of either
//   (type int); Barrier: every thread of the block (with `warp`, of the warp) waits for the
//   others and sees their writes to shared memory; Alloc of scope Shared: an array in the block's
//   shared memory (its element type, and a value loaded from it, may be any scalar type of the
//   spec); with no dimensions, the kernel's dynamic shared memory, sized by its launch.
// - Reductions with the spec's arithmetic for reduction `rop` over `elem` (wrapping integer sums
//   and products, NaN-propagating float max and min): Identity, its identity; Fold, the
//   statement name = name (+) value; Warp, over the 32 lanes of a full warp (every lane calls it
//   with its `args[0]`): WarpOp::AllReduce gives every lane the fold of all 32, WarpOp::Scan
//   lane q the fold of lanes 0..q; Atomic, the statement that folds exprs[0] into element
//   exprs[1] of the spec's tensor `tensor` atomically (no thread's fold is lost).
// - Leaves of the checked spec, spelled by the backend's own printer of the statement the
//   kernel computes: IndexVar (the statement's index variable `ival`, bound by a Let whose
//   index_var is set), Size (the spec's size `ival`), Extent (dimension `dim` of tensor `ival`,
//   type int), Element (element args[0] of tensor `ival`, its row-major flat index, as a value
//   of the tensor's compute type), Spec (a spec expression `spec` of that statement, or with
//   `ival` >= 0 of the spec's statement `ival` in a kernel of several statements, its index
//   variables bound as above) and Compute (the
//   statement's assignment at its index variables); in both, each spec expression in
//   `overrides` is replaced by a loop IR value. Their `name` is the spec's text, for dumps.
// - GPU vectors (gpu_vec_t: `lanes` elements, at most 16 bytes): an Element of that type loads
//   the vector at its flat index, a multiple of the lanes, and Put stores one there; both need
//   the tensor's Address aligned to the vector. Lane takes one lane, MakeVec builds one from
//   its lanes. A Put of a scalar stores one element (rounded to f16 or bf16 where the tensor
//   holds them).
//
// A host kernel body (lower/host_bodies.h) may use two leaves of a running scan
// (lower/running_scans.h) `spec`, the reduction of the statement, which only the host printers
// print (a GPU printer asserts on them): FoldRange, the statement name = name (+) the fold of
// the reduction's terms at its variable's values [exprs[0], exprs[1]), in any order its
// tolerance allows (a printer may fold them as a SIMD reduction); and ScanWalk, the walk of the
// scan along the statement's innermost output index: from the output that index holds (bound by
// a mutable Let) up to exprs[0], each output computed, the reduction's variable (bound by a
// mutable Let) at the walk's next term and `name` the fold of the terms before it.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diag.h"

namespace sb {
struct Expr;
}

namespace sb::loops {

// ---- Types -----------------------------------------------------------------------------------

enum class TypeKind { Void, Int, Bool, Float, Vec, Ptr };

struct Type {
  TypeKind kind = TypeKind::Void;
  // Float, Vec, Ptr: the scalar type (F32 or F64; a Ptr or a scalar Float loaded through one may
  // also be of a storage type, F16 or BF16, which a Cast widens to F32)
  DType elem = DType::Unknown;
  bool mut = false;             // Ptr: the pointee may be written
  int lanes = 0;                // Vec: 0 for one native vector, else a GPU vector of this many
};

inline Type void_t() { return {}; }
inline Type int_t() { return {TypeKind::Int}; }    // a 64-bit signed integer
inline Type bool_t() { return {TypeKind::Bool}; }
inline Type float_t(DType d) { return {TypeKind::Float, d}; }
inline Type vec_t(DType d) { return {TypeKind::Vec, d}; }  // one native vector of d
// A GPU vector of `n` lanes of d (n * bytes of d at most 16): loaded and stored as one access.
inline Type gpu_vec_t(DType d, int n) {
  return {TypeKind::Vec, d, false, n};
}
inline Type ptr_t(DType d, bool mut) { return {TypeKind::Ptr, d, mut}; }
bool operator==(const Type& a, const Type& b);
std::string to_string(const Type& t);  // "int", "f32", "vec<f32>", "vec<f32 x 4>", ...

// ---- Expressions -----------------------------------------------------------------------------

enum class ExprKind {
  IntImm,     // ival (type int) or a bool immediate (type bool, ival 0 or 1)
  FloatImm,   // fval, type float
  Var,        // name: a parameter, a Let, a loop variable, a module constant
  Binary,     // op, args {a, b}
  Select,     // args {cond, then, else}
  Cast,       // args {value}, to `type`
  Load,       // name: the buffer; args: one index per dimension; width
  Broadcast,  // args {scalar}: a vector of Lanes(elem) copies
  Fma,        // args {a, b, c}: a * b + c, fused where the target has it
  Call,       // name: a function of the module; args
  Lanes,      // the target's native vector lane count for `elem` (type int)
  Workers,    // the number of worker threads the target offers (type int)
  PtrAdd,     // args {pointer, offset}: the address `offset` elements past `pointer`
  Gpu,        // gpu: a GPU index (type int)
  IndexVar,   // ival: the spec statement's index variable (type int); name: the spec's
  Extent,     // dimension `dim` of the spec's tensor `ival` (type int); name: the tensor's
  Size,       // the spec's size `ival` (type int); name: its name
  Element,    // args {flat}: an element of the spec's tensor `ival`; name: the tensor's
  Spec,       // spec: an expression of the spec statement; name: its text
  Identity,   // the identity of reduction `rop` over `elem` (type float of elem)
  Warp,       // warp: a warp-wide reduction `rop` of args {value} (the header's comment)
  Lane,       // args {vector}: its lane `ival` (a constant), a scalar of its elem
  MakeVec,    // args: the lanes of a GPU vector, in order (type: gpu_vec_t)
  Address,    // the address of the spec's tensor `ival` (type int); name: the tensor's
};

enum class WarpOp { AllReduce, Scan };

// The GPU indices a kernel body reads: its thread's index in the block (x, y), its block's in
// the grid (x, y, z), the block's extent along x and the grid's along x and z.
enum class GpuIndex {
  ThreadX,
  ThreadY,
  ThreadZ,
  BlockX,
  BlockY,
  BlockZ,
  BlockDimX,
  GridDimX,
  GridDimZ,
};
const char* gpu_index_name(GpuIndex g);  // "thread_idx.x", ..., "grid_dim.x"

enum class BinOp { Add, Sub, Mul, Div, Mod, Min, Max, Lt, Le, Gt, Ge, Eq, Ne, And, Or };
const char* binop_name(BinOp op);  // "+", "-", "*", "/", "%", "min", "max", "<", ..., "||"

enum class Width { Scalar, Vector };

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

// Compute and Spec: spec expression `expr` (of text `text`, for dumps) replaced by loop IR
// `value`.
struct Override {
  const sb::Expr* expr = nullptr;
  std::string text;
  ExprPtr value;
};

struct Expr {
  ExprKind kind = ExprKind::IntImm;
  Type type;
  int64_t ival = 0;
  double fval = 0;
  std::string name;
  BinOp op = BinOp::Add;
  Width width = Width::Scalar;
  DType elem = DType::Unknown;  // Lanes
  GpuIndex gpu = GpuIndex::ThreadX;
  int dim = 0;                      // Extent
  const sb::Expr* spec = nullptr;   // Spec
  ReduceOp rop = ReduceOp::Sum;     // Identity, Warp
  WarpOp warp = WarpOp::AllReduce;  // Warp
  std::vector<ExprPtr> args;
  std::vector<Override> overrides;  // Spec: its spec expressions replaced by loop IR values
};

// Builders (types are derived from the operands).
ExprPtr imm(int64_t v);
ExprPtr bool_imm(bool v);
ExprPtr fimm(double v, DType t);
ExprPtr var(const std::string& name, Type t);
ExprPtr binary(BinOp op, ExprPtr a, ExprPtr b);
ExprPtr add(ExprPtr a, ExprPtr b);
ExprPtr sub(ExprPtr a, ExprPtr b);
ExprPtr mul(ExprPtr a, ExprPtr b);
ExprPtr div(ExprPtr a, ExprPtr b);
ExprPtr mod(ExprPtr a, ExprPtr b);
ExprPtr min(ExprPtr a, ExprPtr b);
ExprPtr max(ExprPtr a, ExprPtr b);
ExprPtr select(ExprPtr c, ExprPtr a, ExprPtr b);
ExprPtr cast(Type t, ExprPtr v);
// A load from buffer `buf` of element type `elem` (a register buffer of vectors: vec_t).
ExprPtr load(const std::string& buf, Type elem, std::vector<ExprPtr> index,
             Width w = Width::Scalar);
ExprPtr broadcast(ExprPtr scalar);
ExprPtr fma(ExprPtr a, ExprPtr b, ExprPtr c);
ExprPtr call(const std::string& fn, Type result, std::vector<ExprPtr> args);
ExprPtr lanes(DType t);
ExprPtr workers();
ExprPtr ptr_add(ExprPtr p, ExprPtr offset);
ExprPtr gpu(GpuIndex g);
// The leaves of the checked spec (the header's comment); `text` is what a dump shows.
ExprPtr index_var(int v, const std::string& text);
ExprPtr extent(int tensor, int dim, const std::string& text);
ExprPtr size(int s, const std::string& text);
ExprPtr element(int tensor, Type value, ExprPtr flat, const std::string& text);
ExprPtr spec_expr(const sb::Expr& e, Type t, const std::string& text,
                  std::vector<Override> overrides = {});
// Spec expression `e` of statement `st` of `spec` as a leaf of type `t`, its spec text for dumps,
// each spec expression of `overrides` in it replaced by a loop IR value.
ExprPtr spec_leaf(const Spec& spec, const Statement& st, const sb::Expr& e, Type t,
                  std::vector<Override> overrides = {});
// The same of statement `k` of `spec`, named (ival) for a kernel of several statements.
ExprPtr stmt_leaf(const Spec& spec, size_t k, const sb::Expr& e, Type t,
                  std::vector<Override> overrides = {});
// The reductions of the spec's arithmetic (the header's comment); `elem` is a spec scalar type.
ExprPtr identity(ReduceOp op, DType elem);
ExprPtr warp(WarpOp w, ReduceOp op, ExprPtr value);
// Lane `q` of vector `v`; the GPU vector of `lanes` (scalars of one type); the address of the
// spec's tensor `tensor` (named `text`).
ExprPtr lane(ExprPtr v, int q);
ExprPtr make_vec(std::vector<ExprPtr> lanes);
ExprPtr address(int tensor, const std::string& text);
// (a + b - 1) / b * b: a rounded up to a multiple of b (non-negative a, positive b).
ExprPtr round_up(ExprPtr a, ExprPtr b);

bool equal(const Expr& a, const Expr& b);  // structural equality

// ---- Statements ------------------------------------------------------------------------------

enum class StmtKind {
  For,
  If,
  Let,
  Assign,
  Alloc,
  Store,
  Evaluate,
  Return,
  Comment,
  Barrier,    // GPU: the block's threads (with `warp`, the warp's) wait for each other
  Compute,    // the spec statement's assignment (the header's comment)
  Fold,       // name[exprs[1..]] = name[...] (+) exprs[0] under reduction `rop` of type `type`
              // (the header's); without indices, variable name
  While,      // while exprs[0] holds: body
  Atomic,     // tensor[exprs[1]] = tensor[exprs[1]] (+) exprs[0], atomically (the header's)
  FoldRange,  // name = name (+) the terms of reduction `spec` over [exprs[0], exprs[1])
  ScanWalk,   // the walk of running scan `spec` up to output exprs[0], its fold in `name`
  Put,        // element exprs[1] (its flat index) of the spec's tensor `tensor` = exprs[0]
};
enum class ForKind { Serial, Parallel, Vector, Unrolled };
enum class MemScope { Register, StackLocal, HeapScratch, Shared };
const char* for_kind_name(ForKind k);    // "serial", "parallel", "vector", "unrolled"
const char* mem_scope_name(MemScope s);  // "register", "stack_local", "heap_scratch", "shared"

struct Stmt;
using StmtPtr = std::shared_ptr<const Stmt>;
using Block = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind = StmtKind::Comment;
  std::string name;   // For: the loop variable; Let/Assign: the variable; Alloc/Store: buffer
  std::string text;   // Comment; FoldRange, ScanWalk: the reduction's spec text, for dumps
  Type type;          // Let: the variable's type; Alloc/Store: the element type
  ForKind for_kind = ForKind::Serial;
  MemScope scope = MemScope::StackLocal;
  bool mut = false;           // Let: assigned again later
  bool persistent = false;    // Alloc HeapScratch: may be kept between calls
  bool nontemporal = false;   // Store
  bool warp = false;          // Barrier: the warp's lanes only
  int64_t unroll = 0;         // For Serial: a hint to unroll by this factor (a printer may not)
  int64_t align = 0;          // Alloc: bytes (0: the element's)
  Width width = Width::Scalar;  // Store
  // For: {min, end, step}; If: {cond}; Let/Assign: {value}; Alloc: the dimensions;
  // Store: {value, index...}; Evaluate: {call}; Return: {} or {value}.
  std::vector<ExprPtr> exprs;
  ExprPtr threads;  // For Parallel: at most this many threads (null: the target's choice)
  // Let, For: binds the spec statement's index variable (then `name` is its text); Assign:
  // assigns it
  int index_var = -1;
  int lane = -1;                 // Assign: to this lane of vector `name` (a GPU vector)
  ReduceOp rop = ReduceOp::Sum;  // Fold, Atomic
  int tensor = -1;               // Atomic, Put: the spec's tensor
  const sb::Expr* spec = nullptr;  // FoldRange, ScanWalk: the statement's running scan
  // Compute: the spec expressions replaced by loop IR values
  std::vector<Override> overrides;
  Block body;     // For, Alloc; If: the then branch
  Block other;    // If: the else branch; Alloc: on_fail
};

StmtPtr for_loop(const std::string& v, ExprPtr min, ExprPtr end, ExprPtr step, ForKind k,
                 Block body, ExprPtr threads = nullptr, int64_t unroll = 0);
StmtPtr if_then(ExprPtr cond, Block then, Block otherwise = {});
StmtPtr let(const std::string& v, ExprPtr value, bool mut = false);
StmtPtr assign(const std::string& v, ExprPtr value);
StmtPtr alloc(const std::string& buf, Type elem, std::vector<ExprPtr> dims, MemScope s,
              Block body, int64_t align = 0, bool persistent = false, Block on_fail = {});
StmtPtr store(const std::string& buf, Type elem, std::vector<ExprPtr> index, ExprPtr value,
              Width w = Width::Scalar, bool nontemporal = false);
StmtPtr evaluate(ExprPtr call);
StmtPtr ret(ExprPtr value = nullptr);
StmtPtr comment(const std::string& text);
StmtPtr barrier(bool warp = false);
// A Let of the spec statement's index variable `v` (named `text` in the spec).
StmtPtr let_index(int v, const std::string& text, ExprPtr value, bool mut = false);
StmtPtr assign_index(int v, const std::string& text, ExprPtr value);
// Lane `q` of GPU vector `v` (of type `t`) = `value`.
StmtPtr assign_lane(const std::string& v, Type t, int q, ExprPtr value);
// Element `flat` of the spec's tensor `tensor` (named `text`) = `value`; a GPU vector value
// (gpu_vec_t) stores its lanes from there, `flat` a multiple of them and the tensor aligned to
// the vector (as a vector Element is loaded).
StmtPtr put(int tensor, const std::string& text, ExprPtr flat, ExprPtr value);
StmtPtr compute(std::vector<Override> overrides = {});
StmtPtr fold(const std::string& v, ReduceOp op, Type t, ExprPtr value);
// The same fold into element `index` of register buffer `buf`.
StmtPtr fold_at(const std::string& buf, std::vector<ExprPtr> index, ReduceOp op, Type t,
                ExprPtr value);
StmtPtr while_loop(ExprPtr cond, Block body);
StmtPtr atomic_fold(int tensor, ExprPtr index, ReduceOp op, Type t, ExprPtr value);
// The running scan's leaves (the header's comment), of reduction `red` (`text` its spec text).
StmtPtr fold_range(const std::string& acc, const sb::Expr& red, const std::string& text, ExprPtr lo,
                   ExprPtr hi);
StmtPtr scan_walk(const std::string& acc, const sb::Expr& red, const std::string& text,
                  ExprPtr end);
// A For whose variable is the spec statement's index variable `v` (named `text` in the spec).
StmtPtr for_index(int v, const std::string& text, ExprPtr min, ExprPtr end, ExprPtr step,
                  Block body);

// `more` appended to `to`; and the statements of `parts`, in order, as one block.
void append(Block& to, Block more);
Block joined(std::initializer_list<const Block*> parts);

// ---- Functions and modules -------------------------------------------------------------------

struct Param {
  std::string name;
  Type type;
  bool noalias = false;  // Ptr: no other parameter reaches the same memory (C __restrict)
};

struct Function {
  std::string name;
  std::vector<std::string> doc;  // comment lines above the function
  std::vector<Param> params;
  Type result;  // void_t() or int_t()
  bool inline_hint = false;
  Block body;
};

struct Constant {
  std::string name;
  ExprPtr value;  // of module constants, immediates, Lanes and Workers only
  std::string doc;
};

struct Module {
  std::string name;
  std::vector<std::string> doc;
  std::vector<Constant> constants;  // in order: a constant may use the earlier ones
  std::vector<Function> functions;  // in order: a function calls only earlier ones
};

// The values `e` (an integer expression of immediates, module constants and Select) may take
// over every choice of its Select conditions; empty when `e` uses anything else.
std::set<int64_t> possible_values(const Expr& e, const Module& m);

// ---- Strict functors ---------------------------------------------------------------------------
// One pure virtual per node kind; visit() dispatches with a switch without `default:` (codegen
// builds with -Werror=switch), so a kind added above fails to compile here and then in every
// functor that lacks its handler (see ir/visitor.h).

template <typename Sig>
class ExprFunctor;

template <typename R, typename... Args>
class ExprFunctor<R(Args...)> {
 public:
  virtual ~ExprFunctor() = default;
  R visit(const Expr& e, Args... args) {
    switch (e.kind) {
      case ExprKind::IntImm:
        return visit_int_imm(e, args...);
      case ExprKind::FloatImm:
        return visit_float_imm(e, args...);
      case ExprKind::Var:
        return visit_var(e, args...);
      case ExprKind::Binary:
        return visit_binary(e, args...);
      case ExprKind::Select:
        return visit_select(e, args...);
      case ExprKind::Cast:
        return visit_cast(e, args...);
      case ExprKind::Load:
        return visit_load(e, args...);
      case ExprKind::Broadcast:
        return visit_broadcast(e, args...);
      case ExprKind::Fma:
        return visit_fma(e, args...);
      case ExprKind::Call:
        return visit_call(e, args...);
      case ExprKind::Lanes:
        return visit_lanes(e, args...);
      case ExprKind::Workers:
        return visit_workers(e, args...);
      case ExprKind::PtrAdd:
        return visit_ptr_add(e, args...);
      case ExprKind::Gpu:
        return visit_gpu(e, args...);
      case ExprKind::IndexVar:
        return visit_index_var(e, args...);
      case ExprKind::Extent:
        return visit_extent(e, args...);
      case ExprKind::Size:
        return visit_size(e, args...);
      case ExprKind::Element:
        return visit_element(e, args...);
      case ExprKind::Spec:
        return visit_spec(e, args...);
      case ExprKind::Identity:
        return visit_identity(e, args...);
      case ExprKind::Warp:
        return visit_warp(e, args...);
      case ExprKind::Lane:
        return visit_lane(e, args...);
      case ExprKind::MakeVec:
        return visit_make_vec(e, args...);
      case ExprKind::Address:
        return visit_address(e, args...);
    }
    SB_ASSERT(false, "loop IR expression of unknown kind");
    return visit_int_imm(e, args...);
  }

 protected:
  virtual R visit_int_imm(const Expr& e, Args... args) = 0;
  virtual R visit_float_imm(const Expr& e, Args... args) = 0;
  virtual R visit_var(const Expr& e, Args... args) = 0;
  virtual R visit_binary(const Expr& e, Args... args) = 0;
  virtual R visit_select(const Expr& e, Args... args) = 0;
  virtual R visit_cast(const Expr& e, Args... args) = 0;
  virtual R visit_load(const Expr& e, Args... args) = 0;
  virtual R visit_broadcast(const Expr& e, Args... args) = 0;
  virtual R visit_fma(const Expr& e, Args... args) = 0;
  virtual R visit_call(const Expr& e, Args... args) = 0;
  virtual R visit_lanes(const Expr& e, Args... args) = 0;
  virtual R visit_workers(const Expr& e, Args... args) = 0;
  virtual R visit_ptr_add(const Expr& e, Args... args) = 0;
  virtual R visit_gpu(const Expr& e, Args... args) = 0;
  virtual R visit_index_var(const Expr& e, Args... args) = 0;
  virtual R visit_extent(const Expr& e, Args... args) = 0;
  virtual R visit_size(const Expr& e, Args... args) = 0;
  virtual R visit_element(const Expr& e, Args... args) = 0;
  virtual R visit_spec(const Expr& e, Args... args) = 0;
  virtual R visit_identity(const Expr& e, Args... args) = 0;
  virtual R visit_warp(const Expr& e, Args... args) = 0;
  virtual R visit_lane(const Expr& e, Args... args) = 0;
  virtual R visit_make_vec(const Expr& e, Args... args) = 0;
  virtual R visit_address(const Expr& e, Args... args) = 0;
};

template <typename Sig>
class StmtFunctor;

template <typename R, typename... Args>
class StmtFunctor<R(Args...)> {
 public:
  virtual ~StmtFunctor() = default;
  R visit(const Stmt& s, Args... args) {
    switch (s.kind) {
      case StmtKind::For:
        return visit_for(s, args...);
      case StmtKind::If:
        return visit_if(s, args...);
      case StmtKind::Let:
        return visit_let(s, args...);
      case StmtKind::Assign:
        return visit_assign(s, args...);
      case StmtKind::Alloc:
        return visit_alloc(s, args...);
      case StmtKind::Store:
        return visit_store(s, args...);
      case StmtKind::Evaluate:
        return visit_evaluate(s, args...);
      case StmtKind::Return:
        return visit_return(s, args...);
      case StmtKind::Comment:
        return visit_comment(s, args...);
      case StmtKind::Barrier:
        return visit_barrier(s, args...);
      case StmtKind::Compute:
        return visit_compute(s, args...);
      case StmtKind::Fold:
        return visit_fold(s, args...);
      case StmtKind::While:
        return visit_while(s, args...);
      case StmtKind::Atomic:
        return visit_atomic(s, args...);
      case StmtKind::FoldRange:
        return visit_fold_range(s, args...);
      case StmtKind::ScanWalk:
        return visit_scan_walk(s, args...);
      case StmtKind::Put:
        return visit_put(s, args...);
    }
    SB_ASSERT(false, "loop IR statement of unknown kind");
    return visit_comment(s, args...);
  }

 protected:
  virtual R visit_for(const Stmt& s, Args... args) = 0;
  virtual R visit_if(const Stmt& s, Args... args) = 0;
  virtual R visit_let(const Stmt& s, Args... args) = 0;
  virtual R visit_assign(const Stmt& s, Args... args) = 0;
  virtual R visit_alloc(const Stmt& s, Args... args) = 0;
  virtual R visit_store(const Stmt& s, Args... args) = 0;
  virtual R visit_evaluate(const Stmt& s, Args... args) = 0;
  virtual R visit_return(const Stmt& s, Args... args) = 0;
  virtual R visit_comment(const Stmt& s, Args... args) = 0;
  virtual R visit_barrier(const Stmt& s, Args... args) = 0;
  virtual R visit_compute(const Stmt& s, Args... args) = 0;
  virtual R visit_fold(const Stmt& s, Args... args) = 0;
  virtual R visit_while(const Stmt& s, Args... args) = 0;
  virtual R visit_atomic(const Stmt& s, Args... args) = 0;
  virtual R visit_fold_range(const Stmt& s, Args... args) = 0;
  virtual R visit_scan_walk(const Stmt& s, Args... args) = 0;
  virtual R visit_put(const Stmt& s, Args... args) = 0;
};

// Every statement of `b`, pre-order (bodies, then else branches / on_fail), for checks and
// tests that look for a node.
void for_each_stmt(const Block& b, const std::function<void(const Stmt&)>& f);

// The loop IR as text, for --dump-ir and tests: one node per line, nested by indentation.
std::string to_string(const Expr& e);
std::string dump(const Module& m);
std::string dump(const Block& b);  // a kernel body, at indentation 0

}  // namespace sb::loops
