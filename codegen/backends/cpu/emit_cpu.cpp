#include "backends/cpu/emit_cpu.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "backends/common/emit_common.h"
#include "backends/common/loop_leaves.h"
#include "backends/cpu/attention.h"
#include "backends/cpu/print_loops.h"
#include "backends/cpu/strategies.h"
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

class CpuEmitter final : public Emitter {
 public:
  std::string backend() const override { return "cpu"; }
  std::string extension() const override { return "cpp"; }
  std::vector<StrategyInfo> strategies() const override { return cpu_strategies().infos(); }
  Status check_variant(const Spec& spec, const Variant& v) const override {
    return cpu_strategies().check_fit(spec, v);
  }
  const GemmTarget* gemm_target() const override { return &gemm_target_cpu(); }
  bool prints_host_bodies() const override { return true; }
  bool uses_blocked_gemm(const Variant& v) const override {
    return cpu_strategies().of(v).schedule.gemm == host::Gemm::Blocked;
  }
  bool spells(Fn fn) const override { return c_spells(fn); }
  // f16 and bf16 elements are structs that read as float (storage_types in emit_common.h).
  bool takes_storage(DType) const override { return true; }

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

// The OpenMP clause that collapses the parallelize pass's leading output loops of L's statement
// (ParallelChoice::collapse) into one parallel range, or "" for one loop.
std::string collapse_clause(const StmtLowering& L) {
  const int n = parallel_choice(L.spec(), L.stmt()).collapse;
  SB_ASSERT(n == 1 || n + 1 < static_cast<int>(L.stmt().rank()),
            "a collapse that reaches the innermost output loop");
  return n > 1 ? " collapse(" + std::to_string(n) + ")" : "";
}

// Opens the loops of output dimensions [first, rank - 1) of L's statement (all but the
// innermost), dimension 0's as `#pragma omp parallel for` when `parallel`, collapsed with the
// others as the parallelize pass says (the loops open one right inside the other). Returns how
// many it opened, for the caller to close.
size_t open_outer_loops(StmtLowering& L, size_t first, bool parallel, CodeWriter& w) {
  const Statement& st = L.stmt();
  size_t opened = 0;
  for (size_t d = first; d + 1 < st.rank(); ++d, ++opened) {
    if (parallel && d == 0)
      w.line("#pragma omp parallel for schedule(static)" + collapse_clause(L));
    const std::string& v = L.var_name(static_cast<int>(d));
    w.open("for (int64_t " + v + " = 0; " + v + " < " + L.extent(st.out, d, kPrecRel + 1) + "; ++" +
           v + ") {");
  }
  return opened;
}

// Opens the loop over blocks [sb_jb, sb_je) of kOutsideBlock elements of an innermost index of
// extent `n` (a C expression); the caller closes it.
void open_output_blocks(const std::string& n, CodeWriter& w) {
  const std::string block = std::to_string(kOutsideBlock);
  w.open("for (int64_t sb_jb = 0; sb_jb < " + n + "; sb_jb += " + block + ") {");
  w.line("const int64_t sb_je = " + n + " - sb_jb < " + block + " ? " + n + " : sb_jb + " + block +
         ";");
}

// ---- Vector math beside conditions ------------------------------------------------------------
//
// GCC 12 does not if-convert a loop body that calls a function, so a SIMD loop holding both a
// libmvec call and a condition (a select, min, max, comparison or checked conversion) stays
// scalar ("control flow in loop") and calls libm once per element: softplus's
// `x > 20 ? x : log1pf(expf(x))` ran 14x slower than in Mojo. Such a statement is computed in
// chunks of kStageElems elements instead, each by a sequence of `omp simd` loops over the chunk
// (stages): every stage but the last computes some of its subexpressions into local arrays, the
// last the statement, and no stage holds both a call and a condition. Every read is in bounds
// whichever way a condition goes (check/bounds.h) and expressions have no side effects, so
// computing both arms of a select changes no value.

constexpr int kStageElems = 64;

constexpr unsigned kMixCalls = 1, kMixConditions = 2;  // what a node holds

// What node `e` itself is to GCC's vectoriser: a call of a libmvec function, a condition, or
// neither.
unsigned stage_kind(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Call: {
      const DType t = value_type(e);
      if (e.fn == Fn::Select || e.fn == Fn::Min || e.fn == Fn::Max) return kMixConditions;
      if (e.fn == Fn::Abs) return is_float(t) ? 0 : kMixConditions;
      const CMath* m = c_math(e.fn);
      return m && m->libmvec && is_float(t) ? kMixCalls : 0;
    }
    case ExprKind::Binary:
      switch (e.bop) {
        case BinOp::Add:
        case BinOp::Sub:
        case BinOp::Mul:
        case BinOp::Div:
        case BinOp::Mod:
          return 0;
        case BinOp::Lt:
        case BinOp::Le:
        case BinOp::Gt:
        case BinOp::Ge:
        case BinOp::Eq:
        case BinOp::Ne:
        case BinOp::And:
        case BinOp::Or:
          return kMixConditions;
      }
      return 0;
    case ExprKind::Unary:
      return e.uop == UnOp::Not ? kMixConditions : 0;
    case ExprKind::Cast:  // floating-point to integer: a helper with range checks
      return is_float(value_type(*e.args[0])) && !is_float(value_type(e)) ? kMixConditions : 0;
    case ExprKind::FloatLit:
    case ExprKind::IntLit:
    case ExprKind::Name:
    case ExprKind::Const:
    case ExprKind::IndexVar:
    case ExprKind::SizeRef:
    case ExprKind::Read:
    case ExprKind::Reduce:
      return 0;
  }
  return 0;
}

// The stages of L's statement (above): the subexpressions each stage before the last computes,
// in order; none when its right-hand side does not mix calls and conditions or holds a reduction.
// A node L already prints otherwise (an override) counts as neither.
std::vector<std::vector<const Expr*>> simd_stages(const StmtLowering& L) {
  const Expr& rhs = *L.stmt().rhs;
  std::vector<std::vector<const Expr*>> stages;
  if (contains_reduce(rhs)) return stages;
  std::set<const Expr*> staged;
  std::function<unsigned(const Expr&)> mix = [&](const Expr& e) -> unsigned {
    if (staged.count(&e) || L.has_override(&e)) return 0;
    unsigned m = stage_kind(e);
    for (const ExprPtr& a : e.args) m |= mix(*a);
    return m;
  };
  // The largest subexpressions that hold only `want`; nodes holding both are searched below.
  std::function<void(const Expr&, unsigned, std::vector<const Expr*>&)> take =
      [&](const Expr& e, unsigned want, std::vector<const Expr*>& out) {
        const unsigned m = mix(e);
        if (m == want) {
          out.push_back(&e);
        } else if (m == (kMixCalls | kMixConditions)) {
          for (const ExprPtr& a : e.args) take(*a, want, out);
        }
      };
  // Each round stages at least one node: the smallest node holding both has a child holding
  // only one of them, or is itself one kind with a child of the other.
  while (mix(rhs) == (kMixCalls | kMixConditions)) {
    for (unsigned want : {kMixCalls, kMixConditions}) {
      std::vector<const Expr*> found;
      take(rhs, want, found);
      if (found.empty()) continue;
      staged.insert(found.begin(), found.end());
      stages.push_back(std::move(found));
      break;
    }
  }
  return stages;
}

// Prints the stages before the last of one chunk: per stage, its arrays (`len` elements each),
// then `loop` with a body computing them. L prints each staged node as its array's element
// from then on; the caller prints the last stage, then calls release_stages.
void emit_stages(StmtLowering& L, const std::vector<std::vector<const Expr*>>& stages,
                 const std::string& len,
                 const std::function<void(const std::function<void()>&)>& loop, CodeWriter& w) {
  int next = 0;
  for (const std::vector<const Expr*>& stage : stages) {
    std::vector<std::string> names;
    for (const Expr* e : stage) {
      names.push_back("sb_v" + std::to_string(next++));
      w.line(std::string(c_type(value_type(*e))) + " " + names.back() + "[" + len + "];");
    }
    loop([&] {
      for (size_t i = 0; i < stage.size(); ++i)
        w.line(names[i] + "[sb_q] = " + L.expr(*stage[i], w, 0) + ";");
    });
    for (size_t i = 0; i < stage.size(); ++i) L.set_override(stage[i], names[i] + "[sb_q]");
  }
}

void release_stages(StmtLowering& L, const std::vector<std::vector<const Expr*>>& stages) {
  for (const std::vector<const Expr*>& stage : stages)
    for (const Expr* e : stage) L.clear_override(e);
}

// The statement of L for its innermost output index in [lo, hi) (C expressions; the other output
// indices bound): one `omp simd` loop, or, for a statement with stages, chunks of them.
// `parallel` shares the loop, or the chunks, out to OpenMP threads.
void emit_simd_assign(StmtLowering& L, const std::string& lo, const std::string& hi, bool parallel,
                      CodeWriter& w) {
  const std::string& v = L.var_name(static_cast<int>(L.stmt().rank()) - 1);
  const std::vector<std::vector<const Expr*>> stages = simd_stages(L);
  if (stages.empty()) {
    w.line(parallel ? "#pragma omp parallel for simd schedule(static)" : "#pragma omp simd");
    w.open("for (int64_t " + v + " = " + lo + "; " + v + " < " + hi + "; ++" + v + ") {");
    L.assign(w);
    w.close();
    return;
  }
  const std::string n = std::to_string(kStageElems);
  w.line("// In chunks of stages: vector math apart from conditions, each loop vectorised.");
  w.open("{");
  w.line("const int64_t sb_m = " + hi + ";");
  if (parallel) w.line("#pragma omp parallel for schedule(static)");
  w.open("for (int64_t sb_c = " + lo + "; sb_c < sb_m; sb_c += " + n + ") {");
  w.line("const int64_t sb_n = sb_m - sb_c < " + n + " ? sb_m - sb_c : " + n + ";");
  auto loop = [&](const std::function<void()>& body) {
    w.line("#pragma omp simd");
    w.open("for (int64_t sb_q = 0; sb_q < sb_n; ++sb_q) {");
    w.line("const int64_t " + v + " = sb_c + sb_q;");
    body();
    w.close();
  };
  emit_stages(L, stages, n, loop, w);
  loop([&] { L.assign(w); });
  release_stages(L, stages);
  w.close();
  w.close();
}

// The terms of a running scan computed ahead at a time (StmtLowering::open_running_ahead): a
// multiple of every vector width, few enough for the first-level cache.
constexpr int kRunningTermBlock = 64;

// The outputs of a running scan scanned in vector registers at a time (emit_scan_walk): a
// multiple of every vector_scan_lanes; 1 KiB (f32) or 2 KiB (f64) of stack.
constexpr int kVectorScanBlock = 256;

