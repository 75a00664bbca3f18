// The mojo_gpu printer's fused row groups (GpuKernel::FusedRows, the cuda strategies warp_per_row
// and block_per_row): the frame of the kernels of lower/gpu_bodies.h's fused_rows_body (the
// staged one holding rows in dynamic shared memory, the _global one reading global memory and
// recomputing row temps), and their launch as backends/common/gpu_launch.h's fused_rows_launch
// decides, as the cuda printer prints them in backends/cuda/cuda_kernels.cpp.
#include <memory>

#include "backends/common/loop_leaves.h"
#include "backends/mojo_gpu/gpu_gen.h"
#include "lower/gpu_bodies.h"

namespace sb::mojo_gpu {

// One kernel for the statements of row group `p` (lower/gpu_bodies.h: fused_rows_body), as the
// cuda printer's fused_kernel: `staged`, the kernel holding rows in dynamic shared memory;
// otherwise every read goes to global memory and p.rows are recomputed where they are read.
// Returns the kernel's name and its text in `out`; adds the tensors and sizes it takes to
// `tensors` and `sizes`, the tensors it writes to `outs`.
std::string Gen::fused_kernel(const RowPlan& p, bool warp, bool staged, std::string& out,
                              std::set<int>& tensors, std::set<int>& sizes, std::set<int>& outs) {
  const std::string name = fn(p.first, staged ? "_rows" : "_rows_global");
  const RowUnit unit = warp ? RowUnit::Warp : RowUnit::Block;
  const FusedRowsBody body = fused_rows_body(spec_, p, unit, staged, bs_);
  // One statement printer per statement of the group (and per producer a read recomputes).
  StatementPrinters<MojoStmt> printers([&](int k) {
    return std::make_unique<MojoStmt>(spec_, spec_.stmts[static_cast<size_t>(k)], needs_.stmt);
  });
  MojoStmt& L = printers.of(static_cast<int>(p.first));
  PyWriter w(1);
  print_body(body.body, L, w, printers.of());
  printers.uses(tensors, sizes);
  outs.insert(body.outs.begin(), body.outs.end());
  tensors.insert(body.outs.begin(), body.outs.end());

  std::string comments;
  for (size_t k = p.first; k <= p.last; ++k) comments += "# " + source_text(spec_.stmts[k], spec_) + "\n";
  comments += comment(describe(p, spec_, unit, staged));
  const int64_t per_block = rows_per_block(p, unit, bs_);
  const std::string R = L.extent(spec_.stmts[p.first].out, 0, 0);
  comments += comment("Launch: blocks of " + str(bs_) + " threads, grid = min(ceil(" + R + " / " +
                      str(per_block) + "), SMs * " + str(bps_) + "), at least 1" +
                      (staged ? "; dynamic shared memory, the launcher's sb_smem bytes, at most " +
                                    str(kMaxRowSmem)
                              : std::string()) +
                      ".");

  std::vector<std::string> ps;
  std::string decls;
  for (int t : tensors) {
    const Tensor& tn = spec_.tensors[t];
    ps.push_back(mojo_ident(tn.name) + ": Pointer[" + mojo_scalar_type(tn.type) + ", " +
                 (outs.count(t) ? "MutUntrackedOrigin" : "ImmUntrackedOrigin") + "]");
  }
  for (int s : sizes) {
    const std::string n = mojo_ident(spec_.sizes[s].name);
    ps.push_back("sb_arg_" + n + ": Int64");
    decls += "    var " + n + " = Int(sb_arg_" + n + ")\n";
  }
  out += comments + "@export(\"" + name + "\")\n" +
         wrap_call("def " + name, ps, " abi(\"C\"):", 0) + "\n" + decls + w.str() + "\n\n";
  return name;
}

// The launcher's part for row group `p`: the staged kernel (when the group stages rows) and the
// global one, launched as fused_rows_launch decides (the cuda launcher's lines).
std::string Gen::fused_rows(const GpuStep& g) {
  SB_ASSERT(g.unit != RowUnit::None, "a fused row group without its unit");
  const RowPlan& p = g.rows;
  const bool warp = g.unit == RowUnit::Warp;
  std::set<int> t1, s1, o1, t2, s2, o2;
  std::string out;
  const std::string staged = stages_rows(p) ? fused_kernel(p, warp, true, out, t1, s1, o1) : "";
  const std::string global = fused_kernel(p, warp, false, out, t2, s2, o2);
  if (p.first > 0 || !body_.str().empty()) body_.line("");
  for (size_t k = p.first; k <= p.last; ++k)
    body_.line("// " + source_text(spec_.stmts[k], spec_));
  body_.open("{  // one kernel for the row group");
  HelperSet none;
  StmtLowering H(spec_, spec_.stmts[p.first], &none);
  auto launch_one = [&](CodeWriter& w, bool in_shared) {
    launch_into(w, in_shared ? staged : global, "(unsigned)sb_blocks", str(bs_), bs_,
                in_shared ? "(size_t)sb_smem" : "0", in_shared ? t1 : t2, in_shared ? s1 : s2);
  };
  const bool max_grid = fused_rows_launch(spec_, p, g.unit, bs_, H, body_, launch_one);
  if (max_grid) needs_max_grid_ = true;
  sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  body_.close();
  return out;
}

}  // namespace sb::mojo_gpu
