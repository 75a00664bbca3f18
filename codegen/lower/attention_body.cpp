// The kernel body of a fused attention group (GpuKernel::FusedAttention, lower/gpu_bodies.h),
// written once as loop IR for both GPU printers: FlashAttention's algorithm with the parallelism
// of a GPU block.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/scalar_types.h"
#include "lower/gpu_bodies.h"
#include "support/diag.h"

namespace sb::loops {

namespace {

class AttentionBody {
 public:
  AttentionBody(const Spec& spec, const Attention& a, const AttentionTile& t, int64_t block_size)
      : spec_(spec),
        a_(a),
        bq_(t.bq),
        bk_(t.bk),
        ec_(t.ec),
        nt_(block_size),
        rs_(t.bq * t.bk / block_size),
        ra_(t.bq * t.ec / block_size),
        vt_(float_t(a.type)),
        ks_(a.first),
        kp_(a.first + 2),
        ky_(a.first + kAttentionStatements - 1) {
    SB_ASSERT(
        rs_ >= 1 && ra_ >= 1 && nt_ >= bq_ && rs_ * nt_ == bq_ * bk_ && ra_ * nt_ == bq_ * ec_,
        "flash_attention parameters that check_params should have rejected");
  }

  Block build() {
    const Statement& ss = spec_.stmts[ks_];
    const Statement& sy = spec_.stmts[ky_];
    const int s_d = a_.scores.k, y_i = a_.values.out_row_dim(), y_e = y_i + 1, y_j = a_.values.k;
    const bool batched = a_.scores.batched;
    const ExprPtr t = v("sb_t");

    Block b = {let("sb_t", gpu(GpuIndex::ThreadX))};
    if (batched) b.push_back(let("sb_b", div(gpu(GpuIndex::BlockX), v("sb_qblocks"))));
    b.push_back(let("sb_i0", mul(mod(gpu(GpuIndex::BlockX), v("sb_qblocks")), imm(bq_))));
    b.push_back(let("sb_e0", mul(gpu(GpuIndex::BlockY), imm(ec_))));
    if (batched) b.push_back(let_index(0, sy.vars[0].name, v("sb_b")));
    b.push_back(comment("queries, value columns, keys, and the depths of the scores' sum"));
    b.push_back(let("sb_m", extent(sy.out, y_i, name(sy.out))));
    b.push_back(let("sb_e", extent(sy.out, y_e, name(sy.out))));
    b.push_back(let("sb_n", leaf(ky_, *sy.vars[y_j].hi, int_t(), {})));
    b.push_back(let("sb_dlo", leaf(ks_, *ss.vars[s_d].lo, int_t(), {})));
    b.push_back(let("sb_dhi", leaf(ks_, *ss.vars[s_d].hi, int_t(), {})));
    b.push_back(if_then(binary(BinOp::Lt, t, imm(bq_)),
                        {store("sb_mx", vt_, {t}, identity(ReduceOp::Max, a_.type)),
                         store("sb_sum", vt_, {t}, zero())}));
    b.push_back(
        comment("Outputs (sb_t + r * " + std::to_string(nt_) + ") / ec, % ec of the block."));
    Block keys = key_block();
    Block acc = {unrolled("sb_r", ra_, {store("sb_acc", vt_, {v("sb_r")}, zero())}),
                 for_loop("sb_j0", imm(0), v("sb_n"), imm(bk_), ForKind::Serial, std::move(keys))};
    append(acc, outputs());
    b.push_back(alloc("sb_acc", vt_, {imm(ra_)}, MemScope::Register, std::move(acc)));

    // The shared arrays: the queries' depths d0.. [query][depth], the keys' same depths
    // [key][depth], the block's scores then weights [query][key], its values [key][column]; per
    // query the running max, the running sum of weights and the rescale factor of the block.
    const std::vector<std::pair<std::string, int64_t>> shared = {
        {"sb_qs", bq_ * (kAttentionDepthChunk + 1)},
        {"sb_ks", bk_ * (kAttentionDepthChunk + 1)},
        {"sb_ps", bq_ * (bk_ + 1)},
        {"sb_vs", bk_ * ec_},
        {"sb_mx", bq_},
        {"sb_sum", bq_},
        {"sb_scale", bq_}};
    for (auto it = shared.rbegin(); it != shared.rend(); ++it)
      b = {alloc(it->first, vt_, {imm(it->second)}, MemScope::Shared, std::move(b))};
    return b;
  }

