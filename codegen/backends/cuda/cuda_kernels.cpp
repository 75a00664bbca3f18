#include "backends/cuda/cuda_kernels.h"

#include <functional>
#include <set>
#include <vector>

#include "backends/common/loop_leaves.h"
#include "backends/cpu/print_loops.h"
#include "ir/affine.h"
#include "lower/gpu_bodies.h"
#include "lower/gpu_mapping.h"
#include "lower/patterns.h"

namespace sb::cuda {

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

const char* sfx(DType t) {
  return scalar(t).suffix;
}

// A wrapping integer type (its + and * are helpers).
bool wraps(DType t) {
  return scalar(t).kind == ScalarKind::SignedInt;
}

std::string identity(ReduceOp op, DType t) {
  return reduce_identity(op, t);
}

// `a` combined with `b` (both primary expressions or already parenthesised for `+`), with the
// same arithmetic as the generic lowering's reduction loops: wrapping i32 sums and products,
// NaN-propagating floating-point max and min.
std::string combine(ReduceOp op, DType t, const std::string& a, const std::string& b,
                    HelperSet& h) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod: {
      const bool add = op == ReduceOp::Sum;
      if (wraps(t)) {
        h.use(wrapping_helper(t, add ? BinOp::Add : BinOp::Mul));
        return std::string(add ? "sb_add_" : "sb_mul_") + sfx(t) + "(" + a + ", " + b + ")";
      }
      return a + (add ? " + " : " * ") + b;
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
      const bool mx = op == ReduceOp::Max;
      h.use(min_max_helper(t, mx));
      return std::string(mx ? "sb_max_" : "sb_min_") + sfx(t) + "(" + a + ", " + b + ")";
    }
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      SB_ASSERT(false, "an arg-reduction after check (check/arg_reductions.h rewrites them)");
  }
  return a;
}

// The 16-byte vector type holding `lanes` elements of `t` (or 8 bytes for two f32/i32).
std::string vector_type(DType t, int lanes) {
  const ScalarType& s = scalar(t);
  const char* v = lanes == 4 ? s.cuda_vector4 : s.cuda_vector2;
  SB_ASSERT(v && 16 % (lanes * s.bytes) == 0,
            "no CUDA vector of " + std::to_string(lanes) + " " + s.name);
  return v;
}

// The comment block above a kernel (lines "// ...\n"), each line wrapped at 100 columns except
// the statements' own text, which is kept whole.
std::string wrap_kernel_comments(const std::string& comments, const Spec& spec) {
  std::string wrapped;
  for (size_t a = 0, b; a < comments.size(); a = b + 1) {
    b = comments.find('\n', a);
    if (b == std::string::npos) b = comments.size();
    const std::string line = comments.substr(a, b - a);
    bool stmt = false;
    for (const Statement& st : spec.stmts) stmt = stmt || line == "// " + source_text(st, spec);
    wrapped += stmt ? line + "\n" : wrap_comment(line);
  }
  return wrapped;
}

class Gen final {
 public:
  Gen(const Spec& spec, const Variant& v, const CudaStrategy& strategy, FileParts& file)
      : spec_(spec), v_(v), strategy_(strategy), info_(strategy.info), file_(file),
        h_(file.helpers) {
    bs_ = block_size_of(v, info_);
    bps_ = blocks_per_sm_of(v, info_);
  }

  // Prints the variant's GPU mapping (lower/gpu_mapping.h), step by step.
  VariantCode run();

 private:
  // One step of the mapping: its kernels and launch.
  void step(const GpuStep& g);
  // The printers of the step kinds.
  void generic(size_t k, const Statement& st, bool grid_stride);
  void vectorized(size_t k, const Statement& st, const VectorizeMatch& m);
  // kind: GpuKernel::TreeReduce, WarpReduce or AtomicReduce.
  void scalar_reduce(size_t k, const Statement& st, const Expr& red, GpuKernel kind);
  void row_reduce(size_t k, const Statement& st, const Expr& red, bool warp);
  void tiled_matmul(size_t k, const Statement& st, const MatmulMatch& m);
  void register_blocked(size_t k, const Statement& st, const MatmulMatch& m);
  void transpose(size_t k, const Statement& st, const TransposeMatch& m);
  void stencil(size_t k, const Statement& st, const StencilMatch& m);
  void scan(size_t k, const Statement& st, const ScanMatch& m);
  void attention(const Attention& a);
  // Prints kernel body `b` (lower/gpu_bodies.h) into `w` through statement printer `L`, its
  // leaves spelled by Leaves.
  class Leaves;
  void print_body(const loops::Block& b, StmtLowering& L, CodeWriter& w);

 private:
  int64_t p(const std::string& name) const { return param(v_, info_, name); }
  std::string fn(size_t k, const std::string& suffix = "") const {
    return "sb_" + v_.name + "_s" + str(static_cast<int64_t>(k)) + suffix;
  }
  std::string scratch(size_t k) const {
    return "sb_part_" + v_.name + "_s" + str(static_cast<int64_t>(k));
  }

  // Appends a kernel: `comments` (each line "// ...\n"), then its signature from L's uses.
  void kernel(const std::string& comments, const std::string& name, int64_t bounds, StmtLowering& L,
              int out, const std::vector<std::string>& extra, const CodeWriter& body) {
    const std::string head =
        "__global__ void " + (bounds > 0 ? "__launch_bounds__(" + str(bounds) + ") " : "") + name;
    std::vector<std::string> ps =
        kernel_params(spec_, L.used_tensors(), L.used_sizes(), out, "__restrict__");
    for (const auto& e : extra) ps.push_back(e);
    kernels_ += wrap_kernel_comments(comments, spec_) + wrap_call(head, ps, " {", 0) + "\n" +
                body.str() + "}\n\n";
  }

