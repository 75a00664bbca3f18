// An indenting line writer for Mojo's Python-style blocks (4 spaces a level), shared by the Mojo
// printer of the checked IR (emit_mojo.cpp) and of the loop IR (print_loops.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "support/diag.h"

namespace sb {

class PyWriter {
 public:
  explicit PyWriter(int indent = 0) : indent_(indent) {}
  void line(const std::string& text) {
    if (!text.empty()) out_.append(static_cast<size_t>(indent_) * 4, ' ').append(text);
    out_ += '\n';
  }
  // Writes `text` (ending in ':') and indents what follows.
  void open(const std::string& text) {
    line(text);
    ++indent_;
  }
  void dedent() {
    SB_ASSERT(indent_ > 0, "unbalanced PyWriter::dedent");
    --indent_;
  }
  int columns() const { return indent_ * 4; }
  size_t size() const { return out_.size(); }
  const std::string& str() const { return out_; }

 private:
  int indent_;
  std::string out_;
};

}  // namespace sb
