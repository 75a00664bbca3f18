// The intrinsics registry (codegen/ir/intrinsics.h): its records, the reference value and error
// magnitude of each intrinsic, and the default expansions (lower/expand_intrinsics.h), which
// must compute what the record's reference computes.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <limits>
#include <set>
#include <string>

#include "run/buffers.h"
#include "driver.h"
#include "ir/intrinsics.h"
#include "lower/expand_intrinsics.h"
#include "ir/names.h"
#include "run/reference.h"

namespace sb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

MagValue ref(Fn fn, std::initializer_list<MagValue> args) {
  const Intrinsic& in = intrinsic(fn);
  EXPECT_EQ(static_cast<size_t>(in.arity), args.size()) << in.name;
  return in.reference(args.begin());
}

TEST(Intrinsics, EveryFnHasOneRecordFoundByItsSpelling) {
  std::set<std::string_view> names;
  for (const Intrinsic& r : all_intrinsics()) {
    EXPECT_TRUE(names.insert(r.name).second) << "spelled twice: " << r.name;
    // An internal record (made by lowering) is not found by name: a spec cannot call it.
    EXPECT_EQ(find_intrinsic(r.name), r.internal ? nullptr : &r);
    EXPECT_EQ(&intrinsic(r.fn), &r);
    EXPECT_EQ(std::string(fn_name(r.fn)), std::string(r.name));
    EXPECT_TRUE(r.fn == Fn::Select || r.reference) << r.name << " has no reference";
    EXPECT_EQ(r.integer_reference != nullptr, r.rule == TypeRule::SameNumeric) << r.name;
    EXPECT_FALSE(r.doc.empty()) << r.name;
    if (!r.internal) {
      EXPECT_TRUE(is_builtin_name(std::string(r.name))) << r.name << " is not reserved in specs";
    }
  }
  EXPECT_EQ(find_intrinsic("where"), &intrinsic(Fn::Select));
  EXPECT_EQ(find_intrinsic("softplus"), nullptr);
}

TEST(Intrinsics, LanguageReferenceListsEveryIntrinsic) {
  std::ifstream in(std::string(SB_TESTS_DIR) + "/../specs/README.md");
  ASSERT_TRUE(in) << "specs/README.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  size_t rows = 0;
  for (const Intrinsic& r : all_intrinsics()) {
    if (r.internal) {
      EXPECT_EQ(readme.find("`" + std::string(r.name) + "`"), std::string::npos)
          << "the internal " << r.name << " is not part of the language";
      continue;
    }
    const char* types = r.rule == TypeRule::SameFloat     ? "f32, f64"
                        : r.rule == TypeRule::SameNumeric ? "any number"
                                                          : "any";
    const std::string row = "| `" + std::string(r.name) + "` | " + std::to_string(r.arity) +
                            " | " + types + " | " + std::string(r.doc) + " |\n";
    EXPECT_NE(readme.find(row), std::string::npos) << "specs/README.md lacks the row\n" << row;
    rows += readme.find(row) != std::string::npos;
  }
  // No row for a function the registry does not have.
  size_t listed = 0;
  for (size_t at = readme.find("\n| `"); at != std::string::npos; at = readme.find("\n| `", at + 1)) {
    const size_t end = readme.find('`', at + 4);
    if (find_intrinsic(readme.substr(at + 4, end - at - 4))) ++listed;
  }
  EXPECT_EQ(listed, rows);
}

TEST(Intrinsics, SigmoidValueAndMagnitude) {
  const MagValue z = ref(Fn::Sigmoid, {{0, 0}});
  EXPECT_EQ(z.value, 0.5);
  EXPECT_EQ(z.mag, 0.5);
  // Slope v (1 - v) = 0.25 at 0: a magnitude of 8 in the argument gives 2.
  EXPECT_DOUBLE_EQ(ref(Fn::Sigmoid, {{0, 8}}).mag, 2.0);
  EXPECT_DOUBLE_EQ(ref(Fn::Sigmoid, {{-3, 3}}).value, 1 / (1 + std::exp(3.0)));
}

TEST(Intrinsics, Log1pAndExpm1AreAccurateNearZero) {
  const double tiny = 1e-12;
  EXPECT_EQ(ref(Fn::Log1p, {{tiny, tiny}}).value, std::log1p(tiny));
  EXPECT_NE(ref(Fn::Log1p, {{tiny, tiny}}).value, std::log(1 + tiny));  // what log1p avoids
  EXPECT_DOUBLE_EQ(ref(Fn::Log1p, {{tiny, 2 * tiny}}).mag, 2 * tiny / (1 + tiny));
  EXPECT_EQ(ref(Fn::Log1p, {{-1, 1}}).mag, kInf);  // the pole
  EXPECT_EQ(ref(Fn::Expm1, {{tiny, tiny}}).value, std::expm1(tiny));
  EXPECT_DOUBLE_EQ(ref(Fn::Expm1, {{2, 0.5}}).mag, std::expm1(2.0));  // |v| dominates
  EXPECT_DOUBLE_EQ(ref(Fn::Expm1, {{0.5, 4}}).mag, 4 * std::exp(0.5));  // the slope e^x
}

TEST(Intrinsics, PowValueAndMagnitude) {
  const MagValue v = ref(Fn::Pow, {{2, 2}, {3, 3}});
  EXPECT_EQ(v.value, 8);
  // |v| (|y| ma / |x| + |log x| mb) = 8 (3 + 3 log 2)
  EXPECT_DOUBLE_EQ(v.mag, 8 * (3 + 3 * std::log(2.0)));
  EXPECT_EQ(ref(Fn::Pow, {{0, 0}, {2, 2}}).mag, 0);      // an exact zero base
  EXPECT_EQ(ref(Fn::Pow, {{0, 1}, {2, 2}}).mag, kInf);   // a computed one
}

