#include "frontend/expr_parser.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <unordered_map>

namespace sb {

Loc TextMap::at(const std::string& text, size_t offset) const {
  return at(line_offsets(text), offset);
}

std::vector<size_t> TextMap::line_offsets(const std::string& text) {
  std::vector<size_t> offs{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') offs.push_back(i + 1);
  return offs;
}

Loc TextMap::at(const std::vector<size_t>& offs, size_t offset) const {
  if (starts.empty()) return Loc{file, 0, 0};
  // The line holding `offset` is the last line start at or before it (a newline belongs to the
  // line it ends). A binary search keeps a whole parse O(n log n) in the text's length.
  size_t line = static_cast<size_t>(std::upper_bound(offs.begin(), offs.end(), offset) -
                                    offs.begin()) -
                1;
  size_t line_off = offs[line];
  if (line >= starts.size()) line = starts.size() - 1;
  Loc l = starts[line];
  l.col += static_cast<int>(offset - line_off);
  return l;
}

namespace {

enum class Tok { End, Newline, Ident, Int, Float, Sym };

struct Token {
  Tok kind = Tok::End;
  std::string text;
  size_t off = 0;
  double fval = 0;
  int64_t ival = 0;
};

constexpr int kMaxDepth = 64;       // nesting of parentheses, brackets, calls and unary ops
constexpr int kMaxTreeDepth = 256;  // height of the expression tree (every operator counts)

class Parser {
 public:
  Parser(const std::string& text, const TextMap& map)
      : text_(text), map_(map), line_offs_(TextMap::line_offsets(text)) {}

  Status lex() {
    size_t i = 0;
    int depth = 0;
    while (i < text_.size()) {
      char c = text_[i];
      if (c == '#') {
        while (i < text_.size() && text_[i] != '\n') ++i;
        continue;
      }
      if (c == '\n' || c == ';') {
        if (depth == 0 || c == ';') push(Tok::Newline, std::string(1, c), i);
        ++i;
        continue;
      }
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
        continue;
      }
      size_t start = i;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (i < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_'))
          ++i;
        push(Tok::Ident, text_.substr(start, i - start), start);
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && i + 1 < text_.size() &&
           std::isdigit(static_cast<unsigned char>(text_[i + 1])))) {
        bool is_float = false;
        while (i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i]))) ++i;
        // "0..N" is a range, not the float "0."
        if (i < text_.size() && text_[i] == '.' && !(i + 1 < text_.size() && text_[i + 1] == '.')) {
          is_float = true;
          ++i;
          while (i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i]))) ++i;
        }
        if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
          size_t j = i + 1;
          if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) ++j;
          if (j < text_.size() && std::isdigit(static_cast<unsigned char>(text_[j]))) {
            is_float = true;
            i = j;
            while (i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i]))) ++i;
          }
        }
        std::string num = text_.substr(start, i - start);
        if (i < text_.size() &&
            (std::isalpha(static_cast<unsigned char>(text_[i])) || text_[i] == '_'))
          return err(i, "unexpected character '" + std::string(1, text_[i]) + "' after number '" +
                            num + "'");
        Token t;
        t.kind = is_float ? Tok::Float : Tok::Int;
        t.text = num;
        t.off = start;
        if (is_float) {
          t.fval = std::strtod(num.c_str(), nullptr);
        } else {
          if (num.size() > 18) return err(start, "integer literal '" + num + "' is too large");
          t.ival = std::strtoll(num.c_str(), nullptr, 10);
        }
        toks_.push_back(t);
        continue;
      }
      static const char* two[] = {"..", "<=", ">=", "==", "!=", "&&", "||"};
      bool matched = false;
      for (const char* s : two) {
        if (text_.compare(i, 2, s) == 0) {
          push(Tok::Sym, s, i);
          i += 2;
          matched = true;
          break;
        }
      }
      if (matched) continue;
      if (std::string("+-*/%<>!=()[],:").find(c) != std::string::npos) {
        if (c == '(' || c == '[') ++depth;
        if ((c == ')' || c == ']') && depth > 0) --depth;
        push(Tok::Sym, std::string(1, c), i);
        ++i;
        continue;
      }
      std::string shown =
          std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : "\\x" + hex(c);
      return err(i, "unexpected character '" + shown + "'");
    }
    Token end;
    end.kind = Tok::End;
    end.off = text_.size();
    toks_.push_back(end);
    return {};
  }

  Result<std::vector<ParsedStatement>> statements() {
    std::vector<ParsedStatement> out;
    while (true) {
      while (peek().kind == Tok::Newline) ++pos_;
      if (peek().kind == Tok::End) break;
      auto st = statement();
      if (!st.ok()) return st.error();
      out.push_back(std::move(st.value()));
      if (peek().kind != Tok::Newline && peek().kind != Tok::End)
        return err(peek().off, "expected the end of the statement, found " + describe(peek()));
    }
    return out;
  }

  Result<ExprPtr> whole_expression() {
    auto e = expr(0);
    if (!e.ok()) return e;
    if (peek().kind != Tok::End)
      return err(peek().off, "unexpected " + describe(peek()) + " after the expression");
    return e;
  }

 private:
  static std::string hex(char c) {
    const char* d = "0123456789abcdef";
    unsigned char u = static_cast<unsigned char>(c);
    return std::string{d[u >> 4], d[u & 15]};
  }

  void push(Tok k, std::string text, size_t off) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.off = off;
    toks_.push_back(t);
  }

  const Token& peek(size_t ahead = 0) const {
    size_t p = pos_ + ahead;
    return p < toks_.size() ? toks_[p] : toks_.back();
  }
  bool is_sym(const char* s, size_t ahead = 0) const {
    return peek(ahead).kind == Tok::Sym && peek(ahead).text == s;
  }
  Loc loc(size_t off) const { return map_.at(line_offs_, off); }
  Error err(size_t off, std::string msg) const { return make_error(loc(off), std::move(msg)); }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End:
        return "the end of the text";
      case Tok::Newline:
        return "the end of the line";
      default:
        return "'" + t.text + "'";
    }
  }

  Status expect(const char* sym, const std::string& what) {
    if (!is_sym(sym))
      return err(peek().off,
                 "expected '" + std::string(sym) + "' " + what + ", found " + describe(peek()));
    ++pos_;
    return {};
  }

  Result<ParsedStatement> statement() {
    ParsedStatement st;
    const Token& t = peek();
    if (t.kind != Tok::Ident)
      return err(t.off, "expected a tensor name at the start of a statement, found " + describe(t));
    st.target = t.text;
    st.loc = loc(t.off);
    ++pos_;
    if (is_sym("[")) {
      st.subscripted = true;
      ++pos_;
      if (!is_sym("]")) {
        while (true) {
          const Token& it = peek();
          if (it.kind != Tok::Ident)
            return err(it.off, "expected an index variable on the left-hand side, found " +
                                   describe(it) + " (subscripts on the left must be plain names)");
          st.indices.push_back({it.text, loc(it.off)});
          ++pos_;
          if (is_sym(",")) {
            ++pos_;
            continue;
          }
          break;
        }
      }
      SB_TRY(expect("]", "to close the left-hand side"));
    }
    SB_TRY(expect("=", "after the left-hand side"));
    auto rhs = expr(0);
    if (!rhs.ok()) return rhs.error();
    st.rhs = std::move(rhs.value());
    return st;
  }

  // Records the height of the new inner node `e` (a leaf has height 1) and refuses trees
  // taller than kMaxTreeDepth, so that every later recursive walk of the tree (checks,
  // emitters, the reference, destructors) has a bounded depth. `off` is the operator's text.
  Status grow(const Expr& e, size_t off) {
    int h = 0;
    for (const auto& a : e.args) {
      auto it = heights_.find(a.get());
      h = std::max(h, it == heights_.end() ? 1 : it->second);
    }
    if (++h > kMaxTreeDepth)
      return err(off, "expression is too deep (more than " + std::to_string(kMaxTreeDepth) +
                          " levels of operators; split it into statements with temp tensors)");
    heights_[&e] = h;
    return {};
  }

  static int binary_prec(const std::string& s) {
    if (s == "||") return 1;
    if (s == "&&") return 2;
    if (s == "==" || s == "!=") return 3;
    if (s == "<" || s == "<=" || s == ">" || s == ">=") return 4;
    if (s == "+" || s == "-") return 5;
    if (s == "*" || s == "/" || s == "%") return 6;
    return -1;
  }

  static BinOp binop(const std::string& s) {
    if (s == "+") return BinOp::Add;
    if (s == "-") return BinOp::Sub;
    if (s == "*") return BinOp::Mul;
    if (s == "/") return BinOp::Div;
    if (s == "%") return BinOp::Mod;
    if (s == "<") return BinOp::Lt;
    if (s == "<=") return BinOp::Le;
    if (s == ">") return BinOp::Gt;
    if (s == ">=") return BinOp::Ge;
    if (s == "==") return BinOp::Eq;
    if (s == "!=") return BinOp::Ne;
    if (s == "&&") return BinOp::And;
    return BinOp::Or;
  }

  // Precedence climbing; every binary operator is left-associative.
  Result<ExprPtr> expr(int min_prec) {
    if (++depth_ > kMaxDepth) return err(peek().off, "expression is nested too deeply");
    auto lhs = unary();
    if (!lhs.ok()) return lhs;
    ExprPtr left = std::move(lhs.value());
    while (peek().kind == Tok::Sym) {
      int p = binary_prec(peek().text);
      if (p < 0 || p < min_prec) break;
      Token op = peek();
      ++pos_;
      auto rhs = expr(p + 1);
      if (!rhs.ok()) return rhs;
      auto e = std::make_unique<Expr>();
      e->kind = ExprKind::Binary;
      e->bop = binop(op.text);
      e->loc = loc(op.off);
      e->args.push_back(std::move(left));
      e->args.push_back(std::move(rhs.value()));
      SB_TRY(grow(*e, op.off));
      left = std::move(e);
    }
    --depth_;
    return left;
  }

  Result<ExprPtr> unary() {
    if (is_sym("-") || is_sym("!")) {
      Token op = peek();
      ++pos_;
      if (++depth_ > kMaxDepth) return err(op.off, "expression is nested too deeply");
      auto a = unary();
      --depth_;
      if (!a.ok()) return a;
      // Fold "-literal" so that negative constants stay literals.
      ExprPtr inner = std::move(a.value());
      if (op.text == "-" && inner->kind == ExprKind::IntLit) {
        inner->ival = -inner->ival;
        inner->loc = loc(op.off);
        return inner;
      }
      if (op.text == "-" && inner->kind == ExprKind::FloatLit) {
        inner->fval = -inner->fval;
        inner->loc = loc(op.off);
        return inner;
      }
      auto e = std::make_unique<Expr>();
      e->kind = ExprKind::Unary;
      e->uop = op.text == "-" ? UnOp::Neg : UnOp::Not;
      e->loc = loc(op.off);
      e->args.push_back(std::move(inner));
      SB_TRY(grow(*e, op.off));
      return e;
    }
    return primary();
  }

  Result<std::vector<ExprPtr>> arg_list(const char* close, const std::string& what) {
    std::vector<ExprPtr> args;
    if (!is_sym(close)) {
      while (true) {
        auto a = expr(0);
        if (!a.ok()) return a.error();
        args.push_back(std::move(a.value()));
        if (is_sym(",")) {
          ++pos_;
          continue;
        }
        break;
      }
    }
    SB_TRY(expect(close, "to close " + what));
    return args;
  }

  Result<ExprPtr> primary() {
    const Token t = peek();
    auto e = std::make_unique<Expr>();
    e->loc = loc(t.off);
    switch (t.kind) {
      case Tok::Int:
        ++pos_;
        e->kind = ExprKind::IntLit;
        e->ival = t.ival;
        return e;
      case Tok::Float:
        ++pos_;
        e->kind = ExprKind::FloatLit;
        e->fval = t.fval;
        return e;
      case Tok::Ident:
        break;
      case Tok::Sym:
        if (t.text == "(") {
          ++pos_;
          auto inner = expr(0);
          if (!inner.ok()) return inner;
          SB_TRY(expect(")", "to close the parenthesis"));
          return inner;
        }
        return err(t.off, "expected an expression, found " + describe(t));
      default:
        return err(t.off, "expected an expression, found " + describe(t));
    }
    ++pos_;
    e->name = t.text;
    if (is_sym("[")) {
      ++pos_;
      e->kind = ExprKind::Read;
      auto args = arg_list("]", "the subscript of '" + t.text + "'");
      if (!args.ok()) return args.error();
      if (args.value().empty()) return err(t.off, "empty subscript on '" + t.text + "'");
      e->args = std::move(args.value());
      SB_TRY(grow(*e, t.off));
      return e;
    }
    if (!is_sym("(")) {
      e->kind = ExprKind::Name;
      return e;
    }
    ++pos_;
    bool reduction_form =
        peek().kind == Tok::Ident && peek(1).kind == Tok::Ident && peek(1).text == "in";
    if (reduction_form) {
      const ReduceOp* op = nullptr;
      for (const ReduceOp& r : reduce_ops())
        if (t.text == reduce_name(r)) op = &r;
      if (!op)
        return err(t.off, "'" + t.text +
                              "' is not a reduction (expected sum, max, min, prod, argmax or "
                              "argmin)");
      e->kind = ExprKind::Reduce;
      e->rop = *op;
      e->name = peek().text;
      e->loc = loc(peek().off);  // errors about the range point at its variable
      pos_ += 2;
      auto lo = expr(0);
      if (!lo.ok()) return lo;
      SB_TRY(expect("..", "between the bounds of the range of '" + e->name + "'"));
      auto hi = expr(0);
      if (!hi.ok()) return hi;
      SB_TRY(expect(":", "after the range of '" + e->name + "'"));
      auto body = expr(0);
      if (!body.ok()) return body;
      SB_TRY(expect(")", "to close the reduction"));
      e->args.push_back(std::move(body.value()));
      e->args.push_back(std::move(lo.value()));
      e->args.push_back(std::move(hi.value()));
      SB_TRY(grow(*e, t.off));
      return e;
    }
    e->kind = ExprKind::Call;
    auto args = arg_list(")", "the arguments of '" + t.text + "'");
    if (!args.ok()) return args.error();
    e->args = std::move(args.value());
    SB_TRY(grow(*e, t.off));
    return e;
  }

  const std::string& text_;
  const TextMap& map_;
  std::vector<size_t> line_offs_;  // where each line of text_ starts
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::unordered_map<const Expr*, int> heights_;  // height of each inner node built so far
};

}  // namespace

Result<std::vector<ParsedStatement>> parse_statements(const std::string& text, const TextMap& map) {
  Parser p(text, map);
  SB_TRY(p.lex());
  return p.statements();
}

Result<ExprPtr> parse_expression(const std::string& text, const TextMap& map) {
  Parser p(text, map);
  SB_TRY(p.lex());
  return p.whole_expression();
}

}  // namespace sb
