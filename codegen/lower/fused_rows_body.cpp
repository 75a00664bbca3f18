// The kernel body of a fused row group (GpuKernel::FusedRows, lower/gpu_bodies.h), written once
// as loop IR for both GPU printers: a worker (a warp, or a block) owns a row at a time and
// computes each statement of the group along it, in the segment order of the anchor's row.
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/scalar_types.h"
#include "lower/gpu_bodies.h"
#include "lower/patterns.h"
#include "support/diag.h"

namespace sb::loops {

namespace {

bool in(const std::vector<int>& v, int t) {
  return std::find(v.begin(), v.end(), t) != v.end();
}

// The segment order of a row (RowPlan::anchor): a row of `len` elements is split at the
// kRowSegmentBytes boundaries of memory into its head (the elements before the first boundary),
// its body (the whole segments after it) and its tail. Slot j of the row stands for element
// head + j while j < body (the whole segments, first), then for the head and the tail together,
// so that a warp's 32 slots are one whole segment, or the row's two partial ones. These are the
// Lets of sb_lead<tag> (the position of the row's first element, element `first` of memory in
// units of `bytes`, in its segment), sb_head<tag> and sb_body<tag>.
Block segment_lets(const std::string& tag, ExprPtr first, const ExprPtr& len, int bytes) {
  const ExprPtr seg = imm(kRowSegmentBytes / bytes);
  const ExprPtr lead = var("sb_lead" + tag, int_t()), head = var("sb_head" + tag, int_t());
  return {let("sb_lead" + tag, mod(std::move(first), seg)),
          let("sb_head" + tag,
              select(binary(BinOp::Eq, lead, imm(0)), imm(0), min(sub(seg, lead), len))),
          let("sb_body" + tag, mul(div(sub(len, head), seg), seg))};
}

// The element that slot `j` of the row of segment_lets(tag) stands for: the whole segments
// first, then the head and the tail together.
ExprPtr segment_element(const std::string& tag, const ExprPtr& j) {
  const ExprPtr head = var("sb_head" + tag, int_t()), body = var("sb_body" + tag, int_t());
  return select(binary(BinOp::Lt, j, body), add(head, j),
                select(binary(BinOp::Lt, j, add(body, head)), sub(j, body), j));
}

// Statement k's spec expression `e` as a leaf of type `t`, with those of the overrides `o` that
// replace a node of `e` (the others have nothing to replace there).
ExprPtr leaf_of(const Spec& spec, size_t k, const sb::Expr& e, Type t,
                const std::vector<Override>& o) {
  std::vector<Override> mine;
  for (const Override& x : o)
    if (contains(e, x.expr)) mine.push_back(x);
  return stmt_leaf(spec, k, e, t, std::move(mine));
}

class RowsBody {
 public:
  RowsBody(const Spec& spec, const RowPlan& p, RowUnit unit, bool staged, int64_t block_size)
      : spec_(spec),
        p_(p),
        warp_(unit == RowUnit::Warp),
        staged_(staged),
        bs_(block_size),
        buf_(std::string("sb_rows_") + dtype_name(p.type)) {
    SB_ASSERT(unit != RowUnit::None, "a fused row group without its unit");
    SB_ASSERT(block_size % 32 == 0, "a fused row group's block of whole warps");
  }

