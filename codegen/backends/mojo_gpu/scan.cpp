// The mojo_gpu printer's scan form: the cuda printer's three-phase scan (Gen::scan in
// backends/cuda/cuda_kernels.cpp), the same kernels under the same names with the same launch
// geometry. Mojo has no global variables: the per-block totals, a static __device__ array in the
// cuda file, are a scratch buffer of kMaxPartials elements the launcher provides (sb_part).
#include "backends/mojo_gpu/gpu_gen.h"

namespace sb::mojo_gpu {

std::string Gen::scan(const GpuStep& g) {
  const size_t k = g.first;
  const Statement& st = spec_.stmts[k];
  const ScanMatch& m = g.scan;
  const std::string text = source_text(st, spec_);
  const Expr& red = *m.red;
  const ReduceOp op = red.rop;
  const DType t = value_type(red);
  const std::string ty = mojo_scalar_type(t);
  const IndexVar& var = st.vars[red.ref];
  const std::string bs = str(bs_);
  const int64_t nw = bs_ / 32;
  const std::string part = "sb_part: Pointer[" + ty + ", MutUntrackedOrigin]";
  use_gpu({"block_idx", "grid_dim", "thread_idx", "barrier"});
  use("max.gpu.primitives.warp", {"shuffle_up"});

  // The device helper: the inclusive scan of v over the lanes of a full warp.
  MojoStmt LH(spec_, st, needs_.stmt);
  const std::string wscan =
      std::string("sb_warp_scan_") + reduce_name(op) + "_" + scalar(t).mojo_suffix;
  {
    std::string d = "# Inclusive " + std::string(reduce_name(op)) +
                    "-scan of v over the lanes of a full warp (every lane calls it).\n";
    d += "@always_inline\ndef " + wscan + "(v: " + ty + ") -> " + ty + ":\n";
    d += "    var sb_v = v\n    var sb_lane = Int(thread_idx.x) % 32\n    var sb_d = 1\n";
    d += "    while sb_d < 32:\n";
    d += "        var sb_n = shuffle_up(sb_v, UInt32(sb_d))\n";
    d += "        if sb_lane >= sb_d:\n";
    d += "            " + LH.update(op, t, "sb_n", "sb_v") + "\n";
    d += "            sb_v = sb_n\n";
    d += "        sb_d <<= 1\n    return sb_v";
    needs_.helpers.emplace(wscan, d);
  }

  // `dst = src op dst` (the cuda printer's combine(op, src, dst)), through a copy of src.
  auto fold_into = [&](MojoStmt& L, PyWriter& w, const std::string& src, const std::string& dst,
                       const std::string& tmp) {
    w.line("var " + tmp + " = " + src);
    w.line(L.update(op, t, tmp, dst));
    w.line(dst + " = " + tmp);
  };
  // The block-wide inclusive scan of sb_v (one element per thread), continued from sb_carry.
  auto block_scan = [&](MojoStmt& L, PyWriter& w, const std::string& id) {
    w.line("sb_v = " + wscan + "(sb_v)");
    w.open("if sb_tid % 32 == 31:");
    w.line("sb_ws[unsafe_offset=sb_tid // 32] = sb_v");
    w.dedent();
    w.line("barrier()");
    w.open("if sb_tid < 32:");
    w.line("var sb_w = " + id);
    w.open("if sb_tid < " + str(nw) + ":");
    w.line("sb_w = sb_ws[unsafe_offset=sb_tid]");
    w.dedent();
    w.line("sb_w = " + wscan + "(sb_w)");
    w.open("if sb_tid < " + str(nw) + ":");
    w.line("sb_ws[unsafe_offset=sb_tid] = sb_w");
    w.dedent();
    w.dedent();
    w.line("barrier()");
    w.open("if sb_tid >= 32:");
    fold_into(L, w, "sb_ws[unsafe_offset=sb_tid // 32 - 1]", "sb_v", "sb_prev");
    w.dedent();
    fold_into(L, w, "sb_carry", "sb_v", "sb_c");
  };
  auto block_scan_end = [&](MojoStmt& L, PyWriter& w) {
    w.line("var sb_tile_total = sb_ws[unsafe_offset=" + str(nw - 1) + "]");
    w.line(L.update(op, t, "sb_carry", "sb_tile_total"));
    w.line("barrier()  # sb_ws is rewritten by the next tile");
  };
  const std::string chunk_lines =
      "    var sb_len = Int(sb_arg_len)\n    var sb_chunk = Int(sb_arg_chunk)\n";
  std::string out;

  // Phase 1: each block reduces its chunk of elements.
  MojoStmt L1(spec_, st, needs_.stmt);
  PyWriter w1(1);
  w1.line("var sb_tid = Int(thread_idx.x)");
  w1.line("var sb_lo = " + L1.expr(*var.lo, w1, 0) + "  # element p is " + L1.var_name(red.ref) +
          " = sb_lo + p");
  w1.line("var sb_begin = Int(block_idx.x) * sb_chunk");
  w1.line("var sb_end = sb_begin + sb_chunk if sb_begin + sb_chunk < sb_len else sb_len");
  w1.line("var sb_acc = " + L1.identity(op, t));
  w1.open("for sb_p in range(sb_begin + sb_tid, sb_end, " + bs + "):");
  w1.line("var " + L1.var_name(red.ref) + " = sb_lo + sb_p");
  const std::string b1 = L1.expr(*red.args[0], w1, 0);
  w1.line(L1.update(op, t, "sb_acc", b1));
  w1.dedent();
  block_combine(L1, w1, op, t, 'w');
  w1.open("if sb_tid == 0:");
  w1.line("sb_part[unsafe_offset=Int(block_idx.x)] = sb_acc");
  w1.dedent();
  out += kernel("# " + text + "\n" +
                    comment("Scan phase 1: each block reduces its chunk of elements into "
                            "sb_part[block_idx.x]; sb_part is a device buffer of " +
                            str(kMaxPartials) +
                            " elements the launcher provides (Mojo has no global variables).") +
                    "# Launch: blocks of " + bs + " threads, grid = sb_parts.\n",
                fn(k, "_partial"), L1, w1, {part, "sb_arg_len: Int64", "sb_arg_chunk: Int64"},
                chunk_lines);

  // Phase 2: one block scans the block totals in place.
  MojoStmt L2(spec_, st, needs_.stmt);
  PyWriter w2(1);
  const std::string id2 = L2.identity(op, t);
  w2.line("var sb_tid = Int(thread_idx.x)");
  w2.line("# One value per warp.");
  w2.line(shared_array("sb_ws", nw, t));
  w2.line("var sb_carry = " + id2);
  w2.open("for sb_p0 in range(0, sb_parts, " + bs + "):");
  w2.line("var sb_p = sb_p0 + sb_tid");
  w2.line("var sb_v = " + id2);
  w2.open("if sb_p < sb_parts:");
  w2.line("sb_v = sb_part[unsafe_offset=sb_p]");
  w2.dedent();
  block_scan(L2, w2, id2);
  w2.open("if sb_p < sb_parts:");
  w2.line("sb_part[unsafe_offset=sb_p] = sb_v");
  w2.dedent();
  block_scan_end(L2, w2);
  w2.dedent();
  out += kernel(
      comment("Scan phase 2: one block turns sb_part[0, sb_parts) into its inclusive scan.") +
          "# Launch: one block of " + bs + " threads.\n",
      fn(k, "_carry"), L2, w2, {part, "sb_arg_parts: Int64"},
      "    var sb_parts = Int(sb_arg_parts)\n");

  // Element p (j = lo + p) completes output i = p + sb_shift (scan_shift).
  const std::optional<int64_t> known_shift = scan_shift(st, m);
  const bool shift_known = known_shift.has_value();
  const int64_t shift = known_shift.value_or(0);

  // Phase 3: each block scans its chunk again, starting from the total of the chunks before.
  MojoStmt L3(spec_, st, needs_.stmt);
  PyWriter w3(1);
  const std::string id3 = L3.identity(op, t);
  const std::string iv = L3.var_name(0);
  w3.line("var sb_tid = Int(thread_idx.x)");
  w3.line("# One value per warp.");
  w3.line(shared_array("sb_ws", nw, t));
  if (!shift_known || shift > 0) {
    const std::string n = L3.extent(st.out, 0, kMojoPrecAdd + 1);
    w3.line("# Outputs before the first element fold nothing: the identity.");
    w3.open("for " + iv + " in range(Int(block_idx.x) * " + bs + " + sb_tid, min(sb_shift, " + n +
            "), Int(grid_dim.x) * " + bs + "):");
    w3.line("var sb_v = " + id3);
    L3.set_override(&red, "sb_v");
    L3.assign(w3);
    L3.clear_overrides();
    w3.dedent();
  }
  w3.line("var sb_lo = " + L3.expr(*var.lo, w3, 0));
  w3.line("var sb_begin = Int(block_idx.x) * sb_chunk");
  w3.line("var sb_end = sb_begin + sb_chunk if sb_begin + sb_chunk < sb_len else sb_len");
  w3.line("var sb_carry = " + id3);
  w3.open("if Int(block_idx.x) > 0:");
  w3.line("sb_carry = sb_part[unsafe_offset=Int(block_idx.x) - 1]");
  w3.dedent();
  w3.open("for sb_p0 in range(sb_begin, sb_end, " + bs + "):");
  w3.line("var sb_p = sb_p0 + sb_tid");
  w3.line("var sb_v = " + id3);
  w3.open("if sb_p < sb_end:");
  w3.line("var " + L3.var_name(red.ref) + " = sb_lo + sb_p");
  const std::string b3 = L3.expr(*red.args[0], w3, 0);
  w3.line("sb_v = " + b3);
  w3.dedent();
  block_scan(L3, w3, id3);
  w3.open(!shift_known || shift < 0 ? "if sb_p < sb_end and sb_p + sb_shift >= 0:"
                                    : "if sb_p < sb_end:");
  w3.line("var " + iv + " = sb_p + sb_shift");
  L3.set_override(&red, "sb_v");
  L3.assign(w3);
  L3.clear_overrides();
  w3.dedent();
  block_scan_end(L3, w3);
  w3.dedent();
  out += kernel(
      comment("Scan phase 3: each block scans its chunk from the total of the chunks before it.") +
          "# Launch: blocks of " + bs + " threads, grid = sb_parts.\n",
      fn(k, "_scan"), L3, w3,
      {part, "sb_arg_len: Int64", "sb_arg_chunk: Int64", "sb_arg_shift: Int64"},
      chunk_lines + "    var sb_shift = Int(sb_arg_shift)\n");

  // The launcher, as the cuda one; sb_part is allocated on first use and kept.
  const std::string slot = "sb_scratch_" + fn(k).substr(3);
  scratch_.push_back("static void* " + slot + " = NULL;  // sb_part of " + fn(k) + "_partial");
  open_stmt(k, st);
  body_.line("void* sb_part = NULL;");
  body_.line("SB_MOJO_CHECK(sb_mojo_scratch(&" + slot + ", " + str(kMaxPartials) +
             " * sizeof(" + c_type(t) + "), &sb_part));");
  HelperSet no_helpers;
  StmtLowering H(spec_, st, &no_helpers);
  scan_grid(spec_, st, m, bs_, H, body_);
  sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  launch(fn(k, "_partial"), "(unsigned)sb_parts", bs_, L1, {"sb_part", "sb_len", "sb_chunk"});
  launch(fn(k, "_carry"), "1", bs_, L2, {"sb_part", "sb_parts"});
  launch(fn(k, "_scan"), "(unsigned)sb_parts", bs_, L3,
         {"sb_part", "sb_len", "sb_chunk", "sb_shift"});
  body_.close();
  return out;
}

}  // namespace sb::mojo_gpu
