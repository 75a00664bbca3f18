#include "lower/patterns.h"

#include <set>
#include <vector>

#include "ir/affine.h"
#include "ir/visitor.h"

namespace sb {

const char* const kContractionShape =
    "c[i, j] = sum(k in 0..K: a[i, k] * b[k, j]), operands in either order or transposed, "
    "optionally inside an elementwise term such as `+ bias[j]`";
const char* const kBatchedContractionShape =
    "c[i, j] = sum(k in 0..K: a[i, k] * b[k, j]), operands in either order or transposed, "
    "optionally inside an elementwise term such as `+ bias[j]`; or a batch of them, c[b, i, j], "
    "each operand read with b first (a[b, i, k]) or without it (a[i, k])";
const char* const kScalarReductionShape =
    "d = sum|prod|max|min(k in 0..N: <expression of k>), optionally inside an elementwise term "
    "such as `sqrt(...)`";
const char* const kScanShape =
    "y[i] = sum|prod|max|min(k in 0..i + 1: <expression of k>) (inclusive) or (k in 0..i: ...) "
    "(exclusive)";

const char* const kGatheredGemmShape =
    "y[B..., M..., N...] = sum(k1 in 0..E1: ... sum(kr in 0..Er: w[M..., k1, ..., kr] * g)), w "
    "read with bare indices (each k over all of its dimension of w) and g any expression of the "
    "other indices (and of the first M index only as one quotient o / q: grouped) without a "
    "reduction (a convolution: y[n, o, i, j] = sum(c in 0..CI: sum(a in "
    "0..3: sum(b in 0..3: x[n, c, i + a - 1, j + b - 1] * w[o, c, a, b]))))";

const char* const kAttentionShape =
    "s[b, i, j] = f(sum(d in 0..D: q[b, i, d] * k[b, j, d])); m[b, i] = max(j in 0..N: s[b, i, "
    "j]); p[b, i, j] = exp(s[b, i, j] - m[b, i]); l[b, i] = sum(j in 0..N: p[b, i, j]); y[b, i, "
    "e] = sum(j in 0..N: p[b, i, j] * v[b, j, e]) / l[b, i], five consecutive statements (b "
    "optional) whose s, m, p and l are temps no other statement uses";

namespace {

bool is_var(const Expr& e, int ref) {
  return e.kind == ExprKind::IndexVar && e.ref == ref;
}

bool is_int(const Expr& e, int64_t v) {
  return e.kind == ExprKind::IntLit && e.ival == v;
}

// Scalar reductions and scans take any tensor type (every backend prints their identities and
// combining operations from the type's record).
bool scan_type(DType t) {
  return scalar(t).tensor_type && !is_storage_type(t);
}

// Clone of an expression with the node `target` replaced by a read of the statement's output.
class ReplaceReduce : public ExprMutator {
 public:
  ReplaceReduce(const Expr* target, const Statement& st, DType out_type)
      : target_(target), st_(st), out_type_(out_type) {}

  ExprPtr mutate(const Expr& e) override {
    if (&e != target_) return ExprMutator::mutate(e);
    auto r = std::make_unique<Expr>();
    r->kind = ExprKind::Read;
    r->loc = e.loc;
    r->type = out_type_;
    r->ref = st_.out;
    for (size_t d = 0; d < st_.rank(); ++d) {
      auto v = std::make_unique<Expr>();
      v->kind = ExprKind::IndexVar;
      v->loc = e.loc;
      v->type = DType::Index;
      v->ref = static_cast<int>(d);
      r->args.push_back(std::move(v));
    }
    return r;
  }

 private:
  const Expr* target_;
  const Statement& st_;
  DType out_type_;
};


void outer_reductions_rec(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind == ExprKind::Reduce) {
    out.push_back(&e);
    return;
  }
  for (const auto& a : e.args) outer_reductions_rec(*a, out);
}


// True when `e` uses an output index (ref < rank) anywhere outside the nodes in `skip`.
bool uses_outputs_outside(const Expr& e, const std::set<const Expr*>& skip, size_t rank) {
  if (skip.count(&e)) return false;
  if (e.kind == ExprKind::IndexVar && static_cast<size_t>(e.ref) < rank) return true;
  for (const auto& a : e.args)
    if (uses_outputs_outside(*a, skip, rank)) return true;
  return false;
}

bool uses_any_output(const Expr& e, size_t rank) {
  return uses_outputs_outside(e, {}, rank);
}

// "it has no reduction" / "it has 2 reductions side by side" for a statement needing one.
bool one_outer_reduction(const Statement& st, const Expr** red, std::string* why) {
  const std::vector<const Expr*> reds = outer_reductions(*st.rhs);
  if (reds.empty()) {
    *why = "it has no reduction";
    return false;
  }
  if (reds.size() > 1) {
    *why = "it has " + std::to_string(reds.size()) + " reductions side by side, not one";
    return false;
  }
  *red = reds[0];
  return true;
}

std::string rank_text(size_t r) {
  return r == 0 ? "it writes a scalar" : "it has rank " + std::to_string(r);
}

}  // namespace