// The walk of running scan `red` (lower/running_scans.h) of statement L along its innermost
// output index i, over outputs [i, end): i is declared and holds the first, the reduction's
// variable k the walk's next term, `acc` the fold of the terms before it, the outer indices are
// bound. The range's end is i + c (the pass's rule), so once an output adds exactly the one term
// at k, each later output adds exactly the last term of its range, k = end(i) - 1. Until then,
// the general walk (each output folds the terms from k up to its range's end); from then on, the
// simple loop, which the compiler keeps tight (with k carried instead, a walk starting at an
// unknown k ran at less than half the speed).
//
// With `vector` (vector_scan_fits: lower/running_scans.h's vector form), the simple loop runs
// kVectorScanBlock outputs at a time before its last few: their terms computed by an `omp simd`
// loop into a local array, scanned a vector at a time in vector registers
// (HelperSet::use_vector_scan), and the outputs stored by another `omp simd` loop. A term that is
// plain memory (contiguous_scan_term) is scanned where it lies, and an output that is the scan
// itself (scan_is_output) written in place, outside streamed lines (a standalone 8192-element
// f32 scan with the AVX helper took 2.5 us through the array, 1.8 us in place, on the Zen 3 VM).
// The scalar loop is one dependent add per output, at its latency. The block is many vectors
// long because the compiler writes the array in narrower vectors than the one-vector helper
// reads (two 32-byte stores, one 64-byte load), which the store buffer cannot forward: with one
// vector per block the load waits for the stores to reach the cache, and cumsum_rows 2048 x 2048
// ran 4.2 ms on one thread against 2.1 ms scalar; blocks of 64, 128 and 256 ran 1.56, 1.33 and
// 1.20 ms (0.64 ms on 2 threads; standalone, Xeon with AVX-512). A sum or product then groups
// each vector's terms as a tree, within the tolerance of any grouping, not the plain loop nest's
// order.
//
// Otherwise, with `ahead`, the general walk throughout, its terms computed kRunningTermBlock at
// a time as vectors (StmtLowering::open_running_ahead): a select's branch on random data
// otherwise mispredicts about every other term (cumprod ran 3x slower so; with the simple loop
// over the terms computed ahead it ran 1.25x slower, 687 against 543 us at 256x2048). The terms
// are then folded in the plain loop nest's order.
//
// With `stream` (printed where the streaming pass's StreamChoice::scan holds and the tensors
// outgrow the caches), a vector block whose first output starts a cache line writes the block's
// outputs a line at a time with non-temporal stores (sb_store_line).
void emit_scan_walk(StmtLowering& L, const Expr& red, const std::string& acc,
                    const std::string& end, bool ahead, bool vector, CodeWriter& w,
                    bool stream = false) {
  const std::string& i = L.var_name(static_cast<int>(L.stmt().rank()) - 1);
  const std::string& k = L.var_name(red.ref);
  auto assign = [&](const std::string& value) {
    L.set_override(&red, value);
    L.assign(w);
    L.clear_overrides();
  };
  if (ahead && !vector) {
    L.open_running_ahead(red, kRunningTermBlock, "const int64_t " + i + " = " + end + " - 1", w);
    w.open("for (; " + i + " < " + end + "; ++" + i + ") {");
    L.fold_terms_ahead(red, acc, kRunningTermBlock, w);
    assign(acc);
    w.close();
    return;
  }
  w.open("for (; " + i + " < " + end + "; ++" + i + ") {");
  w.line("if (" + k + " == " + L.range_bound(red, true, w) + " - 1) break;");
  L.fold_terms(red, acc, w);
  assign(acc);
  w.close();
  if (vector) {
    const Statement& st = L.stmt();
    const DType t = value_type(red);
    const std::string scan = L.use_vector_scan(red);
    const std::string lanes = std::to_string(vector_scan_lanes(t));
    const std::string n = std::to_string(kVectorScanBlock);
    // The output's element at the outer indices (bound by the enclosing loops) and `last`.
    auto at = [&](const std::string& last) {
      std::vector<std::string> subs;
      for (size_t d = 0; d + 1 < st.rank(); ++d) subs.push_back(L.var_name(static_cast<int>(d)));
      subs.push_back(last);
      return "&" + L.tensor_name(st.out) + "[" + L.flat_index(st.out, subs) + "]";
    };
    // The terms read in place where they are plain memory of the scan's type, the outputs
    // written in place where they are the scan itself (but for the streamed lines).
    const Expr* src = contiguous_scan_term(L.spec(), red);
    if (src && L.spec().tensors[src->ref].type != t) src = nullptr;
    const bool dst = !stream && scan_is_output(L.spec(), st, red);
    w.line("// " + n + " outputs at a time, one term each: the terms " +
           (src ? "read in place" : "computed by vector loops") + ", scanned " + lanes);
    w.line("// at a time in vector registers (" + scan + "), the outputs " +
           (dst ? "written in place." : "stored by vector loops."));
    w.open("for (; " + i + " + " + n + " <= " + end + "; " + i + " += " + n + ") {");
    w.line("const int64_t sb_i = " + i + ";");
    if (!src || !dst)
      w.line(std::string(c_type(t)) + " sb_v[" + n + "] __attribute__((aligned(64)));");
    std::string from = "sb_v";
    if (src) {
      w.line("const " + std::string(c_type(t)) + "* sb_src;");
      w.open("{");
      w.line("const int64_t " + k + " = " + L.range_bound(red, true, w) + " - 1;");
      std::vector<std::string> subs;
      for (const ExprPtr& a : src->args) subs.push_back(L.expr(*a, w, kPrecPrimary));
      w.line("sb_src = &" + L.tensor_name(src->ref) + "[" + L.flat_index(src->ref, subs) + "];");
      w.close();
      from = "sb_src";
    } else {
      w.line("#pragma omp simd");
      w.open("for (int64_t sb_q = 0; sb_q < " + n + "; ++sb_q) {");
      w.line("const int64_t " + i + " = sb_i + sb_q;");
      w.line("const int64_t " + k + " = " + L.range_bound(red, true, w) + " - 1;");
      w.line("sb_v[sb_q] = " + L.term_text(red, w) + ";");
      w.close();
    }
    w.line("for (int64_t sb_q = 0; sb_q < " + n + "; sb_q += " + lanes + ")");
    w.line("  " + acc + " = " + scan + "(" + from + " + sb_q, " + (dst ? at("sb_i") : "sb_v") +
           " + sb_q, " + acc + ");");
    if (stream) {
      const DType ot = L.spec().tensors[st.out].type;
      const std::string oty = c_type(ot);
      const std::string per = std::to_string(kStreamLineBytes / dtype_bytes(ot));
      const std::string first = at("sb_i");
      w.open("if (((uintptr_t)" + first + " & 63) == 0) {");
      w.open("for (int64_t sb_l = 0; sb_l < " + n + "; sb_l += " + per + ") {");
      w.line(oty + " sb_line[" + per + "] __attribute__((aligned(64)));");
      w.line("#pragma omp simd simdlen(" + per + ")");
      w.open("for (int64_t sb_q = sb_l; sb_q < sb_l + " + per + "; ++sb_q) {");
      w.line("const int64_t " + i + " = sb_i + sb_q;");
      L.set_override(&red, "sb_v[sb_q]");
      w.line("sb_line[sb_q - sb_l] = " + L.expr(*st.rhs, w, 0) + ";");
      L.clear_overrides();
      w.close();
      w.line("sb_store_line(" + at("sb_i + sb_l") + ", sb_line, 64);");
      w.close();
      w.line("continue;");
      w.close();
    }
    if (!dst) {
      w.line("#pragma omp simd");
      w.open("for (int64_t sb_q = 0; sb_q < " + n + "; ++sb_q) {");
      w.line("const int64_t " + i + " = sb_i + sb_q;");
      assign("sb_v[sb_q]");
      w.close();
    }
    w.close();
  }
  w.open("for (; " + i + " < " + end + "; ++" + i + ") {");
  w.open("{");
  w.line("const int64_t " + k + " = " + L.range_bound(red, true, w) + " - 1;");
  L.fold_term(red, acc, w);
  w.close();
  assign(acc);
  w.close();
}

// A running scan (lower/running_scans.h) `red` of statement L, of rank > 0: loops over the outer
// output indices (the outermost parallel under `omp`, unless `in_row` bound it already), then one
// accumulator carried along the innermost index (emit_scan_walk; under `omp`, terms that compute
// more than a read, a select or a call, computed ahead as vectors; the vector form of
// lower/running_scans.h). Under `omp`, a rank-1 scan of at least kScanSplitMin outputs runs in two
// parallel passes instead (emit_scan_split), a shorter one on the calling thread (`threads`
// false: no parallel loop, the SIMD forms kept).
void emit_scan_split(StmtLowering& L, const Expr& red, CodeWriter& w);

// Whether the walk of running scan `red` under `omp` computes its terms ahead: a term that is one
// read (or its cast) has nothing to compute ahead.
bool terms_ahead(const Expr& red, bool omp) {
  const Expr* term = red.args[0].get();
  while (term->kind == ExprKind::Cast) term = term->args[0].get();
  return omp && term->kind != ExprKind::Read;
}

// Whether the walk of running scan `red` under `omp` scans a vector of outputs at a time.
bool vector_walk(const Expr& red, bool omp) {
  return omp && vector_scan_fits(red.rop, value_type(red));
}

// Whether running scan `red` of statement L, under `omp`, streams its vector walk (the blocks of
// a long rank-1 scan, the rows of a higher-rank one as they are walked) when the tensors outgrow
// the caches: the streaming pass's choice (lower/streaming.h: StreamChoice::scan) where the walk
// is a vector one.
bool scan_streams(StmtLowering& L, const Expr& red) {
  return stream_choice(L.spec(), L.stmt()).scan && vector_walk(red, true);
}

// The bytes of `tensors` (the streaming pass's, lower/streaming.h) as a C sum, e.g.
// "4 * N + 4 * N", which the streaming threshold is compared with.
std::string stream_bytes(StmtLowering& L, const std::set<int>& tensors) {
  std::string sum;
  for (int t : tensors)
    sum += (sum.empty() ? "" : " + ") + std::to_string(dtype_bytes(L.spec().tensors[t].type)) +
           " * " + L.element_count(t, kPrecMul + 1);
  return sum;
}

void emit_running_scan(StmtLowering& L, const Expr& red, bool omp, CodeWriter& w, bool in_row,
                       bool threads = true) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  if (omp && threads && !in_row && rank == 1) {
    // A long rank-1 scan in two parallel passes (lower/running_scans.h: kScanSplitMin); a short
    // one walked on the calling thread, its SIMD forms kept.
    w.open("if (" + L.extent(st.out, 0, kPrecRel + 1) + " >= " + std::to_string(kScanSplitMin) +
           ") {");
    emit_scan_split(L, red, w);
    w.close_open("} else {");
    emit_running_scan(L, red, omp, w, false, /*threads=*/false);
    w.close();
    return;
  }
  auto walk = [&](bool streamed) {
    const size_t outer = open_outer_loops(L, in_row ? 1 : 0, omp && threads && !in_row, w);
    w.line("// Running: each output's range extends the previous one's by its new terms.");
    L.open_running(red, "sb_run", w);
    w.line("int64_t " + L.var_name(static_cast<int>(rank) - 1) + " = 0;");
    emit_scan_walk(L, red, "sb_run", L.extent(st.out, rank - 1, kPrecRel + 1),
                   terms_ahead(red, omp), vector_walk(red, omp), w, streamed);
    if (streamed) w.line("sb_stream_fence();");
    for (size_t d = 0; d < outer; ++d) w.close();
  };
  if (!(omp && threads && !in_row && scan_streams(L, red))) {
    walk(false);
    return;
  }
  // A scan along the last index of each row (rank > 1): the rows' walks store whole lines of
  // their outputs with non-temporal stores when the tensors outgrow the caches.
  w.line("// Stream the outputs when the tensors this touches outgrow the caches.");
  w.open("if (" + stream_bytes(L, stream_choice(L.spec(), st).tensors) +
         " >= SB_STREAM_MIN_BYTES) {");
  walk(true);
  w.close_open("} else {");
  walk(false);
  w.close();
}

// A running scan's fold and walk in a host kernel body (lower/host_bodies.h), spelled by this
// printer: the fold of a range of terms as an `omp simd` reduction where the reduction is a
// float sum or product (other folds are exact in any grouping the compiler may choose, or not
// vectorised), and the walk of emit_scan_walk, its outputs stored non-temporally with `stream`.
class ScanLeaves : public HostLeaves<StmtLowering, CodeWriter> {
 public:
  ScanLeaves(StmtLowering& L, CodeWriter& w, bool stream) : HostLeaves(L, w), stream_(stream) {}
  void fold_range(const Expr& red, const std::string& acc, const std::string& lo,
                  const std::string& hi) override {
    const DType t = value_type(red);
    if (is_float(t) && (red.rop == ReduceOp::Sum || red.rop == ReduceOp::Prod))
      w_.line(std::string("#pragma omp simd reduction(") + (red.rop == ReduceOp::Sum ? "+" : "*") +
              ":" + acc + ")");
    const std::string& k = L_.var_name(red.ref);
    w_.open("for (int64_t " + k + " = " + lo + "; " + k + " < " + hi + "; ++" + k + ") {");
    L_.fold_term(red, acc, w_);
    w_.close();
  }
  void scan_walk(const Expr& red, const std::string& acc, const std::string& end) override {
    emit_scan_walk(L_, red, acc, end, terms_ahead(red, true), vector_walk(red, true), w_, stream_);
    if (stream_) w_.line("sb_stream_fence();");
  }

 private:
  bool stream_;
};

// A rank-1 running scan `red` of statement L over blocks of its outputs, in parallel
// (lower/host_bodies.h: scan_split_bodies): two parallel passes over kScanBlocks blocks, the
// walks' outputs streamed where the scan streams (scan_streams) and its tensors outgrow the
// caches, as the mojo printer does.
void emit_scan_split(StmtLowering& L, const Expr& red, CodeWriter& w) {
  const Statement& st = L.stmt();
  const ScanSplitBodies bodies = scan_split_bodies(L.spec(), st, red);
  ScanLeaves leaves(L, w, /*stream=*/false);
  print_c_block(bodies.head, leaves, w);
  if (!scan_streams(L, red)) {
    print_c_block(bodies.two_pass, leaves, w);
    return;
  }
  w.line("// Stream the outputs when the tensors this touches outgrow the caches.");
  w.open("if (" + stream_bytes(L, stream_choice(L.spec(), st).tensors) +
         " >= SB_STREAM_MIN_BYTES) {");
  ScanLeaves streamed(L, w, /*stream=*/true);
  print_c_block(bodies.two_pass, streamed, w);
  w.close_open("} else {");
  print_c_block(bodies.two_pass, leaves, w);
  w.close();
}

