// Results exported for analysis tools: one row per repetition, tidy columns.
#pragma once

#include <string>
#include <vector>

#include "results/history.h"

namespace sb {

// The CSV header and rows of `runs` (RFC 4180: fields holding ',', '"' or a line break are
// quoted, quotes doubled). One row per stored repetition of every measured case, in the runs'
// order, with the columns of kCsvColumns. Failed and skipped cases have no repetitions and no rows.
inline const std::vector<std::string> kCsvColumns = {
    "run",       "date",          "host",       "git_commit", "kernel",  "backend",
    "variant",   "strategy",      "sizes",      "bytes_per_call", "flops_per_call",
    "repetition", "repetitions",  "seconds",    "gbps",       "gflops",  "bound"};
std::string results_csv(const std::vector<StoredRun>& runs);

// One CSV field, quoted when it needs to be.
std::string csv_field(const std::string& text);

}  // namespace sb
