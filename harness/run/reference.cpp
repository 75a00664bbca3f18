#include "run/reference.h"

#include "ir/intrinsics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace sb {

namespace {

using V = RefValue;

constexpr double kInf = std::numeric_limits<double>::infinity();
// Temporaries up to this many elements get dense memo arrays; larger ones a hash map.
constexpr int64_t kDenseLimit = int64_t{1} << 25;

// Per-tensor memo of Out/Temp elements, allocated on first use.
struct Memo {
  std::vector<V> dense;
  std::vector<uint8_t> done;
  std::unordered_map<int64_t, V> sparse;
};

// The index-variable values of one statement being evaluated. A statement is never re-entered
// (tensors are read only after the statement that writes them), so one frame per statement
// suffices and evaluation allocates nothing.
struct Frame {
  const Statement* st = nullptr;
  std::vector<int64_t> vars;
  bool active = false;
};

// The last evaluation of one reduction node: the values of the index variables its terms depend
// on, its range [lo, end) and its fold's state at `end`. An evaluation with the same values and
// the same lo whose range reaches at least as far continues from `end`: the terms before it are
// the same terms in the same order, so its result is bit for bit the one the whole loop gives.
// A running scan (y[i] = sum(j in 0..i + 1: x[j])) so costs O(n) terms instead of O(n^2).
struct Resume {
  bool known = false;     // `free` computed
  std::vector<int> free;  // the variables of the terms (and of nested ranges), not bound inside
  bool valid = false;
  std::vector<int64_t> values;  // of `free` at the last evaluation
  int64_t lo = 0, end = 0;
  double a = 0, b = 0, m = 0;  // float state: sum s, c, m; product p, m; max/min value, m
  bool stop = false;           // max/min: a NaN ended the fold; (a, m) is it
  uint64_t u = 0;              // integer state: sum, product or best (as bits)
};

bool is_int_like(DType t) {
  return is_integer(t) || t == DType::Bool;
}

// Wraps an exact integer result to its type (two's complement for a fixed-width integer; 0/1 for
// bool).
int64_t fit(uint64_t v, DType t) {
  const ScalarType& s = scalar(t);
  if (s.kind == ScalarKind::Bool) return v != 0;
  if (s.kind == ScalarKind::SignedInt && s.bits < 64) {
    const uint64_t mask = (uint64_t{1} << s.bits) - 1;
    const uint64_t sign = uint64_t{1} << (s.bits - 1);
    const uint64_t low = v & mask;
    return static_cast<int64_t>((low ^ sign) - sign);  // sign-extended
  }
  return static_cast<int64_t>(v);
}

// C-like truncation of a double to an integer type; NaN and out-of-range give the type's minimum.
int64_t trunc_to(double v, DType t) {
  const ScalarType& s = scalar(t);
  SB_ASSERT(is_integer(t), std::string("truncation to ") + s.name);
  // In range: [min, -min), both powers of two and so exact as doubles.
  const double lo = static_cast<double>(s.min);
  const double r = std::trunc(v);
  if (!(r >= lo && r < -lo)) return s.min;
  return static_cast<int64_t>(r);
}

V num(double v) {
  return {v, std::fabs(v)};
}

}  // namespace

std::vector<bool> tensors_read_by_statements(const Spec& spec) {
  std::vector<bool> read(spec.tensors.size(), false);
  for (const Statement& st : spec.stmts)
    for (const Expr* r : reads_of(*st.rhs))
      if (r->ref >= 0 && static_cast<size_t>(r->ref) < read.size()) read[r->ref] = true;
  return read;
}

int64_t reference_memory_bytes(const Spec& spec, const SizePoint& sizes) {
  std::vector<bool> read = tensors_read_by_statements(spec);
  int64_t bytes = 0;
  for (size_t t = 0; t < spec.tensors.size(); ++t) {
    if (spec.tensors[t].role == Role::In || !read[t]) continue;
    const int64_t n = tensor_elements(spec, static_cast<int>(t), sizes);
    // Dense: a RefValue and a done flag per element; sparse: a hash node (key, value, next
    // pointer, allocator overhead) and a bucket per element.
    bytes += n * (n <= kDenseLimit ? static_cast<int64_t>(sizeof(V) + 1) : 64);
  }
  return bytes;
}