// Whether every top-level reduction of `st` runs outside its vector loop (SimdChoice::outside).
bool all_outside(const Statement& st, const SimdChoice& simd) {
  const std::vector<const Expr*> tops = top_reduces_of(*st.rhs);
  if (tops.empty()) return false;
  for (const Expr* r : tops)
    if (!simd.outside.count(r->ref)) return false;
  return true;
}

// Whether a read of `e` with a boundary rule has a subscript that uses a reduction variable of
// `st` but not its innermost output index: a window reaching past an edge across the vector loop
// (a row above), which the loop's edge segments do not take apart.
bool window_crosses_outer_edge(const Spec& spec, const Statement& st, const Expr& e) {
  const int inner = static_cast<int>(st.rank()) - 1;
  if (e.kind == ExprKind::Read && spec.tensors[e.ref].boundary != Boundary::None) {
    for (const auto& sub : e.args) {
      if (depends_on(*sub, inner)) continue;
      for (size_t v = st.rank(); v < st.vars.size(); ++v)
        if (depends_on(*sub, static_cast<int>(v))) return true;
    }
  }
  for (const auto& a : e.args)
    if (window_crosses_outer_edge(spec, st, *a)) return true;
  return false;
}

// Whether every top-level reduction of `st` has a constant number of terms, kUnrolledTerms at
// most, counting those of the reductions nested in it (lower/vectorize.h), and no window of them
// crosses an edge across the vector loop (window_crosses_outer_edge) unless the edges along the
// row are exact (exact_tap_edge): a whole row takes the checked loop there, where the block
// checks only the terms past the edge, so only the narrow edges pay for it.
bool few_constant_terms(const Spec& spec, const Statement& st) {
  std::function<std::optional<int64_t>(const Expr&)> terms =
      [&](const Expr& e) -> std::optional<int64_t> {
    int64_t n = 1;
    if (e.kind == ExprKind::Reduce) {
      const auto range = constant_range(st.vars[e.ref]);
      if (!range) return std::nullopt;
      n = std::max<int64_t>(range->second - range->first, 0);
      if (n > kUnrolledTerms) return std::nullopt;
    }
    for (const auto& a : e.args) {
      const std::optional<int64_t> m = terms(*a);
      if (!m) return std::nullopt;
      if (*m > 1) n *= *m;  // nested reductions multiply (siblings too: a bound, not a count)
      if (n > kUnrolledTerms) return std::nullopt;
    }
    return n;
  };
  for (const Expr* r : top_reduces_of(*st.rhs))
    if (!terms(*r) ||
        (window_crosses_outer_edge(spec, st, *r) && !exact_tap_edge(spec, st, *st.rhs)))
      return false;
  return true;
}

// The taps of a window of few constant terms (few_constant_terms) that do not move along the row:
// each read inside its reductions that uses reduction variables, all of constant ranges, but not
// the innermost output index, and has no boundary rule (depthwise_conv2d's w[c, a, b]). Each is
// copied once per block into a local array, `sb_tap<n>[(a - lo) * 3 + (b - lo)]`, which the
// window's loops read instead: reading the tensor there, GCC 12 reloaded and broadcast every tap
// for every vector of outputs, recomputing its address from the collapsed outer loops' indices.
// depthwise_conv2d (N = 8, 144 x 56 x 56) took 0.71x the time with the copy, 0.76x under AVX2
// (standalone, g++ -O3 -march=native or haswell, median of 31; results/vm/window-taps-20261207
// for the generated code). Returns the reads, overridden in L until the caller clears them.
std::vector<const Expr*> hoist_taps(StmtLowering& L, CodeWriter& w) {
  const Statement& st = L.stmt();
  const int inner = static_cast<int>(st.rank()) - 1;
  std::vector<const Expr*> taps;
  for (const Expr* r : reads_of(*st.rhs)) {
    if (L.spec().tensors[r->ref].boundary != Boundary::None || depends_on(*r, inner)) continue;
    // The reduction variables it uses, with their constant ranges.
    std::vector<std::pair<int, std::pair<int64_t, int64_t>>> vars;
    bool ok = true;
    for (size_t v = st.rank(); v < st.vars.size() && ok; ++v) {
      if (!depends_on(*r, static_cast<int>(v))) continue;
      const auto range = constant_range(st.vars[v]);
      ok = st.vars[v].is_reduction && range && range->second > range->first;
      if (ok) vars.push_back({static_cast<int>(v), *range});
    }
    int64_t count = 1;
    for (const auto& [v, range] : vars) count *= range.second - range.first;
    if (!ok || vars.empty() || count > kUnrolledTerms) continue;
    // The array's flat index, row-major over the variables in statement order.
    std::string index;
    int64_t stride = count;
    for (const auto& [v, range] : vars) {
      stride /= range.second - range.first;
      std::string term = L.var_name(v);
      if (range.first != 0)
        term = "(" + term + (range.first > 0 ? " - " : " + ") +
               std::to_string(std::abs(range.first)) + ")";
      if (stride != 1) term += " * " + std::to_string(stride);
      index += (index.empty() ? "" : " + ") + term;
    }
    const std::string name = "sb_tap" + std::to_string(taps.size());
    if (taps.empty()) w.line("// The window's taps that do not move along the row, copied once.");
    w.line(std::string(c_type(value_type(*r))) + " " + name + "[" + std::to_string(count) + "];");
    for (const auto& [v, range] : vars)
      w.open("for (int64_t " + L.var_name(v) + " = " + std::to_string(range.first) + "; " +
             L.var_name(v) + " < " + std::to_string(range.second) + "; ++" + L.var_name(v) + ") {");
    w.line(name + "[" + index + "] = " + L.expr(*r, w) + ";");
    for (size_t d = 0; d < vars.size(); ++d) w.close();
    L.set_override(r, name + "[" + index + "]");
    taps.push_back(r);
  }
  return taps;
}

// Opens `if (c) {` with the terms of condition `c` (joined by " && ") as many to a line as fit
// in 100 columns.
void open_if(const std::string& c, CodeWriter& w) {
  std::vector<std::string> lines{"if ("};
  size_t at = 0;
  while (at <= c.size()) {
    const size_t next = std::min(c.find(" && ", at), c.size());
    const std::string term = c.substr(at, next - at) + (next < c.size() ? " &&" : ") {");
    const size_t width = 2 * w.indent() + (lines.size() > 1 ? 4 : 0);
    if (lines.back() != "if (" && width + lines.back().size() + 1 + term.size() > 100)
      lines.push_back(term);
    else
      lines.back() += (lines.back() == "if (" ? "" : " ") + term;
    at = next + 4;
  }
  for (size_t i = 0; i + 1 < lines.size(); ++i) w.line((i ? "    " : "") + lines[i]);
  w.open((lines.size() > 1 ? "    " : "") + lines.back());
}

// Prints `loop` (a loop over index variable `var` of L's statement from `first` to `last`,
// inclusive C expressions, the other variables its reads use bound, but those of `unbound`) twice
// where the reads of `e` that need boundary handling have affine subscripts: without the handling
// under `if` every such read is inside its tensor over the whole range (the common case, away
// from the tensors' edges), where the subscripts are plain and contiguous reads load as vectors,
// and with it under `else`. Once, with the handling, where no read needs it or the condition
// cannot be put so (StmtLowering::inside_condition).
void emit_inside_split(StmtLowering& L, const Expr& e, int var, const std::string& first,
                       const std::string& last, const std::set<int>& unbound, CodeWriter& w,
                       const std::function<void()>& loop) {
  const std::optional<std::string> inside = L.inside_condition(e, var, first, last, unbound, w);
  if (!inside || inside->empty()) {
    loop();
    return;
  }
  w.line("// Every read of the range inside its tensor: no boundary checks.");
  open_if(*inside, w);
  L.set_assume_inside(true);
  loop();
  L.set_assume_inside(false);
  w.close_open("} else {");
  loop();
  w.close();
}

// The elements at each end of a range that emit_edge_segments sets apart by default: one cache
// line of outputs (16 f32, 8 f64), which the streaming form writes whole; a stencil's offsets
// along the row up to that many (x[i, j - 1] .. x[i, j + 8] for f32) leave the middle of a
// range inside every tensor. With 16 f64 (two lines), stencil3d's cpu omp_simd variant at 256^3
// took 10.8-11.5 ms against 9.9-10.2 ms with 8 (side by side, median of 21 each): each row's
// checked ends were twice as long.
int edge_elems(const StmtLowering& L) {
  return static_cast<int>(kStreamLineBytes / dtype_bytes(L.spec().tensors[L.stmt().out].type));
}
// The same where a convolution's taps run outside the vector loop (emit_outside_nest): its rows
// are short (28 and 56 outputs in conv2d and depthwise_conv2d) and its taps reach a few
// elements (+-1 for 3 taps), so narrower edges leave more of a row unchecked. Measured on the
// cpu omp_simd variants (5 repetitions each, 2-core VM): with 16, a row of 28 was all edge and
// conv2d (N=4, 64 channels of 28 x 28) took 20.3 ms against 16.7 ms with no segments; with 4,
// 9.9 ms, but depthwise_conv2d (N=8, 144 x 56 x 56) slowed (2.0 ms, no gain); with 8, conv2d
// 13.9 ms, conv2d_s2 44.9 ms (70.5 ms unsegmented) and depthwise_conv2d 1.83 ms against 2.01 ms
// unsegmented (side by side, median of 31). Where the reads' reach along the row is known
// exactly (exact_tap_edge, lower/vectorize.h: 1 output for 3 taps), the block's ends are that
// wide instead, as the mojo and mlir rows' are: conv2d's omp_simd variant then took 0.48-0.49x
// the time of edges of 8 and grouped_conv2d's 0.44-0.62x (results/vm/cpu-exact-edges-20261207).
// This width stays for reaches not known so (conv2d_s2's stride 2).
constexpr int kTapEdgeElems = 8;

// The range [first, end) of L's innermost output index (C expressions; the other output indices
// bound) as three segments, its first `edge` elements (0: edge_elems), its middle and its last
// `edge`, in one loop over the segments binding sb_lo and sb_hi: each runs `loop` (over
// [sb_lo, sb_hi)) without boundary checks when all the reads of `e` are inside
// (emit_inside_split; the index variables in `unbound` are not bound there), with them
// otherwise. Only segments at a tensor's edge take the checks.
void emit_edge_segments(StmtLowering& L, const Expr& e, const std::set<int>& unbound,
                        const std::string& first, const std::string& end, CodeWriter& w,
                        const std::function<void()>& loop, int edge = 0) {
  const Statement& st = L.stmt();
  const std::string p = std::to_string(edge > 0 ? edge : edge_elems(L));
  w.line("// Its first and last " + (p == "1" ? std::string("element") : p + " elements") +
         " apart: only they can reach past an edge.");
  const std::string len = first == "0" ? end : end + " - " + first;
  const std::string from = first == "0" ? "" : first + " + ";
  w.line("const int64_t sb_p = " + len + " < " + p + " ? " + end + " : " + from + p + ";");
  w.line("const int64_t sb_t = " + end + " - " + p + " > sb_p ? " + end + " - " + p + " : sb_p;");
  w.open("for (int sb_seg = 0; sb_seg < 3; ++sb_seg) {");
  w.line("const int64_t sb_lo = sb_seg == 0 ? " + first + " : sb_seg == 1 ? sb_p : sb_t;");
  w.line("const int64_t sb_hi = sb_seg == 0 ? sb_p : sb_seg == 1 ? sb_t : " + end + ";");
  emit_inside_split(L, e, static_cast<int>(st.rank()) - 1, "sb_lo", "(sb_hi - 1)", unbound, w,
                    loop);
  w.close();
}

