#include "cli/console.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "run/runtime.h"
#include "support/safe_io.h"

namespace sb {

namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string duration(double s) {
  char buf[32];
  if (s >= 1)
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else if (s >= 1e-6)
    std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3g ns", s * 1e9);
  return buf;
}

std::string first_line(const std::string& s) {
  size_t e = s.find('\n');
  return e == std::string::npos ? s : s.substr(0, e);
}

size_t display_width(const std::string& s) {
  // UTF-8: count code points, not bytes.
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& raw_rows) {
  // Cells may quote results files and compiler output: control bytes are shown escaped, so that
  // no cell can drive the terminal (and widths are those of what is shown).
  std::vector<std::vector<std::string>> rows;
  rows.reserve(raw_rows.size());
  for (const auto& r : raw_rows) {
    std::vector<std::string> cells;
    cells.reserve(r.size());
    for (const auto& c : r) cells.push_back(escape_control(c));
    rows.push_back(std::move(cells));
  }
  std::vector<size_t> w(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) w[i] = display_width(header[i]);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size() && i < w.size(); ++i)
      w[i] = std::max(w[i], display_width(r[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < w.size(); ++i) {
      std::string c = i < cells.size() ? cells[i] : "";
      s += c;
      if (i + 1 < w.size()) s += std::string(w[i] - display_width(c) + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(header);
  std::vector<std::string> rule;
  for (size_t x : w) rule.push_back(std::string(x, '-'));
  out += line(rule);
  for (const auto& r : rows) out += line(r);
  return out;
}

std::string format_verify_table(const std::vector<VerifyRecord>& records) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : records) {
    std::string note = r.outcome == Outcome::Pass ? "" : first_line(r.detail);
    bool measured = r.outcome != Outcome::Skipped && r.sizes != "-";
    rows.push_back({r.kernel, r.backend, r.variant, r.sizes, r.inputs, outcome_name(r.outcome),
                    measured ? sci(r.max_abs_err) : "-", note});
  }
  return format_table(
      {"kernel", "backend", "variant", "size", "inputs", "result", "max abs err", "note"}, rows);
}

std::string format_verify_summary(const std::vector<VerifyRecord>& records) {
  struct Agg {
    std::string kernel, backend, variant;
    int pass = 0, fail = 0, skipped = 0;
    double max_abs = 0;
    std::string note;
  };
  std::vector<Agg> aggs;
  std::map<std::string, size_t> index;
  for (const auto& r : records) {
    std::string key = r.kernel + "/" + r.backend + "/" + r.variant;
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, aggs.size()).first;
      aggs.push_back(Agg{r.kernel, r.backend, r.variant, 0, 0, 0, 0, ""});
    }
    Agg& a = aggs[it->second];
    if (r.outcome == Outcome::Pass) ++a.pass;
    if (r.outcome == Outcome::Fail) ++a.fail;
    if (r.outcome == Outcome::Skipped) ++a.skipped;
    a.max_abs = std::max(a.max_abs, r.max_abs_err);
    if (r.outcome != Outcome::Pass && a.note.empty()) a.note = first_line(r.detail);
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : aggs) {
    int run = a.pass + a.fail;
    std::string result = a.fail ? "FAIL" : (a.skipped ? "skipped" : "pass");
    rows.push_back({a.kernel, a.backend, a.variant,
                    run ? std::to_string(a.pass) + "/" + std::to_string(run) : "-", result,
                    run ? sci(a.max_abs) : "-", a.note});
  }
  return format_table({"kernel", "backend", "variant", "checks", "result", "max abs err", "note"},
                      rows);
}

std::string format_verify_failures(const std::vector<VerifyRecord>& records, size_t limit) {
  std::string out;
  size_t shown = 0, total = 0;
  for (const auto& r : records) {
    if (r.outcome != Outcome::Fail) continue;
    ++total;
    if (shown >= limit) continue;
    ++shown;
    out += "FAIL " + r.kernel + "/" + r.backend + "/" + r.variant;
    if (r.sizes != "-") out += " " + r.sizes + " (" + r.inputs + ")";
    out += ":\n";
    std::string d = r.detail;
    while (!d.empty() && d.back() == '\n') d.pop_back();
    size_t pos = 0;
    while (pos <= d.size()) {
      size_t e = d.find('\n', pos);
      out += "  " + d.substr(pos, e == std::string::npos ? std::string::npos : e - pos) + "\n";
      if (e == std::string::npos) break;
      pos = e + 1;
    }
  }
  if (total > shown) out += "... and " + std::to_string(total - shown) + " more failed checks\n";
  return out;
}

