#include "backends/cpu/attention.h"

#include <initializer_list>
#include <vector>

#include "backends/common/emit_common.h"
#include "support/diag.h"

namespace sb {

namespace {

// @T@: the C type, @S@: its suffix (f32, f64).
constexpr const char* kAttention = R"(// FlashAttention in @T@: for each query i of batch element b,
//   y(b, i, :) = sum_j weight(s_j, m) v(b, j, :) / sum_j weight(s_j, m), with
//   s_j = score(b, i, j, q(b, i, :) . k(b, j, :)), m = max_j s_j, weight(s, m) = exp(s - m),
// in one pass over blocks of bk keys for each strip of NR queries. The max, the sum and the
// output rows are running values, rescaled by weight(old max, new max) when a block raises the
// max (an online softmax), so the scores exist one block at a time and are never written.
// - Both products run on the blocked GEMM's micro-kernel, with the queries as the NR columns
//   of its tile. A block's scores are S^T = K Q^T (keys by queries): K packed once into MR-tall
//   strips of keys, Q^T per strip. The softmax then runs down the columns of S^T, vectorised
//   over queries, and leaves P^T in the layout of a packed NR-wide strip, so the output,
//   held transposed, is O^T += V^T P^T without packing P: V^T packed once, per key block, into
//   MR-tall strips of columns.
// - A max that is still -inf (every score so far -inf) is taken as 0 in the exponentials, so
//   such keys weigh 0; a max that is NaN stays NaN and so does the output, as in the unfused
//   statements.
// - An operand shared by the batch has a batch step of 0 and is packed once.
// Returns 0, or 1 when a buffer cannot be allocated.
// The packed K and V^T are kept between calls (grown when too small, never freed), as the
// blocked GEMM's scratch is: fresh pages on every call would be faulted in every call.
static thread_local @T@* sb_attention_@S@_scratch = NULL;
static thread_local size_t sb_attention_@S@_scratch_cap = 0;
template <typename Score, typename Weight>
static int sb_attention_@S@(int64_t batch, int64_t M, int64_t N, int64_t D, int64_t E,
                             const @T@* q, int64_t qs_b, int64_t qs_i, int64_t qs_d,
                             const @T@* k, int64_t ks_b, int64_t ks_j, int64_t ks_d,
                             const @T@* v, int64_t vs_b, int64_t vs_j, int64_t vs_e, @T@* y,
                             int64_t ys_b, int64_t ys_i, int64_t bk_in, const Score& score,
                             const Weight& weight) {
  if (batch <= 0 || M <= 0 || E <= 0) {
    return 0;
  }
  const int64_t MR = sb_gemm_mr_@S@, NR = sb_gemm_nr_@S@;
  // Keys per block: whole MR strips.
  const int64_t bk = (bk_in + MR - 1) / MR * MR;
  const int64_t n_pad = (N + MR - 1) / MR * MR;
  const int64_t e_pad = (E + MR - 1) / MR * MR;
  const int64_t kb = ks_b != 0 ? batch : 1;
  const int64_t vb = vs_b != 0 ? batch : 1;
  // K: the strip of keys from j at kp + j * D (of batch element b: + b * n_pad * D).
  // V^T: the strip of columns from e of the key block from j0 at vp + j0 * e_pad + e * (the
  // block's keys), of batch element b: + b * n_pad * e_pad.
  const size_t need = (size_t)(kb * n_pad * D + vb * n_pad * e_pad + 1);
  if (sb_attention_@S@_scratch_cap < need) {
    free(sb_attention_@S@_scratch);
    sb_attention_@S@_scratch_cap = need;
    sb_attention_@S@_scratch = (@T@*)aligned_alloc(64, (need * sizeof(@T@) + 63) / 64 * 64);
    if (!sb_attention_@S@_scratch) {
      sb_attention_@S@_scratch_cap = 0;
      return 1;
    }
  }
  @T@* const kp = sb_attention_@S@_scratch;
  @T@* const vp = kp + kb * n_pad * D;
  #pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < kb; ++b) {
    for (int64_t j = 0; j < n_pad; j += MR) {
      sb_gemm_pack_x_@S@(D, MR < N - j ? MR : N - j, k + (b * ks_b + j * ks_j), ks_j, ks_d,
                         kp + (b * n_pad + j) * D);
    }
  }
  const int64_t kblocks = (N + bk - 1) / bk;
  #pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < vb; ++b) {
    for (int64_t jb = 0; jb < kblocks; ++jb) {
      const int64_t j0 = jb * bk;
      const int64_t kn = bk < N - j0 ? bk : N - j0;
      for (int64_t e = 0; e < E; e += MR) {
        sb_gemm_pack_x_@S@(kn, MR < E - e ? MR : E - e, v + (b * vs_b + j0 * vs_j + e * vs_e),
                           vs_e, vs_j, vp + ((b * n_pad + j0) * e_pad + e * kn));
      }
    }
  }
  const int64_t strips = (M + NR - 1) / NR;
  int failed = 0;
  #pragma omp parallel
  {
    // This thread's strip: Q^T, S^T (bk x NR, zeroed so that the columns of a ragged strip
    // hold numbers), O^T (e_pad x NR), and per query the running max, the block's max, the
    // rescale factor and the sum.
    @T@* qp = (@T@*)malloc(sizeof(@T@) * (size_t)(D * NR + 1));
    @T@* st = (@T@*)calloc((size_t)(bk * NR), sizeof(@T@));
    @T@* acc = (@T@*)malloc(sizeof(@T@) * (size_t)(e_pad * NR));
    @T@* run = (@T@*)malloc(sizeof(@T@) * (size_t)(4 * NR));
    const int ok = qp != NULL && st != NULL && acc != NULL && run != NULL;
    if (!ok) {
      #pragma omp atomic write
      failed = 1;
    }
    @T@* const mx = run;
    @T@* const bm = run + NR;
    @T@* const sc = run + 2 * NR;
    @T@* const sum = run + 3 * NR;
    #pragma omp for collapse(2) schedule(static)
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < strips; ++s) {
        if (!ok) continue;
        const int64_t i0 = s * NR;
        const int64_t qn = NR < M - i0 ? NR : M - i0;
        sb_gemm_pack_y_@S@(D, qn, q + (b * qs_b + i0 * qs_i), qs_d, qs_i, qp);
        for (int64_t i = 0; i < NR; ++i) {
          mx[i] = -INFINITY;
          sum[i] = 0;
        }
        for (int64_t r = 0; r < e_pad * NR; ++r) {
          acc[r] = 0;
        }
        const @T@* kpb = kp + (ks_b != 0 ? b : 0) * n_pad * D;
        const @T@* vpb = vp + (vs_b != 0 ? b : 0) * n_pad * e_pad;
        for (int64_t j0 = 0; j0 < N; j0 += bk) {
          const int64_t kn = bk < N - j0 ? bk : N - j0;
          // S^T = K Q^T: kn keys by qn queries.
          for (int64_t jr = 0; jr < kn; jr += MR) {
            sb_gemm_tile_@S@(D, kpb + (j0 + jr) * D, qp, st + jr * NR, NR,
                             MR < kn - jr ? MR : kn - jr, qn, false);
          }
          // The scores, and the block's max per query (NaN propagates).
          for (int64_t i = 0; i < qn; ++i) {
            bm[i] = mx[i];
          }
          for (int64_t jj = 0; jj < kn; ++jj) {
            @T@* row = st + jj * NR;
            const int64_t j = j0 + jj;
            #pragma omp simd
            for (int64_t i = 0; i < qn; ++i) {
              const @T@ x = score(b, i0 + i, j, row[i]);
              row[i] = x;
              bm[i] = (bm[i] > x || bm[i] != bm[i]) ? bm[i] : x;
            }
          }
          // The rescale factor of what was summed so far, then the weights and their sums.
          for (int64_t i = 0; i < qn; ++i) {
            const @T@ safe = bm[i] == -INFINITY ? (@T@)0 : bm[i];
            sc[i] = weight(mx[i], safe);
            sum[i] *= sc[i];
            mx[i] = bm[i];
            bm[i] = safe;
          }
          for (int64_t jj = 0; jj < kn; ++jj) {
            @T@* row = st + jj * NR;
            #pragma omp simd
            for (int64_t i = 0; i < qn; ++i) {
              const @T@ p = weight(row[i], bm[i]);
              row[i] = p;
              sum[i] += p;
            }
          }
          for (int64_t e = 0; e < E; ++e) {
            #pragma omp simd
            for (int64_t i = 0; i < qn; ++i) {
              acc[e * NR + i] *= sc[i];
            }
          }
          // O^T += V^T P^T.
          const @T@* vblock = vpb + j0 * e_pad;
          for (int64_t er = 0; er < E; er += MR) {
            sb_gemm_tile_@S@(kn, vblock + er * kn, st, acc + er * NR, NR,
                             MR < E - er ? MR : E - er, qn, true);
          }
        }
        for (int64_t i = 0; i < qn; ++i) {
          @T@* out = y + (b * ys_b + (i0 + i) * ys_i);
          const @T@ l = sum[i];
          for (int64_t e = 0; e < E; ++e) {
            out[e] = acc[e * NR + i] / l;
          }
        }
      }
    }
    free(qp);
    free(st);
    free(acc);
    free(run);
  }
  return failed;
}
)";

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

}  // namespace

