// The mojo_gpu printer's fused attention (Gen::attention): the frame of the kernel of
// lower/gpu_bodies.h's attention_body, a block owning bq queries of one batch element and ec
// output columns and walking the keys in blocks of bk with an online softmax, and its launch, as
// the cuda printer's of the same name (backends/cuda/cuda_kernels.cpp).
#include <memory>

#include "backends/common/loop_leaves.h"
#include "backends/mojo_gpu/gpu_gen.h"
#include "lower/gpu_bodies.h"

namespace sb::mojo_gpu {

std::string Gen::attention(const GpuStep& g) {
  const Attention& a = g.att;
  const size_t first = a.first, last = a.first + kAttentionStatements - 1;
  const Statement& sy = spec_.stmts[last];
  auto p = [&](const char* n) { return param(v_, *info_, n); };
  const int64_t BQ = p("bq"), BK = p("bk"), EC = p("ec"), NT = bs_;
  const loops::Block body = attention_body(spec_, a, {BQ, BK, EC}, NT);
  // One statement printer per statement of the group; the kernel's own is the weighted sum's.
  StatementPrinters<MojoStmt> printers([&](int k) {
    return std::make_unique<MojoStmt>(spec_, spec_.stmts[static_cast<size_t>(k)], needs_.stmt);
  });
  PyWriter w(1);
  print_body(body, printers.of(static_cast<int>(last)), w, printers.of());

  // The signature: what the three lowerings used, the output writable, then sb_qblocks.
  std::set<int> tensors, sizes;
  printers.uses(tensors, sizes);
  std::vector<std::string> ps;
  std::string decls;
  for (int x : tensors) {
    const Tensor& tn = spec_.tensors[x];
    ps.push_back(mojo_ident(tn.name) + ": Pointer[" + mojo_scalar_type(tn.type) + ", " +
                 (x == sy.out ? "MutUntrackedOrigin" : "ImmUntrackedOrigin") + "]");
  }
  for (int s : sizes) {
    const std::string n = mojo_ident(spec_.sizes[s].name);
    ps.push_back("sb_arg_" + n + ": Int64");
    decls += "    var " + n + " = Int(sb_arg_" + n + ")\n";
  }
  ps.push_back("sb_arg_qblocks: Int64");
  decls += "    var sb_qblocks = Int(sb_arg_qblocks)\n";
  const std::string name = fn(first, "_" + str(static_cast<int64_t>(last)));
  std::string comments;
  for (size_t k = first; k <= last; ++k) comments += "# " + source_text(spec_.stmts[k], spec_) + "\n";
  comments += comment("Attention group fused into one kernel (FlashAttention): a block owns " +
                      str(BQ) + " queries and " + str(EC) + " value columns and walks the keys " +
                      "in blocks of " + str(BK) + " with an online softmax; " +
                      spec_.tensors[a.s].name + ", " + spec_.tensors[a.m].name + ", " +
                      spec_.tensors[a.p].name + " and " + spec_.tensors[a.l].name +
                      " are never written.");
  comments += comment("Launch: blocks of " + str(NT) + " threads, grid = (batch * ceil(queries / " +
                      str(BQ) + "), ceil(value columns / " + str(EC) + ")).");
  const std::string kernel_text = comments + "@export(\"" + name + "\")\n" +
                                  wrap_call("def " + name, ps, " abi(\"C\"):", 0) + "\n" + decls +
                                  w.str() + "\n\n";

  // The launcher, as the cuda file's.
  if (first > 0 || !body_.str().empty()) body_.line("");
  for (size_t k = first; k <= last; ++k) body_.line("// " + source_text(spec_.stmts[k], spec_));
  body_.open("{  // one kernel for the attention group");
  HelperSet none;
  StmtLowering H(spec_, sy, &none);
  attention_grid(spec_, a, BQ, EC, H, body_);
  std::vector<std::string> args = {name, "sb_grid", str(NT), "0", "sb_stream"};
  for (const auto& x : call_args(spec_, tensors, sizes)) args.push_back(x);
  args.push_back("sb_qblocks");
  body_.line(wrap_call("SB_MOJO_LAUNCH", args, ";", 2 * body_.indent()));
  tensors_.insert(tensors.begin(), tensors.end());
  sizes_.insert(sizes.begin(), sizes.end());
  sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  if (std::find(kernel_names_.begin(), kernel_names_.end(), name) == kernel_names_.end())
    kernel_names_.push_back(name);
  bool seen = false;
  for (const KernelLaunch& l : launches_) seen = seen || l.kernel == name;
  if (!seen) launches_.push_back({name, v_.name, NT, false});
  body_.close();
  return kernel_text;
}

}  // namespace sb::mojo_gpu
