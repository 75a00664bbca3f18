#include "results/noise.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <fstream>
#include <sstream>

#include "support/diag.h"

namespace sb {

namespace {

namespace fs = std::filesystem;

std::string read_small(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string fmt_bytes(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt("%.3g GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt("%.3g MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt("%.3g KiB", b / 1024.0);
  return fmt("%.0f B", b);
}

// log P(Binomial(n, 1/2) = i)
double log_binom_half(int n, int i) {
  return std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0);
}

}  // namespace

double Spread::ci_half_width() const {
  return median > 0 ? (ci_high - ci_low) / 2 / median : 0;
}

int median_ci_rank(int n, double level, double* coverage) {
  SB_ASSERT(n >= 1, "a confidence interval of an empty sample");
  const double tail = (1 - level) / 2;
  double below = std::exp(log_binom_half(n, 0));  // P(B < k) for k = 1
  int k = 1;
  // Narrow to [x_(k+1), x_(n-k)] while that interval is not empty and keeps the level.
  while (2 * (k + 1) <= n + 1) {
    double p = below + std::exp(log_binom_half(n, k));  // P(B < k + 1)
    if (p > tail) break;
    below = p;
    ++k;
  }
  if (coverage) *coverage = std::max(0.0, 1 - 2 * below);
  return k;
}

Spread assess_spread(const std::vector<double>& samples, const NoiseOptions& opt) {
  Spread s;
  s.n = static_cast<int>(samples.size());
  if (s.n == 0) return s;
  std::vector<double> x = samples;
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  s.median = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  if (n >= 2 && mean > 0) {
    double ss = 0;
    for (double v : x) ss += (v - mean) * (v - mean);
    s.cv = std::sqrt(ss / static_cast<double>(n - 1)) / mean;
  }
  int k = median_ci_rank(s.n, opt.ci_level, &s.ci_level);
  s.ci_low = x[k - 1];
  s.ci_high = x[n - k];

  if (s.median > 0) {
    for (double v : x) {
      double f = v > s.median ? v / s.median : (v > 0 ? s.median / v : INFINITY);
      if (f > opt.outlier_factor) {
        ++s.outliers;
        s.worst_outlier = std::max(s.worst_outlier, f);
      }
    }
  }
  // Two clusters: the widest gap between neighbours, with two repetitions or more either side.
  double widest = 0;
  for (size_t i = 1; i + 3 <= n; ++i) {  // x[0..i] and x[i+1..n-1], two or more each
    const size_t left = i + 1;
    if (!(x[i] > 0)) continue;
    double gap = x[i + 1] / x[i];
    if (gap >= opt.cluster_gap && gap > widest) {
      widest = gap;
      s.bimodal = true;
      s.low_cluster = static_cast<int>(left);
    }
  }

  s.judged = s.n >= opt.min_repetitions;
  if (!s.judged) return s;
  if (s.ci_half_width() > opt.max_ci_half_width)
    s.reasons.push_back("median known to ±" + fmt("%.0f", s.ci_half_width() * 100) + "% only (" +
                        fmt("%.1f", s.ci_level * 100) + "% interval of " + std::to_string(s.n) +
                        " repetitions)");
  if (s.outliers > 0)
    s.reasons.push_back(std::to_string(s.outliers) + " outlier(s), up to " +
                        fmt("%.3g", s.worst_outlier) + "x from the median");
  if (s.bimodal)
    s.reasons.push_back("two clusters: " + std::to_string(s.low_cluster) + " of " +
                        std::to_string(s.n) + " repetitions " + fmt("%.3g", widest) +
                        "x faster than the rest");
  s.noisy = !s.reasons.empty();
  return s;
}

nlohmann::json spread_json(const Spread& s) {
  nlohmann::json j;
  j["repetitions"] = s.n;
  j["cv"] = s.n >= 2 ? nlohmann::json(s.cv) : nlohmann::json(nullptr);
  j["median_ci"] = s.n > 0 ? nlohmann::json::array({s.ci_low, s.ci_high}) : nlohmann::json(nullptr);
  j["median_ci_level"] = s.n > 0 ? nlohmann::json(s.ci_level) : nlohmann::json(nullptr);
  j["median_ci_half_width"] = s.n > 0 ? nlohmann::json(s.ci_half_width()) : nlohmann::json(nullptr);
  j["outliers"] = s.outliers;
  j["bimodal"] = s.bimodal;
  j["judged"] = s.judged;
  j["noisy"] = s.noisy;
  j["noise_reasons"] = s.reasons;
  return j;
}

std::string describe_noise(const Spread& s) {
  std::string out;
  for (const auto& r : s.reasons) out += (out.empty() ? "" : "; ") + r;
  return out;
}

// ---------------------------------------------------------------------------------------------

namespace {

// "4692x the " or "111% of the ", for a rate that is `f` times its limit.
std::string share_of(double f) {
  return f >= 10 ? fmt("%.0f", f) + "x the " : fmt("%.0f", f * 100) + "% of the ";
}

}  // namespace

std::string suspect_compute_reason(std::optional<double> fraction, const std::string& rate_text,
                                   const std::string& limit_text) {
  if (!fraction || !(*fraction > kSuspectFraction)) return "";
  return rate_text + " is " + share_of(*fraction) + limit_text +
         " compute limit: not possible; the flops model, or the timing, is wrong";
}

double cache_lift(double working_set, int64_t llc_bytes) {
  if (llc_bytes <= 0) return 0;
  const double llc = static_cast<double>(llc_bytes);
  if (!(working_set > llc)) return std::numeric_limits<double>::infinity();
  return working_set / (working_set - llc);
}

std::string suspect_reason(std::optional<double> fraction, double working_set, int64_t llc_bytes,
                           const std::string& rate_text, const std::string& limit_text) {
  const double lift = cache_lift(working_set, llc_bytes);
  if (!fraction || !(lift > 0) || !std::isfinite(lift)) return "";
  const double f = *fraction;
  if (!(f > kSuspectFraction * lift)) return "";
  const double llc = static_cast<double>(llc_bytes);
  return rate_text + " is " + share_of(f) + limit_text + " limit with a " + fmt_bytes(working_set) +
         " working set, " + fmt("%.3g", working_set / llc) + "x the " + fmt_bytes(llc) +
         " last-level cache; even with " + fmt_bytes(llc) +
         " of it served from the cache on every pass, at most " + fmt("%.0f", lift * 100) +
         "% is possible: the bytes or flops model, or the timing, is wrong";
}

int64_t parse_cache_size(const std::string& text) {
  std::string t = trim(text);
  if (t.empty()) return 0;
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (const std::exception&) {
    return 0;
  }
  if (v < 0) return 0;
  std::string unit = trim(t.substr(used));
  if (unit.empty()) return v;
  if (unit == "K" || unit == "k") return v * 1024;
  if (unit == "M" || unit == "m") return v * 1024 * 1024;
  if (unit == "G" || unit == "g") return v * 1024LL * 1024 * 1024;
  return 0;
}

int64_t last_level_cache_bytes(const std::string& sysfs_cpu_cache) {
  int best_level = 0;
  int64_t best = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sysfs_cpu_cache, ec)) {
    if (e.path().filename().string().rfind("index", 0) != 0) continue;
    std::string type = trim(read_small((e.path() / "type").string()));
    if (type == "Instruction") continue;
    int level = 0;
    try {
      level = std::stoi(trim(read_small((e.path() / "level").string())));
    } catch (const std::exception&) {
      continue;
    }
    int64_t size = parse_cache_size(read_small((e.path() / "size").string()));
    if (size > 0 && level > best_level) {
      best_level = level;
      best = size;
    }
  }
  return best;
}

