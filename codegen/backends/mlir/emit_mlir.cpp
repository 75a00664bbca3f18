#include "backends/mlir/emit_mlir.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/common/emit_common.h"
#include "backends/mlir/mlir_pipelines.h"
#include "backends/mlir/print_loops.h"
#include "backends/mlir/strategies.h"
#include "ir/affine.h"
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

// The math-dialect op of each intrinsic MLIR spells with one. log1p and expm1 are not among
// them: MLIR 19's convert-math-to-llvm lowers them as log(1 + x) and exp(x) - 1, which lose
// all precision near 0, so they reach the printer as their accurate default expansions; nor is
// rsqrt, which the loops and tiled_vector pipelines fail to legalize.
struct MlirMath {
  Fn fn;
  const char* op;
};

constexpr MlirMath kMlirMath[] = {
    {Fn::Exp, "math.exp"},   {Fn::Log, "math.log"},         {Fn::Sqrt, "math.sqrt"},
    {Fn::Tanh, "math.tanh"}, {Fn::Erf, "math.erf"},         {Fn::Pow, "math.powf"},
    {Fn::Sin, "math.sin"},   {Fn::Cos, "math.cos"},         {Fn::Floor, "math.floor"},
    {Fn::Ceil, "math.ceil"}, {Fn::Round, "math.roundeven"},  // halves to even, as the spec
                                                             // language's round
};

const char* mlir_math(Fn fn) {
  for (const MlirMath& m : kMlirMath)
    if (m.fn == fn) return m.op;
  return nullptr;
}

const char* mlir_type(DType t) {
  const char* m = scalar(t).mlir_type;
  SB_ASSERT(m, std::string("no MLIR type for ") + dtype_name(t));
  return m;
}

// A float literal MLIR reads back exactly: the shortest %g text that round-trips, always with a
// '.' (MLIR's float literals need one); infinities and NaN as bit patterns.
std::string mlir_float(double v, DType t) {
  const ScalarType& st = scalar(t);
  SB_ASSERT(st.kind == ScalarKind::Float, std::string("an MLIR float literal of type ") + st.name);
  if (!std::isfinite(v)) {
    if (std::isnan(v)) return st.mlir_nan;
    return v > 0 ? st.mlir_inf : st.mlir_neg_inf;
  }
  char buf[64];
  const double x = st.round(v);
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, x);
    if (st.parse(buf) == x) break;
  }
  std::string s = buf;
  if (s.find('.') == std::string::npos) {
    size_t e = s.find('e');
    if (e == std::string::npos)
      s += ".0";
    else
      s.insert(e, ".0");
  }
  return s;
}

std::string memref_type(int rank, DType t) {
  std::string s = "memref<";
  for (int i = 0; i < rank; ++i) s += "?x";
  return s + mlir_type(t) + ">";
}

bool uses_any_var(const Expr& e) {
  if (e.kind == ExprKind::IndexVar) return true;
  for (const auto& a : e.args)
    if (uses_any_var(*a)) return true;
  return false;
}

// The index variables `e` depends on, including through the ranges of reductions inside it.
void vars_used(const Expr& e, const Statement& st, std::set<int>& out) {
  if (e.kind == ExprKind::IndexVar) out.insert(e.ref);
  if (e.kind == ExprKind::Reduce) {
    vars_used(*st.vars[e.ref].lo, st, out);
    vars_used(*st.vars[e.ref].hi, st, out);
  }
  for (const auto& a : e.args) vars_used(*a, st, out);
}

// Whether a reduction becomes a reduction dimension of a linalg.generic: its range must not
// depend on any index variable (a generic's iteration domain is a box). Other reductions are
// scf.for loops inside the body of the generic that evaluates them.
bool linalg_reduction(const Expr& r, const Statement& st) {
  const IndexVar& iv = st.vars[r.ref];
  return !uses_any_var(*iv.lo) && !uses_any_var(*iv.hi);
}

// ---- Code generation for one function body --------------------------------------------------

// The cache blocks of strategy blocked_matmul (its parameters mc, nc, kc).
struct GemmBlocks {
  int64_t mc = 0, nc = 0, kc = 0;
  int64_t mr = 0;  // a thread's rows are a multiple of it (mlir_gemm_row_multiple)
};

// The padding of each row of blocked_matmul's packed block, in bytes: a row of nc elements plus
// a cache line, so that the rows of a power-of-two-wide block do not share cache sets.
constexpr int64_t kGemmPackPadBytes = 64;

// When a row group's rank-2 outputs (streamed_row) write with non-temporal stores: where the
// streaming pass's tensors of the group reach the threshold (a row group of the row_fusion pass),
// always (a single statement already under that test), or never (a single statement below it,
// or one the streaming pass does not stream).
enum class RowStream { ByThreshold, Always, Never };

class Body {
  // A memref value: a view of a row (plane) of a tensor, a row-local buffer, a line buffer.
  struct View {
    std::string name;  // SSA name
    std::string type;  // its memref type
    DType elem;        // its element type (a row-local buffer of an f16/bf16 temp holds f32)
    int fixed = 1;     // the leading dimensions the view fixes at the row's indices (row_idx_)
  };

 public:
  // With `reassoc`, floating-point sums carry fastmath<reassoc>: the spec leaves the order of a
  // reduction's terms open, and the flag lets LLVM vectorise the sum (as `omp simd reduction`
  // does in the cpu backend).
  // With `parallel` (the openmp strategy), fused row groups and full reductions are explicit
  // scf.parallel loops over blocks (emit_row_group, emit_blocked_reduce).
  // Under `parallel`, `tiles` are the variant's tiles of the tile_transposes pass's statements.
  // With `gemm` (strategy blocked_matmul), contraction statements (match_contraction) are block
  // products (emit_gemm).
  // With `im2col` as well (strategy im2col), gathered GEMMs (host::is_gathered_gemm: convolutions)
  // are a gather into a column buffer and block products (emit_im2col).
  Body(const Spec& spec, bool reassoc, bool parallel, const Tiles& tiles = {},
       std::optional<GemmBlocks> gemm = std::nullopt, bool im2col = false)
      : spec_(spec),
        w_(2),
        reassoc_(reassoc),
        parallel_(parallel),
        tiles_(tiles),
        gemm_(gemm),
        im2col_(im2col) {}

  // The element types of the block products emitted, for mlir_gemm_schedule.
  const std::set<DType>& gemm_types() const { return gemm_types_; }
  // Whether a generic reads an operand with a stride other than 0 or 1 along its innermost
  // dimension (host::PipelineFacts::strided_inner).
  bool strided_inner() const { return strided_inner_; }
  // Whether the body calls omp_get_max_threads (declared in the module).
  bool thread_count() const { return thread_count_; }

  // Whether the body holds explicit scf.parallel loops (whose linalg ops are then lowered to
  // sequential loops inside them: mlir_parallel_loops_schedule()).
  bool explicit_loops() const { return explicit_loops_; }

  CodeWriter& w() { return w_; }
  std::string fresh() { return "%" + std::to_string(next_++); }

  // Function-scope values: every tensor extent, as index values.
  void emit_extents() {
    for (size_t t = 0; t < spec_.tensors.size(); ++t) {
      std::vector<std::string> dims;
      for (const auto& d : spec_.tensors[t].shape) dims.push_back(val(*d));
      extents_.push_back(dims);
    }
  }

  void emit_statement(const Statement& st) {
    st_ = &st;
    w_.line("// " + source_text(st, spec_));
    const Tensor& out = spec_.tensors[st.out];
    // Inside a row loop the statement computes row row_ of its output (dimension 0 is fixed;
    // dimensions 0 to row_dims_ - 1 under a collapsed range, row_idx_).
    const bool in_row = !row_.empty();
    std::string out_mem = "%" + spec_.tensors[st.out].name;
    std::string out_ty = memref_type(static_cast<int>(out.shape.size()), out.type);
    if (in_row) {
      out_mem = row_view_.at(st.out).name;
      out_ty = row_view_.at(st.out).type;
      for (int d = 0; d < row_dims_; ++d) loop_var_[d] = row_idx_.at(static_cast<size_t>(d));
    }
    const std::vector<int> all_outer = outer_dims(st, in_row);
    const size_t k = static_cast<size_t>(&st - spec_.stmts.data());
    // Under `parallel`, a statement of rank >= 2 on its own runs row by row in parallel blocks
    // of rows, each row's generic a sequential loop nest: as one generic, its output dimensions
    // would be one scf.parallel that the OpenMP lowering collapses into a single loop, which
    // recomputes every index from the collapsed one and is not vectorised. The mlir openmp
    // variant of outer_add (2048 x 2048) ran 5.4x slower than its sequential loops variant so
    // (3.08 against 0.57 ms, results/vm/host-10rep-20261204.json). Where the parallelize pass
    // collapses leading output loops (ParallelChoice::collapse: rank 4 and more), the parallel
    // range is theirs, in blocks of planes of the remaining dimensions (emit_planes).
    auto plain = [&] {
      if (!in_row && parallel_ && st.rank() >= 2) {
        emit_row_group(RowGroup{k, k, {}}, RowStream::Never, parallel_choice(spec_, st).collapse);
        st_ = &st;
        return;
      }
      if (!in_row && output_blocks(st)) return emit_output_blocks(st, out_mem, out_ty);
      if (in_row)
        if (const std::optional<int64_t> edge = row_edge(st))
          return emit_row_segments(st, out_mem, out_ty, *edge);
      emit_plain(st, out_mem, out_ty, all_outer);
    };
    std::optional<Contraction> contraction;
    if (!in_row && gemm_) contraction = match_mlir_gemm(spec_, st);
    std::optional<GatheredGemm> gathered;
    if (!in_row && gemm_ && im2col_ && host::is_gathered_gemm(spec_, st))
      gathered = match_gathered_gemm(spec_, st);
    if (gathered) {
      emit_im2col(st, *gathered);
    } else if (contraction) {
      emit_gemm(st, *contraction);
    } else if (const Expr* scan = in_row ? nullptr : running_scan(spec_, st, /*rows=*/false)) {
      emit_running_scan(st, *scan, out_mem, out_ty);
    } else if (in_row && streaming_ && streamed_row(st)) {
      auto stream = [&] { emit_stream_range(st, out_mem, out_ty, extents_[st.out][1], false); };
      if (stream_cond_.empty())
        stream();
      else
        emit_if(stream_cond_, stream, plain);
    } else if (!in_row && parallel_ && tile_choice(spec_, st).dim >= 0) {
      emit_tiles(st, out_mem, out_ty);
    } else if (!in_row && row_contraction(st)) {
      emit_row_group(RowGroup{k, k, {}}, RowStream::ByThreshold,
                     parallel_choice(spec_, st).collapse);
      st_ = &st;
    } else if (!in_row && streamable(st)) {
      emit_if(
          stream_condition(choice(st).tensors),
          [&] {
            if (st.rank() == 1)
              emit_stream_range(st, out_mem, out_ty, extents_[st.out][0], true);
            else
              emit_row_group(RowGroup{k, k, {}}, RowStream::Always);
            st_ = &st;
          },
          plain);
    } else {
      plain();
    }
    for (int d = 0; d < (in_row ? row_dims_ : 1); ++d) loop_var_.erase(d);
  }

  // A contraction `m` of `st` under blocked_matmul: C = X * Y in blocks, in Goto's loop order. An
  // scf.parallel loop gives each OpenMP thread (omp_get_max_threads) an equal chunk of the rows of
  // C, a multiple of mr. A thread zeroes its rows, then for each nc-wide column block and kc-deep
  // slice of the sum copies that block of Y into a buffer of its own (rows padded by
  // kGemmPackPadBytes, transposed there when Y is read y[j, k]) and, for each block of mc of its
  // rows, adds the block product X * Y to C: a linalg.generic marked mlir_gemm_mark(type), which
  // mlir_gemm_schedule tiles into register tiles. An epilogue (`+ bias[j]`) then runs on C as a
  // statement of its own. Operands of a storage type (f16, bf16; match_mlir_gemm) are widened to
  // the output's type while they are copied: Y's block into the buffer as above, X's block of mc
  // rows into a second buffer of the thread's (heap, mc x kc, rows along k), so that the block
  // product and its register tiles are those of operands of the output's type.
  void emit_gemm(const Statement& st, const Contraction& m) {
    const IndexVar& kv = st.vars[m.k];
    GemmOperands g;
    g.type = m.type;
    g.x = "%" + spec_.tensors[m.x].name;
    g.y = "%" + spec_.tensors[m.y].name;
    g.c = "%" + spec_.tensors[st.out].name;
    g.x_name = spec_.tensors[m.x].name;
    g.y_name = spec_.tensors[m.y].name;
    g.x_full = memref_type(2, m.x_type);
    g.y_full = memref_type(2, m.y_type);
    g.c_full = memref_type(2, m.type);
    g.x_type = m.x_type;
    g.y_type = m.y_type;
    g.x_trans = m.x_trans;
    g.y_trans = m.y_trans;
    g.rows = extents_[st.out][0];
    g.cols = extents_[st.out][1];
    g.range = [&](const std::string& zero) {
      const std::string lo = val(*kv.lo);
      return std::make_pair(
          lo, op("arith.maxsi", {op("arith.subi", {val(*kv.hi), lo}, DType::Index), zero},
                 DType::Index));
    };
    emit_block_products(g);
    if (m.epilogue) {
      epilogues_.push_back(std::make_unique<Statement>(epilogue_statement(spec_, st, m.reduce)));
      const Statement& epi = *epilogues_.back();
      // A plain elementwise statement: the other forms index the spec's own statements.
      st_ = &epi;
      w_.line("// The epilogue: " + source_text(epi, spec_));
      const Tensor& o = spec_.tensors[st.out];
      emit_plain(epi, g.c, memref_type(static_cast<int>(o.shape.size()), o.type),
                 outer_dims(epi, false));
      st_ = &st;
    }
  }

  // A gathered GEMM `g` of `st` under im2col (lower/patterns.h: match_gathered_gemm, a
  // convolution): per batch element, and per group of a grouped one, the gathered term at every
  // (k..., N...) into a K x N column buffer (memref.alloc, once), its first loop in parallel, its
  // last in three parts along the output's last index, checked only where a read may be outside,
  // then the element's (group's) rows of the output = the weights' rows (a rows x K matrix) times
  // the buffer, as the block products of blocked_matmul (emit_block_products). A grouped one with
  // at least two (element, group) pairs per thread runs the pairs side by side instead, each
  // thread a chunk of them in a buffer of its own. The cpu and mojo im2col variants run the same
  // gather and GEMM (backends/common: emit_im2col), not the same block products.
  void emit_im2col(const Statement& st, const GatheredGemm& g) {
    const std::string ty = mlir_type(g.type);
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    auto extent = [&](int v) {
      const auto [t, d] = gathered_extent(spec_, st, g, v);
      return extents_.at(static_cast<size_t>(t)).at(d);
    };
    auto product = [&](const std::vector<int>& vars) {
      std::string p = one;
      for (int v : vars) p = op("arith.muli", {p, extent(v)}, DType::Index);
      return p;
    };
    // The row-major flat index of `vars` (bound in loop_var_) over their extents.
    auto flat = [&](const std::vector<int>& vars) {
      std::string f = zero;
      for (int v : vars)
        f = op("arith.addi", {op("arith.muli", {f, extent(v)}, DType::Index), loop_var_.at(v)},
               DType::Index);
      return f;
    };
    auto open_for = [&](int v, bool parallel) {
      loop_var_[v] = fresh();
      w_.open(std::string(parallel ? "scf.parallel (" : "scf.for ") + loop_var_[v] +
              (parallel ? ") = (" : " = ") + zero + (parallel ? ") to (" : " to ") + extent(v) +
              (parallel ? ") step (" : " step ") + one + (parallel ? ") {" : " {"));
    };
    const std::string wname = spec_.tensors[g.w].name, yname = spec_.tensors[st.out].name;
    w_.line("// As im2col: per batch element" + std::string(g.group ? " and group" : "") +
            ", the gathered term at every (k..., N...) into the K x N");
    w_.line("// buffer, then " + yname + " (rows x N) = " + wname +
            " (rows x K) * the buffer, as block products.");
    const std::string rows_all = product(g.m), n = product(g.n), k = product(g.k);
    // Rows per group: q times the other output indices of the weights' rows.
    std::string q = rows_all, groups = one, group_size;
    if (g.group) {
      group_size = val(*g.group_size);
      if (value_type(*g.group_size) != DType::Index)
        group_size = cast(group_size, value_type(*g.group_size), DType::Index);
      q = op("arith.muli", {group_size, product(std::vector<int>(g.m.begin() + 1, g.m.end()))},
             DType::Index);
      // ceil(rows / q): none where there are no rows (q may then be 0).
      groups =
          op("arith.divsi",
             {op("arith.addi", {rows_all, op("arith.subi", {q, one}, DType::Index)}, DType::Index),
              op("arith.maxsi", {q, one}, DType::Index)},
             DType::Index);
    }
    const std::string col_ty = memref_type(2, g.type);
    auto alloc_col = [&] {
      const std::string col = fresh();
      w_.line(col + " = memref.alloc(" + k + ", " + n +
              ") {alignment = " + std::to_string(kStreamLineBytes) + " : i64} : " + col_ty);
      return col;
    };
    explicit_loops_ = true;
    // One batch element's (flat index b; its indices bound) group gi (m0 bound to its first
    // row): the gather into `col`, then the product. With `serial` on the calling thread, else
    // the gather's first loop and the product's rows shared out.
    auto item = [&](const std::string& col, const std::string& b, const std::string& gi,
                    bool serial, const std::string& pack) {
      // The gather, the innermost loop along the output's last index.
      std::vector<int> loops = g.k;
      loops.insert(loops.end(), g.n.begin(), g.n.end());
      w_.line(
          "// The columns: the gathered term at (k, p), k over the sum's indices, p over the "
          "output's last.");
      // Along the output's last index (where there is one), the outputs within the reads'
      // reach of either end apart (lower/vectorize.h: exact_tap_edge), so that a part whose reads
      // are all inside (inside_condition, every other index at its value) loads without the
      // boundary rule, as emit_row_segments' parts do.
      const bool along = !g.n.empty();
      const size_t opened = loops.size() - (along ? 1 : 0);
      for (size_t i = 0; i < opened; ++i) open_for(loops[i], i == 0 && !serial);
      auto store = [&] {
        const std::string v = cast(val(*g.gathered), value_type(*g.gathered), g.type);
        w_.line("memref.store " + v + ", " + col + "[" + flat(g.k) + ", " + flat(g.n) +
                "] : " + col_ty);
      };
      if (!along) {
        store();
      } else {
        const int j = loops.back();
        for (const auto& [lo, hi] :
             edge_parts(zero, extent(j), exact_tap_edge(spec_, st, *g.gathered))) {
          auto part = [&, lo = lo, hi = hi] {
            loop_var_[j] = fresh();
            w_.open("scf.for " + loop_var_[j] + " = " + lo + " to " + hi + " step " + one + " {");
            store();
            w_.close("}");
            loop_var_.erase(j);
          };
          const std::optional<std::string> inside =
              inside_condition(st, *g.gathered, j, lo, hi, std::set<int>{});
          if (!inside)
            part();
          else
            emit_inside_or_checked(
                *inside, "// Every read of the part inside its tensor: no boundary rule.", part);
        }
      }
      for (size_t i = opened; i-- > 0;) {
        if (i == 0 && !serial) w_.line("scf.reduce");
        w_.close("}");
        loop_var_.erase(loops[i]);
      }
      // This element's (group's) rows of the weights and of the output, as 2-D views.
      const std::string first = op("arith.muli", {gi, q}, DType::Index);
      const std::string rows =
          op("arith.minsi", {q, op("arith.subi", {rows_all, first}, DType::Index)}, DType::Index);
      const std::string view = "memref<?x?x" + ty + ", strided<[?, 1], offset: ?>>";
      auto as_matrix = [&](int t, const std::string& offset, const std::string& cols) {
        const std::string r = fresh();
        w_.line(r + " = memref.reinterpret_cast %" + spec_.tensors[t].name + " to offset: [" +
                offset + "], sizes: [" + rows + ", " + cols + "], strides: [" + cols +
                ", 1] : " + memref_type(static_cast<int>(spec_.tensors[t].shape.size()), g.type) +
                " to " + view);
        return r;
      };
      GemmOperands m;
      m.type = m.x_type = m.y_type = g.type;
      m.x = as_matrix(g.w, op("arith.muli", {first, k}, DType::Index), k);
      m.c = as_matrix(st.out,
                      op("arith.muli",
                         {op("arith.addi", {op("arith.muli", {b, rows_all}, DType::Index), first},
                             DType::Index),
                          n},
                         DType::Index),
                      n);
      m.y = col;
      m.x_full = m.c_full = view;
      m.y_full = col_ty;
      m.x_name = wname;
      m.y_name = "the column buffer";
      m.rows = rows;
      m.cols = n;
      m.range = [&](const std::string&) { return std::make_pair(zero, k); };
      m.serial = serial;
      m.pack = pack;
      emit_block_products(m);
    };
    // One element and group after another, each shared out.
    auto in_turn = [&] {
      const std::string col = alloc_col();
      for (int v : g.batch) open_for(v, false);
      const std::string b = flat(g.batch);
      std::string gi = zero;
      if (g.group) {
        gi = fresh();
        w_.open("scf.for " + gi + " = " + zero + " to " + groups + " step " + one + " {");
        // m0 / q is the group index wherever the gathered term uses it.
        loop_var_[g.m[0]] = op("arith.muli", {gi, group_size}, DType::Index);
      }
      item(col, b, gi, false, "");
      if (g.group) {
        loop_var_.erase(g.m[0]);
        w_.close("}");
      }
      for (size_t i = g.batch.size(); i-- > 0;) {
        w_.close("}");
        loop_var_.erase(g.batch[i]);
      }
      w_.line("memref.dealloc " + col + " : " + col_ty);
    };
    if (!g.group) return in_turn();
    // A group's few rows would run on one thread: with enough (element, group) pairs for the
    // threads, each thread gathers and multiplies whole pairs in a buffer of its own, one after
    // another (as the cpu and mojo im2col variants do).
    const std::string threads = max_threads();
    const std::string pairs = op("arith.muli", {product(g.batch), groups}, DType::Index);
    const std::string enough =
        cmp("arith.cmpi", "sge", pairs,
            op("arith.muli", {threads, constant("2", DType::Index)}, DType::Index), DType::Index);
    emit_if(
        enough,
        [&] {
          w_.line("// Pairs of a batch element and a group side by side, a chunk per thread.");
          const std::string chunk = ceil_div(pairs, threads, one);
          const std::string t = fresh();
          w_.open("scf.parallel (" + t + ") = (" + zero + ") to (" + threads + ") step (" + one +
                  ") {");
          const std::string col = alloc_col();
          const std::string pack = alloca_pack(g.type);
          const std::string lo =
              op("arith.minsi", {op("arith.muli", {t, chunk}, DType::Index), pairs}, DType::Index);
          const std::string hi =
              op("arith.minsi", {op("arith.addi", {lo, chunk}, DType::Index), pairs}, DType::Index);
          const std::string p = fresh();
          w_.open("scf.for " + p + " = " + lo + " to " + hi + " step " + one + " {");
          const std::string b = op("arith.divui", {p, groups}, DType::Index);
          const std::string gi = op("arith.remui", {p, groups}, DType::Index);
          // The batch indices of b, the last varying fastest.
          std::string r = b;
          for (size_t i = g.batch.size(); i-- > 0;) {
            const std::string& e = extent(g.batch[i]);
            loop_var_[g.batch[i]] = op("arith.remui", {r, e}, DType::Index);
            r = op("arith.divui", {r, e}, DType::Index);
          }
          loop_var_[g.m[0]] = op("arith.muli", {gi, group_size}, DType::Index);
          item(col, b, gi, true, pack);
          loop_var_.erase(g.m[0]);
          for (int v : g.batch) loop_var_.erase(v);
          w_.close("}");
          w_.line("memref.dealloc " + col + " : " + col_ty);
          w_.line("scf.reduce");
          w_.close("}");
        },
        in_turn);
  }