std::string format_verify_totals(const std::vector<VerifyRecord>& records) {
  int pass = 0, fail = 0, skipped = 0;
  for (const auto& r : records) {
    pass += r.outcome == Outcome::Pass;
    fail += r.outcome == Outcome::Fail;
    skipped += r.outcome == Outcome::Skipped;
  }
  return std::to_string(records.size()) + " checks: " + std::to_string(pass) + " passed, " +
         std::to_string(fail) + " failed, " + std::to_string(skipped) + " skipped";
}

std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|')
      o += "\\|";
    else if (c == '\n' || c == '\r')
      o += ' ';
    else
      o += c;
  }
  return o;
}

std::string format_traffic_table(const std::vector<VerifyRecord>& records) {
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, uint64_t> naive;  // kernel/backend -> sectors of its first variant
  for (const VerifyRecord& r : records) {
    if (!r.traffic) continue;
    const MemoryTraffic& t = *r.traffic;
    const std::string key = r.kernel + "/" + r.backend;
    naive.emplace(key, t.sectors);
    char ratio[32] = "-", vs[32] = "-";
    if (r.spec_bytes > 0)
      std::snprintf(ratio, sizeof ratio, "%.2f",
                    32.0 * static_cast<double>(t.sectors) / static_cast<double>(r.spec_bytes));
    if (t.sectors > 0)
      std::snprintf(vs, sizeof vs, "%.2f×",
                    static_cast<double>(naive[key]) / static_cast<double>(t.sectors));
    rows.push_back({r.kernel, r.backend, r.variant, r.sizes, std::to_string(t.requests),
                    std::to_string(t.sectors), std::to_string(r.spec_bytes / 32), ratio, vs});
  }
  if (rows.empty()) return "";
  return format_table({"kernel", "backend", "variant", "sizes", "requests", "sectors",
                       "spec sectors", "sectors/spec", "× vs naive"},
                      rows) +
         "Global-memory traffic counted by the simulator at the largest verify size: requests = "
         "warp memory instructions, sectors = 32-byte transactions they cause (a profiler's "
         "gld/gst transactions, before any cache), spec sectors = the bytes the spec implies / 32; "
         "× vs naive = the first variant's sectors / this variant's (> 1: fewer transactions).\n";
}

namespace {

// "75% (registers)", "<= 100% (warps)" for an upper bound, "0% (shared): <why>" for a launch that
// cannot run, "unknown".
std::string occupancy_cell(const KernelFactRow& r) {
  if (!r.occupancy) return "unknown";
  const Occupancy& o = *r.occupancy;
  char pct[32];
  const double p = 100 * o.fraction;
  std::snprintf(pct, sizeof pct, p == static_cast<int>(p) ? "%.0f%%" : "%.1f%%", p);
  std::string s = (r.dynamic_shared ? "≤ " : "") + std::string(pct) + " (" + o.limited_by + ")";
  if (!o.valid) s += ": " + o.invalid;
  return s;
}

}  // namespace

