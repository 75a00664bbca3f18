// Unit tests of the expression parser and the spec loader.
#include <gtest/gtest.h>

#include "expr_parser.h"

namespace sb {
namespace {

TextMap one_line() {
  TextMap m;
  m.file = "t.yaml";
  m.starts.push_back(Loc{"t.yaml", 3, 5});
  return m;
}

TEST(ParserTest, PrecedenceAndCanonicalText) {
  Spec s;
  auto e = parse_expression("a + b * c - -d", one_line());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(to_string(*e.value(), s, nullptr), "a + b * c - -d");
  auto p = parse_expression("(a + b) * c", one_line());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(to_string(*p.value(), s, nullptr), "(a + b) * c");
}

}  // namespace
}  // namespace sb
