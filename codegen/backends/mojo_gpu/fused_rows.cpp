// The mojo_gpu printer's fused row groups (GpuKernel::FusedRows, the cuda strategies warp_per_row
// and block_per_row): one kernel per row group, a worker (a warp, or a block) owning a row at a
// time, as Gen::fused_kernel and Gen::fused_rows print it in backends/cuda/cuda_kernels.cpp: the
// same kernels (the staged one holding rows in dynamic shared memory, the _global one reading
// global memory and recomputing row temps), the same visiting order along a row, the same grid,
// and the same choice between them at launch.
//
// Mojo has no bare block: where the cuda kernel opens a scope per statement, the Mojo kernel names
// what a statement declares after it (sb_acc_<out>, sb_row_<out>), binds the row and column
// indices by overriding the index variables (sb_row, sb_q) instead of declaring them, and names
// the staging variables after the tensor staged.
#include <deque>

#include "backends/common/row_segments.h"
#include "backends/mojo_gpu/gpu_gen.h"
#include "lower/patterns.h"

namespace sb::mojo_gpu {

namespace {

bool in(const std::vector<int>& v, int t) { return std::find(v.begin(), v.end(), t) != v.end(); }

// Every node of `e` of kind IndexVar.
void index_vars(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind == ExprKind::IndexVar) out.push_back(&e);
  for (const auto& a : e.args) index_vars(*a, out);
}

// Every IndexVar node of statement `st`: its right-hand side and its reduction ranges.
std::vector<const Expr*> stmt_index_vars(const Statement& st) {
  std::vector<const Expr*> out;
  index_vars(*st.rhs, out);
  for (const IndexVar& v : st.vars) {
    if (v.lo) index_vars(*v.lo, out);
    if (v.hi) index_vars(*v.hi, out);
  }
  return out;
}

std::string paren_if_spaced(const std::string& s) {
  return s.find(' ') == std::string::npos ? s : "(" + s + ")";
}

// The segment order (backends/common/row_segments.h) in Mojo.
const SegmentSyntax kMojoSegments{
    [](const std::string& name, const std::string& value) { return "var " + name + " = " + value; },
    [](const std::string& c, const std::string& a, const std::string& b) {
      return a + " if " + c + " else " + b;
    },
    "//",
    [](const std::string& ptr, const std::string& off, int bytes) {
      const std::string addr = "Int(" + ptr + ") // " + std::to_string(bytes);
      return off == "0" ? addr : "(" + addr + " + " + off + ")";
    },
    [](const std::string& name, const std::string& value, DType t) {
      return "var " + name + " = " + widened(t, value);
    },
    [](const std::string& array, const std::string& index) {
      return array + "[unsafe_offset=" + index + "]";
    },
    [](const std::string& v, const std::string& lo, const std::string& hi, const std::string& step) {
      return "for " + v + " in range(" + lo + ", " + hi + ", " + step + "):";
    },
    [](const std::string& cond) { return "if " + cond + ":"; },
    [](const std::string& stmt, const std::string& comment) {
      return stmt + (comment.empty() ? "" : "  # " + comment);
    }};

void segments(PyWriter& w, const std::string& tag, const std::string& ptr, const std::string& off,
              const std::string& len, DType t) {
  for (const std::string& l : segment_lines(kMojoSegments, tag, ptr, off, len, t)) w.line(l);
}

std::string seg_element(const std::string& tag, const std::string& j) {
  return segment_element(kMojoSegments, tag, j);
}

// The staging copy (staging_copy in backends/common/row_segments.h) into sb_rows, its variables
// named after `tag`.
void copy_in(PyWriter& w, const std::string& tag, const std::string& src, const std::string& base,
             const std::string& len, const std::string& off, const std::string& lane,
             const std::string& lanes, DType t) {
  const SegmentWriter into{[&w](const std::string& l) { w.line(l); },
                           [&w](const std::string& h) { w.open(h); }, [&w] { w.dedent(); }};
  staging_copy(kMojoSegments, into, tag, src, base, len, "sb_rows", off, lane, lanes, t);
}

}  // namespace

