// Unit tests of the expression walks (codegen/ir/visitor.h): the pre-order visitor, the
// rebuilding mutator and the strict functor.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "frontend/expr_parser.h"
#include "ir/visitor.h"

namespace sb {
namespace {

TextMap one_line() {
  TextMap m;
  m.file = "t.yaml";
  m.starts.push_back(Loc{"t.yaml", 3, 5});
  return m;
}

ExprPtr parse(const std::string& text) {
  auto e = parse_expression(text, one_line());
  EXPECT_TRUE(e.ok()) << text;
  return e.ok() ? std::move(e.value()) : nullptr;
}

// A label per node: its kind and what distinguishes it.
std::string label(const Expr& e) {
  switch (e.kind) {
    case ExprKind::FloatLit:
      return "float " + std::to_string(e.fval);
    case ExprKind::IntLit:
      return "int " + std::to_string(e.ival);
    case ExprKind::Name:
      return "name " + e.name;
    case ExprKind::Const:
      return "const " + e.name;
    case ExprKind::IndexVar:
      return "var " + std::to_string(e.ref);
    case ExprKind::SizeRef:
      return "size " + std::to_string(e.ref);
    case ExprKind::Read:
      return "read " + e.name;
    case ExprKind::Unary:
      return std::string("unary ") + (e.uop == UnOp::Neg ? "-" : "!");
    case ExprKind::Binary:
      return std::string("binary ") + binop_symbol(e.bop);
    case ExprKind::Call:
      return "call " + e.name;
    case ExprKind::Cast:
      return "cast";
    case ExprKind::Reduce:
      return "reduce " + e.name;
  }
  return "?";
}

class Recorder : public ExprVisitor {
 public:
  std::vector<std::string> seen;
  std::vector<const Expr*> nodes;
  void visit(const Expr& e) override {
    seen.push_back(label(e));
    nodes.push_back(&e);
    ExprVisitor::visit(e);
  }
};

TEST(VisitorTest, VisitsEveryNodeOncePreOrder) {
  ExprPtr e = parse("x + a[i, 2] * -y - sum(k in 0..N: f(k, 1.5))");
  Recorder r;
  r.visit(*e);
  const std::vector<std::string> want = {
      "binary -", "binary +", "name x", "binary *", "read a",         "name i", "int 2", "unary -",
      "name y",   "reduce k", "call f", "name k",   "float 1.500000", "int 0",  "name N"};
  EXPECT_EQ(r.seen, want);
  // Each node once: no pointer repeats.
  for (size_t i = 0; i < r.nodes.size(); ++i)
    for (size_t j = i + 1; j < r.nodes.size(); ++j) EXPECT_NE(r.nodes[i], r.nodes[j]);
}

// Overriding one kind without calling the base prunes the walk below it.
TEST(VisitorTest, OverrideWithoutBaseStopsDescending) {
  class NamesOutsideReads : public ExprVisitor {
   public:
    std::vector<std::string> names;

   protected:
    void visit_name(const Expr& e) override { names.push_back(e.name); }
    void visit_read(const Expr&) override {}
  };
  ExprPtr e = parse("x + a[i, j] * y");
  NamesOutsideReads v;
  v.visit(*e);
  EXPECT_EQ(v.names, (std::vector<std::string>{"x", "y"}));
}

TEST(VisitorTest, ForEachNodeAndAnyNode) {
  ExprPtr e = parse("a[i] + b[j] * 3");
  std::vector<std::string> seen;
  for_each_node(*e, [&](const Expr& n) { seen.push_back(label(n)); });
  EXPECT_EQ(seen, (std::vector<std::string>{"binary +", "read a", "name i", "binary *", "read b",
                                            "name j", "int 3"}));
  int calls = 0;
  EXPECT_TRUE(any_node(*e, [&](const Expr& n) {
    ++calls;
    return n.kind == ExprKind::Read && n.name == "a";
  }));
  EXPECT_EQ(calls, 2);  // stopped at the first match
  EXPECT_FALSE(any_node(*e, [](const Expr& n) { return n.kind == ExprKind::FloatLit; }));
}

TEST(VisitorTest, MutableVisitorChangesNodesInPlace) {
  class DoubleInts : public MutableExprVisitor {
   protected:
    void visit_int_lit(Expr& e) override { e.ival *= 2; }
  };
  ExprPtr e = parse("a[i + 1] * 3 - 5");
  DoubleInts d;
  d.visit(*e);
  Spec s;
  EXPECT_EQ(to_string(*e, s, nullptr), "a[i + 2] * 6 - 10");
}

// Every field of every node, pre-order, as text.
std::vector<std::string> fields(const Expr& root) {
  std::vector<std::string> out;
  for_each_node(root, [&](const Expr& e) {
    out.push_back(
        std::to_string(static_cast<int>(e.kind)) + "|" + e.loc.file + ":" +
        std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) + "|" +
        std::to_string(static_cast<int>(e.type)) + "|" + std::to_string(e.fval) + "|" +
        std::to_string(e.ival) + "|" + e.name + "|" + std::to_string(e.ref) + "|" +
        std::to_string(static_cast<int>(e.uop)) + std::to_string(static_cast<int>(e.bop)) +
        std::to_string(static_cast<int>(e.fn)) + std::to_string(static_cast<int>(e.rop)) +
        std::to_string(static_cast<int>(e.cast_to)) + "|" + std::to_string(e.args.size()));
  });
  return out;
}

TEST(MutatorTest, DefaultIsADeepIdentityCopy) {
  ExprPtr e = parse("max(x, a[i, j] / 2.5) + f32(-y) * sum(k in 0..N: b[k] % 3)");
  // Give the nodes fields that the parser leaves at their defaults, so the copy must carry them.
  class Stamp : public MutableExprVisitor {
   public:
    int n = 0;
    void visit(Expr& e) override {
      e.ref = ++n;
      e.type = n % 2 ? DType::F32 : DType::Index;
      e.rop = ReduceOp::Max;
      e.fn = Fn::Tanh;
      e.cast_to = DType::F64;
      MutableExprVisitor::visit(e);
    }
  } stamp;
  stamp.visit(*e);
  ASSERT_GT(stamp.n, 10);

  ExprMutator identity;
  ExprPtr c = identity.mutate(*e);
  EXPECT_TRUE(same_expr(*e, *c));
  EXPECT_EQ(fields(*e), fields(*c));
  // A copy, not a share: no node of the copy is a node of the original.
  std::vector<const Expr*> orig;
  for_each_node(*e, [&](const Expr& x) { orig.push_back(&x); });
  for_each_node(*c, [&](const Expr& x) {
    for (const Expr* o : orig) EXPECT_NE(o, &x);
  });
  // clone() is the same deep copy.
  EXPECT_EQ(fields(*clone(*e)), fields(*e));
}

// Replaces every read of one tensor by a literal, leaving the original untouched.
TEST(MutatorTest, ReplacesReadsOfOneTensor) {
  class ReadToLiteral : public ExprMutator {
   public:
    explicit ReadToLiteral(std::string t) : tensor_(std::move(t)) {}
    int replaced = 0;

   protected:
    ExprPtr mutate_read(const Expr& e) override {
      if (e.name != tensor_) return ExprMutator::mutate_read(e);
      ++replaced;
      ExprPtr lit = copy_node(e);
      lit->kind = ExprKind::FloatLit;
      lit->fval = 0.5;
      lit->name.clear();
      return lit;
    }

   private:
    std::string tensor_;
  };
  ExprPtr e = parse("a[i] + b[a[j]] * (a[k] - c[i])");
  ReadToLiteral m("a");
  ExprPtr r = m.mutate(*e);
  Spec s;
  EXPECT_EQ(m.replaced, 3);
  EXPECT_EQ(to_string(*r, s, nullptr), "0.5 + b[0.5] * (0.5 - c[i])");
  EXPECT_EQ(to_string(*e, s, nullptr), "a[i] + b[a[j]] * (a[k] - c[i])");
}

// The strict functor: one handler per kind, each node goes to its own.
class KindName : public ExprFunctor<std::string(int)> {
 protected:
  std::string visit_float_lit(const Expr&, int d) override { return tag("float_lit", d); }
  std::string visit_int_lit(const Expr&, int d) override { return tag("int_lit", d); }
  std::string visit_name(const Expr&, int d) override { return tag("name", d); }
  std::string visit_const(const Expr&, int d) override { return tag("const", d); }
  std::string visit_index_var(const Expr&, int d) override { return tag("index_var", d); }
  std::string visit_size_ref(const Expr&, int d) override { return tag("size_ref", d); }
  std::string visit_read(const Expr&, int d) override { return tag("read", d); }
  std::string visit_unary(const Expr&, int d) override { return tag("unary", d); }
  std::string visit_binary(const Expr& e, int d) override {
    // Recursion is the functor's own choice, with its own arguments.
    return tag("binary", d) + "(" + visit(*e.args[0], d + 1) + "," + visit(*e.args[1], d + 1) + ")";
  }
  std::string visit_call(const Expr&, int d) override { return tag("call", d); }
  std::string visit_cast(const Expr&, int d) override { return tag("cast", d); }
  std::string visit_reduce(const Expr&, int d) override { return tag("reduce", d); }