  FusedRowsBody build() {
    Block per_row;
    if (!p_.kept.empty())
      per_row.push_back(if_then(binary(BinOp::Eq, mod(v("sb_i"), lanes()), v("sb_lane")),
                                {assign("sb_kept_row", v("sb_row"))}));
    Block rest;
    if (staged_ && !p_.cached.empty()) {
      rest.push_back(comment("Stage the rows read more than once: memory is read once per row."));
      for (int t : p_.cached)
        append(rest, staging_copy(t, mul(v("sb_row"), extent1(t)), extent1(t), off(t), v("sb_lane"),
                                  warp_ ? 32 : bs_));
      rest.push_back(barrier(warp_));
    }
    for (size_t k = p_.first; k <= p_.last; ++k) {
      append(rest, statement(k));
      const bool recomputed = !staged_ && in(p_.rows, spec_.stmts[k].out);
      if (!recomputed && barrier_after(p_, k, staged_)) rest.push_back(barrier(warp_));
    }
    if (!p_.kept.empty()) {
      rest.push_back(assign("sb_i", add(v("sb_i"), imm(1))));
      rest.push_back(store_kept(binary(BinOp::Eq, mod(v("sb_i"), lanes()), imm(0))));
    }
    // The anchor's segments, where a loop along the row visits it.
    if (anchor_used_) {
      const int a = p_.anchor;
      const int bytes = dtype_bytes(spec_.tensors[a].type);
      append(
          per_row,
          segment_lets("", add(div(address(a, name(a)), imm(bytes)), mul(v("sb_row"), extent1(a))),
                       extent1(a), bytes));
    }
    append(per_row, std::move(rest));

    Block b;
    if (staged_) append(b, layout());
    if (warp_) {
      b.push_back(let("sb_lane", mod(gpu(GpuIndex::ThreadX), imm(32))));
      b.push_back(let("sb_worker", div(add(mul(gpu(GpuIndex::BlockX), gpu(GpuIndex::BlockDimX)),
                                           gpu(GpuIndex::ThreadX)),
                                       imm(32))));
      b.push_back(
          let("sb_workers", mul(gpu(GpuIndex::GridDimX), div(gpu(GpuIndex::BlockDimX), imm(32)))));
    } else {
      b.push_back(let("sb_lane", gpu(GpuIndex::ThreadX)));
      b.push_back(let("sb_worker", gpu(GpuIndex::BlockX)));
      b.push_back(let("sb_workers", gpu(GpuIndex::GridDimX)));
    }
    if (staged_ && !p_.bcast.empty()) {
      b.push_back(
          comment("Stage the tensors every row reads alike, once for all the block's rows."));
      for (int t : p_.bcast)
        append(b, staging_copy(t, imm(0), element_count(t), off(t), gpu(GpuIndex::ThreadX), bs_));
      b.push_back(barrier());
    }
    if (!p_.kept.empty()) {
      b.push_back(comment("The per-row outputs of the worker's i-th row are kept by thread i % " +
                          lanes_text() + " and stored"));
      b.push_back(comment("every " + lanes_text() + " rows, so that every thread stores alike."));
      b.push_back(let("sb_kept_row", imm(-1), /*mut=*/true));
      b.push_back(let("sb_i", imm(0), /*mut=*/true));
      for (int t : p_.kept) b.push_back(let(kept_name(t), zero(value_type_of(t)), /*mut=*/true));
    }
    b.push_back(comment(std::string("The row is the same for every thread of the ") +
                        (warp_ ? "warp" : "block") + ", so loop bounds and barriers are uniform."));
    const int first_out = spec_.stmts[p_.first].out;
    b.push_back(for_loop("sb_row", v("sb_worker"), extent(first_out, 0, name(first_out)),
                         v("sb_workers"), ForKind::Serial, std::move(per_row)));
    if (!p_.kept.empty()) {
      b.push_back(comment("The last rows."));
      b.push_back(store_kept(binary(BinOp::Ge, v("sb_kept_row"), imm(0))));
    }

    // The shared arrays hold the whole body: one value per warp for each reduction type under a
    // block per row, then the dynamic one (staged rows).
    if (staged_) b = {alloc(buf_, float_t(p_.type), {}, MemScope::Shared, std::move(b))};
    const int64_t nw = bs_ / 32;
    if (!warp_ && nw > 1)
      for (auto it = p_.reduce_types.rbegin(); it != p_.reduce_types.rend(); ++it)
        b = {alloc(warps_name(*it), float_t(*it), {imm(nw)}, MemScope::Shared, std::move(b))};
    return {std::move(b), outs_};
  }

 private:
  ExprPtr v(const std::string& n) const { return var(n, int_t()); }
  const std::string& name(int t) const { return spec_.tensors[static_cast<size_t>(t)].name; }
  ExprPtr extent1(int t) const { return extent(t, 1, name(t)); }
  ExprPtr element_count(int t) const {
    ExprPtr n;
    for (size_t d = 0; d < spec_.tensors[t].shape.size(); ++d) {
      ExprPtr e = extent(t, static_cast<int>(d), name(t));
      n = n ? mul(n, e) : e;
    }
    return n ? n : imm(1);
  }
  DType value_type_of(int t) const { return compute_type(spec_.tensors[t].type); }
  ExprPtr off(int t) const { return v("sb_off_" + name(t)); }
  std::string reg_name(int t) const { return "sb_row_" + name(t); }
  std::string kept_name(int t) const { return "sb_kept_" + name(t); }
  std::string warps_name(DType t) const { return std::string("sb_warps_") + dtype_name(t); }
  ExprPtr lanes() const { return imm(warp_ ? 32 : bs_); }
  std::string lanes_text() const { return std::to_string(warp_ ? 32 : bs_); }
  static ExprPtr zero(DType t) { return is_float(t) ? fimm(0, t) : cast(float_t(t), imm(0)); }