 private:
  ExprPtr v(const std::string& n) const { return var(n, int_t()); }
  const std::string& name(int t) const { return spec_.tensors[static_cast<size_t>(t)].name; }
  ExprPtr zero() const { return fimm(0, a_.type); }
  ExprPtr f(const std::string& n) const { return var(n, vt_); }
  ExprPtr at(const std::string& buf, ExprPtr i) const { return load(buf, vt_, {std::move(i)}); }
  static StmtPtr unrolled(const std::string& n, int64_t count, Block body) {
    return for_loop(n, imm(0), imm(count), imm(1), ForKind::Unrolled, std::move(body));
  }

  // Statement k's expression `e` as a leaf of type `t`: the spec expressions of `replace`
  // replaced, and its index variables outside them in `binds` bound to their values (the batch
  // index, where there is one, to sb_b).
  ExprPtr leaf(size_t k, const sb::Expr& e, Type t, const std::map<int, ExprPtr>& binds,
               std::vector<Override> replace = {}) const {
    const Statement& st = spec_.stmts[k];
    std::vector<Override> o = replace;
    for (const sb::Expr* x : index_vars_of(e)) {
      bool replaced = false;
      for (const Override& r : replace) replaced = replaced || contains(*r.expr, x);
      if (replaced) continue;
      auto it = binds.find(x->ref);
      if (it != binds.end())
        o.push_back({x, st.vars[x->ref].name, it->second});
      else if (a_.scores.batched && x->ref == 0)
        o.push_back({x, st.vars[0].name, v("sb_b")});
    }
    return stmt_leaf(spec_, k, e, t, std::move(o));
  }
  // The value of statement k's `e` in the attention's type.
  ExprPtr value(size_t k, const sb::Expr& e, const std::map<int, ExprPtr>& binds,
                std::vector<Override> replace) const {
    const DType et = scalar(e.type).printed_as;
    const ExprPtr x = leaf(k, e, float_t(et), binds, std::move(replace));
    return et == a_.type ? x : cast(vt_, x);
  }

  // The slot of register r: thread sb_t's slot sb_t + r * block_size in rows of `per_row`, its
  // query sb_qi and its key or column `col`.
  Block slot(int64_t per_row, const std::string& col) const {
    const ExprPtr s = add(v("sb_t"), mul(v("sb_r"), imm(nt_)));
    return {let("sb_qi", div(s, imm(per_row))), let(col, mod(s, imm(per_row)))};
  }

  // The loads of `read` (of statement k, its index variables `binds`) into shared array `dest`
  // at `index`, zero where `cond` does not hold.
  Block guarded(size_t k, const sb::Expr& read, const std::map<int, ExprPtr>& binds, ExprPtr cond,
                const std::string& dest, ExprPtr index) const {
    return {let("sb_x", zero(), /*mut=*/true),
            if_then(std::move(cond), {assign("sb_x", value(k, read, binds, {}))}),
            store(dest, vt_, {std::move(index)}, f("sb_x"))};
  }

