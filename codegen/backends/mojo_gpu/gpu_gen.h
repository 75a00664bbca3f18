// The mojo_gpu printer's generator class, shared by the files that print its kernel forms
// (gpu_kernels.cpp, and one file per form printed on its own). Internal to backends/mojo_gpu/.
#pragma once

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "backends/common/emit_common.h"
#include "backends/common/gpu_launch.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/mojo_gpu/gpu_kernels.h"
#include "backends/mojo_gpu/strategies.h"
#include "ir/scalar_types.h"
#include "lower/gpu_bodies.h"
#include "lower/loop_ir.h"
#include "support/diag.h"

namespace sb::mojo_gpu {


inline std::string str(int64_t v) { return std::to_string(v); }

// An element of type `t` loaded as `v`, in the type it computes in: f16 and bf16 widened to f32,
// as the mojo lowering reads them (MojoStmt), for the forms that load elements themselves.
inline std::string widened(DType t, const std::string& v) {
  if (!is_storage_type(t)) return v;
  return v + ".cast[" + mojo_dtype_name(compute_type(t)) + "]()";
}
// The value `v` (any expression) stored to an element of type `t`: rounded to f16 or bf16
// (nearest even), as the mojo lowering stores them.
inline std::string narrowed(DType t, const std::string& v) {
  if (!is_storage_type(t)) return v;
  return "(" + v + ").cast[" + mojo_dtype_name(t) + "]()";
}

// The grid-wide index of this thread, as an Int.
inline const char* const kThreadIndex = "Int(block_idx.x) * Int(block_dim.x) + Int(thread_idx.x)";
inline const char* const kGridThreads = "Int(block_dim.x) * Int(grid_dim.x)";

// A "# ..." comment wrapped at 100 columns.
inline std::string comment(const std::string& text) {
  std::string out, line = "#";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (line.size() + 1 + word.size() > 100 && line != "#") {
      out += line + "\n";
      line = "#";
    }
    line += " " + word;
    pos = end + 1;
  }
  return out + line + "\n";
}

// The printer of one variant's kernels and launcher. Its forms are member functions: the
// elementwise and reduction forms are defined here, inline; a form with a file of its own under
// this folder (fused rows, matmul tiles, transpose and stencil tiles, the scan) is declared here
// and defined there.
class Gen {
 public:
  Gen(const Spec& spec, const Variant& v, GpuFileNeeds& needs)
      : spec_(spec), v_(v), needs_(needs) {
    const cuda::CudaStrategy* s = cuda::find_cuda_strategy(v.strategy);
    SB_ASSERT(s != nullptr, "unknown cuda strategy " + v.strategy);
    info_ = &s->info;
    bs_ = cuda::block_size_of(v_, *info_);
    bps_ = cuda::blocks_per_sm_of(v_, *info_);
  }

  VariantCode run() {
    VariantCode code;
    code.kernels = comment("Variant " + v_.name + ": " + info_->doc + ".") + "\n";
    for (const GpuStep& g : variant_mapping(spec_, v_).steps) code.kernels += step(g);
    CodeWriter fn(1);
    unpack_args(spec_, "sb_a", tensors_, sizes_, fn);
    fn.line("void* sb_stream = sb_a->stream;");
    if (needs_max_grid_) {
      fn.line("int sb_sm_count = 0;");
      fn.line("SB_MOJO_CHECK(sb_mojo_sm_count(&sb_sm_count));");
      max_grid_line(bps_, fn);
    }
    code.launcher = "// Variant " + v_.name + " (strategy " + v_.strategy + ").\n";
    code.launcher += "static int " + variant_fn(v_) + "(const sb_args* sb_a) {\n";
    code.launcher += fn.str() + "\n" + body_.str() + "  return 0;\n}\n\n";
    code.kernel_names = kernel_names_;
    code.scratch = scratch_;
    code.launches = launches_;
    return code;
  }

 private:
  std::string fn(size_t k, const std::string& suffix = "") const {
    return "sb_" + v_.name + "_s" + str(static_cast<int64_t>(k)) + suffix;
  }