  // The operands of one GEMM C = X * Y (emit_block_products): 2-D memrefs and their types, X
  // rows x terms (terms x rows when x_trans), Y terms x cols (cols x terms when y_trans), C rows x
  // cols; the sum runs over terms from lo along X's and Y's k.
  struct GemmOperands {
    DType type = DType::F32;             // the product's (and C's) element type
    std::string x, y, c;                 // SSA names
    std::string x_full, y_full, c_full;  // their memref types
    std::string x_name, y_name;          // for the comments
    DType x_type = DType::F32, y_type = DType::F32;
    bool x_trans = false, y_trans = false;
    std::string rows, cols;  // index values
    // Emits the sum's first term along k and its number of terms (index values), given zero.
    std::function<std::pair<std::string, std::string>(const std::string& zero)> range;
    // On the calling thread (inside a parallel loop of its own): all the rows in one chunk.
    bool serial = false;
    // The buffer for the packed blocks (alloca_pack); empty: one on each thread's stack. A
    // serial product inside a loop takes one from outside it: an alloca in a loop's body would
    // grow the stack on every iteration.
    std::string pack;
  };

  // libomp's thread count (omp_get_max_threads, declared in the module), as an index value.
  std::string max_threads() {
    thread_count_ = true;
    const std::string threads32 = fresh();
    w_.line(threads32 + " = func.call @omp_get_max_threads() : () -> i32");
    const std::string threads = fresh();
    w_.line(threads + " = arith.index_cast " + threads32 + " : i32 to index");
    return threads;
  }
  // ceil(a / b) of index values a >= 0 and b > 0; `one` is the index constant 1.
  std::string ceil_div(const std::string& a, const std::string& b, const std::string& one) {
    return op("arith.divui",
              {op("arith.addi", {a, op("arith.subi", {b, one}, DType::Index)}, DType::Index), b},
              DType::Index);
  }

  // The type of a thread's buffer for a packed block of the second operand (emit_block_products):
  // kc rows of nc elements, each padded by kGemmPackPadBytes.
  std::string pack_type(DType t) const {
    return "memref<" + std::to_string(gemm_->kc) + "x" +
           std::to_string(gemm_->nc + kGemmPackPadBytes / dtype_bytes(t)) + "x" + mlir_type(t) +
           ">";
  }
  // Such a buffer on the stack of the current thread (a parallel loop's iteration).
  std::string alloca_pack(DType t) {
    const std::string buf = fresh();
    w_.line(buf + " = memref.alloca() {alignment = " + std::to_string(kStreamLineBytes) +
            " : i64} : " + pack_type(t));
    return buf;
  }

  // C = X * Y in blocks, in Goto's loop order (emit_gemm).
  void emit_block_products(const GemmOperands& g) {
    explicit_loops_ = true;
    thread_count_ = true;
    const std::string ty = mlir_type(g.type);
    gemm_types_.insert(g.type);
    const int64_t elem = dtype_bytes(g.type);
    const int64_t pad = kGemmPackPadBytes / elem;
    w_.line("// As block products: each thread's rows in blocks of " + std::to_string(gemm_->mc) +
            "; per block of " + std::to_string(gemm_->nc) + " columns and " +
            std::to_string(gemm_->kc) + " terms,");
    w_.line("// that block of " + g.y_name +
            " copied to the thread's buffer, then each block product added to the output.");
    const bool widen_x = g.x_type != g.type, widen_y = g.y_type != g.type;
    if (widen_y)
      w_.line("// " + g.y_name + "'s elements widened to " + ty +
              " (arith.extf) as they are copied.");
    if (widen_x)
      w_.line("// " + g.x_name + "'s elements widened to " + ty +
              " (arith.extf) as each block of mc of its rows is copied to a second buffer.");
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    const std::string& rows = g.rows;
    const std::string& cols = g.cols;
    const auto [lo, terms] = g.range(zero);
    const std::string mc = constant(std::to_string(gemm_->mc), DType::Index);
    const std::string nc = constant(std::to_string(gemm_->nc), DType::Index);
    const std::string kc = constant(std::to_string(gemm_->kc), DType::Index);
    const std::string tile = constant(std::to_string(gemm_->mr), DType::Index);
    const std::string& out = g.c;
    const std::string& x = g.x;
    const std::string& y = g.y;
    const std::string& full = g.c_full;
    const std::string view = "memref<?x?x" + ty + ", strided<[?, 1], offset: ?>>";
    // The operands' own memrefs and views of them (of a storage type when they widen).
    const std::string& x_full = g.x_full;
    const std::string& y_full = g.y_full;
    const std::string x_view =
        std::string("memref<?x?x") + mlir_type(g.x_type) + ", strided<[?, 1], offset: ?>>";
    const std::string y_view =
        std::string("memref<?x?x") + mlir_type(g.y_type) + ", strided<[?, 1], offset: ?>>";
    // X's widened block: mc x kc, its rows along k.
    const std::string xbuf_ty =
        "memref<" + std::to_string(gemm_->mc) + "x" + std::to_string(gemm_->kc) + "x" + ty + ">";
    const std::string xpacked_ty =
        "memref<?x?x" + ty + ", strided<[" + std::to_string(gemm_->kc) + ", 1]>>";
    const std::string buf_ty = pack_type(g.type);
    const std::string packed_ty =
        "memref<?x?x" + ty + ", strided<[" + std::to_string(gemm_->nc + pad) + ", 1]>>";
    auto subview = [&](const std::string& base, const std::string& r, const std::string& c,
                       const std::string& nr, const std::string& nc_, const std::string& from,
                       const std::string& to) {
      const std::string v = fresh();
      w_.line(v + " = memref.subview " + base + "[" + r + ", " + c + "] [" + nr + ", " + nc_ +
              "] [1, 1] : " + from + " to " + to);
      return v;
    };
    auto upto = [&](const std::string& block, const std::string& at, const std::string& n) {
      return op("arith.minsi", {block, op("arith.subi", {n, at}, DType::Index)}, DType::Index);
    };
    // The threads and each one's rows: ceil(rows / threads), rounded up to whole register tiles.
    const std::string threads = g.serial ? one : max_threads();
    const std::string chunk =
        op("arith.muli", {ceil_div(ceil_div(rows, threads, one), tile, one), tile}, DType::Index);
    const std::string t = fresh();
    if (g.serial)
      w_.open("scf.for " + t + " = " + zero + " to " + one + " step " + one + " {");
    else
      w_.open("scf.parallel (" + t + ") = (" + zero + ") to (" + threads + ") step (" + one +
              ") {");
    const std::string buf = g.pack.empty() ? alloca_pack(g.type) : g.pack;
    std::string xbuf;
    if (widen_x) {
      xbuf = fresh();
      w_.line(xbuf + " = memref.alloc() {alignment = " + std::to_string(kStreamLineBytes) +
              " : i64} : " + xbuf_ty);
    }
    const std::string r0 =
        op("arith.minsi", {op("arith.muli", {t, chunk}, DType::Index), rows}, DType::Index);
    const std::string r1 =
        op("arith.minsi", {op("arith.addi", {r0, chunk}, DType::Index), rows}, DType::Index);
    const std::string mine = op("arith.subi", {r1, r0}, DType::Index);
    const std::string crow = subview(out, r0, zero, mine, cols, full, view);
    w_.line("linalg.fill ins(" + constant(mlir_float(0.0, g.type), g.type) + " : " + ty +
            ") outs(" + crow + " : " + view + ")");
    const std::string j0 = fresh();
    w_.open("scf.for " + j0 + " = " + zero + " to " + cols + " step " + nc + " {");
    const std::string nr = upto(nc, j0, cols);
    const std::string k0 = fresh();
    w_.open("scf.for " + k0 + " = " + zero + " to " + terms + " step " + kc + " {");
    const std::string kr = upto(kc, k0, terms);
    const std::string ks = op("arith.addi", {lo, k0}, DType::Index);
    const std::string packed = subview(buf, "0", "0", kr, nr, buf_ty, packed_ty);
    const char* ident = "affine_map<(d0, d1) -> (d0, d1)>";
    const char* swap = "affine_map<(d0, d1) -> (d1, d0)>";
    // The copy runs along the rows of Y's block (a transposed one along its k), so that it reads
    // contiguously.
    const std::string yb = g.y_trans ? subview(y, j0, ks, nr, kr, y_full, y_view)
                                     : subview(y, ks, j0, kr, nr, y_full, y_view);
    // Copies `from` (a view of an operand, of element type `from_type`) into `to`, transposed
    // with `trans`, widening each element to the output's type.
    auto copy = [&](const std::string& from, DType from_type, const std::string& from_ty,
                    const std::string& to, const std::string& to_ty, bool trans) {
      w_.open(std::string("linalg.generic {indexing_maps = [") + ident + ", " +
              (trans ? swap : ident) + "], iterator_types = [\"parallel\", \"parallel\"]} ins(" +
              from + " : " + from_ty + ") outs(" + to + " : " + to_ty + ") {");
      const std::string e = fresh(), unused = fresh();
      w_.line("^bb0(" + e + ": " + mlir_type(from_type) + ", " + unused + ": " + ty + "):");
      w_.line("linalg.yield " + cast(e, from_type, g.type) + " : " + ty);
      w_.close("}");
    };
    copy(yb, g.y_type, y_view, packed, packed_ty, g.y_trans);
    const std::string i1 = fresh();
    w_.open("scf.for " + i1 + " = " + r0 + " to " + r1 + " step " + mc + " {");
    const std::string mr = upto(mc, i1, r1);
    std::string xb = g.x_trans ? subview(x, ks, i1, kr, mr, x_full, x_view)
                               : subview(x, i1, ks, mr, kr, x_full, x_view);
    std::string xb_ty = view;
    bool x_trans = g.x_trans;
    if (widen_x) {
      // X's block widened into the thread's buffer, rows along k (transposed when x[k, i]).
      const std::string xpacked = subview(xbuf, "0", "0", mr, kr, xbuf_ty, xpacked_ty);
      copy(xb, g.x_type, x_view, xpacked, xpacked_ty, g.x_trans);
      xb = xpacked;
      xb_ty = xpacked_ty;
      x_trans = false;
    }
    const std::string cb = subview(out, i1, j0, mr, nr, full, view);
    w_.open(std::string("linalg.generic {indexing_maps = [") +
            (x_trans ? "affine_map<(d0, d1, d2) -> (d2, d0)>"
                     : "affine_map<(d0, d1, d2) -> (d0, d2)>") +
            ", affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], "
            "iterator_types = [\"parallel\", \"parallel\", \"reduction\"]} ins(" +
            xb + ", " + packed + " : " + xb_ty + ", " + packed_ty + ") outs(" + cb + " : " + view +
            ") attrs = {" + mlir_gemm_mark(ty) + "} {");
    const std::string a = fresh(), b = fresh(), acc = fresh();
    w_.line("^bb0(" + a + ": " + ty + ", " + b + ": " + ty + ", " + acc + ": " + ty + "):");
    const std::string prod = fresh(), sum = fresh();
    w_.line(prod + " = arith.mulf " + a + ", " + b + " : " + ty);
    w_.line(sum + " = arith.addf " + acc + ", " + prod + " fastmath<reassoc> : " + ty);
    w_.line("linalg.yield " + sum + " : " + ty);
    w_.close("}");
    w_.close("}");
    w_.close("}");
    w_.close("}");
    if (widen_x) w_.line("memref.dealloc " + xbuf + " : " + xbuf_ty);
    if (!g.serial) w_.line("scf.reduce");
    w_.close("}");
  }

  // A running scan (lower/running_scans.h) `red` of `st`, outside row groups, writing `out_mem`:
  // scf.for loops over the outer output indices (under `parallel`, the first in parallel blocks),
  // then the walk along the innermost index (emit_scan_walk). Under `parallel`, a rank-1 scan of
  // at least kScanSplitMin outputs runs in two parallel passes instead (emit_scan_split).
  void emit_running_scan(const Statement& st, const Expr& red, const std::string& out_mem,
                         const std::string& out_ty) {
    const int last = static_cast<int>(st.rank()) - 1;
    if (parallel_ && last == 0) {
      const std::string split =
          cmp("arith.cmpi", "sge", extents_[st.out][0],
              constant(std::to_string(kScanSplitMin), DType::Index), DType::Index);
      emit_if(
          split, [&] { emit_scan_split(st, red, out_mem, out_ty); },
          [&] { emit_running_scan_nest(st, red, out_mem, out_ty); });
      return;
    }
    emit_running_scan_nest(st, red, out_mem, out_ty);
  }

  void emit_running_scan_nest(const Statement& st, const Expr& red, const std::string& out_mem,
                              const std::string& out_ty) {
    const int last = static_cast<int>(st.rank()) - 1;
    w_.line("// Running: each output's range extends the previous one's by its new terms.");
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    bool parallel_block = false;
    for (int d = 0; d < last; ++d) {
      const std::string& n = extents_[st.out][d];
      std::string from = zero, to = n;
      if (d == 0 && parallel_) {
        explicit_loops_ = true;
        parallel_block = true;
        const std::string block = block_length(n);
        const std::string b = fresh();
        w_.open("scf.parallel (" + b + ") = (" + zero + ") to (" + n + ") step (" + block + ") {");
        from = b;
        to = op("arith.minsi", {op("arith.addi", {b, block}, DType::Index), n}, DType::Index);
      }
      const std::string v = fresh();
      w_.open("scf.for " + v + " = " + from + " to " + to + " step " + one + " {");
      loop_var_[d] = v;
    }
    const std::string lo = val(*st.vars[red.ref].lo);
    const std::string init = identity(red.rop, value_type(red));
    emit_scan_walk(st, red, out_mem, out_ty, zero, extents_[st.out][last], init, lo);
    for (int d = last; d-- > 0;) {
      w_.close("}");
      loop_var_.erase(d);
      if (d == 0 && parallel_block) {
        w_.line("scf.reduce");
        w_.close("}");
      }
    }
  }