std::vector<const Expr*> outer_reductions(const Expr& e) {
  std::vector<const Expr*> out;
  outer_reductions_rec(e, out);
  return out;
}

std::optional<Affine> launch_affine(const Expr& e) {
  std::optional<Affine> a = decompose(e, var_free);
  if (a && a->overflow) return std::nullopt;
  return a;
}

bool match_vectorized(const Spec& s, const Statement& st, VectorizeMatch* m, std::string* why) {
  const size_t rank = st.rank();
  if (rank == 0) {
    *why = rank_text(rank) + " (vectorized needs an elementwise statement of rank >= 1)";
    return false;
  }
  if (!reduces_of(*st.rhs).empty()) {
    *why = "it contains a reduction (vectorized needs an elementwise statement)";
    return false;
  }
  const Tensor& out = s.tensors[st.out];
  // f16 and bf16 elements (structs read as float) have no CUDA vector type here: such a
  // statement runs a thread per element, and such a read stays per lane.
  if (is_storage_type(out.type)) {
    *why = std::string("its output is ") + dtype_name(out.type) +
           " (vectorized loads and stores f32, f64, i32 and i64 elements)";
    return false;
  }
  m->contiguous.clear();
  for (const Expr* r : reads_of(*st.rhs)) {
    const Tensor& t = s.tensors[r->ref];
    if (t.shape.size() != rank || is_storage_type(t.type)) continue;
    bool same = true;
    for (size_t d = 0; d < rank && same; ++d)
      same = is_var(*r->args[d], static_cast<int>(d)) &&
             to_string(*t.shape[d], s, nullptr) == to_string(*out.shape[d], s, nullptr);
    if (same) m->contiguous.push_back(r);
  }
  m->row_contiguous.clear();
  if (rank < 2) return true;
  const int inner = static_cast<int>(rank) - 1;
  const std::string inner_extent = to_string(*out.shape.back(), s, nullptr);
  for (const Expr* r : reads_of(*st.rhs)) {
    const Tensor& t = s.tensors[r->ref];
    if (std::find(m->contiguous.begin(), m->contiguous.end(), r) != m->contiguous.end() ||
        is_storage_type(t.type) || t.boundary != Boundary::None || r->args.empty() || !is_var(*r->args.back(), inner) ||
        to_string(*t.shape.back(), s, nullptr) != inner_extent)
      continue;
    bool elsewhere = false;
    for (size_t d = 0; d + 1 < r->args.size(); ++d)
      elsewhere = elsewhere || depends_on(*r->args[d], inner);
    if (!elsewhere) m->row_contiguous.push_back(r);
  }
  return true;
}

bool match_scalar_reduce(const Spec& s, const Statement& st, bool atomic, ReduceMatch* m,
                         std::string* why) {
  if (st.rank() != 0) {
    *why = rank_text(st.rank()) + ", not a scalar output";
    return false;
  }
  if (!one_outer_reduction(st, &m->red, why)) return false;
  if (atomic) {
    const DType t = scalar(m->red->type).printed_as;  // literals as f64, Unknown as index
    const DType o = s.tensors[st.out].type;
    if (t != DType::F32 && t != DType::F64 && t != DType::I32) {
      *why = std::string("its reduction has type ") + dtype_name(t) +
             " (atomic_reduce needs f32, f64 or i32)";
      return false;
    }
    if (t != o) {
      *why = std::string("its reduction has type ") + dtype_name(t) + " but the output has type " +
             dtype_name(o) + " (atomic_reduce accumulates in the output)";
      return false;
    }
  }
  return true;
}

bool match_row_reduce(const Spec& s, const Statement& st, ReduceMatch* m, std::string* why) {
  (void)s;
  if (st.rank() == 0) {
    *why = rank_text(0) +
           " (a reduction to a scalar takes block_reduce, warp_reduce or "
           "atomic_reduce)";
    return false;
  }
  if (!one_outer_reduction(st, &m->red, why)) return false;
  const int k = m->red->ref;
  bool any = false;
  for (const Expr* r : reads_of(*m->red->args[0])) {
    for (size_t d = 0; d < r->args.size(); ++d) {
      if (!depends_on(*r->args[d], k)) continue;
      const bool last = d + 1 == r->args.size();
      const std::optional<Affine> a = last ? launch_affine(*r->args[d]) : std::nullopt;
      if (!a || a->var(k) != 1) {
        *why = "its reduction variable '" + st.vars[k].name + "' is not contiguous in the read '" +
               to_string(*r, s, &st) + "' (it must appear only in the last subscript, as +" +
               st.vars[k].name + ")";
        return false;
      }
      any = true;
    }
  }
  if (!any) {
    *why = "no read in its reduction is subscripted by the reduction variable '" + st.vars[k].name +
           "'";
    return false;
  }
  return true;
}