  std::string step(const GpuStep& g) {
    SB_ASSERT(kernel_form(g.kind).printed,
              std::string("a mojo_gpu variant with an unprinted form: ") + gpu_kernel_name(g.kind));
    const Statement& st = spec_.stmts[g.first];
    switch (g.kind) {
      case GpuKernel::ThreadPerElement:
        return generic(g.first, st, false);
      case GpuKernel::GridStride:
        return generic(g.first, st, true);
      case GpuKernel::Vectorized:
        return vectorized(g.first, st, g.vec);
      case GpuKernel::TreeReduce:
      case GpuKernel::WarpReduce:
      case GpuKernel::AtomicReduce:
        return scalar_reduce(g.first, st, *g.red.red, g.kind);
      case GpuKernel::Scan:
        return scan(g);
      case GpuKernel::WarpPerRow:
        return row_reduce(g.first, st, *g.red.red, true);
      case GpuKernel::BlockPerRow:
        return row_reduce(g.first, st, *g.red.red, false);
      case GpuKernel::FusedRows:
        return fused_rows(g);
      case GpuKernel::TiledTranspose:
        return tiled_transpose(g);
      case GpuKernel::TiledStencil:
        return tiled_stencil(g);
      case GpuKernel::TiledMatmul:
        return tiled_matmul(g);
      case GpuKernel::RegisterBlocked:
        return register_blocked(g);
      case GpuKernel::FusedAttention:
        return attention(g);
    }
    SB_ASSERT(false, "mojo_gpu form without a printer");
    return "";
  }

  // The kernel: comments, @export, signature from L's uses, the sizes converted to Int, `body`.
  std::string kernel(const std::string& comments, const std::string& name, MojoStmt& L,
                     const PyWriter& body, const std::vector<std::string>& extra = {},
                     const std::string& extra_lines = "") {
    std::vector<std::string> ps;
    for (int t : L.used_tensors()) {
      const Tensor& tn = spec_.tensors[t];
      ps.push_back(mojo_ident(tn.name) + ": Pointer[" + mojo_scalar_type(tn.type) + ", " +
                   (t == L.stmt().out ? "MutUntrackedOrigin" : "ImmUntrackedOrigin") + "]");
    }
    std::string sizes;
    for (int s : L.used_sizes()) {
      const std::string n = mojo_ident(spec_.sizes[s].name);
      ps.push_back("sb_arg_" + n + ": Int64");
      sizes += "    var " + n + " = Int(sb_arg_" + n + ")\n";
    }
    ps.insert(ps.end(), extra.begin(), extra.end());
    sizes += extra_lines;
    return comments + "@export(\"" + name + "\")\n" + wrap_call("def " + name, ps, " abi(\"C\"):", 0) +
           "\n" + sizes + body.str() + "\n\n";
  }

  void use_gpu(std::initializer_list<const char*> names) { use("max.gpu", names); }

  // ---- the launcher (C++, generated/<k>/mojo_gpu/<k>.launch.cpp) -------------------------------

  // Opens the launcher's block for statement k.
  void open_stmt(size_t k, const Statement& st) {
    if (k > 0 || !body_.str().empty()) body_.line("");
    body_.line("// " + source_text(st, spec_));
    body_.open("{");
  }

  // The launcher's sb_part for statement k's per-block values of type `t`: a buffer of
  // kMaxPartials elements, allocated on first use and kept, as the cuda file's static
  // __device__ array (Mojo has no global variables).
  void part_scratch(size_t k, DType t) {
    const std::string slot = "sb_scratch_" + fn(k).substr(3);
    scratch_.push_back("static void* " + slot + " = NULL;  // sb_part of " + fn(k) + "_partial");
    body_.line("void* sb_part = NULL;");
    body_.line("SB_MOJO_CHECK(sb_mojo_scratch(&" + slot + ", " + str(kMaxPartials) +
               " * sizeof(" + c_type(t) + "), &sb_part));");
  }