std::string format_kernel_facts(const std::vector<KernelFactRow>& rows) {
  if (rows.empty()) return "";
  std::vector<std::vector<std::string>> cells;
  for (const KernelFactRow& r : rows) {
    const KernelFacts& f = r.facts;
    std::string note = r.block_threads ? "" : r.block_unknown;
    if (r.block_threads && r.dynamic_shared) note = "plus dynamic shared memory";
    if (r.block_threads && !r.occupancy) note = r.occupancy_unknown;
    cells.push_back({r.kernel, r.backend, r.variant.empty() ? "-" : r.variant, r.function,
                     "sm_" + std::to_string(f.arch), std::to_string(f.registers),
                     std::to_string(f.shared_bytes), std::to_string(f.stack_bytes),
                     std::to_string(f.spill_store_bytes) + "/" + std::to_string(f.spill_load_bytes),
                     r.block_threads ? std::to_string(r.block_threads) : "unknown",
                     occupancy_cell(r), note});
  }
  return format_table({"kernel", "backend", "variant", "function", "arch", "regs", "smem B",
                       "stack B", "spill st/ld B", "block", "occupancy (limit)", "note"},
                      cells) +
         "From ptxas (nvcc -Xptxas -v; ptxas -v on Mojo's PTX for mojo_gpu): registers per "
         "thread, static shared memory per block, the stack frame and the bytes spilled per "
         "thread. block = the threads per block the "
         "generated launcher uses; occupancy = resident warps per SM over the most it holds at "
         "that block size (the CUDA occupancy calculator's rules), with what limits it; ≤ where "
         "the launch adds dynamic shared memory, which the sizes decide.\n";
}

std::string format_kernel_facts_line(const std::vector<KernelFactRow>& rows) {
  if (rows.empty()) return "";
  size_t spills = 0, low = 0, unknown = 0;
  for (const KernelFactRow& r : rows) {
    spills += r.facts.spill_store_bytes > 0 || r.facts.spill_load_bytes > 0;
    if (!r.occupancy)
      ++unknown;
    else
      low += r.occupancy->fraction < 0.5;
  }
  return "kernel facts (ptxas): " + std::to_string(rows.size()) +
         " kernel x architecture rows, " + std::to_string(spills) + " with spills, " +
         std::to_string(low) + " below 50% occupancy, " + std::to_string(unknown) +
         " with occupancy unknown (`specbench build --facts` prints them)\n";
}

namespace {

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, f * 100 < 9.95 ? "%.1f%%" : "%.0f%%", f * 100);
  return buf;
}

std::string times(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x < 9.995 ? "%.2f×" : (x < 99.95 ? "%.1f×" : "%.0f×"), x);
  return buf;
}

std::string rate(double v, const std::string& unit) {
  if (!(v > 0)) return "-";
  return fixed(v, v < 10 ? 2 : (v < 1000 ? 1 : 0)) + " " + unit;
}

const char* kSummaryNote =
    "naive = the first variant the spec lists for that backend; × vs naive = naive time / best "
    "time; × vs vendor = time of the fastest vendor_* variant on the same kind of device / best "
    "time (> 1: faster); % of limit = the bound's rate over the probe that bounds it (memory: "
    "the best of the triad, non-temporal triad and non-temporal copy probes; compute: the better "
    "of sgemm and the FMA loop).";

const char* kCacheNote =
    "Above 100% of a memory limit: the working set fits in a cache, while the limit is main "
    "memory's (the bandwidth probes run on arrays far beyond the last-level cache).";

bool above_memory_limit(const std::vector<SummaryRow>& summary) {
  for (const auto& r : summary) {
    if (r.roofline.bound == Bound::Memory && r.fraction && *r.fraction > 1) return true;
  }
  return false;
}

std::vector<std::string> summary_header() {
  return {"kernel", "size",       "backend",    "best variant", "time", "bound",
          "rate",   "% of limit", "× vs naive", "× vs vendor",  "flags"};
}

// "noisy", "SUSPECT" or both: the summary row's figures are not to be trusted as they stand.
std::string row_flags(bool noisy, const std::string& suspect) {
  std::string f = noisy ? "noisy" : "";
  if (!suspect.empty()) f += (f.empty() ? "" : ", ") + std::string("SUSPECT");
  return f;
}

std::vector<std::vector<std::string>> summary_rows(const std::vector<SummaryRow>& summary) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : summary) {
    rows.push_back({r.kernel, r.sizes, r.backend, r.variant, duration(r.seconds),
                    r.roofline.bound == Bound::Unknown ? "-" : bound_name(r.roofline.bound),
                    rate(r.rate, r.unit), r.fraction ? percent(*r.fraction) : "-",
                    r.vs_naive ? times(*r.vs_naive) : "-", r.vs_vendor ? times(*r.vs_vendor) : "-",
                    row_flags(r.noisy, r.suspect)});
  }
  return rows;
}