struct Reference::Impl {
  const Spec& spec;
  SizePoint sizes;
  const HostTensors& in;
  std::vector<std::vector<int64_t>> ext;  // per tensor
  std::vector<int64_t> elems;             // per tensor
  std::vector<int> writer;                // per tensor: the statement writing it, or -1
  std::vector<Memo> memo;
  std::vector<bool> read_by_stmt;  // per tensor: some statement reads it (then it is memoised)
  std::vector<int> written_as;     // per tensor: the name its storage is written through
  std::vector<Frame> frames;       // per statement
  std::unordered_map<const Expr*, Resume> resumes;  // per reduction node evaluated

  Impl(const Spec& s, const SizePoint& z, const HostTensors& inputs)
      : spec(s), sizes(z), in(inputs) {
    const size_t nt = spec.tensors.size();
    SB_ASSERT(sizes.size() == spec.sizes.size(), "size point does not match the spec's sizes");
    SB_ASSERT(in.size() == nt, "Reference needs one host tensor per spec tensor");
    ext.resize(nt);
    elems.resize(nt);
    writer.assign(nt, -1);
    memo.resize(nt);
    for (size_t t = 0; t < nt; ++t) {
      ext[t] = tensor_extents(spec, static_cast<int>(t), sizes);
      elems[t] = 1;
      for (int64_t e : ext[t]) {
        SB_ASSERT(e >= 0, "negative extent for tensor " + spec.tensors[t].name);
        elems[t] *= e;
      }
      if (spec.tensors[t].role == Role::In) {
        SB_ASSERT(in[t].elements == elems[t] && in[t].type == spec.tensors[t].type,
                  "input buffer does not match tensor " + spec.tensors[t].name);
      }
    }
    frames.resize(spec.stmts.size());
    for (size_t i = 0; i < spec.stmts.size(); ++i) {
      const Statement& st = spec.stmts[i];
      SB_ASSERT(st.out >= 0 && static_cast<size_t>(st.out) < nt, "statement without output");
      SB_ASSERT(writer[st.out] < 0, "tensor written twice: " + spec.tensors[st.out].name);
      SB_ASSERT(st.rank() == ext[st.out].size(), "statement rank differs from its output's");
      writer[st.out] = static_cast<int>(i);
      frames[i].st = &st;
      frames[i].vars.assign(st.vars.size(), 0);
    }
    read_by_stmt = tensors_read_by_statements(spec);
    // A storage read through another name than the one written (a view of a temp or an output):
    // its reads pull the written name's elements, in the same row-major order.
    written_as.resize(nt);
    for (size_t t = 0; t < nt; ++t) {
      written_as[t] = static_cast<int>(t);
      if (writer[t] >= 0 || spec.tensors[t].role == Role::In) continue;
      for (size_t u = 0; u < nt; ++u)
        if (writer[u] >= 0 && storage_of(spec, static_cast<int>(u)) ==
                                  storage_of(spec, static_cast<int>(t)))
          written_as[t] = static_cast<int>(u);
      if (read_by_stmt[t]) read_by_stmt[written_as[t]] = true;
    }
  }

  V pull(int t, int64_t flat) {
    // A tensor no statement reads is asked for by the verifier only, each element once: a memo
    // would only cost memory (17 to ~60 bytes per element, several times the tensor itself).
    if (!read_by_stmt[t]) return compute(t, flat);
    Memo& m = memo[t];
    if (elems[t] <= kDenseLimit) {
      if (m.done.empty()) {
        m.dense.resize(elems[t]);
        m.done.assign(elems[t], 0);
      }
      if (m.done[flat]) return m.dense[flat];
      V v = compute(t, flat);
      m.dense[flat] = v;
      m.done[flat] = 1;
      return v;
    }
    auto it = m.sparse.find(flat);
    if (it != m.sparse.end()) return it->second;
    V v = compute(t, flat);
    m.sparse.emplace(flat, v);
    return v;
  }