// One kernel for the statements of row group `p`, as the cuda printer's fused_kernel: `staged`,
// the kernel holding rows in dynamic shared memory; otherwise every read goes to global memory and
// p.rows are recomputed where they are read. Returns the kernel's name and its text in `out`; adds
// the tensors and sizes it takes to `tensors` and `sizes`, the tensors it writes to `outs`.
std::string Gen::fused_kernel(const RowPlan& p, bool warp, bool staged, std::string& out,
                              std::set<int>& tensors, std::set<int>& sizes, std::set<int>& outs) {
  const std::string name = fn(p.first, staged ? "_rows" : "_rows_global");
  const std::string lanes = warp ? "32" : str(bs_);
  const std::string sync = warp ? "syncwarp()" : "barrier()";
  use_gpu({"block_idx", "grid_dim", "thread_idx"});
  if (warp) use_gpu({"block_dim"});
  std::deque<MojoStmt> Ls;  // every lowering printed in the kernel (their uses make the signature)
  PyWriter none;
  auto ident = [&](int t) { return mojo_ident(spec_.tensors[t].name); };
  auto reg_name = [&](int t) { return "sb_row_" + ident(t); };
  auto off_name = [&](int t) { return "sb_off_" + ident(t); };
  // A lowering of `st` whose row index reads sb_row and whose column index (rank 2) reads sb_q.
  auto fresh = [&](const Statement& st) -> MojoStmt& {
    Ls.emplace_back(spec_, st, needs_.stmt);
    for (const Expr* v : stmt_index_vars(st)) {
      if (v->ref == 0 && st.rank() >= 1) Ls.back().set_override(v, "sb_row");
      if (v->ref == 1 && st.rank() == 2) Ls.back().set_override(v, "sb_q");
    }
    return Ls.back();
  };
  // Overrides for the reads of `L`'s statement (rhs `e`) that do not go to global memory.
  std::function<void(MojoStmt&, const Expr&)> redirect = [&](MojoStmt& L, const Expr& e) {
    for (const Expr* r : reads_of(e)) {
      const int t = r->ref;
      switch (row_read(p, t, staged)) {
        case RowRead::Global:
          break;
        case RowRead::Register:
          L.set_override(r, reg_name(t));
          break;
        case RowRead::SharedRow:
          L.set_override(r, "sb_rows[unsafe_offset=" + off_name(t) + " + " +
                                L.expr(*r->args[1], none, kMojoPrecAdd + 1) + "]");
          break;
        case RowRead::SharedBlock: {
          std::string flat = "0";
          const size_t n = r->args.size();
          if (n == 1) {
            flat = L.expr(*r->args[0], none, kMojoPrecAdd + 1);
          } else if (n > 1) {
            flat = L.expr(*r->args[0], none, kMojoPrecMul);
            for (size_t d = 1; d < n; ++d)
              flat = (d == 1 ? flat : "(" + flat + ")") + " * " +
                     L.extent(t, d, kMojoPrecMul + 1) + " + " +
                     L.expr(*r->args[d], none, kMojoPrecAdd + 1);
            flat = "(" + flat + ")";
          }
          L.set_override(r, "sb_rows[unsafe_offset=" + off_name(t) + " + " + flat + "]");
          break;
        }
        case RowRead::Recompute: {
          // The producer's right-hand side at this read's subscripts.
          const Recompute rc = recompute(spec_, p, *r);
          Ls.emplace_back(spec_, *rc.producer, needs_.stmt);
          MojoStmt& P = Ls.back();
          for (const auto& [v, sub] : rc.binds) P.set_override(v, "(" + L.expr(*sub, none) + ")");
          redirect(P, *rc.producer->rhs);
          L.set_override(r, "(" + P.expr(*rc.producer->rhs, none) + ")");
          break;
        }
      }
    }
  };

  PyWriter w(1);
  const int64_t nw = bs_ / 32;
  auto warps_name = [&](DType t) { return std::string("sb_warps_") + scalar(t).mojo_suffix; };
  if (!warp && nw > 1)
    for (DType t : p.reduce_types) w.line(shared_array(warps_name(t), nw, t) + "  # one value per warp");
  MojoStmt& S = fresh(spec_.stmts[p.first]);  // sizes of the layout
  const std::string R = S.extent(spec_.stmts[p.first].out, 0, 0);
  if (staged) {
    use("max.gpu.memory", {"AddressSpace", "external_memory"});
    const std::string sfx = scalar(p.type).mojo_suffix;
    // The dynamic shared memory of the launch, named after its type (a module may hold kernels
    // of several).
    w.line("var sb_rows = external_memory[");
    w.line("    " + std::string(mojo_scalar_type(p.type)) +
           ", address_space=AddressSpace.SHARED, alignment=16, name=\"sb_dynamic_" + sfx + "\"");
    w.line("]()");
    w.line("# Shared memory: the broadcast tensors once per block, then one set of rows per " +
           std::string(warp ? "warp." : "block."));
    std::string at = "0";
    for (int t : p.bcast) {
      w.line("var " + off_name(t) + " = " + at);
      std::string n = S.element_count(t);
      at = off_name(t) + " + " + paren_if_spaced(n);
    }
    std::string row_len = "0";
    const std::vector<int> per_row = worker_rows(p);
    for (int t : per_row)
      row_len = (row_len == "0" ? "" : row_len + " + ") + S.extent(t, 1, kMojoPrecAdd + 1);
    if (!per_row.empty()) {
      w.line("var sb_mine = " + at +
             (warp ? " + (Int(thread_idx.x) // 32) * (" + row_len + ")" : "") + "  # this " +
             (warp ? "warp's" : "block's") + " rows");
      at = "sb_mine";
      for (int t : per_row) {
        w.line("var " + off_name(t) + " = " + at);
        at = off_name(t) + " + " + S.extent(t, 1, kMojoPrecAdd + 1);
      }
    }
  }
  if (warp) {
    w.line("var sb_lane = Int(thread_idx.x) % 32");
    w.line("var sb_worker = (Int(block_idx.x) * Int(block_dim.x) + Int(thread_idx.x)) // 32");
    w.line("var sb_workers = Int(grid_dim.x) * (Int(block_dim.x) // 32)");
  } else {
    w.line("var sb_lane = Int(thread_idx.x)");
    w.line("var sb_worker = Int(block_idx.x)");
    w.line("var sb_workers = Int(grid_dim.x)");
  }
  if (staged && !p.bcast.empty()) {
    use_gpu({"barrier"});
    w.line("# Stage the tensors every row reads alike, once for all the block's rows.");
    for (int t : p.bcast) {
      std::string n = S.element_count(t);
      copy_in(w, "_" + ident(t), S.tensor_name(t), "0", n, off_name(t), "Int(thread_idx.x)",
              str(bs_), spec_.tensors[t].type);
    }
    w.line("barrier()");
  }
  const std::vector<int>& kept = p.kept;  // rank-1 outputs stored to memory
  auto kept_name = [&](int t) { return "sb_kept_" + ident(t); };
  auto store_kept = [&](PyWriter& o, const std::string& cond) {
    o.open("if " + cond + ":");
    for (int t : kept)
      o.line(ident(t) + "[unsafe_offset=sb_kept_row] = " +
             narrowed(spec_.tensors[t].type, kept_name(t)));
    o.dedent();
  };
  if (!kept.empty()) {
    w.line("# The per-row outputs of the worker's i-th row are kept by thread i % " + lanes +
           " and stored");
    w.line("# every " + lanes + " rows, so that every thread stores alike.");
    w.line("var sb_kept_row = -1");
    w.line("var sb_i = 0  # rows this " + std::string(warp ? "warp" : "block") + " has done");
    for (int t : kept) {
      const std::string ty = mojo_scalar_type(compute_type(spec_.tensors[t].type));
      w.line("var " + kept_name(t) + " = " + ty + "(0)");
    }
  }
  w.line("# The row is the same for every thread of the " + std::string(warp ? "warp" : "block") +
         ", so loop bounds and barriers are uniform.");
  w.open("for sb_row in range(sb_worker, " + R + ", sb_workers):");
  if (!kept.empty()) {
    w.open("if sb_i % " + lanes + " == sb_lane:");
    w.line("sb_kept_row = sb_row");
    w.dedent();
  }
  // Every loop along the row visits its elements in the segment order of the anchor's row
  // (RowPlan::anchor). Its segments are declared only when a loop uses them.
  PyWriter segs(2), rb(2);
  std::deque<MojoStmt> anchor_lowering;
  const int anchor = p.anchor;
  std::string anchor_len;
  bool anchor_used = false;
  if (anchor >= 0) {
    anchor_lowering.emplace_back(spec_, spec_.stmts[p.first], needs_.stmt);
    MojoStmt& A = anchor_lowering.back();
    anchor_len = A.extent(anchor, 1, kMojoPrecCmp + 1);
    segments(segs, "", A.tensor_name(anchor),
             "sb_row * " + A.extent(anchor, 1, kMojoPrecMul + 1), anchor_len,
             spec_.tensors[anchor].type);
  }
  // The loop over c in [lo, hi): in segment order when it covers the anchor's row.
  auto row_loop = [&](const std::string& c, const std::string& lo, const std::string& hi) {
    if (anchor < 0 || lo != "0" || hi != anchor_len) {
      rb.open("for " + c + " in range(" + (lo == "0" ? "" : lo + " + ") + "sb_lane, " + hi +
              ", " + lanes + "):");
      return;
    }
    anchor_used = true;
    rb.open("for sb_j in range(sb_lane, " + hi + ", " + lanes + "):");
    rb.line("var " + c + " = " + seg_element("", "sb_j"));
  };
  if (staged && !p.cached.empty()) {
    rb.line("# Stage the rows read more than once: memory is read once per row.");
    for (int t : p.cached) {
      const std::string n = S.tensor_name(t);
      copy_in(rb, "_" + ident(t), n, "sb_row * " + S.extent(t, 1, kMojoPrecMul + 1),
              S.extent(t, 1, kMojoPrecCmp + 1), off_name(t), "sb_lane", lanes,
              spec_.tensors[t].type);
    }
    use_gpu({warp ? "syncwarp" : "barrier"});
    rb.line(sync);
  }
  for (size_t k = p.first; k <= p.last; ++k) {
    const Statement& st = spec_.stmts[k];
    MojoStmt& L = fresh(st);
    rb.line("# " + source_text(st, spec_));
    const bool row_temp = in(p.rows, st.out);
    if (row_temp && !staged) {
      rb.line("# " + spec_.tensors[st.out].name +
              " is not stored: it is recomputed where it is read.");
      continue;
    }
    redirect(L, *st.rhs);
    if (st.rank() == 1) {
      const std::vector<const Expr*> reds = outer_reductions(*st.rhs);
      if (!reds.empty()) {
        const Expr& red = *reds.front();
        const DType t = value_type(red);
        const std::string ty = mojo_scalar_type(t);
        const std::string acc = "sb_acc_" + ident(st.out);
        const IndexVar& var = st.vars[red.ref];
        const std::string kv = L.var_name(red.ref);
        const std::string lo = L.expr(*var.lo, rb, kMojoPrecAdd);
        const std::string hi = L.expr(*var.hi, rb, kMojoPrecCmp + 1);
        rb.line("var " + acc + ": " + ty + " = " + L.identity(red.rop, t));
        row_loop(kv, lo, hi);
        const std::string body = L.expr(*red.args[0], rb, 0);
        rb.line(L.update(red.rop, t, acc, body));
        rb.dedent();
        const std::string wr = warp_allreduce(L, red.rop, t);
        rb.line(acc + " = " + wr + "(" + acc + ")  # every lane of the warp gets the warp's value");
        if (!warp && nw > 1) {
          use_gpu({"barrier"});
          const std::string ws = warps_name(t);
          rb.line("# Every thread combines the warps' values, in the same order.");
          rb.open("if sb_lane % 32 == 0:");
          rb.line(ws + "[unsafe_offset=sb_lane // 32] = " + acc);
          rb.dedent();
          rb.line("barrier()");
          rb.line(acc + " = " + ws + "[unsafe_offset=0]");
          rb.open("for sb_w in range(1, " + str(nw) + "):");
          rb.line(L.update(red.rop, t, acc, ws + "[unsafe_offset=sb_w]"));
          rb.dedent();
          rb.line("barrier()");
        }
        L.set_override(&red, acc);
      }
      const std::string rhs = L.expr(*st.rhs, rb);
      // A row value, in the type it computes in (f32 for f16 and bf16).
      const std::string ty = mojo_scalar_type(compute_type(spec_.tensors[st.out].type));
      rb.line("var " + reg_name(st.out) + ": " + ty + " = " + rhs);
      if (!in(p.row_local, st.out)) {
        outs.insert(st.out);
        tensors.insert(st.out);
        rb.open("if sb_i % " + lanes + " == sb_lane:");
        rb.line(kept_name(st.out) + " = " + reg_name(st.out));
        rb.dedent();
      }
    } else {
      const std::string len = L.extent(st.out, 1, kMojoPrecCmp + 1);
      row_loop("sb_q", "0", len);
      const std::string rhs = L.expr(*st.rhs, rb);
      if (row_temp) {
        rb.line("sb_rows[unsafe_offset=" + off_name(st.out) + " + sb_q] = " + rhs);
      } else {
        rb.line(L.tensor_name(st.out) + "[unsafe_offset=sb_row * " +
                L.extent(st.out, 1, kMojoPrecMul + 1) + " + sb_q] = " +
                narrowed(spec_.tensors[st.out].type, rhs));
        outs.insert(st.out);
      }
      rb.dedent();
    }
    if (barrier_after(p, k, staged)) {
      use_gpu({warp ? "syncwarp" : "barrier"});
      rb.line(sync);
    }
  }
  if (!kept.empty()) {
    rb.line("sb_i += 1");
    store_kept(rb, "sb_i % " + lanes + " == 0");
  }
  PyWriter tail(1);
  if (!kept.empty()) {
    tail.line("# The last rows.");
    store_kept(tail, "sb_kept_row >= 0");
  }
  for (const MojoStmt& L : Ls) {
    tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
    sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
  }
  if (anchor_used) {
    const MojoStmt& A = anchor_lowering.back();
    tensors.insert(A.used_tensors().begin(), A.used_tensors().end());
    sizes.insert(A.used_sizes().begin(), A.used_sizes().end());
  }
  for (int t : kept) tensors.insert(t);

  std::string comments;
  for (size_t k = p.first; k <= p.last; ++k) comments += "# " + source_text(spec_.stmts[k], spec_) + "\n";
  const RowUnit unit = warp ? RowUnit::Warp : RowUnit::Block;
  const std::string text = describe(p, spec_, unit, staged);
  comments += comment(text);
  const int64_t per_block = rows_per_block(p, unit, bs_);
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
         wrap_call("def " + name, ps, " abi(\"C\"):", 0) + "\n" + decls + w.str() +
         (anchor_used ? segs.str() : "") + rb.str() + tail.str() + "\n\n";
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