namespace {

// match_matmul's rule with the output's indices (i, j) at vars base and base + 1: base 0 for a
// rank-2 product, 1 for a batched one c[b, i, j], whose operands are each read either with b
// first (a[b, i, k]) or without it (a[i, k], the same matrix for every b).
bool match_product(const Spec& s, const Statement& st, int base, MatmulMatch* m, std::string* why) {
  const size_t rank = st.rank();
  if (!one_outer_reduction(st, &m->red, why)) return false;
  const Expr& red = *m->red;
  const int k = red.ref;
  const IndexVar& kv = st.vars[k];
  if (uses_any_output(*kv.lo, rank) || uses_any_output(*kv.hi, rank)) {
    *why = "the range of '" + kv.name + "' depends on an output index";
    return false;
  }
  const Expr& body = *red.args[0];
  if (!reduces_of(body).empty()) {
    *why = "its reduction has another reduction inside";
    return false;
  }
  const std::vector<const Expr*> rs = reads_of(body);
  m->a = m->b = nullptr;
  m->a_batched = m->b_batched = false;
  const int i = base, j = base + 1;
  for (const Expr* r : rs) {
    // The subscripts after the batch index, when the read has it.
    size_t first = 0;
    if (base == 1 && r->args.size() == 3 && is_var(*r->args[0], 0))
      first = 1;
    else if (r->args.size() != 2)
      continue;
    // Either operand may be stored transposed: a[i, k] or a[k, i], b[k, j] or b[j, k].
    const Expr& s0 = *r->args[first];
    const Expr& s1 = *r->args[first + 1];
    if (!m->a && ((is_var(s0, i) && is_var(s1, k)) || (is_var(s0, k) && is_var(s1, i)))) {
      m->a = r;
      m->a_k_inner = is_var(s1, k);
      m->a_batched = first == 1;
    } else if (!m->b && ((is_var(s0, k) && is_var(s1, j)) || (is_var(s0, j) && is_var(s1, k)))) {
      m->b = r;
      m->b_k_inner = is_var(s1, k);
      m->b_batched = first == 1;
    }
  }
  const std::string bt = base == 1 ? st.vars[0].name + ", " : "";
  const std::string& iv = st.vars[i].name;
  const std::string& jv = st.vars[j].name;
  if (!m->a || !m->b || rs.size() != 2) {
    *why = "its reduction over '" + kv.name + "' does not read exactly a[" + bt + iv + ", " +
           kv.name + "] and b[" + bt + kv.name + ", " + jv + "] (or their transposes; found '" +
           to_string(body, s, &st) + "')";
    return false;
  }
  if (uses_outputs_outside(body, {m->a, m->b}, st.vars.size())) {
    *why = "its reduction body uses an index outside the reads a[" + bt + iv + ", " + kv.name +
           "] and b[" + bt + kv.name + ", " + jv + "]";
    return false;
  }
  return true;
}

}  // namespace

bool match_matmul(const Spec& s, const Statement& st, MatmulMatch* m, std::string* why) {
  if (st.rank() != 2) {
    *why = rank_text(st.rank()) + ", not 2";
    return false;
  }
  return match_product(s, st, 0, m, why);
}

bool match_batched_matmul(const Spec& s, const Statement& st, MatmulMatch* m, std::string* why) {
  m->batched = st.rank() == 3;
  if (st.rank() != 2 && !m->batched) {
    *why = rank_text(st.rank()) + ", not 2 or 3 (a batch of products)";
    return false;
  }
  return match_product(s, st, m->batched ? 1 : 0, m, why);
}

bool match_transpose(const Spec& s, const Statement& st, TransposeMatch* m, std::string* why) {
  (void)s;
  if (st.rank() != 2) {
    *why = rank_text(st.rank()) + ", not 2";
    return false;
  }
  if (!reduces_of(*st.rhs).empty()) {
    *why = "it contains a reduction (tiled_transpose needs an elementwise statement)";
    return false;
  }
  m->reads.clear();
  for (const Expr* r : reads_of(*st.rhs))
    if (r->args.size() == 2 && is_var(*r->args[0], 1) && is_var(*r->args[1], 0))
      m->reads.push_back(r);
  if (m->reads.empty()) {
    *why = "it reads no tensor as x[" + st.vars[1].name + ", " + st.vars[0].name +
           "], with the output's indices swapped";
    return false;
  }
  if (m->reads.size() > 4) {
    *why = "it has " + std::to_string(m->reads.size()) + " transposed reads (at most 4)";
    return false;
  }
  return true;
}

