#include "lower/gpu_bodies.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/affine.h"
#include "ir/scalar_types.h"
#include "support/diag.h"

// The bodies are built inside sb::loops, where the loop IR's names come first.
namespace sb::loops {

namespace {

// `i` below extent 0 of the output and `j` below extent 1.
ExprPtr in_output(const Spec& spec, const Statement& st, const ExprPtr& i, const ExprPtr& j) {
  const std::string& out = spec.tensors[st.out].name;
  return binary(BinOp::And, binary(BinOp::Lt, i, extent(st.out, 0, out)),
                binary(BinOp::Lt, j, extent(st.out, 1, out)));
}

Block transpose_tile_body(const Spec& spec, const Statement& st, const TransposeMatch& m,
                          int64_t tile, int64_t rows) {
  SB_ASSERT(st.rank() == 2 && tile > 0 && rows > 0, "a tiled transpose of a rank-2 output");
  const std::string& in = st.vars[0].name;
  const std::string& jn = st.vars[1].name;
  const ExprPtr iv = index_var(0, in), jv = index_var(1, jn);
  const ExprPtr pitch = imm(tile + 1);
  const ExprPtr tx = var("sb_tx", int_t()), y = var("sb_y", int_t());
  const ExprPtr r0 = var("sb_r0", int_t()), c0 = var("sb_c0", int_t());
  auto tile_name = [](size_t q) { return "sb_tile" + std::to_string(q); };
  auto tile_type = [&](size_t q) {
    return float_t(compute_type(spec.tensors[m.reads[q]->ref].type));
  };
  auto rows_loop = [&](Block body) {
    return for_loop("sb_y", gpu(GpuIndex::ThreadY), imm(tile), imm(rows), ForKind::Serial,
                    std::move(body));
  };

  Block loads;
  for (size_t q = 0; q < m.reads.size(); ++q)
    loads.push_back(store(tile_name(q), tile_type(q), {add(mul(y, pitch), tx)},
                          spec_leaf(spec, st, *m.reads[q], tile_type(q))));
  std::vector<Override> from_tiles;
  for (size_t q = 0; q < m.reads.size(); ++q)
    from_tiles.push_back({m.reads[q], to_string(*m.reads[q], spec, &st),
                          load(tile_name(q), tile_type(q), {add(mul(tx, pitch), y)})});

  Block body = {
      let("sb_tx", gpu(GpuIndex::ThreadX)),
      comment("first " + in + " of the tile, and first " + jn),
      let("sb_r0", mul(gpu(GpuIndex::BlockY), imm(tile))),
      let("sb_c0", mul(gpu(GpuIndex::BlockX), imm(tile))),
      comment("Load: consecutive threads read consecutive " + in +
              ", the source's last dimension."),
      rows_loop({let_index(1, jn, add(c0, y)), let_index(0, in, add(r0, tx)),
                 if_then(in_output(spec, st, iv, jv), std::move(loads))}),
      barrier(),
      comment("Store: consecutive threads write consecutive " + jn + "."),
      rows_loop({let_index(0, in, add(r0, y)), let_index(1, jn, add(c0, tx)),
                 if_then(in_output(spec, st, iv, jv), {compute(std::move(from_tiles))})}),
  };
  // The tiles, outermost first, each holding the rest.
  for (size_t q = m.reads.size(); q-- > 0;) {
    body = {
        comment(to_string(*m.reads[q], spec, &st) + ", rows padded to " + std::to_string(tile + 1)),
        alloc(tile_name(q), tile_type(q), {imm(tile * (tile + 1))}, MemScope::Shared,
              std::move(body))};
  }
  return body;
}

// The value a product's tile holds of operand `read`: f16 and bf16 elements widened to f32 once,
// on load.
Type tile_value(const Spec& spec, const sb::Expr& read) {
  return float_t(compute_type(spec.tensors[read.ref].type));
}

// `product` appended to `body`, or for a batch of products (`batched`, the batch index first)
// a loop of it over the batch along the grid's z.
void over_products(const Spec& spec, const Statement& st, bool batched, Block product,
                   Block& body) {
  if (!batched) {
    append(body, std::move(product));
    return;
  }
  body.push_back(
      comment("Every thread of a block walks the same products, so the barriers stay uniform."));
  body.push_back(for_loop("sb_bz", gpu(GpuIndex::BlockZ),
                          extent(st.out, 0, spec.tensors[st.out].name), gpu(GpuIndex::GridDimZ),
                          ForKind::Serial, std::move(product)));
}

Block matmul_tile_body(const Spec& spec, const Statement& st, const MatmulMatch& m, int64_t tile) {
  SB_ASSERT(m.red && m.a && m.b && tile > 0, "a tiled matmul of a matched product");
  const sb::Expr& red = *m.red;
  const IndexVar& kv = st.vars[red.ref];
  const std::string& out = spec.tensors[st.out].name;
  const int base = m.batched ? 1 : 0;  // a batch of products: the batch index first
  const Type rt = float_t(scalar(red.type).printed_as);
  auto v = [](const char* n) { return var(n, int_t()); };
  const ExprPtr T = imm(tile), pitch = imm(tile + 1);
  const ExprPtr ty = v("sb_ty"), tx = v("sb_tx"), k0 = v("sb_k0"), hi = v("sb_hi");
  const ExprPtr kk = v("sb_kk"), bz = v("sb_bz");
  const Type at = tile_value(spec, *m.a), bt = tile_value(spec, *m.b);

  // Operand `read`'s tile element [k][row or column] (output dimension `xd` across k), zero
  // outside the operand; consecutive threads (x) load along its contiguous subscript.
  auto load_tile = [&](const std::string& tile_name, const sb::Expr& read, bool k_inner,
                       bool batched, int xd, const ExprPtr& first) {
    const ExprPtr along = k_inner ? tx : ty, across = k_inner ? ty : tx;
    const ExprPtr x = add(first, across), k = add(k0, along);
    const Type t = tile_value(spec, read);
    const std::vector<ExprPtr> at_elem = {add(mul(along, pitch), across)};
    Block in;
    if (batched) in.push_back(let_index(0, st.vars[0].name, bz));
    in.push_back(let_index(xd, st.vars[xd].name, x));
    in.push_back(let_index(red.ref, kv.name, k));
    in.push_back(store(tile_name, t, at_elem, spec_leaf(spec, st, read, t)));
    const ExprPtr inside =
        binary(BinOp::And, binary(BinOp::Lt, x, extent(st.out, xd, out)), binary(BinOp::Lt, k, hi));
    return if_then(inside, std::move(in),
                   {store(tile_name, t, at_elem, identity(ReduceOp::Sum, t.elem))});
  };
  // The products of the tiles' first `count` k, folded into sb_acc.
  auto products = [&](ExprPtr count, ForKind kind) {
    const std::vector<Override> from_tiles = {{m.a, to_string(*m.a, spec, &st), var("sb_a", at)},
                                              {m.b, to_string(*m.b, spec, &st), var("sb_b", bt)}};
    return for_loop(
        "sb_kk", imm(0), std::move(count), imm(1), kind,
        {let("sb_a", load("sb_ta", at, {add(mul(kk, pitch), ty)})),
         let("sb_b", load("sb_tb", bt, {add(mul(kk, pitch), tx)})),
         fold("sb_acc", red.rop, rt, spec_leaf(spec, st, *red.args[0], rt, from_tiles))});
  };

  Block done;
  if (m.batched) done.push_back(let_index(0, st.vars[0].name, bz));
  done.push_back(let_index(base, st.vars[base].name, v("sb_row")));
  done.push_back(let_index(base + 1, st.vars[base + 1].name, v("sb_col")));
  done.push_back(compute({{&red, to_string(red, spec, &st), var("sb_acc", rt)}}));
  Block product = {
      let("sb_acc", identity(red.rop, rt.elem), /*mut=*/true),
      for_loop(
          "sb_k0", spec_leaf(spec, st, *kv.lo, int_t()), hi, T, ForKind::Serial,
          {load_tile("sb_ta", *m.a, m.a_k_inner, m.a_batched, base, mul(gpu(GpuIndex::BlockY), T)),
           load_tile("sb_tb", *m.b, m.b_k_inner, m.b_batched, base + 1,
                     mul(gpu(GpuIndex::BlockX), T)),
           barrier(),
           if_then(binary(BinOp::Le, add(k0, T), hi), {products(T, ForKind::Unrolled)},
                   {products(sub(hi, k0), ForKind::Serial)}),
           barrier()}),
      if_then(binary(BinOp::And, binary(BinOp::Lt, v("sb_row"), extent(st.out, base, out)),
                     binary(BinOp::Lt, v("sb_col"), extent(st.out, base + 1, out))),
              std::move(done))};

  Block body = {let("sb_ty", gpu(GpuIndex::ThreadY)), let("sb_tx", gpu(GpuIndex::ThreadX)),
                let("sb_row", add(mul(gpu(GpuIndex::BlockY), T), ty)),
                let("sb_col", add(mul(gpu(GpuIndex::BlockX), T), tx)),
                let("sb_hi", spec_leaf(spec, st, *kv.hi, int_t()))};
  over_products(spec, st, m.batched, std::move(product), body);
  return {comment("Both tiles are stored [k][row or column] with rows padded to " +
                  std::to_string(tile + 1) + " (no bank conflicts)."),
          comment("The tile of " + to_string(*m.a, spec, &st) + ", then of " +
                  to_string(*m.b, spec, &st) + "."),
          alloc("sb_ta", at, {imm(tile * (tile + 1))}, MemScope::Shared,
                {alloc("sb_tb", bt, {imm(tile * (tile + 1))}, MemScope::Shared, std::move(body))})};
}

Block register_blocked_body(const Spec& spec, const Statement& st, const MatmulMatch& m,
                            const RegisterTile& t) {
  SB_ASSERT(m.red && m.a && m.b && t.bm % t.tm == 0 && t.bn % t.tn == 0,
            "a register-blocked matmul of a matched product, its tiles whole per thread");
  const sb::Expr& red = *m.red;
  const IndexVar& kv = st.vars[red.ref];
  const std::string& out = spec.tensors[st.out].name;
  const int base = m.batched ? 1 : 0;  // a batch of products: the batch index first
  const Type rt = float_t(scalar(red.type).printed_as);
  const int64_t RM = t.bm / t.tm, RN = t.bn / t.tn, NT = RM * RN;
  auto v = [](const std::string& n) { return var(n, int_t()); };
  const ExprPtr tid = v("sb_tid"), tr = v("sb_tr"), tc = v("sb_tc"), k0 = v("sb_k0");
  const ExprPtr hi = v("sb_hi"), bz = v("sb_bz"), mv = v("sb_m"), nv = v("sb_n"), kk = v("sb_kk");
  const Type at = tile_value(spec, *m.a), bt = tile_value(spec, *m.b);
  auto unrolled = [&](const std::string& n, int64_t count, Block body) {
    return for_loop(n, imm(0), imm(count), imm(1), ForKind::Unrolled, std::move(body));
  };

  Block body = {let("sb_tid", gpu(GpuIndex::ThreadX)),
                comment("Rows sb_tr + m * " + std::to_string(RM) + " and columns sb_tc + n * " +
                        std::to_string(RN) + " of the block's tile."),
                let("sb_tr", div(tid, imm(RN))),
                let("sb_tc", mod(tid, imm(RN))),
                let("sb_row0", mul(gpu(GpuIndex::BlockY), imm(t.bm))),
                let("sb_col0", mul(gpu(GpuIndex::BlockX), imm(t.bn))),
                let("sb_lo", spec_leaf(spec, st, *kv.lo, int_t())),
                let("sb_hi", spec_leaf(spec, st, *kv.hi, int_t()))};

  // Each operand's tile, loaded by the block's threads in turn.
  struct Operand {
    const sb::Expr* read;
    bool k_inner, batched;
    int xd;  // the output dimension across k
    int64_t X;
    ExprPtr first;  // the tile's first row or column
    std::string tile, flag;
    Type value;
  };
  const std::vector<Operand> ops = {
      {m.a, m.a_k_inner, m.a_batched, base, t.bm, v("sb_row0"), "sb_ta", "sb_vec_a", at},
      {m.b, m.b_k_inner, m.b_batched, base + 1, t.bn, v("sb_col0"), "sb_tb", "sb_vec_b", bt}};
  Block loads;
  for (const Operand& o : ops) {
    const Tensor& tn = spec.tensors[o.read->ref];
    const int W = 16 / dtype_bytes(tn.type);
    // Vectors: no boundary rule, not f16 or bf16 (those load one at a time, widened), and the
    // tile's contiguous extent a multiple of W.
    const bool vec = tn.boundary == Boundary::None && !is_storage_type(tn.type) &&
                     (o.k_inner ? t.bk : o.X) % W == 0;
    const int64_t inner = o.k_inner ? t.bk : o.X, per = vec ? W : 1;
    const ExprPtr lim = extent(st.out, o.xd, out), X = imm(o.X);
    const ExprPtr r = v("sb_r"), c = v("sb_c");
    const ExprPtr in_k = o.k_inner ? c : r, in_x = o.k_inner ? r : c;
    if (vec) {
      // Rows of a whole number of vectors: the last (contiguous) extent a multiple of W; a
      // batched operand's products then start on vectors too, each a whole number of rows
      // apart. Vectors start at k = lo + a multiple of bk (k contiguous), so lo must be one too
      // unless it is a literal multiple of W.
      const int last = static_cast<int>(o.read->args.size()) - 1;
      ExprPtr f =
          binary(BinOp::And, binary(BinOp::Eq, mod(address(o.read->ref, tn.name), imm(16)), imm(0)),
                 binary(BinOp::Eq, mod(extent(o.read->ref, last, tn.name), imm(W)), imm(0)));
      const bool lo_aligned =
          !o.k_inner || (kv.lo->kind == sb::ExprKind::IntLit && kv.lo->ival % W == 0);
      if (!lo_aligned)
        f = binary(BinOp::And, f, binary(BinOp::Eq, mod(v("sb_lo"), imm(W)), imm(0)));
      body.push_back(let(o.flag, f));
    }
    // The element at (x, k) into `dest`: zero outside the operand.
    auto guarded = [&](const ExprPtr& x, const ExprPtr& k, const ExprPtr& dest) {
      Block g;
      if (o.batched) g.push_back(let_index(0, st.vars[0].name, bz));
      g.push_back(let_index(o.xd, st.vars[o.xd].name, x));
      g.push_back(let_index(red.ref, kv.name, k));
      g.push_back(let("sb_x", identity(ReduceOp::Sum, o.value.elem), /*mut=*/true));
      g.push_back(
          if_then(binary(BinOp::And, binary(BinOp::Lt, index_var(o.xd, st.vars[o.xd].name), lim),
                         binary(BinOp::Lt, index_var(red.ref, kv.name), hi)),
                  {assign("sb_x", spec_leaf(spec, st, *o.read, o.value))}));
      g.push_back(store(o.tile, o.value, {dest}, var("sb_x", o.value)));
      return g;
    };
    Block each = {let("sb_r", div(v("sb_l"), imm(inner / per))),
                  let("sb_c", per > 1 ? mul(mod(v("sb_l"), imm(inner / per)), imm(per))
                                      : mod(v("sb_l"), imm(inner / per)))};
    const ExprPtr gx = add(o.first, in_x), gk = add(k0, in_k);
    if (!vec) {
      append(each, guarded(gx, gk, add(mul(in_k, X), in_x)));
    } else {
      const ExprPtr sgx = v("sb_gx"), sgk = v("sb_gk");
      each.push_back(let("sb_gx", gx));
      each.push_back(let("sb_gk", gk));
      auto dest = [&](const ExprPtr& q) {
        return o.k_inner ? add(mul(add(c, q), X), r) : add(add(mul(r, X), c), q);
      };
      const ExprPtr whole = o.k_inner ? binary(BinOp::And, binary(BinOp::Lt, sgx, lim),
                                               binary(BinOp::Le, add(sgk, imm(W)), hi))
                                      : binary(BinOp::And, binary(BinOp::Lt, sgk, hi),
                                               binary(BinOp::Le, add(sgx, imm(W)), lim));
      // The row-major offset of the vector's first element.
      const ExprPtr row = o.k_inner ? sgx : sgk, col = o.k_inner ? sgk : sgx;
      const int last = static_cast<int>(o.read->args.size()) - 1;
      ExprPtr at_row = row;
      if (o.batched) at_row = add(mul(bz, extent(o.read->ref, 1, tn.name)), row);
      const ExprPtr flat = add(mul(at_row, extent(o.read->ref, last, tn.name)), col);
      const Type vt = gpu_vec_t(tn.type, W);
      Block whole_v = {let("sb_v", element(o.read->ref, vt, flat, tn.name))};
      for (int q = 0; q < W; ++q)
        whole_v.push_back(store(o.tile, o.value, {dest(imm(q))}, lane(var("sb_v", vt), q)));
      const ExprPtr sq = v("sb_q");
      Block part =
          guarded(o.k_inner ? sgx : add(sgx, sq), o.k_inner ? add(sgk, sq) : sgk, dest(sq));
      each.push_back(if_then(binary(BinOp::And, var(o.flag, bool_t()), whole), std::move(whole_v),
                             {unrolled("sb_q", W, std::move(part))}));
    }
    loads.push_back(comment("Tile of " + to_string(*o.read, spec, &st) + ": " +
                            std::to_string(t.bk) + " k x " + std::to_string(o.X) +
                            ", loaded along " + (o.k_inner ? kv.name : st.vars[o.xd].name) +
                            (vec ? " in vectors of " + std::to_string(W) : std::string()) + "."));
    loads.push_back(
        for_loop("sb_l", tid, imm(t.bk * o.X / per), imm(NT), ForKind::Serial, std::move(each)));
  }

  // The products of the tiles' first `count` k, folded into the registers.
  auto products = [&](ExprPtr count, ForKind kind) {
    const std::vector<Override> from_regs = {
        {m.a, to_string(*m.a, spec, &st), load("sb_ra", at, {mv})},
        {m.b, to_string(*m.b, spec, &st), load("sb_rb", bt, {nv})}};
    return for_loop(
        "sb_kk", imm(0), std::move(count), imm(1), kind,
        {unrolled("sb_m", t.tm,
                  {store("sb_ra", at, {mv},
                         load("sb_ta", at, {add(add(mul(kk, imm(t.bm)), tr), mul(mv, imm(RM)))}))}),
         unrolled("sb_n", t.tn,
                  {store("sb_rb", bt, {nv},
                         load("sb_tb", bt, {add(add(mul(kk, imm(t.bn)), tc), mul(nv, imm(RN)))}))}),
         unrolled("sb_m", t.tm,
                  {unrolled("sb_n", t.tn,
                            {fold_at("sb_acc", {mv, nv}, red.rop, rt,
                                     spec_leaf(spec, st, *red.args[0], rt, from_regs))})})});
  };
  append(loads, {barrier(),
                 if_then(binary(BinOp::Le, add(k0, imm(t.bk)), hi),
                         {products(imm(t.bk), ForKind::Unrolled)},
                         {products(sub(hi, k0), ForKind::Serial)}),
                 barrier()});

  Block done;
  if (m.batched) done.push_back(let_index(0, st.vars[0].name, bz));
  const ExprPtr iv = index_var(base, st.vars[base].name),
                jv = index_var(base + 1, st.vars[base + 1].name);
  done.push_back(unrolled(
      "sb_m", t.tm,
      {unrolled("sb_n", t.tn,
                {let_index(base, st.vars[base].name, add(add(v("sb_row0"), tr), mul(mv, imm(RM)))),
                 let_index(base + 1, st.vars[base + 1].name,
                           add(add(v("sb_col0"), tc), mul(nv, imm(RN)))),
                 if_then(binary(BinOp::And, binary(BinOp::Lt, iv, extent(st.out, base, out)),
                                binary(BinOp::Lt, jv, extent(st.out, base + 1, out))),
                         {compute({{&red, to_string(red, spec, &st),
                                    load("sb_acc", rt, {mv, nv})}})})})}));
  Block product = {
      unrolled(
          "sb_m", t.tm,
          {unrolled("sb_n", t.tn, {store("sb_acc", rt, {mv, nv}, identity(red.rop, rt.elem))})}),
      for_loop("sb_k0", v("sb_lo"), hi, imm(t.bk), ForKind::Serial, std::move(loads))};
  append(product, std::move(done));
  Block regs = {
      alloc("sb_acc", rt, {imm(t.tm), imm(t.tn)}, MemScope::Register,
            {alloc("sb_ra", at, {imm(t.tm)}, MemScope::Register,
                   {alloc("sb_rb", bt, {imm(t.tn)}, MemScope::Register, std::move(product))})})};
  over_products(spec, st, m.batched, std::move(regs), body);
  return {comment("The [k][row] tile of " + to_string(*m.a, spec, &st) +
                  ", then the [k][column] tile of " + to_string(*m.b, spec, &st) + "."),
          alloc("sb_ta", at, {imm(t.bk * t.bm)}, MemScope::Shared,
                {alloc("sb_tb", bt, {imm(t.bk * t.bn)}, MemScope::Shared, std::move(body))})};
}

// The block's fold of `acc` (every thread's value of reduction `op` over `t`), `tid` the thread's
// index: warp shuffles, then one value per warp through shared memory (sb_warps) folded by the
// first warp. Afterwards the first warp's `acc` is the block's total.
Block block_fold_body(const std::string& acc, ReduceOp op, DType t, const ExprPtr& tid,
                      int64_t block_size) {
  const int64_t nw = block_size / 32;
  const Type vt = float_t(t);
  const ExprPtr a = var(acc, vt);
  Block b = {assign(acc, warp(WarpOp::AllReduce, op, a))};
  if (nw == 1) return b;
  b.push_back(comment("One value per warp."));
  b.push_back(alloc("sb_warps", vt, {imm(nw)}, MemScope::Shared,
                    {if_then(binary(BinOp::Eq, mod(tid, imm(32)), imm(0)),
                             {store("sb_warps", vt, {div(tid, imm(32))}, a)}),
                     barrier(),
                     if_then(binary(BinOp::Lt, tid, imm(32)),
                             {assign(acc, identity(op, t)),
                              if_then(binary(BinOp::Lt, tid, imm(nw)),
                                      {assign(acc, load("sb_warps", vt, {tid}))}),
                              assign(acc, warp(WarpOp::AllReduce, op, a))})}));
  return b;
}

// The block's fold of `acc` through a shared-memory tree (sb_red, `block_size` elements, which
// the caller allocates): each thread's value stored, then halved in steps, a barrier after each.
// Afterwards sb_red[0] is the block's total.
Block block_tree_body(const std::string& acc, ReduceOp op, DType t, const ExprPtr& tid,
                      int64_t block_size) {
  const Type vt = float_t(t);
  const ExprPtr s = var("sb_s", int_t());
  return {store("sb_red", vt, {tid}, var(acc, vt)), barrier(),
          let("sb_s", imm(block_size / 2), /*mut=*/true),
          while_loop(binary(BinOp::Gt, s, imm(0)),
                     {if_then(binary(BinOp::Lt, tid, s),
                              {let("sb_a", load("sb_red", vt, {tid}), /*mut=*/true),
                               fold("sb_a", op, vt, load("sb_red", vt, {add(tid, s)})),
                               store("sb_red", vt, {tid}, var("sb_a", vt))}),
                      barrier(), assign("sb_s", div(s, imm(2)))})};
}

// The index of output dimension `d` of statement `st` at flat output index `flat` (row-major):
// flat / (extents after d) % extent d; the outermost needs no remainder.
ExprPtr output_index(const Spec& spec, const Statement& st, size_t d, const ExprPtr& flat) {
  const std::string& out = spec.tensors[st.out].name;
  ExprPtr e = flat;
  for (size_t j = st.rank() - 1; j > d; --j) e = div(e, extent(st.out, static_cast<int>(j), out));
  if (d > 0) e = mod(e, extent(st.out, static_cast<int>(d), out));
  return e;
}

// Lets binding statement `st`'s output indices from the flat output index `flat` (row-major).
Block bind_outputs_body(const Spec& spec, const Statement& st, const ExprPtr& flat) {
  Block b;
  for (size_t d = 0; d < st.rank(); ++d)
    b.push_back(let_index(static_cast<int>(d), st.vars[d].name, output_index(spec, st, d, flat)));
  return b;
}

// The number of output elements of statement `st` (the product of the output's extents).
ExprPtr output_count_of(const Spec& spec, const Statement& st) {
  const std::string& out = spec.tensors[st.out].name;
  SB_ASSERT(st.rank() > 0, "the element count of a scalar output");
  ExprPtr count = extent(st.out, 0, out);
  for (size_t d = 1; d < st.rank(); ++d)
    count = mul(count, extent(st.out, static_cast<int>(d), out));
  return count;
}

Block element_body_of(const Spec& spec, const Statement& st, bool grid_stride) {
  if (st.rank() == 0) return {comment("A scalar output: one thread."), compute()};
  const ExprPtr t = var("sb_t", int_t()), total = var("sb_total", int_t());
  const ExprPtr first =
      add(mul(gpu(GpuIndex::BlockX), gpu(GpuIndex::BlockDimX)), gpu(GpuIndex::ThreadX));
  Block per = bind_outputs_body(spec, st, t);
  per.push_back(compute());
  Block b = {let("sb_total", output_count_of(spec, st))};
  if (grid_stride) {
    b.push_back(let("sb_first", first));
    b.push_back(let("sb_stride", mul(gpu(GpuIndex::BlockDimX), gpu(GpuIndex::GridDimX))));
    b.push_back(for_loop("sb_t", var("sb_first", int_t()), total, var("sb_stride", int_t()),
                         ForKind::Serial, std::move(per)));
    return b;
  }
  b.push_back(let("sb_t", first));
  b.push_back(if_then(binary(BinOp::Ge, t, total), {ret()}));
  append(b, std::move(per));
  return b;
}

// The loop of reduction `red`'s variable from lo + `first` while below hi by `step`, folding
// each term into sb_acc.
StmtPtr fold_range(const Spec& spec, const Statement& st, const sb::Expr& red, ExprPtr first,
                   ExprPtr step) {
  const IndexVar& rv = st.vars[red.ref];
  const Type vt = float_t(scalar(red.type).printed_as);
  if (!is_zero_literal(*rv.lo)) first = add(spec_leaf(spec, st, *rv.lo, int_t()), std::move(first));
  return for_index(red.ref, rv.name, std::move(first), spec_leaf(spec, st, *rv.hi, int_t()),
                   std::move(step),
                   {fold("sb_acc", red.rop, vt, spec_leaf(spec, st, *red.args[0], vt))});
}

// The rest of the statement applied to the reduced value sb_acc.
StmtPtr apply_rest(const Spec& spec, const Statement& st, const sb::Expr& red) {
  return compute(
      {{&red, to_string(red, spec, &st), var("sb_acc", float_t(scalar(red.type).printed_as))}});
}

ScalarReduceBodies scalar_reduce_bodies_of(const Spec& spec, const Statement& st,
                                           const sb::Expr& red, GpuKernel kind, int64_t block_size,
                                           const std::string& part) {
  SB_ASSERT(kind == GpuKernel::TreeReduce || kind == GpuKernel::WarpReduce ||
                kind == GpuKernel::AtomicReduce,
            "a scalar reduction of a reduction kernel form");
  const DType t = scalar(red.type).printed_as;
  const Type vt = float_t(t);
  const bool tree = kind == GpuKernel::TreeReduce;
  const ExprPtr tid = var("sb_tid", int_t()), bs = imm(block_size);
  const ExprPtr acc = var("sb_acc", vt);
  // A tree's shared array holds the body that follows.
  auto with_tree = [&](Block body) {
    if (!tree) return body;
    return Block{alloc("sb_red", vt, {bs}, MemScope::Shared, std::move(body))};
  };
  auto block_combine = [&] {
    return tree ? block_tree_body("sb_acc", red.rop, t, tid, block_size)
                : block_fold_body("sb_acc", red.rop, t, tid, block_size);
  };
  const ExprPtr block_total = tree ? load("sb_red", vt, {imm(0)}) : acc;

  ScalarReduceBodies out;
  {
    Block b = {let("sb_acc", identity(red.rop, t), /*mut=*/true),
               fold_range(spec, st, red, add(mul(gpu(GpuIndex::BlockX), bs), tid),
                          mul(bs, gpu(GpuIndex::GridDimX)))};
    append(b, block_combine());
    if (kind == GpuKernel::AtomicReduce)
      b.push_back(
          if_then(binary(BinOp::Eq, tid, imm(0)), {atomic_fold(st.out, imm(0), red.rop, vt, acc)}));
    else
      b.push_back(if_then(binary(BinOp::Eq, tid, imm(0)),
                          {store(part, vt, {gpu(GpuIndex::BlockX)}, block_total)}));
    out.partial = {let("sb_tid", gpu(GpuIndex::ThreadX))};
    append(out.partial, with_tree(std::move(b)));
  }
  if (kind != GpuKernel::AtomicReduce) {
    Block b = {let("sb_acc", identity(red.rop, t), /*mut=*/true),
               for_loop("sb_p", tid, var("sb_parts", int_t()), bs, ForKind::Serial,
                        {fold("sb_acc", red.rop, vt, load(part, vt, {var("sb_p", int_t())}))})};
    append(b, block_combine());
    Block last;
    if (tree) last.push_back(assign("sb_acc", block_total));
    last.push_back(apply_rest(spec, st, red));
    b.push_back(if_then(binary(BinOp::Eq, tid, imm(0)), std::move(last)));
    out.final = {let("sb_tid", gpu(GpuIndex::ThreadX))};
    append(out.final, with_tree(std::move(b)));
  }
  return out;
}

Block row_reduce_body_of(const Spec& spec, const Statement& st, const sb::Expr& red, bool warp,
                         int64_t block_size) {
  const DType t = scalar(red.type).printed_as;
  const Type vt = float_t(t);
  const ExprPtr tid = var("sb_tid", int_t()), lane = var("sb_lane", int_t());
  const ExprPtr row = var("sb_t", int_t()), total = var("sb_total", int_t());
  const ExprPtr count = output_count_of(spec, st);

  Block per_row = bind_outputs_body(spec, st, row);
  per_row.push_back(let("sb_acc", identity(red.rop, t), /*mut=*/true));
  per_row.push_back(fold_range(spec, st, red, warp ? lane : tid, warp ? imm(32) : imm(block_size)));
  if (warp) {
    per_row.push_back(assign("sb_acc", loops::warp(WarpOp::AllReduce, red.rop, var("sb_acc", vt))));
    per_row.push_back(if_then(binary(BinOp::Eq, lane, imm(0)), {apply_rest(spec, st, red)}));
  } else {
    append(per_row, block_tree_body("sb_acc", red.rop, t, tid, block_size));
    per_row.push_back(
        if_then(binary(BinOp::Eq, tid, imm(0)),
                {assign("sb_acc", load("sb_red", vt, {imm(0)})), apply_rest(spec, st, red)}));
  }

  Block b = {let("sb_total", count)};
  if (warp) {
    b.push_back(let("sb_lane", mod(tid, imm(32))));
    b.push_back(
        comment("One warp per output element: the loop bound is the same for all its lanes."));
    b.push_back(let("sb_first",
                    div(add(mul(gpu(GpuIndex::BlockX), gpu(GpuIndex::BlockDimX)), tid), imm(32))));
    b.push_back(
        let("sb_stride", mul(gpu(GpuIndex::GridDimX), div(gpu(GpuIndex::BlockDimX), imm(32)))));
    b.push_back(for_loop("sb_t", var("sb_first", int_t()), total, var("sb_stride", int_t()),
                         ForKind::Serial, std::move(per_row)));
  } else {
    b.push_back(comment("One block per output element."));
    b.push_back(for_loop("sb_t", gpu(GpuIndex::BlockX), total, gpu(GpuIndex::GridDimX),
                         ForKind::Serial, std::move(per_row)));
  }
  Block body = {let("sb_tid", gpu(GpuIndex::ThreadX))};
  if (warp) {
    append(body, std::move(b));
  } else {
    body.push_back(alloc("sb_red", vt, {imm(block_size)}, MemScope::Shared, std::move(b)));
  }
  return body;
}

// c * x (c a non-zero coefficient), folded into `acc` (null: x alone).
ExprPtr add_term(ExprPtr acc, int64_t c, ExprPtr x) {
  SB_ASSERT(c != 0, "a term of coefficient 0");
  if (!acc) return c == 1 ? x : mul(imm(c), x);
  // A negative coefficient subtracts its magnitude (the least int64 has none: it is added).
  if (c < 0 && c != std::numeric_limits<int64_t>::min())
    return sub(std::move(acc), c == -1 ? std::move(x) : mul(imm(-c), std::move(x)));
  return add(std::move(acc), c == 1 ? std::move(x) : mul(imm(c), std::move(x)));
}

Block halo_lets_body(const Spec& spec, const Statement& st, const StencilMatch& m) {
  // An offset form's least (`upper` false) or greatest value over the reduction ranges.
  auto bound = [&](const Affine& a, bool upper) {
    ExprPtr s;
    for (const auto& [sz, c] : a.sizes) s = add_term(s, c, size(sz, spec.sizes[sz].name));
    for (const AffineAtom& t : a.atoms)
      s = add_term(s, t.coef, spec_leaf(spec, st, *t.expr, int_t()));
    if (a.constant != 0) s = s ? add(s, imm(a.constant)) : imm(a.constant);
    for (const auto& [v, c] : a.vars) {
      const IndexVar& var = st.vars[v];
      const bool use_hi = (c > 0) == upper;
      s = add_term(s, c,
                   use_hi ? sub(spec_leaf(spec, st, *var.hi, int_t()), imm(1))
                          : spec_leaf(spec, st, *var.lo, int_t()));
    }
    return s ? s : imm(0);
  };
  Block b;
  for (size_t d = 0; d < st.rank(); ++d) {
    const std::string ds = std::to_string(d), lo = "sb_lo" + ds, hi = "sb_hi" + ds;
    b.push_back(comment("Offsets of dimension " + ds + " lie in [" + lo + ", " + hi + "]."));
    bool literal = true;
    int64_t lo_c = 0, hi_c = 0;
    for (const auto& offs : m.offsets) {
      literal = literal && offs[d].is_constant();
      lo_c = std::min(lo_c, offs[d].constant);
      hi_c = std::max(hi_c, offs[d].constant);
    }
    if (literal) {
      b.push_back(let(lo, imm(lo_c)));
      b.push_back(let(hi, imm(hi_c)));
      continue;
    }
    b.push_back(let(lo, imm(0), /*mut=*/true));
    b.push_back(let(hi, imm(0), /*mut=*/true));
    std::set<std::string> seen;
    for (const auto& offs : m.offsets) {
      const Affine& a = offs[d];
      if (a.is_constant() && a.constant == 0) continue;
      const ExprPtr blo = bound(a, false), bhi = bound(a, true);
      if (!seen.insert(to_string(*blo) + "\n" + to_string(*bhi)).second) continue;
      b.push_back(assign(lo, min(var(lo, int_t()), blo)));
      b.push_back(assign(hi, max(var(hi, int_t()), bhi)));
    }
  }
  return b;
}

Block stencil_tile_body(const Spec& spec, const Statement& st, const StencilMatch& m,
                        const std::vector<int64_t>& block) {
  const size_t rank = st.rank();
  SB_ASSERT(rank >= 1 && rank <= 3 && block.size() == rank, "a stencil of rank 1 to 3");
  const Tensor& X = spec.tensors[m.tensor];
  const DType xv = compute_type(X.type);  // the tile holds values (f32 for f16 and bf16)
  const Type vt = float_t(xv);
  // One name per element type: nvcc gives every `extern __shared__` array of a file one address.
  const std::string tile = std::string("sb_tile_") + dtype_name(xv);
  auto ds = [](size_t d) { return std::to_string(d); };
  auto v = [](const std::string& n) { return var(n, int_t()); };
  const GpuIndex threads_of[3] = {GpuIndex::ThreadX, GpuIndex::ThreadY, GpuIndex::ThreadZ};
  const GpuIndex blocks_of[3] = {GpuIndex::BlockX, GpuIndex::BlockY, GpuIndex::BlockZ};
  // The last dimension runs along x, the one before along y, the first of three along z.
  auto axis = [&](size_t d) { return rank - 1 - d; };

  Block b = halo_lets_body(spec, st, m);
  for (size_t d = 0; d < rank; ++d)
    b.push_back(
        let("sb_len" + ds(d), sub(add(imm(block[d]), v("sb_hi" + ds(d))), v("sb_lo" + ds(d)))));
  for (size_t d = 0; d < rank; ++d)
    b.push_back(let("sb_base" + ds(d),
                    add(mul(gpu(blocks_of[axis(d)]), imm(block[d])), v("sb_lo" + ds(d)))));
  // The block's threads, numbered x fastest, load the window's elements in row-major order.
  ExprPtr thread = gpu(GpuIndex::ThreadX);
  if (rank >= 2) thread = add(mul(gpu(GpuIndex::ThreadY), imm(block[rank - 1])), thread);
  if (rank == 3)
    thread = add(
        mul(add(mul(gpu(GpuIndex::ThreadZ), imm(block[1])), gpu(GpuIndex::ThreadY)), imm(block[2])),
        gpu(GpuIndex::ThreadX));
  ExprPtr count = v("sb_len0");
  int64_t threads = 1;
  for (size_t d = 1; d < rank; ++d) count = mul(count, v("sb_len" + ds(d)));
  for (int64_t e : block) threads *= e;

  Block fill;
  std::vector<ExprPtr> gs;
  for (size_t d = 0; d < rank; ++d) {
    ExprPtr pos = v("sb_l");
    ExprPtr inner;  // the product of the window's later extents
    for (size_t e = d + 1; e < rank; ++e)
      inner = inner ? mul(inner, v("sb_len" + ds(e))) : v("sb_len" + ds(e));
    if (inner) pos = div(pos, inner);
    if (d > 0) pos = mod(pos, v("sb_len" + ds(d)));
    fill.push_back(let("sb_g" + ds(d), add(v("sb_base" + ds(d)), pos)));
    gs.push_back(v("sb_g" + ds(d)));
  }
  // Row-major flat index of `subs` in X.
  auto flat = [&](const std::vector<ExprPtr>& subs) {
    ExprPtr acc = subs[0];
    for (size_t d = 1; d < rank; ++d)
      acc = add(mul(acc, extent(m.tensor, static_cast<int>(d), X.name)), subs[d]);
    return acc;
  };
  ExprPtr inside;
  for (size_t d = 0; d < rank; ++d) {
    ExprPtr in_d = binary(BinOp::And, binary(BinOp::Ge, gs[d], imm(0)),
                          binary(BinOp::Lt, gs[d], extent(m.tensor, static_cast<int>(d), X.name)));
    inside = inside ? binary(BinOp::And, inside, in_d) : in_d;
  }
  fill.push_back(comment("Outside " + X.name + ": " +
                         (X.boundary == Boundary::Zero    ? "zero by its boundary rule."
                          : X.boundary == Boundary::Clamp ? "clamped by its boundary rule."
                                                          : "never read.")));
  if (X.boundary == Boundary::Clamp) {
    // Every position reads its clamped one, the same element inside the tensor.
    std::vector<ExprPtr> cl;
    for (size_t d = 0; d < rank; ++d)
      cl.push_back(
          min(max(gs[d], imm(0)), sub(extent(m.tensor, static_cast<int>(d), X.name), imm(1))));
    fill.push_back(let("sb_x", element(m.tensor, vt, flat(cl), X.name)));
  } else {
    fill.push_back(let("sb_x", identity(ReduceOp::Sum, xv), /*mut=*/true));
    fill.push_back(if_then(inside, {assign("sb_x", element(m.tensor, vt, flat(gs), X.name))}));
  }
  fill.push_back(store(tile, vt, {v("sb_l")}, var("sb_x", vt)));

  b.push_back(for_loop("sb_l", thread, count, imm(threads), ForKind::Serial, std::move(fill)));
  b.push_back(barrier());
  ExprPtr cond;
  for (size_t d = 0; d < rank; ++d) {
    b.push_back(
        let_index(static_cast<int>(d), st.vars[d].name,
                  add(mul(gpu(blocks_of[axis(d)]), imm(block[d])), gpu(threads_of[axis(d)]))));
    ExprPtr c = binary(BinOp::Lt, index_var(static_cast<int>(d), st.vars[d].name),
                       extent(st.out, static_cast<int>(d), spec.tensors[st.out].name));
    cond = cond ? binary(BinOp::And, cond, c) : c;
  }
  std::vector<Override> from_tile;
  for (const sb::Expr* r : m.reads) {
    ExprPtr idx;
    for (size_t d = 0; d < rank; ++d) {
      const ExprPtr rel = sub(spec_leaf(spec, st, *r->args[d], int_t()), v("sb_base" + ds(d)));
      idx = d == 0 ? rel : add(mul(idx, v("sb_len" + ds(d))), rel);
    }
    from_tile.push_back({r, to_string(*r, spec, &st), load(tile, vt, {idx})});
  }
  b.push_back(if_then(cond, {compute(std::move(from_tile))}));
  return {comment(X.name + " over the block's outputs and their halo"),
          alloc(tile, vt, {}, MemScope::Shared, std::move(b))};
}

ScanBodies scan_bodies_of(const Spec& spec, const Statement& st, const ScanMatch& m,
                          int64_t block_size, const std::string& part,
                          std::optional<int64_t> shift) {
  SB_ASSERT(st.rank() == 1 && m.red && block_size % 32 == 0, "a scan of a rank-1 output");
  const sb::Expr& red = *m.red;
  const DType t = scalar(red.type).printed_as;  // the value type (lower/loop_ir.h's elem)
  const Type vt = float_t(t);
  const int64_t nw = block_size / 32;
  const IndexVar& rv = st.vars[red.ref];
  const int k = red.ref;
  const std::string& on = st.vars[0].name;
  const ExprPtr tid = var("sb_tid", int_t()), bs = imm(block_size);
  const ExprPtr lo = var("sb_lo", int_t()), p = var("sb_p", int_t());
  const ExprPtr begin = var("sb_begin", int_t()), end = var("sb_end", int_t());
  const ExprPtr v = var("sb_v", vt), carry = var("sb_carry", vt);
  auto lt = [](ExprPtr a, ExprPtr b) { return binary(BinOp::Lt, std::move(a), std::move(b)); };
  auto ws_at = [&](ExprPtr i) { return load("sb_ws", vt, {std::move(i)}); };
  auto term = [&] { return spec_leaf(spec, st, *red.args[0], vt); };
  auto lo_expr = [&] { return spec_leaf(spec, st, *rv.lo, int_t()); };
  // The chunk of this block: elements [sb_begin, sb_end).
  auto chunk = [&] {
    return Block{let("sb_begin", mul(gpu(GpuIndex::BlockX), var("sb_chunk", int_t()))),
                 let("sb_end", min(add(begin, var("sb_chunk", int_t())), var("sb_len", int_t())))};
  };
  // The block-wide inclusive scan of sb_v (one element per thread), continued from sb_carry,
  // and what follows each tile of it.
  auto block_scan = [&] {
    return Block{assign("sb_v", warp(WarpOp::Scan, red.rop, v)),
                 if_then(binary(BinOp::Eq, mod(tid, imm(32)), imm(31)),
                         {store("sb_ws", vt, {div(tid, imm(32))}, v)}),
                 barrier(),
                 if_then(lt(tid, imm(32)),
                         {let("sb_w", identity(red.rop, t), /*mut=*/true),
                          if_then(lt(tid, imm(nw)), {assign("sb_w", ws_at(tid))}),
                          assign("sb_w", warp(WarpOp::Scan, red.rop, var("sb_w", vt))),
                          if_then(lt(tid, imm(nw)), {store("sb_ws", vt, {tid}, var("sb_w", vt))})}),
                 barrier(),
                 if_then(binary(BinOp::Ge, tid, imm(32)),
                         {fold("sb_v", red.rop, vt, ws_at(sub(div(tid, imm(32)), imm(1))))}),
                 fold("sb_v", red.rop, vt, carry)};
  };
  auto tile_end = [&] {
    return Block{let("sb_tile_total", ws_at(imm(nw - 1))),
                 fold("sb_carry", red.rop, vt, var("sb_tile_total", vt)),
                 comment("sb_ws is rewritten by the next tile."), barrier()};
  };
  auto with_ws = [&](Block body) {
    return Block{comment("One value per warp."),
                 alloc("sb_ws", vt, {imm(nw)}, MemScope::Shared, std::move(body))};
  };
  ScanBodies out;
  // Phase 1.
  {
    Block b = {let("sb_tid", gpu(GpuIndex::ThreadX)),
               comment("Element p is " + rv.name + " = sb_lo + p."), let("sb_lo", lo_expr())};
    append(b, chunk());
    b.push_back(let("sb_acc", identity(red.rop, t), /*mut=*/true));
    b.push_back(for_loop("sb_p", add(begin, tid), end, bs, ForKind::Serial,
                         {let_index(k, rv.name, add(lo, p)), fold("sb_acc", red.rop, vt, term())}));
    append(b, block_fold_body("sb_acc", red.rop, t, tid, block_size));
    b.push_back(if_then(binary(BinOp::Eq, tid, imm(0)),
                        {store(part, vt, {gpu(GpuIndex::BlockX)}, var("sb_acc", vt))}));
    out.partial = std::move(b);
  }
  // Phase 2.
  {
    const ExprPtr parts = var("sb_parts", int_t());
    Block tile = {let("sb_p", add(var("sb_p0", int_t()), tid)),
                  let("sb_v", identity(red.rop, t), /*mut=*/true),
                  if_then(lt(p, parts), {assign("sb_v", load(part, vt, {p}))})};
    append(tile, block_scan());
    tile.push_back(if_then(lt(p, parts), {store(part, vt, {p}, v)}));
    append(tile, tile_end());
    Block b = {let("sb_carry", identity(red.rop, t), /*mut=*/true),
               for_loop("sb_p0", imm(0), parts, bs, ForKind::Serial, std::move(tile))};
    out.carry = {let("sb_tid", gpu(GpuIndex::ThreadX))};
    append(out.carry, with_ws(std::move(b)));
  }
  // Phase 3.
  {
    const ExprPtr shift_v = var("sb_shift", int_t());
    Block b;
    if (!shift || *shift > 0) {
      b.push_back(comment("Outputs before the first element fold nothing: the identity."));
      b.push_back(for_index(
          0, on, add(mul(gpu(GpuIndex::BlockX), bs), tid),
          min(shift_v, extent(st.out, 0, spec.tensors[st.out].name)),
          mul(gpu(GpuIndex::GridDimX), bs),
          {let("sb_v", identity(red.rop, t)), compute({{&red, to_string(red, spec, &st), v}})}));
    }
    b.push_back(let("sb_lo", lo_expr()));
    append(b, chunk());
    b.push_back(let("sb_carry", identity(red.rop, t), /*mut=*/true));
    b.push_back(
        if_then(binary(BinOp::Gt, gpu(GpuIndex::BlockX), imm(0)),
                {assign("sb_carry", load(part, vt, {sub(gpu(GpuIndex::BlockX), imm(1))}))}));
    Block tile = {let("sb_p", add(var("sb_p0", int_t()), tid)),
                  let("sb_v", identity(red.rop, t), /*mut=*/true),
                  if_then(lt(p, end), {let_index(k, rv.name, add(lo, p)), assign("sb_v", term())})};
    append(tile, block_scan());
    ExprPtr stores = lt(p, end);
    if (!shift || *shift < 0)
      stores = binary(BinOp::And, stores, binary(BinOp::Ge, add(p, shift_v), imm(0)));
    tile.push_back(if_then(stores, {let_index(0, on, add(p, shift_v)),
                                    compute({{&red, to_string(red, spec, &st), v}})}));
    append(tile, tile_end());
    b.push_back(for_loop("sb_p0", begin, end, bs, ForKind::Serial, std::move(tile)));
    out.offsets = {let("sb_tid", gpu(GpuIndex::ThreadX))};
    append(out.offsets, with_ws(std::move(b)));
  }
  return out;
}

// The row-major flat index of read `r` of statement `st` at its subscripts (one of an integer
// type, a read of an integer tensor, converted to an index).
ExprPtr read_flat(const Spec& spec, const Statement& st, const sb::Expr& r) {
  const std::string& name = spec.tensors[r.ref].name;
  auto sub = [&](size_t d) {
    const sb::Expr& a = *r.args[d];
    if (scalar(a.type).kind == ScalarKind::SignedInt)
      return cast(int_t(), spec_leaf(spec, st, a, float_t(a.type)));
    return spec_leaf(spec, st, a, int_t());
  };
  ExprPtr f = sub(0);
  for (size_t d = 1; d < r.args.size(); ++d)
    f = add(mul(f, extent(r.ref, static_cast<int>(d), name)), sub(d));
  return f;
}

// The output dimensions spec expression `e` reads outside the expressions of `skip`.
void dims_used(const sb::Expr& e, const Statement& st, const std::set<const sb::Expr*>& skip,
               std::set<int>* dims) {
  if (skip.count(&e)) return;
  if (e.kind == sb::ExprKind::IndexVar && static_cast<size_t>(e.ref) < st.rank())
    dims->insert(e.ref);
  for (const auto& a : e.args) dims_used(*a, st, skip, dims);
}

// Whether every tensor of `ts` is aligned to `bytes`.
ExprPtr all_aligned(const Spec& spec, const std::vector<int>& ts, int64_t bytes) {
  ExprPtr c;
  for (int t : ts) {
    ExprPtr a = binary(BinOp::Eq, mod(address(t, spec.tensors[t].name), imm(bytes)), imm(0));
    c = c ? binary(BinOp::And, c, a) : a;
  }
  return c;
}

// The tensors of m.contiguous, in order of first appearance.
std::vector<int> vector_tensors(const VectorizeMatch& m) {
  std::vector<int> vt;
  for (const sb::Expr* r : m.contiguous)
    if (std::find(vt.begin(), vt.end(), r->ref) == vt.end()) vt.push_back(r->ref);
  return vt;
}

Block vectorized_body_of(const Spec& spec, const Statement& st, const VectorizeMatch& m) {
  const std::string& out_name = spec.tensors[st.out].name;
  const DType ot = spec.tensors[st.out].type;
  const std::vector<int> vt = vector_tensors(m);  // the tensors loaded as vectors
  const int lanes = vector_lanes(spec, st, m);
  // Row-contiguous reads of the vector width load as vectors when the output's rows hold whole
  // vectors (checked at run time); narrower or wider ones stay per lane.
  std::vector<const sb::Expr*> rows;
  for (const sb::Expr* r : m.row_contiguous)
    if (dtype_bytes(spec.tensors[r->ref].type) * lanes == 16) rows.push_back(r);

  const ExprPtr v = var("sb_v", int_t());
  const ExprPtr stride = var("sb_stride", int_t());
  auto flat = [&](int q) { return q ? add(mul(imm(lanes), v), imm(q)) : mul(imm(lanes), v); };
  auto vec_of = [&](int t) { return gpu_vec_t(spec.tensors[t].type, lanes); };

  // The vector loop; `row_loads`: whether the reads in `rows` load as vectors.
  auto vector_loop = [&](bool row_loads) {
    Block body;
    for (int t : vt)
      body.push_back(let("sb_vec_" + spec.tensors[t].name,
                         element(t, vec_of(t), flat(0), spec.tensors[t].name)));
    std::set<const sb::Expr*> skip(m.contiguous.begin(), m.contiguous.end());
    if (row_loads) skip.insert(rows.begin(), rows.end());
    // The output indices the rhs needs beyond the vector loads (other reads, arithmetic).
    std::set<int> needed;
    dims_used(*st.rhs, st, skip, &needed);
    // Binds dimensions `dims` at lane q: declared (mutable) the first time, assigned at a later
    // lane.
    std::map<int, int> bound;  // dimension -> the lane it holds
    auto bind = [&](const std::set<int>& dims, int q) {
      for (int d : dims) {
        auto it = bound.find(d);
        if (it != bound.end() && it->second == q) continue;
        ExprPtr x = output_index(spec, st, static_cast<size_t>(d), flat(q));
        const std::string& n = st.vars[d].name;
        body.push_back(it == bound.end() ? let_index(d, n, x, /*mut=*/true)
                                         : assign_index(d, n, x));
        bound[d] = q;
      }
    };
    if (row_loads) {
      // Lane 0's indices address the vector: the other lanes differ only in the innermost one.
      std::set<int> at;
      for (const sb::Expr* r : rows) dims_used(*r, st, {}, &at);
      bind(at, 0);
      for (size_t i = 0; i < rows.size(); ++i)
        body.push_back(let("sb_row" + std::to_string(i), element(rows[i]->ref, vec_of(rows[i]->ref),
                                                                 read_flat(spec, st, *rows[i]),
                                                                 spec.tensors[rows[i]->ref].name)));
    }
    // The result, lane by lane (zeros first: the loop IR declares no variable without a value).
    const Type res_t = gpu_vec_t(ot, lanes);
    body.push_back(let("sb_res", make_vec(std::vector<ExprPtr>(lanes, identity(ReduceOp::Sum, ot))),
                       /*mut=*/true));
    for (int q = 0; q < lanes; ++q) {
      std::vector<Override> o;
      for (const sb::Expr* r : m.contiguous)
        o.push_back({r, to_string(*r, spec, &st),
                     lane(var("sb_vec_" + spec.tensors[r->ref].name, vec_of(r->ref)), q)});
      if (row_loads)
        for (size_t i = 0; i < rows.size(); ++i)
          o.push_back({rows[i], to_string(*rows[i], spec, &st),
                       lane(var("sb_row" + std::to_string(i), vec_of(rows[i]->ref)), q)});
      bind(needed, q);
      body.push_back(
          assign_lane("sb_res", res_t, q, spec_leaf(spec, st, *st.rhs, float_t(ot), std::move(o))));
    }
    body.push_back(put(st.out, out_name, flat(0), var("sb_res", res_t)));
    return for_loop("sb_v", var("sb_first", int_t()), var("sb_vectors", int_t()), stride,
                    ForKind::Serial, std::move(body));
  };

  std::vector<int> aligned = vt;
  aligned.push_back(st.out);
  Block vec = {let("sb_vectors", div(var("sb_total", int_t()), imm(lanes)))};
  if (rows.empty()) {
    vec.push_back(vector_loop(false));
  } else {
    std::vector<int> row_ts;
    for (const sb::Expr* r : rows)
      if (std::find(row_ts.begin(), row_ts.end(), r->ref) == row_ts.end()) row_ts.push_back(r->ref);
    const int inner = static_cast<int>(st.rank()) - 1;
    vec.push_back(comment("Rows of whole vectors: the reads along a row load as vectors too."));
    vec.push_back(
        if_then(binary(BinOp::And,
                       binary(BinOp::Eq, mod(extent(st.out, inner, out_name), imm(lanes)), imm(0)),
                       all_aligned(spec, row_ts, 16)),
                {vector_loop(true)}, {vector_loop(false)}));
  }
  vec.push_back(assign("sb_done", mul(var("sb_vectors", int_t()), imm(lanes))));

  const ExprPtr t = var("sb_t", int_t());
  Block tail = bind_outputs_body(spec, st, t);
  tail.push_back(compute());
  return {let("sb_total", output_count_of(spec, st)),
          let("sb_first",
              add(mul(gpu(GpuIndex::BlockX), gpu(GpuIndex::BlockDimX)), gpu(GpuIndex::ThreadX))),
          let("sb_stride", mul(gpu(GpuIndex::BlockDimX), gpu(GpuIndex::GridDimX))),
          comment("Elements written by the vector loop."),
          let("sb_done", imm(0), /*mut=*/true),
          comment(std::to_string(lanes) +
                  "-lane vectors need every vector-accessed buffer 16-byte aligned."),
          if_then(all_aligned(spec, aligned, 16), std::move(vec)),
          comment("The scalar tail (everything when a buffer is not aligned)."),
          for_loop("sb_t", add(var("sb_done", int_t()), var("sb_first", int_t())),
                   var("sb_total", int_t()), stride, ForKind::Serial, std::move(tail))};
}

}  // namespace

}  // namespace sb::loops

