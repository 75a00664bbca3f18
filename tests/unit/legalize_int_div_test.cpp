// Unit tests of the integer-division legalisation pass (codegen/lower/legalize_int_div.h) and of
// the internal intrinsics it leaves (div_trunc, rem_trunc).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "driver.h"
#include "ir/intrinsics.h"
#include "lower/legalize_int_div.h"
#include "lower/pipeline.h"

namespace sb {
namespace {

Spec load(const std::string& compute) {
  static int n = 0;
  const std::string text =
      "name: t\ndoc: test spec\nsizes:\n"
      "  N: {bench: [64], verify: [5]}\n"
      "tensors:\n"
      "  a: {type: i32, shape: [N], role: in, init: [-9, 9]}\n"
      "  b: {type: i32, shape: [N], role: in, init: [-3, 3]}\n"
      "  f: {type: f32, shape: [N], role: in}\n"
      "  q: {type: i32, shape: [N], role: out}\n"
      "  c: {type: i32, shape: [N], role: in, boundary: clamp}\n"
      + std::string(compute.find("g[") != std::string::npos
                        ? "  g: {type: f32, shape: [N], role: temp}\n"
                        : "") +
      "compute: |\n" +
      compute + "variants:\n  cpu:\n    - {name: loops, strategy: loops}\n";
  const auto path = std::filesystem::temp_directory_path() /
                    ("sb_legalize_test_" + std::to_string(::getpid()) + "_" +
                     std::to_string(n++) + ".yaml");
  std::ofstream(path) << text;
  Result<Spec> s = load_and_check(path.string());
  std::filesystem::remove(path);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : format_error(s.error()));
  return s.ok() ? std::move(s.value()) : Spec{};
}

std::string lowered(const std::string& compute, size_t stmt = 0) {
  const Spec spec = legalize_int_div(load(compute));
  return to_string(*spec.stmts.at(stmt).rhs, spec, &spec.stmts.at(stmt));
}

TEST(LegalizeIntDiv, ADivisorOfAtLeastOneNeedsNoGuard) {
  EXPECT_EQ(lowered("  q[i] = a[i] / 3 + a[i] % 5\n"), "div_trunc(a[i], 3) + rem_trunc(a[i], 5)");
}

TEST(LegalizeIntDiv, AnyOtherDivisorIsGuardedAndNeverZero) {
  EXPECT_EQ(lowered("  q[i] = a[i] / b[i]\n"),
            "select(b[i] == 0, 0, select(b[i] == -1, -a[i], div_trunc(a[i], "
            "select(b[i] == 0 || b[i] == -1, 1, b[i]))))");
  EXPECT_EQ(lowered("  q[i] = a[i] % b[i]\n"),
            "select(b[i] == 0 || b[i] == -1, 0, rem_trunc(a[i], select(b[i] == 0 || b[i] == -1, "
            "1, b[i])))");
  // A literal that is not positive is guarded too.
  EXPECT_NE(lowered("  q[i] = a[i] / -2\n").find("select("), std::string::npos);
}

TEST(LegalizeIntDiv, FloatDivisionAndSubscriptsAreHandled) {
  // Floating-point division stays an operator; an integer division in a subscript is legalised.
  const char* both = "  g[i] = f[i] / 2.0 + f[N - 1 - i]\n  q[i] = c[i / 2] + i32(g[i])\n";
  EXPECT_EQ(lowered(both, 0), "f[i] / 2.0 + f[N - 1 - i]");
  EXPECT_EQ(lowered(both, 1), "c[div_trunc(i, 2)] + i32(g[i])");
}

TEST(LegalizeIntDiv, ThePipelineKeepsTheSourceTextForComments) {
  const Spec spec = load("  q[i] = a[i] / b[i]\n");
  const Spec out = lower(spec, [](Fn) { return true; });
  EXPECT_EQ(source_text(out.stmts[0], out), "q[i] = a[i] / b[i]");
  EXPECT_NE(to_string(out.stmts[0], out).find("div_trunc"), std::string::npos);
}

TEST(LegalizeIntDiv, TheInternalIntrinsicsTruncateAndAreNotInTheLanguage) {
  const Intrinsic& d = intrinsic(Fn::DivTrunc);
  const Intrinsic& r = intrinsic(Fn::RemTrunc);
  EXPECT_TRUE(d.internal);
  EXPECT_TRUE(r.internal);
  EXPECT_EQ(find_intrinsic("div_trunc"), nullptr);
  EXPECT_EQ(find_intrinsic("rem_trunc"), nullptr);
  const int64_t a[][2] = {{7, 2}, {-7, 2}, {7, -2}, {-7, -2}};
  const int64_t quot[] = {3, -3, -3, 3}, rem[] = {1, -1, 1, -1};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(d.integer_reference(a[k]), quot[k]) << a[k][0] << " / " << a[k][1];
    EXPECT_EQ(r.integer_reference(a[k]), rem[k]) << a[k][0] << " % " << a[k][1];
  }
}

}  // namespace
}  // namespace sb
