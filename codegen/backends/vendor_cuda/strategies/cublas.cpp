// The cublas strategy (strategy.h): a contraction through cublasSgemm/cublasDgemm, or
// cublasGemmEx for f16 or bf16 operands into an f32 output, with the row-major trick (C^T = Y^T
// X^T in column-major, so no transposition is copied), then a grid-stride kernel for the rest of
// the statement (a bias term, ...).
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "backends/vendor_cuda/strategies/strategy.h"
#include "lower/patterns.h"

namespace sb::vendor_cuda {

namespace {

const char* const kCublasMacros =
    R"(// Checks a cuBLAS call: on failure, prints file:line, the call and cuBLAS's status string, and
// returns cudaErrorUnknown from the enclosing launcher.
#define SB_CUBLAS_CHECK(call)                                                        \
  do {                                                                               \
    const cublasStatus_t sb_st = (call);                                             \
    if (sb_st != CUBLAS_STATUS_SUCCESS) {                                            \
      fprintf(stderr, "%s:%d: cuBLAS error in %s: %s\n", __FILE__, __LINE__, #call,  \
              cublasGetStatusString(sb_st));                                         \
      return (int)cudaErrorUnknown;                                                  \
    }                                                                                \
  } while (0)

// One cuBLAS handle per module, created on first use and never destroyed (the CUDA runtime may
// already be shut down when static destructors run).
static cublasHandle_t sb_cublas = NULL;

)";

std::optional<Contraction> match_cublas(const Spec& spec, const Statement& st) {
  std::optional<Contraction> m = match_contraction(spec, st);
  if (!m || !cublas_takes(*m)) return std::nullopt;
  return m;
}

void emit_cublas(const Spec& spec, const Statement& st, const Contraction& m, HelperSet& helpers,
                 const std::string& fn, StmtCode& out) {
  StmtLowering L(spec, st, &helpers);
  CodeWriter w(1);
  w.open("{");
  const LibraryGemm g = library_gemm(L, m, w);
  const std::string &x = g.x, &y = g.y, &c = g.c, &xp = g.xp, &yp = g.yp;
  const char* blas = scalar(m.type).blas_prefix;
  SB_ASSERT(blas, std::string("no cuBLAS GEMM of ") + dtype_name(m.type));
  // f16 and bf16 operands go to cublasGemmEx as they are stored, with f32 accumulation; a
  // batch of products to the strided-batched forms, each operand's stride its step along the
  // batch (0 for one the products share).
  const bool ex = m.widens(), batched = m.batched;
  const std::string gemm =
      ex ? std::string(batched ? "cublasGemmStridedBatchedEx" : "cublasGemmEx")
         : std::string("cublas") + static_cast<char>(std::toupper(*blas)) +
               (batched ? "gemmStridedBatched" : "gemm");
  const std::string ty = c_type(m.type);
  const std::string count = batched ? "sb_batch * sb_m * sb_n" : "sb_m * sb_n";
  const std::string some = batched ? "sb_batch > 0 && sb_m > 0 && sb_n > 0" : "sb_m > 0 && sb_n > 0";
  w.open("if (" + some + " && sb_k <= 0) {  // an empty sum");
  w.line("SB_CUDA_CHECK(cudaMemsetAsync(" + c + ", 0, sizeof(" + ty + ") * " + count +
         ", sb_stream));");
  w.close();
  w.open("if (" + some + " && sb_k > 0) {");
  w.line("// Row-major " + c + " = " + x + (m.x_trans ? "^T" : "") + " * " + y +
         (m.y_trans ? "^T" : "") + " is column-major " + c + "^T = " + y +
         (m.y_trans ? "" : "^T") + " * " + x + (m.x_trans ? "" : "^T") + ".");
  w.line("const " + ty + " sb_one = " + float_literal(1.0, m.type) + ", sb_zero = " +
         float_literal(0.0, m.type) + ";");
  // cublasGemmEx names each matrix's element type after it (cudaDataType) and ends with the
  // computation's type and the algorithm.
  auto typed = [&](DType t) { return ex ? std::vector<std::string>{scalar(t).cuda_data_type}
                                        : std::vector<std::string>{}; };
  std::vector<std::string> args = {"sb_cublas",
                                   m.y_trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N",
                                   m.x_trans ? "CUBLAS_OP_T" : "CUBLAS_OP_N",
                                   "(int)sb_n",
                                   "(int)sb_m",
                                   "(int)sb_k",
                                   "&sb_one",
                                   yp};
  auto add = [&args](const std::vector<std::string>& xs) {
    args.insert(args.end(), xs.begin(), xs.end());
  };
  // Each operand's leading dimension: its row length, the step along its first index.
  const std::string ld_y = batched ? "(int)(" + (m.y_trans ? g.ys_j : g.ys_k) + ")"
                                   : "(int)" + L.extent(m.y, 1, kPrecUnary);
  const std::string ld_x = batched ? "(int)(" + (m.x_trans ? g.xs_k : g.xs_i) + ")"
                                   : "(int)" + L.extent(m.x, 1, kPrecUnary);
  auto stride = [&](const std::string& s) {
    return batched ? std::vector<std::string>{"(long long)(" + s + ")"} : std::vector<std::string>{};
  };
  add(typed(m.y_type));
  add({ld_y});
  add(stride(g.ys_b));
  add({xp});
  add(typed(m.x_type));
  add({ld_x});
  add(stride(g.xs_b));
  add({"&sb_zero", c});
  add(typed(m.type));
  add({"(int)sb_n"});
  add(stride(g.cs_b));
  if (batched) add({"(int)sb_batch"});
  if (ex) add({"CUBLAS_COMPUTE_32F", "CUBLAS_GEMM_DEFAULT"});
  w.line(wrap_call(std::string("SB_CUBLAS_CHECK(") + gemm, args,
                   ");", 2 * w.indent()));
  w.close();
  finish_launch(spec, st, m.epilogue ? m.reduce : nullptr, helpers, fn, L, w, out);
}

}  // namespace

bool cublas_takes(const Contraction& m) {
  return !m.widens() || (m.type == DType::F32 && m.x_type == m.y_type);
}

VendorCudaStrategy cublas_strategy() {
  VendorCudaStrategy s;
  s.info = {"cublas",
            "contractions through cublasSgemm/cublasDgemm, or cublasGemmEx for f16 or bf16 "
            "operands of one type into an f32 output (f32 accumulation), a batch of them through "
            "their strided-batched forms, row-major as C^T = B^T A^T",
            {},
            "vendor_gemm"};
  s.shape = kContractionShape;
  s.matches = [](const Spec& spec, const Statement& st) {
    return match_cublas(spec, st).has_value();
  };
  s.lower = [](const Spec& spec, const Statement& st, const std::string& fn, FileParts& parts,
               StmtCode& out) {
    std::optional<Contraction> m = match_cublas(spec, st);
    SB_ASSERT(m.has_value(), "cublas variant on a statement that is not a contraction");
    emit_cublas(spec, st, *m, parts.helpers, fn, out);
  };
  s.launcher_setup = [](CodeWriter& w) {
    w.line("if (!sb_cublas) SB_CUBLAS_CHECK(cublasCreate(&sb_cublas));");
    w.line("SB_CUBLAS_CHECK(cublasSetStream(sb_cublas, sb_stream));");
  };
  s.library_includes = {"cublas_v2.h"};
  s.macros = kCublasMacros;
  return s;
}

}  // namespace sb::vendor_cuda