  // The shared memory's layout (staged kernel): the offsets of the broadcast tensors, once per
  // block, then of the worker's rows (worker_rows).
  Block layout() {
    Block b = {comment(std::string("Shared memory: the broadcast tensors once per block, then one "
                                   "set of rows per ") +
                       (warp_ ? "warp." : "block."))};
    ExprPtr at = imm(0);
    for (int t : p_.bcast) {
      b.push_back(let("sb_off_" + name(t), at));
      at = add(off(t), element_count(t));
    }
    const std::vector<int> per_row = worker_rows(p_);
    if (per_row.empty()) return b;
    ExprPtr row_len;
    for (int t : per_row) row_len = row_len ? add(row_len, extent1(t)) : extent1(t);
    b.push_back(comment(std::string("this ") + (warp_ ? "warp's" : "block's") + " rows"));
    b.push_back(
        let("sb_mine", warp_ ? add(at, mul(div(gpu(GpuIndex::ThreadX), imm(32)), row_len)) : at));
    at = v("sb_mine");
    for (int t : per_row) {
      b.push_back(let("sb_off_" + name(t), at));
      at = add(off(t), extent1(t));
    }
    return b;
  }

  // The staging copy of the `len` elements of tensor `t` from element `base` into the shared
  // rows from element `to`: thread `lane` of `lanes` takes every lanes-th slot of the row in
  // segment order. Every lane of a warp that has a slot loads (those past the end the last
  // slot's element, in a sector the warp loads anyway), so that all its lanes make the same
  // accesses; only real slots are stored.
  Block staging_copy(int t, const ExprPtr& base, const ExprPtr& len, const ExprPtr& to,
                     const ExprPtr& lane, int64_t lanes) {
    const std::string tag = "_" + name(t);
    const int bytes = dtype_bytes(spec_.tensors[t].type);
    const Type vt = float_t(p_.type);
    const ExprPtr start = div(address(t, name(t)), imm(bytes));
    Block b = segment_lets(tag, is_zero_imm(*base) ? start : add(start, base), len, bytes);
    const ExprPtr mine = add(v("sb_j0"), lane), j = v("sb_j"), c = v("sb_c");
    Block slot = {
        let("sb_j", select(binary(BinOp::Lt, mine, len), mine, sub(len, imm(1)))),
        let("sb_c", segment_element(tag, j)),
        let("sb_v", element(t, vt, is_zero_imm(*base) ? c : add(base, c), name(t))),
        if_then(binary(BinOp::Eq, j, mine), {store(buf_, vt, {add(to, c)}, var("sb_v", vt))})};
    if (lanes != 32)  // a block of warps: a warp whose first slot is past the end has none
      slot = {comment("a warp whose first slot is past the end has none"),
              if_then(binary(BinOp::Lt, add(v("sb_j0"), mul(div(lane, imm(32)), imm(32))), len),
                      std::move(slot))};
    b.push_back(for_loop("sb_j0", imm(0), len, imm(lanes), ForKind::Serial, std::move(slot)));
    return b;
  }
  static bool is_zero_imm(const Expr& e) { return e.kind == ExprKind::IntImm && e.ival == 0; }

  // The loop of `c` over [lo, hi) (lo null: 0) along the row, the worker's lanes apart: in the
  // segment order of the anchor's row where it covers that row (`whole`).
  Block row_loop(const std::string& c, const ExprPtr& lo, const ExprPtr& hi, bool whole,
                 Block body) {
    if (!whole || p_.anchor < 0)
      return {for_loop(c, lo ? add(lo, v("sb_lane")) : v("sb_lane"), hi, lanes(), ForKind::Serial,
                       std::move(body))};
    anchor_used_ = true;
    Block b = {let(c, segment_element("", v("sb_j")))};
    append(b, std::move(body));
    return {for_loop("sb_j", v("sb_lane"), hi, lanes(), ForKind::Serial, std::move(b))};
  }
  // Whether a loop over [lo, hi) covers the anchor's row.
  bool covers_anchor(const sb::Expr& lo, const sb::Expr& hi) const {
    return p_.anchor >= 0 && is_zero_literal(lo) &&
           same_expr(hi, *spec_.tensors[p_.anchor].shape[1]);
  }