  // Launches a kernel whose parameters came from L (plus `extra`), then checks the launch.
  // `threads` is the block's size, `block` as written (a number, or a dim3 of that many).
  void launch(CodeWriter& w, const std::string& name, const std::string& grid,
              const std::string& block, int64_t threads, const std::string& smem,
              const StmtLowering& L, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {name, grid, block, smem, "sb_stream"};
    for (const auto& a : call_args(spec_, L.used_tensors(), L.used_sizes())) args.push_back(a);
    for (const auto& a : extra) args.push_back(a);
    w.line(wrap_call("SB_LAUNCH", args, ";", 2 * w.indent()));
    w.line("SB_CHECK_LAUNCH(" + name + ");");
    note(L);
    record_launch(name, block, threads, smem);
  }

  // Records a launch for VariantCode::launches. A block written as a number must be `threads`.
  void record_launch(const std::string& name, const std::string& block, int64_t threads,
                     const std::string& smem) {
    SB_ASSERT(threads > 0, "launch of " + name + " without a block size");
    SB_ASSERT(block.find_first_not_of("0123456789") != std::string::npos || block == str(threads),
              "launch of " + name + " with block " + block + " recorded as " + str(threads));
    for (KernelLaunch& l : launches_) {
      if (l.kernel != name) continue;
      if (l.block_threads != threads) l.block_threads = 0;  // more than one block size
      l.dynamic_shared = l.dynamic_shared || smem != "0";
      return;
    }
    launches_.push_back({name, v_.name, threads, smem != "0"});
  }

  // Records what a lowering used, so the launcher declares it.
  void note(const StmtLowering& L) {
    tensors_.insert(L.used_tensors().begin(), L.used_tensors().end());
    sizes_.insert(L.used_sizes().begin(), L.used_sizes().end());
  }

  void open_stmt(size_t k, const Statement& st) {
    if (k > 0) body_.line("");
    body_.line("// " + source_text(st, spec_));
    body_.open("{");
  }

  // A CUDA-only device helper, defined once per file.
  void device_helper(const std::string& name, const std::string& def) {
    file_.device_helpers.emplace(name, def);
  }
  std::string warp_allreduce(ReduceOp op, DType t);
  std::string warp_scan(ReduceOp op, DType t);
  std::string atomic_stmt(ReduceOp op, DType t, const std::string& ptr, const std::string& value);

  // Statement lowerings.
  std::string generic_kernel(size_t k, const Statement& st, const std::string& suffix,
                             StmtLowering& L);
  void fused_rows(const RowPlan& p, bool warp);
  std::string fused_kernel(const RowPlan& p, bool warp, bool staged, std::set<int>& tensors,
                           std::set<int>& sizes, std::set<int>& outs);

  const Spec& spec_;
  const Variant& v_;
  const CudaStrategy& strategy_;
  const StrategyInfo& info_;
  FileParts& file_;
  HelperSet& h_;
  int64_t bs_ = 256;
  int64_t bps_ = 4;
  std::string kernels_;
  CodeWriter body_{1};
  std::set<int> tensors_, sizes_;
  bool needs_max_grid_ = false;
  std::vector<KernelLaunch> launches_;  // every launch so far, for VariantCode::launches
};

std::string Gen::warp_allreduce(ReduceOp op, DType t) {
  const std::string name = std::string("sb_warp_") + reduce_name(op) + "_" + sfx(t);
  const std::string ct = c_type(t);
  std::string d = "// The " + std::string(reduce_name(op)) +
                  " of v over the 32 lanes of a full warp (every lane calls it and gets it).\n";
  d += "static __device__ __forceinline__ " + ct + " " + name + "(" + ct + " v) {\n";
  d += "  for (int sb_o = 16; sb_o > 0; sb_o >>= 1) {\n";
  d += "    const " + ct + " sb_n = __shfl_xor_sync(0xffffffffu, v, sb_o);\n";
  d += "    v = " + combine(op, t, "v", "sb_n", h_) + ";\n";
  d += "  }\n  return v;\n}\n";
  device_helper(name, d);
  return name;
}

std::string Gen::warp_scan(ReduceOp op, DType t) {
  const std::string name = std::string("sb_warp_scan_") + reduce_name(op) + "_" + sfx(t);
  const std::string ct = c_type(t);
  std::string d = "// Inclusive " + std::string(reduce_name(op)) +
                  "-scan of v over the lanes of a full warp (every lane calls it).\n";
  d += "static __device__ __forceinline__ " + ct + " " + name + "(" + ct + " v) {\n";
  d += "  const unsigned sb_lane = threadIdx.x % 32;\n";
  d += "  for (unsigned sb_d = 1; sb_d < 32; sb_d <<= 1) {\n";
  d += "    const " + ct + " sb_n = __shfl_up_sync(0xffffffffu, v, sb_d);\n";
  d += "    if (sb_lane >= sb_d) v = " + combine(op, t, "sb_n", "v", h_) + ";\n";
  d += "  }\n  return v;\n}\n";
  device_helper(name, d);
  return name;
}