  // Launches kernel `name` (the Mojo function exported under that name) with arguments in its
  // parameter order: the tensors and sizes L used (spec order), then `extra`.
  void launch(const std::string& name, const std::string& grid, int64_t block, MojoStmt& L,
              const std::vector<std::string>& extra = {}) {
    launch(name, grid, str(block), block, "0", L, extra);
  }
  // The general form: `block` as written (a number, or a dim3 of `threads` threads, e.g.
  // "sb_block" declared as `const dim3 sb_block(32, 8);`), `smem` the dynamic shared memory in
  // bytes ("0" for none). SB_MOJO_LAUNCH takes numbers or dim3s for the grid and the block.
  void launch(const std::string& name, const std::string& grid, const std::string& block,
              int64_t threads, const std::string& smem, MojoStmt& L,
              const std::vector<std::string>& extra = {}) {
    launch_into(body_, name, grid, block, threads, smem, L, extra);
  }
  // The same, printed into `w` (a branch of the launcher).
  void launch_into(CodeWriter& w, const std::string& name, const std::string& grid,
                   const std::string& block, int64_t threads, const std::string& smem,
                   MojoStmt& L, const std::vector<std::string>& extra = {}) {
    launch_into(w, name, grid, block, threads, smem, L.used_tensors(), L.used_sizes(), extra);
  }
  // The same for a kernel whose parameters are `tensors` and `sizes` (spec order).
  void launch_into(CodeWriter& w, const std::string& name, const std::string& grid,
                   const std::string& block, int64_t threads, const std::string& smem,
                   const std::set<int>& tensors, const std::set<int>& sizes,
                   const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {name, grid, block, smem, "sb_stream"};
    for (const auto& a : call_args(spec_, tensors, sizes)) args.push_back(a);
    args.insert(args.end(), extra.begin(), extra.end());
    w.line(wrap_call("SB_MOJO_LAUNCH", args, ";", 2 * w.indent()));
    tensors_.insert(tensors.begin(), tensors.end());
    sizes_.insert(sizes.begin(), sizes.end());
    if (std::find(kernel_names_.begin(), kernel_names_.end(), name) == kernel_names_.end())
      kernel_names_.push_back(name);
    for (KernelLaunch& l : launches_)
      if (l.kernel == name) {
        if (l.block_threads != threads) l.block_threads = 0;
        l.dynamic_shared = l.dynamic_shared || smem != "0";
        return;
      }
    launches_.push_back({name, v_.name, threads, smem != "0"});
  }
  void use(const std::string& module, std::initializer_list<const char*> names) {
    for (const char* n : names) needs_.imports[module].insert(n);
  }

  // ---- generic ---------------------------------------------------------------------------------

  std::string generic(size_t k, const Statement& st, bool grid_stride) {
    const std::string text = source_text(st, spec_);
    MojoStmt L(spec_, st, needs_.stmt);
    PyWriter w(1);
    print_body(element_body(spec_, st, grid_stride), L, w);
    std::string launch = "one block of one thread";
    if (st.rank() > 0) {
      const std::string total = L.element_count(st.out);
      launch = grid_stride ? "blocks of " + str(bs_) + " threads, grid = min(ceil(" + total +
                                 " / " + str(bs_) + "), SMs * " + str(bps_) + ")"
                           : "blocks of " + str(bs_) + " threads, grid = ceil(" + total + " / " +
                                 str(bs_) + ")";
    }
    open_stmt(k, st);
    if (st.rank() == 0) {
      this->launch(fn(k), "1", 1, L);
    } else {
      grid_lines(st, [&](StmtLowering& H) { return element_grid(st, bs_, grid_stride, H, body_); });
      this->launch(fn(k), "sb_grid", bs_, L);
    }
    body_.close();
    return kernel("# " + text + "\n" + comment("Launch: " + launch + "."), fn(k), L, w);
  }

  // Prints the launch plan's lines for statement `st` (`grid`, a function of gpu_launch.h given
  // a C++ lowering of `st`) and unpacks the sizes they read; `grid` returns whether the lines
  // read sb_max_grid.
  void grid_lines(const Statement& st, const std::function<bool(StmtLowering&)>& grid) {
    HelperSet none;
    StmtLowering H(spec_, st, &none);
    if (grid(H)) needs_max_grid_ = true;
    sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  }

  // ---- vectorized ------------------------------------------------------------------------------

