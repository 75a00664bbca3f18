// Unit tests of the mlir backend's loop IR printer (print_mlir_block in
// backends/mlir/print_loops.h): SSA values for variables, carried through scf.if results and
// scf.for iter_args; scf.parallel for parallel loops; the leaves spelled by MlirLeaves, here a
// fake that names each call.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "backends/common/emit_common.h"
#include "backends/mlir/print_loops.h"
#include "lower/host_bodies.h"
#include "lower/running_scans.h"
#include "rc_spec.h"

namespace sb {
namespace {

using namespace loops;

class FakeLeaves : public MlirLeaves {
 public:
  std::string fresh() override { return "%" + std::to_string(next_++); }
  void bind_index(int v, const std::string& value) override {
    if (value.empty())
      bound.erase(v);
    else
      bound[v] = value;
  }
  std::string index_var(int v) override { return bound.at(v); }
  std::string extent(int t, int dim) override {
    return "%E" + std::to_string(t) + "_" + std::to_string(dim);
  }
  std::string size(int s) override { return "%S" + std::to_string(s); }
  std::string spec(const sb::Expr&) override { return "%spec"; }
  std::string float_constant(double v, DType) override { return "%f" + std::to_string(int(v)); }
  std::string identity(ReduceOp, DType) override { return "%id"; }
  std::string fold(ReduceOp, DType, const std::string& acc, const std::string& value) override {
    return "%fold(" + acc + "," + value + ")";
  }
  std::string fold_range(const sb::Expr&, const std::string& acc, const std::string& lo,
                         const std::string& hi) override {
    ranges.push_back(acc + " over " + lo + ".." + hi);
    return "%range" + std::to_string(ranges.size());
  }
  void scan_walk(const sb::Expr&, const std::string& acc, const std::string& end) override {
    walks.push_back(acc + " to " + end + " with " + std::to_string(bound.size()) + " bound");
  }

  std::map<int, std::string> bound;
  std::vector<std::string> ranges, walks;

 private:
  int next_ = 0;
};

std::string print(const Block& b, FakeLeaves& leaves) {
  CodeWriter w;
  print_mlir_block(b, leaves, w);
  return w.str();
}

TEST(MlirLoopPrinter, AVariableAssignedInABranchIsTheIfsResult) {
  FakeLeaves leaves;
  const Block b = {
      let("a", imm(1), /*mut=*/true),
      if_then(binary(loops::BinOp::Gt, var("a", int_t()), imm(0)),
              {assign("a", add(var("a", int_t()), imm(2)))}),
      alloc("buf", int_t(), {imm(4)}, MemScope::StackLocal,
            {store("buf", int_t(), {imm(0)}, var("a", int_t()))}),
  };
  const std::string out = print(b, leaves);
  // %0 = 1; %1 = 0; %2 = a > 0; %3 = the if's result; the else branch yields a's value before.
  EXPECT_NE(out.find("%3 = scf.if %2 -> (index) {"), std::string::npos) << out;
  EXPECT_NE(out.find("} else {\n  scf.yield %0 : index\n}"), std::string::npos) << out;
  EXPECT_NE(out.find("memref.alloca() : memref<4xindex>"), std::string::npos) << out;
  EXPECT_NE(out.find("memref.store %3, "), std::string::npos) << out;  // after the if: its result
}

TEST(MlirLoopPrinter, ASerialLoopCarriesTheVariablesItAssigns) {
  FakeLeaves leaves;
  const Block b = {
      let("s", imm(0), /*mut=*/true),
      let("t", imm(5), /*mut=*/true),
      for_loop("i", imm(0), imm(10), imm(1), ForKind::Serial,
               {assign("s", add(var("s", int_t()), var("i", int_t())))}),
      alloc("buf", int_t(), {imm(2)}, MemScope::StackLocal,
            {store("buf", int_t(), {imm(0)}, var("s", int_t())),
             store("buf", int_t(), {imm(1)}, var("t", int_t()))}),
  };
  const std::string out = print(b, leaves);
  // s is carried (iter_args), t is not; after the loop s is the loop's result.
  EXPECT_NE(out.find("= scf.for %6 = %2 to %3 step %4 iter_args(%7 = %0) -> (index) {"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%8 = arith.addi %7, %6 : index"), std::string::npos) << out;
  EXPECT_NE(out.find("scf.yield %8 : index"), std::string::npos) << out;
  EXPECT_NE(out.find("memref.store %5, "), std::string::npos) << out;  // the loop's result
  EXPECT_NE(out.find("memref.store %1, "), std::string::npos) << out;  // t, untouched
}

TEST(MlirLoopPrinter, ALongScanPrintsTwoParallelPassesAndItsOffsetsInOrder) {
  Spec spec = load_rc_spec(rc_tensors({"x", "v"}), "  v[c] = sum(k in 0..c + 1: x[k])\n");
  running_scans(spec);
  const Statement& st = spec.stmts[0];
  const sb::Expr* red = running_scan(spec, st, /*rows=*/false);
  ASSERT_NE(red, nullptr);
  const ScanSplitBodies bodies = scan_split_bodies(spec, st, *red);
  FakeLeaves leaves;
  const std::string out = print(joined({&bodies.head, &bodies.two_pass}), leaves);
  size_t parallel = 0, reduce = 0;
  for (size_t p = out.find("scf.parallel"); p != std::string::npos;
       p = out.find("scf.parallel", p + 1))
    ++parallel;
  for (size_t p = out.find("scf.reduce"); p != std::string::npos; p = out.find("scf.reduce", p + 1))
    ++reduce;
  EXPECT_EQ(parallel, 2u) << out;
  EXPECT_EQ(reduce, 2u) << out;
  // Each block's first and last term: scf.if results, not memory.
  EXPECT_NE(out.find("= scf.if "), std::string::npos) << out;
  // The offsets: one serial loop carrying the running offset.
  EXPECT_NE(out.find("iter_args("), std::string::npos) << out;
  EXPECT_NE(out.find("scf.yield %fold("), std::string::npos) << out;
  EXPECT_NE(out.find("memref.alloca() : memref<" + std::to_string(kScanBlocks) + "xf32>"),
            std::string::npos)
      << out;
  // One fold of each block's new terms, from the identity; one walk, from the block's offset,
  // with the output index and the term index bound (2 index variables).
  ASSERT_EQ(leaves.ranges.size(), 1u);
  EXPECT_EQ(leaves.ranges[0].rfind("%id over ", 0), 0u) << leaves.ranges[0];
  ASSERT_EQ(leaves.walks.size(), 1u);
  EXPECT_NE(leaves.walks[0].find(" with 2 bound"), std::string::npos) << leaves.walks[0];
  EXPECT_TRUE(leaves.bound.empty());  // every binding ends with its scope
}

}  // namespace
}  // namespace sb
