#include "results/history_format.h"

#include <cstdio>

#include "cli/console.h"
#include "support/safe_io.h"

namespace sb {

namespace {

std::string fmt_time(double s) {
  if (s <= 0) return "-";
  char buf[32];
  if (s < 1e-6)
    std::snprintf(buf, sizeof buf, "%.1f ns", s * 1e9);
  else if (s < 1e-3)
    std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  else if (s < 1)
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  return buf;
}

std::string fmt_change(double ratio) {
  if (ratio <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", (ratio - 1) * 100);
  return buf;
}

std::string fmt_p(const std::optional<double>& p) {
  if (!p) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, *p < 1e-4 ? "%.1e" : "%.4f", *p);
  return buf;
}

std::string reps(const CompareRow& r) {
  return std::to_string(r.base_n) + "/" + std::to_string(r.new_n);
}

std::string counts(const Comparison& c) {
  std::string s = std::to_string(c.slower) + " slower, " + std::to_string(c.faster) + " faster, " +
                  std::to_string(c.same) + " same, " + std::to_string(c.added) + " new, " +
                  std::to_string(c.missing) + " missing, " + std::to_string(c.failed) + " failed";
  if (c.noisy > 0) s += " (" + std::to_string(c.noisy) + " noisy)";
  if (c.geomean_ratio) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "; geometric mean of new/base time %.3f", *c.geomean_ratio);
    s += buf;
  }
  return s;
}

std::string criteria(const Comparison& c) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "a change counts when the two-sided Mann-Whitney U test over repetitions gives "
                "p < %g and the median time changes by at least %g%%",
                c.options.alpha, c.options.min_effect * 100);
  return buf;
}

// The verdict, marked when it rests on noisy repetitions.
std::string verdict_text(const CompareRow& r) {
  return std::string(verdict_name(r.verdict)) + (r.noisy ? " (noisy)" : "");
}

}  // namespace

std::string format_comparison(const Comparison& c) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : c.rows) {
    std::string note = r.note.substr(0, r.note.find('\n'));
    if (note.size() > 60) note = note.substr(0, 57) + "...";
    rows.push_back({r.name, fmt_time(r.base_seconds), fmt_time(r.new_seconds), fmt_change(r.ratio),
                    fmt_p(r.p), reps(r), verdict_text(r), note});
  }
  // Names and notes come from the results files: format_table escapes their control bytes, and
  // the lines around it do the same.
  std::string out =
      "base: " + escape_control(c.base_path) + "\nnew:  " + escape_control(c.new_path) + "\n\n";
  out += format_table({"benchmark", "base", "new", "change", "p", "reps", "verdict", "note"}, rows);
  out += "\n" + counts(c) + "\n(" + criteria(c) + ")\n";
  for (const auto& w : c.warnings) out += "warning: " + escape_control(w) + "\n";
  return out;
}

std::string format_comparison_markdown(const Comparison& c) {
  std::string out = "# Benchmark comparison\n\n";
  out += "- base: `" + md_cell(c.base_path) + "`\n- new: `" + md_cell(c.new_path) + "`\n";
  out += "- " + counts(c) + "\n- " + criteria(c) + "\n";
  for (const auto& w : c.warnings) out += "- **warning**: " + md_cell(w) + "\n";
  out += "\n| benchmark | base | new | change | p | reps | verdict | note |\n";
  out += "|---|---:|---:|---:|---:|---:|---|---|\n";
  for (const auto& r : c.rows) {
    std::string verdict = verdict_name(r.verdict);
    if (r.verdict == Verdict::Slower || r.verdict == Verdict::Failed)
      verdict = "**" + verdict + "**";
    if (r.noisy) verdict += " (noisy)";
    out += "| " + md_cell(r.name) + " | " + fmt_time(r.base_seconds) + " | " +
           fmt_time(r.new_seconds) + " | " + fmt_change(r.ratio) + " | " + fmt_p(r.p) + " | " +
           reps(r) + " | " + verdict + " | " + md_cell(r.note) + " |\n";
  }
  return out;
}

}  // namespace sb
