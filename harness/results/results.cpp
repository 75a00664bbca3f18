#include "results/results.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <optional>
#include <regex>

#include "driver.h"
#include "support/safe_io.h"

namespace sb {

namespace {

nlohmann::json sizes_object(const SizeValues& sizes) {
  nlohmann::json o = nlohmann::json::object();
  for (const auto& [name, value] : sizes) o[name] = value;
  return o;
}

nlohmann::json problem_json(const ResultProblem& p, bool with_error) {
  nlohmann::json j = {{"kernel", p.kernel},   {"backend", p.backend},
                      {"variant", p.variant}, {"sizes", sizes_object(p.sizes)},
                      {"reason", p.reason},   {"verified", false}};
  if (with_error) j["max_error"] = p.max_error;
  return j;
}

// A counter in units per second, as GB/s-style 1e9 units; the cv aggregate is a ratio, kept as
// is. null when the counter is absent.
nlohmann::json rate(const nlohmann::json& entry, const char* counter) {
  auto it = entry.find(counter);
  if (it == entry.end() || !it->is_number()) return nullptr;
  double v = it->get<double>();
  if (entry.value("aggregate_unit", "") == "percentage") return v;
  return v * 1e-9;
}

// `when` in UTC, formatted by strftime's `format` (at most 31 characters).
std::string format_utc(std::time_t when, const char* format) {
  std::tm tm{};
  gmtime_r(&when, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string iso_utc(std::time_t when) {
  return format_utc(when, "%Y-%m-%dT%H:%M:%SZ");
}

}  // namespace

bool entry_is_of(const nlohmann::json& entry, const std::string& name) {
  std::string run = entry.value("run_name", entry.value("name", ""));
  return run == name || (run.size() > name.size() && run.compare(0, name.size(), name) == 0 &&
                         run[name.size()] == '/');
}

void annotate_roofline(nlohmann::json& e, const Roofline& r) {
  auto num = [&e](const char* k) { return e[k].is_number() ? e[k].get<double>() : 0.0; };
  bool has_bytes = e["gbps"].is_number();
  e["bound"] = r.bound == Bound::Unknown ? nlohmann::json(nullptr) : bound_name(r.bound);
  // A zero intensity with an unknown bound is a case without a roofline decision, not a copy.
  bool known = has_bytes && (r.bound != Bound::Unknown || r.intensity > 0);
  e["arithmetic_intensity"] = known ? nlohmann::json(r.intensity) : nlohmann::json(nullptr);
  e["roofline_limit"] = r.limit > 0 ? nlohmann::json(r.limit) : nlohmann::json(nullptr);
  std::optional<double> f;
  if (e.value("aggregate_unit", "") == "percentage") {
    // The cv of the fraction is the cv of the bound's rate (the limit is a constant).
    if (r.bound != Bound::Unknown && r.limit > 0)
      f = r.bound == Bound::Memory ? num("gbps") : num("gflops");
  } else {
    f = roofline_fraction(r, num("gbps"), num("gflops"));
  }
  e["roofline_fraction"] = f && std::isfinite(*f) ? nlohmann::json(*f) : nlohmann::json(nullptr);
}

Spread annotate_trust(nlohmann::json& entries, int64_t llc_bytes) {
  std::vector<double> samples;
  nlohmann::json* stands = nullptr;
  nlohmann::json* only = nullptr;
  int iterations = 0;
  for (auto& e : entries) {
    if (!e.is_object() || e.value("error_occurred", false)) continue;
    if (e.value("run_type", "iteration") == "aggregate") {
      if (e.value("aggregate_name", "") == "median") stands = &e;
      continue;
    }
    double t = e.value("real_time", 0.0);
    std::string unit = e.value("time_unit", "ns");
    double scale = unit == "ns" ? 1e-9 : unit == "us" ? 1e-6 : unit == "ms" ? 1e-3 : 1.0;
    samples.push_back(t * scale);
    only = &e;
    ++iterations;
  }
  Spread s = assess_spread(samples);
  if (!stands && iterations == 1) stands = only;
  if (!stands) return s;
  nlohmann::json& e = *stands;
  auto num = [&e](const char* k) {
    return e.contains(k) && e[k].is_number() ? e[k].get<double>() : 0.0;
  };
  Roofline r;
  std::string bound =
      e.contains("bound") && e["bound"].is_string() ? e["bound"].get<std::string>() : "";
  r.bound = bound == "memory"    ? Bound::Memory
            : bound == "compute" ? Bound::Compute
                                 : Bound::Unknown;
  r.limit = num("roofline_limit");
  std::optional<double> fraction;
  if (e.contains("roofline_fraction") && e["roofline_fraction"].is_number())
    fraction = e["roofline_fraction"].get<double>();
  e["noise"] = spread_json(s);
  // The host's cache says nothing about a GPU's working set.
  const bool gpu = e.contains("backend") && e["backend"].is_string() &&
                   is_gpu_backend(e["backend"].get<std::string>());
  std::string why = suspect_of(r, num("gbps"), num("gflops"), num("bytes_per_call"), fraction,
                               gpu ? 0 : llc_bytes);
  e["suspect"] = why.empty() ? nlohmann::json(nullptr) : nlohmann::json(why);
  return s;
}

Result<nlohmann::json> make_results_document(const std::string& gbench_json,
                                             const std::vector<ResultCase>& cases,
                                             const std::vector<ResultProblem>& skipped,
                                             const std::vector<ResultProblem>& failed,
                                             const std::map<std::string, std::string>& context) {
  nlohmann::json doc;
  if (gbench_json.empty()) {
    doc["context"] = {{"date", iso_utc(std::time(nullptr))}, {"host_name", host_name()}};
    doc["benchmarks"] = nlohmann::json::array();
  } else {
    doc = nlohmann::json::parse(gbench_json, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object())
      return Error{Loc{}, "cannot parse Google Benchmark's JSON output", ""};
    if (!doc.contains("context") || !doc["context"].is_object())
      doc["context"] = nlohmann::json::object();
    if (!doc.contains("benchmarks") || !doc["benchmarks"].is_array())
      doc["benchmarks"] = nlohmann::json::array();
  }
  for (const auto& [k, v] : context) doc["context"][k] = v;
  // The host the file is kept under (results/<host>/): $SPECBENCH_HOST when set, where Google
  // Benchmark's context has gethostname().
  doc["context"]["host_name"] = host_name();
  doc["schema_version"] = kResultsSchemaVersion;

  for (auto& e : doc["benchmarks"]) {
    for (const ResultCase& c : cases) {
      if (!entry_is_of(e, c.name)) continue;
      e["kernel"] = c.kernel;
      e["backend"] = c.backend;
      e["variant"] = c.variant;
      e["sizes"] = sizes_object(c.sizes);
      e["verified"] = c.verified;
      e["max_error"] = c.max_error;
      e["strategy"] = c.strategy;
      e["naive_variant"] = c.naive_variant;
      e["bytes_per_call"] = c.bytes;
      e["flops_per_call"] = c.flops;
      e["gbps"] = rate(e, "bytes");
      e["gflops"] = rate(e, "flops");
      annotate_roofline(e, c.roofline);
      break;
    }
  }
  doc["skipped"] = nlohmann::json::array();
  for (const auto& p : skipped) doc["skipped"].push_back(problem_json(p, false));
  doc["failed"] = nlohmann::json::array();
  for (const auto& p : failed) doc["failed"].push_back(problem_json(p, true));
  return doc;
}

std::string utc_stamp(std::time_t when) {
  return format_utc(when, "%Y%m%dT%H%M%SZ");
}

std::string host_name_override_error() {
  const char* env = std::getenv("SPECBENCH_HOST");
  if (!env) return "";
  std::string v = env;
  bool ok = !v.empty() && v.size() <= 64 && v[0] != '.' && v[0] != '-';
  for (char c : v)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  if (ok) return "";
  return "SPECBENCH_HOST must be 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' "
         "or '-' (it names the folder results/<host>/)";
}

std::string host_name() {
  if (const char* env = std::getenv("SPECBENCH_HOST"); env && host_name_override_error().empty())
    return env;
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown";
  return buf;
}

std::string markdown_path(const std::string& results_path) {
  std::filesystem::path p(results_path);
  if (p.extension() == ".json") return p.replace_extension(".md").string();
  return results_path + ".md";
}

std::string default_results_path(const std::string& root, std::time_t when) {
  return (std::filesystem::path(root) / "results" / host_name() / (utc_stamp(when) + ".json"))
      .string();
}

namespace {

std::string results_text(const nlohmann::json& doc) {
  // Reasons may quote compiler output; never let a stray byte make the dump throw.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}


}  // namespace


Status write_results(const std::string& path, const nlohmann::json& doc) {
  return write_file_atomic(path, results_text(doc));
}

ResultsWrite write_results_with_fallback(const std::string& path, const nlohmann::json& doc) {
  namespace fs = std::filesystem;
  ResultsWrite w;
  const std::string text = results_text(doc);
  Status st = write_file_atomic(path, text);
  if (st.ok()) {
    w.path = path;
    return w;
  }
  w.errors.push_back(st.error());
  std::vector<std::string> dirs;
  const char* tmpdir = std::getenv("TMPDIR");
  dirs.push_back(tmpdir && *tmpdir ? tmpdir : "/tmp");
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (!ec) dirs.push_back(cwd.string());
  const std::string name = "specbench-" + fs::path(path).filename().string();
  for (const auto& d : dirs) {
    fs::path candidate = fs::path(d) / name;
    if (fs::exists(candidate, ec))
      candidate = fs::path(d) / (fs::path(name).stem().string() + "-" +
                                 std::to_string(::getpid()) + fs::path(name).extension().string());
    st = write_file_atomic(candidate.string(), text);
    if (st.ok()) {
      w.path = candidate.string();
      w.fallback = true;
      return w;
    }
    w.errors.push_back(st.error());
  }
  return w;
}

int remove_stale_temporaries(const std::string& dir) {
  namespace fs = std::filesystem;
  static const std::regex tmp_name(R"(.+\.tmp\.([0-9]+))");
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || !std::regex_match(name, m, tmp_name)) continue;
    const long pid = std::strtol(m[1].str().c_str(), nullptr, 10);
    // A live writer (this process, or another one) keeps its temporary.
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
      continue;
    if (fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace sb