bool match_stencil(const Spec& s, const Statement& st, StencilMatch* m, std::string* why) {
  const size_t rank = st.rank();
  if (rank < 1 || rank > 3) {
    *why = rank_text(rank) + ", not 1, 2 or 3";
    return false;
  }
  // Reduction variables whose range uses no index variable: their offsets have a fixed range.
  std::set<int> fixed_range;
  for (size_t v = rank; v < st.vars.size(); ++v)
    if (sb::fixed_range(st, static_cast<int>(v))) fixed_range.insert(static_cast<int>(v));

  const std::vector<const Expr*> rs = reads_of(*st.rhs);
  std::string first_reason;
  for (size_t t = 0; t < s.tensors.size(); ++t) {
    if (s.tensors[t].shape.size() != rank) continue;
    StencilMatch cand;
    cand.tensor = static_cast<int>(t);
    bool ok = true, shifted = false, read = false;
    std::string reason;
    for (const Expr* r : rs) {
      if (r->ref != static_cast<int>(t)) continue;
      read = true;
      std::vector<Affine> offs;
      for (size_t d = 0; d < rank && ok; ++d) {
        const std::optional<Affine> sub = launch_affine(*r->args[d]);
        std::optional<Affine> a = sub ? offset_from(*sub, static_cast<int>(d)) : std::nullopt;
        if (!a) {
          ok = false;
          reason = "subscript " + std::to_string(d) + " of '" + to_string(*r, s, &st) +
                   "' is not '" + st.vars[d].name + "' plus an offset";
          break;
        }
        for (const auto& [v, c] : a->vars) {
          if (!fixed_range.count(v)) {
            ok = false;
            reason = "the offset of '" + to_string(*r, s, &st) + "' uses '" + st.vars[v].name +
                     "', which is not a reduction variable with a fixed range";
            break;
          }
        }
        if (!a->is_constant() || a->constant != 0) shifted = true;
        offs.push_back(std::move(*a));
      }
      if (!ok) break;
      cand.reads.push_back(r);
      cand.offsets.push_back(std::move(offs));
    }
    if (!read) continue;
    if (ok && shifted) {
      *m = std::move(cand);
      return true;
    }
    if (first_reason.empty())
      first_reason =
          ok ? "'" + s.tensors[t].name + "' is read only at the output's own index" : reason;
  }
  *why = first_reason.empty()
             ? "it reads no tensor of rank " + std::to_string(rank) + " at offsets of its indices"
             : first_reason;
  return false;
}

bool match_scan(const Spec& s, const Statement& st, ScanMatch* m, std::string* why) {
  if (st.rank() != 1) {
    *why = rank_text(st.rank()) + ", not 1";
    return false;
  }
  if (!one_outer_reduction(st, &m->red, why)) return false;
  const IndexVar& v = st.vars[m->red->ref];
  std::optional<Affine> hi = launch_affine(*v.hi);
  if (!var_free(*v.lo) || !hi || hi->vars.size() != 1 || hi->var(0) != 1) {
    *why = "its reduction range '" + to_string(*v.lo, s, &st) + ".." + to_string(*v.hi, s, &st) +
           "' is not lo.." + st.vars[0].name + " + c with lo and c free of indices";
    return false;
  }
  if (depends_on(*m->red->args[0], 0, &st)) {
    *why = "its reduction body uses the output index '" + st.vars[0].name + "'";
    return false;
  }
  m->hi = std::move(*hi);
  return true;
}

GemmLayout gemm_layout(const Statement& st, const Contraction& m) {
  const IndexVar& kv = st.vars[m.k];
  SB_ASSERT(kv.lo && kv.hi, "a contraction's sum without a range");
  GemmLayout o;
  if (m.x_trans) std::swap(o.x_i, o.x_k);
  if (m.y_trans) std::swap(o.y_k, o.y_j);
  if (!(kv.lo->kind == ExprKind::IntLit && kv.lo->ival == 0)) o.k0 = kv.lo.get();
  o.k_end = kv.hi.get();
  return o;
}