// A statement of rank > 0 whose vector loop is its innermost output loop, with every top-level
// reduction's loop outside it (lower/vectorize.h): the outer output loops (the outermost
// parallel, unless `in_row` bound it), then blocks of kOutsideBlock elements of the innermost
// output index (parallel for a rank-1 statement). In a block each reduction keeps one
// accumulator per output in a local array and takes its terms one k at a time, an `omp simd` loop
// over the block each, so every read that is contiguous in the output index streams whole cache
// lines. Each output's terms are combined in the plain loop nest's order. Reductions of a
// constant few terms (few_constant_terms) keep one vector's accumulators instead: their loops
// inside the block's vector loop. Windows along the row (terms_along_row) run a whole block
// whose reads are all inside in loops of a constant count, without checks.
void emit_outside_nest(StmtLowering& L, CodeWriter& w, bool in_row) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  const size_t outer = open_outer_loops(L, in_row ? 1 : 0, !in_row, w);
  const std::string& j = L.var_name(static_cast<int>(rank) - 1);
  const std::string n = L.extent(st.out, rank - 1, kPrecAdd + 1);
  const std::string block = std::to_string(kOutsideBlock);
  if (!in_row && rank == 1) w.line("#pragma omp parallel for schedule(static)");
  open_output_blocks(n, w);
  auto open_block_loop = [&](const std::string& lo, const std::string& hi) {
    w.line("#pragma omp simd");
    w.open("for (int64_t " + j + " = " + lo + "; " + j + " < " + hi + "; ++" + j + ") {");
  };
  // The reduction variables; `bound` is the one whose loop is open.
  auto unbound_but = [&](int bound) {
    std::set<int> u;
    for (size_t v = rank; v < st.vars.size(); ++v)
      if (static_cast<int>(v) != bound) u.insert(static_cast<int>(v));
    return u;
  };
  // The loop over the block, `body` inside it, split on whether its reads are inside: a block
  // of a row of rank > 1 whose checks depend on the position along it in edge segments
  // (emit_edge_segments; a row shorter than a block, as a convolution's, would otherwise take
  // the checks throughout), any other block whole. The block ends before `end`.
  auto segmented = [&](const Expr& e, int bound) {
    CodeWriter scratch;
    bool along = false;
    const std::optional<std::string> inside = L.inside_condition(
        e, static_cast<int>(rank) - 1, "sb_jb", "(sb_je - 1)", unbound_but(bound), scratch, &along);
    return rank > 1 && inside && along;
  };
  auto block_loop = [&](const Expr& e, int bound, const std::function<void()>& body,
                        int64_t edge = kTapEdgeElems, const std::string& end = "sb_je",
                        bool checked = true) {
    const int inner = static_cast<int>(rank) - 1;
    if (!checked) {
      open_block_loop("sb_jb", end);
      body();
      w.close();
      return;
    }
    if (segmented(e, bound)) {
      w.open("{");
      emit_edge_segments(
          L, e, unbound_but(bound), "sb_jb", "sb_je", w,
          [&] {
            open_block_loop("sb_lo", "sb_hi");
            body();
            w.close();
          },
          static_cast<int>(edge));
      w.close();
      return;
    }
    emit_inside_split(L, e, inner, "sb_jb", "(" + end + " - 1)", unbound_but(bound), w, [&] {
      open_block_loop("sb_jb", end);
      body();
      w.close();
    });
  };
  if (few_constant_terms(L.spec(), st)) {
    // Few terms, a constant number: one vector's accumulators, the reductions' loops inside the
    // vector loop (lower/vectorize.h: kUnrolledTerms).
    const std::vector<const Expr*> taps = hoist_taps(L, w);
    block_loop(
        *st.rhs, -1, [&] { L.assign(w); },
        exact_tap_edge(L.spec(), st, *st.rhs).value_or(kTapEdgeElems));
    for (const Expr* t : taps) L.clear_override(t);
    w.close();
    for (size_t d = 0; d < outer; ++d) w.close();
    return;
  }
  const std::vector<const Expr*> tops = top_reduces_of(*st.rhs);
  // The checked ends of a block's rows: the reads' exact reach where it is known.
  const int64_t edge = exact_tap_edge(L.spec(), st, *st.rhs).value_or(kTapEdgeElems);
  // The block's accumulators, its terms and its outputs, the block ending before `end`; without
  // boundary checks unless `checked`.
  auto accumulate = [&](const std::string& end, bool checked) {
    std::vector<std::string> accs;
    for (size_t r = 0; r < tops.size(); ++r) {
      const Expr& red = *tops[r];
      const DType t = value_type(red);
      const std::string acc = "sb_block" + std::to_string(r);
      const std::string lane = acc + "[" + j + " - sb_jb]";
      w.line(std::string(c_type(t)) + " " + acc + "[" + block + "] __attribute__((aligned(64)));");
      open_block_loop("sb_jb", end);
      w.line(lane + " = " + reduce_identity(red.rop, t) + ";");
      w.close();
      L.open_reduction(red, w);
      block_loop(
          *red.args[0], red.ref, [&] { L.fold_term(red, lane, w); }, edge, end, checked);
      w.close();
      accs.push_back(lane);
    }
    for (size_t r = 0; r < tops.size(); ++r) L.set_override(tops[r], accs[r]);
    block_loop(
        *st.rhs, -1, [&] { L.assign(w); }, edge, end, checked);
    L.clear_overrides();
  };
  // Windows along the row (terms_along_row) in blocks not cut into edge segments: a whole block
  // whose reads are all inside their tensors, for every term, takes loops of a constant count
  // without checks, whose accumulators GCC then keeps in vector registers instead of loading and
  // storing the block's array once per term (lower/vectorize.h: kOutsideBlock). Other blocks (a
  // row's last, shorter one; one at an edge) keep the array and the checks.
  const bool registers =
      std::all_of(tops.begin(), tops.end(),
                  [&](const Expr* r) {
                    return terms_along_row(st, *r) && !segmented(*r->args[0], r->ref);
                  }) &&
      !segmented(*st.rhs, -1);
  const std::string whole_end = "sb_jb + " + block;
  const std::optional<std::string> inside =
      registers ? L.inside_condition(*st.rhs, static_cast<int>(rank) - 1, "sb_jb",
                                     "(" + whole_end + " - 1)", unbound_but(-1), w)
                : std::nullopt;
  if (inside) {
    w.line("// A whole block, every read inside its tensor: loops of a constant count, no checks.");
    open_if("sb_je - sb_jb == " + block + (inside->empty() ? "" : " && " + *inside), w);
    L.set_assume_inside(true);
    accumulate(whole_end, false);
    L.set_assume_inside(false);
    w.close_open("} else {");
    accumulate("sb_je", true);
    w.close();
  } else {
    accumulate("sb_je", true);
  }
  w.close();
  for (size_t d = 0; d < outer; ++d) w.close();
}

// Whether L's statement, elementwise, has reads with boundary handling whose subscripts are affine
// (StmtLowering::inside_condition along its innermost output index).
bool needs_inside_split(StmtLowering& L) {
  const Statement& st = L.stmt();
  if (st.rank() == 0 || !top_reduces_of(*st.rhs).empty()) return false;
  CodeWriter scratch;
  const std::optional<std::string> c = L.inside_condition(*st.rhs, static_cast<int>(st.rank()) - 1,
                                                          "sb_jb", "(sb_je - 1)", {}, scratch);
  return c && !c->empty();
}

// An elementwise statement whose reads need boundary handling (a stencil's x[i, j - 1] under a
// clamp or zero rule), under omp: the outer output loops (the outermost parallel), then the row
// along the innermost index in edge segments (emit_edge_segments), each an `omp simd` loop; a
// rank-1 output in parallel blocks of kOutsideBlock elements instead, each split alike on its
// reads (emit_inside_split). Away from the edges the reads along the row are then contiguous
// vector loads instead of gathers of clamped indices.
void emit_checked_blocks(StmtLowering& L, CodeWriter& w) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  const size_t outer = open_outer_loops(L, 0, true, w);
  const int inner = static_cast<int>(rank) - 1;
  const std::string n = L.extent(st.out, rank - 1, kPrecAdd + 1);
  auto simd_loop = [&](const std::string& lo, const std::string& hi) {
    return [&L, &w, lo, hi] { emit_simd_assign(L, lo, hi, false, w); };
  };
  if (rank == 1) {
    w.line("#pragma omp parallel for schedule(static)");
    open_output_blocks(n, w);
    emit_inside_split(L, *st.rhs, inner, "sb_jb", "(sb_je - 1)", {}, w,
                      simd_loop("sb_jb", "sb_je"));
    w.close();
  } else {
    emit_edge_segments(L, *st.rhs, {}, "0", n, w, simd_loop("sb_lo", "sb_hi"));
  }
  for (size_t d = 0; d < outer; ++d) w.close();
}

// Writes the plain loop nest of a statement of rank > 0 (see emit_cpu_statement). With
// `in_row`, the first output index is already bound (a row of a fused group, inside its parallel
// loop): only the other dimensions get loops, none of them parallel. A running scan
// (lower/running_scans.h) is printed by emit_running_scan instead (sequential along its
// innermost index under every strategy), and under `omp` a statement whose reductions go outside
// its vector loop by emit_outside_nest.
void emit_loop_nest(StmtLowering& L, bool omp, CodeWriter& w, bool in_row = false) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  if (const Expr* scan = running_scan(L.spec(), st, in_row))
    return emit_running_scan(L, *scan, omp, w, in_row);
  // The vectorize pass's loops (lower/vectorize.h); the outermost output loop is the parallel one
  // outside row groups (lower/parallelize.h).
  const SimdChoice& simd = simd_choice(L.spec(), st);
  const bool simd_out = (in_row ? simd.rows : simd.whole) == SimdLoops::Outputs;
  if (omp && simd_out && all_outside(st, simd)) return emit_outside_nest(L, w, in_row);
  if (omp && simd_out && !in_row && needs_inside_split(L)) return emit_checked_blocks(L, w);
  SB_ASSERT(in_row || parallel_choice(L.spec(), st).loops == ParallelLoops::Outputs,
            "a statement of rank > 0 whose parallel loop is not its outermost output loop");
  const size_t first = in_row ? 1 : 0;
  if (omp && simd_out && first < rank) {
    const size_t opened = open_outer_loops(L, first, !in_row, w);
    emit_simd_assign(L, "0", L.extent(st.out, rank - 1, kPrecRel + 1), !in_row && rank == 1, w);
    for (size_t d = 0; d < opened; ++d) w.close();
    return;
  }
  for (size_t d = first; d < rank; ++d) {
    if (omp && in_row) {
      if (d + 1 == rank && simd_out) w.line("#pragma omp simd");
    } else if (omp) {
      // Static schedule: each thread gets one contiguous range of the outer loop, so threads
      // share at most the cache lines at the range boundaries.
      std::string p;
      if (d == 0) p = "#pragma omp parallel for";
      if (d + 1 == rank && simd_out) p = p.empty() ? "#pragma omp simd" : p + " simd";
      if (d == 0) p += " schedule(static)" + collapse_clause(L);
      if (!p.empty()) w.line(p);
    }
    const std::string& v = L.var_name(static_cast<int>(d));
    w.open("for (int64_t " + v + " = 0; " + v + " < " + L.extent(st.out, d, kPrecRel + 1) + "; ++" +
           v + ") {");
  }
  ReducePragma pragma = nullptr;
  if (omp && (in_row ? simd.rows : simd.whole) == SimdLoops::Reductions) {
    pragma = [&L](const ReduceSite& s) -> ReduceLoop {
      if (!s.innermost) return {};
      return {"#pragma omp simd " + omp_reduction_clause(s, L.helpers()), /*partials=*/true};
    };
  }
  L.assign(w, pragma);
  for (size_t d = in_row ? 1 : 0; d < rank; ++d) w.close();
}

// The row group's next row, which next-row prefetches (lower/streaming.h) read: the row after
// `sb_row`, or `sb_row` itself at the last row.
constexpr const char* kNextRow = "sb_next_row";

// The next-row prefetches of `next_rows` (StreamChoice::next_rows) that run along variable `var`:
// the cache lines of t[kNextRow, col .. col + count) for each such tensor t, when the group
// streams (sb_stream; `streaming`: the code runs only then). `count` is the elements the loop
// covers from `col` in one step.
void emit_next_row_prefetches(StmtLowering& L, const std::map<int, int>& next_rows, int var,
                              const std::string& col, int count, CodeWriter& w,
                              bool streaming = false) {
  std::vector<std::string> lines;
  for (const auto& [t, v] : next_rows) {
    if (v != var) continue;
    const int bytes = dtype_bytes(L.spec().tensors[t].type);
    const int step = std::max(1, kStreamLineBytes / bytes);
    for (int q = 0; q * step < count; ++q) {
      const std::string at = q == 0 ? col : col + " + " + std::to_string(q * step);
      lines.push_back("__builtin_prefetch(&" + L.tensor_name(t) + "[" +
                      L.flat_index(t, {kNextRow, at}) + "], 0, 3);");
    }
  }
  if (lines.empty()) return;
  if (streaming) {
    w.line("// The next row, for its first pass:");
    for (const std::string& l : lines) w.line(l);
    return;
  }
  w.open("if (sb_stream) {  // the next row, for its first pass");
  for (const std::string& l : lines) w.line(l);
  w.close();
}

