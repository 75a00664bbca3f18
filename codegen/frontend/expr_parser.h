// The parser of the spec's index notation: statements, expressions, reductions.
//
// Produces untyped ASTs (ExprKind::Name for every plain identifier; Reduce nodes carry their
// variable in `name` and args = {body, lo, hi}); check_spec() resolves and types them.
#pragma once

#include <string>
#include <vector>

#include "support/diag.h"
#include "ir/ir.h"

namespace sb {

// Maps offsets in a text taken from a YAML scalar back to file positions: line i of the text
// starts at `starts[i]` in the file.
struct TextMap {
  std::string file;
  std::vector<Loc> starts;
  Loc at(const std::string& text, size_t offset) const;  // O(length of text)
  // Where each line of `text` starts (offset 0, then one past each newline); computed once per
  // text so that each lookup is a binary search.
  static std::vector<size_t> line_offsets(const std::string& text);
  Loc at(const std::vector<size_t>& line_offsets, size_t offset) const;  // O(log lines)
};

struct ParsedIndex {
  std::string name;
  Loc loc;
};

struct ParsedStatement {
  Loc loc;  // of the target name
  std::string target;
  bool subscripted = false;          // `y[...] = ` rather than `y = `
  std::vector<ParsedIndex> indices;  // left-hand side index variables, as written
  ExprPtr rhs;
};

// Parses statements separated by newlines or ';' ('#' starts a comment; a newline inside
// parentheses or brackets does not end a statement). Returns an error at the first problem.
Result<std::vector<ParsedStatement>> parse_statements(const std::string& text, const TextMap& map);

// Parses one expression that must span the whole text (used for shapes).
Result<ExprPtr> parse_expression(const std::string& text, const TextMap& map);

}  // namespace sb
