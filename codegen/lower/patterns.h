// Shape detection on checked statements: the one home of the shapes that strategies target,
// decided from the statement's AST alone (never from kernel or tensor names).
//
// Each matcher looks only at the AST of one checked statement (check_spec() has run: types are
// concrete, names resolved, reads proven in bounds). Two families:
//   - the general shapes (match_vectorized ... match_scan with a `why`): they return true and
//     fill their match when the statement has the shape; otherwise false, saying why in `why` (a
//     phrase such as "it has rank 1, not 2"), which Emitter::check_variant turns into the error
//     of a variant that fits no statement. The cuda strategies use them;
//   - the library-callable subsets (match_contraction, match_scalar_reduction, match_scan
//     without a `why`): the general shape plus what a BLAS, CUB or the blocked GEMM needs
//     (types, no boundary rule, bounds from 0), or nullopt. Emitters turn a failed match into a
//     check_variant() error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/affine.h"
#include "ir/ir.h"

namespace sb {

// ---- General shapes ---------------------------------------------------------------------------

// The Reduce nodes of `e` that are not nested in another reduction, in print order.
std::vector<const Expr*> outer_reductions(const Expr& e);

// The affine form of an integer expression with its var-free subtrees (a function of sizes and
// literals such as `K / 2`, the same everywhere in a launch) kept whole as atoms; nullopt when
// it is not affine in the index variables (or overflows).
std::optional<Affine> launch_affine(const Expr& e);

// vectorized: an elementwise statement (rank >= 1, no reduction). `contiguous` lists its reads
// of tensors with the output's shape subscripted by the output indices in order, which are
// contiguous in the flat output index and so load as vectors; other reads load per element.
struct VectorizeMatch {
  std::vector<const Expr*> contiguous;
  // Reads of an output of rank >= 2 that subscript their tensor's last dimension (of the same
  // extent as the output's last) with the output's innermost index and use it nowhere else, from
  // a tensor without a boundary rule: when the output's rows hold whole vectors, the lanes of a
  // vector read consecutive elements of one row of it (b[j] in c[i, j] = a[i] + b[j]).
  std::vector<const Expr*> row_contiguous;
};
bool match_vectorized(const Spec& s, const Statement& st, VectorizeMatch* m, std::string* why);

// block_reduce, warp_reduce, atomic_reduce: a scalar output whose rhs holds exactly one outer
// reduction; the rest of the rhs (an elementwise epilogue such as sqrt(...)) applies to the
// combined value. `atomic` adds atomic_reduce's needs: an f32, f64 or i32 reduction of the
// output's own type (the output is the accumulator).
struct ReduceMatch {
  const Expr* red = nullptr;
};
bool match_scalar_reduce(const Spec& s, const Statement& st, bool atomic, ReduceMatch* m,
                         std::string* why);

// warp_per_row, block_per_row: an output of rank >= 1 whose rhs holds exactly one outer
// reduction, over a variable that every read in its body uses only in the last subscript, with
// coefficient 1 (contiguous in memory), and at least one read does.
bool match_row_reduce(const Spec& s, const Statement& st, ReduceMatch* m, std::string* why);

// tiled_matmul, register_blocked_matmul: c[i, j] = epilogue(red(k in lo..hi: f(a[i, k], b[k, j])))
// where f uses exactly those two reads (and literals or sizes), lo and hi use no output index,
// and a, b are rank-2 tensors subscripted by bare index variables; either may be transposed
// (a[k, i], b[j, k]).
struct MatmulMatch {
  const Expr* red = nullptr;
  const Expr* a = nullptr;  // the read a[i, k] or a[k, i]
  const Expr* b = nullptr;  // the read b[k, j] or b[j, k]
  bool a_k_inner = true;    // a[i, k]: k is a's last (contiguous) subscript
  bool b_k_inner = false;   // b[j, k]: k is b's last subscript
  bool a_batched = false;   // a[b, ...]: read with the batch index first (batched products)
  bool b_batched = false;
  bool batched = false;     // c[b, i, j]: a batch of products (match_batched_matmul)
};
bool match_matmul(const Spec& s, const Statement& st, MatmulMatch* m, std::string* why);
// match_matmul, or a batch of products c[b, i, j] (rank 3, b first; each operand read with b
// first or shared by the batch, as match_contraction's batches): for a kernel with a batch grid
// dimension (cuda tiled_matmul, register_blocked_matmul).
bool match_batched_matmul(const Spec& s, const Statement& st, MatmulMatch* m, std::string* why);

// tiled_transpose: a rank-2 elementwise statement with at least one (at most 4) reads
// x[j, i] of its output indices (i, j) swapped.
struct TransposeMatch {
  std::vector<const Expr*> reads;
};
bool match_transpose(const Spec& s, const Statement& st, TransposeMatch* m, std::string* why);

// tiled_stencil: an output of rank 1 to 3 and one tensor of the same rank, every read of which
// is subscripted by the output indices plus offsets: x[i + o0, j + o1], each offset affine in
// reduction variables (with ranges that use no output index), sizes and literals, and at least
// one offset not identically zero. For each read, `offsets[r][d]` is subscript d minus the
// output index d.
struct StencilMatch {
  int tensor = -1;
  std::vector<const Expr*> reads;
  std::vector<std::vector<Affine>> offsets;
};
bool match_stencil(const Spec& s, const Statement& st, StencilMatch* m, std::string* why);

// scan: y[i] = epilogue(red(j in lo..i + c: f(j))) on a rank-1 output, with lo and c free of
// index variables and f independent of i (an inclusive scan for c = 1, exclusive for c = 0).
struct ScanMatch {
  const Expr* red = nullptr;
  Affine hi;  // vars {i: 1}; the rest (sizes, atoms, constant) is c
};
bool match_scan(const Spec& s, const Statement& st, ScanMatch* m, std::string* why);

// ---- Library-callable subsets -----------------------------------------------------------------

// out[i, j] = sum(k in lo..hi: x(i, k) * y(k, j)), optionally inside an elementwise epilogue
// (e.g. `+ bias[j]`, `max(..., 0.0)`, `alpha * ...`), or a batch of them, out[b, i, j].
//   - the output has rank 2, i = vars[0], j = vars[1]; or rank 3, b = vars[0], i = vars[1],
//     j = vars[2], each operand then read with b as its first subscript or without it;
//   - the contraction is the rhs's only Reduce, a Sum over k whose bounds use neither i nor j;
//   - its body is a product of two reads (either order) of tensors without a boundary rule,
//     each subscripted by bare index variables: one by {i, k} (either order) and one by {k, j}
//     (either order);
//   - the output, the product and the sum share one type, f32 or f64; each operand is of that
//     type or of a storage type whose elements compute in it (f16 or bf16 for an f32 output:
//     ScalarType::compute), whose reads widen exactly. A lowering whose GEMM takes operands of
//     the output's type only (BLAS, cuBLAS, the fused attention) checks widens(), or calls
//     match_single_contraction; mlir's block products widen the operands as they copy their
//     blocks (match_mlir_gemm, backends/mlir/strategies.h).
struct Contraction {
  const Expr* reduce = nullptr;  // the Sum node
  int k = -1;                    // the reduction variable (index into Statement::vars)
  int x = -1;                    // the tensor that carries i (rows of the output)
  int y = -1;                    // the tensor that carries j (columns of the output)
  const Expr* x_read = nullptr;  // the product's read of x
  const Expr* y_read = nullptr;  // and of y (x and y may be one tensor: x[i, k] * x[j, k])
  bool x_trans = false;          // x is read x[k, i] rather than x[i, k]
  bool y_trans = false;          // y is read y[j, k] rather than y[k, j]
  bool epilogue = false;         // the rhs is more than the sum
  DType type = DType::F32;  // of the output, the products and the sum
  // The operands' tensor types: `type`, or a storage type that widens to it (f16, bf16).
  DType x_type = DType::F32, y_type = DType::F32;
  // True when an operand is of a storage type: the GEMM widens its elements to `type`.
  bool widens() const { return x_type != type || y_type != type; }
  // A batch of products c[b, i, j] (output rank 3, b its first index): each operand is read with
  // b first (x[b, i, k], the batch's own matrix) or without it (the same matrix for every b).
  bool batched = false;
  bool x_batched = false, y_batched = false;
  // The dimension of the output that carries i, and of each operand that carries its first
  // matrix index: 1 after a batch index, else 0.
  int out_row_dim() const { return batched ? 1 : 0; }
  int x_row_dim() const { return x_batched ? 1 : 0; }
  int y_row_dim() const { return y_batched ? 1 : 0; }
};
std::optional<Contraction> match_contraction(const Spec& spec, const Statement& st);
// match_contraction without batches and without operands to widen: for a lowering whose GEMM
// takes one product of one element type (cuBLAS's plain GEMM).
std::optional<Contraction> match_single_contraction(const Spec& spec, const Statement& st);

// A contraction's operands as a GEMM call takes them (BLAS, cuBLAS, the blocked GEMM): each
// operand's step along each of its two indices, in elements, is 1 or the operand's row length
// (the extent of its dimension 1). A sum whose range starts at k0 != 0 is the GEMM of the
// operands' base pointers moved k0 steps along k, over end - k0 terms. The one home of that
// layout; the printers spell it.
enum class GemmStep { One, Row };
struct GemmLayout {
  GemmStep x_i = GemmStep::Row, x_k = GemmStep::One;  // x[i, k], or x[k, i] when x_trans
  GemmStep y_k = GemmStep::Row, y_j = GemmStep::One;  // y[k, j], or y[j, k] when y_trans
  const Expr* k0 = nullptr;                           // the sum's first k; null when it is 0
  const Expr* k_end = nullptr;                        // the end of the sum's range
};
GemmLayout gemm_layout(const Statement& st, const Contraction& m);

// A product of a weight matrix and gathered columns: a convolution as one GEMM per batch element
// after an im2col gather. The statement is exactly nested sums,
//   y[B..., M..., N...] = sum(k1 in 0..E1: ... sum(kr in 0..Er: w[M..., k1, ..., kr] * g)),
// the two factors in either order, where
// - w (the weights) is read with bare, distinct index variables: output indices M (at least
//   one), then every reduction variable in nesting order, each ranging over exactly 0..its
//   dimension of w, so w is a row-major M x K matrix (K = E1 * ... * Er);
// - g (the gathered term) is any expression without reductions that uses no M index;
// - the output's indices are B (batch: not in w), then M in w's order, then N (not in w), so
//   each batch element's outputs are a row-major M x N matrix (N = the product of the N extents,
//   1 when there is none).
// The column matrix is g at every (k1..kr, N...): K x N. Types f32 and f64, w is neither the
// output nor has a boundary rule, and g does not read the output.
// A grouped GEMM (a grouped convolution, `x[n, (o / COG) * CIG + c, ...]`): g may use the first
// M index m0 as the dividend of one quotient `m0 / q` (q a positive literal or a size; the same
// quotient wherever it appears, and m0 nowhere else). The rows of w and of the outputs with
// m0 / q = gi are then group gi's: q times the other M extents of them, contiguous, and g at
// m0 / q = gi its columns, one GEMM per group.
struct GatheredGemm {
  const Expr* outer = nullptr;     // the outermost sum (the rhs)
  const Expr* gathered = nullptr;  // g
  int w = -1;                      // the weights tensor
  std::vector<int> batch, m, n;    // output indices (index into Statement::vars), in order
  std::vector<int> k;              // reduction variables, outermost first
  DType type = DType::F32;
  // The quotient m0 / q of a grouped GEMM (a Binary Div, or its legalised div_trunc call), the
  // first of its uses in g; null when g uses no M index.
  const Expr* group = nullptr;
  const Expr* group_size = nullptr;  // its q
};
std::optional<GatheredGemm> match_gathered_gemm(const Spec& spec, const Statement& st);

// Attention without a mask of its own, as five consecutive statements (FlashAttention's input):
//   s[B, i, j] = f(sum(d in 0..D: q[B, i, d] * k[B, j, d]))   the scores: a contraction
//   m[B, i]    = max(j in 0..N: s[B, i, j])
//   p[B, i, j] = exp(s[B, i, j] - m[B, i])
//   l[B, i]    = sum(j in 0..N: p[B, i, j])
//   y[B, i, e] = sum(j in 0..N: p[B, i, j] * v[B, j, e]) / l[B, i]   a contraction of p
// where B is one batch index or none (rank 3 or 2), the scores and the weighted sum are
// contractions (match_contraction: either operand layout, each operand read with the batch index
// or shared by the batch), and the scores' epilogue f is any elementwise expression of the sum
// and the indices (a scale, a mask read, a select on j <= i) that reads none of s, m, p, l, y.
// The softmax's three ranges are the same, 0..N. s, m, p and l are temps without a boundary
// rule, of one shape per rank (m and l the rows of s, p the shape of s), that no other
// statement reads or writes, so running the five as one pass over blocks of keys with an online
// softmax, never writing them, gives y. All of one type, f32 or f64, the operands q, k and v
// included (no f16 or bf16 operand to widen: the fused kernel packs operands of its own type).
// The statements of an attention group.
constexpr size_t kAttentionStatements = 5;
struct Attention {
  size_t first = 0;    // the scores' statement; the group is first .. first + 4
  Contraction scores;  // match_contraction of statement first (q and k: x, y)
  Contraction values;  // match_contraction of statement first + 4 (p and v: x, y)
  int s = -1, m = -1, p = -1, l = -1;
  const Expr* weight_s = nullptr;  // in exp(s - m): the read of s
  const Expr* weight_m = nullptr;  // and the read of m
  const Expr* sum_l = nullptr;     // in the weighted sum's division: the read of l
  DType type = DType::F32;
};
std::optional<Attention> match_attention(const Spec& spec, size_t first);
// True when some statement starts an attention group (match_attention).
bool has_attention(const Spec& spec);
// True when `st`, a statement of `spec`, starts an attention group (match_attention): the fit
// check of a strategy that fuses attention.
bool starts_attention(const Spec& spec, const Statement& st);

// A scalar output computed from one reduction: out = op(k in lo..hi: body(k)), optionally inside
// an elementwise epilogue (e.g. `sqrt(sum(...))`). The body uses no other reduction; the bounds
// use sizes only. Types f32, f64 or i32.
struct ScalarReduction {
  const Expr* reduce = nullptr;
  int k = -1;
  ReduceOp op = ReduceOp::Sum;
  bool epilogue = false;
  DType type = DType::F32;
};
std::optional<ScalarReduction> match_scalar_reduction(const Spec& spec, const Statement& st);

// A prefix scan: out[i] = op(k in 0..i + 1: body(k)) (inclusive) or op(k in 0..i: body(k))
// (exclusive), where the body uses neither i nor another reduction. The rhs is exactly the
// reduction. Types f32, f64 or i32.
struct Scan {
  const Expr* reduce = nullptr;
  int k = -1;
  ReduceOp op = ReduceOp::Sum;
  bool inclusive = true;
  DType type = DType::F32;
};
std::optional<Scan> match_scan(const Spec& spec, const Statement& st);

// A search written as a reduction: min(k in lo..hi: select(p, k, d)), k the reduction's own
// variable (as an i64 or not converted), d not using k and at least hi - 1 at every point (its
// affine difference with hi - 1 a constant >= 0), no reduction inside. Its value is the least k
// where p holds, d where p holds for no k of a non-empty range, the identity on an empty one; a
// printer may find it by scanning k upwards and stopping at the first k where p holds. The
// arg-reductions' second statements (check/arg_reductions.h) have this form.
struct FirstIndex {
  const Expr* reduce = nullptr;
  const Expr* cond = nullptr;   // p
  const Expr* found = nullptr;  // the select's first arm: k's value
  const Expr* index = nullptr;  // the IndexVar k inside `found` (found itself when unconverted)
  const Expr* none = nullptr;   // the select's second arm: d
};
std::optional<FirstIndex> match_first_index(const Statement& st, const Expr& red);

// The statement that finishes a reduction computed elsewhere (by a library call that wrote the
// reduction's value into the output): `out[vars] = rhs` with `reduce` replaced by a read of
// `out[vars]`. Index variables are kept (the reduction variable becomes unused). For a statement
// whose rhs is exactly `reduce` the result is the identity `out[...] = out[...]`.
Statement epilogue_statement(const Spec& spec, const Statement& st, const Expr* reduce);

// Where the decision passes (streaming, vectorize, parallelize) keep their choice for `st`: one of
// spec.stmts (index k, epilogue false), or the epilogue of the contraction spec.stmts[k]
// (epilogue_statement, which keeps its loc and output; epilogue true). SB_ASSERTs it is either.
struct StmtSlot {
  size_t index = 0;
  bool epilogue = false;
};
StmtSlot stmt_slot(const Spec& spec, const Statement& st);

// A decision pass's choices: `choose(statement)` for every statement of `spec` into `own`, and for
// the epilogue of every contraction that has one into `epilogue` (a default Choice elsewhere).
template <typename Choice, typename Choose>
void choose_per_statement(const Spec& spec, Choose choose, std::vector<Choice>& own,
                          std::vector<Choice>& epilogue) {
  own.clear();
  epilogue.clear();
  for (const Statement& st : spec.stmts) {
    own.push_back(choose(st));
    const std::optional<Contraction> m = match_contraction(spec, st);
    epilogue.push_back(m && m->epilogue ? choose(epilogue_statement(spec, st, m->reduce))
                                        : Choice{});
  }
}

// The choice of `st` (stmt_slot) among those that choose_per_statement filled.
template <typename Choice>
const Choice& choice_of(const Spec& spec, const Statement& st, const std::vector<Choice>& own,
                        const std::vector<Choice>& epilogue) {
  const StmtSlot slot = stmt_slot(spec, st);
  return slot.epilogue ? epilogue.at(slot.index) : own.at(slot.index);
}

// One line describing the shapes a strategy accepts, for error messages, e.g.
// "c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])".
extern const char* const kContractionShape;         // a single product
extern const char* const kBatchedContractionShape;  // a single product or a batch
extern const char* const kScalarReductionShape;
extern const char* const kScanShape;
extern const char* const kGatheredGemmShape;
extern const char* const kAttentionShape;

}  // namespace sb