std::optional<Contraction> match_contraction(const Spec& spec, const Statement& st) {
  MatmulMatch m;
  std::string why;
  // A product c[i, j], or a batch of them c[b, i, j].
  const bool batched = st.rank() == 3;
  if (!st.rhs || st.out < 0 || (st.rank() != 2 && !batched) ||
      !match_product(spec, st, batched ? 1 : 0, &m, &why))
    return std::nullopt;
  const DType type = spec.tensors[st.out].type;
  // The types with a GEMM: BLAS's s and d (the blocked GEMMs of cpu and mojo are written for the
  // same two).
  if (!scalar(type).blas_prefix) return std::nullopt;
  const Expr& r = *m.red;
  if (r.rop != ReduceOp::Sum || r.type != type) return std::nullopt;
  // The body is exactly the product of the two reads, which are plain tensors other than the
  // output, of the output's type or of a storage type whose reads widen to it (bf16 for f32).
  const Expr& body = *r.args[0];
  if (body.kind != ExprKind::Binary || body.bop != BinOp::Mul || body.type != type)
    return std::nullopt;
  const bool ab = body.args[0].get() == m.a && body.args[1].get() == m.b;
  const bool ba = body.args[0].get() == m.b && body.args[1].get() == m.a;
  if (!ab && !ba) return std::nullopt;
  for (const Expr* op : {m.a, m.b}) {
    const Tensor& t = spec.tensors[op->ref];
    if (t.boundary != Boundary::None || compute_type(t.type) != type || op->ref == st.out)
      return std::nullopt;
  }
  Contraction c;
  c.reduce = m.red;
  c.k = r.ref;
  c.type = type;
  c.x_type = spec.tensors[m.a->ref].type;
  c.y_type = spec.tensors[m.b->ref].type;
  c.epilogue = st.rhs.get() != m.red;
  c.x = m.a->ref;
  c.y = m.b->ref;
  c.x_read = m.a;
  c.y_read = m.b;
  c.batched = batched;
  c.x_batched = m.a_batched;
  c.y_batched = m.b_batched;
  c.x_trans = !m.a_k_inner;  // x[k, i]
  c.y_trans = m.b_k_inner;   // y[j, k]: j first
  return c;
}

std::optional<Contraction> match_single_contraction(const Spec& spec, const Statement& st) {
  std::optional<Contraction> c = match_contraction(spec, st);
  if (c && (c->batched || c->widens())) return std::nullopt;
  return c;
}

std::optional<ScalarReduction> match_scalar_reduction(const Spec& spec, const Statement& st) {
  ReduceMatch m;
  std::string why;
  if (!st.rhs || st.out < 0 || !match_scalar_reduce(spec, st, /*atomic=*/false, &m, &why))
    return std::nullopt;
  const DType type = spec.tensors[st.out].type;
  if (!scan_type(type)) return std::nullopt;
  const Expr& r = *m.red;
  // One reduction in all (none nested in its body), of the output's type.
  if (reduces_of(*st.rhs).size() != 1 || r.type != type) return std::nullopt;
  ScalarReduction s;
  s.reduce = &r;
  s.k = r.ref;
  s.op = r.rop;
  s.epilogue = st.rhs.get() != &r;
  s.type = type;
  return s;
}

std::optional<Scan> match_scan(const Spec& spec, const Statement& st) {
  ScanMatch m;
  std::string why;
  if (!st.rhs || st.out < 0 || !match_scan(spec, st, &m, &why)) return std::nullopt;
  const DType type = spec.tensors[st.out].type;
  if (!scan_type(type)) return std::nullopt;
  const Expr& r = *m.red;
  // The rhs is exactly the reduction, of the output's type, with none nested in its body.
  if (st.rhs.get() != &r || r.type != type || reduces_of(r).size() != 1) return std::nullopt;
  // From 0 to i (exclusive) or i + 1 (inclusive).
  const IndexVar& kv = st.vars[r.ref];
  if (!is_int(*kv.lo, 0) || !m.hi.sizes.empty() || !m.hi.atoms.empty() ||
      (m.hi.constant != 0 && m.hi.constant != 1))
    return std::nullopt;
  Scan s;
  s.reduce = &r;
  s.k = r.ref;
  s.op = r.rop;
  s.type = type;
  s.inclusive = m.hi.constant == 1;
  return s;
}

std::optional<FirstIndex> match_first_index(const Statement& st, const Expr& red) {
  if (red.kind != ExprKind::Reduce || red.rop != ReduceOp::Min || !is_integer(red.type))
    return std::nullopt;
  const Expr& body = *red.args[0];
  if (body.kind != ExprKind::Call || body.fn != Fn::Select || body.args.size() != 3 ||
      !reduces_of(body).empty())
    return std::nullopt;
  // An arm without its conversion to i64 (the type of index values).
  auto unconverted = [](const Expr& e) -> const Expr& {
    return e.kind == ExprKind::Cast && e.cast_to == DType::I64 ? *e.args[0] : e;
  };
  const Expr& found = unconverted(*body.args[1]);
  const Expr& none = unconverted(*body.args[2]);
  if (found.kind != ExprKind::IndexVar || found.ref != red.ref || depends_on(none, red.ref))
    return std::nullopt;
  const IndexVar& kv = st.vars[red.ref];
  if (!kv.lo || !kv.hi) return std::nullopt;
  const std::optional<Affine> d = decompose(none, var_free), hi = decompose(*kv.hi, var_free);
  if (!d || !hi || d->overflow || hi->overflow) return std::nullopt;
  const Affine gap = *d - *hi;  // d - hi + 1 >= 0
  if (gap.overflow || !gap.is_constant() || gap.constant + 1 < 0) return std::nullopt;
  return FirstIndex{&red, body.args[0].get(), body.args[1].get(), &found, body.args[2].get()};
}

