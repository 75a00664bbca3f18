#include "results/history.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "results/analysis.h"
#include "results/noise.h"
#include "report/report_charts.h"
#include "results/results.h"
#include "support/safe_io.h"
#include "results/stats.h"

namespace sb {

namespace {

using json = nlohmann::json;

// obj[key] when obj is an object and the value a string, else "" (for optional text).
std::string text_of(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

Error file_error(const std::string& path, const std::string& message) {
  return Error{Loc{path, 0, 0}, message, ""};
}

double to_seconds(double t, const std::string& unit) {
  if (unit == "ns") return t * 1e-9;
  if (unit == "us") return t * 1e-6;
  if (unit == "ms") return t * 1e-3;
  return t;
}


// The sizes object of a problem entry as "A=1,B=2" (the object's order, which is by name).
Result<std::string> sizes_text(const json& sizes, const std::string& where) {
  if (!sizes.is_object()) return Error{Loc{}, where + ": 'sizes' is not an object", ""};
  std::string out;
  for (const auto& [k, v] : sizes.items()) {
    if (!v.is_number_integer())
      return Error{Loc{}, where + ": size '" + escape_control(k) + "' is not an integer", ""};
    out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v.get<int64_t>());
  }
  return out;
}

// A checked field reader for one object of the document; the first problem is kept.
class Fields {
 public:
  Fields(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {}
  std::string str(const char* key, bool required) {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      if (required) fail(std::string("'") + key + "' is missing");
      return "";
    }
    if (!it->is_string()) {
      fail(std::string("'") + key + "' is not a string");
      return "";
    }
    return it->get<std::string>();
  }
  // Absent or null: `def`.
  double num(const char* key, double def, bool required = false) {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      if (required) fail(std::string("'") + key + "' is missing");
      return def;
    }
    if (!it->is_number()) {
      fail(std::string("'") + key + "' is not a number");
      return def;
    }
    return it->get<double>();
  }
  std::optional<double> opt_num(const char* key) {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) {
      fail(std::string("'") + key + "' is not a number");
      return std::nullopt;
    }
    return it->get<double>();
  }
  bool boolean(const char* key, bool def) {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return def;
    if (!it->is_boolean()) {
      fail(std::string("'") + key + "' is not true or false");
      return def;
    }
    return it->get<bool>();
  }
  void fail(const std::string& what) {
    if (error_.empty()) error_ = where_ + ": " + what;
  }
  const std::string& error() const { return error_; }

 private:
  const json& obj_;
  std::string where_;
  std::string error_;
};

Bound bound_from(const std::string& s) {
  if (s == "memory") return Bound::Memory;
  if (s == "compute") return Bound::Compute;
  return Bound::Unknown;
}

// The registered case name of an entry: run_name without Google Benchmark's "/real_time" or
// "/manual_time" suffix.
std::string case_name(const std::string& run_name) {
  for (const char* suffix : {"/real_time", "/manual_time"}) {
    std::string s = suffix;
    if (run_name.size() > s.size() &&
        run_name.compare(run_name.size() - s.size(), s.size(), s) == 0)
      return run_name.substr(0, run_name.size() - s.size());
  }
  return run_name;
}

