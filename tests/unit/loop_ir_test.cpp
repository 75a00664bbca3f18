// Unit tests of the loop IR (codegen/lower/loop_ir.h): the builders' types, the dump printer,
// the strict functors and possible_values.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "lower/loop_ir.h"

namespace sb::loops {
namespace {

// A small function: c[i] = a[i] * 2 + c[i] over a parallel loop, with a vector loop inside.
Module small_module() {
  Module m;
  m.name = "small";
  m.doc = {"a test module"};
  m.constants = {{"vl", lanes(DType::F32), "lanes"},
                 {"rows", select(binary(BinOp::Ge, var("vl", int_t()), imm(16)), imm(12), imm(6)),
                  ""}};
  Function f;
  f.name = "scale";
  f.doc = {"c = a * 2 + c"};
  f.params = {{"n", int_t()}, {"a", ptr_t(DType::F32, false), true}, {"c", ptr_t(DType::F32, true)}};
  f.result = int_t();
  const ExprPtr i = var("i", int_t()), two = fimm(2.0, DType::F32);
  f.body = {
      if_then(binary(BinOp::Le, var("n", int_t()), imm(0)), {ret(imm(0))}),
      for_loop("i", imm(0), var("n", int_t()), imm(1), ForKind::Parallel,
               {let("x", load("a", float_t(DType::F32), {i})),
                store("c", float_t(DType::F32), {i},
                      fma(var("x", float_t(DType::F32)), two, load("c", float_t(DType::F32), {i})))},
               workers()),
      alloc("acc", vec_t(DType::F32), {var("rows", int_t())}, MemScope::Register,
            {for_loop("r", imm(0), var("rows", int_t()), imm(1), ForKind::Unrolled,
                      {store("acc", vec_t(DType::F32), {var("r", int_t())},
                             broadcast(fimm(0.0, DType::F32)))})}),
      ret(imm(0))};
  m.functions = {f};
  return m;
}

TEST(LoopIr, BuildersDeriveTypes) {
  EXPECT_EQ(add(imm(1), imm(2))->type, int_t());
  EXPECT_EQ(binary(BinOp::Lt, imm(1), imm(2))->type, bool_t());
  EXPECT_EQ(load("p", float_t(DType::F64), {imm(0)}, Width::Vector)->type, vec_t(DType::F64));
  EXPECT_EQ(broadcast(fimm(1.0, DType::F32))->type, vec_t(DType::F32));
  const ExprPtr p = var("p", ptr_t(DType::F32, true));
  EXPECT_EQ(ptr_add(p, imm(4))->type, ptr_t(DType::F32, true));
  EXPECT_EQ(to_string(ptr_t(DType::F32, false)), "ptr<const f32>");
  EXPECT_TRUE(equal(*round_up(imm(5), imm(4)), *round_up(imm(5), imm(4))));
  EXPECT_FALSE(equal(*round_up(imm(5), imm(4)), *round_up(imm(5), imm(8))));
}

TEST(LoopIr, DumpOfASmallFunction) {
  const std::string d = dump(small_module());
  const std::string want =
      "module small\n"
      "// a test module\n"
      "const vl = lanes<f32>()  // lanes\n"
      "const rows = select((vl >= 16), 12, 6)\n"
      "\n"
      "// c = a * 2 + c\n"
      "func scale(n: int, a: ptr<const f32> noalias, c: ptr<f32>) -> int {\n"
      "  if (n <= 0) {\n"
      "    return 0\n"
      "  }\n"
      "  for i in [0, n) step 1 parallel threads workers() {\n"
      "    let x: f32 = a[i]\n"
      "    c[i] = fma(x, 2:f32, c[i])\n"
      "  }\n"
      "  alloc acc: vec<f32>[rows] register {\n"
      "    for r in [0, rows) step 1 unrolled {\n"
      "      acc[r] = broadcast(0:f32)\n"
      "    }\n"
      "  }\n"
      "  return 0\n"
      "}\n";
  EXPECT_EQ(d, want);
}

TEST(LoopIr, PossibleValuesFollowConstantsAndSelects) {
  const Module m = small_module();
  EXPECT_EQ(possible_values(*var("rows", int_t()), m), (std::set<int64_t>{6, 12}));
  EXPECT_EQ(possible_values(*imm(3), m), (std::set<int64_t>{3}));
  // Lanes is only known on the target.
  EXPECT_TRUE(possible_values(*var("vl", int_t()), m).empty());
  EXPECT_TRUE(possible_values(*var("n", int_t()), m).empty());
}

// A strict functor that counts node kinds; it must override every handler to be constructible.
class KindCount : public ExprFunctor<int()> {
 protected:
  int visit_int_imm(const Expr&) override { return 1; }
  int visit_float_imm(const Expr&) override { return 1; }
  int visit_var(const Expr&) override { return 1; }
  int visit_binary(const Expr& e) override { return 1 + sum(e); }
  int visit_select(const Expr& e) override { return 1 + sum(e); }
  int visit_cast(const Expr& e) override { return 1 + sum(e); }
  int visit_load(const Expr& e) override { return 1 + sum(e); }
  int visit_broadcast(const Expr& e) override { return 1 + sum(e); }
  int visit_fma(const Expr& e) override { return 1 + sum(e); }
  int visit_call(const Expr& e) override { return 1 + sum(e); }
  int visit_lanes(const Expr&) override { return 1; }
  int visit_workers(const Expr&) override { return 1; }
  int visit_ptr_add(const Expr& e) override { return 1 + sum(e); }
  int visit_gpu(const Expr&) override { return 1; }
  int visit_index_var(const Expr&) override { return 1; }
  int visit_extent(const Expr&) override { return 1; }
  int visit_size(const Expr&) override { return 1; }
  int visit_element(const Expr& e) override { return 1 + sum(e); }
  int visit_spec(const Expr&) override { return 1; }
  int visit_identity(const Expr&) override { return 1; }
  int visit_warp(const Expr& e) override { return 1 + sum(e); }
  int visit_lane(const Expr& e) override { return 1 + sum(e); }
  int visit_make_vec(const Expr& e) override { return 1 + sum(e); }
  int visit_address(const Expr&) override { return 1; }