std::vector<std::vector<std::string>> failed_rows(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : records) {
    if (r.status == BenchStatus::Failed)
      rows.push_back({r.kernel, r.backend, r.variant, r.sizes, first_line(r.reason)});
  }
  return rows;
}

// Skipped cases share their reason per kernel/backend; one row each.
std::vector<std::vector<std::string>> skipped_rows(const std::vector<BenchRecord>& records) {
  std::vector<std::vector<std::string>> rows;
  std::set<std::string> seen;
  for (const auto& r : records) {
    if (r.status != BenchStatus::Skipped) continue;
    if (!seen.insert(r.kernel + "/" + r.backend).second) continue;
    rows.push_back({r.kernel, r.backend, "skipped: " + first_line(r.reason)});
  }
  return rows;
}

// Every measured case whose repetitions are noisy, and every suspect rate, one row each (at most
// `limit` rows of each, then a count of the rest).
std::vector<std::vector<std::string>> noisy_rows(const std::vector<BenchRecord>& records,
                                                 size_t limit, size_t* total) {
  std::vector<std::vector<std::string>> rows;
  *total = 0;
  for (const auto& r : records) {
    if (r.status != BenchStatus::Measured || !r.spread.noisy) continue;
    if (++*total <= limit)
      rows.push_back(
          {r.kernel + "/" + r.backend + "/" + r.variant, r.sizes, describe_noise(r.spread)});
  }
  return rows;
}

std::vector<std::vector<std::string>> suspect_rows(const std::vector<BenchRecord>& records,
                                                   size_t limit, size_t* total) {
  std::vector<std::vector<std::string>> rows;
  *total = 0;
  for (const auto& r : records) {
    if (r.status != BenchStatus::Measured || r.suspect.empty()) continue;
    if (++*total <= limit)
      rows.push_back({r.kernel + "/" + r.backend + "/" + r.variant, r.sizes, r.suspect});
  }
  return rows;
}

size_t measured_count(const std::vector<BenchRecord>& records) {
  size_t n = 0;
  for (const auto& r : records) n += r.status == BenchStatus::Measured;
  return n;
}

// The machine's load while timing, one line; "" when nothing is known.
std::string load_line(const MachineLoad& m) {
  if (!m.start.ok) return "";
  std::string s = "machine load: load average " + fixed(m.start.load[0], 2) + " at the start";
  if (m.end.ok) s += ", " + fixed(m.end.load[0], 2) + " at the end";
  s += ", on " + std::to_string(m.cores) + " cores";
  if (m.end.ok)
    s += "; other processes took " + fixed(m.other_fraction * 100, 0) +
         "% of the CPU time while timing";
  if (m.loaded_at_start || m.contended)
    s += " (" + std::string(m.contended ? "contended" : "loaded") +
         ": expect noisy figures; time again on a quiet machine)";
  return s;
}

constexpr size_t kFlagRows = 40;
constexpr const char* kNoisyNote =
    "noisy = the median's distribution-free confidence interval is wider than ±5%, a repetition "
    "is more than 1.5x from the median, or the repetitions form two clusters (results: each "
    "case's \"noise\").";
constexpr const char* kSuspectNote =
    "SUSPECT = above 110% of its limit with a working set larger than the last-level cache: the "
    "figure cannot be right (results: each case's \"suspect\").";

// What moved, for a device whose limit probes changed during the run (DeviceLimits::unsteady).
std::string unsteady_note(const DeviceLimits& d) {
  std::string s = "UNSTEADY:";
  auto one = [&](const std::string& probe, const std::vector<double>& runs, double drift,
                 const char* unit) {
    if (drift <= kProbeDriftLimit) return;
    s += " " + probe + " read " + rate(runs.front(), unit) + " at the start and " +
         rate(runs.back(), unit) + " at the end (" + fixed(drift * 100, 0) + "% apart);";
  };
  one(d.bandwidth_probe, d.bandwidth_runs, d.bandwidth_drift(), "GB/s");
  one(d.compute_probe, d.compute_runs, d.compute_drift(), "GFLOP/s");
  return s +
         " the machine changed during the run, so each % of limit is uncertain by as much "
         "(steady: within " +
         fixed(kProbeDriftLimit * 100, 0) + "%)";
}