// Reads the "benchmarks" array into one StoredBenchmark per case, in first-seen order.
Status read_benchmarks(const json& list, int version, StoredRun& run) {
  std::map<std::string, size_t> index;
  std::map<std::string, std::optional<double>> median_agg;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    std::string where = "benchmarks[" + std::to_string(i) + "]";
    if (!e.is_object()) return Error{Loc{}, where + " is not an object", ""};
    Fields f(e, where);
    std::string kernel = f.str("kernel", false);
    std::string name = f.str("name", true);
    std::string run_name = f.str("run_name", false);
    std::string run_type = f.str("run_type", false);
    std::string agg = f.str("aggregate_name", false);
    bool error = f.boolean("error_occurred", false);
    std::string unit = f.str("time_unit", false);
    if (unit.empty()) unit = "ns";
    if (unit != "ns" && unit != "us" && unit != "ms" && unit != "s")
      f.fail("'time_unit' is '" + escape_control(unit) + "', not ns, us, ms or s");
    double real_time = f.num("real_time", 0, /*required=*/!error);
    if (!error && !(std::isfinite(real_time) && real_time >= 0))
      f.fail("'real_time' is not a finite non-negative number");
    if (!f.error().empty()) return Error{Loc{}, f.error(), ""};
    if (kernel.empty()) continue;  // not a specbench case (kept in the file, not compared)
    std::string backend = f.str("backend", true);
    std::string variant = f.str("variant", true);
    if (!f.error().empty()) return Error{Loc{}, f.error(), ""};
    std::string cname = case_name(run_name.empty() ? name : run_name);
    // The size text in spec order is the last component of the case name.
    size_t slash = cname.rfind('/');
    std::string sizes = slash == std::string::npos ? "" : cname.substr(slash + 1);

    auto it = index.find(cname);
    if (it == index.end()) {
      it = index.emplace(cname, run.benchmarks.size()).first;
      StoredBenchmark b;
      b.name = cname;
      b.key = match_key(kernel, backend, variant, sizes);
      BenchRecord& r = b.record;
      r.kernel = kernel;
      r.backend = backend;
      r.variant = variant;
      r.sizes = sizes;
      r.status = BenchStatus::Measured;
      r.verified = f.boolean("verified", true);
      r.max_error = f.num("max_error", 0);
      r.strategy = f.str("strategy", false);
      r.naive_variant = f.str("naive_variant", false);
      r.bytes = f.num("bytes_per_call", 0);
      r.flops = f.num("flops_per_call", 0);
      r.roofline.bound = bound_from(f.str("bound", false));
      r.roofline.intensity = f.num("arithmetic_intensity", 0);
      r.roofline.limit = f.num("roofline_limit", 0);
      if (!f.error().empty()) return Error{Loc{}, f.error(), ""};
      run.benchmarks.push_back(std::move(b));
    }
    StoredBenchmark& b = run.benchmarks[it->second];
    BenchRecord& r = b.record;
    if (error) {
      r.status = BenchStatus::Failed;
      r.reason = text_of(e, "error_message");
      if (r.reason.empty()) r.reason = "error";
      continue;
    }
    double seconds = to_seconds(real_time, unit);
    if (run_type == "aggregate") {
      if (agg == "median") {
        median_agg[cname] = seconds;
        if (version == 0) {
          // Version 0 has no per-call amounts: recover them from the rates of the median.
          Fields g(e, where);
          double gbps = g.num("gbps", 0), gflops = g.num("gflops", 0);
          if (!g.error().empty()) return Error{Loc{}, g.error(), ""};
          r.bytes = gbps * 1e9 * seconds;
          r.flops = gflops * 1e9 * seconds;
        }
      } else if (agg == "cv") {
        r.cv = real_time;  // a fraction, not a time
      }
    } else {
      b.samples.push_back(seconds);
    }
  }
  // The cache the suspect flags are judged by: as the run recorded it, else from Google
  // Benchmark's cache list (files written before llc_bytes existed).
  int64_t llc = 0;
  if (run.context.is_object() && run.context.contains("llc_bytes") &&
      run.context["llc_bytes"].is_number())
    llc = static_cast<int64_t>(run.context["llc_bytes"].get<double>());
  if (llc <= 0) llc = last_level_cache_from_context(run.context);
  for (StoredBenchmark& b : run.benchmarks) {
    BenchRecord& r = b.record;
    if (r.status != BenchStatus::Measured) continue;
    auto m = median_agg.find(b.name);
    if (!b.samples.empty())
      r.seconds = median(b.samples);
    else if (m != median_agg.end() && m->second)
      r.seconds = *m->second;
    else {
      r.status = BenchStatus::Failed;
      r.reason = "no repetition and no median in the results file";
      continue;
    }
    if (version == 0 && b.samples.empty() && m != median_agg.end() && m->second) {
      // A version-0 file has the median only: it stands for one sample.
      b.samples.push_back(*m->second);
    }
    if (r.seconds > 0) {
      r.gbps = r.bytes / r.seconds * 1e-9;
      r.gflops = r.flops / r.seconds * 1e-9;
    }
    r.roofline_fraction = roofline_fraction(r.roofline, r.gbps, r.gflops);
    r.spread = assess_spread(b.samples);
    r.suspect = suspect_of(r.roofline, r.gbps, r.gflops, r.bytes, r.roofline_fraction,
                           is_gpu_backend(r.backend) ? 0 : llc);
  }
  return {};
}