  // The walk of running scan `red` along the innermost output index over outputs [from, to) (SSA
  // index values), the outer indices bound, from accumulator `acc0` and next term index `k0` (the
  // sequential walk's state before output `from`). The range's end is i + c (the pass's rule), so
  // from the first output i_s at which the walk stands at the last term of its range, each output
  // adds exactly that term: outputs before i_s are one scf.for carrying the accumulator and the
  // index of the next term, each folding in the terms from that index up to its range's end (an
  // scf.for); the outputs from i_s on one scf.for carrying the accumulator alone, which LLVM keeps
  // simple (the general form alone ran at half the speed). i_s is 0 when output 0's range is the
  // single term lo (c - 1 == lo), else the first i >= 1 with i + c - 1 >= lo.
  void emit_scan_walk(const Statement& st, const Expr& red, const std::string& out_mem,
                      const std::string& out_ty, const std::string& from, const std::string& to,
                      const std::string& acc0, const std::string& k0) {
    const int last = static_cast<int>(st.rank()) - 1;
    const DType t = value_type(red);
    const std::string ty = mlir_type(t);
    const IndexVar& kv = st.vars[red.ref];
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    loop_var_[last] = zero;
    const std::string c = val(*kv.hi);
    loop_var_.erase(last);
    const std::string lo = val(*kv.lo);
    const std::string c1 = op("arith.subi", {c, one}, DType::Index);
    const std::string first =
        op("arith.maxsi",
           {op("arith.addi", {op("arith.subi", {lo, c}, DType::Index), one}, DType::Index), one},
           DType::Index);
    const std::string i_s =
        select(cmp("arith.cmpi", "eq", c1, lo, DType::Index), zero, first, DType::Index);
    const std::string mid =
        op("arith.minsi", {op("arith.maxsi", {i_s, from}, DType::Index), to}, DType::Index);
    const Tensor& out = spec_.tensors[st.out];
    // Stores output i's value, the reduction's being `folded`.
    auto store = [&](const std::string& folded) {
      reduce_arg_[&red] = folded;
      const std::string v = cast(val(*st.rhs), value_type(*st.rhs), out.type);
      reduce_arg_.erase(&red);
      std::string idx;
      for (int d = 0; d <= last; ++d) idx += (d ? ", " : "") + loop_var_.at(d);
      w_.line("memref.store " + v + ", " + out_mem + "[" + idx + "] : " + out_ty);
    };
    const std::string res = fresh(), i = fresh(), acc = fresh(), k = fresh();
    w_.open(res + ":2 = scf.for " + i + " = " + from + " to " + mid + " step " + one +
            " iter_args(" + acc + " = " + acc0 + ", " + k + " = " + k0 + ") -> (" + ty +
            ", index) {");
    loop_var_[last] = i;
    const std::string hi = val(*kv.hi);
    const std::string folded = fold_terms(red, k, hi, acc, one);
    // The next term: past this output's range, or where it stands if the range was empty.
    const std::string k_next = op("arith.maxsi", {k, hi}, DType::Index);
    store(folded);
    w_.line("scf.yield " + folded + ", " + k_next + " : " + ty + ", index");
    w_.close("}");
    std::string tail_from = mid, tail_acc = res + "#0";
    if (const Expr* term = vector_scan_term(st, red)) {
      // lower/running_scans.h's vector form over outputs [mid, vend), vend - mid a multiple of
      // the lanes: the terms as one vector.load, scanned in registers by shuffles, the outputs
      // stored as one vector.store.
      const int lanes = vector_scan_lanes(t);
      const std::string vty = "vector<" + std::to_string(lanes) + "x" + ty + ">";
      const std::string nl = constant(std::to_string(lanes), DType::Index);
      const std::string vend = op(
          "arith.subi",
          {to, op("arith.remsi", {op("arith.subi", {to, mid}, DType::Index), nl}, DType::Index)},
          DType::Index);
      const std::string resv = fresh(), iv = fresh(), accv = fresh();
      w_.line("// " + std::to_string(lanes) + " outputs at a time, one term each: the terms " +
              "loaded as one vector, scanned in");
      w_.line("// registers by shuffles (the identity shifted in), the outputs stored as one.");
      w_.open(resv + " = scf.for " + iv + " = " + mid + " to " + vend + " step " + nl +
              " iter_args(" + accv + " = " + res + "#0) -> (" + ty + ") {");
      loop_var_[last] = iv;
      loop_var_[red.ref] = op("arith.subi", {val(*kv.hi), one}, DType::Index);
      std::string x = vector_load(*term, lanes);
      loop_var_.erase(red.ref);
      const std::string id = fresh();
      w_.line(id + " = vector.broadcast " + identity(red.rop, t) + " : " + ty + " to " + vty);
      for (const std::vector<int>& mask : vector_scan_steps(t)) {
        const std::string sh = fresh();
        w_.line(sh + " = vector.shuffle " + x + ", " + id + " [" + vector_scan_mask(mask) +
                "] : " + vty + ", " + vty);
        x = vector_combine(red.rop, sh, x, vty);
      }
      const std::string carry = fresh();
      w_.line(carry + " = vector.broadcast " + accv + " : " + ty + " to " + vty);
      const std::string scanned = vector_combine(red.rop, carry, x, vty);
      const std::string lastv = fresh();
      w_.line(lastv + " = vector.extract " + scanned + "[" + std::to_string(lanes - 1) + "] : " +
              ty + " from " + vty);
      std::string idx;
      for (int d = 0; d <= last; ++d) idx += (d ? ", " : "") + loop_var_.at(d);
      w_.line("vector.store " + scanned + ", " + out_mem + "[" + idx + "] : " + out_ty + ", " +
              vty);
      w_.line("scf.yield " + lastv + " : " + ty);
      w_.close("}");
      tail_from = vend;
      tail_acc = resv;
    }
    const std::string res2 = fresh(), i2 = fresh(), acc2 = fresh();
    w_.open(res2 + " = scf.for " + i2 + " = " + tail_from + " to " + to + " step " + one +
            " iter_args(" + acc2 + " = " + tail_acc + ") -> (" + ty + ") {");
    loop_var_[last] = i2;
    loop_var_[red.ref] = op("arith.subi", {val(*kv.hi), one}, DType::Index);
    const std::string term2 = val(*red.args[0]);
    loop_var_.erase(red.ref);
    const std::string next2 = scan_combine(red.rop, acc2, term2, t);
    store(next2);
    w_.line("scf.yield " + next2 + " : " + ty);
    w_.close("}");
    loop_var_.erase(last);
  }

  // The term of running scan `red` of `st` when its walk takes lower/running_scans.h's vector
  // form here: under a strategy that may reassociate, a sum, product, max or min of f32 or f64
  // (vector_scan_fits) that is the whole right-hand side, of the output's type, whose term is one
  // read without a boundary rule, contiguous along the reduction's variable. Else nullptr.
  const Expr* vector_scan_term(const Statement& st, const Expr& red) const {
    if (!reassoc_ || !vector_scan_fits(red.rop, value_type(red)) || !scan_is_output(spec_, st, red))
      return nullptr;
    return contiguous_scan_term(spec_, red);
  }

  // One vector of `lanes` elements of read `e`'s tensor from its subscripts at the current loop
  // variables along the last dimension (vector_scan_term's read), widened to f32 when the tensor
  // is f16 or bf16.
  std::string vector_load(const Expr& e, int lanes) {
    const Tensor& t = spec_.tensors[e.ref];
    const std::string vty =
        "vector<" + std::to_string(lanes) + "x" + std::string(mlir_type(t.type)) + ">";
    std::string idx;
    for (size_t d = 0; d < e.args.size(); ++d) {
      std::string s = val(*e.args[d]);
      if (value_type(*e.args[d]) != DType::Index) s = cast(s, value_type(*e.args[d]), DType::Index);
      idx += (idx.empty() ? "" : ", ") + s;
    }
    const std::string v = fresh();
    w_.line(v + " = vector.load %" + t.name + "[" + idx + "] : " +
            memref_type(static_cast<int>(t.shape.size()), t.type) + ", " + vty);
    return widen(v, t.type, lanes);
  }

  // `a op b` on float vectors of type `vty`, a the earlier lanes: maximumf and minimumf propagate
  // NaN, as the scalar walk's compare and select do.
  std::string vector_combine(ReduceOp rop, const std::string& a, const std::string& b,
                             const std::string& vty) {
    const char* name = rop == ReduceOp::Sum    ? "arith.addf"
                       : rop == ReduceOp::Prod ? "arith.mulf"
                       : rop == ReduceOp::Max  ? "arith.maximumf"
                                               : "arith.minimumf";
    SB_ASSERT(rop == ReduceOp::Sum || rop == ReduceOp::Prod || rop == ReduceOp::Max ||
                  rop == ReduceOp::Min,
              "a vector scan of an arg-reduction");
    const std::string v = fresh();
    w_.line(v + " = " + name + " " + a + ", " + b + " : " + vty);
    return v;
  }

  // A rank-1 running scan `red` in two parallel passes over kScanBlocks blocks of its outputs:
  // lower/host_bodies.h's scan_split_bodies, the loop IR the cpu and mojo printers print too,
  // printed by print_mlir_block with this statement printer's leaves (ScanLeaves).
  void emit_scan_split(const Statement& st, const Expr& red, const std::string& out_mem,
                       const std::string& out_ty) {
    const ScanSplitBodies bodies = scan_split_bodies(spec_, st, red);
    ScanLeaves leaves(*this, st, out_mem, out_ty);
    print_mlir_block(loops::joined({&bodies.head, &bodies.two_pass}), leaves, w_);
  }

  // The leaves of a running scan's loop IR (print_mlir_block) for statement `st` writing
  // `out_mem`: the spec's expressions through val(), the scan's fold and walk through
  // fold_terms and emit_scan_walk.
  class ScanLeaves final : public MlirLeaves {
   public:
    ScanLeaves(Body& b, const Statement& st, const std::string& out_mem, const std::string& out_ty)
        : b_(b), st_(st), out_mem_(out_mem), out_ty_(out_ty) {}
    std::string fresh() override { return b_.fresh(); }
    void bind_index(int v, const std::string& value) override {
      if (value.empty())
        b_.loop_var_.erase(v);
      else
        b_.loop_var_[v] = value;
    }
    std::string index_var(int v) override { return b_.index_var(v); }
    std::string extent(int t, int dim) override {
      return b_.extents_.at(static_cast<size_t>(t)).at(static_cast<size_t>(dim));
    }
    std::string size(int s) override {
      return "%" + b_.spec_.sizes.at(static_cast<size_t>(s)).name;
    }
    std::string spec(const Expr& e) override { return b_.val(e); }
    std::string float_constant(double v, DType t) override {
      return b_.constant(mlir_float(v, t), t);
    }
    std::string identity(ReduceOp op, DType t) override { return b_.identity(op, t); }
    std::string fold(ReduceOp op, DType t, const std::string& acc,
                     const std::string& value) override {
      return b_.scan_combine(op, acc, value, t);
    }
    std::string fold_range(const Expr& red, const std::string& acc, const std::string& lo,
                           const std::string& hi) override {
      return b_.fold_terms(red, lo, hi, acc, b_.constant("1", DType::Index));
    }
    void scan_walk(const Expr& red, const std::string& acc, const std::string& end) override {
      const int last = static_cast<int>(st_.rank()) - 1;
      const std::string from = b_.loop_var_.at(last), k0 = b_.loop_var_.at(red.ref);
      b_.emit_scan_walk(st_, red, out_mem_, out_ty_, from, end, acc, k0);
    }

   private:
    Body& b_;
    const Statement& st_;
    std::string out_mem_, out_ty_;
  };

  // Under `parallel`, an elementwise statement the tile_transposes pass chose (its read across
  // rows, lower/tile_transposes.h): one scf.parallel loop over its other output indices and the
  // tiles of the pass's dimension and the innermost (tiles_.outer by tiles_.inner elements), each
  // tile two scf.for loops storing its elements, so that the lines of the read serve a whole tile;
  // where the pass moves the read in blocks, the tile's whole blocks first
  // (emit_transposed_blocks).
  void emit_tiles(const Statement& st, const std::string& out_mem, const std::string& out_ty) {
    const int rank = static_cast<int>(st.rank());
    const int inner = rank - 1;
    const int dim = tile_choice(spec_, st).dim;
    SB_ASSERT(dim >= 0 && dim < inner, "a tiled dimension that is not an outer output dimension");
    w_.line("// In tiles of " + std::to_string(tiles_.outer) + " x " +
            std::to_string(tiles_.inner) + " elements of output dimensions " + std::to_string(dim) +
            " and " + std::to_string(inner) + ".");
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    const std::string step_d = constant(std::to_string(tiles_.outer), DType::Index);
    const std::string step_i = constant(std::to_string(tiles_.inner), DType::Index);
    std::string ivs, lbs, ubs, steps;
    auto add = [&](const std::string& iv, const std::string& ub, const std::string& step) {
      const bool first = ivs.empty();
      ivs += (first ? "" : ", ") + iv;
      lbs += (first ? "" : ", ") + zero;
      ubs += (first ? "" : ", ") + ub;
      steps += (first ? "" : ", ") + step;
    };
    for (int d = 0; d < inner; ++d) {
      if (d == dim) continue;
      loop_var_[d] = fresh();
      add(loop_var_[d], extents_[st.out][d], one);
    }
    const std::string tb_d = fresh(), tb_i = fresh();
    add(tb_d, extents_[st.out][dim], step_d);
    add(tb_i, extents_[st.out][inner], step_i);
    w_.open("scf.parallel (" + ivs + ") = (" + lbs + ") to (" + ubs + ") step (" + steps + ") {");
    auto tile_end = [&](const std::string& b, const std::string& step, int d) {
      return op("arith.minsi", {op("arith.addi", {b, step}, DType::Index), extents_[st.out][d]},
                DType::Index);
    };
    const std::string te_d = tile_end(tb_d, step_d, dim), te_i = tile_end(tb_i, step_i, inner);
    // The elements [from_d, to_d) x [from_i, to_i) of the tile, one at a time.
    auto elements = [&](const std::string& from_d, const std::string& to_d,
                        const std::string& from_i, const std::string& to_i) {
      loop_var_[dim] = fresh();
      w_.open("scf.for " + loop_var_[dim] + " = " + from_d + " to " + to_d + " step " + one + " {");
      loop_var_[inner] = fresh();
      w_.open("scf.for " + loop_var_[inner] + " = " + from_i + " to " + to_i + " step " + one +
              " {");
      store_element(st, out_mem, out_ty);
      w_.close("}");
      w_.close("}");
    };
    if (const TileChoice& c = tile_choice(spec_, st); c.block_axis >= 0) {
      const auto [end_d, end_i] =
          emit_transposed_blocks(st, c, tb_d, te_d, tb_i, te_i, out_mem, out_ty);
      elements(end_d, te_d, tb_i, te_i);
    } else {
      elements(tb_d, te_d, tb_i, te_i);
    }
    w_.line("scf.reduce");
    w_.close("}");
    for (int d = 0; d < rank; ++d) loop_var_.erase(d);
  }

  // The statement's element at the current loop variables, stored into `out_mem`.
  void store_element(const Statement& st, const std::string& out_mem, const std::string& out_ty) {
    const Tensor& out = spec_.tensors[st.out];
    const std::string v = cast(val(*st.rhs), value_type(*st.rhs), out.type);
    std::string idx;
    for (size_t d = 0; d < st.rank(); ++d)
      idx += (d ? ", " : "") + loop_var_.at(static_cast<int>(d));
    w_.line("memref.store " + v + ", " + out_mem + "[" + idx + "] : " + out_ty);
  }

  // The blocks of a tile [tb_d, te_d) x [tb_i, te_i) whose read moves in them
  // (lower/tile_transposes.h), as the cpu and mojo printers' emit_transposed_blocks: for each
  // kBlockOuter rows of the tiled dimension and kBlockInner elements of the innermost index, the
  // read's kBlockInner rows of kBlockOuter elements as vector.loads, transposed by vector.shuffles
  // (pairs of rows interleaved, pairs of pairs, then halves) into a kBlockOuter x kBlockInner
  // buffer, then each element computed from the buffer (the read, and any read of the same
  // element, as its memref.load); the ends of each block's rows read the tensor itself. Returns
  // the ends of the whole blocks along the two dimensions; the rows after the last block are the
  // caller's.
  std::pair<std::string, std::string> emit_transposed_blocks(
      const Statement& st, const TileChoice& c, const std::string& tb_d, const std::string& te_d,
      const std::string& tb_i, const std::string& te_i, const std::string& out_mem,
      const std::string& out_ty) {
    static_assert(kBlockInner == 16 && kBlockOuter == 8, "the shuffles' block");
    const int inner = static_cast<int>(st.rank()) - 1;
    const int dim = c.dim;
    const Expr& rd = tiled_read(spec_, st);
    const DType et = spec_.tensors[rd.ref].type;
    const std::string vty = "vector<8x" + std::string(mlir_type(et)) + ">";
    const std::string bty = "memref<8x16x" + std::string(mlir_type(et)) + ">";
    w_.line("// " + to_string(rd, spec_, &st) + " in blocks of 16 x 8 elements, each transposed " +
            "in registers.");
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    const std::string c8 = constant("8", DType::Index), c16 = constant("16", DType::Index);
    auto whole = [&](const std::string& b, const std::string& e, const std::string& n) {
      const std::string k =
          op("arith.divui", {op("arith.subi", {e, b}, DType::Index), n}, DType::Index);
      return op("arith.addi", {b, op("arith.muli", {k, n}, DType::Index)}, DType::Index);
    };
    const std::string end_d = whole(tb_d, te_d, c8), end_i = whole(tb_i, te_i, c16);
    const std::string buf = fresh();
    w_.line(buf + " = memref.alloca() {alignment = 64 : i64} : " + bty);
    const std::string b = fresh(), e = fresh();
    w_.open("scf.for " + b + " = " + tb_d + " to " + end_d + " step " + c8 + " {");
    w_.open("scf.for " + e + " = " + tb_i + " to " + end_i + " step " + c16 + " {");
    loop_var_[dim] = b;
    for (int h = 0; h < 2; ++h) {
      std::vector<std::string> r(8);
      for (int p = 0; p < 8; ++p) {
        const int row = 8 * h + p;
        loop_var_[inner] =
            row == 0
                ? e
                : op("arith.addi", {e, constant(std::to_string(row), DType::Index)}, DType::Index);
        r[p] = vector_load(rd, 8);
      }
      // The network's vectors, by number: the rows, then each shuffle's result.
      const TransposeNetwork& net = transpose_8x8_network();
      std::vector<std::string> v = r;
      for (const Shuffle& sh : net.steps) {
        std::string mask;
        for (int m : sh.mask) mask += (mask.empty() ? "" : ", ") + std::to_string(m);
        v.push_back(fresh());
        w_.line(v.back() + " = vector.shuffle " + v[sh.a] + ", " + v[sh.b] + " [" + mask +
                "] : " + vty + ", " + vty);
      }
      const std::string col = h == 0 ? zero : c8;
      for (int q = 0; q < 8; ++q)
        w_.line("vector.store " + v[net.rows_out[q]] + ", " + buf + "[" +
                constant(std::to_string(q), DType::Index) + ", " + col + "] : " + bty + ", " + vty);
    }
    const std::string p = fresh(), q = fresh();
    w_.open("scf.for " + p + " = " + zero + " to " + c8 + " step " + one + " {");
    w_.open("scf.for " + q + " = " + zero + " to " + c16 + " step " + one + " {");
    loop_var_[dim] = op("arith.addi", {b, p}, DType::Index);
    loop_var_[inner] = op("arith.addi", {e, q}, DType::Index);
    const std::string x = fresh();
    w_.line(x + " = memref.load " + buf + "[" + p + ", " + q + "] : " + bty);
    const std::vector<const Expr*> same = block_reads(spec_, st);
    for (const Expr* r : same) read_arg_[r] = x;
    store_element(st, out_mem, out_ty);
    for (const Expr* r : same) read_arg_.erase(r);
    w_.close("}");
    w_.close("}");
    w_.close("}");
    // The ends of the block's rows.
    loop_var_[dim] = fresh();
    const std::string b8 = op("arith.addi", {b, c8}, DType::Index);
    w_.open("scf.for " + loop_var_[dim] + " = " + b + " to " + b8 + " step " + one + " {");
    loop_var_[inner] = fresh();
    w_.open("scf.for " + loop_var_[inner] + " = " + end_i + " to " + te_i + " step " + one + " {");
    store_element(st, out_mem, out_ty);
    w_.close("}");
    w_.close("}");
    w_.close("}");
    return {end_d, end_i};
  }

  // The statement as generics writing `out_mem` (the output, or its current row) over the
  // output indices `all_outer`.
  // Under `parallel`, a rank-1 statement that is one sum (or other reduction) whose loop the
  // vectorize pass puts outside the vector loop (conv1d's taps, axis_sum's rows): as one generic,
  // its output dimension would be an scf.parallel inside the sequential loop over the terms (one
  // OpenMP region per term), or, with the terms innermost, a short loop per output that is not
  // vectorised (axis_sum's ran 36x slower than the cpu omp_simd variant, conv1d's 15x,
  // results/vm/host-10rep-20261204.json). It runs in parallel blocks of kOutsideBlock outputs
  // instead (emit_output_blocks).
  bool output_blocks(const Statement& st) const {
    if (!parallel_ || st.rank() != 1 || st.rhs->kind != ExprKind::Reduce ||
        !linalg_reduction(*st.rhs, st))
      return false;
    const SimdChoice& simd = simd_choice(spec_, st);
    return simd.whole == SimdLoops::Outputs && simd.outside.count(st.rhs->ref) > 0 &&
           !parallel_choice(spec_, st).apart.count(st.rhs->ref);
  }

