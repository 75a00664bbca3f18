// Unit tests of the loop IR printers' kernel bodies (print_c_block in backends/cpu/print_loops.h,
// print_mojo_block in backends/mojo/print_loops.h): the GPU nodes and the spec's leaves are
// spelled by the LoopLeaves a GPU printer gives (backends/common/loop_leaves.h), here a fake that
// marks each call.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/emit_common.h"
#include "backends/common/loop_leaves.h"
#include "backends/cpu/print_loops.h"
#include "backends/mojo/mojo_lowering.h"
#include "backends/mojo/print_loops.h"
#include "backends/mojo/py_writer.h"

namespace sb::loops {
namespace {

// Spells every leaf as a marked name, and records the precedence each was asked for.
class FakeLeaves : public LoopLeaves {
 public:
  explicit FakeLeaves(std::function<void(const std::string&)> line) : line_(std::move(line)) {}
  std::string index_var(int v) override { return "v" + std::to_string(v); }
  std::string extent(int t, int dim, int min_prec) override {
    precs.push_back(min_prec);
    return "E" + std::to_string(t) + "_" + std::to_string(dim);
  }
  std::string size(int s) override { return "S" + std::to_string(s); }
  std::string element(int t, const std::string& flat) override {
    return "T" + std::to_string(t) + "<" + flat + ">";
  }
  std::string spec(int stmt, const sb::Expr&, int min_prec, const Overrides& o) override {
    precs.push_back(min_prec);
    std::string with = stmt >= 0 ? "{s" + std::to_string(stmt) : "";
    for (const auto& [e, text] : o) with += (with.empty() ? "{" : ", ") + text;
    return "SPEC" + (with.empty() ? "" : with + "}");
  }
  void compute(const Overrides& o) override {
    line_("COMPUTE(" + (o.empty() ? std::string() : o[0].second) + ")");
  }
  std::string identity(ReduceOp op, DType) override { return std::string("ID_") + reduce_name(op); }
  void fold(const std::string& acc, ReduceOp op, DType, const std::string& value) override {
    line_("FOLD_" + std::string(reduce_name(op)) + "(" + acc + ", " + value + ")");
  }
  std::string warp(WarpOp w, ReduceOp, DType, const std::string& value) override {
    return std::string(w == WarpOp::Scan ? "WSCAN(" : "WALL(") + value + ")";
  }
  void atomic_fold(int tensor, const std::string& index, ReduceOp op, DType,
                   const std::string& value) override {
    line_("ATOMIC_" + std::string(reduce_name(op)) + "(T" + std::to_string(tensor) + "[" + index +
          "], " + value + ")");
  }
  std::string element_vector(int t, const std::string& flat, int lanes) override {
    return "T" + std::to_string(t) + "<" + flat + ">x" + std::to_string(lanes);
  }
  std::string address(int t) override { return "ADDR" + std::to_string(t); }
  void put(int t, const std::string& flat, const std::string& value, int lanes) override {
    line_("PUT(T" + std::to_string(t) + "<" + flat + ">x" + std::to_string(lanes) + ", " + value +
          ")");
  }
  std::string gpu_index(GpuIndex g) override { return std::string("G:") + gpu_index_name(g); }
  void barrier(bool warp) override { line_(warp ? "BARRIER_WARP" : "BARRIER"); }
  void shared_array(const std::string& name, DType, const std::string& count) override {
    line_("SHARED " + name + "[" + count + "]");
  }
  void fold_range(const sb::Expr&, const std::string& acc, const std::string& lo,
                  const std::string& hi) override {
    line_("FOLD_RANGE(" + acc + ", " + lo + ", " + hi + ")");
  }
  void scan_walk(const sb::Expr&, const std::string& acc, const std::string& end) override {
    line_("WALK(" + acc + ", " + end + ")");
  }
  std::vector<int> precs;