// The streaming form of an elementwise statement: the outer output loops and the blocks of
// SB_STREAM_BLOCK elements of the innermost one are shared out by one collapsed static loop. A
// block is computed one output cache line at a time into a line-sized buffer (an `omp simd` loop
// the compiler keeps in registers) and written with one non-temporal store, so a large output
// costs no read-for-ownership traffic; the partial lines at unaligned ends use plain stores.
// Writes the output elements [first, end) of the innermost dimension, at the outer subscripts
// `outer` (bound variables): the elements before the first 64-byte boundary with plain stores,
// then whole cache lines, each computed into a line-sized buffer by an `omp simd` loop of a
// constant count (whole vectors, which the compiler keeps in registers) and written by
// sb_store_line with one non-temporal store, then the elements of the last partial line with
// plain stores.
// Before each line, the tensors in `prefetch` (the streaming pass's StreamChoice::prefetch or
// prefetch_rows) are prefetched kStreamPrefetchBytes ahead, clamped to the last element of the
// output's innermost dimension (not of the block: the next block's lines need it); in a row group,
// so are the next row's lines of `next_rows` along the line (emit_next_row_prefetches). The line's
// loop has one vector of a whole line (simdlen), so the buffer is written and read as one register.
void emit_stream_lines(StmtLowering& L, std::vector<std::string> outer, const std::string& first,
                       const std::string& end, const std::set<int>& prefetch, CodeWriter& w,
                       const std::map<int, int>& next_rows = {}) {
  const Statement& st = L.stmt();
  const std::string ty = c_type(L.spec().tensors[st.out].type);
  const std::string& v = L.var_name(static_cast<int>(st.rank()) - 1);
  const std::string lanes = "(int64_t)(64 / sizeof(" + ty + "))";
  auto at = [&](const std::string& j) {
    std::vector<std::string> subs = outer;
    subs.push_back(j);
    return "&" + L.tensor_name(st.out) + "[" + L.flat_index(st.out, subs) + "]";
  };
  auto plain = [&](const std::string& from, const std::string& to) {
    emit_simd_assign(L, from, to, false, w);
  };
  w.open("{");
  const bool from_0 = first == "0";
  w.line("const int64_t sb_h = " + (from_0 ? "" : first + " + ") + "sb_head_elems(" + at(first) +
         ", (int64_t)sizeof(" + ty + "), " + (from_0 ? end : end + " - " + first) + ");");
  plain(first, "sb_h");
  w.line("int64_t sb_j = sb_h;");
  w.open("for (; sb_j + " + lanes + " <= " + end + "; sb_j += " + lanes + ") {");
  const std::string extent = L.extent(st.out, st.rank() - 1, kPrecRel + 1);
  for (int t : prefetch) {
    const std::string ahead =
        std::to_string(kStreamPrefetchBytes / dtype_bytes(L.spec().tensors[t].type));
    std::vector<std::string> subs = outer;
    subs.push_back("(sb_j + " + ahead + " < " + extent + " ? sb_j + " + ahead + " : " +
                   L.extent(st.out, st.rank() - 1, kPrecAdd + 1) + " - 1)");
    w.line("__builtin_prefetch(&" + L.tensor_name(t) + "[" + L.flat_index(t, subs) + "], 0, 3);");
  }
  emit_next_row_prefetches(L, next_rows, static_cast<int>(st.rank()) - 1, "sb_j",
                           kStreamLineBytes / dtype_bytes(L.spec().tensors[st.out].type), w,
                           /*streaming=*/true);
  w.line(ty + " sb_line[64 / sizeof(" + ty + ")] __attribute__((aligned(64)));");
  const std::string simdlen =
      std::to_string(kStreamLineBytes / dtype_bytes(L.spec().tensors[st.out].type));
  auto line_loop = [&](const std::function<void()>& body) {
    w.line("#pragma omp simd simdlen(" + simdlen + ")");
    w.open("for (int64_t sb_q = 0; sb_q < " + lanes + "; ++sb_q) {");
    w.line("const int64_t " + v + " = sb_j + sb_q;");
    body();
    w.close();
  };
  const std::vector<std::vector<const Expr*>> stages = simd_stages(L);
  emit_stages(L, stages, "64 / sizeof(" + ty + ")", line_loop, w);
  line_loop([&] {
    const std::string rhs = L.expr(*st.rhs, w, 0);
    w.line("sb_line[sb_q] = " + rhs + ";");
  });
  release_stages(L, stages);
  w.line("sb_store_line(" + at("sb_j") + ", sb_line, 64);");
  w.close();
  plain("sb_j", end);
  w.close();
}

void emit_stream_nest(StmtLowering& L, CodeWriter& w) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();
  const std::set<int>& prefetch = stream_choice(L.spec(), st).prefetch;
  w.line("#pragma omp parallel");
  w.open("{");
  w.line(std::string("#pragma omp for schedule(static) nowait") +
         (rank > 1 ? " collapse(" + std::to_string(rank) + ")" : ""));
  std::vector<std::string> subs;
  for (size_t d = 0; d + 1 < rank; ++d) {
    const std::string& v = L.var_name(static_cast<int>(d));
    w.open("for (int64_t " + v + " = 0; " + v + " < " + L.extent(st.out, d, kPrecRel + 1) + "; ++" +
           v + ") {");
    subs.push_back(v);
  }
  const std::string inner = L.extent(st.out, rank - 1, kPrecAdd + 1);
  w.open("for (int64_t sb_b = 0; sb_b < " + inner + "; sb_b += SB_STREAM_BLOCK) {");
  w.line("const int64_t sb_e = " + inner + " - sb_b < SB_STREAM_BLOCK ? " + inner +
         " : sb_b + SB_STREAM_BLOCK;");
  if (needs_inside_split(L))
    emit_edge_segments(L, *st.rhs, {}, "sb_b", "sb_e", w,
                       [&] { emit_stream_lines(L, subs, "sb_lo", "sb_hi", prefetch, w); });
  else
    emit_stream_lines(L, subs, "sb_b", "sb_e", prefetch, w);
  w.close();
  for (size_t d = 0; d + 1 < rank; ++d) w.close();
  w.line("sb_stream_fence();");
  w.close();
}

// The blocks of a tile (lower/tile_transposes.h, kBlockInner and kBlockOuter): for each
// kBlockOuter rows of `dim` from the tile's first (sb_b), each kBlockInner elements of the
// innermost index from the tile's first (sb_e), the read's block transposed in registers into
// sb_tb (sb_transpose_8x16_b32), then each row's piece computed from it (the read, and any read
// of the same element, printed as an element of sb_tb) and stored by an `omp simd` loop. The
// piece of each row left at the tile's end follows plainly; the rows left after the last whole
// block are the caller's (its loop over `dim` starts at sb_b). The pieces are stored plainly in
// the streaming form too: on transpose 2048x4096 f32 (cpu omp_simd, 2-core Zen 3 VM, 15
// repetitions each in alternating runs, results/vm/transpose-blocks-ab-20261206), median 2.88 ms
// (2.66-3.02) against 3.26 ms (3.16-3.53) with each piece a non-temporal line.
void emit_transposed_blocks(StmtLowering& L, int dim, int axis, const Expr& read, CodeWriter& w) {
  static_assert(kBlockInner == 16 && kBlockOuter == 8, "sb_transpose_8x16_b32's block");
  const Statement& st = L.stmt();
  const int inner = static_cast<int>(st.rank()) - 1;
  const std::string& vd = L.var_name(dim);
  const std::string& vi = L.var_name(inner);
  const std::string d_s = std::to_string(dim), i_s = std::to_string(inner);
  const std::string outer = std::to_string(kBlockOuter), in = std::to_string(kBlockInner);
  const std::string rt = c_type(L.spec().tensors[read.ref].type);
  w.line("// " + to_string(read, L.spec(), &st) + " in blocks of " + in + " " + vi + " by " +
         outer + " " + vd + ", each transposed in registers.");
  w.line("int64_t sb_b = sb_t" + d_s + ";");
  w.open("for (; sb_b + " + outer + " <= sb_te" + d_s + "; sb_b += " + outer + ") {");
  w.line("int64_t sb_e = sb_t" + i_s + ";");
  w.open("for (; sb_e + " + in + " <= sb_te" + i_s + "; sb_e += " + in + ") {");
  w.line(rt + " sb_tb[" + outer + "][" + in + "] __attribute__((aligned(64)));");
  w.open("{");
  w.line("const int64_t " + vd + " = sb_b;");
  w.line("const int64_t " + vi + " = sb_e;");
  std::vector<std::string> subs;
  for (const ExprPtr& a : read.args) subs.push_back(L.expr(*a, w, kPrecPrimary));
  // Elements between rows of the block: the read's extents after its subscript `axis`.
  std::string stride;
  for (size_t a = static_cast<size_t>(axis) + 1; a < read.args.size(); ++a)
    stride += (stride.empty() ? "" : " * ") + L.extent(read.ref, a, kPrecMul + 1);
  w.line("sb_transpose_8x16_b32(&" + L.tensor_name(read.ref) + "[" + L.flat_index(read.ref, subs) +
         "], " + stride + ", sb_tb);");
  w.close();
  const std::vector<const Expr*> same = block_reads(L.spec(), st);
  for (const Expr* r : same) L.set_override(r, "sb_tb[sb_p][sb_q]");
  w.open("for (int64_t sb_p = 0; sb_p < " + outer + "; ++sb_p) {");
  w.line("const int64_t " + vd + " = sb_b + sb_p;");
  auto loop = [&](const std::function<void()>& body) {
    w.line("#pragma omp simd simdlen(" + in + ")");
    w.open("for (int64_t sb_q = 0; sb_q < " + in + "; ++sb_q) {");
    w.line("const int64_t " + vi + " = sb_e + sb_q;");
    body();
    w.close();
  };
  const std::vector<std::vector<const Expr*>> stages = simd_stages(L);
  emit_stages(L, stages, in, loop, w);
  loop([&] { L.assign(w); });
  release_stages(L, stages);
  for (const Expr* r : same) L.clear_override(r);
  w.close();
  w.close();
  w.open("for (int64_t " + vd + " = sb_b; " + vd + " < sb_b + " + outer + "; ++" + vd + ") {");
  emit_simd_assign(L, "sb_e", "sb_te" + i_s, false, w);
  w.close();
  w.close();
}

// An elementwise statement that reads across rows (lower/tile_transposes.h: y[j, i] = x[i, j]),
// under omp: tiles of `tiles.outer` elements of output dimension `dim` by `tiles.inner` of the
// innermost one, shared out with the other output loops by one collapsed static loop. Inside a
// tile, the rows of `dim` are written in order along the innermost index: plainly by an
// `omp simd` loop, or with `stream` one cache line at a time with non-temporal stores
// (emit_stream_lines), each thread fencing its stores at the end. The lines of the read's tensor
// that a tile touches stay in the first-level cache while the tile uses them. With `blocks`
// (cpu_transposes_in_blocks), each tile's whole blocks of rows come first
// (emit_transposed_blocks), then the rows after them as above.
void emit_tiled_nest(StmtLowering& L, int dim, const Tiles& tiles, bool stream, CodeWriter& w,
                     bool blocks) {
  const Statement& st = L.stmt();
  const int rank = static_cast<int>(st.rank());
  const int inner = rank - 1;
  SB_ASSERT(dim >= 0 && dim < inner, "a tiled dimension that is not an outer output dimension");
  const std::string collapse = " collapse(" + std::to_string(rank) + ")";
  if (stream) {
    w.line("#pragma omp parallel");
    w.open("{");
    w.line("#pragma omp for schedule(static) nowait" + collapse);
  } else {
    w.line("#pragma omp parallel for schedule(static)" + collapse);
  }
  for (int d = 0; d < rank; ++d) {
    if (d == dim || d == inner) continue;
    const std::string& v = L.var_name(d);
    w.open("for (int64_t " + v + " = 0; " + v + " < " + L.extent(st.out, d, kPrecRel + 1) + "; ++" +
           v + ") {");
  }
  // The tile loops (innermost of the collapsed ones), then each tile's ends.
  std::vector<std::string> ends;
  for (int d : {dim, inner}) {
    const std::string n = L.extent(st.out, d, kPrecAdd + 1);
    const std::string b = "sb_t" + std::to_string(d);
    const std::string t = std::to_string(d == dim ? tiles.outer : tiles.inner);
    w.open("for (int64_t " + b + " = 0; " + b + " < " + n + "; " + b + " += " + t + ") {");
    ends.push_back("const int64_t sb_te" + std::to_string(d) + " = " + n + " - " + b + " < " + t +
                   " ? " + n + " : " + b + " + " + t + ";");
  }
  for (const std::string& e : ends) w.line(e);
  const std::string& vd = L.var_name(dim);
  const std::string d_s = std::to_string(dim), i_s = std::to_string(inner);
  const TileChoice& c = tile_choice(L.spec(), st);
  if (blocks) emit_transposed_blocks(L, dim, c.block_axis, tiled_read(L.spec(), st), w);
  w.open("for (int64_t " + vd + " = " + (blocks ? "sb_b" : "sb_t" + d_s) + "; " + vd + " < sb_te" +
         d_s + "; ++" + vd + ") {");
  if (stream) {
    std::vector<std::string> outer;
    for (int d = 0; d < inner; ++d) outer.push_back(L.var_name(d));
    emit_stream_lines(L, outer, "sb_t" + i_s, "sb_te" + i_s, stream_choice(L.spec(), st).prefetch,
                      w);
  } else {
    emit_simd_assign(L, "sb_t" + i_s, "sb_te" + i_s, false, w);
  }
  w.close();
  for (int d = 0; d < rank; ++d) w.close();
  if (stream) {
    w.line("sb_stream_fence();");
    w.close();
  }
}