// Under the summary table, when a device's limits moved during the run; "" when they held.
std::string unsteady_line(const MachineLimits& limits) {
  std::string devices;
  for (const auto& [name, d] :
       {std::pair<const char*, const DeviceLimits*>{"cpu", &limits.cpu}, {"gpu", &limits.gpu}})
    if (d->unsteady()) devices += std::string(devices.empty() ? "" : " and ") + name;
  if (devices.empty()) return "";
  return "UNSTEADY: the " + devices +
         " limit probes moved during the run (see the limits): every % of limit above is "
         "uncertain by as much. Time again on a quiet machine.";
}

std::string limits_line(const std::string& device, const DeviceLimits& d) {
  std::string s = device + ": ";
  if (d.bandwidth_gbps <= 0 && d.compute_gflops <= 0) return s + "none (" + d.missing + ")";
  s += d.bandwidth_gbps > 0 ? rate(d.bandwidth_gbps, "GB/s") + " (" + d.bandwidth_probe + ")"
                            : "bandwidth unknown";
  s += ", ";
  s += d.compute_gflops > 0 ? rate(d.compute_gflops, "GFLOP/s") + " (" + d.compute_probe + ")"
                            : "compute unknown";
  if (d.balance() > 0) s += ", balance " + fixed(d.balance(), 1) + " flop/byte";
  if (d.read_gbps > 0) s += "; loads only " + rate(d.read_gbps, "GB/s") + " (read, not a limit)";
  if (d.unsteady()) s += "; " + unsteady_note(d);
  return s;
}

std::string md_table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows) {
  std::string out = "|";
  for (const auto& h : header) out += " " + md_cell(h) + " |";
  out += "\n|";
  for (size_t i = 0; i < header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : rows) {
    out += "|";
    for (size_t i = 0; i < header.size(); ++i)
      out += " " + md_cell(i < r.size() ? r[i] : "") + " |";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string format_probes(const ProbeResults& probes, const MachineLimits& limits) {
  std::string out;
  if (!probes.ran) {
    out += "machine probes: not run (" + probes.reason + ")\n";
  } else {
    out += "machine probes (" + fixed(probes.seconds, 1) + "s):\n";
    for (const auto& p : probes.probes)
      out += "  " + p.device + " " + p.name + ": " + describe_probe(p) + "\n";
  }
  out += "limits: " + limits_line("cpu", limits.cpu) + "\n";
  out += "        " + limits_line("gpu", limits.gpu) + "\n";
  return out;
}

namespace {

constexpr const char* kLanguageNote =
    "ratio = C++ time / other time (> 1: the other language is faster); '~' marks a difference "
    "within the runs' noise; '(noisy)' that either side's repetitions are noisy. matched = the "
    "same schedule in both languages.";

std::vector<std::vector<std::string>> language_rows(const std::vector<LanguageRow>& rows) {
  std::vector<std::vector<std::string>> out;
  for (const LanguageRow& r : rows) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx%s%s", r.ratio, r.within_noise ? " ~" : "",
                  r.noisy ? " (noisy)" : "");
    out.push_back({r.kernel, r.sizes, r.kind, r.cpp_variant, r.other_variant,
                   duration(r.cpp_seconds), duration(r.other_seconds), ratio});
  }
  return out;
}

const std::vector<std::string> kLanguageHeader = {"kernel", "size",     "kind",       "C++",
                                                  "other",  "C++ time", "other time", "ratio"};

}  // namespace