  // An scf.parallel loop over blocks of kOutsideBlock outputs of `st` (output_blocks): each block
  // a view of the output, filled with the identity, and one generic over (term, output in the
  // block) that the transform schedule lowers to sequential loops, the outputs innermost, so
  // that LLVM vectorises along them and each term reads whole lines. Each output's terms keep
  // their order.
  void emit_output_blocks(const Statement& st, const std::string& out_mem,
                          const std::string& out_ty) {
    explicit_loops_ = true;
    const DType t = spec_.tensors[st.out].type;
    w_.line("// In parallel blocks of " + std::to_string(kOutsideBlock) +
            " outputs, each output's terms taken one at a time across the block.");
    const std::string& n = extents_[st.out][0];
    const std::string zero = zero_index();
    const std::string block = constant(std::to_string(kOutsideBlock), DType::Index);
    const std::string b = fresh();
    w_.open("scf.parallel (" + b + ") = (" + zero + ") to (" + n + ") step (" + block + ") {");
    const std::string end =
        op("arith.minsi", {op("arith.addi", {b, block}, DType::Index), n}, DType::Index);
    const std::string len = op("arith.subi", {end, b}, DType::Index);
    const std::string sub = fresh();
    const std::string sty = "memref<?x" + std::string(mlir_type(t)) + ", strided<[1], offset: ?>>";
    w_.line(sub + " = memref.subview " + out_mem + "[" + b + "] [" + len + "] [1] : " + out_ty +
            " to " + sty);
    // Where every read with a boundary rule is inside its tensor for the whole block (all its
    // outputs, all its terms), the block reads without the rule: plain loads that LLVM
    // vectorises, instead of clamped ones under a select.
    const std::string inside = inside_condition(st, *st.rhs, 0, b, end).value_or("");
    part_var_ = 0;
    part_base_ = b;
    part_len_ = len;
    in_blocks_ = true;
    emit_inside_or_checked(inside, "// Every read of the block inside its tensor: no boundary rule.",
                           [&] { emit_reduce(*st.rhs, sub, sty, t, {0}); });
    in_blocks_ = false;
    part_var_ = -1;
    w_.line("scf.reduce");
    w_.close("}");
  }

  // The reduction variables of `st`.
  static std::set<int> reduction_vars(const Statement& st) {
    std::set<int> vars;
    for (size_t v = st.rank(); v < st.vars.size(); ++v) vars.insert(static_cast<int>(v));
    return vars;
  }

  // The i1 value, computed here, that every read of `e` with a boundary rule is inside its tensor
  // for output index `var` of `st` from `first` to `end` - 1 (index values), the other output
  // indices at their current values (loop_var_) and every value of the reduction variables;
  // "" when no read needs a check, nullopt when that cannot be put so. The checks and their
  // corners are the shared ones (ir/affine.h: boundary_checks; corners_condition).
  // With `unbound`, those variables take every value instead of the reduction variables (an
  // empty set: every variable but `var` at its current value).
  std::optional<std::string> inside_condition(const Statement& st, const Expr& e, int var,
                                              const std::string& first, const std::string& end,
                                              const std::optional<std::set<int>>& unbound = {}) {
    const std::optional<std::vector<BoundaryCheck>> checks =
        boundary_checks(spec_, st, e, var, unbound ? *unbound : reduction_vars(st));
    if (!checks) return std::nullopt;
    const std::map<int, std::string> saved = loop_var_;
    std::string last;  // end - 1, emitted where a check first needs it
    CornerSpelling spelling;
    spelling.bind = [&](int u, bool at_last) {
      if (u == var) {
        if (at_last && last.empty())
          last = op("arith.subi", {end, constant("1", DType::Index)}, DType::Index);
        loop_var_[u] = at_last ? last : first;
        return;
      }
      const IndexVar& iv = st.vars[static_cast<size_t>(u)];
      loop_var_[u] =
          at_last ? op("arith.subi", {val(*iv.hi), constant("1", DType::Index)}, DType::Index)
                  : val(*iv.lo);
    };
    spelling.test = [&](const BoundaryCheck& c) {
      std::string sv = val(*c.sub);
      if (value_type(*c.sub) != DType::Index) sv = cast(sv, value_type(*c.sub), DType::Index);
      const std::string lo_ok = cmp("arith.cmpi", "sge", sv, zero_index(), DType::Index);
      const std::string hi_ok = cmp("arith.cmpi", "slt", sv,
                                    extents_[static_cast<size_t>(c.tensor)][c.dim], DType::Index);
      return op("arith.andi", {lo_ok, hi_ok}, DType::Bool);
    };
    spelling.unbind = [&] { loop_var_ = saved; };
    spelling.join = [&](const std::string& a, const std::string& b) {
      return op("arith.andi", {a, b}, DType::Bool);
    };
    return corners_condition(*checks, var, /*leave_varying=*/false, spelling);
  }

  // ---- A row's edges apart ----
  //
  // Inside a row loop (a row group's, or a plane of a collapsed range), a statement that reads
  // under a boundary rule with a reach along its last output index that is known exactly
  // (lower/vectorize.h: exact_tap_edge; the cpu printer's edge segments, the mojo printer's split
  // of a row) runs each of its rows in three parts along that index: the outputs within the
  // reach of either end, and those between. Its other output dimensions left by the row loop are
  // scf.for loops around them. A part whose reads are all inside their tensors at every corner
  // (inside_condition) runs a generic without the boundary rule: plain loads that LLVM
  // vectorises, instead of clamped ones under a select. The generic over a whole row (or plane)
  // that checked every load left depthwise_conv2d's mlir openmp variant at 0.14x of the cpu one
  // (results/vm/targets-10rep-20261207). Where no check varies along the row (no read crosses
  // an edge along that index), a row is one part, read without the rule where its checks hold.

  // The checks (ir/affine.h: boundary_checks) of `st`'s reads along its last output index, or
  // nullopt.
  std::optional<std::vector<BoundaryCheck>> row_checks(const Statement& st) const {
    return boundary_checks(spec_, st, *st.rhs, static_cast<int>(st.rank()) - 1, reduction_vars(st));
  }
  static bool varies(const std::vector<BoundaryCheck>& checks) {
    return std::any_of(checks.begin(), checks.end(),
                       [](const BoundaryCheck& c) { return c.varies; });
  }
  // Inside a row loop: the width of `st`'s rows' checked ends (emit_row_segments), 0 for whole
  // rows, or nullopt where its rows keep one checked generic.
  std::optional<int64_t> row_edge(const Statement& st) const {
    if (row_.empty() || static_cast<int>(st.rank()) <= row_dims_ ||
        !buffered_reduces(st, true).empty())
      return std::nullopt;
    const std::optional<std::vector<BoundaryCheck>> checks = row_checks(st);
    if (!checks || checks->empty()) return std::nullopt;
    if (!varies(*checks)) return 0;
    return exact_tap_edge(spec_, st, *st.rhs);
  }

  // The range [zero, n) (index values) in the parts of emit_row_segments and emit_im2col: the
  // `edge` elements at either end and those between (each part clamped into the range, so that a
  // short range's middle and last parts may be empty); the whole range as one part without an
  // edge.
  std::vector<std::pair<std::string, std::string>> edge_parts(const std::string& zero,
                                                              const std::string& n,
                                                              std::optional<int64_t> edge) {
    if (!edge) return {{zero, n}};
    const std::string e = constant(std::to_string(*edge), DType::Index);
    const std::string p = op("arith.minsi", {e, n}, DType::Index);
    const std::string t =
        op("arith.maxsi", {op("arith.subi", {n, e}, DType::Index), p}, DType::Index);
    return {{zero, p}, {p, t}, {t, n}};
  }

  // `st`'s rows in parts, the ends `edge` outputs wide (row_edge; 0: whole rows).
  void emit_row_segments(const Statement& st, const std::string& out_mem,
                         const std::string& out_ty, int64_t edge) {
    const int inner = static_cast<int>(st.rank()) - 1;
    const bool split = edge > 0;
    const DType out_elem = mem_elem(st.out);
    const std::string zero = zero_index();
    const std::string one = inner > row_dims_ ? constant("1", DType::Index) : "";  // loop step
    const std::string& name = st.vars[static_cast<size_t>(inner)].name;
    if (split)
      w_.line("// Along " + name + " in three parts: the " + std::to_string(edge) +
              " output(s) at either end, and those between.");
    else
      w_.line("// Along " + name + ", whole rows.");
    w_.line("// A part whose reads are all inside their tensors reads without the boundary rule.");
    std::string offs, sizes, strides;
    for (int d = row_dims_; d < inner; ++d) {
      const std::string v = fresh();
      w_.open("scf.for " + v + " = " + zero + " to " + extents_[st.out][static_cast<size_t>(d)] +
              " step " + one + " {");
      loop_var_[d] = v;
      offs += v + ", ";
      sizes += "1, ";
      strides += "1, ";
    }
    const std::string& n = extents_[st.out][static_cast<size_t>(inner)];
    const std::vector<std::pair<std::string, std::string>> parts =
        edge_parts(zero, n, split ? std::optional<int64_t>(edge) : std::nullopt);
    const std::string sty =
        "memref<?x" + std::string(mlir_type(out_elem)) + ", strided<[1], offset: ?>>";
    for (const auto& range : parts) {
      const std::string lo = range.first, hi = range.second;
      const std::string len = op("arith.subi", {hi, lo}, DType::Index);
      const std::string sub = fresh();
      w_.line(sub + " = memref.subview " + out_mem + "[" + offs + lo + "] [" + sizes + len + "] [" +
              strides + "1] : " + out_ty + " to " + sty);
      auto part = [&] {
        part_var_ = inner;
        part_base_ = lo;
        part_len_ = len;
        if (st.rhs->kind == ExprKind::Reduce && linalg_reduction(*st.rhs, st))
          emit_reduce(*st.rhs, sub, sty, out_elem, {inner});
        else
          emit_generic(*st.rhs, sub, sty, out_elem, nullptr, {inner});
        part_var_ = -1;
      };
      emit_inside_or_checked(inside_condition(st, *st.rhs, inner, lo, hi).value_or(""),
                             "// Every read of the part inside its tensor: no boundary rule.", part);
    }
    for (int d = row_dims_; d < inner; ++d) {
      w_.close("}");
      loop_var_.erase(d);
    }
  }

  void emit_plain(const Statement& st, const std::string& out_mem, const std::string& out_ty,
                  const std::vector<int>& all_outer) {
    const bool in_row = !row_.empty();
    // A whole right-hand side reduced straight into the output, unless it is computed apart
    // (lower/parallelize.h) while the output has dimensions (y[i] = sum(k in 0..N: x[k])): then
    // it is reduced once into a buffer of its own, split over the threads, and the generic below
    // gives every output its value.
    const bool apart_into_dims = parallel_ && !in_row && !all_outer.empty() &&
                                 st.rhs->kind == ExprKind::Reduce &&
                                 parallel_choice(spec_, st).apart.count(st.rhs->ref);
    const DType out_elem = mem_elem(st.out);
    if (st.rhs->kind == ExprKind::Reduce && linalg_reduction(*st.rhs, st) && !apart_into_dims) {
      emit_reduce(*st.rhs, out_mem, out_ty, out_elem, all_outer);
      return;
    }
    std::vector<const Expr*> allocated;
    for (const auto& [r, outer] : buffered_reduces(st, in_row)) {
      auto pre = row_temp_.find(r);
      if (pre != row_temp_.end()) {
        temp_of_[r] = pre->second;
      } else {
        // A buffer over the output indices the reduction depends on.
        std::string dims;
        for (int d : outer) dims += (dims.empty() ? "" : ", ") + extents_[st.out][d];
        const std::string tmp = fresh();
        const std::string ty = memref_type(static_cast<int>(outer.size()), value_type(*r));
        w_.line(tmp + " = memref.alloc(" + dims + ") : " + ty);
        temp_of_[r] = {tmp, ty, outer};
        allocated.push_back(r);
      }
      emit_reduce(*r, temp_of_[r].buffer, temp_of_[r].type, value_type(*r), outer);
    }
    emit_generic(*st.rhs, out_mem, out_ty, out_elem, nullptr, all_outer);
    for (const Expr* r : allocated)
      w_.line("memref.dealloc " + temp_of_[r].buffer + " : " + temp_of_[r].type);
    temp_of_.clear();
  }

  // `scf.if cond { then_part } else { else_part }`.
  template <class Then, class Else>
  void emit_if(const std::string& cond, Then then_part, Else else_part) {
    w_.open("scf.if " + cond + " {");
    then_part();
    w_.close("} else {");
    CodeWriter inner(w_.indent() + 1);
    std::swap(inner, w_);
    else_part();
    std::swap(inner, w_);
    w_.raw(inner.str());
    w_.line("}");
  }

  // `emit` twice under `scf.if inside`: first without the boundary rule (assume_inside_), its
  // first line `note` where given, then with it; once, with the rule, when `inside` is "".
  template <class Emit>
  void emit_inside_or_checked(const std::string& inside, const std::string& note, Emit emit) {
    if (inside.empty()) return emit();
    emit_if(
        inside,
        [&] {
          if (!note.empty()) w_.line(note);
          assume_inside_ = true;
          emit();
          assume_inside_ = false;
        },
        emit);
  }

  // ---- Streaming stores ----
  //
  // Under `parallel`, an elementwise statement whose output (f32, f64 or i32, of rank 1 or 2) is
  // in memory writes it with non-temporal stores when the tensors it touches (its group's, in a
  // row group) total at least kStreamMinBytes, so that a large output costs no read for
  // ownership. Each row (or the whole rank-1 output) is written in three parts: the elements
  // before the first 64-byte boundary and the elements after the last whole line by plain
  // generics, the whole lines in between one at a time: a generic computes the line into a
  // line buffer, whose two halves are stored with aligned non-temporal stores. MLIR 19's
  // vector.store has no alignment (LLVM then splits a non-temporal store into scalar ones), so
  // these are llvm.store ops with `alignment` and `nontemporal`, at the line's address.
  // Rank-2 outputs are streamed row by row in parallel blocks of rows (as a row group of one
  // statement); rank-1 outputs in parallel blocks of lines. Each block ends with a fence.

  // Under `parallel`: whether `st` (of rank >= 2, not in a row group) is a contraction-like
  // statement whose reductions' loops go outside the innermost output loop (the vectorize pass
  // chose that loop, lower/vectorize.h: b[k, j] in a matrix product). It then runs as a row group
  // of one statement, so that each row's generic is a sequential (k, j) loop nest that clang
  // vectorises over j, instead of a parallel loop nested in a sequential one in a parallel one.
  bool row_contraction(const Statement& st) const {
    if (!parallel_ || st.rank() < 2 || !contains_reduce(*st.rhs) ||
        simd_choice(spec_, st).rows != SimdLoops::Outputs)
      return false;
    for (const Expr* r : reads_of(*st.rhs))
      if (r->ref == st.out && !own_row_read(*r)) return false;
    return true;
  }

  // The streaming policy's candidates (lower/streaming.h) that this printer streams: outputs of
  // rank 1 or 2 and of type f32, f64 or i32, under `parallel`.
  bool printable_stream(const Statement& st) const {
    const DType t = spec_.tensors[st.out].type;
    return parallel_ && st.rank() <= 2 && (t == DType::F32 || t == DType::F64 || t == DType::I32);
  }
  // The streaming pass's choices (lower/streaming.h) for `st` on its own and row by row.
  const StreamChoice& choice(const Statement& st) const {
    return spec_.schedule.streams.at(static_cast<size_t>(&st - spec_.stmts.data()));
  }
  bool streamable(const Statement& st) const { return printable_stream(st) && choice(st).whole; }

  // Inside a row group: whether `st` streams its rows (a rank-2 output in memory).
  bool streamed_row(const Statement& st) const {
    return printable_stream(st) && st.rank() == 2 && choice(st).rows;
  }

  // The i1 value: whether `tensors` (the streaming pass's: those in memory that a statement or a
  // row group touches) total at least kStreamMinBytes.
  std::string stream_condition(const std::set<int>& tensors) {
    std::string total;
    for (int t : tensors) {
      std::string bytes =
          constant(std::to_string(dtype_bytes(spec_.tensors[t].type)), DType::Index);
      for (const auto& d : extents_[t]) bytes = op("arith.muli", {bytes, d}, DType::Index);
      total = total.empty() ? bytes : op("arith.addi", {total, bytes}, DType::Index);
    }
    return cmp("arith.cmpi", "sge", total, constant(std::to_string(kStreamMinBytes), DType::Index),
               DType::Index);
  }

  // Before a streamed line that starts at element `j` of the output's last dimension (of `len`):
  // a prefetch, kStreamPrefetchBytes ahead, of every tensor the streaming pass lists for the line
  // (StreamChoice::prefetch, lower/streaming.h), clamped to the line's last element, which the
  // statement reads anyway. This printer prefetches along rank-1 outputs and along rows only. In a
  // row group, the line of the next row of each tensor of StreamChoice::next_rows along the
  // line (lower/streaming.h: next-row prefetch) too; this printer has them only in streamed lines.
  void emit_prefetches(const Statement& st, const std::string& j, const std::string& len) {
    const int rank = static_cast<int>(st.rank());
    if (rank != 1 && row_.empty()) return;
    SB_ASSERT(row_dims_ == 1, "a prefetch in a plane of a collapsed range");
    if (!next_row_.empty()) {
      for (const auto& [t, var] : choice(st).next_rows) {
        if (var != rank - 1) continue;
        const Tensor& tensor = spec_.tensors[t];
        w_.line("memref.prefetch %" + tensor.name + "[" + next_row_ + ", " + j +
                "], read, locality<3>, data : " + memref_type(2, tensor.type));
      }
    }
    const std::set<int>& tensors = row_.empty() ? choice(st).prefetch : choice(st).prefetch_rows;
    std::string end;  // len - 1, made once when the first prefetch needs it
    for (int t : tensors) {
      const Tensor& tensor = spec_.tensors[t];
      const std::string ahead = constant(
          std::to_string(kStreamPrefetchBytes / dtype_bytes(tensor.type)), DType::Index);
      if (end.empty()) end = op("arith.subi", {len, constant("1", DType::Index)}, DType::Index);
      const std::string idx =
          op("arith.minsi", {op("arith.addi", {j, ahead}, DType::Index), end}, DType::Index);
      if (auto rv = row_view_.find(t); rv != row_view_.end()) {
        w_.line("memref.prefetch " + rv->second.name + "[" + idx +
                "], read, locality<3>, data : " + rv->second.type);
      } else {
        w_.line("memref.prefetch %" + tensor.name + "[" + (rank == 1 ? idx : row_ + ", " + idx) +
                "], read, locality<3>, data : " + memref_type(rank, tensor.type));
      }
    }
  }