std::string cpu_attention_support(DType type) {
  SB_ASSERT(type == DType::F32 || type == DType::F64, "attention of a type without a GEMM");
  std::string code = kAttention;
  replace_all(code, "@T@", c_type(type));
  replace_all(code, "@S@", dtype_name(type));
  return code;
}

void emit_attention(StmtLowering& scores, StmtLowering& weights, StmtLowering& values,
                    const Attention& a, int64_t bk, CodeWriter& w) {
  const std::string ty = c_type(a.type);
  const Statement& ss = scores.stmt();
  const Statement& sy = values.stmt();
  const bool batched = a.scores.batched;
  w.line("// The scores' product: sb_m queries, sb_n keys, sb_k the depth of a dot product.");
  const LibraryGemm g1 = library_gemm(scores, a.scores, w);
  // The weighted sum's product has the same queries and batch (match_attention); its lines
  // would repeat those, so only its operand's steps are kept.
  CodeWriter unused(w.indent());
  const LibraryGemm g2 = library_gemm(values, a.values, unused);
  w.line("// The weighted sum's: sb_keys keys (the softmax's range), sb_e columns of v.");
  w.line("const int64_t sb_keys = " + values.expr(*sy.vars[a.values.reduce->ref].hi, w) + ";");
  w.line("const int64_t sb_e = " + values.extent(sy.out, sy.rank() - 1, 0) + ";");
  // score(b, i, j, dot): the scores' statement with its sum replaced by the dot product.
  std::vector<std::string> params;
  if (!batched) params.push_back("int64_t");
  for (size_t d = 0; d < ss.rank(); ++d)
    params.push_back("[[maybe_unused]] int64_t " + scores.var_name(static_cast<int>(d)));
  params.push_back(ty + " sb_dot");
  scores.set_override(a.scores.reduce, "sb_dot");
  CodeWriter sw(w.indent() + 1);
  const std::string score = scores.expr(*ss.rhs, sw);
  w.open(wrap_call("auto sb_score = [&]", params, " {", w.indent()));
  w.raw(sw.str());
  w.line("return (" + ty + ")(" + score + ");");
  w.close("};");
  // weight(x, max): exp(x - max) as the spec's third statement prints it.
  weights.set_override(a.weight_s, "sb_x");
  weights.set_override(a.weight_m, "sb_max");
  CodeWriter ww(w.indent() + 1);
  const std::string weight = weights.expr(*weights.stmt().rhs, ww);
  w.open("auto sb_weight = [&](" + ty + " sb_x, " + ty + " sb_max) {");
  w.raw(ww.str());
  w.line("return (" + ty + ")(" + weight + ");");
  w.close("};");
  auto step = [batched](const std::string& s) { return batched ? s : std::string("0"); };
  // The extents; q, k and v, each a pointer and its steps (batch, then its two indices in the
  // order the template names them); y; the block of keys; the two lambdas.
  std::vector<std::string> args{batched ? "sb_batch" : "1", "sb_m", "sb_keys", "sb_k", "sb_e"};
  auto add = [&args](std::initializer_list<std::string> xs) {
    args.insert(args.end(), xs.begin(), xs.end());
  };
  add({g1.xp, step(g1.xs_b), g1.xs_i, g1.xs_k});
  add({g1.yp, step(g1.ys_b), g1.ys_j, g1.ys_k});
  add({g2.yp, step(g2.ys_b), g2.ys_k, g2.ys_j});
  add({g2.c, step("sb_m * sb_e"), "sb_e"});
  add({std::to_string(bk), "sb_score", "sb_weight"});
  w.line(
      wrap_call("return sb_attention_" + std::string(dtype_name(a.type)), args, ";", w.indent()));
}

}  // namespace sb