Status read_problems(const json& list, const char* field, BenchStatus status, StoredRun& run) {
  if (!list.is_array()) return Error{Loc{}, std::string("'") + field + "' is not an array", ""};
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    std::string where = std::string(field) + "[" + std::to_string(i) + "]";
    if (!e.is_object()) return Error{Loc{}, where + " is not an object", ""};
    Fields f(e, where);
    BenchRecord r;
    r.kernel = f.str("kernel", true);
    r.backend = f.str("backend", true);
    r.variant = f.str("variant", true);
    r.reason = f.str("reason", false);
    r.max_error = f.num("max_error", 0);
    if (!f.error().empty()) return Error{Loc{}, f.error(), ""};
    auto sizes = sizes_text(e.contains("sizes") ? e["sizes"] : json::object(), where);
    if (!sizes.ok()) return sizes.error();
    r.sizes = sizes.value();
    r.status = status;
    r.verified = false;
    run.problems.push_back(std::move(r));
  }
  return {};
}

}  // namespace

std::string StoredRun::date() const {
  if (context.is_object() && context.contains("date") && context["date"].is_string())
    return context["date"].get<std::string>();
  return "";
}

std::vector<BenchRecord> StoredRun::records() const {
  std::vector<BenchRecord> out;
  for (const auto& b : benchmarks) out.push_back(b.record);
  for (const auto& p : problems) out.push_back(p);
  return out;
}

std::string sorted_sizes(const std::string& sizes) {
  std::vector<std::string> parts;
  std::stringstream ss(sizes);
  std::string item;
  while (std::getline(ss, item, ',')) parts.push_back(item);
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::string match_key(const std::string& kernel, const std::string& backend,
                      const std::string& variant, const std::string& sizes) {
  return kernel + "/" + backend + "/" + variant + "/" + sorted_sizes(sizes);
}

namespace {

// Where `text` first nests arrays and objects deeper than `limit`, as 1-based line and column;
// {0, 0} when it never does. Brackets inside strings do not count. Linear, allocation-free:
// it runs before the parser, so no deep tree is ever built, copied or printed.
std::pair<int, int> nesting_past(const std::string& text, int limit) {
  int depth = 0, line = 1, col = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    ++col;
    if (c == '\n') {
      ++line;
      col = 0;
    }
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return {line, col};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {0, 0};
}

}  // namespace

Result<json> parse_results_json(const std::string& text, const std::string& path) {
  auto [line, col] = nesting_past(text, kMaxResultsDepth);
  if (line > 0)
    return Error{Loc{path, line, col},
                 "not a valid results file: arrays and objects nest deeper than " +
                     std::to_string(kMaxResultsDepth) + " levels",
                 ""};
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // The parser's message can quote the bytes it stopped at: escaped.
    std::string what = e.what();
    return file_error(
        path, "not a valid results file: the JSON is truncated or corrupt (" +
                  escape_control(
                      what.substr(what.find(']') == std::string::npos ? 0 : what.find(']') + 2)) +
                  ")");
  }
}

Result<json> read_results_json(const std::string& path) {
  auto text = read_regular_file(path, kMaxResultsBytes, "results file");
  if (!text.ok()) return text.error();
  return parse_results_json(text.value(), path);
}

Result<StoredRun> parse_results(const std::string& text, const std::string& path) {
  auto parsed = parse_results_json(text, path);
  if (!parsed.ok()) return parsed.error();
  return results_from_json(parsed.value(), path);
}