  // Writes elements [0, len) of `view` (rank 1: the output, or its current row) for `st` as
  // described above; the lines in parallel blocks (`parallel_lines`) or in one loop using the
  // group's line buffer.
  void emit_stream_range(const Statement& st, const std::string& view, const std::string& vty,
                         const std::string& len, bool parallel_lines) {
    const DType t = spec_.tensors[st.out].type;
    const std::string et = mlir_type(t);
    const int lane = kLineBytes / dtype_bytes(t);  // elements per line
    const int last = static_cast<int>(st.rank()) - 1;
    w_.line("// Non-temporal stores: plain head and tail, whole 64-byte lines in between.");
    const std::string eb = constant(std::to_string(dtype_bytes(t)), DType::Index);
    const std::string base = fresh(), offset = fresh(), size = fresh(), stride = fresh();
    w_.line(base + ", " + offset + ", " + size + ", " + stride +
            " = memref.extract_strided_metadata " + view + " : " + vty + " -> memref<" + et +
            ">, index, index, index");
    const std::string ptr = fresh();
    w_.line(ptr + " = memref.extract_aligned_pointer_as_index " + view + " : " + vty + " -> index");
    const std::string start =
        op("arith.addi", {ptr, op("arith.muli", {offset, eb}, DType::Index)}, DType::Index);
    const std::string line = constant(std::to_string(kLineBytes), DType::Index);
    const std::string misaligned = op("arith.remui", {start, line}, DType::Index);
    const std::string gap =
        op("arith.remui", {op("arith.subi", {line, misaligned}, DType::Index), line}, DType::Index);
    const std::string head =
        op("arith.minsi", {op("arith.divui", {gap, eb}, DType::Index), len}, DType::Index);
    const std::string lanes = constant(std::to_string(lane), DType::Index);
    const std::string lines =
        op("arith.divui", {op("arith.subi", {len, head}, DType::Index), lanes}, DType::Index);
    const std::string tail =
        op("arith.addi", {head, op("arith.muli", {lines, lanes}, DType::Index)}, DType::Index);
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    emit_part(st, view, vty, zero, head);

    const std::string bty = "memref<" + std::to_string(lane) + "x" + et + ">";
    auto emit_line = [&](const std::string& buf, const std::string& l) {
      const std::string j0 =
          op("arith.addi", {head, op("arith.muli", {l, lanes}, DType::Index)}, DType::Index);
      emit_prefetches(st, j0, len);
      auto compute = [&] {
        part_var_ = last;
        part_base_ = j0;
        part_len_ = lanes;
        emit_generic(*st.rhs, buf, bty, t, nullptr, {last});
        part_var_ = -1;
      };
      // A line whose reads under a boundary rule are all inside their tensors (away from the
      // edges) reads without the rule, as a row's middle part does (emit_row_segments).
      const std::optional<std::vector<BoundaryCheck>> checks = row_checks(st);
      const std::string inside =
          checks && !checks->empty()
              ? inside_condition(st, *st.rhs, last, j0, op("arith.addi", {j0, lanes}, DType::Index))
                    .value_or("")
              : "";
      emit_inside_or_checked(inside, "", compute);
      // Two half-line vectors: a 64-byte load of the line just written to the stack buffer
      // missed store-to-load forwarding on the development machine (AMD, AVX-512), and the
      // whole loop ran at half speed.
      const std::string vty2 = "vector<" + std::to_string(lane / 2) + "x" + et + ">";
      const std::string second = constant(std::to_string(lane / 2), DType::Index);
      const std::string v0 = fresh();
      w_.line(v0 + " = vector.load " + buf + "[" + zero + "] : " + bty + ", " + vty2);
      const std::string v1 = fresh();
      w_.line(v1 + " = vector.load " + buf + "[" + second + "] : " + bty + ", " + vty2);
      const std::string addr =
          op("arith.addi", {start, op("arith.muli", {j0, eb}, DType::Index)}, DType::Index);
      const std::string a64 = fresh();
      w_.line(a64 + " = arith.index_cast " + addr + " : index to i64");
      const std::string p0 = fresh(), p1 = fresh();
      w_.line(p0 + " = llvm.inttoptr " + a64 + " : i64 to !llvm.ptr");
      w_.line("llvm.store " + v0 + ", " + p0 + " {alignment = " + std::to_string(kLineBytes / 2) +
              " : i64, nontemporal} : " + vty2 + ", !llvm.ptr");
      w_.line(p1 + " = llvm.getelementptr " + p0 + "[" + std::to_string(kLineBytes / 2) +
              "] : (!llvm.ptr) -> !llvm.ptr, i8");
      w_.line("llvm.store " + v1 + ", " + p1 + " {alignment = " + std::to_string(kLineBytes / 2) +
              " : i64, nontemporal} : " + vty2 + ", !llvm.ptr");
    };
    if (parallel_lines) {
      explicit_loops_ = true;
      const std::string block = block_length(lines);
      const std::string b = fresh();
      w_.open("scf.parallel (" + b + ") = (" + zero + ") to (" + lines + ") step (" + block +
              ") {");
      const std::string end =
          op("arith.minsi", {op("arith.addi", {b, block}, DType::Index), lines}, DType::Index);
      const std::string buf = fresh();
      w_.line(buf + " = memref.alloca() : " + bty);
      const std::string l = fresh();
      w_.open("scf.for " + l + " = " + b + " to " + end + " step " + one + " {");
      emit_line(buf, l);
      w_.close("}");
      w_.line("llvm.fence seq_cst");
      w_.line("scf.reduce");
      w_.close("}");
    } else {
      const std::string l = fresh();
      w_.open("scf.for " + l + " = " + zero + " to " + lines + " step " + one + " {");
      emit_line(line_buf_.at(t).name, l);
      w_.close("}");
    }
    emit_part(st, view, vty, tail, op("arith.subi", {len, tail}, DType::Index));
  }

  // Elements [from, from + n) of `view` for `st`, by a plain generic on that part.
  void emit_part(const Statement& st, const std::string& view, const std::string& vty,
                 const std::string& from, const std::string& n) {
    const DType t = spec_.tensors[st.out].type;
    const std::string sub = fresh();
    const std::string sty = "memref<?x" + std::string(mlir_type(t)) + ", strided<[1], offset: ?>>";
    w_.line(sub + " = memref.subview " + view + "[" + from + "] [" + n + "] [1] : " + vty + " to " +
            sty);
    part_var_ = static_cast<int>(st.rank()) - 1;
    part_base_ = from;
    part_len_ = n;
    emit_generic(*st.rhs, sub, sty, t, nullptr, {part_var_});
    part_var_ = -1;
  }

  // The streaming pass's tensors of row group `g` (one of the row_fusion pass's).
  const std::set<int>& group_tensors(const RowGroup& g) const {
    const Schedule& sc = spec_.schedule;
    for (size_t i = 0; i < sc.row_groups.size(); ++i)
      if (sc.row_groups[i].first == g.first && sc.row_groups[i].last == g.last)
        return sc.group_tensors[i];
    SB_ASSERT(false, "not a row group of the row_fusion pass");
    return sc.group_tensors.front();
  }

  // A buffer of `t` over `dims` (extents) for a block of rows or planes: on the stack without
  // dimensions, else on the heap, added to `heap` (buffer, type) for the block's end to free.
  View block_buffer(DType t, const std::vector<std::string>& dims,
                    std::vector<std::pair<std::string, std::string>>& heap) {
    const std::string buf = fresh();
    const std::string ty = memref_type(static_cast<int>(dims.size()), t);
    if (dims.empty()) {
      w_.line(buf + " = memref.alloca() : " + ty);
    } else {
      std::string d;
      for (const auto& x : dims) d += (d.empty() ? "" : ", ") + x;
      w_.line(buf + " = memref.alloc(" + d + ") : " + ty);
      heap.push_back({buf, ty});
    }
    return View{buf, ty, t};
  }

  // The buffers of `st`'s reductions in a block of rows or planes, one row (plane) long
  // (row_temp_).
  void reduction_buffers(const Statement& st,
                         std::vector<std::pair<std::string, std::string>>& heap) {
    for (const auto& [r, outer] : buffered_reduces(st, true)) {
      std::vector<std::string> dims;
      for (int d : outer) dims.push_back(extents_[st.out][static_cast<size_t>(d)]);
      const View v = block_buffer(value_type(*r), dims, heap);
      row_temp_[r] = {v.name, v.type, outer};
    }
  }

  // The view of tensor `t` at the current row's indices (row_idx_) of its first `dims`
  // dimensions: the rest, rank-reduced (View::fixed = dims). A row group's rows: dims = 1.
  auto plane_view(int t, int dims) {
    const Tensor& tn = spec_.tensors[t];
    const int rank = static_cast<int>(tn.shape.size());
    std::string offs, sizes, strides, lay;
    for (int d = 0; d < rank; ++d) {
      const bool fixed = d < dims;
      offs += (d ? ", " : "") + (fixed ? row_idx_.at(static_cast<size_t>(d)) : std::string("0"));
      sizes += (d ? ", " : "") + (fixed ? std::string("1") : extents_[t][static_cast<size_t>(d)]);
      strides += d ? ", 1" : "1";
      if (!fixed) lay += d + 1 < rank ? "?, " : "1";
    }
    std::string ty = "memref<";
    for (int d = dims; d < rank; ++d) ty += "?x";
    ty += std::string(mlir_type(tn.type)) + ", strided<[" + lay + "], offset: ?>>";
    const std::string v = fresh();
    w_.line(v + " = memref.subview %" + tn.name + "[" + offs + "] [" + sizes + "] [" + strides +
            "] : " + memref_type(rank, tn.type) + " to " + ty);
    return View{v, ty, tn.type, dims};
  }

  // The single statement of `g` over the parallelize pass's collapsed range of its first
  // `dims` output dimensions, as emit_row_group runs rows: one scf.parallel loop over blocks of the
  // range (its flat index), each block a sequential loop over its planes, each plane (its indices
  // recovered from the flat one) computed as the statement's generics on rank-reduced views of the
  // plane. The buffers of its reductions are allocated once per block, one plane long, as a row
  // group's are once per block of rows.
  void emit_planes(const RowGroup& g, int dims) {
    const Statement& st = spec_.stmts[g.first];
    w_.line("// Plane by plane, in parallel blocks of output dimensions 0 to " +
            std::to_string(dims - 1) + ", collapsed.");
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    std::string planes = extents_[st.out][0];
    for (int d = 1; d < dims; ++d)
      planes = op("arith.muli", {planes, extents_[st.out][static_cast<size_t>(d)]}, DType::Index);
    const std::string block = block_length(planes);
    const std::string b = fresh();
    w_.open("scf.parallel (" + b + ") = (" + zero + ") to (" + planes + ") step (" + block + ") {");
    const std::string end =
        op("arith.minsi", {op("arith.addi", {b, block}, DType::Index), planes}, DType::Index);
    row_dims_ = dims;  // a plane's outer dimensions (outer_dims) from here on
    std::vector<std::pair<std::string, std::string>> heap;  // buffer, type
    reduction_buffers(st, heap);
    const std::string p = fresh();
    w_.open("scf.for " + p + " = " + b + " to " + end + " step " + one + " {");
    // The plane's indices, the last of the collapsed dimensions varying fastest.
    row_idx_.assign(static_cast<size_t>(dims), "");
    std::string rest = p;
    for (int d = dims - 1; d >= 0; --d) {
      const std::string& n = extents_[st.out][static_cast<size_t>(d)];
      row_idx_[static_cast<size_t>(d)] = d == 0 ? rest : op("arith.remui", {rest, n}, DType::Index);
      if (d > 0) rest = op("arith.divui", {rest, n}, DType::Index);
    }
    row_ = row_idx_[0];
    // Views of the plane of the output and of every tensor read at the plane's leading indices
    // (x[n, g * CIG + c, i, j] at n alone): each fixes the dimensions all its such reads share.
    std::map<int, int> fixed{{st.out, dims}};
    std::function<void(const Expr&)> prefixes = [&](const Expr& e) {
      if (const int p = own_prefix(e); p > 0 && e.ref != st.out) {
        auto [it, fresh_tensor] = fixed.emplace(e.ref, p);
        if (!fresh_tensor) it->second = std::min(it->second, p);
      }
      for (const auto& a : e.args) prefixes(*a);
    };
    prefixes(*st.rhs);
    for (const auto& [t, f] : fixed) row_view_[t] = plane_view(t, f);
    emit_statement(st);
    w_.close("}");
    for (const auto& [buf, ty] : heap) w_.line("memref.dealloc " + buf + " : " + ty);
    w_.line("scf.reduce");
    w_.close("}");
    row_.clear();
    row_idx_.clear();
    row_dims_ = 1;
    row_view_.clear();
    row_temp_.clear();
  }

  // A fused group of statements (codegen/lower/row_fusion.h), under `parallel`: one scf.parallel
  // loop over blocks of rows, each block a sequential loop over its rows, each row computed by the
  // group's statements in order as generics on rank-reduced views of that row. The group's
  // row-local temps and the buffers of its reductions are allocated once per block, one row
  // long.
  // `mode` says when its rank-2 outputs stream (RowStream).
  // With `row_dims` > 1 (a single statement, no row-local temps, not streamed: the parallelize
  // pass's collapsed range, ParallelChoice::collapse), a "row" fixes the first `row_dims` output
  // dimensions: one scf.parallel loop over their product, each iteration one plane.
  void emit_row_group(const RowGroup& g, RowStream mode = RowStream::ByThreshold,
                      int row_dims = 1) {
    explicit_loops_ = true;
    const Statement& first = spec_.stmts[g.first];
    const std::string& rows = extents_[first.out][0];
    // A collapsed range is of rank 4 or more: no such output streams (printable_stream).
    SB_ASSERT(
        row_dims == 1 || (g.first == g.last && g.row_local.empty() && !printable_stream(first) &&
                          row_dims < static_cast<int>(first.rank())),
        "a collapsed range over a row group");
    if (row_dims > 1) return emit_planes(g, row_dims);
    if (g.first == g.last)
      w_.line("// Row by row, in parallel blocks of rows.");
    else
      w_.line("// Statements " + std::to_string(g.first + 1) + " to " + std::to_string(g.last + 1) +
              " fused: row by row, in parallel blocks of rows.");
    row_local_ = std::set<int>(g.row_local.begin(), g.row_local.end());
    std::set<DType> streamed;  // element types of the streamed outputs
    for (size_t k = g.first; k <= g.last && mode != RowStream::Never; ++k) {
      const Statement& st = spec_.stmts[k];
      if (streamed_row(st)) streamed.insert(spec_.tensors[st.out].type);
    }
    streaming_ = !streamed.empty();
    stream_cond_ =
        streaming_ && mode == RowStream::ByThreshold ? stream_condition(group_tensors(g)) : "";
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    const std::string block = block_length(rows);
    const std::string b = fresh();
    w_.open("scf.parallel (" + b + ") = (" + zero + ") to (" + rows + ") step (" + block + ") {");
    const std::string b_end = op("arith.addi", {b, block}, DType::Index);
    const std::string end = op("arith.minsi", {b_end, rows}, DType::Index);
    std::vector<std::pair<std::string, std::string>> heap;  // buffer, type
    auto row_buffer = [&](DType t, const std::vector<std::string>& dims) {
      return block_buffer(t, dims, heap);
    };
    for (int t : g.row_local) {
      const std::vector<std::string> dims(extents_[t].begin() + 1, extents_[t].end());
      // Row-local rows are private buffers: an f16 or bf16 temp's holds the widened f32 values.
      row_view_[t] = row_buffer(compute_type(spec_.tensors[t].type), dims);
    }
    for (DType t : streamed) {
      const View v{fresh(),
                   "memref<" + std::to_string(kLineBytes / dtype_bytes(t)) + "x" +
                       std::string(mlir_type(t)) + ">",
                   t};
      w_.line(v.name + " = memref.alloca() : " + v.type);
      line_buf_[t] = v;
    }
    for (size_t k = g.first; k <= g.last; ++k) reduction_buffers(spec_.stmts[k], heap);
    row_ = fresh();
    row_idx_ = {row_};
    w_.open("scf.for " + row_ + " = " + b + " to " + end + " step " + one + " {");
    bool next_rows = false;  // along a streamed line: the only place this printer has them
    for (size_t k = g.first; k <= g.last; ++k) {
      const StreamChoice& c = spec_.schedule.streams[k];
      for (const auto& [t, var] : c.next_rows)
        next_rows = next_rows || (c.rows && var + 1 == static_cast<int>(spec_.stmts[k].rank()));
    }
    if (next_rows) {
      // The next row, whose lines the next-row prefetches (lower/streaming.h) fetch.
      const std::string& rows = extents_[spec_.stmts[g.first].out][0];
      next_row_ = op("arith.minsi",
                     {op("arith.addi", {row_, one}, DType::Index),
                      op("arith.subi", {rows, one}, DType::Index)},
                     DType::Index);
    }
    // Views of this row of every tensor in memory that the group writes or reads by its own row.
    std::set<int> viewed;
    for (size_t k = g.first; k <= g.last; ++k) {
      const Statement& st = spec_.stmts[k];
      viewed.insert(st.out);
      own_row_reads(*st.rhs, viewed);
    }
    for (int t : viewed)
      if (!row_view_.count(t)) row_view_[t] = plane_view(t, 1);  // else row-local
    for (size_t k = g.first; k <= g.last; ++k) emit_statement(spec_.stmts[k]);
    w_.close("}");
    for (const auto& [buf, ty] : heap) w_.line("memref.dealloc " + buf + " : " + ty);
    if (streaming_) {
      // The block's non-temporal stores are ordered before whatever follows the loop.
      if (!stream_cond_.empty()) w_.open("scf.if " + stream_cond_ + " {");
      w_.line("llvm.fence seq_cst");
      if (!stream_cond_.empty()) w_.close("}");
    }
    w_.line("scf.reduce");
    w_.close("}");
    row_.clear();
    row_idx_.clear();
    next_row_.clear();
    row_view_.clear();
    row_temp_.clear();
    row_local_.clear();
    line_buf_.clear();
    streaming_ = false;
    stream_cond_.clear();
  }

  // The output indices that are the leading dimensions of a statement's generics: all of them,
  // or all but the row index inside a row loop.
  std::vector<int> outer_dims(const Statement& st, bool in_row) const {
    std::vector<int> outer;
    for (size_t d = in_row ? static_cast<size_t>(row_dims_) : 0; d < st.rank(); ++d)
      outer.push_back(static_cast<int>(d));
    return outer;
  }

  // The reductions inside an elementwise term of `st` that get a buffer of their own, each with
  // the output indices (dimensions of the buffer) it depends on.
  std::vector<std::pair<const Expr*, std::vector<int>>> buffered_reduces(const Statement& st,
                                                                         bool in_row) const {
    std::vector<std::pair<const Expr*, std::vector<int>>> out;
    if (st.rhs->kind == ExprKind::Reduce && linalg_reduction(*st.rhs, st)) return out;
    const std::vector<const Expr*> reds = top_reduces_of(*st.rhs);
    for (const Expr* r : reds) {
      if (!linalg_reduction(*r, st)) continue;  // an scf.for in the generic's body
      std::set<int> used;
      vars_used(*r, st, used);
      std::vector<int> outer;
      for (int d : outer_dims(st, in_row))
        if (used.count(d)) outer.push_back(d);
      out.push_back({r, outer});
    }
    return out;
  }

  // Tensors that `e` reads by the statement's own row (first subscript the first output index,
  // no boundary rule).
  void own_row_reads(const Expr& e, std::set<int>& out) const {
    if (own_row_read(e)) out.insert(e.ref);
    for (const auto& a : e.args) own_row_reads(*a, out);
  }
  // The view of the current row (plane) that read `e` reads through: its tensor has one and the
  // read's subscripts of the dimensions the view fixes are the row's output indices. Else null.
  const View* view_of(const Expr& e) const {
    if (e.kind != ExprKind::Read) return nullptr;
    auto rv = row_view_.find(e.ref);
    if (rv == row_view_.end() || own_prefix(e) < rv->second.fixed) return nullptr;
    return &rv->second;
  }
  // How many leading subscripts of read `e` (no boundary rule) are the row's output indices in
  // order, at most row_dims_.
  int own_prefix(const Expr& e) const {
    if (e.kind != ExprKind::Read || spec_.tensors[e.ref].boundary != Boundary::None) return 0;
    int d = 0;
    while (d < row_dims_ && static_cast<size_t>(d) < e.args.size() &&
           e.args[d]->kind == ExprKind::IndexVar && e.args[d]->ref == d)
      ++d;
    return d;
  }
  bool own_row_read(const Expr& e) const { return own_prefix(e) == row_dims_; }