  // As the cuda printer's: the reads of tensors of the output's shape at the output's own
  // indices (m.contiguous) and the write move as 16-byte vectors (8 bytes for the narrower
  // tensors beside an f64) in a grid-stride loop over vectors when every such buffer is 16-byte
  // aligned, then a scalar grid-stride tail. Reads along the output's rows (m.row_contiguous)
  // stay per lane.
  std::string vectorized(size_t k, const Statement& st, const VectorizeMatch& m) {
    const std::string text = source_text(st, spec_);
    MojoStmt L(spec_, st, needs_.stmt);
    PyWriter w(1);
    print_body(vectorized_body(spec_, st, m), L, w);
    const int lanes = vector_lanes(spec_, st, m);
    const std::string ls = str(lanes);
    const std::string launch = "blocks of " + str(bs_) + " threads, grid = min(ceil(ceil(" +
                               L.element_count(st.out) + " / " + ls + ") / " + str(bs_) +
                               "), SMs * " + str(bps_) + ")";
    open_stmt(k, st);
    grid_lines(st, [&](StmtLowering& H) { return vector_grid(st, lanes, bs_, H, body_); });
    this->launch(fn(k), "sb_grid", bs_, L);
    body_.close();
    return kernel("# " + text + "\n" + comment("Launch: " + launch + "."), fn(k), L, w);
  }

  // ---- reductions to a scalar -----------------------------------------------------------------

  // A shared-memory array of `n` elements of `t` (a compile-time constant), for the block.
  std::string shared_array(const std::string& name, const std::string& n, DType t) {
    use("std.memory", {"stack_allocation"});
    use("max.gpu.memory", {"AddressSpace"});
    return "var " + name + " = stack_allocation[" + n + ", " + mojo_scalar_type(t) +
           ", address_space=AddressSpace.SHARED]()";
  }
  std::string shared_array(const std::string& name, int64_t n, DType t) {
    return shared_array(name, str(n), t);
  }

  // The device helper combining v over the 32 lanes of a full warp with butterfly shuffles; every
  // lane gets the result. Returns its name.
  std::string warp_allreduce(MojoStmt& L, ReduceOp op, DType t) {
    use("max.gpu.primitives.warp", {"shuffle_xor"});
    const std::string ty = mojo_scalar_type(t);
    const std::string name = std::string("sb_warp_") + reduce_name(op) + "_" + scalar(t).mojo_suffix;
    std::string d = "# The " + std::string(reduce_name(op)) +
                    " of v over the 32 lanes of a full warp (every lane calls it and gets it).\n";
    d += "@always_inline\ndef " + name + "(v: " + ty + ") -> " + ty + ":\n";
    d += "    var sb_v = v\n    var sb_o = 16\n    while sb_o > 0:\n";
    d += "        var sb_n = shuffle_xor(sb_v, UInt32(sb_o))\n";
    d += "        " + L.update(op, t, "sb_v", "sb_n") + "\n";
    d += "        sb_o >>= 1\n    return sb_v";
    needs_.helpers.emplace(name, d);
    return name;
  }

  // The device helper combining v into p[] atomically where CUDA has no atomic for it (a float
  // max or min, any product), as the cuda printer's: a compare-and-swap loop on the bits, NaN
  // propagating as in sb_max and sb_min. Returns its name.
  std::string atomic_cas(MojoStmt& L, ReduceOp op, DType t) {
    use("std.memory", {"bitcast"});
    const std::string ty = mojo_scalar_type(t);
    const std::string name =
        std::string("sb_atomic_") + reduce_name(op) + "_" + scalar(t).mojo_suffix;
    const std::string bits = "DType.uint" + str(8 * dtype_bytes(t));
    std::string d =
        op == ReduceOp::Prod
            ? "# An atomic multiply for " + ty + ": a compare-and-swap loop on its bits.\n"
            : std::string("# An atomic ") + reduce_name(op) + " for " + ty +
                  ": a compare-and-swap loop on its bits; NaN propagates as in sb_" +
                  reduce_name(op) + ".\n";
    d += "@always_inline\ndef " + name + "(p: Pointer[" + ty + ", MutUntrackedOrigin], v: " + ty +
         "):\n";
    d += "    var sb_old = Atomic.load[ordering=Ordering.RELAXED](p)\n";
    d += "    while True:\n";
    d += "        var sb_new = sb_old\n";
    d += "        " + L.update(op, t, "sb_new", "v") + "\n";
    d += "        if bitcast[" + bits + "](sb_new) == bitcast[" + bits + "](sb_old):\n";
    d += "            return\n";
    d += "        # On failure, sb_old becomes the value seen.\n";
    d += "        if Atomic.compare_exchange[\n";
    d += "            success_ordering=Ordering.RELAXED, failure_ordering=Ordering.RELAXED\n";
    d += "        ](p, sb_old, sb_new):\n";
    d += "            return";
    needs_.helpers.emplace(name, d);
    return name;
  }

