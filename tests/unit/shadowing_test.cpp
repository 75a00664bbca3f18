// Unit tests of shadowing_reductions (codegen/ir/shadowing.h): which reduction variables reuse a
// name bound around their loop, and the renaming the C and Mojo printers derive from it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/common/emit_common.h"
#include "ir/build.h"
#include "ir/shadowing.h"

namespace sb {
namespace {

// The checker gives every index its own name, so a statement that shadows is built by hand:
// the lowering passes make such statements, and the printers must still spell them correctly.
// vars: the output indices `outputs`, then the reduction variables `reductions`, all in 0..4.

ExprPtr var(int ref) {
  ExprPtr v = ir_node(ExprKind::IndexVar, DType::Index, Loc{});
  v->ref = ref;
  return v;
}

ExprPtr sum_over(int ref, ExprPtr body) {
  ExprPtr r = ir_node(ExprKind::Reduce, DType::Index, Loc{});
  r->ref = ref;
  r->rop = ReduceOp::Sum;
  r->args.push_back(std::move(body));
  return r;
}

Statement statement(const std::vector<std::string>& outputs,
                    const std::vector<std::string>& reductions) {
  Statement st;
  for (const std::string& n : outputs) {
    IndexVar v;
    v.name = n;
    v.lo = ir_lit(0, DType::Index, Loc{});
    v.hi = ir_lit(4, DType::Index, Loc{});
    st.vars.push_back(std::move(v));
  }
  for (const std::string& n : reductions) {
    IndexVar v;
    v.name = n;
    v.lo = ir_lit(0, DType::Index, Loc{});
    v.hi = ir_lit(4, DType::Index, Loc{});
    v.is_reduction = true;
    st.vars.push_back(std::move(v));
  }
  return st;
}

TEST(Shadowing, AReductionNamedLikeAnOutputIndex) {
  // y[i] = sum(i: i) + sum(k: k)
  Statement st = statement({"i"}, {"i", "k"});
  st.rhs = ir_binary(BinOp::Add, sum_over(1, var(1)), sum_over(2, var(2)));
  EXPECT_EQ(shadowing_reductions(st), std::set<int>({1}));
}

TEST(Shadowing, NestedReductionsOfOneNameAndSiblingsThatAreNot) {
  // s = sum(k: k * sum(k: k)) + sum(j: j) + sum(j: j)
  Statement st = statement({}, {"k", "k", "j", "j"});
  ExprPtr nested = sum_over(0, ir_binary(BinOp::Mul, var(0), sum_over(1, var(1))));
  st.rhs = ir_binary(BinOp::Add, ir_binary(BinOp::Add, std::move(nested), sum_over(2, var(2))),
                     sum_over(3, var(3)));
  // Only the inner k is bound inside another k; the two j loops are side by side.
  EXPECT_EQ(shadowing_reductions(st), std::set<int>({1}));
}

TEST(Shadowing, NoneInAPlainStatement) {
  Statement st = statement({"i", "j"}, {"k"});
  st.rhs = ir_binary(BinOp::Add, var(0), sum_over(2, var(2)));
  EXPECT_TRUE(shadowing_reductions(st).empty());
  st.rhs = nullptr;  // a statement without a right-hand side binds nothing
  EXPECT_TRUE(shadowing_reductions(st).empty());
}

TEST(Shadowing, TheCPrinterRenamesWhatShadows) {
  Spec spec;
  Statement st = statement({"i"}, {"i", "k"});
  st.rhs = ir_binary(BinOp::Add, sum_over(1, var(1)), sum_over(2, var(2)));
  HelperSet helpers;
  StmtLowering L(spec, st, &helpers);
  EXPECT_EQ(L.var_name(0), "i");
  EXPECT_EQ(L.var_name(1), "sb_i_1");
  EXPECT_EQ(L.var_name(2), "k");
}

}  // namespace
}  // namespace sb