  // The length of the blocks that split `n` iterations into at most kBlocks parallel blocks
  // (at least 1, so that the loop step is positive).
  std::string block_length(const std::string& n) {
    const std::string sum =
        op("arith.addi", {n, constant(std::to_string(kBlocks - 1), DType::Index)}, DType::Index);
    const std::string q =
        op("arith.divui", {sum, constant(std::to_string(kBlocks), DType::Index)}, DType::Index);
    return op("arith.maxsi", {q, constant("1", DType::Index)}, DType::Index);
  }

  // The value of an expression evaluated at the current place (function scope or a generic's
  // body); returns its SSA name.
  std::string val(const Expr& e) {
    const DType t = value_type(e);
    switch (e.kind) {
      case ExprKind::FloatLit:
      case ExprKind::Const:
        return constant(mlir_float(e.fval, t), t);
      case ExprKind::IntLit:
        return constant(std::to_string(e.ival), t);
      case ExprKind::SizeRef:
        return "%" + spec_.sizes[e.ref].name;
      case ExprKind::IndexVar:
        return index_var(e.ref);
      case ExprKind::Read:
        return read(e);
      case ExprKind::Unary:
        return unary(e);
      case ExprKind::Binary:
        return binary(e);
      case ExprKind::Call:
        return call(e);
      case ExprKind::Cast:
        return cast(val(*e.args[0]), value_type(*e.args[0]), t);
      case ExprKind::Reduce: {
        auto it = reduce_arg_.find(&e);
        if (it != reduce_arg_.end()) return it->second;
        return loop_reduce(e);
      }
      default:
        SB_ASSERT(false, "unexpected expression kind in the mlir emitter");
        return "";
    }
  }

 private:
  std::string constant(const std::string& text, DType t) {
    const std::string v = fresh();
    // `true` and `false` are i1 attributes already; the parser rejects a type after them.
    const bool boolean = text == "true" || text == "false";
    SB_ASSERT(!boolean || t == DType::Bool, "a boolean literal is an i1 constant");
    w_.line(v + " = arith.constant " + text +
            (boolean ? std::string() : " : " + std::string(mlir_type(t))));
    return v;
  }
  std::string op(const std::string& name, const std::vector<std::string>& args, DType t) {
    std::string a;
    for (const auto& x : args) a += (a.empty() ? "" : ", ") + x;
    const std::string v = fresh();
    w_.line(v + " = " + name + " " + a + " : " + mlir_type(t));
    return v;
  }
  std::string cmp(const std::string& name, const std::string& pred, const std::string& a,
                  const std::string& b, DType t) {
    const std::string v = fresh();
    w_.line(v + " = " + name + " " + pred + ", " + a + ", " + b + " : " + mlir_type(t));
    return v;
  }
  std::string select(const std::string& c, const std::string& a, const std::string& b, DType t) {
    const std::string v = fresh();
    w_.line(v + " = arith.select " + c + ", " + a + ", " + b + " : " + mlir_type(t));
    return v;
  }

  // A reduction as an scf.for loop carrying the accumulator, inside a generic's body.
  std::string loop_reduce(const Expr& r) {
    const DType t = value_type(r);
    const IndexVar& iv = st_->vars[r.ref];
    const std::string lo = val(*iv.lo);
    const std::string hi = val(*iv.hi);
    const std::string one = constant("1", DType::Index);
    const std::string init = identity(r.rop, t);
    const std::string res = fresh();
    const std::string k = fresh();
    const std::string acc = fresh();
    w_.open(res + " = scf.for " + k + " = " + lo + " to " + hi + " step " + one + " iter_args(" +
            acc + " = " + init + ") -> (" + mlir_type(t) + ") {");
    loop_var_[r.ref] = k;
    const std::string v = val(*r.args[0]);
    const std::string next = combine(r.rop, acc, v, t);
    w_.line("scf.yield " + next + " : " + mlir_type(t));
    loop_var_.erase(r.ref);
    w_.close("}");
    return res;
  }

  std::string index_var(int ref) {
    if (auto it = loop_var_.find(ref); it != loop_var_.end()) return it->second;
    auto it = index_val_.find(ref);
    SB_ASSERT(it != index_val_.end(), "index variable outside of its generic");
    return it->second;
  }

  // The index variables whose values the body computes (not those only in operand reads'
  // indexing maps), including those in the ranges of scf.for reductions.
  void needed_vars(const Expr& e, std::set<int>& out) const {
    if (e.kind == ExprKind::Read && read_arg_.count(&e)) return;
    if (e.kind == ExprKind::Reduce) {
      if (reduce_arg_.count(&e)) return;
      needed_vars(*st_->vars[e.ref].lo, out);
      needed_vars(*st_->vars[e.ref].hi, out);
    }
    if (e.kind == ExprKind::IndexVar) out.insert(e.ref);
    for (const auto& a : e.args) needed_vars(*a, out);
  }

  // linalg.index must sit directly in the generic's region (not in an scf.for inside it), so
  // the loop indices the body needs are read once at its top.
  void emit_indices(const Expr& body) {
    std::set<int> needed;
    needed_vars(body, needed);
    index_val_.clear();
    for (int v : needed) {
      if (v >= static_cast<int>(dim_of_var_.size()) || dim_of_var_[v] < 0) continue;
      std::string x = fresh();
      w_.line(x + " = linalg.index " + std::to_string(dim_of_var_[v]) + " : index");
      if (auto lo = lo_of_var_.find(v); lo != lo_of_var_.end())
        x = op("arith.addi", {x, lo->second}, DType::Index);
      index_val_[v] = x;
    }
  }

  std::string read(const Expr& e) {
    auto it = read_arg_.find(&e);
    if (it != read_arg_.end()) return it->second;
    const Tensor& t = spec_.tensors[e.ref];
    const bool rule = t.boundary != Boundary::None && !assume_inside_;
    if (const View* rv = view_of(e)) {
      // The current row's view: the subscripts after the indices it fixes.
      std::string idx;
      for (size_t d = static_cast<size_t>(rv->fixed); d < e.args.size(); ++d) {
        std::string s = val(*e.args[d]);
        if (value_type(*e.args[d]) != DType::Index)
          s = cast(s, value_type(*e.args[d]), DType::Index);
        idx += (idx.empty() ? "" : ", ") + s;
      }
      const std::string v = fresh();
      w_.line(v + " = memref.load " + rv->name + "[" + idx + "] : " + rv->type);
      return widen(v, rv->elem);
    }
    std::vector<std::string> subs;
    std::string inside;
    for (size_t d = 0; d < e.args.size(); ++d) {
      std::string s = val(*e.args[d]);
      if (value_type(*e.args[d]) != DType::Index) s = cast(s, value_type(*e.args[d]), DType::Index);
      const std::string& ext = extents_[e.ref][d];
      if (rule) {
        if (t.boundary == Boundary::Zero) {
          const std::string lo_ok = cmp("arith.cmpi", "sge", s, zero_index(), DType::Index);
          const std::string hi_ok = cmp("arith.cmpi", "slt", s, ext, DType::Index);
          const std::string ok = op("arith.andi", {lo_ok, hi_ok}, DType::Bool);
          inside = inside.empty() ? ok : op("arith.andi", {inside, ok}, DType::Bool);
        }
        const std::string one = constant("1", DType::Index);
        const std::string last = op("arith.subi", {ext, one}, DType::Index);
        s = op("arith.minsi", {s, last}, DType::Index);
        s = op("arith.maxsi", {s, zero_index()}, DType::Index);
      }
      subs.push_back(s);
    }
    std::string idx;
    for (const auto& s : subs) idx += (idx.empty() ? "" : ", ") + s;
    const std::string v = fresh();
    w_.line(v + " = memref.load %" + t.name + "[" + idx +
            "] : " + memref_type(static_cast<int>(t.shape.size()), t.type));
    const std::string x = widen(v, t.type);
    if (inside.empty()) return x;
    const DType ct = compute_type(t.type);
    const std::string z = is_float(ct) ? constant(mlir_float(0.0, ct), ct) : constant("0", ct);
    return select(inside, x, z, ct);
  }

  // A value loaded from memory of element type `elem`: an f16 or bf16 one widened to the f32 it
  // computes in (arith.extf, exact); any other as it is. `lanes` > 0: a vector of that many.
  std::string widen(const std::string& v, DType elem, int lanes = 0) {
    if (!is_storage_type(elem)) return v;
    auto ty = [lanes](DType t) {
      const std::string e = mlir_type(t);
      return lanes > 0 ? "vector<" + std::to_string(lanes) + "x" + e + ">" : e;
    };
    const std::string r = fresh();
    w_.line(r + " = arith.extf " + v + " : " + ty(elem) + " to " + ty(compute_type(elem)));
    return r;
  }

  std::string zero_index() { return constant("0", DType::Index); }

  std::string unary(const Expr& e) {
    const std::string a = val(*e.args[0]);
    const DType t = value_type(e);
    if (e.uop == UnOp::Not) return op("arith.xori", {a, constant("true", DType::Bool)}, t);
    if (is_float(t)) return op("arith.negf", {a}, t);
    return op("arith.subi", {constant("0", t), a}, t);
  }

  std::string binary(const Expr& e) {
    const DType lt = value_type(*e.args[0]);
    const std::string a = val(*e.args[0]);
    const std::string b = val(*e.args[1]);
    const DType t = value_type(e);
    const bool f = is_float(lt);
    switch (e.bop) {
      case BinOp::Add:
        return op(f ? "arith.addf" : "arith.addi", {a, b}, t);
      case BinOp::Sub:
        return op(f ? "arith.subf" : "arith.subi", {a, b}, t);
      case BinOp::Mul:
        return op(f ? "arith.mulf" : "arith.muli", {a, b}, t);
      case BinOp::Div:
      case BinOp::Mod:
        // Integer / and % are calls by now (lower/legalize_int_div); % of floats is rejected.
        SB_ASSERT(f && e.bop == BinOp::Div, "an integer / or % reached the mlir printer");
        return op("arith.divf", {a, b}, t);
      case BinOp::Lt:
        return cmp(f ? "arith.cmpf" : "arith.cmpi", f ? "olt" : "slt", a, b, lt);
      case BinOp::Le:
        return cmp(f ? "arith.cmpf" : "arith.cmpi", f ? "ole" : "sle", a, b, lt);
      case BinOp::Gt:
        return cmp(f ? "arith.cmpf" : "arith.cmpi", f ? "ogt" : "sgt", a, b, lt);
      case BinOp::Ge:
        return cmp(f ? "arith.cmpf" : "arith.cmpi", f ? "oge" : "sge", a, b, lt);
      case BinOp::Eq:
        return cmp(f ? "arith.cmpf" : "arith.cmpi", f ? "oeq" : "eq", a, b, lt);
      case BinOp::Ne:
        return cmp(f ? "arith.cmpf" : "arith.cmpi", f ? "une" : "ne", a, b, lt);
      case BinOp::And:
        return op("arith.andi", {a, b}, DType::Bool);
      case BinOp::Or:
        return op("arith.ori", {a, b}, DType::Bool);
    }
    SB_ASSERT(false, "unknown binary operator");
    return "";
  }

  std::string call(const Expr& e) {
    const DType t = value_type(e);
    std::vector<std::string> a;
    for (const auto& x : e.args) a.push_back(val(*x));
    const bool f = is_float(t);
    switch (e.fn) {
      case Fn::Min:
        return op(f ? "arith.minimumf" : "arith.minsi", {a[0], a[1]}, t);
      case Fn::Max:
        return op(f ? "arith.maximumf" : "arith.maxsi", {a[0], a[1]}, t);
      case Fn::Abs: {
        if (f) return op("math.absf", {a[0]}, t);
        // Not math.absi: the loops and tiled_vector pipelines of MLIR 19 fail to legalize it.
        const std::string zero = constant("0", t);
        return select(cmp("arith.cmpi", "slt", a[0], zero, t), op("arith.subi", {zero, a[0]}, t),
                      a[0], t);
      }
      case Fn::Exp:
      case Fn::Log:
      case Fn::Sqrt:
      case Fn::Tanh:
      case Fn::Erf:
      case Fn::Pow:
      case Fn::Sin:
      case Fn::Cos:
      case Fn::Floor:
      case Fn::Ceil:
      case Fn::Round: {
        const char* m = mlir_math(e.fn);
        SB_ASSERT(m && f, std::string(fn_name(e.fn)) + " of a non-floating-point value");
        return op(m, a, t);
      }
      case Fn::Select:
        return select(a[0], a[1], a[2], t);
      case Fn::DivTrunc:  // by a divisor never 0 or -1 (legalize_int_div)
        return op("arith.divsi", {a[0], a[1]}, t);
      case Fn::RemTrunc:
        return op("arith.remsi", {a[0], a[1]}, t);
      case Fn::Sigmoid:  // no MLIR spelling: expanded before printing (spells)
      case Fn::Log1p:
      case Fn::Expm1:
      case Fn::Sign:
      case Fn::Rsqrt:
        break;
    }
    SB_ASSERT(false, std::string("'") + fn_name(e.fn) + "' reached the MLIR printer unexpanded");
    return "";
  }

  std::string cast(const std::string& v, DType from, DType to) {
    if (from == to) return v;
    const std::string tt = mlir_type(to);
    auto conv = [&](const std::string& name, const std::string& x, DType xt, DType rt) {
      const std::string r = fresh();
      w_.line(r + " = " + name + " " + x + " : " + mlir_type(xt) + " to " + mlir_type(rt));
      return r;
    };
    if (is_float(from) && is_float(to))
      return conv(scalar(to).bits > scalar(from).bits ? "arith.extf" : "arith.truncf", v, from, to);
    if (!is_float(from) && !is_float(to)) {
      const ScalarType &fs = scalar(from), &ts = scalar(to);
      if (fs.kind == ScalarKind::Index || ts.kind == ScalarKind::Index)
        return conv("arith.index_cast", v, from, to);
      // Between fixed-width integers: sign-extended (a bool zero-extended), or truncated.
      if (ts.bits > fs.bits)
        return conv(fs.kind == ScalarKind::Bool ? "arith.extui" : "arith.extsi", v, from, to);
      return ts.bits < fs.bits ? conv("arith.trunci", v, from, to) : v;
    }
    if (is_float(to)) {
      if (scalar(from).kind == ScalarKind::Index) {  // sitofp takes a fixed-width integer
        const std::string i64 = fresh();
        const std::string it = scalar(from).mlir_int_type;
        w_.line(i64 + " = arith.index_cast " + v + " : index to " + it);
        const std::string r = fresh();
        w_.line(r + " = arith.sitofp " + i64 + " : " + it + " to " + tt);
        return r;
      }
      return conv("arith.sitofp", v, from, to);
    }
    // Float to integer: truncation; NaN and values out of range give the type's minimum, as the
    // generated C code defines it.
    const ScalarType& ts = scalar(to);
    SB_ASSERT(ts.mlir_int_type, std::string("a float cast to ") + ts.name);
    const bool wide = ts.kind == ScalarKind::Index;  // fptosi gives an integer; index_cast it
    // In range: [lowest, -lowest) (two's complement: -lowest is the highest plus one).
    const std::string lowest = ts.mlir_lowest;
    SB_ASSERT(lowest[0] == '-', "a signed integer's lowest value");
    const std::string lo = constant(lowest + ".0", from);
    const std::string hi = constant(lowest.substr(1) + ".0", from);
    const std::string ge = cmp("arith.cmpf", "oge", v, lo, from);
    const std::string lt = cmp("arith.cmpf", "olt", v, hi, from);
    const std::string ok = op("arith.andi", {ge, lt}, DType::Bool);
    std::string r = fresh();
    w_.line(r + " = arith.fptosi " + v + " : " + mlir_type(from) + " to " + ts.mlir_int_type);
    std::string minv = constant(ts.mlir_lowest, to);
    if (wide) {
      const std::string ri = fresh();
      w_.line(ri + " = arith.index_cast " + r + " : i64 to index");
      r = ri;
    }
    return select(ok, r, minv, to);
  }

  // The identity of a reduction and its combining operation.
  std::string identity(ReduceOp rop, DType t) {
    if (is_float(t)) {
      const double inf = std::numeric_limits<double>::infinity();
      return constant(mlir_float(rop == ReduceOp::Sum    ? 0.0
                                 : rop == ReduceOp::Prod ? 1.0
                                 : rop == ReduceOp::Max  ? -inf
                                                         : inf,
                                 t),
                      t);
    }
    if (rop == ReduceOp::Sum) return constant("0", t);
    if (rop == ReduceOp::Prod) return constant("1", t);
    const ScalarType& s = scalar(t);
    SB_ASSERT(s.mlir_lowest && s.mlir_highest, std::string("a reduction over ") + s.name);
    return constant(rop == ReduceOp::Max ? s.mlir_lowest : s.mlir_highest, t);
  }
  std::string combine(ReduceOp rop, const std::string& acc, const std::string& v, DType t) {
    const bool f = is_float(t);
    switch (rop) {
      case ReduceOp::Sum:
        if (f && reassoc_) {
          const std::string r = fresh();
          w_.line(r + " = arith.addf " + acc + ", " + v + " fastmath<reassoc> : " + mlir_type(t));
          return r;
        }
        return op(f ? "arith.addf" : "arith.addi", {acc, v}, t);
      case ReduceOp::Prod:  // arith.muli wraps, as the spec language's i32 products do
        if (f && reassoc_) {
          const std::string r = fresh();
          w_.line(r + " = arith.mulf " + acc + ", " + v + " fastmath<reassoc> : " + mlir_type(t));
          return r;
        }
        return op(f ? "arith.mulf" : "arith.muli", {acc, v}, t);
      case ReduceOp::Max:
        return op(f ? "arith.maximumf" : "arith.maxsi", {acc, v}, t);
      case ReduceOp::Min:
        return op(f ? "arith.minimumf" : "arith.minsi", {acc, v}, t);
      case ReduceOp::ArgMax:
      case ReduceOp::ArgMin:
        SB_ASSERT(false, "an arg-reduction after check (check/arg_reductions.h rewrites them)");
    }
    return "";
  }

  // The fold of running scan `red`'s terms k in [from, to) (SSA index values) into `init`: an
  // scf.for carrying the accumulator (`one`: the index constant 1). Returns the fold.
  std::string fold_terms(const Expr& red, const std::string& from, const std::string& to,
                         const std::string& init, const std::string& one) {
    const DType t = value_type(red);
    const std::string ty = mlir_type(t);
    const std::string folded = fresh(), kk = fresh(), a = fresh();
    w_.open(folded + " = scf.for " + kk + " = " + from + " to " + to + " step " + one +
            " iter_args(" + a + " = " + init + ") -> (" + ty + ") {");
    loop_var_[red.ref] = kk;
    const std::string term = val(*red.args[0]);
    const std::string next = scan_combine(red.rop, a, term, t);
    w_.line("scf.yield " + next + " : " + ty);
    loop_var_.erase(red.ref);
    w_.close("}");
    return folded;
  }

  // combine() for the sequential folds of a running scan, whose accumulator is a dependency
  // chain: a floating-point maximum or minimum as a compare and a select that keep `acc` when it
  // is NaN or beyond `v` (the cpu backend's sb_max and sb_min), instead of arith.maximumf and
  // minimumf, whose x86 lowering (signed zeros, NaN checks) put about 15 cycles on the chain:
  // cummax ran 4x slower than the cpu backend's walk. Both propagate NaN; they differ only in
  // which of +0 and -0 they pick, values that compare equal.
  std::string scan_combine(ReduceOp rop, const std::string& acc, const std::string& v, DType t) {
    if (!is_float(t) || (rop != ReduceOp::Max && rop != ReduceOp::Min))
      return combine(rop, acc, v, t);
    const std::string beyond = cmp("arith.cmpf", rop == ReduceOp::Max ? "ogt" : "olt", acc, v, t);
    const std::string nan = cmp("arith.cmpf", "uno", acc, acc, t);
    return select(op("arith.ori", {beyond, nan}, DType::Bool), acc, v, t);
  }