Statement epilogue_statement(const Spec& spec, const Statement& st, const Expr* reduce) {
  Statement e;
  e.loc = st.loc;
  e.target = st.target;
  e.out = st.out;
  for (const IndexVar& v : st.vars) {
    IndexVar c;
    c.name = v.name;
    c.loc = v.loc;
    c.lo = v.lo ? clone(*v.lo) : nullptr;
    c.hi = v.hi ? clone(*v.hi) : nullptr;
    c.is_reduction = v.is_reduction;
    e.vars.push_back(std::move(c));
  }
  e.rhs = ReplaceReduce(reduce, st, spec.tensors[st.out].type).mutate(*st.rhs);
  return e;
}

StmtSlot stmt_slot(const Spec& spec, const Statement& st) {
  for (size_t k = 0; k < spec.stmts.size(); ++k)
    if (&spec.stmts[k] == &st) return {k, false};
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    const Statement& s = spec.stmts[k];
    if (s.out == st.out && s.loc.line == st.loc.line && s.loc.col == st.loc.col &&
        s.loc.file == st.loc.file && match_contraction(spec, s))
      return {k, true};
  }
  SB_ASSERT(false, "statement of " + spec.name + " that is neither one of its statements nor an "
                   "epilogue: " + st.target);
  return {};
}

namespace {

// Whether every use of index variable `v` in `e` is as the dividend of a quotient `v / q` (q a
// positive literal or a size), all of them the same quotient; the first in `*div`. A quotient is
// a Binary Div or, in a lowered spec, the div_trunc call legalize_int_div makes of it.
bool only_quotient_uses(const Expr& e, int v, const Expr** div) {
  const bool quotient = (e.kind == ExprKind::Binary && e.bop == BinOp::Div) ||
                        (e.kind == ExprKind::Call && e.fn == Fn::DivTrunc);
  if (quotient && e.args.size() == 2 && is_var(*e.args[0], v)) {
    const Expr& q = *e.args[1];
    if (!((q.kind == ExprKind::IntLit && q.ival > 0) || q.kind == ExprKind::SizeRef))
      return false;
    if (*div && !same_expr(**div, e)) return false;
    if (!*div) *div = &e;
    return true;
  }
  if (e.kind == ExprKind::IndexVar && e.ref == v) return false;
  for (const auto& a : e.args)
    if (!only_quotient_uses(*a, v, div)) return false;
  return true;
}

}  // namespace