  // One block of bk keys from sb_j0: the scores, the online softmax and the outputs.
  Block key_block() {
    const Statement& ss = spec_.stmts[ks_];
    const Statement& sp = spec_.stmts[kp_];
    const int s_i = a_.scores.out_row_dim(), s_j = s_i + 1, s_d = a_.scores.k;
    const int y_e = a_.values.out_row_dim() + 1, y_j = a_.values.k;
    const int64_t dc = kAttentionDepthChunk;
    const ExprPtr t = v("sb_t"), qi = v("sb_qi"), kj = v("sb_kj"), dd = v("sb_dd");
    const ExprPtr qpitch = imm(dc + 1), ppitch = imm(bk_ + 1);
    const ExprPtr lt_kn = binary(BinOp::Lt, kj, v("sb_kn"));
    auto both = [](ExprPtr x, ExprPtr y) { return binary(BinOp::And, std::move(x), std::move(y)); };

    // The queries' and keys' depths sb_d0.. through shared memory, folded into sb_dot.
    const ExprPtr depth = add(v("sb_d0"), dd);
    const ExprPtr query = add(v("sb_i0"), qi);
    Block q_load = {let("sb_qi", div(v("sb_slot"), imm(dc))),
                    let("sb_dd", mod(v("sb_slot"), imm(dc)))};
    append(q_load,
           guarded(ks_, *a_.scores.x_read, {{s_i, query}, {s_d, depth}},
                   both(binary(BinOp::Lt, query, v("sb_m")), binary(BinOp::Lt, depth, v("sb_dhi"))),
                   "sb_qs", add(mul(qi, qpitch), dd)));
    Block k_load = {let("sb_kj", div(v("sb_slot"), imm(dc))),
                    let("sb_dd", mod(v("sb_slot"), imm(dc)))};
    append(k_load, guarded(ks_, *a_.scores.y_read, {{s_j, add(v("sb_j0"), kj)}, {s_d, depth}},
                           both(lt_kn, binary(BinOp::Lt, depth, v("sb_dhi"))), "sb_ks",
                           add(mul(kj, qpitch), dd)));
    const std::vector<Override> from_tiles = {
        {a_.scores.x_read, text(ks_, *a_.scores.x_read), at("sb_qs", add(mul(qi, qpitch), dd))},
        {a_.scores.y_read, text(ks_, *a_.scores.y_read), at("sb_ks", add(mul(kj, qpitch), dd))}};
    Block dots = slot(bk_, "sb_kj");
    dots.push_back(comment("zeros past the depths"));
    dots.push_back(for_loop("sb_dd", imm(0), imm(dc), imm(1), ForKind::Serial,
                            {fold_at("sb_dot", {v("sb_r")}, ReduceOp::Sum, vt_,
                                     value(ks_, *a_.scores.reduce->args[0], {}, from_tiles))},
                            nullptr, /*unroll=*/8));
    Block chunk = {
        for_loop("sb_slot", t, imm(bq_ * dc), imm(nt_), ForKind::Serial, std::move(q_load)),
        for_loop("sb_slot", t, imm(bk_ * dc), imm(nt_), ForKind::Serial, std::move(k_load)),
        barrier(), unrolled("sb_r", rs_, std::move(dots)), barrier()};

    // The scores' statement with its sum replaced by the dot product; -inf past the keys.
    Block score = slot(bk_, "sb_kj");
    score.push_back(let("sb_s", identity(ReduceOp::Max, a_.type), /*mut=*/true));
    score.push_back(
        if_then(both(binary(BinOp::Lt, query, v("sb_m")), lt_kn),
                {assign("sb_s", value(ks_, *ss.rhs, {{s_i, query}, {s_j, add(v("sb_j0"), kj)}},
                                      {{a_.scores.reduce, text(ks_, *a_.scores.reduce),
                                        load("sb_dot", vt_, {v("sb_r")})}}))}));
    score.push_back(store("sb_ps", vt_, {add(mul(qi, ppitch), kj)}, f("sb_s")));

    // The block's values, zero past the keys and the columns.
    const ExprPtr column = add(v("sb_e0"), v("sb_ee"));
    Block v_load = {let("sb_kj", div(v("sb_slot"), imm(ec_))),
                    let("sb_ee", mod(v("sb_slot"), imm(ec_)))};
    append(v_load,
           guarded(ky_, *a_.values.y_read, {{y_j, add(v("sb_j0"), kj)}, {y_e, column}},
                   both(lt_kn, binary(BinOp::Lt, column, v("sb_e"))), "sb_vs", v("sb_slot")));

    // The online softmax, a thread per query. The weight is the weights' statement of sb_x and
    // sb_max.
    auto weight = [&](ExprPtr x, ExprPtr max) {
      return value(kp_, *sp.rhs, {},
                   {{a_.weight_s, text(kp_, *a_.weight_s), std::move(x)},
                    {a_.weight_m, text(kp_, *a_.weight_m), std::move(max)}});
    };
    const ExprPtr mine = add(mul(t, ppitch), kj);
    Block softmax = {
        let("sb_bm", at("sb_mx", t), /*mut=*/true),
        for_loop("sb_kj", imm(0), v("sb_kn"), imm(1), ForKind::Serial,
                 {fold("sb_bm", ReduceOp::Max, vt_, at("sb_ps", mine))}),
        let("sb_safe", select(binary(BinOp::Eq, f("sb_bm"), identity(ReduceOp::Max, a_.type)),
                              zero(), f("sb_bm"))),
        let("sb_sc", weight(at("sb_mx", t), f("sb_safe"))),
        let("sb_l", mul(at("sb_sum", t), f("sb_sc")), /*mut=*/true),
        for_loop("sb_kj", imm(0), imm(bk_), imm(1), ForKind::Serial,
                 {let("sb_w", zero(), /*mut=*/true),
                  if_then(lt_kn, {assign("sb_w", weight(at("sb_ps", mine), f("sb_safe"))),
                                  assign("sb_l", add(f("sb_l"), f("sb_w")))}),
                  store("sb_ps", vt_, {mine}, f("sb_w"))}),
        store("sb_mx", vt_, {t}, f("sb_bm")),
        store("sb_sum", vt_, {t}, f("sb_l")),
        store("sb_scale", vt_, {t}, f("sb_sc"))};

    // The outputs: rescaled, plus the weights times the values.
    Block out = slot(ec_, "sb_ee");
    out.push_back(let("sb_o", mul(load("sb_acc", vt_, {v("sb_r")}), at("sb_scale", qi)),
                      /*mut=*/true));
    out.push_back(for_loop(
        "sb_kj", imm(0), imm(bk_), imm(1), ForKind::Serial,
        {assign("sb_o", add(f("sb_o"), mul(at("sb_ps", add(mul(qi, ppitch), kj)),
                                           at("sb_vs", add(mul(kj, imm(ec_)), v("sb_ee"))))))},
        nullptr, /*unroll=*/8));
    out.push_back(store("sb_acc", vt_, {v("sb_r")}, f("sb_o")));

    Block dot_regs = {
        unrolled("sb_r", rs_, {store("sb_dot", vt_, {v("sb_r")}, zero())}),
        for_loop("sb_d0", v("sb_dlo"), v("sb_dhi"), imm(dc), ForKind::Serial, std::move(chunk)),
        comment("The scores' statement with its sum replaced by the dot product; "
                "-inf past the keys."),
        unrolled("sb_r", rs_, std::move(score))};
    Block b = {let("sb_kn", min(imm(bk_), sub(v("sb_n"), v("sb_j0")))),
               comment("The block's scores: thread sb_t holds those of slots sb_t + r * " +
                       std::to_string(nt_) + " (query slot / bk, key slot % bk)."),
               alloc("sb_dot", vt_, {imm(rs_)}, MemScope::Register, std::move(dot_regs)),
               comment("The block's values, zero past the keys and the columns."),
               for_loop("sb_slot", t, imm(bk_ * ec_), imm(nt_), ForKind::Serial, std::move(v_load)),
               barrier(),
               comment("The online softmax, a thread per query: the block's max (NaN "
                       "propagates; a max still"),
               comment("-inf is taken as 0, so such keys weigh 0), the rescale factor, the "
                       "weights, the sum."),
               if_then(binary(BinOp::Lt, t, imm(bq_)), std::move(softmax)),
               barrier(),
               comment("The outputs: rescaled, plus the weights times the values."),
               unrolled("sb_r", ra_, std::move(out)),
               barrier()};
    return b;
  }

