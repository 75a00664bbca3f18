#include "diag.h"

#include <algorithm>
#include <fstream>

namespace sb {

std::string source_line(const std::string& file, int line) {
  if (file.empty() || line <= 0) return "";
  std::ifstream in(file);
  std::string text;
  for (int i = 1; std::getline(in, text); ++i) {
    if (i == line) return text;
  }
  return "";
}

Error make_error(const Loc& loc, std::string message) {
  return Error{loc, std::move(message), source_line(loc.file, loc.line)};
}

std::string format_error(const Error& e) {
  std::string out;
  if (!e.loc.file.empty()) {
    out += e.loc.file;
    if (e.loc.line > 0) {
      out.append(":").append(std::to_string(e.loc.line));
      if (e.loc.col > 0) out.append(":").append(std::to_string(e.loc.col));
    }
    out += ": ";
  }
  out += "error: " + e.message + "\n";
  if (!e.excerpt.empty()) {
    // Long lines are cut to a window around the column, marked with "...".
    constexpr int kWidth = 100;
    std::string shown = e.excerpt;
    int col = e.loc.col;
    if (static_cast<int>(shown.size()) > kWidth) {
      int start =
          std::max(0, std::min(col - 1 - kWidth / 2, static_cast<int>(shown.size()) - kWidth));
      shown = shown.substr(start, kWidth);
      if (start > 0) {
        shown.insert(0, "...");
        col = col - start + 3;
      }
      if (start + kWidth < static_cast<int>(e.excerpt.size())) shown += "...";
    }
    out.append("  ").append(shown).append("\n");
    if (col > 0) {
      std::string pad;
      // Keep tabs so the caret lines up under tab-indented excerpts.
      for (int i = 0; i < col - 1 && i < static_cast<int>(shown.size()); ++i)
        pad += shown[i] == '\t' ? '\t' : ' ';
      out.append("  ").append(pad).append("^\n");
    }
  }
  return out;
}

void assert_fail(const char* expr, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: internal error: assertion '%s' failed: %s\n", file, line, expr,
               msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace sb