// True when `e` has the same value for every element of a row: it reads index variable 0 (the
// row) at most, and contains no reduction.
bool row_invariant(const Expr& e) {
  if (e.kind == ExprKind::IndexVar) return e.ref == 0;
  if (e.kind == ExprKind::Reduce) return false;
  for (const auto& a : e.args)
    if (!row_invariant(*a)) return false;
  return true;
}

bool has_index_var(const Expr& e) {
  if (e.kind == ExprKind::IndexVar) return true;
  for (const auto& a : e.args)
    if (has_index_var(*a)) return true;
  return false;
}

// In a row group: when statement `q`, of rank 1, holds one reduction over a whole row of the
// row-local output of the statement `p` just before it (e[r, c] = ...; s[r] = sum(c in 0..C:
// ... e[r, c] ...)), reading that output only at the element of the current iteration, returns
// that reduction: `p` can then be computed element by element inside the reduction's loop,
// saving a pass over the row. Otherwise nullptr.
const Expr* reduction_to_fuse(const Statement& p, const Statement& q, bool p_row_local) {
  if (p.rank() != 2 || q.rank() != 1 || !p_row_local || contains_reduce(*p.rhs)) return nullptr;
  const std::vector<const Expr*> reduces = reduces_of(*q.rhs);
  if (reduces.size() != 1) return nullptr;
  const Expr* r = reduces.front();
  const IndexVar& v = q.vars[r->ref];
  const IndexVar& col = p.vars[1];
  if (!v.lo || !v.hi || !col.hi || v.lo->kind != ExprKind::IntLit || v.lo->ival != 0 ||
      has_index_var(*v.hi) || !same_expr(*v.hi, *col.hi))
    return nullptr;
  for (const Expr* read : reads_of(*r->args[0])) {
    if (read->ref != p.out) continue;
    const bool at_iteration = read->args.size() == 2 && read->args[0]->kind == ExprKind::IndexVar &&
                              read->args[0]->ref == 0 &&
                              read->args[1]->kind == ExprKind::IndexVar &&
                              read->args[1]->ref == r->ref;
    if (!at_iteration) return nullptr;
  }
  return r;
}

// With approx_math: every floating-point division of `L`'s statement by a row-invariant value
// prints as a multiplication by its reciprocal, computed once per row into `w` (the row index
// must be bound there). Inner divisions first, so that an outer one prints their replacements.
void hoist_reciprocals(StmtLowering& L, const Expr& e, CodeWriter& w, int& next) {
  for (const auto& a : e.args) hoist_reciprocals(L, *a, w, next);
  if (e.kind != ExprKind::Binary || e.bop != BinOp::Div || !is_float(e.type) ||
      !row_invariant(*e.args[1]) || row_invariant(*e.args[0]))
    return;
  const std::string name = "sb_rcp" + std::to_string(next++);
  w.line(std::string("const ") + c_type(e.type) + " " + name + " = " + float_literal(1.0, e.type) +
         " / " + L.expr(*e.args[1], w, kPrecMul + 1) + ";");
  CodeWriter scratch(0);  // an elementwise operand hoists nothing
  L.set_override(&e, "(" + L.expr(*e.args[0], scratch, kPrecMul) + " * " + name + ")");
}

// Writes the body of a fused group's kernel (an `int` function returning non-zero when a row
// buffer could not be allocated). `Ls` holds one lowering per statement of the group, in order.
// Rank-2 elementwise statements whose output is in memory get a streaming form too, chosen at run
// time when the group's tensors outgrow the caches (SB_STREAM_MIN_BYTES). A statement that
// reduction_to_fuse pairs with the next one is computed inside that one's loop; with
// `reciprocals` (approx_math), divisions by a row-invariant value become multiplications
// (hoist_reciprocals). Returns whether the code uses the streaming support (cpu_stream_support()).
bool emit_row_group(std::vector<StmtLowering>& Ls, const RowGroup& g,
                    const std::set<int>& stream_tensors, bool reciprocals, CodeWriter& w) {
  const Spec& spec = Ls.front().spec();
  auto row_local = [&](int t) {
    return std::find(g.row_local.begin(), g.row_local.end(), t) != g.row_local.end();
  };
  std::vector<int> heap;  // row-local tensors of rank > 1; those of rank 1 are one local value
  for (int t : g.row_local) {
    for (StmtLowering& L : Ls) L.set_row_local(t, "sb_row_" + c_name(spec.tensors[t].name));
    if (spec.tensors[t].shape.size() > 1) heap.push_back(t);
  }
  const bool alloc = !heap.empty();
  bool streaming = false;
  CodeWriter b(w.indent());
  if (alloc) b.line("int sb_failed = 0;");
  b.line("#pragma omp parallel");
  b.open("{");
  // A row-local temp holds values, in the type they compute in (f32 for f16 and bf16).
  for (int t : g.row_local) {
    const Tensor& tn = spec.tensors[t];
    if (tn.shape.size() == 1)
      b.line(std::string(c_type(compute_type(tn.type))) + " sb_row_" + c_name(tn.name) + "[1];");
  }
  if (alloc) {
    std::string ok;
    for (int t : heap) {
      const Tensor& tn = spec.tensors[t];
      const std::string name = "sb_row_" + c_name(tn.name);
      const std::string ct = c_type(compute_type(tn.type));
      std::string bytes = "sizeof(" + ct + ")";
      for (size_t d = 1; d < tn.shape.size(); ++d)
        bytes += " * " + Ls.front().extent(t, d, kPrecMul + 1);
      b.line(ct + "* " + name + " = (" + ct + "*)malloc(" + bytes + ");");
      ok += (ok.empty() ? "" : " && ") + name + " != NULL";
    }
    b.line("const int sb_ok = " + ok + ";");
    b.open("if (!sb_ok) {");
    b.line("#pragma omp atomic write");
    b.line("sb_failed = 1;");
    b.close();
  }
  b.line("#pragma omp for schedule(static)");
  const std::string rows = Ls.front().extent(Ls.front().stmt().out, 0, kPrecRel + 1);
  b.open("for (int64_t sb_row = 0; sb_row < " + rows + "; ++sb_row) {");
  if (alloc) b.line("if (!sb_ok) continue;");
  // Prints the next-row prefetches `nr` (lower/streaming.h) of a statement whose variable `var`
  // is reduction `reduce`'s loop variable in `Q`, in that reduction's blocks of partial
  // accumulators. A statement prints its other next-row prefetches in its streamed lines.
  auto prefetch_in_blocks = [](StmtLowering& Q, const Expr* reduce, std::map<int, int> nr,
                               int var) {
    if (nr.empty()) return;
    Q.set_reduce_block_prologue(reduce, [&Q, nr, var](CodeWriter& lw, const std::string& first,
                                                      int count) {
      emit_next_row_prefetches(Q, nr, var, first, count, lw);
    });
  };
  CodeWriter rb(b.indent());  // the row's statements
  int next_rcp = 0;
  for (size_t i = 0; i < Ls.size(); ++i) {
    StmtLowering& L = Ls[i];
    const Statement& st = L.stmt();
    const Expr* fuse =
        i + 1 < Ls.size() ? reduction_to_fuse(st, Ls[i + 1].stmt(), row_local(st.out)) : nullptr;
    if (fuse) {
      // This statement's row is computed inside the next statement's reduction loop.
      StmtLowering& Q = Ls[++i];
      rb.open("{  // " + source_text(st, spec) + ", computed in the loop of:");
      rb.line("// " + source_text(Q.stmt(), spec));
      rb.line("[[maybe_unused]] const int64_t " + Q.var_name(0) + " = sb_row;");
      Q.set_reduce_prologue(fuse, [&L, &Q, fuse](CodeWriter& lw) {
        lw.line("const int64_t sb_col = " + Q.var_name(fuse->ref) + ";");
        lw.open("{");
        lw.line("[[maybe_unused]] const int64_t " + L.var_name(0) + " = sb_row;");
        lw.line("const int64_t " + L.var_name(1) + " = sb_col;");
        L.assign(lw);
        lw.close();
      });
      // The producer's next rows along its column, which is the reduction's variable here.
      const std::map<int, int>& nr = spec.schedule.streams[g.first + i - 1].next_rows;
      std::map<int, int> along;
      for (const auto& [t, v] : nr)
        if (v == 1) along[t] = fuse->ref;
      const std::map<int, int>& q_nr = spec.schedule.streams[g.first + i].next_rows;
      for (const auto& [t, v] : q_nr) along.emplace(t, v);
      prefetch_in_blocks(Q, fuse, along, fuse->ref);
      emit_loop_nest(Q, true, rb, /*in_row=*/true);
      rb.close();
      continue;
    }
    const std::map<int, int>& nr = spec.schedule.streams[g.first + i].next_rows;
    for (const Expr* e : top_reduces_of(*st.rhs)) prefetch_in_blocks(L, e, nr, e->ref);
    rb.open("{  // " + source_text(st, spec));
    // The row index may go unused when the statement touches only row-local tensors.
    rb.line(std::string(row_local(st.out) ? "[[maybe_unused]] " : "") + "const int64_t " +
            L.var_name(0) + " = sb_row;");
    if (reciprocals && st.rank() == 2 && !contains_reduce(*st.rhs))
      hoist_reciprocals(L, *st.rhs, rb, next_rcp);
    // The streaming pass's choice for the statement's rows (lower/streaming.h): a row of rank 2
    // or more is streamed a line at a time along its innermost dimension, its middle dimensions
    // as plain loops.
    if (spec.schedule.streams[g.first + i].rows && st.rank() >= 2) {
      streaming = true;
      rb.open("if (sb_stream) {");
      std::vector<std::string> outer{L.var_name(0)};
      for (size_t d = 1; d + 1 < st.rank(); ++d) {
        const std::string& v = L.var_name(static_cast<int>(d));
        rb.open("for (int64_t " + v + " = 0; " + v + " < " + L.extent(st.out, d, kPrecRel + 1) +
                "; ++" + v + ") {");
        outer.push_back(v);
      }
      emit_stream_lines(L, outer, "0", L.extent(st.out, st.rank() - 1, kPrecAdd + 1),
                        spec.schedule.streams[g.first + i].prefetch_rows, rb, nr);
      for (size_t d = 1; d + 1 < st.rank(); ++d) rb.close();
      CodeWriter plain(rb.indent());
      emit_loop_nest(L, true, plain, /*in_row=*/true);
      rb.close("} else {");
      rb.raw(plain.str());
      rb.line("}");
    } else {
      emit_loop_nest(L, true, rb, /*in_row=*/true);
    }
    rb.close();
  }
  if (rb.str().find(kNextRow) != std::string::npos) {
    streaming = true;  // the prefetches run when the group streams
    b.line("const int64_t " + std::string(kNextRow) + " = sb_row + 1 < " + rows +
           " ? sb_row + 1 : sb_row;");
  }
  b.raw(rb.str());
  b.close();
  if (streaming) b.line("if (sb_stream) sb_stream_fence();");
  for (int t : heap) b.line("free(sb_row_" + c_name(spec.tensors[t].name) + ");");
  b.close();
  b.line(alloc ? "return sb_failed;" : "return 0;");

  if (streaming) {
    w.line("// Stream the outputs when the tensors in memory outgrow the caches.");
    w.line("const int sb_stream = " + stream_bytes(Ls.front(), stream_tensors) +
           " >= SB_STREAM_MIN_BYTES;");
  }
  w.raw(b.str());
  return streaming;
}

}  // namespace

bool cpu_transposes_in_blocks(const Spec& spec, const Statement& st, bool omp) {
  return omp && tile_choice(spec, st).block_axis >= 0 && stream_choice(spec, st).whole;
}