std::string format_bench_summary(const BenchReport& report) {
  std::string out = format_probes(report.probes, report.limits);
  if (std::string l = load_line(report.load); !l.empty()) out += l + "\n";
  out += "\n";
  auto rows = summary_rows(report.summary);
  if (!rows.empty()) {
    out += format_table(summary_header(), rows);
    out += std::string(kSummaryNote) + "\n";
    if (above_memory_limit(report.summary)) out += std::string(kCacheNote) + "\n";
    if (std::string u = unsteady_line(report.limits); !u.empty()) out += u + "\n";
  } else {
    out += "no benchmark was measured\n";
  }
  size_t noisy = 0, suspect = 0;
  auto nrows = noisy_rows(report.records, kFlagRows, &noisy);
  if (noisy > 0) {
    out += "\nnoisy: " + std::to_string(noisy) + " of " +
           std::to_string(measured_count(report.records)) + " measured cases\n";
    out += format_table({"case", "size", "why"}, nrows);
    if (noisy > nrows.size())
      out += "... and " + std::to_string(noisy - nrows.size()) + " more (see the results file)\n";
    out += std::string(kNoisyNote) + "\n";
  }
  auto srows = suspect_rows(report.records, kFlagRows, &suspect);
  if (suspect > 0) {
    out += "\nSUSPECT: " + std::to_string(suspect) + " figure(s) that cannot be right\n";
    out += format_table({"case", "size", "why"}, srows);
    if (suspect > srows.size())
      out += "... and " + std::to_string(suspect - srows.size()) + " more (see the results file)\n";
    out += std::string(kSuspectNote) + "\n";
  }
  if (!report.languages.empty()) {
    out += "\nC++ against other languages:\n";
    out += format_table(kLanguageHeader, language_rows(report.languages));
    out += std::string(kLanguageNote) + "\n";
  }
  auto failed = failed_rows(report.records);
  if (!failed.empty()) {
    out += "\nnot timed (failed):\n";
    out += format_table({"kernel", "backend", "variant", "size", "reason"}, failed);
  }
  auto skipped = skipped_rows(report.records);
  if (!skipped.empty()) {
    out += "\nskipped:\n";
    out += format_table({"kernel", "backend", "reason"}, skipped);
  }
  return out;
}

std::string format_bench_summary_markdown(const BenchReport& report,
                                          const std::string& results_file) {
  const nlohmann::json& ctx =
      report.doc.contains("context") ? report.doc["context"] : nlohmann::json::object();
  auto field = [&ctx](const char* k) {
    auto it = ctx.find(k);
    return it != ctx.end() && it->is_string() ? it->get<std::string>() : std::string("?");
  };
  std::string out = "# specbench summary\n\n";
  out += "- date: " + field("date") + "\n";
  out += "- host: " + field("host_name") + " (" + field("cpu_model") + "; gpu: " + field("gpu") +
         ")\n";
  if (field("blas_core") != "?") out += "- OpenBLAS core: " + field("blas_core") + "\n";
  out += "- commit: " + field("git_commit") +
         (field("git_modified") == "true" ? " (with uncommitted changes)" : "") + "\n";
  out += "- results: `" + results_file + "`\n\n";

  out += "## Limits\n\n";
  if (!report.probes.ran) {
    out += "Machine probes not run (" + report.probes.reason + ").\n\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : report.probes.probes)
      rows.push_back({p.device, p.name, p.ok ? rate(p.rate, p.unit) : "-",
                      p.ok ? p.detail : "skipped: " + p.reason});
    out += md_table({"device", "probe", "rate", "detail"}, rows) + "\n";
  }
  out += "- " + limits_line("cpu", report.limits.cpu) + "\n";
  out += "- " + limits_line("gpu", report.limits.gpu) + "\n\n";

  out += "## Best variant per kernel, backend and size\n\n";
  auto rows = summary_rows(report.summary);
  if (rows.empty())
    out += "No benchmark was measured.\n";
  else
    out += md_table(summary_header(), rows) + "\n" + kSummaryNote + "\n";
  if (above_memory_limit(report.summary)) out += std::string("\n") + kCacheNote + "\n";
  if (std::string u = unsteady_line(report.limits); !u.empty()) out += "\n**" + u + "**\n";
  if (std::string l = load_line(report.load); !l.empty()) out += "\n" + l + "\n";
  size_t noisy = 0, suspect = 0;
  auto nrows = noisy_rows(report.records, kFlagRows, &noisy);
  if (noisy > 0) {
    out += "\n## Noisy cases\n\n" + std::to_string(noisy) + " of " +
           std::to_string(measured_count(report.records)) + " measured cases. " + kNoisyNote +
           "\n\n" + md_table({"case", "size", "why"}, nrows);
    if (noisy > nrows.size())
      out += "\n... and " + std::to_string(noisy - nrows.size()) + " more (see the results file)\n";
  }
  auto srows = suspect_rows(report.records, kFlagRows, &suspect);
  if (suspect > 0) {
    out += "\n## Suspect figures\n\n" + std::string(kSuspectNote) + "\n\n" +
           md_table({"case", "size", "why"}, srows);
    if (suspect > srows.size())
      out +=
          "\n... and " + std::to_string(suspect - srows.size()) + " more (see the results file)\n";
  }
  if (!report.languages.empty()) {
    out += "\n## C++ against other languages\n\n";
    out += md_table(kLanguageHeader, language_rows(report.languages)) + "\n" + kLanguageNote + "\n";
  }
  auto failed = failed_rows(report.records);
  if (!failed.empty()) {
    out += "\n## Not timed (failed)\n\n";
    out += md_table({"kernel", "backend", "variant", "size", "reason"}, failed);
  }
  auto skipped = skipped_rows(report.records);
  if (!skipped.empty()) {
    out += "\n## Skipped\n\n";
    out += md_table({"kernel", "backend", "reason"}, skipped);
  }
  return out;
}

