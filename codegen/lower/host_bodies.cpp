#include "lower/host_bodies.h"

#include <string>
#include <utility>

#include "ir/scalar_types.h"
#include "lower/running_scans.h"
#include "support/diag.h"

// The bodies are built inside sb::loops, where the loop IR's names come first.
namespace sb::loops {

namespace {

sb::ScanSplitBodies scan_split_of(const Spec& spec, const Statement& st, const sb::Expr& red) {
  SB_ASSERT(st.rank() == 1 && red.kind == sb::ExprKind::Reduce && red.ref >= 1,
            "the split of a running scan of a rank-1 statement");
  const Type vt = float_t(scalar(red.type).printed_as);  // the reduction's value type
  const IndexVar& kv = st.vars[static_cast<size_t>(red.ref)];
  const std::string& in = st.vars[0].name;
  const std::string text = to_string(red, spec, &st);
  auto iv = [](const char* name) { return var(name, int_t()); };
  const ExprPtr n = iv("sb_n"), lo = iv("sb_lo"), nb = iv("sb_nb"), len = iv("sb_len"),
                b = iv("sb_b"), i0 = iv("sb_i0"), i1 = iv("sb_i1"), k0 = iv("sb_k0"),
                k1 = iv("sb_k1");

  sb::ScanSplitBodies r;
  r.head = {let("sb_n", extent(st.out, 0, spec.tensors[st.out].name)),
            let("sb_lo", spec_leaf(spec, st, *kv.lo, int_t()))};
  const Block bounds = {let("sb_i0", min(mul(b, len), n)), let("sb_i1", min(add(i0, len), n))};
  // Where the range's end stands after output `at` - 1, as `name`.
  auto term_end = [&](const std::string& name, const ExprPtr& at) -> Block {
    return {let(name, lo, /*mut=*/true),
            if_then(binary(BinOp::Gt, at, imm(0)),
                    {let_index(0, in, sub(at, imm(1))),
                     assign(name, max(var(name, int_t()), spec_leaf(spec, st, *kv.hi, int_t())))})};
  };
  const Block end0 = term_end("sb_k0", i0), end1 = term_end("sb_k1", i1);
  const Block fold_terms = {let("sb_fold", identity(red.rop, vt.elem), /*mut=*/true),
                            fold_range("sb_fold", red, text, k0, k1)};
  const Block fold_block = joined({&end0, &end1, &fold_terms});
  const Block walk = {let_index(red.ref, kv.name, k0, /*mut=*/true),
                      let_index(0, in, i0, /*mut=*/true), scan_walk("sb_run", red, text, i1)};

  const int64_t blocks = kScanBlocks;
  const Block keep = {store("sb_part", vt, {b}, var("sb_fold", vt)),
                      store("sb_from", int_t(), {b}, k0)};
  const Block offsets = {let("sb_fold", load("sb_part", vt, {b})),
                         store("sb_part", vt, {b}, var("sb_off", vt)),
                         fold("sb_off", red.rop, vt, var("sb_fold", vt))};
  const Block from = {let("sb_k0", load("sb_from", int_t(), {b})),
                      let("sb_run", load("sb_part", vt, {b}), /*mut=*/true)};
  auto over_blocks = [&](ForKind k, Block body) {
    return for_loop("sb_b", imm(0), nb, imm(1), k, std::move(body));
  };
  r.two_pass = {
      comment("Two parallel passes over " + std::to_string(blocks) +
              " blocks of the outputs: each block's new terms folded apart,"),
      comment("the folds combined in order into each block's offset, then each block's outputs "
              "walked"),
      comment("from its offset."),
      let("sb_nb", imm(blocks)),
      let("sb_len", div(sub(add(n, nb), imm(1)), nb)),
      alloc("sb_part", vt, {imm(blocks)}, MemScope::StackLocal,
            {alloc("sb_from", int_t(), {imm(blocks)}, MemScope::StackLocal,
                   {over_blocks(ForKind::Parallel, joined({&bounds, &fold_block, &keep})),
                    let("sb_off", identity(red.rop, vt.elem), /*mut=*/true),
                    over_blocks(ForKind::Serial, offsets),
                    over_blocks(ForKind::Parallel, joined({&bounds, &from, &walk}))})})};
  return r;
}

}  // namespace

}  // namespace sb::loops

namespace sb {

ScanSplitBodies scan_split_bodies(const Spec& spec, const Statement& st, const Expr& red) {
  return loops::scan_split_of(spec, st, red);
}

std::string dump_host_bodies(const Spec& spec, const std::string& backend) {
  std::string out = "# IR after host_bodies for backend " + backend + "\n";
  for (size_t k = 0; k < spec.stmts.size(); ++k) {
    const Statement& st = spec.stmts[k];
    out += "# stmt " + std::to_string(k) + " (" + to_string(st, spec) + "): ";
    const Expr* red = st.rank() == 1 ? running_scan(spec, st, /*rows=*/false) : nullptr;
    if (!red) {
      out += "no host body in loop IR\n";
      continue;
    }
    out += "its running scan in two parallel passes, under a parallel strategy, from " +
           std::to_string(kScanSplitMin) + " outputs\n";
    const ScanSplitBodies b = scan_split_bodies(spec, st, *red);
    out += loops::dump(b.head) + loops::dump(b.two_pass);
  }
  return out;
}

}  // namespace sb