Result<StoredRun> results_from_json(const json& doc, const std::string& path) {
  if (!doc.is_object()) return file_error(path, "not a results file: the JSON is not an object");
  StoredRun run;
  run.path = path;
  if (doc.contains("schema_version")) {
    const json& v = doc["schema_version"];
    if (!v.is_number_integer()) return file_error(path, "'schema_version' is not an integer");
    int64_t version = v.get<int64_t>();
    if (version < kOldestReadableSchema || version > kResultsSchemaVersion)
      return file_error(path, "results schema_version " + std::to_string(version) +
                                  " is not supported: this specbench reads versions " +
                                  std::to_string(kOldestReadableSchema) + " to " +
                                  std::to_string(kResultsSchemaVersion) +
                                  " (see results/README.md)");
    run.schema_version = static_cast<int>(version);
  } else {
    // Version 0: the document before versioning. It must still look like one.
    bool looks = doc.contains("context") && doc["context"].is_object() &&
                 doc["context"].contains("specbench_version");
    if (!looks)
      return file_error(path,
                        "not a specbench results file: no 'schema_version' and no "
                        "context.specbench_version");
    run.schema_version = 0;
  }
  if (!doc.contains("context") || !doc["context"].is_object())
    return file_error(path, "'context' is missing or not an object");
  run.context = doc["context"];
  if (!doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    return file_error(path, "'benchmarks' is missing or not an array");
  Status st = read_benchmarks(doc["benchmarks"], run.schema_version, run);
  if (!st.ok()) return file_error(path, st.error().message);
  for (auto [field, status] :
       {std::pair{"skipped", BenchStatus::Skipped}, std::pair{"failed", BenchStatus::Failed}}) {
    if (!doc.contains(field)) continue;
    st = read_problems(doc[field], field, status, run);
    if (!st.ok()) return file_error(path, st.error().message);
  }
  if (doc.contains("verification") && !doc["verification"].is_null()) {
    const json& v = doc["verification"];
    if (!v.is_object()) return file_error(path, "'verification' is not an object");
    Fields f(v, "verification");
    for (const char* k : {"checks", "passed", "failed", "skipped"}) f.num(k, 0);
    if (!f.error().empty()) return file_error(path, f.error());
    run.verification = v;
  }
  if (doc.contains("kernel_facts") && !doc["kernel_facts"].is_null()) {
    const json& kf = doc["kernel_facts"];
    if (!kf.is_array()) return file_error(path, "'kernel_facts' is not an array");
    for (size_t i = 0; i < kf.size(); ++i) {
      const std::string where = "kernel_facts[" + std::to_string(i) + "]";
      if (!kf[i].is_object()) return file_error(path, where + " is not an object");
      for (const char* key : {"kernel", "backend", "function", "arch"})
        if (!kf[i].contains(key) || !kf[i][key].is_string())
          return file_error(path, where + ": '" + key + "' is not a string");
    }
    run.kernel_facts = kf;
  }
  if (doc.contains("nightly") && doc["nightly"].is_object())
    run.partial = text_of(doc["nightly"], "state") == "in_progress";
  return run;
}

Result<StoredRun> load_results(const std::string& path) {
  auto doc = read_results_json(path);
  if (!doc.ok()) return doc.error();
  return results_from_json(doc.value(), path);
}

// ---------------------------------------------------------------------------------------------

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Faster:
      return "faster";
    case Verdict::Slower:
      return "SLOWER";
    case Verdict::Same:
      return "same";
    case Verdict::New:
      return "new";
    case Verdict::Missing:
      return "missing";
    case Verdict::Failed:
      return "FAILED";
  }
  return "?";
}

int repetitions_needed(double alpha) {
  for (int n = 1; n < 1000; ++n)
    if (min_p_value(n, n) < alpha) return n;
  return 1000;
}

SampleVerdict judge_samples(const std::vector<double>& base, const std::vector<double>& now,
                            const CompareOptions& opt) {
  SB_ASSERT(!base.empty() && !now.empty(), "a verdict needs samples on both sides");
  SampleVerdict v;
  double b = median(base);
  v.ratio = b > 0 ? median(now) / b : 0;
  v.p = mann_whitney_u(base, now).p;
  v.testable = min_p_value(static_cast<int>(base.size()), static_cast<int>(now.size())) < opt.alpha;
  bool significant = v.p < opt.alpha;
  if (significant && v.ratio >= 1 + opt.min_effect)
    v.verdict = Verdict::Slower;
  else if (significant && v.ratio > 0 && v.ratio <= 1 / (1 + opt.min_effect))
    v.verdict = Verdict::Faster;
  return v;
}