  // The weighted sum's statement, its sum the accumulated outputs and l the running sum.
  Block outputs() const {
    const Statement& sy = spec_.stmts[ky_];
    const int y_i = a_.values.out_row_dim(), y_e = y_i + 1;
    const ExprPtr query = add(v("sb_i0"), v("sb_qi")), column = add(v("sb_e0"), v("sb_ee"));
    Block r = slot(ec_, "sb_ee");
    r.push_back(if_then(
        binary(BinOp::And, binary(BinOp::Lt, query, v("sb_m")),
               binary(BinOp::Lt, column, v("sb_e"))),
        {let_index(y_i, sy.vars[y_i].name, query), let_index(y_e, sy.vars[y_e].name, column),
         compute(
             {{a_.values.reduce, text(ky_, *a_.values.reduce), load("sb_acc", vt_, {v("sb_r")})},
              {a_.sum_l, text(ky_, *a_.sum_l), at("sb_sum", v("sb_qi"))}})}));
    return {comment("The weighted sum's statement, its sum the accumulated outputs and l the "
                    "running sum."),
            unrolled("sb_r", ra_, std::move(r))};
  }

  std::string text(size_t k, const sb::Expr& e) const {
    return to_string(e, spec_, &spec_.stmts[k]);
  }

  const Spec& spec_;
  const Attention& a_;
  const int64_t bq_, bk_, ec_, nt_, rs_, ra_;
  const Type vt_;
  const size_t ks_, kp_, ky_;  // the statements: scores, weights, weighted sum
};

}  // namespace

}  // namespace sb::loops

namespace sb {

loops::Block attention_body(const Spec& spec, const Attention& a, const AttentionTile& t,
                            int64_t block_size) {
  return loops::AttentionBody(spec, a, t, block_size).build();
}

}  // namespace sb