std::string Gen::atomic_stmt(ReduceOp op, DType t, const std::string& ptr,
                             const std::string& value) {
  if (op == ReduceOp::Sum) return "atomicAdd(" + ptr + ", " + value + ");";
  const bool mx = op == ReduceOp::Max;
  if (!is_float(t) && op != ReduceOp::Prod)  // CUDA's integer atomicMax and atomicMin
    return std::string(mx ? "atomicMax(" : "atomicMin(") + ptr + ", " + value + ");";
  // Floating-point max and min, and every product (CUDA has no atomic multiply): a
  // compare-and-swap loop on the bits.
  const std::string name = std::string("sb_atomic_") + reduce_name(op) + "_" + sfx(t);
  const std::string ct = c_type(t);
  const std::string bits = scalar(t).c_bits_type;
  std::string d = op == ReduceOp::Prod
                      ? "// An atomic multiply for " + ct + ": a compare-and-swap loop on its " +
                            "bits.\n"
                      : "// atomic" + std::string(mx ? "Max" : "Min") + " for " + ct +
                            ": a compare-and-swap loop on its bits; NaN propagates as in sb_" +
                            (mx ? "max_" : "min_") + sfx(t) + ".\n";
  d += "static __device__ void " + name + "(" + ct + "* p, " + ct + " v) {\n";
  d += "  " + bits + "* sb_u = (" + bits + "*)p;\n";
  d += "  " + bits + " sb_old = *(volatile " + bits + "*)sb_u;\n";
  d += "  while (true) {\n";
  d += "    " + ct + " sb_cur;\n";
  d += "    memcpy(&sb_cur, &sb_old, sizeof sb_cur);\n";
  d += "    const " + ct + " sb_new = " + combine(op, t, "sb_cur", "v", h_) + ";\n";
  d += "    " + bits + " sb_bits;\n";
  d += "    memcpy(&sb_bits, &sb_new, sizeof sb_bits);\n";
  d += "    if (sb_bits == sb_old) return;\n";
  d += "    const " + bits + " sb_seen = atomicCAS(sb_u, sb_old, sb_bits);\n";
  d += "    if (sb_seen == sb_old) return;\n";
  d += "    sb_old = sb_seen;\n";
  d += "  }\n}\n";
  device_helper(name, d);
  file_.needs_string_h = true;
  return name + "(" + ptr + ", " + value + ");";
}

// ---- generic ----------------------------------------------------------------------------------

void Gen::generic(size_t k, const Statement& st, bool grid_stride) {
  const std::string text = source_text(st, spec_);
  const bool scalar = st.rank() == 0;
  StmtLowering L(spec_, st, &h_);
  CodeWriter kb(1);
  print_body(element_body(spec_, st, grid_stride), L, kb);
  const std::string name = fn(k);
  kernel("// " + text + "\n", name, scalar ? 0 : bs_, L, st.out, {}, kb);

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  std::string grid = "1", threads = "1";
  if (!scalar) {
    if (element_grid(st, bs_, grid_stride, H, body_)) needs_max_grid_ = true;
    grid = "sb_grid";
    threads = str(bs_);
  }
  launch(body_, name, grid, threads, scalar ? 1 : bs_, "0", L);
  note(H);
  body_.close();
}

// The grid-stride kernel of a statement under another name, for launchers that need a fallback.
std::string Gen::generic_kernel(size_t k, const Statement& st, const std::string& suffix,
                                StmtLowering& L) {
  CodeWriter kb(1);
  print_body(element_body(spec_, st, true), L, kb);
  const std::string name = fn(k, suffix);
  kernel("// The same statement with a grid-stride loop, for launches the tiles do not fit.\n",
         name, bs_, L, st.out, {}, kb);
  return name;
}

// ---- vectorized -------------------------------------------------------------------------------

void Gen::vectorized(size_t k, const Statement& st, const VectorizeMatch& m) {
  const std::string text = source_text(st, spec_);
  StmtLowering L(spec_, st, &h_);
  CodeWriter w(1);
  print_body(vectorized_body(spec_, st, m), L, w);
  const int lanes = vector_lanes(spec_, st, m);
  const std::string name = fn(k);
  kernel("// " + text + "\n", name, bs_, L, st.out, {}, w);

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  if (vector_grid(st, lanes, bs_, H, body_)) needs_max_grid_ = true;
  launch(body_, name, "sb_grid", str(bs_), bs_, "0", L);
  note(H);
  body_.close();
}

// ---- reductions to a scalar -------------------------------------------------------------------