  // The element type of tensor `t`'s memory here: its current row's view inside a row loop (a
  // row-local f16 or bf16 temp's holds f32), else the tensor's own type.
  DType mem_elem(int t) const {
    if (!row_.empty())
      if (auto rv = row_view_.find(t); rv != row_view_.end()) return rv->second.elem;
    return spec_.tensors[t].type;
  }

  // `dst` (of memref type `ty`, elements `dst_elem`) = op(k in lo..hi: body) at every output
  // point. `outer` lists the output indices that are dst's dimensions, in order.
  void emit_reduce(const Expr& r, const std::string& dst, const std::string& ty, DType dst_elem,
                   const std::vector<int>& outer) {
    if (is_storage_type(dst_elem)) {
      // An f16 or bf16 destination: the sums accumulate in an f32 buffer of its shape, whose
      // values are then rounded into it.
      const DType t = value_type(r);
      const int rank = static_cast<int>(outer.size());
      std::string dims, ids;
      for (int d = 0; d < rank; ++d) {
        const std::string c = constant(std::to_string(d), DType::Index);
        const std::string n = fresh();
        w_.line(n + " = memref.dim " + dst + ", " + c + " : " + ty);
        dims += (d ? ", " : "") + n;
        ids += (d ? ", d" : "d") + std::to_string(d);
      }
      const std::string tmp = fresh();
      const std::string tty = memref_type(rank, t);
      w_.line("// Accumulated in " + std::string(mlir_type(t)) + ", then rounded to " +
              mlir_type(dst_elem) + ".");
      w_.line(tmp + " = memref.alloc(" + dims + ") : " + tty);
      emit_reduce(r, tmp, tty, t, outer);
      const std::string map = "affine_map<(" + ids + ") -> (" + ids + ")>";
      std::string iters;
      for (int d = 0; d < rank; ++d) iters += d ? ", \"parallel\"" : "\"parallel\"";
      w_.line("linalg.generic {indexing_maps = [" + map + ", " + map + "], iterator_types = [" +
              iters + "]}");
      w_.line("    ins(" + tmp + " : " + tty + ")");
      w_.open("    outs(" + dst + " : " + ty + ") {");
      const std::string x = fresh(), o = fresh();
      w_.line("^bb0(" + x + ": " + mlir_type(t) + ", " + o + ": " + mlir_type(dst_elem) + "):");
      w_.line("linalg.yield " + cast(x, t, dst_elem) + " : " + mlir_type(dst_elem));
      w_.close("}");
      w_.line("memref.dealloc " + tmp + " : " + tty);
      return;
    }
    // A reduction no output index reaches, computed apart into its own buffer, is split over the
    // threads (lower/parallelize.h).
    if (parallel_ && row_.empty() && parallel_choice(spec_, *st_).apart.count(r.ref)) {
      SB_ASSERT(outer.empty(), "a reduction computed apart with output dimensions");
      return emit_blocked_reduce(r, dst, ty);
    }
    // A search (lower/patterns.h: FirstIndex) into one element, under a strategy that vectorises.
    if (reassoc_ && outer.empty())
      if (const std::optional<FirstIndex> m = match_first_index(*st_, r))
        return emit_search(r, *m, dst, ty);
    const DType t = value_type(r);
    const std::string id = identity(r.rop, t);
    w_.line("linalg.fill ins(" + id + " : " + mlir_type(t) + ") outs(" + dst + " : " + ty + ")");
    emit_generic(*r.args[0], dst, ty, t, &r, outer);
  }

  // Search `m` of reduction `r` into the one element of `dst` (of memref type `ty`), as the cpu
  // printer's (emit_common.h: print_search): an scf.while over blocks of kSearchTerms terms,
  // each block's conditions ORed by an scf.for (which LLVM vectorises), up to the first block
  // where one holds; an scf.while over that block to its first such term. The element is the
  // index found in that block, or the default when the range holds terms and no condition held
  // (the identity when it holds none). Both loops compute the condition with the same
  // operations, which LLVM's vectoriser does not change, so the block holds the term.
  void emit_search(const Expr& r, const FirstIndex& m, const std::string& dst,
                   const std::string& ty) {
    const DType t = value_type(r);
    const IndexVar& iv = st_->vars[r.ref];
    w_.line("// A search: the first term where the condition holds, in blocks of " +
            std::to_string(kSearchTerms) + " terms");
    w_.line("// tested in turn.");
    const std::string lo = val(*iv.lo), hi = val(*iv.hi);
    const std::string blk = constant(std::to_string(kSearchTerms), DType::Index);
    const std::string one = constant("1", DType::Index);
    // An i1 that is `value(inside)` where `inside` holds and false elsewhere.
    auto when = [&](const std::string& inside, const std::function<std::string()>& value) {
      const std::string c = fresh();
      w_.open(c + " = scf.if " + inside + " -> (i1) {");
      w_.line("scf.yield " + value() + " : i1");
      w_.close_open("} else {");
      w_.line("scf.yield " + constant("false", DType::Bool) + " : i1");
      w_.close("}");
      return c;
    };
    // The condition at term `k`.
    auto cond_at = [&](const std::string& k) {
      loop_var_[r.ref] = k;
      const std::string v = val(*m.cond);
      loop_var_.erase(r.ref);
      return v;
    };
    // An scf.while over an index from `init` in steps of `step`, while `test` (of the index, in
    // the loop's before region) gives a `go` that holds and a `stop` that does not; its result
    // is the index at which it stopped.
    auto walk =
        [&](const std::string& init, const std::string& step,
            const std::function<std::pair<std::string, std::string>(const std::string&)>& test) {
          const std::string res = fresh(), v = fresh(), n = fresh();
          w_.open(res + " = scf.while (" + v + " = " + init + ") : (index) -> index {");
          const auto [go, stop] = test(v);
          const std::string not_stop =
              op("arith.xori", {stop, constant("true", DType::Bool)}, DType::Bool);
          w_.line("scf.condition(" + op("arith.andi", {go, not_stop}, DType::Bool) + ") " + v +
                  " : index");
          w_.close_open("} do {");
          w_.line("^bb0(" + n + ": index):");
          w_.line("scf.yield " + op("arith.addi", {n, step}, DType::Index) + " : index");
          w_.close("}");
          return res;
        };
    // The first block holding a term where the condition holds, or one at or past hi: each
    // block's conditions ORed by an scf.for.
    const std::string b = walk(lo, blk, [&](const std::string& bb) {
      const std::string more = cmp("arith.cmpi", "slt", bb, hi, DType::Index);
      const std::string any = when(more, [&] {
        const std::string e =
            op("arith.minsi", {op("arith.addi", {bb, blk}, DType::Index), hi}, DType::Index);
        const std::string a = fresh(), k = fresh(), acc = fresh();
        w_.open(a + " = scf.for " + k + " = " + bb + " to " + e + " step " + one + " iter_args(" +
                acc + " = " + constant("false", DType::Bool) + ") -> (i1) {");
        w_.line("scf.yield " + op("arith.ori", {acc, cond_at(k)}, DType::Bool) + " : i1");
        w_.close("}");
        return a;
      });
      return std::make_pair(more, any);
    });
    // That block's first such term, or its end.
    const std::string end =
        op("arith.minsi", {op("arith.addi", {b, blk}, DType::Index), hi}, DType::Index);
    const std::string at = walk(b, one, [&](const std::string& k) {
      const std::string in = cmp("arith.cmpi", "slt", k, end, DType::Index);
      return std::make_pair(in, when(in, [&] { return cond_at(k); }));
    });
    const std::string found = cmp("arith.cmpi", "slt", at, end, DType::Index);
    loop_var_[r.ref] = at;
    const std::string index = val(*m.found);
    loop_var_.erase(r.ref);
    const std::string fallback = val(*m.none);
    const std::string terms = cmp("arith.cmpi", "slt", lo, hi, DType::Index);
    const std::string v = select(found, index, select(terms, fallback, identity(r.rop, t), t), t);
    w_.line("memref.store " + v + ", " + dst + "[] : " + ty);
  }

  // A full reduction (scalar `dst`) under `parallel`: an scf.parallel loop over at most kBlocks
  // blocks of the range, each reduced by a generic into a scalar of its own and stored as the
  // block's partial result, then a generic combining the partial results. The blocks depend only
  // on the range, so the result does not depend on the number of threads.
  void emit_blocked_reduce(const Expr& r, const std::string& dst, const std::string& ty) {
    explicit_loops_ = true;
    const DType t = value_type(r);
    const std::string et = mlir_type(t);
    const IndexVar& iv = st_->vars[r.ref];
    w_.line("// In parallel blocks, then the blocks' partial results.");
    const std::string lo = val(*iv.lo);
    const std::string hi = val(*iv.hi);
    const std::string n =
        op("arith.maxsi", {op("arith.subi", {hi, lo}, DType::Index), zero_index()}, DType::Index);
    const std::string zero = zero_index(), one = constant("1", DType::Index);
    const std::string block = block_length(n);
    const std::string last = op("arith.subi", {block, one}, DType::Index);
    const std::string blocks =
        op("arith.divui", {op("arith.addi", {n, last}, DType::Index), block}, DType::Index);
    const std::string partials = fresh();
    const std::string pty = "memref<" + std::to_string(kBlocks) + "x" + et + ">";
    w_.line(partials + " = memref.alloca() : " + pty);
    const std::string k = fresh();
    w_.open("scf.parallel (" + k + ") = (" + zero + ") to (" + blocks + ") step (" + one + ") {");
    const std::string b = op("arith.muli", {k, block}, DType::Index);
    const std::string end =
        op("arith.minsi", {op("arith.addi", {b, block}, DType::Index), n}, DType::Index);
    block_len_ = op("arith.subi", {end, b}, DType::Index);
    block_base_ = op("arith.addi", {lo, b}, DType::Index);
    block_var_ = r.ref;
    // The block's accumulator is local to the loop body, where LLVM keeps it in registers.
    const std::string acc = fresh();
    const std::string aty = memref_type(0, t);
    w_.line(acc + " = memref.alloca() : " + aty);
    w_.line("linalg.fill ins(" + identity(r.rop, t) + " : " + et + ") outs(" + acc + " : " + aty +
            ")");
    emit_generic(*r.args[0], acc, aty, t, &r, {});
    block_var_ = -1;
    block_len_.clear();
    block_base_.clear();
    const std::string part = fresh();
    w_.line(part + " = memref.load " + acc + "[] : " + aty);
    w_.line("memref.store " + part + ", " + partials + "[" + k + "] : " + pty);
    w_.line("scf.reduce");
    w_.close("}");
    w_.line("linalg.fill ins(" + identity(r.rop, t) + " : " + et + ") outs(" + dst + " : " + ty +
            ")");
    const std::string used = fresh();
    const std::string uty = "memref<?x" + et + ", strided<[1]>>";
    w_.line(used + " = memref.subview " + partials + "[0] [" + blocks + "] [1] : " + pty + " to " +
            uty);
    w_.line(
        "linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], "
        "iterator_types = [\"reduction\"]}");
    w_.line("    ins(" + used + " : " + uty + ")");
    w_.open("    outs(" + dst + " : " + ty + ") {");
    const std::string x = fresh(), a = fresh();
    w_.line("^bb0(" + x + ": " + et + ", " + a + ": " + et + "):");
    w_.line("linalg.yield " + combine(r.rop, a, x, t) + " : " + et);
    w_.close("}");
  }

  // Affine text of a subscript over the generic's dims, or false when it is not affine in them
  // (with integer coefficients, no sizes): "d0", "(d1 + 1)", "(d0 + d2 * -2 - 3)".
  bool affine(const Expr& e, std::string& out) {
    const std::optional<Affine> a = decompose(e);
    if (!a || a->overflow || !a->sizes.empty() || !a->atoms.empty()) return false;
    int64_t constant = a->constant;
    std::map<int, int64_t> by_dim;
    const int64_t min = std::numeric_limits<int64_t>::min();  // has no negation
    for (const auto& [v, c] : a->vars) {
      if (c == min) return false;
      if (v >= static_cast<int>(dim_of_var_.size()) || dim_of_var_[v] < 0) return false;
      // A block's reduction index, or the streamed output index of a part of a row, starts at a
      // run-time offset: not affine in the dims.
      if (v == block_var_ || v == part_var_) return false;
      const IndexVar& iv = st_->vars[v];
      if (iv.is_reduction) {  // the dim counts from the range's start: v = d + lo
        if (iv.lo->kind != ExprKind::IntLit) return false;
        int64_t p;
        if (__builtin_mul_overflow(c, iv.lo->ival, &p) ||
            __builtin_add_overflow(constant, p, &constant))
          return false;
      }
      by_dim[dim_of_var_[v]] = c;
    }
    if (constant == min) return false;
    std::string text;
    for (const auto& [d, c] : by_dim) {
      const std::string dim = "d" + std::to_string(d);
      if (text.empty())
        text = c == 1 ? dim : dim + " * " + std::to_string(c);
      else if (c == 1 || c == -1)
        text += (c == 1 ? " + " : " - ") + dim;
      else
        text += (c > 0 ? " + " : " - ") + dim + " * " + std::to_string(c > 0 ? c : -c);
    }
    if (text.empty()) {
      out = std::to_string(constant);
      return true;
    }
    if (constant != 0)
      text += (constant > 0 ? " + " : " - ") + std::to_string(constant > 0 ? constant : -constant);
    out = text == "d" + std::to_string(by_dim.begin()->first) ? text : "(" + text + ")";
    return true;
  }

  // Reads of `e` (not inside nested reductions) that can be generic operands.
  void collect_reads(const Expr& e, std::vector<const Expr*>& reads) {
    if (e.kind == ExprKind::Reduce) return;
    if (e.kind == ExprKind::Read && spec_.tensors[e.ref].boundary == Boundary::None) {
      // Inside a row loop, a read of the current row is an operand of the row's view.
      const View* rv = view_of(e);
      const size_t from = rv ? static_cast<size_t>(rv->fixed) : 0;
      bool ok = true;
      for (size_t d = from; d < e.args.size(); ++d) {
        std::string text;
        if (!affine(*e.args[d], text)) ok = false;
      }
      if (ok) {
        reads.push_back(&e);
        return;  // an operand's subscripts are not evaluated in the body
      }
    }
    for (const auto& a : e.args) collect_reads(*a, reads);
  }

  // One linalg.generic computing `body` at every point of the domain: the statement's output
  // indices, plus the reduction variable of `red` when given (then accumulating into `dst`).
  // `outer` lists the output indices that are the leading dimensions of the domain (and dst's).
  void emit_generic(const Expr& body, const std::string& dst, const std::string& dst_ty,
                    DType dst_elem, const Expr* red, const std::vector<int>& outer) {
    const Statement& st = *st_;
    const int rank = static_cast<int>(outer.size());
    dim_of_var_.assign(st.vars.size(), -1);
    lo_of_var_.clear();
    std::vector<std::string> domain;
    // The reduction dimension comes before the innermost output dimension when that makes the
    // innermost loop contiguous (b[k, j] in a matrix product), except in `loops` (the plain
    // reference) and where the generic would become a parallel loop inside a sequential one
    // (openmp outside a row group or emit_output_blocks' loop). Each output's sum keeps its order
    // either way.
    const bool red_first = red && red->ref != block_var_ && reassoc_ && rank >= 1 &&
                           (!parallel_ || !row_.empty() || in_blocks_) &&
                           outer.back() == static_cast<int>(st.rank()) - 1 &&
                           simd_choice(spec_, st).outside.count(red->ref) > 0;
    auto add_outer = [&](int d) {
      dim_of_var_[outer[d]] = static_cast<int>(domain.size());
      if (outer[d] == part_var_) {
        domain.push_back(part_len_);
        lo_of_var_[outer[d]] = part_base_;
      } else {
        domain.push_back(extents_[st.out][outer[d]]);
      }
    };
    const int before = red_first ? rank - 1 : rank;
    for (int d = 0; d < before; ++d) add_outer(d);
    if (red && red->ref == block_var_) {
      dim_of_var_[red->ref] = static_cast<int>(domain.size());
      domain.push_back(block_len_);
      lo_of_var_[red->ref] = block_base_;
    } else if (red) {
      const IndexVar& iv = st.vars[red->ref];
      const std::string lo = val(*iv.lo);
      const std::string hi = val(*iv.hi);
      const std::string n = op("arith.subi", {hi, lo}, DType::Index);
      dim_of_var_[red->ref] = static_cast<int>(domain.size());
      domain.push_back(op("arith.maxsi", {n, zero_index()}, DType::Index));
      lo_of_var_[red->ref] = lo;
    }
    for (int d = before; d < rank; ++d) add_outer(d);
    const int nd = static_cast<int>(domain.size());
    std::string dims;
    for (int d = 0; d < nd; ++d) dims += (d ? ", d" : "d") + std::to_string(d);
    auto map = [&](const std::string& results) {
      return "affine_map<(" + dims + ") -> (" + results + ")>";
    };

    std::vector<std::string> ins, in_types, maps, arg_types;
    std::map<int, DType> storage_arg;  // operands of f16 or bf16 elements, widened in the body
    if (nd > 0) {
      // The domain view: extents of the iteration space, zero strides, never read.
      std::string sizes, strides, lay;
      for (int d = 0; d < nd; ++d) {
        sizes += (d ? ", " : "") + domain[d];
        strides += d ? ", " + zero_index() : zero_index();
        lay += d ? ", ?" : "?";
      }
      const std::string view = fresh();
      std::string vty = "memref<";
      for (int d = 0; d < nd; ++d) vty += "?x";
      vty += std::string(mlir_type(dst_elem)) + ", strided<[" + lay + "]>>";
      w_.line(view + " = memref.reinterpret_cast " + dst + " to offset: [0], sizes: [" + sizes +
              "], strides: [" + strides + "] : " + dst_ty + " to " + vty);
      ins.push_back(view);
      in_types.push_back(vty);
      maps.push_back(map(dims));
      arg_types.push_back(mlir_type(dst_elem));
    }

    std::vector<const Expr*> reads;
    collect_reads(body, reads);
    std::map<std::string, int> operand_of;  // "tensor|map" -> index into ins
    std::vector<std::pair<const Expr*, int>> read_operand;
    for (const Expr* r : reads) {
      const View* rv = view_of(*r);
      const bool row = rv != nullptr;
      std::string res;
      for (size_t d = row ? static_cast<size_t>(rv->fixed) : 0; d < r->args.size(); ++d) {
        std::string text;
        affine(*r->args[d], text);
        res += (res.empty() ? "" : ", ") + text;
      }
      // A stride other than 0 or 1 along the innermost dimension (host::PipelineFacts).
      if (nd > 0 && !r->args.empty()) {
        const std::optional<Affine> last = decompose(*r->args.back());
        for (const auto& [v, c] : last ? last->vars : std::map<int, int64_t>{})
          if (dim_of_var_[v] == nd - 1 && c != 1) strided_inner_ = true;
      }
      const Tensor& t = spec_.tensors[r->ref];
      const std::string key = (row ? "row " : "") + t.name + "|" + res;  // one view per tensor
      auto it = operand_of.find(key);
      if (it == operand_of.end()) {
        it = operand_of.emplace(key, static_cast<int>(ins.size())).first;
        ins.push_back(row ? rv->name : "%" + t.name);
        in_types.push_back(row ? rv->type : memref_type(static_cast<int>(t.shape.size()), t.type));
        maps.push_back(map(res));
        const DType elem = row ? rv->elem : t.type;
        arg_types.push_back(mlir_type(elem));
        if (is_storage_type(elem)) storage_arg[it->second] = elem;
      }
      read_operand.push_back({r, it->second});
    }
    const std::vector<const Expr*> reds = top_reduces_of(body);
    std::vector<std::pair<const Expr*, int>> red_operand;
    std::string out_dims;
    for (int d = 0; d < rank; ++d)
      out_dims += (d ? ", d" : "d") + std::to_string(dim_of_var_[outer[d]]);
    for (const Expr* r : reds) {
      auto it = temp_of_.find(r);
      if (it == temp_of_.end()) continue;  // evaluated in the body by an scf.for
      std::string res;
      for (int v : it->second.outer)
        res += (res.empty() ? "d" : ", d") + std::to_string(dim_of_var_[v]);
      red_operand.push_back({r, static_cast<int>(ins.size())});
      ins.push_back(it->second.buffer);
      in_types.push_back(it->second.type);
      maps.push_back(map(res));
      arg_types.push_back(mlir_type(value_type(*r)));
    }
    maps.push_back(map(out_dims));

    std::string iters;
    for (int d = 0; d < nd; ++d)
      iters += std::string(d ? ", " : "") +
               (red && d == dim_of_var_[red->ref] ? "\"reduction\"" : "\"parallel\"");
    std::string maps_text;
    for (size_t i = 0; i < maps.size(); ++i) maps_text += (i ? ", " : "") + maps[i];
    w_.line("linalg.generic {indexing_maps = [" + maps_text + "], iterator_types = [" + iters +
            "]}");
    std::string ins_text, ins_ty;
    for (size_t i = 0; i < ins.size(); ++i) {
      ins_text += (i ? ", " : "") + ins[i];
      ins_ty += (i ? ", " : "") + in_types[i];
    }
    // A generic of an empty domain that reads nothing through operands (its value comes from an
    // scf.for in its body) has no `ins` at all: `ins( : )` does not parse.
    if (!ins.empty()) w_.line("    ins(" + ins_text + " : " + ins_ty + ")");
    w_.open("    outs(" + dst + " : " + dst_ty + ") {");
    std::vector<std::string> args;
    std::string block;
    for (size_t i = 0; i < arg_types.size(); ++i) {
      args.push_back(fresh());
      block += (i ? ", " : "") + args.back() + ": " + arg_types[i];
    }
    const std::string acc = fresh();
    block += (block.empty() ? "" : ", ") + acc + ": " + mlir_type(dst_elem);
    w_.line("^bb0(" + block + "):");
    read_arg_.clear();
    reduce_arg_.clear();
    for (auto& [i, elem] : storage_arg) {
      const std::string x = widen(args[i], elem);
      args[i] = x;
    }
    for (const auto& [r, i] : read_operand) read_arg_[r] = args[i];
    for (const auto& [r, i] : red_operand) reduce_arg_[r] = args[i];
    emit_indices(body);
    std::string v = val(body);
    if (red)
      v = combine(red->rop, acc, v, dst_elem);
    else
      v = cast(v, value_type(body), dst_elem);  // an f32 value rounded into f16 or bf16 memory
    w_.line("linalg.yield " + v + " : " + mlir_type(dst_elem));
    w_.close("}");
    read_arg_.clear();
    reduce_arg_.clear();
    index_val_.clear();
    dim_of_var_.clear();
  }

