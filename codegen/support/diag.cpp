#include "support/diag.h"

#include <algorithm>

#include "support/safe_io.h"

namespace sb {

namespace {
// Excerpts are read only from files up to this size (16 MiB; a spec is at most 1 MiB).
constexpr size_t kMaxExcerptFileBytes = size_t{16} << 20;
}  // namespace

std::string source_line(const std::string& file, int line) {
  if (file.empty() || line <= 0) return "";
  // Through read_regular_file: a file that became a FIFO or a device, or grew huge, since it
  // was loaded gives no excerpt instead of a hang or an endless read.
  auto text = read_regular_file(file, kMaxExcerptFileBytes, "file");
  if (!text.ok()) return "";
  const std::string& t = text.value();
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    start = t.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  if (start >= t.size()) return "";
  size_t end = t.find('\n', start);
  return t.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

Error make_error(const Loc& loc, std::string message) {
  return Error{loc, std::move(message), source_line(loc.file, loc.line)};
}

std::string format_error(const Error& e) {
  // Names and lines from specs may hold control bytes: they are shown as \xNN (escape_control),
  // never sent to the terminal raw.
  std::string out;
  if (!e.loc.file.empty()) {
    out += escape_control(e.loc.file);
    if (e.loc.line > 0) {
      out.append(":").append(std::to_string(e.loc.line));
      if (e.loc.col > 0) out.append(":").append(std::to_string(e.loc.col));
    }
    out += ": ";
  }
  out += "error: " + escape_control(e.message) + "\n";
  if (!e.excerpt.empty()) {
    // Long lines are cut to a window around the column, marked with "...".
    constexpr int kWidth = 100;
    std::string shown = e.excerpt;
    int col = e.loc.col;
    std::string before, after;
    if (static_cast<int>(shown.size()) > kWidth) {
      int start =
          std::max(0, std::min(col - 1 - kWidth / 2, static_cast<int>(shown.size()) - kWidth));
      shown = shown.substr(start, kWidth);
      if (start > 0) {
        before = "...";
        col = col - start;
      }
      if (start + kWidth < static_cast<int>(e.excerpt.size())) after = "...";
    }
    std::string line = escape_control(shown);
    line.erase(std::remove(line.begin(), line.end(), '\n'), line.end());
    out.append("  ").append(before).append(line).append(after).append("\n");
    if (col > 0) {
      std::string pad(before.size(), ' ');
      // Keep tabs so the caret lines up under tab-indented excerpts; an escaped byte is 4 wide.
      for (int i = 0; i < col - 1 && i < static_cast<int>(shown.size()); ++i) {
        const char c = shown[i];
        pad += c == '\t' ? std::string("\t") : std::string(escape_control(std::string(1, c)).size(), ' ');
      }
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