  // The overrides of statement k's index variables: the row (sb_row), the column of a rank-2
  // statement (sb_q) and its reduction's variable (`red_var`, if any, bound to `red_value`).
  std::vector<Override> bind_vars(size_t k, int red_var = -1, ExprPtr red_value = nullptr) const {
    const Statement& st = spec_.stmts[k];
    std::vector<const sb::Expr*> nodes = index_vars_of(*st.rhs);
    for (const IndexVar& iv : st.vars)
      for (const sb::Expr* b : {iv.lo.get(), iv.hi.get()})
        if (b)
          for (const sb::Expr* x : index_vars_of(*b)) nodes.push_back(x);
    std::vector<Override> o;
    for (const sb::Expr* x : nodes) {
      if (x->ref == 0 && st.rank() >= 1) o.push_back({x, st.vars[0].name, v("sb_row")});
      if (x->ref == 1 && st.rank() == 2) o.push_back({x, st.vars[1].name, v("sb_q")});
      if (red_var >= 0 && x->ref == red_var) o.push_back({x, st.vars[x->ref].name, red_value});
    }
    return o;
  }

  // Statement k's expression `e` with the overrides `o` and those of its reads that do not go
  // to global memory (redirect).
  ExprPtr leaf(size_t k, const sb::Expr& e, Type t, std::vector<Override> o) {
    redirect(k, e, o);
    return leaf_of(spec_, k, e, t, o);
  }

  // Adds to `o` the overrides of the reads in `e` (of statement k, whose index variables `o`
  // binds) that the kernel does not read from global memory.
  void redirect(size_t k, const sb::Expr& e, std::vector<Override>& o) {
    const Statement& st = spec_.stmts[k];
    const std::vector<Override> binds = o;  // the index variables' (and earlier reads')
    for (const sb::Expr* r : reads_of(e)) {
      // A read inside a node replaced already (a reduction by its value) is not printed.
      bool replaced = false;
      for (const Override& x : binds) replaced = replaced || contains(*x.expr, r);
      if (replaced) continue;
      const int t = r->ref;
      const Type vt = float_t(value_type_of(t));
      const std::string text = to_string(*r, spec_, &st);
      switch (row_read(p_, t, staged_)) {
        case RowRead::Global:
          break;
        case RowRead::Register:
          o.push_back({r, text, var(reg_name(t), vt)});
          break;
        case RowRead::SharedRow:
          o.push_back({r, text,
                       load(buf_, float_t(p_.type),
                            {add(off(t), leaf_of(spec_, k, *r->args[1], int_t(), binds))})});
          break;
        case RowRead::SharedBlock: {
          ExprPtr flat;
          for (size_t d = 0; d < r->args.size(); ++d) {
            const ExprPtr s = leaf_of(spec_, k, *r->args[d], int_t(), binds);
            flat = flat ? add(mul(flat, extent(t, static_cast<int>(d), name(t))), s) : s;
          }
          o.push_back({r, text, load(buf_, float_t(p_.type), {add(off(t), flat ? flat : imm(0))})});
          break;
        }
        case RowRead::Recompute: {
          // The producer's right-hand side at this read's subscripts.
          const Recompute rc = recompute(spec_, p_, *r);
          const size_t pk = static_cast<size_t>(rc.producer - spec_.stmts.data());
          std::vector<Override> po;
          for (const auto& [x, sub] : rc.binds)
            po.push_back(
                {x, rc.producer->vars[x->ref].name, leaf_of(spec_, k, *sub, int_t(), binds)});
          o.push_back({r, text, leaf(pk, *rc.producer->rhs, vt, std::move(po))});
          break;
        }
      }
    }
  }