void Gen::scalar_reduce(size_t k, const Statement& st, const Expr& red, GpuKernel kind) {
  const std::string text = source_text(st, spec_);
  const DType t = value_type(red);
  const std::string ct = c_type(t);
  const std::string id = identity(red.rop, t);
  const IndexVar& var = st.vars[red.ref];
  const std::string part = scratch(k);
  const std::string bs = str(bs_);
  const bool epilogue = st.rhs.get() != &red;
  const bool atomic = kind == GpuKernel::AtomicReduce;
  const ScalarReduceBodies bodies = scalar_reduce_bodies(spec_, st, red, kind, bs_, part);

  // Pass 1: a grid-stride loop over the reduction range, then a block-wide combination.
  StmtLowering L1(spec_, st, &h_);
  CodeWriter w(1);
  print_body(bodies.partial, L1, w);
  std::string first;
  StmtLowering L0(spec_, st, &h_);
  if (atomic) {
    // The output starts at the identity; a last one-thread kernel applies the epilogue.
    const std::string out = L1.tensor_name(st.out);
    CodeWriter w0(1);
    w0.line(L0.tensor_name(st.out) + "[0] = " + id + ";");
    kernel("// " + text + "\n// The accumulator, " + out + "[0], starts at the identity.\n",
           fn(k, "_init"), 0, L0, st.out, {}, w0);
    first = fn(k, "_atomic");
    kernel("// Each block combines a grid-stride share and adds it atomically to " + out + "[0].\n",
           first, bs_, L1, st.out, {}, w);
  } else {
    file_.globals += wrap_comment("// Per-block results of " + fn(k, "_partial") + " (at most " +
                                  str(kMaxPartials) + " blocks).");
    file_.globals += "static __device__ " + ct + " " + part + "[" + str(kMaxPartials) + "];\n";
    first = fn(k, "_partial");
    kernel("// " + text + "\n// Pass 1: each block combines a grid-stride share into " + part +
               "[blockIdx.x].\n",
           first, bs_, L1, st.out, {}, w);
  }

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  if (reduce_blocks(var, bs_, !atomic ? part : "", H, body_)) needs_max_grid_ = true;

  if (atomic) {
    launch(body_, fn(k, "_init"), "1", "1", 1, "0", L0);
    launch(body_, first, "(unsigned)sb_blocks", bs, bs_, "0", L1);
    if (epilogue) {
      StmtLowering L3(spec_, st, &h_);
      CodeWriter w3(1);
      w3.line("const " + ct + " sb_acc = " + L3.tensor_name(st.out) + "[0];");
      L3.set_override(&red, "sb_acc");
      L3.assign(w3);
      kernel("// The rest of the statement, applied to the reduced value in place.\n",
             fn(k, "_final"), 0, L3, st.out, {}, w3);
      launch(body_, fn(k, "_final"), "1", "1", 1, "0", L3);
    }
  } else {
    // Pass 2: one block combines the partial results and applies the rest of the statement.
    StmtLowering L2(spec_, st, &h_);
    CodeWriter w2(1);
    print_body(bodies.final, L2, w2);
    kernel("// Pass 2: one block combines the " + part + "[0, sb_parts) into the output.\n",
           fn(k, "_final"), bs_, L2, st.out, {"const int64_t sb_parts"}, w2);
    launch(body_, first, "(unsigned)sb_blocks", bs, bs_, "0", L1);
    launch(body_, fn(k, "_final"), "1", bs, bs_, "0", L2, {"sb_blocks"});
  }
  note(H);
  body_.close();
}

// ---- row-wise reductions ----------------------------------------------------------------------

void Gen::row_reduce(size_t k, const Statement& st, const Expr& red, bool warp) {
  const std::string text = source_text(st, spec_);
  StmtLowering L(spec_, st, &h_);
  CodeWriter w(1);
  print_body(row_reduce_body(spec_, st, red, warp, bs_), L, w);
  const std::string name = fn(k);
  kernel("// " + text + "\n", name, bs_, L, st.out, {}, w);

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  row_reduce_grid(st, bs_, warp, H, body_);
  launch(body_, name, "sb_grid", str(bs_), bs_, "0", L);
  note(H);
  body_.close();
}

// ---- matrix products --------------------------------------------------------------------------

void Gen::tiled_matmul(size_t k, const Statement& st, const MatmulMatch& m) {
  const std::string text = source_text(st, spec_);
  const int64_t T = p("tile");
  const std::string ts = str(T);
  StmtLowering L(spec_, st, &h_);
  CodeWriter w(1);
  print_body(matmul_tile(spec_, st, m, T), L, w);
  const std::string name = fn(k);
  kernel("// " + text + "\n// " + ts + " x " + ts +
             " output tiles; the k range goes through shared-memory tiles of both operands" +
             (m.batched ? "; the products along the grid's z (a grid-stride loop over them)"
                        : "") +
             ".\n",
         name, T * T, L, st.out, {}, w);

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  matmul_grid(st, m.batched, T, T, H, body_);
  body_.line("const dim3 sb_block(" + ts + ", " + ts + ");");
  launch(body_, name, "sb_grid", "sb_block", T * T, "0", L);
  note(H);
  body_.close();
}

void Gen::register_blocked(size_t k, const Statement& st, const MatmulMatch& m) {
  const std::string text = source_text(st, spec_);
  const int64_t BM = p("bm"), BN = p("bn"), BK = p("bk"), TM = p("tm"), TN = p("tn");
  const int64_t NT = (BM / TM) * (BN / TN);
  StmtLowering L(spec_, st, &h_);
  CodeWriter w(1);
  print_body(register_blocked_body(spec_, st, m, {BM, BN, BK, TM, TN}), L, w);
  const std::string name = fn(k);
  kernel("// " + text + "\n// " + str(BM) + " x " + str(BN) + " output tiles, " + str(TM) + " x " +
             str(TN) + " outputs per thread in registers; k in steps of " + str(BK) +
             " through shared memory" +
             (m.batched ? "; the products along the grid's z (a grid-stride loop over them)"
                        : "") +
             ".\n",
         name, NT, L, st.out, {}, w);

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  matmul_grid(st, m.batched, BM, BN, H, body_);
  launch(body_, name, "sb_grid", str(NT), NT, "0", L);
  note(H);
  body_.close();
}

// ---- kernel bodies as loop IR -----------------------------------------------------------------