bool emit_cpu_statement(StmtLowering& L, bool omp, CodeWriter& w, const Tiles& tiles) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();

  if (rank == 0) {
    // A scalar output: the parallelize pass's reductions are parallel (lower/parallelize.h), and
    // simd when innermost; below a parallel non-simd loop, innermost reductions are simd
    // (lower/vectorize.h).
    ReducePragma pragma = nullptr;
    if (omp) {
      const ParallelChoice& par = parallel_choice(L.spec(), st);
      SB_ASSERT(simd_choice(L.spec(), st).whole != SimdLoops::Outputs,
                "a scalar statement vectorised over an output loop");
      pragma = [&par, &L](const ReduceSite& s) -> ReduceLoop {
        const std::string clause = omp_reduction_clause(s, L.helpers());
        const bool split = par.loops == ParallelLoops::Reductions && par.apart.count(s.reduce->ref);
        if (split && !s.innermost) return "#pragma omp parallel for schedule(static) " + clause;
        if (!s.innermost) return {};
        // Split over the threads in chunks (lower/parallelize.h: kReduceChunkBytes).
        return {"#pragma omp simd " + clause, /*partials=*/true,
                split ? "#pragma omp parallel for schedule(static) " + clause : ""};
      };
    }
    L.assign(w, pragma);
    return false;
  }
  // The tile_transposes pass's tiles (lower/tile_transposes.h), for a read across rows.
  const int tiled = omp ? tile_choice(L.spec(), st).dim : -1;
  if (const Expr* scan = running_scan(L.spec(), st, /*rows=*/false);
      omp && scan && scan_streams(L, *scan)) {
    emit_loop_nest(L, omp, w);  // a long one streams in its two-pass form (emit_scan_split)
    return true;
  }
  if (!omp || !stream_choice(L.spec(), st).whole) {
    if (tiled >= 0)
      emit_tiled_nest(L, tiled, tiles, false, w, /*blocks=*/false);
    else
      emit_loop_nest(L, omp, w);
    return false;
  }

  // An elementwise statement: streaming stores when the tensors it touches outgrow the caches,
  // the plain parallel loop nest otherwise; each in tiles where the pass chose them.
  CodeWriter stream(w.indent() + 1), plain(w.indent() + 1);
  if (tiled >= 0) {
    const bool blocks = cpu_transposes_in_blocks(L.spec(), st, omp);
    emit_tiled_nest(L, tiled, tiles, true, stream, blocks);
    emit_tiled_nest(L, tiled, tiles, false, plain, blocks);
  } else {
    emit_stream_nest(L, stream);
    emit_loop_nest(L, true, plain);
  }
  std::vector<std::string> terms;
  for (int t : stream_choice(L.spec(), st).tensors) {
    terms.push_back(std::to_string(dtype_bytes(L.spec().tensors[t].type)) + " * " +
                    L.element_count(t, kPrecMul + 1));
  }
  std::string bytes = "const int64_t sb_bytes =";
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string piece = " " + terms[i] + (i + 1 < terms.size() ? " +" : ";");
    if (2 * w.indent() + bytes.size() + piece.size() > 100) {
      w.line(bytes);
      bytes = "   ";
    }
    bytes += piece;
  }
  w.line("// Bytes of the tensors this statement touches.");
  w.line(bytes);
  w.open("if (sb_bytes >= SB_STREAM_MIN_BYTES) {");
  w.raw(stream.str());
  w.close("} else {");
  w.raw(plain.str());
  w.line("}");
  return true;
}

namespace {

// ---- Streaming stores -------------------------------------------------------------------------

const char* const kStreamCode =
    R"(// Elementwise statements whose tensors total at least SB_STREAM_MIN_BYTES (1.5x the size of
// the last-level cache) write their output with non-temporal stores, one cache line at a time, in
// parallel blocks of SB_STREAM_BLOCK elements. Both can be overridden with -D.
#ifndef SB_STREAM_MIN_BYTES
#define SB_STREAM_MIN_BYTES @MIN_BYTES@
#endif
#ifndef SB_STREAM_BLOCK
#define SB_STREAM_BLOCK 1024
#endif

// On the kernels that stream: GCC would otherwise turn a line's copy loop into a call of memcpy
// (or `rep movs`) per 64 bytes instead of keeping the line in a register.
#if defined(__GNUC__) && !defined(__clang__)
#define SB_STREAM_KERNEL __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define SB_STREAM_KERNEL
#endif

// Elements of `size` bytes from `dst` before its next 64-byte boundary (none when `dst` is
// aligned), at most `left`.
static inline int64_t sb_head_elems(const void* dst, int64_t size, int64_t left) {
  const int64_t n = (int64_t)(((64 - ((uintptr_t)dst & 63)) & 63) / (uint64_t)size);
  return n < left ? n : left;
}

// Writes `bytes` bytes from `line` (64-byte aligned) to `dst`: a whole aligned cache line with
// non-temporal stores where the target has them, anything else with plain stores.
static inline void sb_store_line(void* dst, const void* line, int64_t bytes) {
#if defined(__AVX512F__)
  if (bytes == 64) {
    _mm512_stream_si512((__m512i*)dst, _mm512_load_si512(line));
    return;
  }
#elif defined(__AVX__)
  if (bytes == 64) {
    _mm256_stream_si256((__m256i*)dst, _mm256_load_si256((const __m256i*)line));
    _mm256_stream_si256((__m256i*)dst + 1, _mm256_load_si256((const __m256i*)line + 1));
    return;
  }
#elif defined(__SSE2__)
  if (bytes == 64) {
    for (int q = 0; q < 4; ++q)
      _mm_stream_si128((__m128i*)dst + q, _mm_load_si128((const __m128i*)line + q));
    return;
  }
#endif
  memcpy(dst, line, (size_t)bytes);
}

// Orders this thread's streaming stores before whatever follows (the end of the parallel region).
static inline void sb_stream_fence(void) {
#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__)
  _mm_sfence();
#endif
}

)";

// The transposed blocks of lower/tile_transposes.h (emit_transposed_blocks).
const char* const kBlockCode =
    R"(// Transposes 16 rows of 8 four-byte elements (row p at src + p * stride elements) into
// dst[8][16] (64-byte aligned): dst[q][p] = src[p * stride + q]. With AVX, each half of 8 rows
// in registers (unpack, shuffle, then swap 128-bit lanes); otherwise one element at a time.
static inline void sb_transpose_8x16_b32(const void* src, int64_t stride, void* dst) {
#if defined(__AVX__)
  for (int h = 0; h < 2; ++h) {
    const float* s = (const float*)src + (int64_t)h * 8 * stride;
    float* d = (float*)dst + h * 8;
    __m256 r[8], t[8], u[8];
    for (int p = 0; p < 8; ++p) r[p] = _mm256_loadu_ps(s + p * stride);
    for (int p = 0; p < 8; p += 2) {
      t[p] = _mm256_unpacklo_ps(r[p], r[p + 1]);
      t[p + 1] = _mm256_unpackhi_ps(r[p], r[p + 1]);
    }
    for (int p = 0; p < 8; p += 4) {
      u[p] = _mm256_shuffle_ps(t[p], t[p + 2], 0x44);
      u[p + 1] = _mm256_shuffle_ps(t[p], t[p + 2], 0xEE);
      u[p + 2] = _mm256_shuffle_ps(t[p + 1], t[p + 3], 0x44);
      u[p + 3] = _mm256_shuffle_ps(t[p + 1], t[p + 3], 0xEE);
    }
    for (int q = 0; q < 4; ++q) {
      _mm256_store_ps(d + q * 16, _mm256_permute2f128_ps(u[q], u[q + 4], 0x20));
      _mm256_store_ps(d + (q + 4) * 16, _mm256_permute2f128_ps(u[q], u[q + 4], 0x31));
    }
  }
#else
  for (int64_t p = 0; p < 16; ++p)
    for (int64_t q = 0; q < 8; ++q)
      memcpy((char*)dst + (q * 16 + p) * 4, (const char*)src + (p * stride + q) * 4, 4);
#endif
}

)";

}  // namespace

std::string cpu_intrinsics_include() {
  return "#if defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__)\n"
         "#include <immintrin.h>\n#endif\n";
}

std::string cpu_stream_includes() {
  return "#include <string.h>\n" + cpu_intrinsics_include();
}

std::string cpu_stream_support(bool blocks) {
  // The threshold is the shared policy's (lower/streaming.h); the line code below is written for
  // its 64-byte lines.
  static_assert(kStreamLineBytes == 64, "the cpu streaming support writes 64-byte lines");
  static_assert(kStreamMinBytes % (int64_t{1} << 20) == 0, "printed in MiB");
  std::string code = kStreamCode;
  const std::string mark = "@MIN_BYTES@";
  code.replace(code.find(mark), mark.size(),
               "(" + std::to_string(kStreamMinBytes >> 20) + "LL << 20)");
  if (blocks) code += kBlockCode;
  return banner("Streaming stores for large elementwise outputs") + code;
}

