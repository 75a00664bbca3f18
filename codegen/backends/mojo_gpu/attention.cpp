// The mojo_gpu printer's fused attention (Gen::attention), as the cuda printer's of the same name
// (backends/cuda/cuda_kernels.cpp): a block owns bq queries of one batch element and ec output
// columns and walks the keys in blocks of bk with an online softmax. Mojo: the registers of
// scores and outputs are SIMD values indexed in comptime loops, the index variables of the
// statements are variables of the kernel assigned where they are bound, and the weight
// exp(s - m) is printed where it is used, from sb_x and sb_max.
#include "backends/mojo_gpu/gpu_gen.h"

namespace sb::mojo_gpu {

namespace {

// The index variables `e` uses, outside the subtree `skip` (Mojo warns of an index assigned and
// never read).
void used_vars(const Expr& e, const Expr* skip, std::set<int>& out) {
  if (&e == skip) return;
  if (e.kind == ExprKind::IndexVar) out.insert(e.ref);
  for (const auto& a : e.args) used_vars(*a, skip, out);
}

}  // namespace

std::string Gen::attention(const GpuStep& g) {
  const Attention& a = g.att;
  const size_t first = a.first, last = a.first + kAttentionStatements - 1;
  const Statement& ss = spec_.stmts[first];
  const Statement& sp = spec_.stmts[first + 2];
  const Statement& sy = spec_.stmts[last];
  const bool batched = a.scores.batched;
  auto p = [&](const char* n) { return param(v_, *info_, n); };
  const int64_t BQ = p("bq"), BK = p("bk"), EC = p("ec"), NT = bs_;
  const int64_t DC = cuda::kAttentionDepthChunk;
  const int64_t RS = BQ * BK / NT, RA = BQ * EC / NT;
  SB_ASSERT(RS >= 1 && RA >= 1 && NT >= BQ && RS * NT == BQ * BK && RA * NT == BQ * EC,
            "flash_attention parameters that check_params should have rejected");
  const DType t = a.type;
  const std::string ty = mojo_scalar_type(t), dt = mojo_dtype_name(t);
  const std::string qpitch = str(DC + 1), ppitch = str(BK + 1);
  use_gpu({"block_idx", "thread_idx", "barrier"});
  MojoStmt S(spec_, ss, needs_.stmt);
  MojoStmt P(spec_, sp, needs_.stmt);
  MojoStmt Y(spec_, sy, needs_.stmt);
  const int s_i = a.scores.out_row_dim(), s_j = s_i + 1, s_d = a.scores.k;
  const int y_i = a.values.out_row_dim(), y_e = y_i + 1, y_j = a.values.k;
  const Expr& dot = *a.scores.reduce->args[0];
  const Expr* q_read = a.scores.x_read;
  const Expr* k_read = a.scores.y_read;
  const Expr* v_read = a.values.y_read;
  const Expr* l_read = a.sum_l;
  const std::string ninf = S.identity(ReduceOp::Max, t);

  PyWriter w(1);
  // The query and the key or column of register r's slot sb_t + r * block_size, in a row of
  // `per_row` slots.
  auto slot = [&w, NT](int64_t per_row, const std::string& name) {
    const std::string at = "(sb_t + sb_r * " + str(NT) + ")";
    w.line("var sb_qi = " + at + " // " + str(per_row));
    w.line("var " + name + " = " + at + " % " + str(per_row));
  };
  w.line("# Shared memory: the queries' depths d0.. [query][depth], the keys' same depths");
  w.line("# [key][depth], the block's scores then weights [query][key], its values");
  w.line("# [key][column]; per query the running max, the running sum and the rescale factor.");
  w.line(shared_array("sb_qs", BQ * (DC + 1), t));
  w.line(shared_array("sb_ks", BK * (DC + 1), t));
  w.line(shared_array("sb_ps", BQ * (BK + 1), t));
  w.line(shared_array("sb_vs", BK * EC, t));
  w.line(shared_array("sb_mx", BQ, t));
  w.line(shared_array("sb_sum", BQ, t));
  w.line(shared_array("sb_scale", BQ, t));
  w.line("var sb_t = Int(thread_idx.x)");
  if (batched) w.line("var sb_b = Int(block_idx.x) // sb_qblocks");
  w.line("var sb_i0 = Int(block_idx.x) % sb_qblocks * " + str(BQ));
  w.line("var sb_e0 = Int(block_idx.y) * " + str(EC));
  w.line("# Indices, assigned where they are bound.");
  std::set<std::string> declared;
  auto declare = [&](const std::string& n) {
    if (declared.insert(n).second) w.line("var " + n + ": Int");
  };
  for (int d : {s_i, s_j, s_d}) declare(S.var_name(d));
  for (int d : {y_i, y_e, y_j}) declare(Y.var_name(d));
  // The batch index: the output's first, and the scores' where they use it.
  std::set<int> in_scores, in_score_epilogue;
  used_vars(*ss.rhs, nullptr, in_scores);
  used_vars(*ss.rhs, a.scores.reduce, in_score_epilogue);
  if (batched) {
    declare(Y.var_name(0));
    w.line(Y.var_name(0) + " = sb_b");
    if (Y.var_name(0) != S.var_name(0) && in_scores.count(0)) {
      declare(S.var_name(0));
      w.line(S.var_name(0) + " = sb_b");
    }
  }
  w.line("var sb_m = " + Y.extent(sy.out, static_cast<size_t>(y_i), 0) + "  # queries");
  w.line("var sb_e = " + Y.extent(sy.out, static_cast<size_t>(y_e), 0) + "  # value columns");
  w.line("var sb_n = " + Y.expr(*sy.vars[y_j].hi, w, 0) + "  # keys");
  w.line("var sb_dlo = " + S.expr(*ss.vars[s_d].lo, w, 0) + "  # the depths of the scores' sum");
  w.line("var sb_dhi = " + S.expr(*ss.vars[s_d].hi, w, 0));
  w.open("if sb_t < " + str(BQ) + ":");
  w.line("sb_mx[unsafe_offset=sb_t] = " + ninf);
  w.line("sb_sum[unsafe_offset=sb_t] = 0");
  w.dedent();
  w.line("# Outputs (sb_t + r * " + str(NT) + ") // ec, % ec of the block.");
  w.line("var sb_acc = SIMD[" + dt + ", " + str(RA) + "](0)");
  w.open("for sb_j0 in range(0, sb_n, " + str(BK) + "):");
  w.line("var sb_kn = min(" + str(BK) + ", sb_n - sb_j0)");
  w.line("# The block's scores: thread sb_t holds those of slots sb_t + r * " + str(NT) +
         " (query slot // bk, key slot % bk).");
  w.line("var sb_dot = SIMD[" + dt + ", " + str(RS) + "](0)");
  w.open("for sb_d0 in range(sb_dlo, sb_dhi, " + str(DC) + "):");
  // The guarded load of one element of `read` into `dest`, its indices assigned first.
  auto guarded = [&](MojoStmt& L, const Expr& read, const std::vector<std::string>& binds,
                     const std::string& cond, const std::string& dest) {
    for (const std::string& b : binds) w.line(b);
    w.line("var sb_x = " + ty + "(0)");
    w.open("if " + cond + ":");
    const std::string v = L.expr(read, w);
    w.line("sb_x = " + v);
    w.dedent();
    w.line(dest + " = sb_x");
  };
  w.open("for sb_slot in range(sb_t, " + str(BQ * DC) + ", " + str(NT) + "):");
  w.line("var sb_qi = sb_slot // " + str(DC));
  w.line("var sb_dd = sb_slot % " + str(DC));
  guarded(S, *q_read,
          {S.var_name(s_i) + " = sb_i0 + sb_qi", S.var_name(s_d) + " = sb_d0 + sb_dd"},
          S.var_name(s_i) + " < sb_m and " + S.var_name(s_d) + " < sb_dhi",
          "sb_qs[unsafe_offset=sb_qi * " + qpitch + " + sb_dd]");
  w.dedent();
  w.open("for sb_slot in range(sb_t, " + str(BK * DC) + ", " + str(NT) + "):");
  w.line("var sb_kj = sb_slot // " + str(DC));
  w.line("var sb_dd = sb_slot % " + str(DC));
  guarded(S, *k_read,
          {S.var_name(s_j) + " = sb_j0 + sb_kj", S.var_name(s_d) + " = sb_d0 + sb_dd"},
          "sb_kj < sb_kn and " + S.var_name(s_d) + " < sb_dhi",
          "sb_ks[unsafe_offset=sb_kj * " + qpitch + " + sb_dd]");
  w.dedent();
  w.line("barrier()");
  w.open("comptime for sb_r in range(" + str(RS) + "):");
  slot(BK, "sb_kj");
  w.open("for sb_dd in range(" + str(DC) + "):  # zeros past the depths");
  w.line("var sb_a = sb_qs[unsafe_offset=sb_qi * " + qpitch + " + sb_dd]");
  w.line("var sb_b2 = sb_ks[unsafe_offset=sb_kj * " + qpitch + " + sb_dd]");
  S.set_override(q_read, "sb_a");
  S.set_override(k_read, "sb_b2");
  w.line(S.update(ReduceOp::Sum, t, "sb_dot[sb_r]", S.expr(dot, w, 0)));
  S.clear_overrides();
  w.dedent();
  w.dedent();
  w.line("barrier()");
  w.dedent();
  w.line("# The scores' statement with its sum replaced by the dot product; -inf past the keys.");
  w.open("comptime for sb_r in range(" + str(RS) + "):");
  slot(BK, "sb_kj");
  w.line("var sb_s = " + ninf);
  w.open("if sb_i0 + sb_qi < sb_m and sb_kj < sb_kn:");
  if (in_score_epilogue.count(s_i)) w.line(S.var_name(s_i) + " = sb_i0 + sb_qi");
  if (in_score_epilogue.count(s_j)) w.line(S.var_name(s_j) + " = sb_j0 + sb_kj");
  S.set_override(a.scores.reduce, "sb_dot[sb_r]");
  const std::string score = S.expr(*ss.rhs, w, 0);
  w.line("sb_s = " + score);
  S.clear_overrides();
  w.dedent();
  w.line("sb_ps[unsafe_offset=sb_qi * " + ppitch + " + sb_kj] = sb_s");
  w.dedent();
  w.line("# The block's values, zero past the keys and the columns.");
  w.open("for sb_slot in range(sb_t, " + str(BK * EC) + ", " + str(NT) + "):");
  w.line("var sb_kj = sb_slot // " + str(EC));
  w.line("var sb_ee = sb_slot % " + str(EC));
  guarded(Y, *v_read,
          {Y.var_name(y_j) + " = sb_j0 + sb_kj", Y.var_name(y_e) + " = sb_e0 + sb_ee"},
          "sb_kj < sb_kn and " + Y.var_name(y_e) + " < sb_e", "sb_vs[unsafe_offset=sb_slot]");
  w.dedent();
  w.line("barrier()");
  w.line("# The online softmax, a thread per query: the block's max (NaN propagates; a max still");
  w.line("# -inf is taken as 0, so such keys weigh 0), the rescale factor, the weights, the sum.");
  w.line("# The weight is " + source_text(sp, spec_) + " of sb_x and sb_max.");
  P.set_override(a.weight_s, "sb_x");
  P.set_override(a.weight_m, "sb_max");
  w.open("if sb_t < " + str(BQ) + ":");
  w.line("var sb_bm = sb_mx[unsafe_offset=sb_t]");
  w.open("for sb_kj in range(sb_kn):");
  w.line("var sb_s = sb_ps[unsafe_offset=sb_t * " + ppitch + " + sb_kj]");
  w.line(S.update(ReduceOp::Max, t, "sb_bm", "sb_s"));
  w.dedent();
  w.line("var sb_max = sb_bm if sb_bm != " + ninf + " else " + ty + "(0)");
  w.line("var sb_x = sb_mx[unsafe_offset=sb_t]");
  const std::string sc = P.expr(*sp.rhs, w, 0);
  w.line("var sb_sc = " + sc);
  w.line("var sb_l = sb_sum[unsafe_offset=sb_t] * sb_sc");
  w.open("for sb_kj in range(" + str(BK) + "):");
  w.line("var sb_w = " + ty + "(0)");
  w.open("if sb_kj < sb_kn:");
  w.line("sb_x = sb_ps[unsafe_offset=sb_t * " + ppitch + " + sb_kj]");
  const std::string wt = P.expr(*sp.rhs, w, 0);
  w.line("sb_w = " + wt);
  w.line("sb_l += sb_w");
  w.dedent();
  w.line("sb_ps[unsafe_offset=sb_t * " + ppitch + " + sb_kj] = sb_w");
  w.dedent();
  w.line("sb_mx[unsafe_offset=sb_t] = sb_bm");
  w.line("sb_sum[unsafe_offset=sb_t] = sb_l");
  w.line("sb_scale[unsafe_offset=sb_t] = sb_sc");
  w.dedent();
  P.clear_overrides();
  w.line("barrier()");
  w.line("# The outputs: rescaled, plus the weights times the values.");
  w.open("comptime for sb_r in range(" + str(RA) + "):");
  slot(EC, "sb_ee");
  w.line("var sb_o = sb_acc[sb_r] * sb_scale[unsafe_offset=sb_qi]");
  w.open("for sb_kj in range(" + str(BK) + "):");
  w.line("sb_o += sb_ps[unsafe_offset=sb_qi * " + ppitch + " + sb_kj] * sb_vs[unsafe_offset=sb_kj * " +
         str(EC) + " + sb_ee]");
  w.dedent();
  w.line("sb_acc[sb_r] = sb_o");
  w.dedent();
  w.line("barrier()");
  w.dedent();
  w.line("# The weighted sum's statement, its sum the accumulated outputs and l the running sum.");
  w.open("comptime for sb_r in range(" + str(RA) + "):");
  slot(EC, "sb_ee");
  w.open("if sb_i0 + sb_qi < sb_m and sb_e0 + sb_ee < sb_e:");
  w.line(Y.var_name(y_i) + " = sb_i0 + sb_qi");
  w.line(Y.var_name(y_e) + " = sb_e0 + sb_ee");
  Y.set_override(a.values.reduce, "sb_acc[sb_r]");
  Y.set_override(l_read, "sb_sum[unsafe_offset=sb_qi]");
  Y.assign(w);
  Y.clear_overrides();
  w.dedent();
  w.dedent();

  // The signature: what the three lowerings used, the output writable, then sb_qblocks.
  std::set<int> tensors, sizes;
  for (const MojoStmt* L : {&S, &P, &Y}) {
    tensors.insert(L->used_tensors().begin(), L->used_tensors().end());
    sizes.insert(L->used_sizes().begin(), L->used_sizes().end());
  }
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