 private:
  int sum(const Expr& e) {
    int n = 0;
    for (const ExprPtr& a : e.args) n += visit(*a);
    return n;
  }
};

// The same functor with one handler missing stays abstract.
class MissingFma : public ExprFunctor<int()> {
 protected:
  int visit_int_imm(const Expr&) override { return 1; }
  int visit_float_imm(const Expr&) override { return 1; }
  int visit_var(const Expr&) override { return 1; }
  int visit_binary(const Expr&) override { return 1; }
  int visit_select(const Expr&) override { return 1; }
  int visit_cast(const Expr&) override { return 1; }
  int visit_load(const Expr&) override { return 1; }
  int visit_broadcast(const Expr&) override { return 1; }
  int visit_call(const Expr&) override { return 1; }
  int visit_lanes(const Expr&) override { return 1; }
  int visit_workers(const Expr&) override { return 1; }
  int visit_ptr_add(const Expr&) override { return 1; }
  int visit_gpu(const Expr&) override { return 1; }
  int visit_index_var(const Expr&) override { return 1; }
  int visit_extent(const Expr&) override { return 1; }
  int visit_size(const Expr&) override { return 1; }
  int visit_element(const Expr&) override { return 1; }
  int visit_spec(const Expr&) override { return 1; }
  int visit_identity(const Expr&) override { return 1; }
  int visit_warp(const Expr&) override { return 1; }
  int visit_lane(const Expr&) override { return 1; }
  int visit_make_vec(const Expr&) override { return 1; }
  int visit_address(const Expr&) override { return 1; }
};

TEST(LoopIr, StrictFunctorVisitsEveryKindAndMissingHandlersStayAbstract) {
  const ExprPtr e = fma(broadcast(load("a", float_t(DType::F32), {add(var("i", int_t()), imm(1))})),
                        var("b", vec_t(DType::F32)), var("c", vec_t(DType::F32)));
  // fma, broadcast, load, add, i, 1, b, c
  EXPECT_EQ(KindCount().visit(*e), 8);
  static_assert(!std::is_abstract_v<KindCount>);
  static_assert(std::is_abstract_v<MissingFma>, "a functor without visit_fma must not compile");
}

// A GPU kernel body with the spec's leaves (the nodes of lower/gpu_bodies.h).
Block gpu_body(const sb::Expr& read) {
  const ExprPtr tid = gpu(GpuIndex::ThreadX), acc = var("acc", float_t(DType::F32));
  return {comment("one value per warp"),
          alloc("ws", float_t(DType::F32), {imm(8)}, MemScope::Shared,
                {let("acc", identity(ReduceOp::Max, DType::F32), /*mut=*/true),
                 for_index(0, "i", tid, extent(0, 1, "x"), mul(gpu(GpuIndex::GridDimX), imm(256)),
                           {fold("acc", ReduceOp::Max, float_t(DType::F32),
                                 spec_expr(read, float_t(DType::F32), "x[i]"))}),
                 assign("acc", warp(WarpOp::Scan, ReduceOp::Max, acc)),
                 if_then(binary(BinOp::Eq, mod(tid, imm(32)), imm(31)),
                         {store("ws", float_t(DType::F32), {div(tid, imm(32))}, acc)}),
                 barrier(), let_index(1, "j", add(index_var(0, "i"), imm(1))),
                 compute({{&read, "x[i]", load("ws", float_t(DType::F32), {imm(7)})}})})};
}

TEST(LoopIr, GpuNodesAndSpecLeavesDump) {
  const sb::Expr read;
  const std::string want =
      "// one value per warp\n"
      "alloc ws: f32[8] shared {\n"
      "  var acc: f32 = identity<max, f32>\n"
      "  for index<i> in [thread_idx.x, extent<x, 1>) step (grid_dim.x * 256) serial {\n"
      "    acc = max<f32>(acc, spec<x[i]>)\n"
      "  }\n"
      "  acc = warp_scan<max>(acc)\n"
      "  if ((thread_idx.x % 32) == 31) {\n"
      "    ws[(thread_idx.x / 32)] = acc\n"
      "  }\n"
      "  barrier\n"
      "  let index<j>: int = (index<i> + 1)\n"
      "  compute with x[i] = ws[7]\n"
      "}\n";
  EXPECT_EQ(dump(gpu_body(read)), want);
  // The leaves keep what a printer needs: the spec node, the variable, the tensor and dimension.
  const Block b = gpu_body(read);
  const Stmt* c = nullptr;
  const Stmt* f = nullptr;
  for_each_stmt(b, [&](const Stmt& s) {
    if (s.kind == StmtKind::Compute) c = &s;
    if (s.kind == StmtKind::For) f = &s;
  });
  ASSERT_NE(c, nullptr);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(c->overrides.at(0).expr, &read);
  EXPECT_EQ(f->index_var, 0);
  EXPECT_EQ(f->exprs[1]->kind, ExprKind::Extent);
  EXPECT_EQ(f->exprs[1]->ival, 0);
  EXPECT_EQ(f->exprs[1]->dim, 1);
  EXPECT_EQ(f->body[0]->exprs[0]->spec, &read);
  // Leaves of different spec nodes differ.
  const sb::Expr other;
  EXPECT_FALSE(equal(*spec_expr(read, float_t(DType::F32), "a"),
                     *spec_expr(other, float_t(DType::F32), "a")));
  EXPECT_FALSE(equal(*warp(WarpOp::Scan, ReduceOp::Sum, imm(1)),
                     *warp(WarpOp::AllReduce, ReduceOp::Sum, imm(1))));
}

TEST(LoopIr, GpuVectorNodesDump) {
  const Type v4 = gpu_vec_t(DType::F32, 4);
  const ExprPtr v = var("sb_v", int_t());
  const ExprPtr flat = mul(imm(4), v);
  const ExprPtr a = element(0, v4, flat, "a");
  std::vector<ExprPtr> lanes;
  for (int q = 0; q < 4; ++q) lanes.push_back(lane(var("sb_vec_a", v4), q));
  const Block b = {if_then(binary(BinOp::Eq, mod(address(0, "a"), imm(16)), imm(0)),
                           {let("sb_vec_a", a), let_index(1, "j", mod(flat, imm(8)), /*mut=*/true),
                            assign_index(1, "j", mod(add(flat, imm(1)), imm(8))),
                            put(1, "y", flat, make_vec(lanes))}),
                   put(1, "y", v, lane(var("sb_vec_a", v4), 3))};
  EXPECT_EQ(dump(b),
            "if ((address<a> % 16) == 0) {\n"
            "  let sb_vec_a: vec<f32 x 4> = element<a>[(4 * sb_v)]:vec<f32 x 4>\n"
            "  var index<j>: int = ((4 * sb_v) % 8)\n"
            "  index<j> = (((4 * sb_v) + 1) % 8)\n"
            "  element<y>[(4 * sb_v)]:vec<f32 x 4> = make<vec<f32 x 4>>(sb_vec_a.lane<0>, "
            "sb_vec_a.lane<1>, sb_vec_a.lane<2>, sb_vec_a.lane<3>)\n"
            "}\n"
            "element<y>[sb_v] = sb_vec_a.lane<3>\n");
  // A GPU vector is not a native one, and vectors of other lane counts differ.
  EXPECT_FALSE(v4 == vec_t(DType::F32));
  EXPECT_FALSE(v4 == gpu_vec_t(DType::F32, 2));
  EXPECT_EQ(b[1]->tensor, 1);
  EXPECT_EQ(b[0]->body[2]->index_var, 1);
}

TEST(LoopIr, HostScanLeavesDump) {
  const sb::Expr red;
  const Block b = {let_index(1, "k", var("sb_k0", int_t()), /*mut=*/true),
                   fold_range("acc", red, "sum(k in 0..i + 1: x[k])", var("sb_k0", int_t()),
                              var("sb_k1", int_t())),
                   scan_walk("acc", red, "sum(k in 0..i + 1: x[k])", var("sb_i1", int_t()))};
  EXPECT_EQ(dump(b),
            "var index<k>: int = sb_k0\n"
            "acc = fold(acc, terms of sum(k in 0..i + 1: x[k]) in [sb_k0, sb_k1))\n"
            "scan_walk sum(k in 0..i + 1: x[k]) to sb_i1 from acc\n");
  // The leaves keep the reduction they fold or walk.
  EXPECT_EQ(b[1]->spec, &red);
  EXPECT_EQ(b[2]->spec, &red);
  EXPECT_EQ(b[2]->name, "acc");
  EXPECT_TRUE(b[0]->mut);
}

TEST(LoopIr, ForEachStmtReachesNestedBodies) {
  const Module m = small_module();
  int fors = 0, stores = 0;
  for_each_stmt(m.functions[0].body, [&](const Stmt& s) {
    fors += s.kind == StmtKind::For;
    stores += s.kind == StmtKind::Store;
  });
  EXPECT_EQ(fors, 2);
  EXPECT_EQ(stores, 2);
}

}  // namespace
}  // namespace sb::loops