  V compute(int t, int64_t flat) {
    const int s = writer[t];
    SB_ASSERT(s >= 0, "tensor " + spec.tensors[t].name + " is read but never written");
    Frame& f = frames[s];
    SB_ASSERT(!f.active, "cyclic dependency through tensor " + spec.tensors[t].name);
    f.active = true;
    const std::vector<int64_t>& e = ext[t];
    for (size_t d = e.size(); d-- > 0;) {
      f.vars[d] = flat % e[d];
      flat /= e[d];
    }
    V r = eval_f(*f.st->rhs, f);
    f.active = false;
    if (is_integer(spec.tensors[t].type))
      r = num(static_cast<double>(trunc_to(r.value, spec.tensors[t].type)));
    return r;
  }

  // Reads element `e.args` of tensor `e.ref`, applying its boundary rule.
  V read(const Expr& e, Frame& f) {
    const int t = e.ref;
    const Tensor& ten = spec.tensors[t];
    const std::vector<int64_t>& ex = ext[t];
    SB_ASSERT(e.args.size() == ex.size(), "wrong subscript count reading " + ten.name);
    int64_t flat = 0;
    for (size_t d = 0; d < ex.size(); ++d) {
      int64_t i = eval_i(*e.args[d], f);
      if (i < 0 || i >= ex[d]) {
        if (ten.boundary == Boundary::Zero) return {0, 0};
        SB_ASSERT(ten.boundary == Boundary::Clamp,
                  "read of " + ten.name + " outside its extent (subscript " + std::to_string(d) +
                      " = " + std::to_string(i) + ", extent " + std::to_string(ex[d]) + ")");
        i = std::clamp<int64_t>(i, 0, ex[d] - 1);
      }
      flat = flat * ex[d] + i;
    }
    if (ten.role == Role::In) return num(in[t].get(flat));
    return pull(written_as[t], flat);
  }

  void range(const Expr& e, Frame& f, int64_t* lo, int64_t* hi) {
    SB_ASSERT(e.ref >= 0 && static_cast<size_t>(e.ref) < f.vars.size(), "bad reduction var");
    const IndexVar& iv = f.st->vars[e.ref];
    SB_ASSERT(iv.lo && iv.hi, "reduction variable without bounds: " + iv.name);
    *lo = eval_i(*iv.lo, f);
    *hi = eval_i(*iv.hi, f);
  }

  // Index variables used by `x` (free, in `used`) and bound by reductions inside it (`bound`).
  static void term_vars(const Expr& x, const Statement& st, std::vector<int>& used,
                        std::vector<int>& bound) {
    if (x.kind == ExprKind::IndexVar) used.push_back(x.ref);
    if (x.kind == ExprKind::Reduce) {
      bound.push_back(x.ref);
      const IndexVar& iv = st.vars[x.ref];
      if (iv.lo) term_vars(*iv.lo, st, used, bound);
      if (iv.hi) term_vars(*iv.hi, st, used, bound);
    }
    for (const auto& a : x.args) term_vars(*a, st, used, bound);
  }

  // The resume record of reduction `e` (its free variables found on first use); resumable() says
  // whether a fold over [lo, hi) can continue from it.
  Resume& resume_of(const Expr& e, const Frame& f) {
    Resume& r = resumes[&e];
    if (!r.known) {
      std::vector<int> used, bound{e.ref};
      term_vars(*e.args[0], *f.st, used, bound);
      for (int v : used)
        if (std::find(bound.begin(), bound.end(), v) == bound.end() &&
            std::find(r.free.begin(), r.free.end(), v) == r.free.end())
          r.free.push_back(v);
      r.known = true;
    }
    return r;
  }
  static bool resumable(const Resume& r, const Frame& f, int64_t lo, int64_t hi) {
    if (!r.valid || r.lo != lo || r.end > std::max(lo, hi)) return false;
    for (size_t n = 0; n < r.free.size(); ++n)
      if (f.vars[r.free[n]] != r.values[n]) return false;
    return true;
  }
  static void remember(Resume& r, const Frame& f, int64_t lo, int64_t hi) {
    r.valid = true;
    r.lo = lo;
    r.end = std::max(lo, hi);
    r.values.resize(r.free.size());
    for (size_t n = 0; n < r.free.size(); ++n) r.values[n] = f.vars[r.free[n]];
  }