std::string format_spec_list(const std::vector<Spec>& specs) {
  std::vector<std::vector<std::string>> rows;
  for (const Spec& s : specs) {
    std::string sizes;
    for (const auto& p : s.sizes) sizes += (sizes.empty() ? "" : " ") + p.name;
    bool first = true;
    for (const auto& [backend, variants] : s.variants) {
      for (const Variant& v : variants) {
        std::string params;
        for (const auto& [k, val] : v.params)
          params += (params.empty() ? "" : " ") + k + "=" + std::to_string(val);
        rows.push_back(
            {first ? s.name : "", first ? sizes : "", backend, v.name, v.strategy, params});
        first = false;
      }
    }
    if (first) rows.push_back({s.name, sizes, "-", "-", "-", ""});
  }
  std::string out =
      format_table({"kernel", "sizes", "backend", "variant", "strategy", "params"}, rows);
  out += "\n";
  for (const Spec& s : specs) out += s.name + ": " + s.doc + "\n";
  return out;
}

std::string format_backends() {
  std::vector<std::vector<std::string>> rows;
  for (Runtime* rt : all_runtimes()) {
    const BackendRecord& b = rt->record();
    const Emitter* e = find_emitter(b.source);
    std::string file = e ? "." + e->extension() : "(no emitter)";
    if (e && b.source != b.name) file += " (" + b.source + "'s)";
    std::string role = b.timed ? "timed" : "verified, not timed";
    if (!b.baseline.empty()) role += "; against " + b.baseline;
    if (b.vendor) role += "; vendor reference";
    Availability a = rt->availability();
    rows.push_back({b.name, b.language, device_name(b.device), file, role,
                    a.ok ? "available (" + rt->device_name() + ")" : "skipped: " + a.reason});
  }
  return format_table({"backend", "language", "device", "file", "role", "status"}, rows);
}

std::string format_strategies() {
  std::vector<std::vector<std::string>> rows;
  for (const Emitter* e : all_emitters()) {
    for (const StrategyInfo& s : e->strategies()) {
      if (s.params.empty()) rows.push_back({e->backend(), s.name, s.algorithm, "-", "", "", s.doc});
      bool first = true;
      for (const ParamInfo& p : s.params) {
        std::string range = "[" + std::to_string(p.min) + ", " + std::to_string(p.max) + "]";
        if (p.power_of_two) range += " power of 2";
        std::string doc = first ? s.doc : "";
        if (!p.doc.empty()) doc += (doc.empty() ? "" : "; ") + p.name + ": " + p.doc;
        rows.push_back({first ? e->backend() : "", first ? s.name : "", first ? s.algorithm : "",
                        p.name, std::to_string(p.def), range, doc});
        first = false;
      }
    }
  }
  return format_table({"backend", "strategy", "algorithm", "param", "default", "range", "doc"},
                      rows);
}

}  // namespace sb