 private:
  static std::string tag(const char* k, int d) { return std::string(k) + "@" + std::to_string(d); }
};

TEST(StrictFunctorTest, DispatchesEachKindToItsHandler) {
  const std::vector<std::pair<ExprKind, std::string>> kinds = {
      {ExprKind::FloatLit, "float_lit"}, {ExprKind::IntLit, "int_lit"},
      {ExprKind::Name, "name"},          {ExprKind::Const, "const"},
      {ExprKind::IndexVar, "index_var"}, {ExprKind::SizeRef, "size_ref"},
      {ExprKind::Read, "read"},          {ExprKind::Unary, "unary"},
      {ExprKind::Call, "call"},          {ExprKind::Cast, "cast"},
      {ExprKind::Reduce, "reduce"}};
  KindName f;
  for (const auto& [k, want] : kinds) {
    Expr e;
    e.kind = k;
    EXPECT_EQ(f.visit(e, 7), want + "@7");
  }
  ExprPtr b = parse("x * 2");
  EXPECT_EQ(f.visit(*b, 0), "binary@0(name@1,int_lit@1)");
}

// A functor that leaves out a kind cannot be instantiated: strictness is a compile error.
class MissingReduce : public ExprFunctor<void()> {
 protected:
  void visit_float_lit(const Expr&) override {}
  void visit_int_lit(const Expr&) override {}
  void visit_name(const Expr&) override {}
  void visit_const(const Expr&) override {}
  void visit_index_var(const Expr&) override {}
  void visit_size_ref(const Expr&) override {}
  void visit_read(const Expr&) override {}
  void visit_unary(const Expr&) override {}
  void visit_binary(const Expr&) override {}
  void visit_call(const Expr&) override {}
  void visit_cast(const Expr&) override {}
};
static_assert(std::is_abstract_v<MissingReduce>);
static_assert(!std::is_abstract_v<KindName>);

}  // namespace
}  // namespace sb