Comparison compare_runs(const StoredRun& base, const StoredRun& now, const CompareOptions& opt) {
  SB_ASSERT(opt.alpha > 0 && opt.alpha < 1, "alpha out of (0, 1)");
  SB_ASSERT(opt.min_effect >= 0, "negative minimum effect");
  Comparison c;
  c.base_path = base.path;
  c.new_path = now.path;
  c.options = opt;
  std::map<std::string, const StoredBenchmark*> base_by_key;
  for (const auto& b : base.benchmarks) base_by_key.emplace(b.key, &b);
  std::set<std::string> seen;
  int untestable = 0, min_n = 1 << 30, noisy = 0;
  double log_sum = 0;
  int log_count = 0;

  auto fill = [](CompareRow& row, const BenchRecord& r) {
    row.kernel = r.kernel;
    row.backend = r.backend;
    row.variant = r.variant;
    row.sizes = r.sizes;
  };
  for (const auto& nb : now.benchmarks) {
    seen.insert(nb.key);
    CompareRow row;
    row.name = nb.name;
    fill(row, nb.record);
    row.new_n = static_cast<int>(nb.samples.size());
    if (nb.record.status == BenchStatus::Measured) row.new_seconds = nb.record.seconds;
    auto bit = base_by_key.find(nb.key);
    const StoredBenchmark* bb = bit == base_by_key.end() ? nullptr : bit->second;
    if (bb) {
      row.base_n = static_cast<int>(bb->samples.size());
      if (bb->record.status == BenchStatus::Measured) row.base_seconds = bb->record.seconds;
    }
    if (nb.record.status != BenchStatus::Measured) {
      row.verdict = Verdict::Failed;
      row.note = nb.record.reason;
    } else if (!bb || bb->record.status != BenchStatus::Measured || bb->samples.empty()) {
      row.verdict = Verdict::New;
      if (bb) row.note = "not measured in the base run";
    } else {
      row.ratio = row.base_seconds > 0 ? row.new_seconds / row.base_seconds : 0;
      if (row.ratio > 0) {
        log_sum += std::log(row.ratio);
        ++log_count;
      }
      row.testable = min_p_value(row.base_n, row.new_n) < opt.alpha;
      if (!row.testable) {
        ++untestable;
        min_n = std::min(min_n, std::min(row.base_n, row.new_n));
        row.note = "too few repetitions for the test";
      }
      if (!nb.samples.empty()) {
        SampleVerdict v = judge_samples(bb->samples, nb.samples, opt);
        row.p = v.p;
        row.verdict = v.verdict;
      }
      // A verdict on spread-out repetitions is marked, never given silently.
      for (auto [side, samples] :
           {std::pair{"base", &bb->samples}, std::pair{"new", &nb.samples}}) {
        Spread spread = assess_spread(*samples);
        if (!spread.noisy) continue;
        row.noisy = true;
        row.noise += (row.noise.empty() ? "" : "; ") + std::string(side) +
                     " noisy: " + describe_noise(spread);
      }
      if (row.noisy) {
        ++noisy;
        if (row.note.empty()) row.note = row.noise;
      }
    }
    c.rows.push_back(std::move(row));
  }
  // Cases that failed before timing in the new run.
  for (const auto& p : now.problems) {
    std::string key = match_key(p.kernel, p.backend, p.variant, p.sizes);
    if (!seen.insert(key).second) continue;
    CompareRow row;
    row.name = p.kernel + "/" + p.backend + "/" + p.variant + "/" + p.sizes;
    fill(row, p);
    auto bit = base_by_key.find(key);
    if (bit != base_by_key.end()) {
      row.base_n = static_cast<int>(bit->second->samples.size());
      row.base_seconds = bit->second->record.seconds;
    }
    if (p.status == BenchStatus::Failed) {
      row.verdict = Verdict::Failed;
      row.note = p.reason;
    } else if (bit != base_by_key.end()) {
      row.verdict = Verdict::Missing;
      row.note = "skipped: " + p.reason;
    } else {
      continue;  // skipped in both: nothing to say
    }
    c.rows.push_back(std::move(row));
  }
  for (const auto& bb : base.benchmarks) {
    if (seen.count(bb.key)) continue;
    CompareRow row;
    row.name = bb.name;
    fill(row, bb.record);
    row.verdict = Verdict::Missing;
    row.base_n = static_cast<int>(bb.samples.size());
    row.base_seconds = bb.record.seconds;
    c.rows.push_back(std::move(row));
  }
  for (const auto& row : c.rows) {
    switch (row.verdict) {
      case Verdict::Faster:
        ++c.faster;
        break;
      case Verdict::Slower:
        ++c.slower;
        break;
      case Verdict::Same:
        ++c.same;
        break;
      case Verdict::New:
        ++c.added;
        break;
      case Verdict::Missing:
        ++c.missing;
        break;
      case Verdict::Failed:
        ++c.failed;
        break;
    }
  }
  if (log_count > 0) c.geomean_ratio = std::exp(log_sum / log_count);
  if (untestable > 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", opt.alpha);
    c.warnings.push_back(
        std::to_string(untestable) + " benchmark(s) have too few repetitions (as few as " +
        std::to_string(min_n) + ") for the Mann-Whitney test ever to reach p < " + buf +
        ": they can only be 'same'; run at least " + std::to_string(repetitions_needed(opt.alpha)) +
        " repetitions on both sides (--repetitions)");
  }
  c.noisy = noisy;
  if (noisy > 0)
    c.warnings.push_back(std::to_string(noisy) +
                         " benchmark(s) are noisy in one run or both (marked 'noisy'): their "
                         "repetitions are spread out, so their verdicts are weak; time them again "
                         "on a quiet machine");
  if (now.verification.is_object() && now.verification.value("failed", 0.0) > 0) {
    c.verification_failed = true;
    c.warnings.push_back("the new run's verification failed " +
                         std::to_string(now.verification.value("failed", 0)) + " check(s)");
  }
  if (now.partial) c.warnings.push_back(now.path + " is an interrupted run's checkpoint");
  if (base.partial) c.warnings.push_back(base.path + " is an interrupted run's checkpoint");
  return c;
}

