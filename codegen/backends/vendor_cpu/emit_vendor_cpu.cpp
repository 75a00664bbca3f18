#include "backends/vendor_cpu/emit_vendor_cpu.h"

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/emit_common.h"
#include "backends/cpu/emit_cpu.h"
#include "backends/vendor_cpu/strategies.h"
#include "lower/patterns.h"

namespace sb {

namespace {

class VendorCpuEmitter final : public Emitter {
 public:
  std::string backend() const override { return "vendor_cpu"; }
  std::string extension() const override { return "cpp"; }
  std::vector<StrategyInfo> strategies() const override { return vendor_cpu_strategies().infos(); }
  Status check_variant(const Spec& spec, const Variant& v) const override {
    return vendor_cpu_strategies().check_fit(spec, v);
  }
  bool spells(Fn fn) const override { return c_spells(fn); }
  Status check_storage(const Spec& spec, const Loc& backend_loc) const override;

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

// f16 and bf16 tensors on vendor_cpu: OpenBLAS has no GEMM of them that this backend can call
// (Debian's OpenBLAS 0.3.21 declares cblas_sbgemm in its header but does not export it), so they
// may only be the operands of a contraction, which are widened into f32 copies for cblas_sgemm
// (emit_blas_statement). Every other use is refused at the use: a write, a read outside a
// contraction's product (an elementwise statement, a contraction's epilogue, a gathered term).
Status VendorCpuEmitter::check_storage(const Spec& spec, const Loc& /*backend_loc*/) const {
  return storage_only_in_products(
      spec, backend(),
      "as the operands of a matrix product, which it widens into f32 copies for OpenBLAS's "
      "cblas_sgemm",
      [](const Contraction&) { return true; });
}

// The body of a contraction statement's kernel: one GEMM call, then the rest of the statement.
// An f16 or bf16 operand is first widened into an f32 copy of the whole tensor (same layout, so
// the same strides), allocated for the call; the kernel then returns 1 when that allocation
// fails, else 0. Returns whether the rest of the statement uses streaming stores.
bool emit_blas_statement(StmtLowering& L, StmtLowering* E, const Contraction& m, CodeWriter& w) {
  const Spec& spec = L.spec();
  // The f32 copies of the operands of a storage type: their names ("" for an operand passed as
  // it is), one copy where both operands read the same tensor.
  const std::string wide_x = m.x_type != m.type ? "sb_wide_" + L.tensor_name(m.x) : "";
  const std::string wide_y =
      m.y_type == m.type ? "" : m.y == m.x ? wide_x : "sb_wide_" + L.tensor_name(m.y);
  const LibraryGemm g = library_gemm(L, m, w, wide_x, wide_y);
  const std::string &x = g.x, &y = g.y, &c = g.c, &xp = g.xp, &yp = g.yp;
  const std::string count = m.batched ? "sb_batch * sb_m * sb_n" : "sb_m * sb_n";
  const std::string done = m.widens() ? "return 0;" : "return;";
  w.line(std::string("if (sb_m <= 0 || sb_n <= 0") + (m.batched ? " || sb_batch <= 0" : "") +
         ") " + done);
  w.open("if (sb_k <= 0) {  // an empty sum");
  w.line("for (int64_t sb_i = 0; sb_i < " + count + "; ++sb_i) " + c +
         "[sb_i] = " + float_literal(0.0, m.type) + ";");
  w.close("} else {");
  {
    CodeWriter inner(w.indent() + 1);
    // The widened copies: each element of the operand converted to f32 exactly, on the calling
    // thread (an OpenMP team would keep spinning on the cores OpenBLAS's threads then need).
    std::vector<std::pair<int, std::string>> copies;
    if (!wide_x.empty()) copies.push_back({m.x, wide_x});
    if (!wide_y.empty() && wide_y != wide_x) copies.push_back({m.y, wide_y});
    if (!copies.empty()) {
      const std::string ct = c_type(m.type), tn = dtype_name(m.type);
      std::string names;
      for (size_t i = 0; i < copies.size(); ++i) {
        const Tensor& t = spec.tensors[copies[i].first];
        names += (i == 0 ? "" : " and ") + t.name + " (" + dtype_name(t.type) + ")";
      }
      inner.line("// OpenBLAS offers no GEMM of f16 or bf16 operands here (Debian's 0.3.21 declares");
      inner.line("// cblas_sbgemm but does not export it): this is its " +
                 std::string(scalar(m.type).blas_prefix) + "gemm on " +
                 (copies.size() > 1 ? tn + " copies of" : "an " + tn + " copy of"));
      inner.line("// " + names + ", each element widened exactly.");
      for (const auto& [t, n] : copies) {
        std::string elems;
        for (size_t d = 0; d < spec.tensors[t].shape.size(); ++d)
          elems += (elems.empty() ? "" : " * ") + std::string("(size_t)") +
                   L.extent(t, d, kPrecUnary);
        inner.line("const size_t " + n + "_count = " + (elems.empty() ? "1" : elems) + ";");
        inner.line(ct + "* " + n + " = (" + ct + "*)malloc(sizeof(" + ct + ") * " + n +
                   "_count);");
      }
      std::string failed;
      for (const auto& [t, n] : copies) failed += (failed.empty() ? "" : " || ") + ("!" + n);
      if (copies.size() == 1) {
        inner.line("if (" + failed + ") return 1;");
      } else {
        inner.open("if (" + failed + ") {");
        for (const auto& [t, n] : copies) inner.line("free(" + n + ");");
        inner.line("return 1;");
        inner.close();
      }
      for (const auto& [t, n] : copies)
        inner.line("for (size_t sb_i = 0; sb_i < " + n + "_count; ++sb_i) " + n + "[sb_i] = (" +
                   ct + ")" + L.tensor_name(t) + "[sb_i];");
    }
    // Product sb_b's operands and output, for a batch: a step of the batch's stride, none for
    // an operand that every product shares.
    auto at = [&m](const std::string& p, const std::string& step) {
      return !m.batched || step == "0" ? p : p + " + sb_b * " + step;
    };
    if (m.batched) {
      inner.line("// One GEMM per product of the batch, each threaded by OpenBLAS.");
      inner.open("for (int64_t sb_b = 0; sb_b < sb_batch; ++sb_b) {");
    }
    const char* blas = scalar(m.type).blas_prefix;
    SB_ASSERT(blas, std::string("no BLAS GEMM of ") + dtype_name(m.type));
    inner.line("// " + c + " = " + x + (m.x_trans ? "^T" : "") + " * " + y + (m.y_trans ? "^T" : "") +
               " (row-major)");
    const std::vector<std::string> args = {"CblasRowMajor",
                                           m.x_trans ? "CblasTrans" : "CblasNoTrans",
                                           m.y_trans ? "CblasTrans" : "CblasNoTrans",
                                           "(int)sb_m",
                                           "(int)sb_n",
                                           "(int)sb_k",
                                           float_literal(1.0, m.type),
                                           at(xp, g.xs_b),
                                           "(int)" + L.extent(m.x, m.x_row_dim() + 1, kPrecUnary),
                                           at(yp, g.ys_b),
                                           "(int)" + L.extent(m.y, m.y_row_dim() + 1, kPrecUnary),
                                           float_literal(0.0, m.type),
                                           at(c, g.cs_b),
                                           "(int)sb_n"};
    inner.line(wrap_call(std::string("cblas_") + blas + "gemm", args, ";", 2 * inner.indent()));
    if (m.batched) inner.close();
    for (const auto& [t, n] : copies) inner.line("free(" + n + ");");
    w.raw(inner.str());
  }
  w.line("}");
  bool streaming = false;
  if (E) {
    w.line("// The rest of the statement, elementwise, with the sum read back from " + c + ".");
    streaming = emit_cpu_statement(*E, true, w);
  }
  if (m.widens()) w.line("return 0;");
  return streaming;
}

// A gathered GEMM's kernel (emit_im2col) with one OpenBLAS GEMM per batch element. The gather
// runs on the calling thread: an OpenMP team would keep spinning after it, on the cores that
// OpenBLAS's own threads then need (conv2d at N=4, CI=CO=64, 28 x 28 on 2 cores: 8.5 ms with a
// parallel gather, 2.6 ms with it under OMP_WAIT_POLICY=passive).
void emit_im2col_statement(StmtLowering& L, const GatheredGemm& g, CodeWriter& w) {
  const char* blas = scalar(g.type).blas_prefix;
  SB_ASSERT(blas, std::string("no BLAS GEMM of ") + dtype_name(g.type));
  emit_im2col(
      L, g, /*parallel_gather=*/false, w,
      [&](const std::string& wt, const std::string& out, const std::string& rows,
          const std::vector<std::string>& /*on_fail: the call cannot fail*/, CodeWriter& cw) {
        const std::vector<std::string> args = {"CblasRowMajor",
                                               "CblasNoTrans",
                                               "CblasNoTrans",
                                               "(int)" + rows,
                                               "(int)sb_n",
                                               "(int)sb_k",
                                               float_literal(1.0, g.type),
                                               wt,
                                               "(int)sb_k",
                                               "sb_col",
                                               "(int)sb_n",
                                               float_literal(0.0, g.type),
                                               out,
                                               "(int)sb_n"};
        cw.line(wrap_call(std::string("cblas_") + blas + "gemm", args, ";", 2 * cw.indent()));
      });
}

GeneratedFile VendorCpuEmitter::print(const Spec& spec) const {
  HelperSet helpers;
  std::string kernels, launchers;
  bool streaming = false, gathers = false, widens = false, blocks = false;
  const auto& variants = backend_variants(spec, backend());

  for (const Variant& v : variants) {
    const host::HostStrategy& strategy = vendor_cpu_strategies().of(v);
    const StrategyInfo* info = &strategy.info;
    const host::HostSchedule& sched = strategy.schedule;
    SB_ASSERT(sched.gemm == host::Gemm::Vendor && sched.parallel && sched.simd && !sched.fuse_rows,
              "vendor_cpu strategy without a lowering: " + v.strategy);
    kernels += "// Variant " + v.name + ": " + info->doc + ".\n\n";
    CodeWriter calls(1);
    std::set<int> used_tensors, used_sizes;
    for (size_t k = 0; k < spec.stmts.size(); ++k) {
      const Statement& st = spec.stmts[k];
      const std::string text = source_text(st, spec);
      const std::string fn = "sb_" + v.name + "_s" + std::to_string(k);
      StmtLowering L(spec, st, &helpers);
      CodeWriter body(1);
      std::set<int> kt, ks;
      bool stream_kernel = false, fallible = false;
      std::optional<GatheredGemm> gathered;
      if (sched.im2col && !match_contraction(spec, st)) gathered = match_gathered_gemm(spec, st);
      if (gathered) {
        emit_im2col_statement(L, *gathered, body);
        fallible = gathers = true;
        kt = L.used_tensors();
        ks = L.used_sizes();
      } else if (std::optional<Contraction> m = match_contraction(spec, st)) {
        fallible = m->widens();  // the widened copies' allocation may fail
        widens = widens || m->widens();
        Statement epi;
        std::optional<StmtLowering> E;
        if (m->epilogue) {
          epi = epilogue_statement(spec, st, m->reduce);
          E.emplace(spec, epi, &helpers);
        }
        stream_kernel = emit_blas_statement(L, E ? &*E : nullptr, *m, body);
        blocks = blocks || (E && cpu_transposes_in_blocks(spec, epi, true));
        kt = L.used_tensors();
        ks = L.used_sizes();
        if (E) {
          kt.insert(E->used_tensors().begin(), E->used_tensors().end());
          ks.insert(E->used_sizes().begin(), E->used_sizes().end());
        }
      } else {
        stream_kernel = emit_cpu_statement(L, sched.parallel, body);
        blocks = blocks || cpu_transposes_in_blocks(spec, st, sched.parallel);
        kt = L.used_tensors();
        ks = L.used_sizes();
      }
      streaming = streaming || stream_kernel;
      kernels += "// " + text + "\n";
      kernels += wrap_call(std::string(stream_kernel ? "SB_STREAM_KERNEL " : "") + "static " +
                               (fallible ? "int " : "void ") + fn,
                           kernel_params(spec, kt, ks, st.out, "__restrict"), " {", 0) +
                 "\n";
      kernels += body.str() + "}\n\n";
      calls.line("// " + text);
      if (fallible)
        calls.line(wrap_call("if (" + fn, call_args(spec, kt, ks), " != 0) return 1;", 2));
      else
        calls.line(wrap_call(fn, call_args(spec, kt, ks), ";", 2));
      used_tensors.insert(kt.begin(), kt.end());
      used_sizes.insert(ks.begin(), ks.end());
    }
    CodeWriter fn(1);
    unpack_args(spec, "sb_a", used_tensors, used_sizes, fn);
    launchers += "// Variant " + v.name + " (strategy " + v.strategy + ").\n";
    launchers += "static int " + variant_fn(v) + "(const sb_args* sb_a) {\n";
    launchers += fn.str() + "\n" + calls.str() + "  return 0;\n}\n\n";
  }

  std::string out = file_header(spec, *this);
  out += "\n#include <cblas.h>\n#include <math.h>\n#include <stdint.h>\n";
  if (gathers || widens) out += "#include <stdlib.h>\n";
  if (streaming) {
    out += cpu_stream_includes();
  } else if (helpers.has_vector_scans()) {
    out += cpu_intrinsics_include();
  }
  out += "\n#include \"specbench_abi.h\"\n\n";
  // The f16 and bf16 operands' element types, which the widening reads (check_storage allows
  // them nowhere else); a spec without variants here passes no tensor.
  if (!variants.empty()) out += storage_types(spec, StorageLang::Cpu);
  if (!helpers.empty()) out += banner("Helpers") + helpers.definitions("static inline") + "\n";
  if (streaming) out += cpu_stream_support(blocks);
  out += banner("Kernels: one function per variant and statement") + kernels;
  out += banner("Launchers: one function per variant, running its statements in order") + launchers;
  out += banner("Dispatch") + dispatch_section(spec, backend());
  return {spec.name + "/" + backend() + "/" + spec.name + "." + extension(), out};
}

}  // namespace

const Emitter& vendor_cpu_emitter() {
  static const VendorCpuEmitter kEmitter;
  return kEmitter;
}

}  // namespace sb