// The CUDA spelling of the spec's leaves and the GPU nodes of a kernel body written as loop IR
// (lower/gpu_bodies.h), printed by the C loop printer (backends/cpu/print_loops.h) into `w`
// through statement printer `L`.
class Gen::Leaves : public GpuLeaves<StmtLowering, CodeWriter> {
 public:
  Leaves(Gen& g, StmtLowering& L, CodeWriter& w) : GpuLeaves(L, w), g_(g) {}
  std::string warp(loops::WarpOp w, ReduceOp op, DType t, const std::string& value) override {
    switch (w) {
      case loops::WarpOp::AllReduce:
        return g_.warp_allreduce(op, t) + "(" + value + ")";
      case loops::WarpOp::Scan:
        return g_.warp_scan(op, t) + "(" + value + ")";
    }
    SB_ASSERT(false, "a warp reduction the cuda printer does not spell");
    return "";
  }
  void atomic_fold(int tensor, const std::string& index, ReduceOp op, DType t,
                   const std::string& value) override {
    const std::string p = L_.tensor_name(tensor);
    w_.line(g_.atomic_stmt(op, t, index == "0" ? p : p + " + " + index, value));
  }
  std::string gpu_index(loops::GpuIndex g) override {
    switch (g) {
      case loops::GpuIndex::ThreadX:
        return "(int64_t)threadIdx.x";
      case loops::GpuIndex::ThreadY:
        return "(int64_t)threadIdx.y";
      case loops::GpuIndex::ThreadZ:
        return "(int64_t)threadIdx.z";
      case loops::GpuIndex::BlockX:
        return "(int64_t)blockIdx.x";
      case loops::GpuIndex::BlockY:
        return "(int64_t)blockIdx.y";
      case loops::GpuIndex::BlockZ:
        return "(int64_t)blockIdx.z";
      case loops::GpuIndex::BlockDimX:
        return "(int64_t)blockDim.x";
      case loops::GpuIndex::GridDimX:
        return "(int64_t)gridDim.x";
      case loops::GpuIndex::GridDimZ:
        return "(int64_t)gridDim.z";
    }
    SB_ASSERT(false, "a GPU index the cuda printer does not spell");
    return "";
  }
  void barrier(bool warp) override { w_.line(warp ? "__syncwarp();" : "__syncthreads();"); }
  void shared_array(const std::string& name, DType t, const std::string& count) override {
    if (count.empty())
      w_.line("SB_DYNAMIC_SHARED(" + std::string(c_type(t)) + ", " + name + ");");
    else
      w_.line("SB_SHARED_ARRAY(" + std::string(c_type(t)) + ", " + name + ", " + count + ");");
  }
  // An f16 or bf16 element is a struct that reads as float.
  std::string element(int t, const std::string& flat) override {
    return L_.tensor_name(t) + "[" + flat + "]";
  }
  std::string element_vector(int t, const std::string& flat, int lanes) override {
    return "*reinterpret_cast<const " + vector_type(g_.spec_.tensors[t].type, lanes) + "*>(&" +
           L_.tensor_name(t) + "[" + flat + "])";
  }
  std::string address(int t) override { return "(uintptr_t)" + L_.tensor_name(t); }
  void put(int t, const std::string& flat, const std::string& value, int lanes) override {
    const DType d = g_.spec_.tensors[t].type;
    const std::string at = L_.tensor_name(t) + "[" + flat + "]";
    if (lanes == 0) {  // an f16 or bf16 element is a struct assigned from float
      w_.line(at + " = " + value + ";");
      return;
    }
    SB_ASSERT(!is_storage_type(d), "a vector store of f16 or bf16 elements through put");
    w_.line("*reinterpret_cast<" + vector_type(d, lanes) + "*>(&" + at + ") = " + value + ";");
  }

 private:
  Gen& g_;
};

void Gen::print_body(const loops::Block& b, StmtLowering& L, CodeWriter& w) {
  Leaves leaves(*this, L, w);
  print_c_block(b, leaves, w, CCompiler::Nvcc);
}

// ---- transpose --------------------------------------------------------------------------------

void Gen::transpose(size_t k, const Statement& st, const TransposeMatch& m) {
  const std::string text = source_text(st, spec_);
  const int64_t T = p("tile"), R = p("block_rows");
  const std::string ts = str(T);
  StmtLowering L(spec_, st, &h_);
  CodeWriter w(1);
  print_body(transpose_tile(spec_, st, m, T, R), L, w);
  const std::string name = fn(k);
  kernel("// " + text + "\n// " + ts + " x " + ts +
             " tiles through shared memory, so that both the loads and the stores are "
             "coalesced.\n",
         name, T * R, L, st.out, {}, w);

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  transpose_grid(st, T, R, H, body_);
  launch(body_, name, "sb_grid", "sb_block", T * R, "0", L);
  note(H);
  body_.close();
}

// ---- stencils ---------------------------------------------------------------------------------

void Gen::stencil(size_t k, const Statement& st, const StencilMatch& m) {
  const std::string text = source_text(st, spec_);
  const size_t rank = st.rank();
  const Tensor& X = spec_.tensors[m.tensor];
  const DType xv = compute_type(X.type);  // the tile holds values (f32 for f16 and bf16)
  // Block edge per output dimension; the last dimension runs along threadIdx.x, the one before
  // along threadIdx.y, the first of three along threadIdx.z (and likewise for blockIdx).
  const std::vector<int64_t> B =
      stencil_block(rank, bs_, rank > 1 ? p("tile_x") : 0, rank == 3 ? p("tile_y") : 0);
  int64_t threads = 1;
  for (int64_t b : B) threads *= b;
  StmtLowering L(spec_, st, &h_);
  CodeWriter w(1);
  print_body(stencil_tile(spec_, st, m, B), L, w);
  const std::string name = fn(k);
  kernel("// " + text + "\n// Each block stages its outputs' window of " + X.name +
             " (halo included) in dynamic shared memory.\n",
         name, threads, L, st.out, {}, w);
  StmtLowering G(spec_, st, &h_);
  const std::string untiled = generic_kernel(k, st, "_untiled", G);

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  const bool max_grid = stencil_launch(
      st, m, B, xv, bs_, H, body_,
      [&](CodeWriter& x, bool tiled, const std::string& grid, const std::string& block) {
        if (tiled)
          launch(x, name, grid, block, threads, "(size_t)sb_smem", L);
        else
          launch(x, untiled, grid, block, bs_, "0", G);
      });
  if (max_grid) needs_max_grid_ = true;
  note(H);
  body_.close();
}

// ---- scans ------------------------------------------------------------------------------------