  // As the cuda printer's: pass 1, a grid-stride share of the reduction per thread combined per
  // block; then, for 't' and 'w', the block's value in sb_part[block] and pass 2, one block
  // combining them and applying the rest of the statement; for 'a', the output set to the
  // identity first, each block's value folded in atomically (fetch_add, Mojo's integer atomic
  // max and min, or atomic_cas), and the rest of the statement applied in place by a last
  // one-thread kernel. Mojo has no global variables: sb_part, a static
  // __device__ buffer in the cuda file, is a kernel argument here.
  std::string scalar_reduce(size_t k, const Statement& st, const Expr& red, GpuKernel kind) {
    const std::string text = source_text(st, spec_);
    const DType t = value_type(red);
    const std::string ty = mojo_scalar_type(t);
    const IndexVar& var = st.vars[red.ref];
    const bool epilogue = st.rhs.get() != &red;
    const std::string bs = str(bs_);
    const std::string part = "sb_part: Pointer[" + ty + ", MutUntrackedOrigin]";
    const bool atomic = kind == GpuKernel::AtomicReduce;
    const ScalarReduceBodies bodies = scalar_reduce_bodies(spec_, st, red, kind, bs_, "sb_part");
    std::string out;

    // Pass 1.
    MojoStmt L1(spec_, st, needs_.stmt);
    PyWriter w(1);
    print_body(bodies.partial, L1, w);
    std::string n_text;
    {
      MojoStmt H(spec_, st, needs_.stmt);
      PyWriter none;
      const std::string hlo = H.expr(*var.lo, none, kMojoPrecAdd + 1);
      const std::string hhi = H.expr(*var.hi, none, kMojoPrecAdd);
      n_text = hlo == "0" ? hhi : hhi + " - " + hlo;
    }
    if (n_text.find(' ') != std::string::npos) n_text = "(" + n_text + ")";
    const std::string grid = "min(ceil(" + n_text + " / " + bs + "), SMs * " + str(bps_) +
                             (atomic ? "" : ", 1024") + "), at least 1";
    if (atomic) {
      const std::string o = L1.tensor_name(st.out);
      MojoStmt L0(spec_, st, needs_.stmt);
      PyWriter w0(1);
      w0.line(L0.tensor_name(st.out) + "[] = " + L0.identity(red.rop, t));
      open_stmt(k, st);
      grid_lines(st, [&](StmtLowering& H) { return reduce_blocks(var, bs_, "", H, body_); });
      this->launch(fn(k, "_init"), "1", 1, L0);
      this->launch(fn(k, "_atomic"), "(unsigned)sb_blocks", bs_, L1);
      out += kernel("# " + text + "\n# The accumulator, " + o +
                        "[], starts at the identity.\n# Launch: one block of one thread.\n",
                    fn(k, "_init"), L0, w0);
      out += kernel(comment("Each block combines a grid-stride share and " +
                            std::string(red.rop == ReduceOp::Sum ? "adds it atomically to "
                                                                 : "folds it atomically into ") +
                            o + "[].") +
                        comment("Launch: blocks of " + bs + " threads, grid = " + grid + "."),
                    fn(k, "_atomic"), L1, w);
      if (epilogue) {
        MojoStmt L3(spec_, st, needs_.stmt);
        PyWriter w3(1);
        w3.line("var sb_acc = " + L3.tensor_name(st.out) + "[]");
        L3.set_override(&red, "sb_acc");
        L3.assign(w3);
        out += kernel("# The rest of the statement, applied to the reduced value in place.\n"
                      "# Launch: one block of one thread.\n",
                      fn(k, "_final"), L3, w3);
        this->launch(fn(k, "_final"), "1", 1, L3);
      }
      body_.close();
      return out;
    }
    out += kernel("# " + text + "\n" +
                      comment("Pass 1: each block combines a grid-stride share into "
                              "sb_part[block_idx.x]; sb_part is a device buffer of 1024 elements "
                              "the launcher provides (Mojo has no global variables).") +
                      comment("Launch: blocks of " + bs + " threads, grid = " + grid + "."),
                  fn(k, "_partial"), L1, w, {part});

    // Pass 2.
    MojoStmt L2(spec_, st, needs_.stmt);
    PyWriter w2(1);
    print_body(bodies.final, L2, w2);
    out += kernel(comment("Pass 2: one block combines sb_part[0, sb_parts), pass 1's grid, into "
                          "the output.") +
                      comment("Launch: one block of " + bs + " threads."),
                  fn(k, "_final"), L2, w2, {part, "sb_arg_parts: Int64"},
                  "    var sb_parts = Int(sb_arg_parts)\n");
    open_stmt(k, st);
    part_scratch(k, t);
    grid_lines(st, [&](StmtLowering& H) {
      return reduce_blocks(var, bs_, "sb_part", H, body_);
    });
    this->launch(fn(k, "_partial"), "(unsigned)sb_blocks", bs_, L1, {"sb_part"});
    this->launch(fn(k, "_final"), "1", bs_, L2, {"sb_part", "sb_blocks"});
    body_.close();
    return out;
  }

