// Text reporters for `specbench compare`: a comparison (history.h) in, text out.
#pragma once

#include <string>

#include "results/history.h"

namespace sb {

// The terminal table: one row per benchmark (name, base and new median time, change, p, verdict,
// note), then the counts, the geometric mean of new/base and the warnings.
std::string format_comparison(const Comparison& c);

// The same as a Markdown document.
std::string format_comparison_markdown(const Comparison& c);

}  // namespace sb