void Gen::scan(size_t k, const Statement& st, const ScanMatch& m) {
  const std::string text = source_text(st, spec_);
  const DType t = value_type(*m.red);
  const std::string part = scratch(k);
  const std::string bs = str(bs_);

  file_.globals +=
      wrap_comment("// Per-block totals of " + fn(k, "_partial") + ", then their inclusive scan (" +
                   fn(k, "_carry") + "); at most " + str(kMaxPartials) + " blocks.");
  file_.globals +=
      "static __device__ " + std::string(c_type(t)) + " " + part + "[" + str(kMaxPartials) + "];\n";
  const ScanBodies bodies = scan_bodies(spec_, st, m, bs_, part, scan_shift(st, m));

  StmtLowering L1(spec_, st, &h_);
  CodeWriter w1(1);
  print_body(bodies.partial, L1, w1);
  kernel("// " + text + "\n// Scan phase 1: each block reduces its chunk of elements into " + part +
             "[blockIdx.x].\n",
         fn(k, "_partial"), bs_, L1, st.out, {"const int64_t sb_len", "const int64_t sb_chunk"},
         w1);

  StmtLowering L2(spec_, st, &h_);
  CodeWriter w2(1);
  print_body(bodies.carry, L2, w2);
  kernel("// Scan phase 2: one block turns " + part + "[0, sb_parts) into its inclusive scan.\n",
         fn(k, "_carry"), bs_, L2, st.out, {"const int64_t sb_parts"}, w2);

  StmtLowering L3(spec_, st, &h_);
  CodeWriter w3(1);
  print_body(bodies.offsets, L3, w3);
  kernel("// Scan phase 3: each block scans its chunk from the total of the chunks before it.\n",
         fn(k, "_scan"), bs_, L3, st.out,
         {"const int64_t sb_len", "const int64_t sb_chunk", "const int64_t sb_shift"}, w3);

  open_stmt(k, st);
  StmtLowering H(spec_, st, &h_);
  scan_grid(spec_, st, m, bs_, H, body_);
  launch(body_, fn(k, "_partial"), "(unsigned)sb_parts", bs, bs_, "0", L1,
         {"sb_len", "sb_chunk"});
  launch(body_, fn(k, "_carry"), "1", bs, bs_, "0", L2, {"sb_parts"});
  launch(body_, fn(k, "_scan"), "(unsigned)sb_parts", bs, bs_, "0", L3,
         {"sb_len", "sb_chunk", "sb_shift"});
  note(H);
  body_.close();
}

// ---- fused row groups -------------------------------------------------------------------------

// One kernel for the statements of row group `p` (lower/gpu_bodies.h: fused_rows_body), a warp
// (`warp`) or a block owning a row: `staged`, the kernel that holds rows in dynamic shared memory;
// otherwise every read goes to global memory and p.rows are recomputed where they are read.
// Returns the kernel's name; adds the tensors and sizes it uses to `tensors` and `sizes`, and
// the tensors it writes to `outs`.
std::string Gen::fused_kernel(const RowPlan& p, bool warp, bool staged, std::set<int>& tensors,
                              std::set<int>& sizes, std::set<int>& outs) {
  const std::string name = fn(p.first, staged ? "_rows" : "_rows_global");
  const RowUnit unit = warp ? RowUnit::Warp : RowUnit::Block;
  const FusedRowsBody body = fused_rows_body(spec_, p, unit, staged, bs_);
  // One statement printer per statement of the group (and per producer a read recomputes).
  StatementPrinters<StmtLowering> printers([&](int k) {
    return std::make_unique<StmtLowering>(spec_, spec_.stmts[static_cast<size_t>(k)], &h_);
  });
  CodeWriter w(1);
  Leaves leaves(*this, printers.of(static_cast<int>(p.first)), w);
  leaves.set_statements(printers.of());
  print_c_block(body.body, leaves, w, CCompiler::Nvcc);
  printers.uses(tensors, sizes);
  outs.insert(body.outs.begin(), body.outs.end());
  tensors.insert(body.outs.begin(), body.outs.end());

  std::string comments;
  for (size_t k = p.first; k <= p.last; ++k) comments += "// " + to_string(spec_.stmts[k], spec_) + "\n";
  comments += "// " + describe(p, spec_, unit, staged) + "\n";
  std::vector<std::string> ps = kernel_params(spec_, tensors, sizes, outs, "__restrict__");
  const std::string head = "__global__ void __launch_bounds__(" + str(bs_) + ") " + name;
  kernels_ += wrap_kernel_comments(comments, spec_) + wrap_call(head, ps, " {", 0) + "\n" +
              w.str() + "}\n\n";
  return name;
}

// The launcher's part for row group `p`: the staged kernel (when the group stages rows) and the
// global one, launched as fused_rows_launch decides.
void Gen::fused_rows(const RowPlan& p, bool warp) {
  std::set<int> t1, s1, o1, t2, s2, o2;
  const std::string staged = stages_rows(p) ? fused_kernel(p, warp, true, t1, s1, o1) : "";
  const std::string global = fused_kernel(p, warp, false, t2, s2, o2);
  if (p.first > 0) body_.line("");
  for (size_t k = p.first; k <= p.last; ++k) body_.line("// " + to_string(spec_.stmts[k], spec_));
  body_.open("{  // one kernel for the row group");
  StmtLowering H(spec_, spec_.stmts[p.first], &h_);
  auto launch_one = [&](CodeWriter& w, bool in_shared) {
    const std::string& name = in_shared ? staged : global;
    const std::string smem = in_shared ? "(size_t)sb_smem" : "0";
    const std::set<int>& ts = in_shared ? t1 : t2;
    const std::set<int>& ss = in_shared ? s1 : s2;
    std::vector<std::string> args = {name, "(unsigned)sb_blocks", str(bs_), smem, "sb_stream"};
    for (const auto& a : call_args(spec_, ts, ss)) args.push_back(a);
    w.line(wrap_call("SB_LAUNCH", args, ";", 2 * w.indent()));
    w.line("SB_CHECK_LAUNCH(" + name + ");");
    record_launch(name, str(bs_), bs_, smem);
    tensors_.insert(ts.begin(), ts.end());
    sizes_.insert(ss.begin(), ss.end());
  };
  const RowUnit unit = warp ? RowUnit::Warp : RowUnit::Block;
  const bool max_grid = fused_rows_launch(spec_, p, unit, bs_, H, body_, launch_one);
  if (max_grid) needs_max_grid_ = true;
  sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  body_.close();
}