  // Parallel loops split their iterations into at most this many blocks: enough for a static
  // schedule to balance them over the threads, few enough that each block's buffers are
  // allocated rarely.
  static constexpr int kBlocks = 64;
  // Streaming stores write whole lines of kLineBytes, when the tensors a statement touches total
  // at least kStreamMinBytes (both from the shared policy, lower/streaming.h).
  static constexpr int kLineBytes = kStreamLineBytes;

  const Spec& spec_;
  CodeWriter w_;
  bool reassoc_ = false;
  bool parallel_ = false;
  bool explicit_loops_ = false;
  Tiles tiles_;
  std::optional<GemmBlocks> gemm_;
  bool im2col_ = false;
  std::set<DType> gemm_types_;
  bool thread_count_ = false;
  bool strided_inner_ = false;  // host::PipelineFacts::strided_inner
  // The epilogues of emitted block products: statements the printer made, alive while it runs.
  std::vector<std::unique_ptr<Statement>> epilogues_;
  // Inside a block of a blocked reduction: its reduction var, the block's length and the value
  // of the var at the block's start.
  int block_var_ = -1;
  std::string block_len_, block_base_;
  // Inside a part of a streamed row: the output's last index, the part's length and the value of
  // the index at the part's start.
  int part_var_ = -1;
  std::string part_len_, part_base_;
  bool in_blocks_ = false;  // inside emit_output_blocks' parallel loop
  // Reads print without their boundary rule: code that runs only where inside_condition holds.
  bool assume_inside_ = false;
  // Inside a row group with streamed statements: the i1 value that selects streaming ("" when
  // streaming is unconditional), and the line buffer of each streamed element type.
  bool streaming_ = false;
  std::string stream_cond_;
  std::map<DType, View> line_buf_;
  std::set<int> row_local_;       // inside a row loop: the group's row-local temps
  std::string row_;               // inside a row loop: the row index; else empty
  int row_dims_ = 1;              // the output dimensions a row fixes (a collapsed range: more)
  std::vector<std::string> row_idx_;  // inside a row loop: their indices (row_ the first)
  std::string next_row_;  // inside a row loop with next-row prefetches: the next row (or the last)
  std::map<int, View> row_view_;  // inside a row loop: tensor -> its current row
  int next_ = 0;
  const Statement* st_ = nullptr;
  std::vector<std::vector<std::string>> extents_;
  std::vector<int> dim_of_var_;           // statement var -> generic dim, or -1
  std::map<int, std::string> lo_of_var_;  // reduction var -> its lower bound's value
  std::map<const Expr*, std::string> read_arg_;
  std::map<const Expr*, std::string> reduce_arg_;
  struct Temp {
    std::string buffer;      // SSA name of the buffer
    std::string type;        // its memref type
    std::vector<int> outer;  // the output indices that are its dimensions
  };
  std::map<const Expr*, Temp> temp_of_;
  std::map<const Expr*, Temp> row_temp_;  // a row group's reduction buffers, one row long
  // Vars with a value from outside the generic: the reduction var of an scf.for in a body -> its
  // IV, and the row index (var 0) inside a row loop -> row_.
  std::map<int, std::string> loop_var_;
  std::map<int, std::string> index_val_;  // var -> its value in the current body
};

// ---- The C shim ---------------------------------------------------------------------------------

std::string c_int(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
      return std::to_string(e.ival) + "LL";
    case ExprKind::SizeRef:
      return "sb_s[" + std::to_string(e.ref) + "]";
    case ExprKind::Unary:
      return "(-" + c_int(*e.args[0]) + ")";
    case ExprKind::Binary: {
      const char* o = e.bop == BinOp::Add   ? " + "
                      : e.bop == BinOp::Sub ? " - "
                      : e.bop == BinOp::Mul ? " * "
                      : e.bop == BinOp::Div ? " / "
                      : e.bop == BinOp::Mod ? " % "
                                            : nullptr;
      SB_ASSERT(o != nullptr, "a shape expression of another operator");
      return "(" + c_int(*e.args[0]) + o + c_int(*e.args[1]) + ")";
    }
    case ExprKind::Call:
      // A shape's quotient, legalised (lower/legalize_int_div.h; its divisor is at least 1).
      SB_ASSERT(e.fn == Fn::DivTrunc && e.args.size() == 2,
                "a call in a shape other than div_trunc");
      return "(" + c_int(*e.args[0]) + " / " + c_int(*e.args[1]) + ")";
    default:
      SB_ASSERT(false, "unexpected shape expression");
      return "";
  }
}

std::string shim(const Spec& spec, const std::vector<Variant>& variants) {
  CodeWriter w;
  w.line("#include <stdint.h>");
  w.line("");
  w.line("#include \"specbench_abi.h\"");
  w.line("");
  w.line("// MLIR's memref descriptors, by rank; element pointers are untyped here.");
  std::set<size_t> ranks;
  for (const auto& t : spec.tensors) ranks.insert(t.shape.size());
  for (size_t r : ranks) {
    std::string s = "typedef struct { void* allocated; void* aligned; int64_t offset;";
    if (r > 0)
      s += " int64_t sizes[" + std::to_string(r) + "]; int64_t strides[" + std::to_string(r) + "];";
    w.line(s + " } sb_memref" + std::to_string(r) + ";");
  }
  w.line("");
  std::vector<std::string> params;
  for (const auto& t : spec.tensors)
    params.push_back("sb_memref" + std::to_string(t.shape.size()) + "*");
  for (size_t i = 0; i < spec.sizes.size(); ++i) params.push_back("int64_t");
  for (const Variant& v : variants) {
    const std::string fn = spec.name + "_" + v.name;
    w.line(wrap_call("void _mlir_ciface_" + fn, params, ";", 0));
    w.open("static int sb_variant_" + v.name + "(const sb_args* sb_a) {");
    w.line("const int64_t* sb_s = sb_a->sizes;");
    w.line("(void)sb_s;");
    std::vector<std::string> call;
    for (size_t t = 0; t < spec.tensors.size(); ++t) {
      const Tensor& tt = spec.tensors[t];
      const std::string m = "sb_m" + std::to_string(t);
      const std::string p = "sb_a->tensors[" + std::to_string(t) + "]";
      const size_t r = tt.shape.size();
      w.line("sb_memref" + std::to_string(r) + " " + m + ";");
      w.line(m + ".allocated = " + p + ";");
      w.line(m + ".aligned = " + p + ";");
      w.line(m + ".offset = 0;");
      for (size_t d = r; d-- > 0;) {
        w.line(m + ".sizes[" + std::to_string(d) + "] = " + c_int(*tt.shape[d]) + ";");
        w.line(m + ".strides[" + std::to_string(d) + "] = " +
               (d + 1 == r ? std::string("1")
                           : m + ".strides[" + std::to_string(d + 1) + "] * " + m + ".sizes[" +
                                 std::to_string(d + 1) + "]") +
               ";");
      }
      call.push_back("&" + m);
    }
    for (size_t i = 0; i < spec.sizes.size(); ++i)
      call.push_back("sb_s[" + std::to_string(i) + "]");
    w.line(wrap_call("_mlir_ciface_" + fn, call, ";", w.indent()));
    w.line("return 0;");
    w.close();
    w.line("");
  }
  if (!variants.empty()) {
    w.open("static const sb_variant sb_variants[] = {");
    for (const Variant& v : variants) w.line("{\"" + v.name + "\", sb_variant_" + v.name + "},");
    w.close("};");
    w.line("");
  }
  w.open("const sb_module* specbench_module(void) {");
  w.line("static const sb_module m = {SPECBENCH_ABI_VERSION, \"" + spec.name + "\", \"mlir\", " +
         std::to_string(spec.tensors.size()) + ", " + std::to_string(spec.sizes.size()) + ", " +
         std::to_string(variants.size()) + ", " +
         (variants.empty() ? "(const sb_variant*)0" : "sb_variants") + "};");
  w.line("return &m;");
  w.close();
  std::string out;
  const std::string& text = w.str();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    out += line.empty() ? "//|\n" : "//| " + line + "\n";
    pos = nl + 1;
  }
  return out;
}

class MlirEmitter final : public Emitter {
 public:
  std::string backend() const override { return "mlir"; }
  std::string extension() const override { return "mlir"; }
  bool prints_host_bodies() const override { return true; }
  std::vector<StrategyInfo> strategies() const override { return mlir_strategies().infos(); }
  Status check_variant(const Spec& spec, const Variant& v) const override {
    return mlir_strategies().check_fit(spec, v);
  }
  bool spells(Fn fn) const override {
    return fn == Fn::Min || fn == Fn::Max || fn == Fn::Abs || fn == Fn::Select ||
           fn == Fn::DivTrunc || fn == Fn::RemTrunc || mlir_math(fn);
  }
  // f16 and bf16 memrefs: each load widened to f32 (arith.extf), each store rounded
  // (arith.truncf); accumulators, temps' private rows and registers hold f32.
  bool takes_storage(DType) const override { return true; }

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

GeneratedFile MlirEmitter::print(const Spec& spec) const {
  const auto& variants = backend_variants(spec, backend());
  if (variants.empty()) {
    // Emitted for every spec by the golden and unit tests: no module to lower, an empty table.
    return {spec.name + "/mlir/" + spec.name + ".mlir",
            file_header(spec, *this) + "\n" + shim(spec, variants)};
  }

  // A strategy that does not reassociate (`loops`) keeps every sum in the spec's order, like the
  // cpu backend's loops; the others may reassociate sums. Only a parallel one (`openmp`) has
  // explicit parallel loops (fused row groups).
  struct Text {
    std::string body;
    bool explicit_loops = false;
    std::set<DType> gemm_types;  // of its block products (blocked_matmul)
    bool thread_count = false;   // it calls omp_get_max_threads
    bool strided_inner = false;  // host::PipelineFacts::strided_inner
  };
  auto make_body = [&spec](bool reassoc, bool parallel, const Tiles& tiles = {},
                           std::optional<GemmBlocks> gemm = std::nullopt, bool im2col = false) {
    Body body(spec, reassoc, parallel, tiles, gemm, im2col);
    body.emit_extents();
    // The row_fusion pass's groups (lower/row_fusion.h), run by the parallel strategy.
    const std::vector<RowGroup> no_groups;
    const std::vector<RowGroup>& groups = parallel ? spec.schedule.row_groups : no_groups;
    size_t next_group = 0;
    // Under blocked_matmul a group that holds a contraction runs statement by statement, so
    // that the contraction is a block product.
    auto has_gemm = [&](const RowGroup& g) {
      for (size_t k = g.first; gemm && k <= g.last; ++k)
        if (match_mlir_gemm(spec, spec.stmts[k]) ||
            (im2col && host::is_gathered_gemm(spec, spec.stmts[k])))
          return true;
      return false;
    };
    for (size_t k = 0; k < spec.stmts.size(); ++k) {
      while (next_group < groups.size() && groups[next_group].first < k) ++next_group;
      if (next_group < groups.size() && groups[next_group].first == k &&
          !has_gemm(groups[next_group])) {
        body.emit_row_group(groups[next_group]);
        k = groups[next_group++].last;
      } else {
        body.emit_statement(spec.stmts[k]);
      }
    }
    body.w().line("return");
    return Text{body.w().str(), body.explicit_loops(), body.gemm_types(), body.thread_count(),
                body.strided_inner()};
  };
  const Text in_order = make_body(false, false), reassociated = make_body(true, false);
  // The parallel body once per tile shape of the parallel variants (their tile parameters),
  // cache blocks of the blocked_matmul and im2col variants (mc, nc, kc; zeros elsewhere) and
  // whether gathered GEMMs are im2col.
  std::map<std::vector<int64_t>, Text> parallel;

  // Every tensor is a buffer of its own (specbench_abi.h), so the memrefs are noalias, as the
  // C-family backends declare their pointers __restrict.
  std::string sig;
  for (const auto& t : spec.tensors)
    sig += (sig.empty() ? "%" : ", %") + t.name + ": " +
           memref_type(static_cast<int>(t.shape.size()), t.type) + " {llvm.noalias}";
  for (const auto& s : spec.sizes) sig += (sig.empty() ? "%" : ", %") + s.name + ": index";

  std::string out = file_header(spec, *this);
  out += "//\n";
  out +=
      "// One module per variant, each after a split marker line (mlir-opt --split-input-file);\n";
  out +=
      "// the `sb-pipeline` line above each is the mlir-opt pass pipeline that lowers it. The C\n";
  out += "// shim at the end (lines starting with `//|`) exports specbench_module().\n";
  bool bf16 = false;  // bf16 memory: the pipelines expand its conversions (mlir_bf16_pipeline)
  for (const Tensor& t : spec.tensors) bf16 |= t.type == DType::BF16;
  for (const Variant& v : variants) {
    const host::HostStrategy& strategy = mlir_strategies().of(v);
    const host::HostSchedule& sched = strategy.schedule;
    // Row groups and explicit parallel loops come together in the parallel body.
    SB_ASSERT(sched.parallel == sched.fuse_rows,
              "mlir strategy with only one of parallel and fuse_rows: " + v.strategy);
    SB_ASSERT(sched.reassociate || !sched.parallel,
              "mlir strategy parallel in the spec's order: " + v.strategy);
    SB_ASSERT(static_cast<bool>(sched.pipeline), "mlir strategy without a pipeline: " + v.strategy);
    std::map<std::string, int64_t> params;
    for (const auto& p : strategy.info.params) params[p.name] = param(v, strategy.info, p.name);
    out += "\n// -----\n";
    out += "// sb-variant: " + v.name + "\n";
    const Tiles tiles = sched.parallel ? host::variant_tiles(v, strategy.info) : Tiles{};
    std::optional<GemmBlocks> blocks;
    if (sched.gemm == host::Gemm::Transform)
      blocks = GemmBlocks{params.at("mc"), params.at("nc"), params.at("kc"),
                          mlir_gemm_row_multiple(params.at("mr"))};
    SB_ASSERT(sched.gemm == host::Gemm::None || (blocks && sched.parallel),
              "mlir strategy with a GEMM other than a parallel transform one: " + v.strategy);
    const std::vector<int64_t> shape{tiles.outer,
                                     tiles.inner,
                                     blocks ? blocks->mc : 0,
                                     blocks ? blocks->nc : 0,
                                     blocks ? blocks->kc : 0,
                                     blocks ? blocks->mr : 0,
                                     sched.im2col ? 1 : 0};
    if (sched.parallel && !parallel.count(shape))
      parallel[shape] = make_body(true, true, tiles, blocks, sched.im2col);
    const Text& text = !sched.reassociate ? in_order
                       : sched.parallel   ? parallel.at(shape)
                                          : reassociated;
    host::PipelineFacts facts;
    facts.explicit_loops = text.explicit_loops;
    facts.strided_inner = text.strided_inner;
    const std::string pipeline = sched.pipeline(params, facts);
    out += "// sb-pipeline: " + (bf16 ? mlir_bf16_pipeline(pipeline) : pipeline) + "\n";
    out += text.explicit_loops ? "module attributes {transform.with_named_sequence} {\n"
                               : "module {\n";
    // libomp's thread count, for blocked_matmul's row chunks.
    if (text.thread_count) out += "  func.func private @omp_get_max_threads() -> i32\n";
    out += "  func.func @" + spec.name + "_" + v.name + "(" + sig +
           ") attributes {llvm.emit_c_interface} {\n";
    out += text.body;
    out += "  }\n";
    // The register tiles of each element type, for native vectors of `simd` bytes (0: the
    // variant's own mr and nr_bytes only).
    auto gemm_schedule = [&](int64_t simd, int64_t native_mr) {
      std::string s;
      if (!blocks) return s;
      const int64_t mr = params.at("mr") != 0 ? params.at("mr") : native_mr;
      const int64_t nr_bytes = params.at("nr_bytes") != 0 ? params.at("nr_bytes") : 2 * simd;
      for (DType t : text.gemm_types)
        s += mlir_gemm_schedule(mlir_type(t), mr, std::max<int64_t>(1, nr_bytes / dtype_bytes(t)));
      return s;
    };
    if (blocks && mlir_native_tiles_wanted(params.at("mr"), params.at("nr_bytes"))) {
      // One entry point per native vector width; the pipeline names the host's.
      SB_ASSERT(text.explicit_loops, "a blocked_matmul module without explicit loops");
      for (const MlirNativeTile& n : mlir_native_tiles()) {
        out += "  // The register tiles where the widest native vectors are " +
               std::to_string(n.simd_bytes) + " bytes (the runtime runs the host's).\n";
        out += mlir_parallel_loops_schedule(gemm_schedule(n.simd_bytes, n.mr),
                                            mlir_gemm_entry_point(std::to_string(n.simd_bytes)));
      }
    } else if (text.explicit_loops) {
      out += mlir_parallel_loops_schedule(gemm_schedule(0, 0));
    }
    out += "}\n";
  }
  out += "\n" + shim(spec, variants);
  return {spec.name + "/mlir/" + spec.name + ".mlir", out};
}

}  // namespace

const Emitter& mlir_emitter() {
  static const MlirEmitter e;
  return e;
}

}  // namespace sb