int compare_exit_code(const Comparison& c) {
  return c.slower > 0 || c.failed > 0 || c.verification_failed ? 1 : 0;
}

json comparison_json(const Comparison& c) {
  json rows = json::array();
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  auto pos = [](double v) { return v > 0 ? json(v) : json(nullptr); };
  for (const auto& r : c.rows) {
    rows.push_back({{"name", r.name},
                    {"kernel", r.kernel},
                    {"backend", r.backend},
                    {"variant", r.variant},
                    {"sizes", r.sizes},
                    {"verdict",
                     [&] {
                       std::string v = verdict_name(r.verdict);
                       std::transform(v.begin(), v.end(), v.begin(), ::tolower);
                       return v;
                     }()},
                    {"base_seconds", pos(r.base_seconds)},
                    {"new_seconds", pos(r.new_seconds)},
                    {"ratio", pos(r.ratio)},
                    {"base_repetitions", r.base_n},
                    {"new_repetitions", r.new_n},
                    {"p_value", opt(r.p)},
                    {"testable", r.testable},
                    {"noisy", r.noisy},
                    {"noise", r.noise},
                    {"note", r.note}});
  }
  return {{"base", c.base_path},
          {"new", c.new_path},
          {"alpha", c.options.alpha},
          {"min_effect", c.options.min_effect},
          {"counts",
           {{"faster", c.faster},
            {"slower", c.slower},
            {"same", c.same},
            {"new", c.added},
            {"missing", c.missing},
            {"failed", c.failed},
            {"noisy", c.noisy}}},
          {"geomean_ratio", opt(c.geomean_ratio)},
          {"verification_failed", c.verification_failed},
          {"warnings", c.warnings},
          {"regressed", compare_exit_code(c) != 0},
          {"benchmarks", rows}};
}

// ---------------------------------------------------------------------------------------------

namespace {

double size_product(const std::string& sizes) {
  double p = 1;
  std::stringstream ss(sizes);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    try {
      p *= std::stod(item.substr(eq + 1));
    } catch (const std::exception&) {
    }
  }
  return p;
}

json num_or_null(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

}  // namespace