  // Floating-point (or integer, converted) value and magnitude of `e`.
  V eval_f(const Expr& e, Frame& f) {
    if (!is_float(e.type)) return num(static_cast<double>(eval_i(e, f)));
    switch (e.kind) {
      case ExprKind::FloatLit:
      case ExprKind::Const:
        return num(e.fval);
      case ExprKind::IntLit:
        return num(static_cast<double>(e.ival));
      case ExprKind::Read:
        return read(e, f);
      case ExprKind::Cast:
        return eval_f(*e.args[0], f);
      case ExprKind::Unary: {
        SB_ASSERT(e.uop == UnOp::Neg, "logical not of a floating-point value");
        V a = eval_f(*e.args[0], f);
        return {-a.value, a.mag};
      }
      case ExprKind::Binary:
        return binary_f(e, f);
      case ExprKind::Call:
        return call_f(e, f);
      case ExprKind::Reduce:
        return reduce_f(e, f);
      default:
        break;
    }
    SB_ASSERT(false, "unexpected floating-point expression kind");
    return {};
  }

  V binary_f(const Expr& e, Frame& f) {
    V a = eval_f(*e.args[0], f);
    V b = eval_f(*e.args[1], f);
    switch (e.bop) {
      case BinOp::Add:
        return {a.value + b.value, a.mag + b.mag};
      case BinOp::Sub:
        return {a.value - b.value, a.mag + b.mag};
      case BinOp::Mul:
        return {a.value * b.value, a.mag * b.mag};
      case BinOp::Div: {
        const double v = a.value / b.value;
        if (b.value == 0) return {v, kInf};
        const double ab = std::fabs(b.value);
        return {v, a.mag / ab + std::fabs(a.value) * b.mag / (ab * ab)};
      }
      case BinOp::Mod: {
        const double v = std::fmod(a.value, b.value);
        return {v, std::max(std::fabs(v), a.mag)};
      }
      default:
        break;
    }
    SB_ASSERT(false, std::string("floating-point result of operator ") + binop_symbol(e.bop));
    return {};
  }

  // A floating-point call: select evaluates only the chosen branch; every other intrinsic takes
  // its reference value and magnitude from its record (codegen/ir/intrinsics.h).
  V call_f(const Expr& e, Frame& f) {
    if (e.fn == Fn::Select) {
      return eval_f(eval_i(*e.args[0], f) ? *e.args[1] : *e.args[2], f);
    }
    const Intrinsic& in = intrinsic(e.fn);
    SB_ASSERT(in.reference, std::string("no reference for ") + fn_name(e.fn));
    MagValue args[3];
    SB_ASSERT(e.args.size() <= 3, "an intrinsic of more than three arguments");
    for (size_t i = 0; i < e.args.size(); ++i) {
      const V a = eval_f(*e.args[i], f);
      args[i] = {a.value, a.mag};
    }
    const MagValue r = in.reference(args);
    return {r.value, r.mag};
  }

