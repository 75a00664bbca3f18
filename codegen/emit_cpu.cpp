#include "emit_cpu.h"

#include "emit_common.h"

namespace sb {

namespace {

class CpuEmitter final : public Emitter {
 public:
  std::string backend() const override { return "cpu"; }
  std::string extension() const override { return "cpp"; }
  std::vector<StrategyInfo> strategies() const override {
    return {
        {"loops", "a scalar loop nest per statement", {}},
        {"omp_simd", "OpenMP-parallel outer loop, omp simd inner loop, OpenMP reductions", {}},
    };
  }
  GeneratedFile emit(const Spec& spec) const override;
};

// Whether vectorising the innermost output loop (index `out_var`) gives contiguous accesses in
// the hot loops: some read inside a reduction varies with an enclosing reduction variable and
// has `out_var` in its last (contiguous) subscript, as b[k, j] in a matrix product or
// x[i + k] in a convolution. Otherwise (x[r, c] summed over c) the reduction loops get simd.
bool simd_over_outputs(const Expr& e, int out_var, std::vector<int>& reductions) {
  if (e.kind == ExprKind::Read && !e.args.empty() && !reductions.empty() &&
      uses_var(*e.args.back(), out_var)) {
    for (int r : reductions)
      for (const auto& a : e.args)
        if (uses_var(*a, r)) return true;
  }
  if (e.kind == ExprKind::Reduce) reductions.push_back(e.ref);
  bool found = false;
  for (const auto& a : e.args) found = found || simd_over_outputs(*a, out_var, reductions);
  if (e.kind == ExprKind::Reduce) reductions.pop_back();
  return found;
}

// Writes the loop nest of one statement into `w` (the kernel body).
void emit_statement(StmtLowering& L, bool omp, CodeWriter& w) {
  const Statement& st = L.stmt();
  const size_t rank = st.rank();

  if (rank == 0) {
    // A scalar output: only top-level reductions can be parallel.
    ReducePragma pragma = nullptr;
    if (omp) {
      // The top-level reduction is parallel (and simd when it is innermost); below a parallel
      // non-simd loop, innermost reductions are simd.
      pragma = [](const ReduceSite& s) -> std::string {
        if (s.depth == 0)
          return std::string("#pragma omp parallel for") + (s.innermost ? " simd " : " ") +
                 omp_reduction_clause(s);
        return s.innermost ? "#pragma omp simd " + omp_reduction_clause(s) : "";
      };
    }
    L.assign(w, pragma);
    return;
  }

  std::vector<int> reductions;
  const bool simd_out = !contains_reduce(*st.rhs) ||
                        simd_over_outputs(*st.rhs, static_cast<int>(rank) - 1, reductions);
  for (size_t d = 0; d < rank; ++d) {
    if (omp) {
      std::string p;
      if (d == 0) p = "#pragma omp parallel for";
      if (d + 1 == rank && simd_out) p = p.empty() ? "#pragma omp simd" : p + " simd";
      if (!p.empty()) w.line(p);
    }
    const std::string& v = L.var_name(static_cast<int>(d));
    w.open("for (int64_t " + v + " = 0; " + v + " < " + L.extent(st.out, d, kPrecRel + 1) + "; ++" +
           v + ") {");
  }
  ReducePragma pragma = nullptr;
  if (omp && !simd_out) {
    pragma = [](const ReduceSite& s) -> std::string {
      return s.innermost ? "#pragma omp simd " + omp_reduction_clause(s) : "";
    };
  }
  L.assign(w, pragma);
  for (size_t d = 0; d < rank; ++d) w.close();
}

GeneratedFile CpuEmitter::emit(const Spec& spec) const {
  HelperSet helpers;
  std::string kernels, launchers;
  const auto& variants = backend_variants(spec, backend());

  for (const Variant& v : variants) {
    const StrategyInfo* info = find_strategy(*this, v.strategy);
    SB_ASSERT(info != nullptr, "unknown cpu strategy " + v.strategy);
    const bool omp = v.strategy == "omp_simd";
    SB_ASSERT(omp || v.strategy == "loops", "cpu strategy without a lowering: " + v.strategy);

    kernels += "// Variant " + v.name + ": " + info->doc + ".\n\n";
    CodeWriter calls(1);
    std::set<int> used_tensors, used_sizes;
    for (size_t k = 0; k < spec.stmts.size(); ++k) {
      const Statement& st = spec.stmts[k];
      const std::string text = to_string(st, spec);
      StmtLowering L(spec, st, &helpers);
      CodeWriter body(1);
      emit_statement(L, omp, body);

      const std::string fn = "sb_" + v.name + "_s" + std::to_string(k);
      kernels += "// " + text + "\n";
      kernels +=
          wrap_call("static void " + fn,
                    kernel_params(spec, L.used_tensors(), L.used_sizes(), st.out, "__restrict"),
                    " {", 0) +
          "\n";
      kernels += body.str() + "}\n\n";

      calls.line("// " + text);
      calls.line(wrap_call(fn, call_args(spec, L.used_tensors(), L.used_sizes()), ";", 2));
      used_tensors.insert(L.used_tensors().begin(), L.used_tensors().end());
      used_sizes.insert(L.used_sizes().begin(), L.used_sizes().end());
    }

    CodeWriter fn(1);
    unpack_args(spec, "sb_a", used_tensors, used_sizes, fn);
    launchers += "// Variant " + v.name + " (strategy " + v.strategy + ").\n";
    launchers += "static int " + variant_fn(v) + "(const sb_args* sb_a) {\n";
    launchers += fn.str() + "\n" + calls.str() + "  return 0;\n}\n\n";
  }

  std::string out = file_header(spec, *this);
  out += "\n#include <math.h>\n#include <stdint.h>\n\n#include \"specbench_abi.h\"\n\n";
  if (!helpers.empty()) out += banner("Helpers") + helpers.definitions("static inline") + "\n";
  out += banner("Kernels: one function per variant and statement") + kernels;
  out += banner("Launchers: one function per variant, running its statements in order") + launchers;
  out += banner("Dispatch") + dispatch_section(spec, backend());
  return {spec.name + "/" + backend() + "/" + spec.name + "." + extension(), out};
}

}  // namespace

const Emitter& cpu_emitter() {
  static const CpuEmitter kEmitter;
  return kEmitter;
}

}  // namespace sb