TEST(Intrinsics, SinAndCosMagnitudeFollowTheArgument) {
  const MagValue s = ref(Fn::Sin, {{std::acos(-1.0), 4}});
  EXPECT_NEAR(s.value, 0, 1e-15);
  EXPECT_EQ(s.mag, 4);  // near a zero, the argument's error dominates
  EXPECT_EQ(ref(Fn::Cos, {{0, 0}}).value, 1);
  EXPECT_EQ(ref(Fn::Cos, {{0, 0}}).mag, 1);
}

TEST(Intrinsics, StepFunctionsAreExactAwayFromTheirStepsAndFreeAtThem) {
  EXPECT_EQ(ref(Fn::Floor, {{-2.5, 2.5}}).value, -3);
  EXPECT_EQ(ref(Fn::Floor, {{-2.5, 2.5}}).mag, 3);
  EXPECT_EQ(ref(Fn::Ceil, {{-2.5, 2.5}}).value, -2);
  EXPECT_EQ(ref(Fn::Round, {{2.5, 2.5}}).value, 2);  // halves to even
  EXPECT_EQ(ref(Fn::Round, {{3.5, 3.5}}).value, 4);
  EXPECT_EQ(ref(Fn::Round, {{-2.5, 2.5}}).value, -2);
  EXPECT_EQ(ref(Fn::Round, {{2.4, 2.4}}).mag, 2);
  // An argument within rounding of a step: either side is right.
  EXPECT_EQ(ref(Fn::Floor, {{3 - 1e-9, 3}}).mag, kInf);
  EXPECT_EQ(ref(Fn::Round, {{0.5 + 1e-9, 0.5}}).mag, kInf);
  EXPECT_EQ(ref(Fn::Sign, {{1e-9, 1}}).mag, kInf);
  // An exact zero argument stays exact.
  EXPECT_EQ(ref(Fn::Floor, {{0, 0}}).mag, 0);
  EXPECT_EQ(ref(Fn::Sign, {{0, 0}}).value, 0);
  EXPECT_EQ(ref(Fn::Sign, {{0, 0}}).mag, 0);
  EXPECT_EQ(ref(Fn::Sign, {{-7, 7}}).value, -1);
  EXPECT_TRUE(std::isnan(ref(Fn::Sign, {{NAN, 0}}).value));
  const int64_t minus5 = -5, zero = 0;
  EXPECT_EQ(intrinsic(Fn::Sign).integer_reference(&minus5), -1);
  EXPECT_EQ(intrinsic(Fn::Sign).integer_reference(&zero), 0);
}

TEST(Intrinsics, RsqrtValueAndMagnitude) {
  const MagValue v = ref(Fn::Rsqrt, {{4, 4}});
  EXPECT_EQ(v.value, 0.5);
  EXPECT_EQ(v.mag, 0.5);  // max(|v|, |v| ma / (2 |x|)) = max(0.5, 0.25)
  EXPECT_EQ(ref(Fn::Rsqrt, {{0, 1}}).mag, kInf);
}

// Every default expansion computes its record's reference: the spec of the golden test
// math_fns, expanded down to the intrinsics without an expansion, is interpreted next to the
// unexpanded spec on the same random inputs.
TEST(Intrinsics, DefaultExpansionsComputeTheReference) {
  Result<Spec> r = load_and_check(std::string(SB_TESTS_DIR) + "/golden/specs/math_fns.yaml");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  const Spec& spec = r.value();
  const Spec prim = expand_intrinsics(spec, [](Fn f) { return intrinsic(f).expand == nullptr; });
  std::set<Fn> expanded;
  for (const Intrinsic& in : all_intrinsics())
    if (in.expand) expanded.insert(in.fn);
  // Every intrinsic with an expansion appears in the spec, and none survives the expansion.
  for (const Statement& st : prim.stmts) {
    const std::string text = to_string(st, prim);
    for (Fn f : expanded)
      EXPECT_EQ(text.find(std::string(fn_name(f)) + "("), std::string::npos) << text;
  }
  std::set<Fn> used;
  for (const Statement& st : spec.stmts) {
    std::vector<const Expr*> todo{st.rhs.get()};
    while (!todo.empty()) {
      const Expr* e = todo.back();
      todo.pop_back();
      if (e->kind == ExprKind::Call) used.insert(e->fn);
      for (const ExprPtr& a : e->args) todo.push_back(a.get());
    }
  }
  for (Fn f : expanded) EXPECT_TRUE(used.count(f)) << fn_name(f) << " is not in math_fns.yaml";

  const SizePoint z{1000};
  for (uint64_t seed : {1u, 2u}) {
    HostTensors h = make_host_tensors(spec, z, InputKind::Random, seed);
    Reference a(spec, z, h), b(prim, z, h);
    for (const Statement& st : spec.stmts) {
      for (int64_t i = 0; i < 1000; ++i) {
        const RefValue x = a.element(st.out, i), y = b.element(st.out, i);
        if (std::isinf(x.mag)) continue;  // at a step: either side is right
        EXPECT_NEAR(y.value, x.value, 1e-13 * std::max(1.0, x.mag))
            << st.target << "[" << i << "] seed " << seed;
      }
    }
  }
}

}  // namespace
}  // namespace sb