  // Statement k of the group along the current row.
  Block statement(size_t k) {
    const Statement& st = spec_.stmts[k];
    Block b = {comment(source_text(st, spec_))};
    const bool row_temp = in(p_.rows, st.out);
    if (row_temp && !staged_) {
      b.push_back(comment(name(st.out) + " is not stored: it is recomputed where it is read."));
      return b;
    }
    const Type ot = float_t(value_type_of(st.out));
    if (st.rank() == 2) {
      ExprPtr value = leaf(k, *st.rhs, ot, bind_vars(k));
      const ExprPtr q = v("sb_q");
      StmtPtr s = row_temp
                      ? store(buf_, float_t(p_.type), {add(off(st.out), q)}, value)
                      : put(st.out, name(st.out), add(mul(v("sb_row"), extent1(st.out)), q), value);
      if (!row_temp) outs_.insert(st.out);
      const bool whole = p_.anchor >= 0 && same_expr(*spec_.tensors[st.out].shape[1],
                                                     *spec_.tensors[p_.anchor].shape[1]);
      append(b, row_loop("sb_q", nullptr, extent1(st.out), whole, {s}));
      return b;
    }
    SB_ASSERT(st.rank() == 1, "a fused row statement of rank 1 or 2");
    std::vector<Override> o = bind_vars(k);
    const std::vector<const sb::Expr*> reds = outer_reductions(*st.rhs);
    if (!reds.empty()) {
      const sb::Expr& red = *reds.front();
      const DType t = scalar(red.type).printed_as;
      const Type vt = float_t(t);
      const std::string acc = "sb_acc_" + name(st.out);
      const IndexVar& rv = st.vars[red.ref];
      b.push_back(let(acc, identity(red.rop, t), /*mut=*/true));
      const ExprPtr lo = is_zero_literal(*rv.lo) ? nullptr : leaf_of(spec_, k, *rv.lo, int_t(), o);
      const ExprPtr hi = leaf_of(spec_, k, *rv.hi, int_t(), o);
      const ExprPtr term = leaf(k, *red.args[0], vt, bind_vars(k, red.ref, v("sb_k")));
      append(b, row_loop("sb_k", lo, hi, covers_anchor(*rv.lo, *rv.hi),
                         {fold(acc, red.rop, vt, term)}));
      b.push_back(comment("every lane of the warp gets the warp's value"));
      b.push_back(assign(acc, warp(WarpOp::AllReduce, red.rop, var(acc, vt))));
      const int64_t nw = bs_ / 32;
      if (!warp_ && nw > 1) {
        const std::string ws = warps_name(t);
        b.push_back(comment("Every thread combines the warps' values, in the same order."));
        b.push_back(if_then(binary(BinOp::Eq, mod(v("sb_lane"), imm(32)), imm(0)),
                            {store(ws, vt, {div(v("sb_lane"), imm(32))}, var(acc, vt))}));
        b.push_back(barrier());
        b.push_back(assign(acc, load(ws, vt, {imm(0)})));
        b.push_back(for_loop("sb_w", imm(1), imm(nw), imm(1), ForKind::Serial,
                             {fold(acc, red.rop, vt, load(ws, vt, {v("sb_w")}))}));
        b.push_back(barrier());
      }
      o.push_back({&red, to_string(red, spec_, &st), var(acc, vt)});
    }
    b.push_back(let(reg_name(st.out), leaf(k, *st.rhs, ot, std::move(o))));
    if (!in(p_.row_local, st.out)) {
      outs_.insert(st.out);
      b.push_back(if_then(binary(BinOp::Eq, mod(v("sb_i"), lanes()), v("sb_lane")),
                          {assign(kept_name(st.out), var(reg_name(st.out), ot))}));
    }
    return b;
  }

  // The kept per-row outputs stored where `cond` holds.
  StmtPtr store_kept(ExprPtr cond) const {
    Block b;
    for (int t : p_.kept)
      b.push_back(put(t, name(t), v("sb_kept_row"), var(kept_name(t), float_t(value_type_of(t)))));
    return if_then(std::move(cond), std::move(b));
  }

  const Spec& spec_;
  const RowPlan& p_;
  const bool warp_, staged_;
  const int64_t bs_;
  const std::string buf_;  // the dynamic shared memory (the staged kernel)
  bool anchor_used_ = false;
  std::set<int> outs_;
};

}  // namespace

}  // namespace sb::loops

namespace sb {

FusedRowsBody fused_rows_body(const Spec& spec, const RowPlan& p, RowUnit unit, bool staged,
                              int64_t block_size) {
  return loops::RowsBody(spec, p, unit, staged, block_size).build();
}

}  // namespace sb