json report_data(const std::vector<StoredRun>& runs_in, const CompareOptions& opt) {
  std::vector<const StoredRun*> runs;
  for (const auto& r : runs_in) runs.push_back(&r);
  std::stable_sort(runs.begin(), runs.end(),
                   [](const StoredRun* a, const StoredRun* b) { return a->date() < b->date(); });
  json data;
  data["schema_version"] = kResultsSchemaVersion;
  data["alpha"] = opt.alpha;
  data["min_effect"] = opt.min_effect;
  // The backend records, for make_report.py's colours, devices and orders.
  data["backends"] = backends_json();
  data["runs"] = json::array();
  for (const StoredRun* r : runs) {
    const json& ctx = r->context;
    auto s = [&ctx](const char* k) { return text_of(ctx, k); };
    json run =
        {{"path", r->path},
         {"date", r->date()},
         {"host", s("host_name")},
         {"git_commit", s("git_commit")},
         {"cpu_model", s("cpu_model")},
         {"gpu", s("gpu")},
         {"cxx", s("cxx")},
         {"nvcc", s("nvcc")},
         {"schema_version", r->schema_version},
         {"partial", r->partial},
         {"verification", r->verification},
         {"machine_load",
          ctx.is_object() && ctx.contains("machine_load") ? ctx["machine_load"] : json(nullptr)}};
    for (const BackendRecord& b : backend_records())
      if (!b.version_key.empty()) run[b.version_key] = s(b.version_key.c_str());
    data["runs"].push_back(std::move(run));
  }
  // Comparisons of consecutive runs.
  std::vector<Comparison> steps;
  data["comparisons"] = json::array();
  for (size_t i = 1; i < runs.size(); ++i) {
    steps.push_back(compare_runs(*runs[i - 1], *runs[i], opt));
    json cj = comparison_json(steps.back());
    cj.erase("benchmarks");
    data["comparisons"].push_back(cj);
  }
  data["kernels"] = json::object();
  if (runs.empty()) return data;
  const StoredRun& latest = *runs.back();
  // The limits the roofline is drawn against: only positive numbers pass.
  json limits = json::object();
  const json ctx_limits = latest.context.is_object() && latest.context.contains("limits")
                              ? latest.context["limits"]
                              : json(nullptr);
  // The value at context.limits.<dev>.<key>, or nullptr.
  auto limit_field = [&](const char* dev, const char* key) -> const json* {
    if (!ctx_limits.is_object() || !ctx_limits.contains(dev) || !ctx_limits[dev].is_object() ||
        !ctx_limits[dev].contains(key))
      return nullptr;
    return &ctx_limits[dev][key];
  };
  for (const char* dev : {"cpu", "gpu"}) {
    limits[dev] = json::object();
    for (const char* k : {"bandwidth_gbps", "compute_gflops"}) {
      const json* v = limit_field(dev, k);
      limits[dev][k] = v && v->is_number() && v->get<double>() > 0 ? *v : json(nullptr);
    }
    // How far the limit probes moved during the run (DeviceLimits::unsteady): the report warns.
    for (const char* k : {"bandwidth_drift", "compute_drift"}) {
      const json* v = limit_field(dev, k);
      limits[dev][k] = v && v->is_number() && v->get<double>() >= 0 ? *v : json(0.0);
    }
    const json* unsteady = limit_field(dev, "unsteady");
    limits[dev]["unsteady"] = unsteady && unsteady->is_boolean() && unsteady->get<bool>();
  }
  data["limits"] = limits;

  std::vector<BenchRecord> records = latest.records();
  std::vector<SummaryRow> summary = summarize(records);
  std::vector<LanguageRow> languages = compare_languages(records);
  json summary_rows = summary_json(summary);
  json language_rows = languages_json(languages);

  std::vector<std::string> order;
  auto kernel_entry = [&](const std::string& k) -> json& {
    if (!data["kernels"].contains(k)) {
      order.push_back(k);
      data["kernels"][k] = {{"points", json::array()},    {"summary", json::array()},
                            {"languages", json::array()}, {"variants", json::array()},
                            {"problems", json::array()},  {"trend", json::array()},
                            {"changes", json::array()}};
    }
    return data["kernels"][k];
  };
  for (const auto& b : latest.benchmarks) {
    const BenchRecord& r = b.record;
    json& k = kernel_entry(r.kernel);
    if (r.status != BenchStatus::Measured) continue;
    std::string unit;
    double rate = bound_rate(r.roofline.bound, r.gbps, r.gflops, r.bytes, &unit);
    k["points"].push_back(
        {{"backend", r.backend},
         {"variant", r.variant},
         {"sizes", r.sizes},
         {"size", size_product(r.sizes)},
         {"seconds", r.seconds},
         {"gbps", r.bytes > 0 ? json(r.gbps) : json(nullptr)},
         {"gflops", r.flops > 0 ? json(r.gflops) : json(nullptr)},
         {"rate", num_or_null(rate)},
         {"unit", unit},
         {"bound", bound_name(r.roofline.bound)},
         {"intensity", r.bytes > 0 ? json(r.flops / r.bytes) : json(nullptr)},
         {"limit", r.roofline.limit > 0 ? json(r.roofline.limit) : json(nullptr)},
         {"fraction", r.roofline_fraction ? json(*r.roofline_fraction) : json(nullptr)},
         {"cv", r.cv},
         {"repetitions", b.samples.size()},
         {"median_ci",
          r.spread.n > 0 ? json::array({r.spread.ci_low, r.spread.ci_high}) : json(nullptr)},
         {"median_ci_level", r.spread.n > 0 ? json(r.spread.ci_level) : json(nullptr)},
         {"noisy", r.spread.noisy},
         {"noise", describe_noise(r.spread)},
         {"suspect", r.suspect.empty() ? json(nullptr) : json(r.suspect)}});
  }
  for (const auto& p : latest.problems) {
    json& k = kernel_entry(p.kernel);
    k["problems"].push_back({{"backend", p.backend},
                             {"variant", p.variant},
                             {"sizes", p.sizes},
                             {"status", p.status == BenchStatus::Failed ? "failed" : "skipped"},
                             {"reason", p.reason}});
  }
  for (const auto& row : summary_rows)
    kernel_entry(row.value("kernel", ""))["summary"].push_back(row);
  // The GPU kernels' static facts, beside the variants that launch them (make_report.py's "GPU
  // facts" section).
  if (latest.kernel_facts.is_array()) {
    for (const json& f : latest.kernel_facts) {
      json row = json::object();
      for (const char* key : {"backend", "variant", "function", "arch", "registers",
                              "shared_bytes", "stack_bytes", "spill_store_bytes",
                              "spill_load_bytes", "block_threads", "occupancy",
                              "occupancy_is_upper_bound", "limited_by"})
        row[key] = f.contains(key) ? f[key] : json(nullptr);
      json& k = kernel_entry(f["kernel"].get<std::string>());
      if (!k.contains("gpu_facts")) k["gpu_facts"] = json::array();
      k["gpu_facts"].push_back(std::move(row));
    }
  }
  for (const auto& row : language_rows)
    kernel_entry(row.value("kernel", ""))["languages"].push_back(row);

  // Verification status per variant: failed if any problem says so, skipped if every case was
  // skipped, else verified.
  for (const std::string& kname : order) {
    json& k = data["kernels"][kname];
    std::map<std::string, std::pair<std::string, std::string>> status;  // variant -> (status, why)
    std::vector<std::string> vorder;
    auto note = [&](const std::string& key, const std::string& st, const std::string& why) {
      auto it = status.find(key);
      if (it == status.end()) {
        vorder.push_back(key);
        status[key] = {st, why};
      } else if (st == "failed" || (st == "verified" && it->second.first == "skipped")) {
        it->second = {st, why};
      }
    };
    for (const auto& b : latest.benchmarks)
      if (b.record.kernel == kname)
        note(b.record.backend + "/" + b.record.variant,
             b.record.status == BenchStatus::Measured ? "verified" : "failed", b.record.reason);
    for (const auto& p : latest.problems)
      if (p.kernel == kname)
        note(p.backend + "/" + p.variant, p.status == BenchStatus::Failed ? "failed" : "skipped",
             p.reason);
    for (const auto& key : vorder)
      k["variants"].push_back(
          {{"variant", key}, {"status", status[key].first}, {"reason", status[key].second}});
  }

  // Kernels of earlier runs only: a page with their history.
  for (const StoredRun* r : runs)
    for (const auto& b : r->benchmarks) kernel_entry(b.record.kernel);

  // What the latest comparison found per kernel, beyond "same": every benchmark that changed,
  // failed, appeared or went missing.
  if (!steps.empty()) {
    json rows = comparison_json(steps.back())["benchmarks"];
    for (const auto& row : rows) {
      if (row["verdict"] == "same") continue;
      kernel_entry(row["kernel"].get<std::string>())["changes"].push_back(row);
    }
  }

  // Trend: per kernel and backend, the best variant at the backend's largest size in the newest
  // run that measured it, followed through every run; verdict against the previous run.
  for (const std::string& kname : order) {
    json& k = data["kernels"][kname];
    std::map<std::string, std::pair<double, std::string>> largest;  // backend -> (size, sizes)
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      std::map<std::string, std::pair<double, std::string>> here;
      for (const auto& b : (*it)->benchmarks) {
        const BenchRecord& r = b.record;
        if (r.kernel != kname || r.status != BenchStatus::Measured || largest.count(r.backend))
          continue;
        double s = size_product(r.sizes);
        auto h = here.find(r.backend);
        if (h == here.end() || s > h->second.first) here[r.backend] = {s, r.sizes};
      }
      largest.insert(here.begin(), here.end());
    }
    for (const auto& [backend, sz] : largest) {
      json series = {{"backend", backend}, {"sizes", sz.second}, {"points", json::array()}};
      const StoredBenchmark* previous = nullptr;
      for (size_t i = 0; i < runs.size(); ++i) {
        const StoredBenchmark* best = nullptr;
        for (const auto& b : runs[i]->benchmarks) {
          const BenchRecord& r = b.record;
          if (r.kernel != kname || r.backend != backend || r.status != BenchStatus::Measured ||
              sorted_sizes(r.sizes) != sorted_sizes(sz.second))
            continue;
          if (!best || r.seconds < best->record.seconds) best = &b;
        }
        if (!best) continue;
        // The best time against the previous run's best time, whichever variants they are: a
        // backend whose fastest variant lost its edge regressed even if another took its place.
        std::string verdict;
        if (previous && !previous->samples.empty() && !best->samples.empty())
          verdict = verdict_name(judge_samples(previous->samples, best->samples, opt).verdict);
        std::transform(verdict.begin(), verdict.end(), verdict.begin(), ::tolower);
        previous = best;
        series["points"].push_back({{"run", i},
                                    {"date", runs[i]->date()},
                                    {"variant", best->record.variant},
                                    {"seconds", best->record.seconds},
                                    {"verdict", verdict},
                                    {"noisy", best->record.spread.noisy}});
      }
      k["trend"].push_back(series);
    }
  }
  add_chart_data(data, runs, opt);
  return data;
}

}  // namespace sb