  V reduce_f(const Expr& e, Frame& f) {
    int64_t lo, hi;
    range(e, f, &lo, &hi);
    Resume& r = resume_of(e, f);
    const bool cont = resumable(r, f, lo, hi);
    int64_t& k = f.vars[e.ref];
    const int64_t from = cont ? r.end : lo;
    const Expr& body = *e.args[0];
    if (e.rop == ReduceOp::Sum) {
      // Neumaier-compensated summation: the reference should not add error of its own.
      double s = cont ? r.a : 0, c = cont ? r.b : 0, m = cont ? r.m : 0;
      for (k = from; k < hi; ++k) {
        const V t = eval_f(body, f);
        const double n = s + t.value;
        c += std::fabs(s) >= std::fabs(t.value) ? (s - n) + t.value : (t.value - n) + s;
        s = n;
        m += t.mag;
      }
      r.a = s, r.b = c, r.m = m;
      remember(r, f, lo, hi);
      return {std::isfinite(s) ? s + c : s, m};
    }
    if (e.rop == ReduceOp::Prod) {
      // The first-order propagation of the factors' magnitudes through the product: adding a
      // factor t of magnitude mt to a partial product p of magnitude mp gives mp |t| + |p| mt,
      // so n exact factors give n |prod|, a bound on the relative error of n - 1 roundings too.
      double p = cont ? r.a : 1, m = cont ? r.m : 0;
      for (k = from; k < hi; ++k) {
        const V t = eval_f(body, f);
        m = m * std::fabs(t.value) + std::fabs(p) * t.mag;
        p *= t.value;
        if (std::isnan(m)) m = kInf;  // inf * 0: no bound
      }
      r.a = p, r.m = m;
      remember(r, f, lo, hi);
      return {p, m};
    }
    const bool is_max = e.rop == ReduceOp::Max;
    if (cont && r.stop) return {r.a, r.m};
    V best = cont ? V{r.a, r.m} : V{is_max ? -kInf : kInf, 0};
    r.stop = false;
    for (k = from; k < hi; ++k) {
      const V t = eval_f(body, f);
      if (std::isnan(t.value)) {
        best = t;
        r.stop = true;
        break;
      }
      if (t.value == best.value) {
        best.mag = std::max(best.mag, t.mag);
      } else if (is_max == (t.value > best.value)) {
        best = t;
      }
    }
    r.a = best.value, r.m = best.mag;
    remember(r, f, lo, hi);
    return best;
  }

  // Integer or boolean value of `e` (exact; i32 results wrap to 32 bits).
  int64_t eval_i(const Expr& e, Frame& f) {
    switch (e.kind) {
      case ExprKind::IntLit:
        return e.ival;
      case ExprKind::IndexVar:
        return f.vars[e.ref];
      case ExprKind::SizeRef:
        return sizes[e.ref];
      case ExprKind::Read:
        return static_cast<int64_t>(read(e, f).value);
      case ExprKind::Unary: {
        const int64_t a = eval_i(*e.args[0], f);
        if (e.uop == UnOp::Not) return a == 0;
        return fit(0 - static_cast<uint64_t>(a), e.type);
      }
      case ExprKind::Binary:
        return binary_i(e, f);
      case ExprKind::Call:
        return call_i(e, f);
      case ExprKind::Cast: {
        const Expr& a = *e.args[0];
        if (is_float(a.type)) return trunc_to(eval_f(a, f).value, e.type);
        return fit(static_cast<uint64_t>(eval_i(a, f)), e.type);
      }
      case ExprKind::Reduce:
        return reduce_i(e, f);
      default:
        break;
    }
    SB_ASSERT(false, std::string("unexpected integer expression of type ") + dtype_name(e.type));
    return 0;
  }

  // An integer call, exact (i32 results wrap): select evaluates only the chosen branch; the
  // SameNumeric intrinsics take their integer reference from their record.
  int64_t call_i(const Expr& e, Frame& f) {
    if (e.fn == Fn::Select) return eval_i(eval_i(*e.args[0], f) ? *e.args[1] : *e.args[2], f);
    const Intrinsic& in = intrinsic(e.fn);
    SB_ASSERT(in.integer_reference, std::string("integer call of ") + fn_name(e.fn));
    int64_t args[3];
    SB_ASSERT(e.args.size() <= 3, "an intrinsic of more than three arguments");
    for (size_t i = 0; i < e.args.size(); ++i) args[i] = eval_i(*e.args[i], f);
    return fit(static_cast<uint64_t>(in.integer_reference(args)), e.type);
  }