// ---- fused attention --------------------------------------------------------------------------

// An attention group (match_attention) as one kernel (lower/gpu_bodies.h: attention_body),
// FlashAttention's algorithm with the parallelism of a GPU block, and its launch.
void Gen::attention(const Attention& a) {
  const size_t first = a.first, last = a.first + kAttentionStatements - 1;
  const Statement& sy = spec_.stmts[last];
  const int64_t BQ = p("bq"), BK = p("bk"), EC = p("ec"), NT = bs_;
  const loops::Block b = attention_body(spec_, a, {BQ, BK, EC}, NT);
  // One statement printer per statement of the group; the kernel's own is the weighted sum's.
  StatementPrinters<StmtLowering> printers([&](int k) {
    return std::make_unique<StmtLowering>(spec_, spec_.stmts[static_cast<size_t>(k)], &h_);
  });
  CodeWriter w(1);
  Leaves leaves(*this, printers.of(static_cast<int>(last)), w);
  leaves.set_statements(printers.of());
  print_c_block(b, leaves, w, CCompiler::Nvcc);
  std::set<int> tensors, sizes;
  printers.uses(tensors, sizes);
  const std::string name = fn(first, "_" + str(static_cast<int64_t>(last)));
  std::string comments;
  for (size_t k = first; k <= last; ++k) comments += "// " + to_string(spec_.stmts[k], spec_) + "\n";
  comments += "// Attention group fused into one kernel (FlashAttention): a block owns " +
              str(BQ) + " queries and " + str(EC) + " value columns and walks the keys in blocks "
              "of " + str(BK) + " with an online softmax; " + spec_.tensors[a.s].name + ", " +
              spec_.tensors[a.m].name + ", " + spec_.tensors[a.p].name + " and " +
              spec_.tensors[a.l].name + " are never written.\n";
  std::vector<std::string> ps = kernel_params(spec_, tensors, sizes, sy.out, "__restrict__");
  ps.push_back("int64_t sb_qblocks");
  const std::string head = "__global__ void __launch_bounds__(" + str(NT) + ") " + name;
  kernels_ += wrap_kernel_comments(comments, spec_) + wrap_call(head, ps, " {", 0) + "\n" +
              w.str() + "}\n\n";

  if (first > 0) body_.line("");
  for (size_t k = first; k <= last; ++k) body_.line("// " + to_string(spec_.stmts[k], spec_));
  body_.open("{  // one kernel for the attention group");
  StmtLowering H(spec_, sy, &h_);
  attention_grid(spec_, a, BQ, EC, H, body_);
  std::vector<std::string> args = {name, "sb_grid", str(NT), "0", "sb_stream"};
  for (const auto& x : call_args(spec_, tensors, sizes)) args.push_back(x);
  args.push_back("sb_qblocks");
  body_.line(wrap_call("SB_LAUNCH", args, ";", 2 * body_.indent()));
  body_.line("SB_CHECK_LAUNCH(" + name + ");");
  record_launch(name, str(NT), NT, "0");
  tensors_.insert(tensors.begin(), tensors.end());
  sizes_.insert(sizes.begin(), sizes.end());
  sizes_.insert(H.used_sizes().begin(), H.used_sizes().end());
  body_.close();
}

// ---- the variant ------------------------------------------------------------------------------

void Gen::step(const GpuStep& g) {
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
    case GpuKernel::WarpPerRow:
      return row_reduce(g.first, st, *g.red.red, true);
    case GpuKernel::BlockPerRow:
      return row_reduce(g.first, st, *g.red.red, false);
    case GpuKernel::TiledMatmul:
      return tiled_matmul(g.first, st, g.mm);
    case GpuKernel::RegisterBlocked:
      return register_blocked(g.first, st, g.mm);
    case GpuKernel::TiledTranspose:
      return transpose(g.first, st, g.tr);
    case GpuKernel::TiledStencil:
      return stencil(g.first, st, g.sten);
    case GpuKernel::Scan:
      return scan(g.first, st, g.scan);
    case GpuKernel::FusedRows:
      SB_ASSERT(g.unit != RowUnit::None, "a fused row group without its unit");
      return fused_rows(g.rows, g.unit == RowUnit::Warp);
    case GpuKernel::FusedAttention:
      return attention(g.att);
  }
  SB_ASSERT(false, "GPU step of unknown kind");
}