 private:
  std::function<void(const std::string&)> line_;
};

Block body(const sb::Expr& read) {
  const ExprPtr tid = gpu(GpuIndex::ThreadX), acc = var("acc", float_t(DType::F32));
  const ExprPtr i = index_var(0, "i");
  return {
      alloc("ws", float_t(DType::F32), {imm(8)}, MemScope::Shared,
            {let("acc", identity(ReduceOp::Sum, DType::F32), /*mut=*/true),
             for_index(0, "i", tid, sub(extent(0, 1, "x"), imm(1)), imm(256),
                       {fold("acc", ReduceOp::Sum, float_t(DType::F32),
                             spec_expr(read, float_t(DType::F32), "x[i]"))}),
             assign("acc", warp(WarpOp::AllReduce, ReduceOp::Sum, acc)),
             if_then(binary(BinOp::And, binary(BinOp::Eq, mod(tid, imm(32)), imm(0)),
                            binary(BinOp::Lt, i, extent(0, 0, "x"))),
                     {store("ws", float_t(DType::F32), {div(tid, imm(32))}, acc)}),
             barrier(), let_index(1, "j", min(add(i, imm(1)), var("n", int_t()))),
             compute({{&read, "x[i]", load("ws", float_t(DType::F32), {imm(7)})}}),
             let("s", imm(4), /*mut=*/true),
             while_loop(binary(BinOp::Gt, var("s", int_t()), imm(0)),
                        {atomic_fold(0, var("s", int_t()), ReduceOp::Sum, float_t(DType::F32), acc),
                         assign("s", div(var("s", int_t()), imm(2)))})})};
}

// A Spec leaf of statement 2 (as stmt_leaf makes one) of `e`, with `o`.
ExprPtr stmt_leaf_for_test(const sb::Expr& e, std::vector<Override> o) {
  Expr x = *spec_expr(e, float_t(DType::F32), "b", std::move(o));
  x.ival = 2;
  return std::make_shared<const Expr>(std::move(x));
}

// A host body's shape (lower/host_bodies.h): an index buffer, two parallel loops over the same
// variable, a running scan's fold of a range and its walk.
Block host_body(const sb::Expr& red) {
  const ExprPtr b = var("b", int_t());
  return {alloc(
      "from", int_t(), {imm(4)}, MemScope::StackLocal,
      {for_loop("b", imm(0), imm(4), imm(1), ForKind::Parallel,
                {let("f", identity(ReduceOp::Sum, DType::F32), /*mut=*/true),
                 fold_range("f", red, "sum", b, add(b, imm(1))), store("from", int_t(), {b}, b)}),
       for_loop("b", imm(0), imm(4), imm(1), ForKind::Parallel,
                {let_index(0, "i", load("from", int_t(), {b}), /*mut=*/true),
                 scan_walk("f", red, "sum", var("n", int_t()))})})};
}

// A leaf of another statement (a kernel of several) reaches the leaves with its statement, its
// override values parenthesized as operands; a warp barrier is the warp's.
TEST(LoopPrinters, BothPrintersPassALeafsStatementAndAWarpBarrier) {
  const sb::Expr a, b;
  const Block k = {
      let("v", spec_expr(a, float_t(DType::F32), "a")),
      barrier(/*warp=*/true),
      assign("v", stmt_leaf_for_test(b, {{&a, "a", add(var("p", int_t()), imm(1))}})),
  };
  CodeWriter cw(0);
  FakeLeaves cl([&cw](const std::string& l) { cw.line(l); });
  print_c_block(k, cl, cw);
  EXPECT_NE(cw.str().find("const float v = SPEC;\nBARRIER_WARP\nv = SPEC{s2, (p + 1)};\n"),
            std::string::npos)
      << cw.str();
  PyWriter mw(0);
  FakeLeaves ml([&mw](const std::string& l) { mw.line(l); });
  print_mojo_block(k, ml, mw);
  EXPECT_NE(mw.str().find("var v = SPEC\nBARRIER_WARP\nv = SPEC{s2, (p + 1)}\n"), std::string::npos)
      << mw.str();
}

// A serial loop's unroll hint is nvcc's pragma; GCC and Mojo print the loop alone.
TEST(LoopPrinters, AnUnrollHintIsNvccsPragmaOnly) {
  const Block k = {for_loop("i", imm(0), imm(32), imm(1), ForKind::Serial,
                            {assign("v", add(var("v", int_t()), var("i", int_t())))}, nullptr, 8)};
  FakeLeaves none([](const std::string&) {});
  CodeWriter nv(0), gcc(0);
  print_c_block(k, none, nv, CCompiler::Nvcc);
  print_c_block(k, none, gcc);
  EXPECT_EQ(nv.str(), "#pragma unroll 8\nfor (int64_t i = 0; i < 32; ++i) {\n  v += i;\n}\n");
  EXPECT_EQ(gcc.str(), "for (int64_t i = 0; i < 32; ++i) {\n  v += i;\n}\n");
  PyWriter mw(0);
  print_mojo_block(k, none, mw);
  EXPECT_EQ(mw.str(), "for i in range(32):\n    v += i\n");
}

TEST(LoopPrinters, CHostBodySpellsTheScanLeavesThroughThePrinter) {
  const sb::Expr red;
  CodeWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_c_block(host_body(red), leaves, w);
  const std::string got = w.str();
  EXPECT_NE(got.find("int64_t from[4];\n"), std::string::npos) << got;
  EXPECT_NE(got.find("FOLD_RANGE(f, b, b + 1)\n"), std::string::npos) << got;
  EXPECT_NE(got.find("\n  int64_t v0 = from[b];\n  WALK(f, n)\n"), std::string::npos) << got;
  size_t loops = 0;
  for (size_t at = got.find("#pragma omp parallel for"); at != std::string::npos;
       at = got.find("#pragma omp parallel for", at + 1))
    ++loops;
  EXPECT_EQ(loops, 2u) << got;
}

TEST(LoopPrinters, MojoHostBodyNamesEachParallelClosureApart) {
  const sb::Expr red;
  PyWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_mojo_block(host_body(red), leaves, w);
  const std::string got = w.str();
  EXPECT_NE(got.find("alloc(Layout[Int](count=4))"), std::string::npos) << got;
  EXPECT_NE(got.find("def sb_par_b(b: Int) {imm}:\n"), std::string::npos) << got;
  EXPECT_NE(got.find("def sb_par_b_2(b: Int) {imm}:\n"), std::string::npos) << got;
  EXPECT_NE(got.find("parallelize(sb_par_b_2, 4)"), std::string::npos) << got;
  EXPECT_NE(got.find("FOLD_RANGE(f, b, b + 1)\n"), std::string::npos) << got;
  EXPECT_NE(got.find("var v0 = from[unsafe_offset=b]\n    WALK(f, n)\n"), std::string::npos) << got;
}

TEST(LoopPrinters, CKernelBodySpellsLeavesThroughThePrinter) {
  const sb::Expr read;
  CodeWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_c_block(body(read), leaves, w);
  const std::string got = w.str();
  EXPECT_NE(got.find("SHARED ws[8]\n"), std::string::npos) << got;
  EXPECT_NE(got.find("float acc = ID_sum;\n"), std::string::npos) << got;
  EXPECT_NE(got.find("for (int64_t v0 = G:thread_idx.x; v0 < E0_1 - 1; v0 += 256) {\n"),
            std::string::npos)
      << got;
  EXPECT_NE(got.find("FOLD_sum(acc, SPEC)\n"), std::string::npos) << got;
  EXPECT_NE(got.find("acc = WALL(acc);\n"), std::string::npos) << got;
  EXPECT_NE(got.find("if (G:thread_idx.x % 32 == 0 && v0 < E0_0) {\n"), std::string::npos) << got;
  EXPECT_NE(got.find("ws[G:thread_idx.x / 32] = acc;\n"), std::string::npos) << got;
  EXPECT_NE(got.find("BARRIER\n"), std::string::npos) << got;
  EXPECT_NE(got.find("const int64_t v1 = v0 + 1 < n ? v0 + 1 : n;\n"), std::string::npos) << got;
  EXPECT_NE(got.find("COMPUTE(ws[7])\n"), std::string::npos) << got;
  EXPECT_NE(got.find("while (s > 0) {\n  ATOMIC_sum(T0[s], acc)\n  s = s / 2;\n}\n"),
            std::string::npos)
      << got;
  // Precedences in emit_common.h's scale: the extent as the left operand of `-` and as the right
  // of `<` (additive, the next level above relational), the spec value as a whole argument.
  EXPECT_EQ(leaves.precs, (std::vector<int>{kPrecAdd, 0, kPrecAdd}));
}

TEST(LoopPrinters, MojoKernelBodySpellsLeavesThroughThePrinter) {
  const sb::Expr read;
  PyWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_mojo_block(body(read), leaves, w);
  const std::string got = w.str();
  EXPECT_NE(got.find("SHARED ws[8]\n"), std::string::npos) << got;
  EXPECT_NE(got.find("var acc = ID_sum\n"), std::string::npos) << got;
  EXPECT_NE(got.find("for v0 in range(G:thread_idx.x, E0_1 - 1, 256):\n"), std::string::npos)
      << got;
  EXPECT_NE(got.find("FOLD_sum(acc, SPEC)\n"), std::string::npos) << got;
  EXPECT_NE(got.find("if G:thread_idx.x % 32 == 0 and v0 < E0_0:\n"), std::string::npos) << got;
  EXPECT_NE(got.find("ws[unsafe_offset=G:thread_idx.x // 32] = acc\n"), std::string::npos) << got;
  EXPECT_NE(got.find("var v1 = min(v0 + 1, n)\n"), std::string::npos) << got;
  EXPECT_NE(got.find("COMPUTE(ws[unsafe_offset=7])\n"), std::string::npos) << got;
  EXPECT_NE(got.find("while s > 0:\n    ATOMIC_sum(T0[s], acc)\n    s = s // 2\n"),
            std::string::npos)
      << got;
  EXPECT_EQ(leaves.precs, (std::vector<int>{kMojoPrecAdd, 0, kMojoPrecAdd}));
}

// A tile's products (lower/gpu_bodies.h: matmul_tile): an unrolled loop over a shared array's
// elements folding a spec expression whose read comes from the tile.
Block tile_body(const sb::Expr& term, const sb::Expr& read) {
  const Type f = float_t(DType::F32);
  const ExprPtr kk = var("kk", int_t());
  return {alloc(
      "ta", f, {imm(4)}, MemScope::Shared,
      {let("acc", identity(ReduceOp::Sum, DType::F32), /*mut=*/true),
       for_loop("kk", imm(0), imm(4), imm(1), ForKind::Unrolled,
                {let("a", load("ta", f, {kk})),
                 fold("acc", ReduceOp::Sum, f,
                      spec_expr(term, f, "a[i, k] * 2", {{&read, "a[i, k]", var("a", f)}}))})})};
}

TEST(LoopPrinters, CUnrollsATileForNvccAndGccAndReplacesTheSpecRead) {
  const sb::Expr term, read;
  for (const CCompiler c : {CCompiler::Gcc, CCompiler::Nvcc}) {
    CodeWriter w(0);
    FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
    print_c_block(tile_body(term, read), leaves, w, c);
    const std::string got = w.str();
    const std::string pragma = c == CCompiler::Nvcc ? "#pragma unroll\n" : "#pragma GCC unroll 4\n";
    EXPECT_NE(got.find(pragma + "for (int64_t kk = 0; kk < 4; ++kk) {\n"), std::string::npos)
        << got;
    EXPECT_NE(got.find("const float a = ta[kk];\n  FOLD_sum(acc, SPEC{a})\n"), std::string::npos)
        << got;
  }
}

TEST(LoopPrinters, MojoUnrollsATileWithoutRegistersAsAComptimeLoop) {
  const sb::Expr term, read;
  PyWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_mojo_block(tile_body(term, read), leaves, w);
  const std::string got = w.str();
  EXPECT_NE(got.find("comptime for kk in range(4):\n    var a = ta[unsafe_offset=kk]\n"
                     "    FOLD_sum(acc, SPEC{a})\n"),
            std::string::npos)
      << got;
}

// A vectorized body's nodes (lower/gpu_bodies.h: vectorized_body): an alignment check, a
// vector load, an index variable bound and then assigned again, a lane override and a vector
// store.
Block vector_body(const sb::Expr& read) {
  const Type v2 = gpu_vec_t(DType::F64, 2);
  const ExprPtr v = var("sb_v", int_t());
  std::vector<ExprPtr> rs;
  Block lanes;
  for (int q = 0; q < 2; ++q) {
    const ExprPtr flat = add(mul(imm(2), v), imm(q));
    lanes.push_back(q ? assign_index(0, "i", flat) : let_index(0, "i", flat, /*mut=*/true));
    lanes.push_back(let("sb_r" + std::to_string(q),
                        spec_expr(read, float_t(DType::F64), "x[i]",
                                  {{&read, "x[i]", lane(var("sb_vec_x", v2), q)}})));
    rs.push_back(var("sb_r" + std::to_string(q), float_t(DType::F64)));
  }
  Block then = {let("sb_vec_x", element(0, v2, mul(imm(2), v), "x"))};
  append(then, std::move(lanes));
  then.push_back(put(1, "y", mul(imm(2), v), make_vec(rs)));
  return {if_then(binary(BinOp::Eq, mod(address(1, "y"), imm(16)), imm(0)), std::move(then)),
          put(1, "y", v, lane(var("sb_vec_x", v2), 1))};
}

TEST(LoopPrinters, CSpellsCudaVectorsAndTheirLanes) {
  const sb::Expr read;
  CodeWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_c_block(vector_body(read), leaves, w, CCompiler::Nvcc);
  EXPECT_EQ(w.str(),
            "if (ADDR1 % 16 == 0) {\n"
            "  const double2 sb_vec_x = T0<2 * sb_v>x2;\n"
            "  int64_t v0 = 2 * sb_v + 0;\n"
            "  const double sb_r0 = SPEC{sb_vec_x.x};\n"
            "  v0 = 2 * sb_v + 1;\n"
            "  const double sb_r1 = SPEC{sb_vec_x.y};\n"
            "  PUT(T1<2 * sb_v>x2, make_double2(sb_r0, sb_r1))\n"
            "}\n"
            "PUT(T1<sb_v>x0, sb_vec_x.y)\n");
}

TEST(LoopPrinters, MojoSpellsSimdVectorsAndTheirLanes) {
  const sb::Expr read;
  PyWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_mojo_block(vector_body(read), leaves, w);
  EXPECT_EQ(w.str(),
            "if ADDR1 % 16 == 0:\n"
            "    var sb_vec_x = T0<2 * sb_v>x2\n"
            "    var v0 = 2 * sb_v + 0\n"
            "    var sb_r0 = SPEC{sb_vec_x[0]}\n"
            "    v0 = 2 * sb_v + 1\n"
            "    var sb_r1 = SPEC{sb_vec_x[1]}\n"
            "    PUT(T1<2 * sb_v>x2, SIMD[DType.float64, 2](sb_r0, sb_r1))\n"
            "PUT(T1<sb_v>x0, sb_vec_x[1])\n");
}

// A GPU thread's register tile (lower/gpu_bodies.h: register_blocked_body): a 2 x 4 buffer of
// scalars folded in unrolled loops, then read.
Block register_tile_body() {
  const Type f = float_t(DType::F32);
  const ExprPtr m = var("sb_m", int_t()), n = var("sb_n", int_t());
  auto unrolled = [](const std::string& v, int64_t count, Block body) {
    return for_loop(v, imm(0), imm(count), imm(1), ForKind::Unrolled, std::move(body));
  };
  return {alloc(
      "acc", f, {imm(2), imm(4)}, MemScope::Register,
      {unrolled("sb_m", 2,
                {unrolled("sb_n", 4,
                          {store("acc", f, {m, n}, identity(ReduceOp::Sum, DType::F32)),
                           fold_at("acc", {m, n}, ReduceOp::Sum, f, load("t", f, {add(m, n)}))})}),
       store("out", f, {imm(0)}, load("acc", f, {imm(1), imm(3)}))})};
}

TEST(LoopPrinters, MojoHoldsARegisterTileOfScalarsAsOneSimdValue) {
  PyWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_mojo_block(register_tile_body(), leaves, w);
  EXPECT_EQ(w.str(),
            "var acc = SIMD[DType.float32, 8]()\n"
            "comptime for sb_m in range(2):\n"
            "    comptime for sb_n in range(4):\n"
            "        acc[sb_m * 4 + sb_n] = ID_sum\n"
            "        FOLD_sum(acc[sb_m * 4 + sb_n], t[unsafe_offset=sb_m + sb_n])\n"
            "out[unsafe_offset=0] = acc[1 * 4 + 3]\n");
}

TEST(LoopPrinters, CHoldsARegisterTileAsAnArrayForNvcc) {
  CodeWriter w(0);
  FakeLeaves leaves([&w](const std::string& l) { w.line(l); });
  print_c_block(register_tile_body(), leaves, w, CCompiler::Nvcc);
  const std::string got = w.str();
  EXPECT_NE(got.find("float acc[2][4];\n"), std::string::npos) << got;
  EXPECT_NE(got.find("FOLD_sum(acc[sb_m][sb_n], t[sb_m + sb_n])\n"), std::string::npos) << got;
  EXPECT_NE(got.find("out[0] = acc[1][3];\n"), std::string::npos) << got;
}

}  // namespace
}  // namespace sb::loops