  // ---- row-wise reductions --------------------------------------------------------------------

  // As the cuda printer's: one warp (or one block) per output element, its lanes (threads)
  // striding the reduction, combined by warp shuffles (or a shared-memory tree); lane (thread) 0
  // applies the rest of the statement.
  std::string row_reduce(size_t k, const Statement& st, const Expr& red, bool warp) {
    const std::string text = source_text(st, spec_);
    MojoStmt L(spec_, st, needs_.stmt);
    PyWriter w(1);
    print_body(row_reduce_body(spec_, st, red, warp, bs_), L, w);
    const std::string total = L.element_count(st.out);
    const int64_t wpb = bs_ / 32;
    const std::string t_text = total.find(' ') == std::string::npos ? total : "(" + total + ")";
    const std::string launch =
        warp ? "blocks of " + str(bs_) + " threads, grid = ceil(" + t_text + " / " + str(wpb) +
                   ") (" + str(wpb) + " warps per block)"
             : "blocks of " + str(bs_) + " threads, grid = min(" + total + ", 65535)";
    open_stmt(k, st);
    grid_lines(st, [&](StmtLowering& H) {
      row_reduce_grid(st, bs_, warp, H, body_);
      return false;
    });
    this->launch(fn(k), "sb_grid", bs_, L);
    body_.close();
    return kernel("# " + text + "\n" + comment("Launch: " + launch + "."), fn(k), L, w);
  }

  // ---- forms in files of their own ----------------------------------------------------------

  // Each prints the kernels of one step of the variant's GPU mapping and its launches, as the
  // cuda printer prints the same step (backends/cuda/cuda_kernels.cpp). Declared for every form;
  // a form whose file is not written yet is not printed (strategies.cpp) and never called.
  std::string fused_rows(const GpuStep& g);        // fused_rows.cpp
  std::string fused_kernel(const RowPlan& p, bool warp, bool staged, std::string& out,
                           std::set<int>& tensors, std::set<int>& sizes,
                           std::set<int>& outs);  // fused_rows.cpp
  std::string tiled_matmul(const GpuStep& g);      // matmul.cpp
  std::string register_blocked(const GpuStep& g);  // matmul.cpp
  std::string tiled_transpose(const GpuStep& g);   // transpose.cpp
  // Prints kernel body `b` (lower/gpu_bodies.h) into `w` through statement printer `L`, its
  // leaves spelled by Leaves (loops.cpp); a kernel of several statements gives the printer of
  // each through `others`.
  class Leaves;
  void print_body(const loops::Block& b, MojoStmt& L, PyWriter& w,
                  std::function<MojoStmt&(int)> others = nullptr);  // loops.cpp
  std::string tiled_stencil(const GpuStep& g);     // stencil.cpp
  std::string scan(const GpuStep& g);              // scan.cpp
  std::string warp_scan(MojoStmt& L, ReduceOp op, DType t);  // scan.cpp
  std::string attention(const GpuStep& g);         // attention.cpp

  const Spec& spec_;
  const Variant& v_;
  GpuFileNeeds& needs_;
  CodeWriter body_{1};                     // the launcher's statements
  std::set<int> tensors_, sizes_;          // what the launcher unpacks
  bool needs_max_grid_ = false;            // a grid is capped at SMs * blocks_per_sm
  std::vector<std::string> kernel_names_;  // every kernel launched, in order
  std::vector<std::string> scratch_;       // file-level scratch slots
  std::vector<KernelLaunch> launches_;
  const StrategyInfo* info_ = nullptr;
  int64_t bs_ = 256;
  int64_t bps_ = 4;
};

}  // namespace sb::mojo_gpu
