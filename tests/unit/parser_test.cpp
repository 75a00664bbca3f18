// Unit tests of the expression parser and the spec loader.
#include <gtest/gtest.h>

#include "frontend/expr_parser.h"

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

// Issue 19: the parser refused deep nesting of parentheses but not a deep tree. A flat chain
// of 10,000 or 100,000 additions is a left-deep tree that overflowed the stack of the checks;
// now it is a located error at the operator past the limit, found without recursion.
TEST(ParserTest, LongFlatChainIsALocatedErrorNotACrash) {
  for (int terms : {10000, 100000}) {
    std::string text = "y[i] = x[i]";
    for (int k = 0; k < terms; ++k) text += "+1";
    auto r = parse_statements(text, one_line());
    ASSERT_FALSE(r.ok()) << terms << " terms were accepted";
    EXPECT_NE(r.error().message.find("expression is too deep (more than 256 levels"),
              std::string::npos)
        << r.error().message;
    // "y[i] = x[i]" is 11 characters; x[i] is height 2, so the 255th '+' makes height 257.
    EXPECT_EQ(r.error().loc.line, 3);
    EXPECT_EQ(r.error().loc.col, 5 + 11 + 2 * 254);
  }
  // A tree of the limit's height is fine: 254 additions on top of the read x[i].
  std::string ok = "y[i] = x[i]";
  for (int k = 0; k < 254; ++k) ok += "+1";
  EXPECT_TRUE(parse_statements(ok, one_line()).ok());
}

// Every inner node counts toward the height: calls and reads as well as binary operators.
TEST(ParserTest, TreeDepthCountsEveryOperator) {
  auto chain = [](int calls) {
    std::string t;
    for (int k = 0; k < calls; ++k) t += "abs(";
    t += "x[i]";  // height 2
    for (int k = 0; k < 250; ++k) t += "+1";
    for (int k = 0; k < calls; ++k) t += ")";
    return t;
  };
  EXPECT_TRUE(parse_expression(chain(4), one_line()).ok());  // height 256
  auto r = parse_expression(chain(5), one_line());             // height 257
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("too deep"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().loc.col, 5);  // the outermost abs
}

// Location lookup by binary search over line starts (linear-time parsing) gives the same
// positions as a scan from the start of the text.
TEST(ParserTest, LocationsOfAMultiLineTextMatchAScan) {
  TextMap m;
  m.file = "t.yaml";
  for (int l = 0; l < 5; ++l) m.starts.push_back(Loc{"t.yaml", 10 + l, 3});
  const std::string text = "a = 1\n\nbb = c +\n  d\n";
  const auto offs = TextMap::line_offsets(text);
  for (size_t off = 0; off <= text.size(); ++off) {
    size_t line = 0, line_off = 0;
    for (size_t i = 0; i < off; ++i)
      if (text[i] == '\n') line = line + 1, line_off = i + 1;
    const Loc want{"t.yaml", 10 + static_cast<int>(line), 3 + static_cast<int>(off - line_off)};
    const Loc got = m.at(offs, off);
    EXPECT_EQ(got.line, want.line) << off;
    EXPECT_EQ(got.col, want.col) << off;
    EXPECT_EQ(m.at(text, off).line, want.line) << off;
  }
  auto r = parse_statements("a = 1\n\nbb = (c +\n  )\n", m);  // a newline in ( ) goes on
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().loc.line, 13);
  EXPECT_EQ(r.error().loc.col, 5);
}

}  // namespace
}  // namespace sb
