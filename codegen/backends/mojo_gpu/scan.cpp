// The mojo_gpu printer's scan form: the three-phase scan written once for both GPU printers
// (lower/gpu_bodies.h: scan_bodies), the same kernels as the cuda printer's under the same names
// with the same launch geometry. Mojo has no global variables: the per-block totals, a static
// __device__ array in the cuda file, are a scratch buffer of kMaxPartials elements the launcher
// provides (sb_part).
#include "backends/mojo_gpu/gpu_gen.h"
#include "lower/gpu_bodies.h"

namespace sb::mojo_gpu {

// The device helper: the inclusive scan of v over the lanes of a full warp. Returns its name.
std::string Gen::warp_scan(MojoStmt& L, ReduceOp op, DType t) {
  use_gpu({"thread_idx"});
  use("max.gpu.primitives.warp", {"shuffle_up"});
  const std::string ty = mojo_scalar_type(t);
  const std::string name =
      std::string("sb_warp_scan_") + reduce_name(op) + "_" + scalar(t).mojo_suffix;
  std::string d = "# Inclusive " + std::string(reduce_name(op)) +
                  "-scan of v over the lanes of a full warp (every lane calls it).\n";
  d += "@always_inline\ndef " + name + "(v: " + ty + ") -> " + ty + ":\n";
  d += "    var sb_v = v\n    var sb_lane = Int(thread_idx.x) % 32\n    var sb_d = 1\n";
  d += "    while sb_d < 32:\n";
  d += "        var sb_n = shuffle_up(sb_v, UInt32(sb_d))\n";
  d += "        if sb_lane >= sb_d:\n";
  d += "            " + L.update(op, t, "sb_n", "sb_v") + "\n";
  d += "            sb_v = sb_n\n";
  d += "        sb_d <<= 1\n    return sb_v";
  needs_.helpers.emplace(name, d);
  return name;
}

std::string Gen::scan(const GpuStep& g) {
  const size_t k = g.first;
  const Statement& st = spec_.stmts[k];
  const ScanMatch& m = g.scan;
  const std::string text = source_text(st, spec_);
  const DType t = value_type(*m.red);
  const std::string bs = str(bs_);
  const std::string part =
      "sb_part: Pointer[" + std::string(mojo_scalar_type(t)) + ", MutUntrackedOrigin]";
  const std::string chunk_lines =
      "    var sb_len = Int(sb_arg_len)\n    var sb_chunk = Int(sb_arg_chunk)\n";
  const ScanBodies bodies = scan_bodies(spec_, st, m, bs_, "sb_part", scan_shift(st, m));
  std::string out;

  MojoStmt L1(spec_, st, needs_.stmt);
  PyWriter w1(1);
  print_body(bodies.partial, L1, w1);
  out += kernel("# " + text + "\n" +
                    comment("Scan phase 1: each block reduces its chunk of elements into "
                            "sb_part[block_idx.x]; sb_part is a device buffer of " +
                            str(kMaxPartials) +
                            " elements the launcher provides (Mojo has no global variables).") +
                    "# Launch: blocks of " + bs + " threads, grid = sb_parts.\n",
                fn(k, "_partial"), L1, w1, {part, "sb_arg_len: Int64", "sb_arg_chunk: Int64"},
                chunk_lines);

  MojoStmt L2(spec_, st, needs_.stmt);
  PyWriter w2(1);
  print_body(bodies.carry, L2, w2);
  out += kernel(
      comment("Scan phase 2: one block turns sb_part[0, sb_parts) into its inclusive scan.") +
          "# Launch: one block of " + bs + " threads.\n",
      fn(k, "_carry"), L2, w2, {part, "sb_arg_parts: Int64"},
      "    var sb_parts = Int(sb_arg_parts)\n");

  MojoStmt L3(spec_, st, needs_.stmt);
  PyWriter w3(1);
  print_body(bodies.offsets, L3, w3);
  out += kernel(
      comment("Scan phase 3: each block scans its chunk from the total of the chunks before it.") +
          "# Launch: blocks of " + bs + " threads, grid = sb_parts.\n",
      fn(k, "_scan"), L3, w3,
      {part, "sb_arg_len: Int64", "sb_arg_chunk: Int64", "sb_arg_shift: Int64"},
      chunk_lines + "    var sb_shift = Int(sb_arg_shift)\n");

  // The launcher, as the cuda one.
  open_stmt(k, st);
  part_scratch(k, t);
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