VariantCode Gen::run() {
  // Under a strategy that fuses rows (warp_per_row, block_per_row), each row group whose
  // statements the fused kernel can lower is one kernel; the other statements keep their own
  // kernels, as the strategy places them.
  for (const GpuStep& g : gpu_mapping(spec_, strategy_.fuse, strategy_.place).steps) step(g);

  VariantCode out;
  out.launches = launches_;
  out.kernels = wrap_comment("// Variant " + v_.name + ": " + info_.doc + ".") + "\n" + kernels_;
  CodeWriter fn(1);
  unpack_args(spec_, "sb_a", tensors_, sizes_, fn);
  fn.line("cudaStream_t sb_stream = (cudaStream_t)sb_a->stream;");
  if (needs_max_grid_) {
    fn.line("int sb_device = 0;");
    fn.line("SB_CUDA_CHECK(cudaGetDevice(&sb_device));");
    fn.line("int sb_sm_count = 0;");
    fn.line("SB_CUDA_CHECK(");
    fn.line(
        "    cudaDeviceGetAttribute(&sb_sm_count, cudaDevAttrMultiProcessorCount, sb_device));");
    max_grid_line(bps_, fn);
  }
  out.launcher = "// Variant " + v_.name + " (strategy " + v_.strategy + ").\n";
  out.launcher += "static int " + variant_fn(v_) + "(const sb_args* sb_a) {\n";
  out.launcher += fn.str() + "\n" + body_.str() + "  return 0;\n}\n\n";
  return out;
}

}  // namespace

VariantCode lower_variant(const Spec& spec, const Variant& v, const CudaStrategy& s,
                          FileParts& file) {
  return Gen(spec, v, s, file).run();
}

int64_t block_size_of(const Variant& v, const StrategyInfo& info) {
  return param_or(v, info, "block_size", 256);
}

int64_t blocks_per_sm_of(const Variant& v, const StrategyInfo& info) {
  return param_or(v, info, "blocks_per_sm", 4);
}

std::string dump_kernel_bodies(const Spec& spec, const GpuMapping& m, const Variant& v,
                               const StrategyInfo& info) {
  const int64_t bs = block_size_of(v, info);
  std::string out;
  int n = 0;
  for (const GpuStep& g : m.steps) {
    const Statement& st = spec.stmts[g.first];
    out += "## step " + std::to_string(n++) + ": " + gpu_kernel_name(g.kind) + ", statement " +
           std::to_string(g.first) + "\n";
    auto body = [&](const std::string& name, const loops::Block& b) {
      out += "### " + name + "\n" + loops::dump(b);
    };
    switch (g.kind) {
      case GpuKernel::ThreadPerElement:
      case GpuKernel::GridStride:
        body("kernel", element_body(spec, st, g.kind == GpuKernel::GridStride));
        break;
      case GpuKernel::TreeReduce:
      case GpuKernel::WarpReduce:
      case GpuKernel::AtomicReduce: {
        const ScalarReduceBodies b =
            scalar_reduce_bodies(spec, st, *g.red.red, g.kind, bs, "sb_part");
        body("partial", b.partial);
        if (!b.final.empty()) body("final", b.final);
        break;
      }
      case GpuKernel::WarpPerRow:
      case GpuKernel::BlockPerRow:
        body("kernel", row_reduce_body(spec, st, *g.red.red, g.kind == GpuKernel::WarpPerRow, bs));
        break;
      case GpuKernel::TiledTranspose:
        body("kernel",
             transpose_tile(spec, st, g.tr, param(v, info, "tile"), param(v, info, "block_rows")));
        break;
      case GpuKernel::Scan: {
        const ScanBodies b = scan_bodies(spec, st, g.scan, bs, "sb_part", scan_shift(st, g.scan));
        body("partial", b.partial);
        body("carry", b.carry);
        body("offsets", b.offsets);
        break;
      }
      case GpuKernel::TiledMatmul:
        body("kernel", matmul_tile(spec, st, g.mm, param(v, info, "tile")));
        break;
      case GpuKernel::TiledStencil: {
        const size_t rank = st.rank();
        body("halo", halo_lets(spec, st, g.sten));
        body("kernel", stencil_tile(spec, st, g.sten,
                                    stencil_block(rank, bs, rank > 1 ? param(v, info, "tile_x") : 0,
                                                  rank == 3 ? param(v, info, "tile_y") : 0)));
        break;
      }
      case GpuKernel::Vectorized:
        body("kernel", vectorized_body(spec, st, g.vec));
        break;
      case GpuKernel::RegisterBlocked:
        body("kernel", register_blocked_body(
                           spec, st, g.mm,
                           {param(v, info, "bm"), param(v, info, "bn"), param(v, info, "bk"),
                            param(v, info, "tm"), param(v, info, "tn")}));
        break;
      case GpuKernel::FusedRows:
        if (stages_rows(g.rows))
          body("staged", fused_rows_body(spec, g.rows, g.unit, /*staged=*/true, bs).body);
        body("global", fused_rows_body(spec, g.rows, g.unit, /*staged=*/false, bs).body);
        break;
      case GpuKernel::FusedAttention:
        body("kernel", attention_body(
                           spec, g.att,
                           {param(v, info, "bq"), param(v, info, "bk"), param(v, info, "ec")}, bs));
        break;
    }
  }
  return out;
}

std::string dump_gpu_variants(const Spec& spec, const std::string& backend, GpuDump what,
                              const std::function<GpuMapping(const Variant&)>& mapping) {
  const bool bodies = what == GpuDump::Bodies;
  std::string out;
  for (const Variant& v : backend_variants(spec, backend)) {
    const CudaStrategy* s = find_cuda_strategy(v.strategy);
    SB_ASSERT(s != nullptr, "unknown cuda strategy " + v.strategy);
    const GpuMapping m = mapping(v);
    out += std::string("# IR after ") + (bodies ? "gpu_bodies" : "gpu_mapping") + " for " +
           spec.name + " " + backend + "/" + v.name + " (strategy " + v.strategy + ")\n" +
           (bodies ? dump_kernel_bodies(spec, m, v, s->info) : dump(m, spec));
  }
  return out;
}

}  // namespace sb::cuda