namespace {

// A gathered GEMM's kernel (emit_im2col) with one call of the blocked GEMM per batch element,
// or per group; many small groups run side by side, since the blocked GEMM shares out its row
// blocks and a group of a few rows has one (its sb_workers() is 1 inside a parallel region).
void emit_im2col_gemm(StmtLowering& L, const GatheredGemm& g, int64_t mc, int64_t kc, int64_t nc,
                      CodeWriter& w) {
  const std::string gemm = blocked_gemm_name(g.type, g.type, g.type);
  emit_im2col(
      L, g, /*parallel_gather=*/true, w,
      [&](const std::string& wt, const std::string& out, const std::string& rows,
          const std::vector<std::string>& on_fail, CodeWriter& cw) {
        const std::vector<std::string> args = gemm_args(
            {rows, "sb_n", "sb_k", wt, "sb_k", "1", "sb_col", "sb_n", "1", out, "sb_n"}, mc, kc,
            nc);
        cw.open(wrap_call("if (" + gemm, args, " != 0) {", 2 * cw.indent()));
        for (const std::string& l : on_fail) cw.line(l);
        cw.close();
      },
      /*groups_side_by_side=*/true);
}

// Writes the body of a contraction statement's kernel: the GEMM call, then the elementwise rest
// of the statement (if any) as a second pass over the output. `E` lowers the epilogue statement.
// Returns whether the epilogue uses streaming stores.
bool emit_gemm_statement(StmtLowering& L, StmtLowering* E, const Contraction& m, int64_t mc,
                         int64_t kc, int64_t nc, CodeWriter& w) {
  w.line("// " + gemm_comment(L.tensor_name(L.stmt().out), L.tensor_name(m.x), m.x_trans,
                              L.tensor_name(m.y), m.y_trans, mc, kc, nc));
  const LibraryGemm g = library_gemm(L, m, w);
  const std::string& c = g.c;
  const std::string sfx = dtype_name(m.type);
  // f16 and bf16 operands are widened to f32 as the GEMM packs them (lower/blocked_gemm.h).
  const std::string gemm = blocked_gemm_name(m.type, m.x_type, m.y_type);
  if (!m.batched) {
    const std::vector<std::string> args =
        gemm_args({"sb_m", "sb_n", "sb_k", g.xp, g.xs_i, g.xs_k, g.yp, g.ys_k, g.ys_j, c, "sb_n"},
                  mc, kc, nc);
    w.line(wrap_call("if (" + gemm, args, " != 0) return 1;", 2 * w.indent()));
  } else {
    // Product sb_b's operands and output: a step of the batch's stride, none for an operand
    // that every product shares.
    auto at = [](const std::string& p, const std::string& step) {
      return step == "0" ? p : p + " + sb_b * " + step;
    };
    const std::vector<std::string> args =
        gemm_args({"sb_m", "sb_n", "sb_k", at(g.xp, g.xs_b), g.xs_i, g.xs_k, at(g.yp, g.ys_b),
                   g.ys_k, g.ys_j, at(c, g.cs_b), "sb_n"},
                  mc, kc, nc);
    w.line("// One GEMM per product of the batch. Products too small to use every thread (the");
    w.line("// GEMM runs them on one) run side by side instead, one per thread; larger ones one");
    w.line("// after another, each on every thread, outside any parallel region (a team nested in");
    w.line("// one, even an inactive one, starts new threads on every call).");
    w.line("int sb_failed = 0;");
    w.open("if ((double)sb_m * (double)sb_n * (double)sb_k < (double)sb_gemm_min_parallel_" + sfx +
           ") {");
    w.line("#pragma omp parallel for schedule(static) reduction(|:sb_failed)");
    w.open("for (int64_t sb_b = 0; sb_b < sb_batch; ++sb_b) {");
    w.line(wrap_call("if (" + gemm, args, " != 0) sb_failed = 1;", 2 * w.indent()));
    w.close();
    w.close_open("} else {");
    w.open("for (int64_t sb_b = 0; sb_b < sb_batch; ++sb_b) {");
    w.line(wrap_call("if (" + gemm, args, " != 0) sb_failed = 1;", 2 * w.indent()));
    w.close();
    w.close();
    w.line("if (sb_failed) return 1;");
  }
  bool streaming = false;
  if (E) {
    w.line("// The rest of the statement, elementwise, with the sum read back from " + c + ".");
    streaming = emit_cpu_statement(*E, true, w);
  }
  w.line("return 0;");
  return streaming;
}

// The statements first..last of a fused kernel as comment lines: returned for the kernel's head,
// and added to the launcher's `calls`.
std::string statement_comments(const Spec& spec, size_t first, size_t last, CodeWriter& calls) {
  std::string texts;
  for (size_t j = first; j <= last; ++j) {
    texts += "// " + to_string(spec.stmts[j], spec) + "\n";
    calls.line("// " + to_string(spec.stmts[j], spec));
  }
  return texts;
}

// Adds the tensors and sizes the lowerings `Ls` use to `tensors` and `sizes`.
void add_used(const std::vector<StmtLowering>& Ls, std::set<int>& tensors, std::set<int>& sizes) {
  for (const StmtLowering& L : Ls) {
    tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
    sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
  }
}

GeneratedFile emit_cpu_file(const Spec& spec, const Emitter& em) {
  HelperSet helpers;
  VectorMath vector_math;
  std::string kernels, launchers;
  const auto& variants = backend_variants(spec, em.backend());
  // The blocked GEMMs (lower/blocked_gemm.h): per element type, the operand types of its calls.
  std::map<DType, std::set<GemmOperandTypes>> gemm;
  std::set<DType> attention;  // and of the fused attention (backends/cpu/attention.h)
  bool streaming = false, uses_malloc = false, blocks = false;

  for (const Variant& v : variants) {
    const host::HostStrategy& strategy = cpu_strategies().of(v);
    const StrategyInfo* info = &strategy.info;
    const host::HostSchedule& sched = strategy.schedule;
    // The C lowering has OpenMP threads and omp simd together or neither.
    SB_ASSERT(sched.parallel == sched.simd,
              "cpu strategy with only one of parallel and simd: " + v.strategy);
    SB_ASSERT(sched.gemm != host::Gemm::Vendor, "cpu strategy with a vendor GEMM: " + v.strategy);
    const bool blocked = sched.gemm == host::Gemm::Blocked;
    const bool omp = sched.parallel;
    vector_math.approx = sched.approx_math && param(v, *info, "approx_math") == 1;

    kernels += "// Variant " + v.name + ": " + info->doc + ".\n\n";
    CodeWriter calls(1);
    std::set<int> used_tensors, used_sizes;
    // The row_fusion pass's groups (lower/row_fusion.h), run by a strategy that fuses rows.
    const std::vector<RowGroup> no_groups;
    const std::vector<RowGroup>& groups = sched.fuse_rows ? spec.schedule.row_groups : no_groups;
    // The fuse_attention pass's groups (lower/fuse_attention.h), run by a strategy that fuses
    // attention.
    const std::vector<size_t> no_attention;
    const std::vector<size_t>& attention_groups =
        sched.attention ? spec.schedule.attention_groups : no_attention;
    size_t next_group = 0, next_attention = 0;
    for (size_t k = 0; k < spec.stmts.size(); ++k) {
      // A row group that starts inside an attention group run before is not run fused.
      while (next_group < groups.size() && groups[next_group].first < k) ++next_group;
      if (next_attention < attention_groups.size() && attention_groups[next_attention] == k) {
        ++next_attention;
        const std::optional<Attention> att = match_attention(spec, k);
        SB_ASSERT(att.has_value(), "an attention group that match_attention does not match");
        const size_t last = k + kAttentionStatements - 1;
        gemm[att->type].insert({att->type, att->type});
        attention.insert(att->type);
        std::vector<StmtLowering> Ls;
        Ls.reserve(3);
        const std::string texts = statement_comments(spec, k, last, calls);
        for (size_t j : {k, k + 2, last}) {
          Ls.emplace_back(spec, spec.stmts[j], &helpers);
          Ls.back().set_vector_math(&vector_math);
        }
        CodeWriter body(1);
        emit_attention(Ls[0], Ls[1], Ls[2], *att, param(v, *info, "bk"), body);
        // The temps are never written: the kernel takes the other tensors only.
        std::set<int> kt, ks;
        add_used(Ls, kt, ks);
        for (int t : {att->s, att->m, att->p, att->l}) kt.erase(t);
        const std::string fn =
            "sb_" + v.name + "_s" + std::to_string(k) + "_" + std::to_string(last);
        kernels += "// Statements " + std::to_string(k) + " to " + std::to_string(last) +
                   " as one pass over blocks of keys with an online softmax (" +
                   spec.tensors[att->s].name + ", " + spec.tensors[att->m].name + ", " +
                   spec.tensors[att->p].name + " and " + spec.tensors[att->l].name +
                   " never written):\n" + texts;
        kernels += wrap_call("static int " + fn,
                             kernel_params(spec, kt, ks, std::set<int>{spec.stmts[k + 4].out},
                                           "__restrict"),
                             " {", 0) +
                   "\n" + body.str() + "}\n\n";
        calls.line(wrap_call("if (" + fn, call_args(spec, kt, ks), " != 0) return 1;", 2));
        used_tensors.insert(kt.begin(), kt.end());
        used_sizes.insert(ks.begin(), ks.end());
        k = last;
        continue;
      }
      if (next_group < groups.size() && groups[next_group].first == k) {
        const RowGroup& g = groups[next_group++];
        std::vector<StmtLowering> Ls;
        Ls.reserve(g.last - g.first + 1);
        std::set<int> outs;
        const std::string texts = statement_comments(spec, g.first, g.last, calls);
        for (size_t j = g.first; j <= g.last; ++j) {
          Ls.emplace_back(spec, spec.stmts[j], &helpers);
          Ls.back().set_vector_math(&vector_math);
          outs.insert(spec.stmts[j].out);
        }
        CodeWriter body(1);
        const bool stream_group = emit_row_group(Ls, g, spec.schedule.group_tensors[next_group - 1],
                                                 vector_math.approx, body);
        streaming = streaming || stream_group;
        uses_malloc = uses_malloc || !g.row_local.empty();
        std::set<int> kt, ks;
        add_used(Ls, kt, ks);
        const std::string fn =
            "sb_" + v.name + "_s" + std::to_string(g.first) + "_" + std::to_string(g.last);
        std::string local;
        for (int t : g.row_local) local += (local.empty() ? "" : ", ") + spec.tensors[t].name;
        kernels += "// Statements " + std::to_string(g.first) + " to " + std::to_string(g.last) +
                   " in one parallel loop over rows" +
                   (local.empty() ? "" : " (" + local + " kept as one row per thread)") + ":\n" +
                   texts;
        kernels +=
            wrap_call(std::string(stream_group ? "SB_STREAM_KERNEL " : "") + "static int " + fn,
                      kernel_params(spec, kt, ks, outs, "__restrict"), " {", 0) +
            "\n" + body.str() + "}\n\n";
        calls.line(wrap_call("if (" + fn, call_args(spec, kt, ks), " != 0) return 1;", 2));
        used_tensors.insert(kt.begin(), kt.end());
        used_sizes.insert(ks.begin(), ks.end());
        k = g.last;
        continue;
      }
      const Statement& st = spec.stmts[k];
      const std::string text = source_text(st, spec);
      const std::string fn = "sb_" + v.name + "_s" + std::to_string(k);
      StmtLowering L(spec, st, &helpers);
      if (omp) L.set_vector_math(&vector_math);
      CodeWriter body(1);
      std::set<int> kt, ks;
      std::optional<Contraction> m;
      std::optional<GatheredGemm> gathered;
      bool stream_kernel = false;
      if (blocked) m = match_contraction(spec, st);
      if (sched.im2col && !m) gathered = match_gathered_gemm(spec, st);
      if (gathered) {
        gemm[gathered->type].insert({gathered->type, gathered->type});
        uses_malloc = true;
        emit_im2col_gemm(L, *gathered, param(v, *info, "mc"), param(v, *info, "kc"),
                         param(v, *info, "nc"), body);
        kt = L.used_tensors();
        ks = L.used_sizes();
      } else if (m) {
        gemm[m->type].insert({m->x_type, m->y_type});
        Statement epi;
        std::optional<StmtLowering> E;
        if (m->epilogue) {
          epi = epilogue_statement(spec, st, m->reduce);
          E.emplace(spec, epi, &helpers);
          E->set_vector_math(&vector_math);
        }
        stream_kernel = emit_gemm_statement(L, E ? &*E : nullptr, *m, param(v, *info, "mc"),
                                            param(v, *info, "kc"), param(v, *info, "nc"), body);
        kt = L.used_tensors();
        ks = L.used_sizes();
        if (E) {
          kt.insert(E->used_tensors().begin(), E->used_tensors().end());
          ks.insert(E->used_sizes().begin(), E->used_sizes().end());
        }
      } else {
        stream_kernel = emit_cpu_statement(L, omp, body, host::variant_tiles(v, *info));
        blocks = blocks || cpu_transposes_in_blocks(spec, st, omp);
        kt = L.used_tensors();
        ks = L.used_sizes();
      }

      kernels += "// " + text + "\n";
      streaming = streaming || stream_kernel;
      kernels += wrap_call(std::string(stream_kernel ? "SB_STREAM_KERNEL " : "") +
                               (m || gathered ? "static int " : "static void ") + fn,
                           kernel_params(spec, kt, ks, st.out, "__restrict"), " {", 0) +
                 "\n";
      kernels += body.str() + "}\n\n";

      calls.line("// " + text);
      if (m || gathered)
        calls.line(wrap_call("if (" + fn, call_args(spec, kt, ks), " != 0) return 1;", 2));
      else
        calls.line(wrap_call(fn, call_args(spec, kt, ks), ";", 2));
      used_tensors.insert(kt.begin(), kt.end());
      used_sizes.insert(ks.begin(), ks.end());
    }

    CodeWriter fn(1);
    unpack_args(spec, "sb_a", used_tensors, used_sizes, fn);
    launchers += "// Variant " + v.name + " (strategy " + v.strategy + ").\n";
    launchers += "static int " + variant_fn(v) + "(const sb_args* sb_a) {\n";
    launchers += fn.str() + "\n" + calls.str() + "  return 0;\n}\n\n";
  }

  std::string out = file_header(spec, em);
  out += "\n#include <math.h>\n#include <stdint.h>\n";
  if (!gemm.empty() || uses_malloc) out += "#include <stdlib.h>\n";
  if (streaming) {
    out += cpu_stream_includes();
  } else {
    if (!gemm.empty()) out += "#include <string.h>\n";
    if (helpers.has_vector_scans()) out += cpu_intrinsics_include();
  }
  if (!gemm.empty()) out += "#ifdef _OPENMP\n#include <omp.h>\n#endif\n";
  out += "\n#include \"specbench_abi.h\"\n\n";
  out += storage_types(spec, StorageLang::Cpu);
  if (!helpers.empty()) out += banner("Helpers") + helpers.definitions("static inline") + "\n";
  if (!vector_math.empty())
    out += banner("Vector math") + vector_math_declarations(vector_math) + "\n";
  if (streaming) out += cpu_stream_support(blocks);
  if (!gemm.empty()) {
    out += banner("Blocked GEMM: packing, register-blocked micro-kernel, cache blocking");
    std::vector<loops::Module> gemms;  // written once as loop IR (lower/blocked_gemm.h)
    for (const auto& [t, operands] : gemm) gemms.push_back(blocked_gemm(t, gemm_target_cpu(), operands));
    out += print_cpu_loops(gemms);
  }
  if (!attention.empty()) {
    out += banner("Fused attention: an online softmax over blocks of keys");
    for (DType t : attention) out += cpu_attention_support(t) + "\n";
  }
  out += banner("Kernels: one function per variant and statement") + kernels;
  out += banner("Launchers: one function per variant, running its statements in order") + launchers;
  out += banner("Dispatch") + dispatch_section(spec, em.backend());
  return {spec.name + "/" + em.backend() + "/" + spec.name + "." + em.extension(), out};
}

GeneratedFile CpuEmitter::print(const Spec& spec) const {
  return emit_cpu_file(spec, *this);
}

}  // namespace

const Emitter& cpu_emitter() {
  static const CpuEmitter kEmitter;
  return kEmitter;
}

}  // namespace sb