int64_t last_level_cache_from_context(const nlohmann::json& context) {
  if (!context.is_object()) return 0;
  auto it = context.find("caches");
  if (it == context.end() || !it->is_array()) return 0;
  int best_level = 0;
  int64_t best = 0;
  for (const auto& c : *it) {
    if (!c.is_object()) continue;
    if (c.value("type", "") == "Instruction") continue;
    auto lv = c.find("level");
    auto sz = c.find("size");
    if (lv == c.end() || sz == c.end() || !lv->is_number() || !sz->is_number()) continue;
    int level = static_cast<int>(lv->get<double>());
    int64_t size = static_cast<int64_t>(sz->get<double>());
    if (size > 0 && level > best_level) {
      best_level = level;
      best = size;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------

bool parse_loadavg(const std::string& text, CpuSnapshot& s) {
  std::istringstream in(text);
  std::string tasks;
  if (!(in >> s.load[0] >> s.load[1] >> s.load[2] >> tasks)) return false;
  size_t slash = tasks.find('/');
  if (slash == std::string::npos) return false;
  try {
    s.runnable = std::stoi(tasks.substr(0, slash));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

bool parse_proc_stat(const std::string& text, double ticks_per_second, CpuSnapshot& s) {
  if (!(ticks_per_second > 0)) return false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name;
    ls >> name;
    if (name != "cpu") continue;
    // user nice system idle iowait irq softirq steal guest guest_nice (guest time is already
    // inside user and nice)
    double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int got = 0;
    while (got < 8 && ls >> v[got]) ++got;
    if (got < 4) return false;
    s.busy_seconds = (v[0] + v[1] + v[2] + v[5] + v[6]) / ticks_per_second;
    s.steal_seconds = v[7] / ticks_per_second;
    return true;
  }
  return false;
}

CpuSnapshot take_cpu_snapshot() {
  CpuSnapshot s;
  s.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    s.own_cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                        static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  bool a = parse_loadavg(read_small("/proc/loadavg"), s);
  bool b = parse_proc_stat(read_small("/proc/stat"), static_cast<double>(sysconf(_SC_CLK_TCK)), s);
  s.ok = a && b;
  return s;
}

MachineLoad machine_load(const CpuSnapshot& start, const CpuSnapshot& end, int cores) {
  MachineLoad m;
  m.cores = cores;
  m.start = start;
  m.end = end;
  m.loaded_at_start = start.ok && cores > 0 && start.load[0] > cores;
  if (!start.ok || !end.ok || cores <= 0) return m;
  double wall = end.wall_seconds - start.wall_seconds;
  double busy = end.busy_seconds - start.busy_seconds;
  double own = end.own_cpu_seconds - start.own_cpu_seconds;
  double steal = end.steal_seconds - start.steal_seconds;
  m.other_cpu_seconds = std::max(0.0, busy - own);
  if (wall > 0) m.other_fraction = (m.other_cpu_seconds + std::max(0.0, steal)) / (wall * cores);
  m.contended = m.other_fraction > kContendedFraction;
  return m;
}

nlohmann::json machine_load_json(const MachineLoad& m) {
  auto snap = [](const CpuSnapshot& s) -> nlohmann::json {
    if (!s.ok) return nullptr;
    return {{"load_avg", {s.load[0], s.load[1], s.load[2]}}, {"runnable", s.runnable}};
  };
  bool both = m.start.ok && m.end.ok;
  auto num = [both](double v) { return both ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"cores", m.cores},
          {"start", snap(m.start)},
          {"end", snap(m.end)},
          {"seconds", num(m.end.wall_seconds - m.start.wall_seconds)},
          {"own_cpu_seconds", num(m.end.own_cpu_seconds - m.start.own_cpu_seconds)},
          {"other_cpu_seconds", num(m.other_cpu_seconds)},
          {"steal_seconds", num(m.end.steal_seconds - m.start.steal_seconds)},
          {"other_fraction", num(m.other_fraction)},
          {"loaded_at_start", m.loaded_at_start},
          {"contended", m.contended}};
}

std::string loaded_warning(const CpuSnapshot& start, int cores) {
  if (!start.ok || cores <= 0 || !(start.load[0] > cores)) return "";
  return "the machine is loaded: load average " + fmt("%.2f", start.load[0]) +
         " (1 min) is above its " + std::to_string(cores) +
         " cores; other processes compete for the CPUs and the timings will be noisy";
}

}  // namespace sb
