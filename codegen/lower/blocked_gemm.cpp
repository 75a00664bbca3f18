#include "lower/blocked_gemm.h"

#include <map>
#include <set>

#include "lower/patterns.h"
#include "support/diag.h"

namespace sb {

const GemmTarget& gemm_target_cpu() {
  static const GemmTarget t{"cpu", 4};
  return t;
}

const GemmTarget& gemm_target_mojo() {
  static const GemmTarget t{"mojo", 6};
  return t;
}

namespace loops {
namespace {

// The names and typed variables of one element type's module.
struct G {
  DType t;
  std::string s;  // "f32"
  Type T, cptr, mptr;
  ExprPtr VL, MR, NR, zero;

  explicit G(DType type)
      : t(type),
        s(dtype_name(type)),
        T(float_t(type)),
        cptr(ptr_t(type, false)),
        mptr(ptr_t(type, true)),
        VL(var("sb_gemm_vl_" + s, int_t())),
        MR(var("sb_gemm_mr_" + s, int_t())),
        NR(var("sb_gemm_nr_" + s, int_t())),
        zero(fimm(0.0, type)) {}
  std::string fn(const std::string& what) const { return "sb_gemm_" + what + s; }
};

ExprPtr I(const std::string& n) { return var(n, int_t()); }

// The packing routine of operand `which` ("x" or "y") of element type `o`: sb_gemm_pack_x_<t>
// for o = t, sb_gemm_pack_x_<o>_<t> for a storage type o that widens to t.
std::string pack_name(const G& g, const std::string& which, DType o) {
  return g.fn("pack_" + which + "_" + (o == g.t ? "" : std::string(dtype_name(o)) + "_"));
}

// Packs a strip of an operand of element type `o` over kc steps: dst[p * width + v] =
// src[v * s_v + p * s_k] for v < have, zero for have <= v < width. X's strips are MR tall (v = r
// a row), Y's NR wide (v = q a column): the same loop with the roles of the strides swapped. An
// operand of a storage type (f16, bf16) is widened to T as it is packed, exactly.
Function pack(const G& g, const std::string& which, DType o) {
  SB_ASSERT(o == g.t || (is_storage_type(o) && compute_type(o) == g.t),
            std::string("GEMM operand of type ") + dtype_name(o) + " for a " + g.s + " GEMM");
  const bool widen = o != g.t;
  const bool x = which == "x";
  const std::string v = x ? "r" : "q", have = x ? "h" : "w";
  const std::string s_v = x ? "xs_i" : "ys_j", s_k = x ? "xs_k" : "ys_k";
  const ExprPtr width = x ? g.MR : g.NR;
  Function f;
  f.name = pack_name(g, which, o);
  f.doc = {x ? "Packs an MR-tall strip of X, rows [0, h) (h <= MR), over kc steps: dst[p * MR + r] ="
             : "Packs an NR-wide strip of Y, columns [0, w) (w <= NR), over kc steps: dst[p * NR + "
               "q] =",
           x ? "X(r, p), zero for r >= h." : "Y(p, q), zero for q >= w."};
  if (widen)
    f.doc.push_back(std::string(x ? "X" : "Y") + " holds " + dtype_name(o) + " elements, each widened to " + g.s +
                    " as it is packed (exactly).");
  f.params = {{"kc", int_t()}, {have, int_t()}, {which, ptr_t(o, false)}};
  if (x)
    f.params.insert(f.params.end(), {{"xs_i", int_t()}, {"xs_k", int_t()}});
  else
    f.params.insert(f.params.end(), {{"ys_k", int_t()}, {"ys_j", int_t()}});
  f.params.push_back({"dst", g.mptr, true});
  f.result = void_t();
  f.inline_hint = true;
  const ExprPtr p = I("p"), V = I(v);
  const ExprPtr at = add(mul(p, width), V);
  const ExprPtr src = x ? add(mul(V, I(s_v)), mul(p, I(s_k))) : add(mul(p, I(s_k)), mul(V, I(s_v)));
  ExprPtr element = load(which, float_t(o), {src});
  if (widen) element = cast(g.T, element);
  f.body = {for_loop(
      "p", imm(0), I("kc"), imm(1), ForKind::Serial,
      {for_loop(v, imm(0), I(have), imm(1), ForKind::Serial,
                {store("dst", g.T, {at}, element)}),
       for_loop(v, I(have), width, imm(1), ForKind::Serial, {store("dst", g.T, {at}, g.zero)})})};
  if (!x && !widen) {
    // A whole strip of a Y whose columns are contiguous (ys_j == 1, a row-major operand) copies
    // each step's NR elements as two vectors. GCC vectorised the element loop itself; LLVM (the
    // mojo module) did not, and the mojo GEMM of a short X (M = 64, N = 784, K = 576: conv2d's
    // im2col) took 2.3-2.6x the C++ time, where each thread packs a whole panel of Y for a few
    // rows of C.
    Block copy;
    for (int h : {0, 1}) {
      const ExprPtr off = h == 0 ? mul(p, g.NR) : add(mul(p, g.NR), g.VL);
      const ExprPtr from = h == 0 ? mul(p, I(s_k)) : add(mul(p, I(s_k)), g.VL);
      copy.push_back(
          store("dst", g.T, {off}, load(which, g.T, {from}, Width::Vector), Width::Vector));
    }
    f.body = {if_then(
        binary(BinOp::And, binary(BinOp::Eq, I(s_v), imm(1)), binary(BinOp::Eq, I(have), width)),
        {for_loop("p", imm(0), I("kc"), imm(1), ForKind::Serial, copy)}, std::move(f.body))};
  }
  return f;
}

// The micro-kernel: C[0:mr, 0:nr] = (C + if accumulate) the product of a packed strip of X
// (kc x MR) and a packed strip of Y (kc x NR), accumulated in MR x 2 vector registers: per step
// two vector loads of Y, MR broadcasts of X and 2 * MR fused multiply-adds.
Function tile(const G& g) {
  Function f;
  f.name = g.fn("tile_");
  f.doc = {"The micro-kernel: C[0:mr, 0:nr] = (C + if accumulate) the product of a packed strip of X",
           "(kc x MR) and a packed strip of Y (kc x NR), accumulated in MR x 2 vector registers.",
           "Ragged tiles (mr < MR or nr < NR) go through a local tile."};
  f.params = {{"kc", int_t()},      {"ap", g.cptr, true}, {"bp", g.cptr, true},
              {"c", g.mptr, true},  {"ldc", int_t()},     {"mr", int_t()},
              {"nr", int_t()},      {"accumulate", bool_t()}};
  f.result = void_t();
  f.inline_hint = true;
  const Type V = vec_t(g.t);
  const ExprPtr r = I("r"), p = I("p"), ldc = I("ldc"), acc_on = var("accumulate", bool_t());
  auto acc = [&](int h) { return load("acc", V, {r, imm(h)}); };
  auto set_acc = [&](int h, ExprPtr v) { return store("acc", V, {r, imm(h)}, std::move(v)); };
  // The offset of half h of row r in a row-major MR x NR tile of row stride `ld`.
  auto half = [&](const ExprPtr& ld, int h) {
    return h == 0 ? mul(r, ld) : add(mul(r, ld), g.VL);
  };
  auto rows = [&](Block body) {
    return for_loop("r", imm(0), g.MR, imm(1), ForKind::Unrolled, std::move(body));
  };

  Block zero, step, full, spill;
  for (int h : {0, 1}) zero.push_back(set_acc(h, broadcast(g.zero)));
  Block fmas = {let("a", broadcast(load("ap", g.T, {add(mul(p, g.MR), r)})))};
  for (int h : {0, 1})
    fmas.push_back(set_acc(h, fma(var("a", V), var(h ? "b1" : "b0", V), acc(h))));
  step = {let("b0", load("bp", g.T, {mul(p, g.NR)}, Width::Vector)),
          let("b1", load("bp", g.T, {add(mul(p, g.NR), g.VL)}, Width::Vector)),
          rows(std::move(fmas))};
  Block add_c;
  for (int h : {0, 1}) add_c.push_back(set_acc(h, add(acc(h), load("c", g.T, {half(ldc, h)}, Width::Vector))));
  full.push_back(if_then(acc_on, std::move(add_c)));
  for (int h : {0, 1}) full.push_back(store("c", g.T, {half(ldc, h)}, acc(h), Width::Vector));
  for (int h : {0, 1}) spill.push_back(store("tile", g.T, {half(g.NR, h)}, acc(h), Width::Vector));

  const ExprPtr q = I("q"), at_c = add(mul(r, ldc), q);
  const ExprPtr v = var("v", g.T);
  Block ragged = {
      rows(std::move(spill)),
      for_loop("r", imm(0), I("mr"), imm(1), ForKind::Serial,
               {for_loop("q", imm(0), I("nr"), imm(1), ForKind::Serial,
                         {let("v", load("tile", g.T, {add(mul(r, g.NR), q)}), true),
                          if_then(acc_on, {assign("v", add(v, load("c", g.T, {at_c})))}),
                          store("c", g.T, {at_c}, v)})})};
  f.body = {alloc(
      "acc", V, {g.MR, imm(2)}, MemScope::Register,
      {rows(std::move(zero)), for_loop("p", imm(0), I("kc"), imm(1), ForKind::Serial, std::move(step)),
       if_then(binary(BinOp::And, binary(BinOp::Eq, I("mr"), g.MR), binary(BinOp::Eq, I("nr"), g.NR)),
               {comment("A whole tile: straight from the registers to C."),
                rows(std::move(full)), ret()}),
       alloc("tile", g.T, {mul(g.MR, g.NR)}, MemScope::StackLocal, std::move(ragged))})};
  return f;
}

// The driver: Goto's blocking over the whole product, of operands of types xo and yo.
Function driver(const G& g, DType xo, DType yo) {
  Function f;
  f.name = blocked_gemm_name(g.t, xo, yo);
  f.doc = {
      "C (M x N, row-major, row stride ldc) = X * Y, where X(i, k) = x[i * xs_i + k * xs_k] and",
      "Y(k, j) = y[k * ys_k + j * ys_j] (any layout: transposed operands need no copy). Goto's",
      "blocking: the mc-row blocks of C are split evenly over the threads (mc is adjusted for",
      "that); for each nc-wide column block and kc-deep slice, a thread packs the kc x nc panel of",
      "Y into NR-wide strips (L3) and each of its row blocks of X into MR-tall strips (L2), then",
      "runs the micro-kernel over the block's MR x NR tiles, a strip of Y staying in L1. Each",
      "thread packs its own panel of Y (a little more packing, but no barrier inside the loops: a",
      "thread that loses its core to another process delays nobody until the end). Returns 0, or",
      "1 when the packing buffers cannot be allocated."};
  if (xo != g.t || yo != g.t) {
    const std::string xs = dtype_name(xo), ys = dtype_name(yo);
    const std::string held = xo == yo    ? "x and y hold " + xs + " elements"
                             : yo == g.t ? "x holds " + xs + " elements"
                             : xo == g.t ? "y holds " + ys + " elements"
                                         : "x holds " + xs + " elements and y " + ys + " elements";
    f.doc.push_back(held + ": the packing widens each to " + g.s + " (exactly),");
    f.doc.push_back("and the micro-kernel runs on the packed " + g.s + " panels.");
  }
  f.params = {{"M", int_t()},    {"N", int_t()},     {"K", int_t()},    {"x", ptr_t(xo, false)},
              {"xs_i", int_t()}, {"xs_k", int_t()},  {"y", ptr_t(yo, false)}, {"ys_k", int_t()},
              {"ys_j", int_t()}, {"c", g.mptr},      {"ldc", int_t()},  {"mc_in", int_t()},
              {"kc_in", int_t()}, {"nc_in", int_t()}};
  f.result = int_t();
  const ExprPtr M = I("M"), N = I("N"), K = I("K"), nt = I("nt"), mc = I("mc"), kc = I("kc"),
                nc = I("nc"), blocks = I("blocks"), t = I("t");
  auto ceil_div = [](ExprPtr a, ExprPtr b) { return div(sub(add(std::move(a), b), imm(1)), b); };
  auto lt = [](ExprPtr a, ExprPtr b) { return binary(BinOp::Lt, std::move(a), std::move(b)); };
  auto le = [](ExprPtr a, ExprPtr b) { return binary(BinOp::Le, std::move(a), std::move(b)); };
  const Type f64 = float_t(DType::F64);
  // Panels start on a cache line: each is rounded up to a whole number of lines.
  const ExprPtr line_elems = imm(kGemmPanelAlign / dtype_bytes(g.t));
  const ExprPtr b_elems = I("b_elems"), a_elems = I("a_elems"), per = add(b_elems, a_elems);

  const ExprPtr ic = I("ic"), ip = I("ip"), ir = I("ir"), jc = I("jc"), jp = I("jp"),
                jr = I("jr"), pc = I("pc"), kcur = I("kcur"), ncur = I("ncur"), mcur = I("mcur");
  const ExprPtr bp = var("bp", g.mptr), ap = var("ap", g.mptr);
  const Block tiles = {for_loop(
      "ir", imm(0), mcur, g.MR, ForKind::Serial,
      {evaluate(call(g.fn("tile_"), void_t(),
                     {kcur, ptr_add(ap, mul(ir, kcur)), ptr_add(bp, mul(jr, kcur)),
                      ptr_add(var("c", g.mptr), add(add(mul(add(ic, ir), I("ldc")), jc), jr)),
                      I("ldc"), min(g.MR, sub(mcur, ir)), min(g.NR, sub(ncur, jr)),
                      binary(BinOp::Gt, pc, imm(0))}))})};
  const Block row_block = {
      let("ic", mul(I("blk"), mc)), let("mcur", min(mc, sub(M, ic))),
      for_loop("ip", imm(0), mcur, g.MR, ForKind::Serial,
               {evaluate(call(pack_name(g, "x", xo), void_t(),
                              {kcur, min(g.MR, sub(mcur, ip)),
                               ptr_add(var("x", ptr_t(xo, false)),
                                       add(mul(add(ic, ip), I("xs_i")), mul(pc, I("xs_k")))),
                               I("xs_i"), I("xs_k"), ptr_add(ap, mul(ip, kcur))}))}),
      for_loop("jr", imm(0), ncur, g.NR, ForKind::Serial, tiles)};
  const Block slice = {
      let("kcur", min(kc, sub(K, pc))),
      for_loop("jp", imm(0), ncur, g.NR, ForKind::Serial,
               {evaluate(call(pack_name(g, "y", yo), void_t(),
                              {kcur, min(g.NR, sub(ncur, jp)),
                               ptr_add(var("y", ptr_t(yo, false)),
                                       add(mul(pc, I("ys_k")), mul(add(jc, jp), I("ys_j")))),
                               I("ys_k"), I("ys_j"), ptr_add(bp, mul(jp, kcur))}))}),
      for_loop("blk", I("b0"), I("b1"), imm(1), ForKind::Serial, row_block)};
  const Block chunk = {
      comment("This thread's row blocks [b0, b1), its own packed panels: no barrier until the end."),
      let("bp", ptr_add(var("scratch", g.mptr), mul(per, t))), let("ap", ptr_add(bp, b_elems)),
      let("b0", div(mul(I("blocks_total"), t), nt)),
      let("b1", div(mul(I("blocks_total"), add(t, imm(1))), nt)),
      if_then(lt(I("b0"), I("b1")),
              {for_loop("jc", imm(0), N, nc, ForKind::Serial,
                        {let("ncur", min(nc, sub(N, jc))),
                         for_loop("pc", imm(0), K, kc, ForKind::Serial, slice)})})};

  f.body = {
      if_then(binary(BinOp::Or, le(M, imm(0)), le(N, imm(0))), {ret(imm(0))}),
      if_then(le(K, imm(0)),
              {comment("An empty sum."),
               for_loop("i", imm(0), M, imm(1), ForKind::Parallel,
                        {for_loop("j", imm(0), N, imm(1), ForKind::Serial,
                                  {store("c", g.T, {add(mul(I("i"), I("ldc")), I("j"))}, g.zero)})}),
               ret(imm(0))}),
      let("nt", imm(1), true),
      if_then(binary(BinOp::Ge, mul(mul(cast(f64, M), cast(f64, N)), cast(f64, K)),
                     cast(f64, var("sb_gemm_min_parallel_" + g.s, int_t()))),
              {assign("nt", workers())}),
      let("kc", min(I("kc_in"), K)),
      let("nc", round_up(min(I("nc_in"), N), g.NR)),
      comment("mc: the row blocks split evenly over the threads, a whole number of MR strips."),
      let("blocks", ceil_div(M, I("mc_in")), true),
      assign("blocks", round_up(blocks, nt)),
      let("mc", round_up(ceil_div(M, blocks), g.MR)),
      let("blocks_total", ceil_div(M, mc)),
      let("b_elems", round_up(mul(kc, nc), line_elems)),
      let("a_elems", round_up(mul(kc, mc), line_elems)),
      alloc("scratch", g.T, {mul(per, nt)}, MemScope::HeapScratch,
            {for_loop("t", imm(0), nt, imm(1), ForKind::Parallel, chunk, nt)}, kGemmPanelAlign,
            true, {ret(imm(1))}),
      ret(imm(0))};
  return f;
}

}  // namespace

Module build_gemm(DType t, const GemmTarget& target, const std::set<GemmOperandTypes>& operands) {
  SB_ASSERT(t == DType::F32 || t == DType::F64, "blocked GEMM of a non-float type");
  SB_ASSERT(!operands.empty(), "blocked GEMM without a driver");
  const G g(t);
  Module m;
  m.name = "blocked_gemm_" + g.s;
  m.doc = {std::string("The blocked GEMM for ") + g.s + " (lower/blocked_gemm), target " +
           target.name + "."};
  const ExprPtr vbytes = mul(g.VL, imm(dtype_bytes(t)));
  auto at_least = [&](int64_t bytes) { return binary(BinOp::Ge, vbytes, imm(bytes)); };
  m.constants = {
      {g.VL->name, lanes(t), "lanes of a native vector"},
      {g.MR->name,
       select(at_least(64), imm(12), select(at_least(32), imm(6), imm(target.mr_narrow))),
       "tile rows: 2 * MR accumulators, 12 x 2 in AVX-512's 32 registers, 6 x 2 in AVX's 16"},
      {g.NR->name, mul(imm(2), g.VL), "tile columns: two native vectors"},
      {"sb_gemm_min_parallel_" + g.s, imm(kGemmMinParallel),
       "fewer multiply-adds than this run on one thread"},
  };
  // The packing routines of every operand type each side uses, the micro-kernel, then a driver
  // per pair of operand types (a function calls only earlier ones).
  std::set<DType> xs, ys;
  for (const auto& [xo, yo] : operands) {
    xs.insert(xo);
    ys.insert(yo);
  }
  for (DType o : xs) m.functions.push_back(pack(g, "x", o));
  for (DType o : ys) m.functions.push_back(pack(g, "y", o));
  m.functions.push_back(tile(g));
  for (const auto& [xo, yo] : operands) m.functions.push_back(driver(g, xo, yo));
  return m;
}

}  // namespace loops

loops::Module blocked_gemm(DType t, const GemmTarget& target) {
  return loops::build_gemm(t, target, {{t, t}});
}

loops::Module blocked_gemm(DType t, const GemmTarget& target,
                           const std::set<GemmOperandTypes>& operands) {
  return loops::build_gemm(t, target, operands);
}

std::string blocked_gemm_name(DType t, DType x, DType y) {
  const std::string s = dtype_name(t);
  if (x == t && y == t) return "sb_gemm_" + s;
  return "sb_gemm_" + std::string(dtype_name(x)) + "_" + dtype_name(y) + "_" + s;
}

std::string dump_blocked_gemm(const Spec& spec, const std::string& backend,
                              const GemmTarget* target,
                              const std::function<bool(const Variant&)>& uses_gemm) {
  if (!target) return "";
  std::string out = "# IR after blocked_gemm for backend " + backend + "\n";
  bool blocked = false;
  auto it = spec.variants.find(backend);
  if (it != spec.variants.end())
    for (const Variant& v : it->second) blocked = blocked || uses_gemm(v);
  std::map<DType, std::set<GemmOperandTypes>> types;
  if (blocked)
    for (const Statement& st : spec.stmts)
      if (auto c = match_contraction(spec, st)) types[c->type].insert({c->x_type, c->y_type});
  if (types.empty())
    return out + "# no GEMM: spec " + spec.name + " has no contraction under a blocked-GEMM strategy\n";
  for (const auto& [t, operands] : types) out += loops::dump(blocked_gemm(t, *target, operands));
  return out;
}

}  // namespace sb