std::optional<GatheredGemm> match_gathered_gemm(const Spec& spec, const Statement& st) {
  if (!st.rhs || st.out < 0 || st.rank() == 0) return std::nullopt;
  const DType type = spec.tensors[st.out].type;
  if (!scalar(type).blas_prefix) return std::nullopt;
  GatheredGemm g;
  g.outer = st.rhs.get();
  g.type = type;
  // The nest of sums, each the whole body of the one outside it.
  const Expr* e = st.rhs.get();
  while (e->kind == ExprKind::Reduce) {
    if (e->rop != ReduceOp::Sum || e->type != type) return std::nullopt;
    g.k.push_back(e->ref);
    e = e->args[0].get();
  }
  if (g.k.empty() || e->kind != ExprKind::Binary || e->bop != BinOp::Mul || e->type != type)
    return std::nullopt;
  // The factor read with bare index variables, ending in the reduction variables.
  const size_t rank = st.rank();
  auto weights = [&](const Expr& f) -> std::optional<std::vector<int>> {
    if (f.kind != ExprKind::Read || f.ref == st.out) return std::nullopt;
    const Tensor& t = spec.tensors[f.ref];
    if (t.boundary != Boundary::None || t.type != type || f.args.size() <= g.k.size())
      return std::nullopt;
    std::vector<int> m;
    std::set<int> seen;
    for (size_t d = 0; d < f.args.size(); ++d) {
      const Expr& sub = *f.args[d];
      if (sub.kind != ExprKind::IndexVar || !seen.insert(sub.ref).second) return std::nullopt;
      const size_t kd = d + g.k.size();
      if (kd < f.args.size()) {
        // An output index, over the same extent in w as in the output (w's M dimensions are
        // then the outputs' row-major rows).
        if (static_cast<size_t>(sub.ref) >= rank ||
            !same_expr(*t.shape[d], *spec.tensors[st.out].shape[sub.ref]))
          return std::nullopt;
        m.push_back(sub.ref);
        continue;
      }
      // Reduction variable number d - (rank of w - r), over all of this dimension.
      const size_t j = d - (f.args.size() - g.k.size());
      const IndexVar& v = st.vars[sub.ref];
      if (sub.ref != g.k[j] || !is_int(*v.lo, 0) || !same_expr(*v.hi, *t.shape[d]))
        return std::nullopt;
    }
    return m;
  };
  for (int side = 0; side < 2 && g.w < 0; ++side) {
    const Expr& f = *e->args[side];
    const Expr& other = *e->args[1 - side];
    std::optional<std::vector<int>> m = weights(f);
    if (!m || !reduces_of(other).empty()) continue;
    bool ok = true;
    for (size_t i = 1; i < m->size(); ++i) ok = ok && !depends_on(other, (*m)[i]);
    // The first M index only through one quotient (a grouped GEMM), or not at all.
    const Expr* group = nullptr;
    ok = ok && !m->empty() && only_quotient_uses(other, m->front(), &group);
    for (const Expr* r : reads_of(other)) ok = ok && r->ref != st.out;
    if (!ok) continue;
    g.w = f.ref;
    g.m = *m;
    g.gathered = &other;
    g.group = group;
    g.group_size = group ? group->args[1].get() : nullptr;
  }
  if (g.w < 0) return std::nullopt;
  // The output's indices: batch, then M in w's order, then N.
  size_t d = 0;
  const std::set<int> in_w(g.m.begin(), g.m.end());
  while (d < rank && !in_w.count(static_cast<int>(d))) g.batch.push_back(static_cast<int>(d++));
  for (int v : g.m)
    if (d >= rank || v != static_cast<int>(d++)) return std::nullopt;
  for (; d < rank; ++d) {
    if (in_w.count(static_cast<int>(d))) return std::nullopt;
    g.n.push_back(static_cast<int>(d));
  }
  return g;
}

namespace {

// A read of tensor `t` subscripted by exactly the index variables `vars`, in order.
bool reads_bare(const Expr& e, int t, const std::vector<int>& vars) {
  if (e.kind != ExprKind::Read || e.ref != t || e.args.size() != vars.size()) return false;
  for (size_t d = 0; d < vars.size(); ++d)
    if (!is_var(*e.args[d], vars[d])) return false;
  return true;
}

// 0, 1, ..., n - 1 (the output indices of a statement of rank n), then `extra` when it is >= 0.
std::vector<int> first_vars(size_t n, int extra = -1) {
  std::vector<int> v;
  for (size_t d = 0; d < n; ++d) v.push_back(static_cast<int>(d));
  if (extra >= 0) v.push_back(extra);
  return v;
}

// The reduction `r` of `st` runs over 0..hi with hi a function of sizes only; returns hi.
const Expr* range_from_zero(const Statement& st, const Expr& r) {
  const IndexVar& v = st.vars[r.ref];
  if (!v.lo || !v.hi || !is_int(*v.lo, 0) || !var_free(*v.hi)) return nullptr;
  return v.hi.get();
}

// The first n extents of `t` are those of `shape`.
bool same_prefix(const Tensor& t, const std::vector<ExprPtr>& shape, size_t n) {
  if (t.shape.size() < n || shape.size() < n) return false;
  for (size_t d = 0; d < n; ++d)
    if (!same_expr(*t.shape[d], *shape[d])) return false;
  return true;
}

}  // namespace