namespace sb {

int vector_lanes(const Spec& spec, const Statement& st, const VectorizeMatch& m) {
  int widest = dtype_bytes(spec.tensors[st.out].type);
  for (int t : loops::vector_tensors(m))
    widest = std::max(widest, dtype_bytes(spec.tensors[t].type));
  return 16 / widest;
}

loops::Block vectorized_body(const Spec& spec, const Statement& st, const VectorizeMatch& m) {
  return loops::vectorized_body_of(spec, st, m);
}

loops::Block register_blocked_body(const Spec& spec, const Statement& st, const MatmulMatch& m,
                                   const RegisterTile& t) {
  return loops::register_blocked_body(spec, st, m, t);
}

loops::Block transpose_tile(const Spec& spec, const Statement& st, const TransposeMatch& m,
                            int64_t tile, int64_t rows) {
  return loops::transpose_tile_body(spec, st, m, tile, rows);
}

loops::Block matmul_tile(const Spec& spec, const Statement& st, const MatmulMatch& m,
                         int64_t tile) {
  return loops::matmul_tile_body(spec, st, m, tile);
}

loops::Block element_body(const Spec& spec, const Statement& st, bool grid_stride) {
  return loops::element_body_of(spec, st, grid_stride);
}

ScalarReduceBodies scalar_reduce_bodies(const Spec& spec, const Statement& st, const Expr& red,
                                        GpuKernel kind, int64_t block_size,
                                        const std::string& part) {
  return loops::scalar_reduce_bodies_of(spec, st, red, kind, block_size, part);
}

loops::Block row_reduce_body(const Spec& spec, const Statement& st, const Expr& red, bool warp,
                             int64_t block_size) {
  return loops::row_reduce_body_of(spec, st, red, warp, block_size);
}

loops::Block halo_lets(const Spec& spec, const Statement& st, const StencilMatch& m) {
  return loops::halo_lets_body(spec, st, m);
}

loops::Block stencil_tile(const Spec& spec, const Statement& st, const StencilMatch& m,
                          const std::vector<int64_t>& block) {
  return loops::stencil_tile_body(spec, st, m, block);
}

ScanBodies scan_bodies(const Spec& spec, const Statement& st, const ScanMatch& m,
                       int64_t block_size, const std::string& part, std::optional<int64_t> shift) {
  return loops::scan_bodies_of(spec, st, m, block_size, part, shift);
}

}  // namespace sb