  int64_t binary_i(const Expr& e, Frame& f) {
    const Expr& x = *e.args[0];
    const Expr& y = *e.args[1];
    switch (e.bop) {
      case BinOp::And:
        return eval_i(x, f) && eval_i(y, f);
      case BinOp::Or:
        return eval_i(x, f) || eval_i(y, f);
      case BinOp::Lt:
      case BinOp::Le:
      case BinOp::Gt:
      case BinOp::Ge:
      case BinOp::Eq:
      case BinOp::Ne:
        if (is_float(x.type) || is_float(y.type)) {
          return compare(e.bop, eval_f(x, f).value, eval_f(y, f).value);
        }
        return compare(e.bop, eval_i(x, f), eval_i(y, f));
      default:
        break;
    }
    SB_ASSERT(is_int_like(x.type) && is_int_like(y.type), "integer op on non-integer operands");
    const int64_t a = eval_i(x, f);
    const int64_t b = eval_i(y, f);
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (e.bop) {
      case BinOp::Add:
        return fit(ua + ub, e.type);
      case BinOp::Sub:
        return fit(ua - ub, e.type);
      case BinOp::Mul:
        return fit(ua * ub, e.type);
      case BinOp::Div:
        if (b == 0) return 0;
        if (b == -1) return fit(0 - ua, e.type);
        return fit(static_cast<uint64_t>(a / b), e.type);
      case BinOp::Mod:
        if (b == 0 || b == -1) return 0;
        return fit(static_cast<uint64_t>(a % b), e.type);
      default:
        break;
    }
    SB_ASSERT(false, std::string("unexpected integer operator ") + binop_symbol(e.bop));
    return 0;
  }

  template <typename T>
  static int64_t compare(BinOp op, T a, T b) {
    switch (op) {
      case BinOp::Lt:
        return a < b;
      case BinOp::Le:
        return a <= b;
      case BinOp::Gt:
        return a > b;
      case BinOp::Ge:
        return a >= b;
      case BinOp::Eq:
        return a == b;
      case BinOp::Ne:
        return a != b;
      default:
        break;
    }
    SB_ASSERT(false, "not a comparison");
    return 0;
  }

  int64_t reduce_i(const Expr& e, Frame& f) {
    int64_t lo, hi;
    range(e, f, &lo, &hi);
    Resume& r = resume_of(e, f);
    const bool cont = resumable(r, f, lo, hi);
    int64_t& k = f.vars[e.ref];
    const int64_t from = cont ? r.end : lo;
    const Expr& body = *e.args[0];
    uint64_t u;
    if (e.rop == ReduceOp::Sum) {
      u = cont ? r.u : 0;
      for (k = from; k < hi; ++k) u += static_cast<uint64_t>(eval_i(body, f));
    } else if (e.rop == ReduceOp::Prod) {  // wraps like the sum: exact modulo 2^64
      u = cont ? r.u : 1;
      for (k = from; k < hi; ++k) u *= static_cast<uint64_t>(eval_i(body, f));
    } else {
      int64_t best = cont                     ? static_cast<int64_t>(r.u)
                     : e.rop == ReduceOp::Max ? scalar(e.type).min
                                              : scalar(e.type).max;
      for (k = from; k < hi; ++k) {
        const int64_t t = eval_i(body, f);
        best = e.rop == ReduceOp::Max ? std::max(best, t) : std::min(best, t);
      }
      u = static_cast<uint64_t>(best);
    }
    r.u = u;
    remember(r, f, lo, hi);
    if (e.rop == ReduceOp::Sum || e.rop == ReduceOp::Prod) return fit(u, e.type);
    return static_cast<int64_t>(u);
  }
};

Reference::Reference(const Spec& spec, const SizePoint& sizes, const HostTensors& inputs)
    : impl_(new Impl(spec, sizes, inputs)) {}

Reference::~Reference() {
  delete impl_;
}

RefValue Reference::element(int t, int64_t flat) {
  SB_ASSERT(t >= 0 && static_cast<size_t>(t) < impl_->spec.tensors.size(), "bad tensor id");
  SB_ASSERT(impl_->spec.tensors[t].role != Role::In, "Reference::element of an input tensor");
  SB_ASSERT(flat >= 0 && flat < impl_->elems[t], "Reference::element index out of range");
  return impl_->pull(t, flat);
}

}  // namespace sb