std::optional<Attention> match_attention(const Spec& spec, size_t first) {
  if (first + kAttentionStatements > spec.stmts.size()) return std::nullopt;
  const Statement& st_s = spec.stmts[first];
  const Statement& st_m = spec.stmts[first + 1];
  const Statement& st_p = spec.stmts[first + 2];
  const Statement& st_l = spec.stmts[first + 3];
  const Statement& st_y = spec.stmts[first + kAttentionStatements - 1];
  for (const Statement* st : {&st_s, &st_m, &st_p, &st_l, &st_y})
    if (!st->rhs || st->out < 0) return std::nullopt;
  Attention a;
  a.first = first;
  const std::optional<Contraction> scores = match_contraction(spec, st_s);
  if (!scores || scores->widens()) return std::nullopt;
  a.scores = *scores;
  a.type = scores->type;
  const size_t rank = st_s.rank();  // 2, or 3 with a batch
  a.s = st_s.out;
  a.m = st_m.out;
  a.p = st_p.out;
  a.l = st_l.out;
  const int y = st_y.out;
  const std::set<int> temps{a.s, a.m, a.p, a.l};
  if (temps.size() != 4 || temps.count(y)) return std::nullopt;
  const std::vector<ExprPtr>& shape = spec.tensors[a.s].shape;
  for (int t : temps) {
    const Tensor& tt = spec.tensors[t];
    if (tt.role != Role::Temp || tt.boundary != Boundary::None || tt.type != a.type)
      return std::nullopt;
  }
  // m and l: the rows of s; p: the shape of s; y: rows of s.
  auto rows_of_s = [&](int t, size_t n) {
    return spec.tensors[t].shape.size() == n && same_prefix(spec.tensors[t], shape, rank - 1);
  };
  if (!rows_of_s(a.m, rank - 1) || !rows_of_s(a.l, rank - 1) || !rows_of_s(a.p, rank) ||
      !same_expr(*spec.tensors[a.p].shape[rank - 1], *shape[rank - 1]) || !rows_of_s(y, rank) ||
      spec.tensors[y].type != a.type)
    return std::nullopt;
  // The scores read none of the group's tensors.
  std::set<int> group = temps;
  group.insert(y);
  for (const Expr* r : reads_of(*st_s.rhs))
    if (group.count(r->ref)) return std::nullopt;
  // m = max(j in 0..N: s[B, i, j]).
  const Expr& rm = *st_m.rhs;
  if (rm.kind != ExprKind::Reduce || rm.rop != ReduceOp::Max || rm.type != a.type ||
      !reads_bare(*rm.args[0], a.s, first_vars(rank - 1, rm.ref)))
    return std::nullopt;
  const Expr* n = range_from_zero(st_m, rm);
  if (!n) return std::nullopt;
  // p = exp(s[B, i, j] - m[B, i]).
  const Expr& ep = *st_p.rhs;
  if (ep.kind != ExprKind::Call || ep.fn != Fn::Exp || ep.type != a.type || ep.args.size() != 1)
    return std::nullopt;
  const Expr& diff = *ep.args[0];
  if (diff.kind != ExprKind::Binary || diff.bop != BinOp::Sub ||
      !reads_bare(*diff.args[0], a.s, first_vars(rank)) ||
      !reads_bare(*diff.args[1], a.m, first_vars(rank - 1)))
    return std::nullopt;
  a.weight_s = diff.args[0].get();
  a.weight_m = diff.args[1].get();
  // l = sum(j in 0..N: p[B, i, j]).
  const Expr& rl = *st_l.rhs;
  if (rl.kind != ExprKind::Reduce || rl.rop != ReduceOp::Sum || rl.type != a.type ||
      !reads_bare(*rl.args[0], a.p, first_vars(rank - 1, rl.ref)))
    return std::nullopt;
  const Expr* nl = range_from_zero(st_l, rl);
  if (!nl || !same_expr(*nl, *n)) return std::nullopt;
  // y = sum(j in 0..N: p[B, i, j] * v[B, j, e]) / l[B, i].
  const std::optional<Contraction> values = match_contraction(spec, st_y);
  if (!values || values->widens() || values->x != a.p || values->x_trans ||
      values->batched != (rank == 3) ||
      (values->batched && !values->x_batched) || temps.count(values->y) || values->y == y ||
      values->type != a.type)
    return std::nullopt;
  a.values = *values;
  const Expr& div = *st_y.rhs;
  if (div.kind != ExprKind::Binary || div.bop != BinOp::Div ||
      div.args[0].get() != values->reduce || !reads_bare(*div.args[1], a.l, first_vars(rank - 1)))
    return std::nullopt;
  const Expr* ny = range_from_zero(st_y, *values->reduce);
  if (!ny || !same_expr(*ny, *n)) return std::nullopt;
  a.sum_l = div.args[1].get();
  // No statement outside the group uses the temps.
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    if (k >= first && k < first + kAttentionStatements) continue;
    const Statement& o = spec.stmts[k];
    if (temps.count(o.out)) return std::nullopt;
    if (o.rhs)
      for (const Expr* r : reads_of(*o.rhs))
        if (temps.count(r->ref)) return std::nullopt;
  }
  return a;
}

bool starts_attention(const Spec& spec, const Statement& st) {
  for (size_t k = 0; k < spec.stmts.size(); ++k)
    if (&spec.stmts[k] == &st) return match_attention(spec, k).has_value();
  return false;
}

bool has_attention(const Spec& spec) {
  for (size_t k = 0; k < spec.stmts.size(); ++k)
    if (match_attention(spec, k)) return true;
  return false;
}

}  // namespace sb
