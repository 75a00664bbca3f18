#include "results/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "backends/emitter.h"
#include "results/noise.h"
#include "run/runner.h"

namespace sb {

namespace {

nlohmann::json opt_json(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json rate_json(double v) {
  return v > 0 && std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

DeviceLimits device_limits(const ProbeResults& probes, const std::string& device) {
  DeviceLimits d;
  if (!probes.ran) {
    d.missing = probes.reason.empty() ? "probes not run" : probes.reason;
    return d;
  }
  std::string missing;
  // The bandwidth limit: the best of the plain triad, the non-temporal triad and the
  // non-temporal copy (the gpu has only the plain triad). A kernel with streaming stores moves no
  // line for ownership, and is measured against the probes that do not either; the copy is
  // what one read stream with a prefetch reaches, which on some machines is more than the triad.
  for (const char* name : {"triad", "triad_nt", "copy_nt"}) {
    const ProbeResult* t = probes.find(device, name);
    if (t && t->ok && t->rate > d.bandwidth_gbps) {
      d.bandwidth_gbps = t->rate;
      d.bandwidth_probe = name;
      d.bandwidth_runs = t->runs;
    }
  }
  if (const ProbeResult* r = probes.find(device, "read"); r && r->ok) d.read_gbps = r->rate;
  if (d.bandwidth_gbps == 0) {
    const ProbeResult* t = probes.find(device, "triad");
    missing = t ? t->reason : "no triad probe";
  }
  for (const char* name : {"sgemm", "fma"}) {
    const ProbeResult* p = probes.find(device, name);
    if (p && p->ok && p->rate > d.compute_gflops) {
      d.compute_gflops = p->rate;
      d.compute_probe = name;
      d.compute_runs = p->runs;
    }
  }
  if (d.compute_gflops == 0 && missing.empty()) {
    const ProbeResult* p = probes.find(device, "sgemm");
    missing = p ? p->reason : "no compute probe";
  }
  d.missing = missing;
  return d;
}

}  // namespace

double DeviceLimits::balance() const {
  return bandwidth_gbps > 0 && compute_gflops > 0 ? compute_gflops / bandwidth_gbps : 0;
}

namespace {

double drift(const std::vector<double>& runs) {
  if (runs.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(runs.begin(), runs.end());
  return *hi > 0 ? (*hi - *lo) / *hi : 0;
}

}  // namespace

double DeviceLimits::bandwidth_drift() const {
  return drift(bandwidth_runs);
}

double DeviceLimits::compute_drift() const {
  return drift(compute_runs);
}

bool DeviceLimits::unsteady() const {
  return bandwidth_drift() > kProbeDriftLimit || compute_drift() > kProbeDriftLimit;
}

MachineLimits limits_from_probes(const ProbeResults& probes) {
  return MachineLimits{device_limits(probes, "cpu"), device_limits(probes, "gpu")};
}

bool is_gpu_backend(const std::string& backend) {
  return device_of(backend) == Device::Gpu;
}

bool is_vendor_backend(const std::string& backend) {
  const BackendRecord* r = find_backend(backend);
  return r && r->vendor;
}

const DeviceLimits& limits_for(const MachineLimits& limits, const std::string& backend) {
  return is_gpu_backend(backend) ? limits.gpu : limits.cpu;
}

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::Memory:
      return "memory";
    case Bound::Compute:
      return "compute";
    case Bound::Unknown:
      break;
  }
  return "unknown";
}

Roofline choose_bound(double bytes, double flops, const DeviceLimits& limits) {
  Roofline r;
  r.intensity = bytes > 0 ? flops / bytes : 0;
  if (bytes > 0 && flops <= 0) {
    r.bound = Bound::Memory;
  } else if (flops > 0 && bytes <= 0) {
    r.bound = Bound::Compute;
  } else if (bytes > 0 && flops > 0 && limits.balance() > 0) {
    r.bound = r.intensity < limits.balance() ? Bound::Memory : Bound::Compute;
  }
  if (r.bound == Bound::Memory) r.limit = limits.bandwidth_gbps;
  if (r.bound == Bound::Compute) r.limit = limits.compute_gflops;
  return r;
}

std::optional<double> roofline_fraction(const Roofline& r, double gbps, double gflops) {
  if (r.bound == Bound::Unknown || !(r.limit > 0)) return std::nullopt;
  double achieved = r.bound == Bound::Memory ? gbps : gflops;
  if (!std::isfinite(achieved)) return std::nullopt;
  return achieved / r.limit;
}

double bound_rate(Bound b, double gbps, double gflops, double bytes, std::string* unit) {
  bool memory = b == Bound::Memory || (b == Bound::Unknown && bytes > 0);
  if (unit) *unit = memory ? "GB/s" : "GFLOP/s";
  return memory ? gbps : gflops;
}

std::string suspect_of(const Roofline& r, double gbps, double gflops, double bytes,
                       std::optional<double> fraction, int64_t llc_bytes) {
  if (r.bound == Bound::Unknown || !(r.limit > 0)) return "";
  std::string unit;
  double rate = bound_rate(r.bound, gbps, gflops, bytes, &unit);
  char rate_text[64], limit_text[64];
  std::snprintf(rate_text, sizeof rate_text, "%.3g %s", rate, unit.c_str());
  std::snprintf(limit_text, sizeof limit_text, "%.3g %s", r.limit, unit.c_str());
  if (r.bound == Bound::Compute) return suspect_compute_reason(fraction, rate_text, limit_text);
  return suspect_reason(fraction, bytes, llc_bytes, rate_text, limit_text);
}

std::vector<SummaryRow> summarize(const std::vector<BenchRecord>& records) {
  // Fastest measured record per kernel/backend/size, first-seen order.
  std::vector<const BenchRecord*> best;
  std::map<std::string, size_t> index;
  // Every measured record by kernel/backend/size/variant, for the naive lookup.
  std::map<std::string, const BenchRecord*> by_variant;
  for (const BenchRecord& r : records) {
    if (r.status != BenchStatus::Measured || !(r.seconds > 0)) continue;
    by_variant[r.kernel + "/" + r.backend + "/" + r.sizes + "/" + r.variant] = &r;
    std::string key = r.kernel + "/" + r.backend + "/" + r.sizes;
    auto it = index.find(key);
    if (it == index.end()) {
      index[key] = best.size();
      best.push_back(&r);
    } else if (r.seconds < best[it->second]->seconds) {
      best[it->second] = &r;
    }
  }
  std::vector<SummaryRow> rows;
  for (const BenchRecord* b : best) {
    SummaryRow s;
    s.kernel = b->kernel;
    s.sizes = b->sizes;
    s.backend = b->backend;
    s.variant = b->variant;
    s.seconds = b->seconds;
    s.gbps = b->gbps;
    s.gflops = b->gflops;
    s.roofline = b->roofline;
    s.rate = bound_rate(b->roofline.bound, b->gbps, b->gflops, b->bytes, &s.unit);
    s.fraction = roofline_fraction(b->roofline, b->gbps, b->gflops);
    s.naive_variant = b->naive_variant;
    s.noisy = b->spread.noisy;
    s.noise = describe_noise(b->spread);
    s.suspect = b->suspect;
    auto n =
        by_variant.find(b->kernel + "/" + b->backend + "/" + b->sizes + "/" + b->naive_variant);
    if (!b->naive_variant.empty() && n != by_variant.end())
      s.vs_naive = n->second->seconds / b->seconds;
    if (!is_vendor_backend(b->backend)) {
      const BenchRecord* vendor = nullptr;
      for (const BenchRecord* v : best) {
        if (!is_vendor_backend(v->backend) || v->kernel != b->kernel || v->sizes != b->sizes ||
            is_gpu_backend(v->backend) != is_gpu_backend(b->backend))
          continue;
        if (!vendor || v->seconds < vendor->seconds) vendor = v;
      }
      if (vendor) {
        s.vendor = vendor->backend + "/" + vendor->variant;
        s.vs_vendor = vendor->seconds / b->seconds;
      }
    }
    rows.push_back(std::move(s));
  }
  return rows;
}

nlohmann::json limits_json(const MachineLimits& limits) {
  auto one = [](const DeviceLimits& d) {
    nlohmann::json j;
    j["bandwidth_gbps"] = rate_json(d.bandwidth_gbps);
    j["compute_gflops"] = rate_json(d.compute_gflops);
    j["bandwidth_probe"] =
        d.bandwidth_probe.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.bandwidth_probe);
    j["compute_probe"] =
        d.compute_probe.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.compute_probe);
    j["balance_flops_per_byte"] = rate_json(d.balance());
    j["read_gbps"] = rate_json(d.read_gbps);
    j["bandwidth_runs"] = d.bandwidth_runs;
    j["compute_runs"] = d.compute_runs;
    j["bandwidth_drift"] = d.bandwidth_drift();
    j["compute_drift"] = d.compute_drift();
    j["unsteady"] = d.unsteady();
    if (!d.missing.empty()) j["missing"] = d.missing;
    return j;
  };
  return {{"cpu", one(limits.cpu)}, {"gpu", one(limits.gpu)}};
}

nlohmann::json summary_json(const std::vector<SummaryRow>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const SummaryRow& s : rows) {
    nlohmann::json j;
    j["kernel"] = s.kernel;
    j["sizes"] = s.sizes;
    j["backend"] = s.backend;
    j["variant"] = s.variant;
    j["seconds"] = s.seconds;
    j["gbps"] = rate_json(s.gbps);
    j["gflops"] = rate_json(s.gflops);
    j["bound"] = s.roofline.bound == Bound::Unknown ? nlohmann::json(nullptr)
                                                    : nlohmann::json(bound_name(s.roofline.bound));
    j["rate"] = rate_json(s.rate);
    j["unit"] = s.unit;
    j["roofline_fraction"] = opt_json(s.fraction);
    j["naive_variant"] = s.naive_variant;
    j["vs_naive"] = opt_json(s.vs_naive);
    j["vendor"] = s.vendor.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.vendor);
    j["vs_vendor"] = opt_json(s.vs_vendor);
    j["noisy"] = s.noisy;
    j["noise"] = s.noise;
    j["suspect"] = s.suspect.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.suspect);
    a.push_back(std::move(j));
  }
  return a;
}

std::vector<std::pair<std::string, std::string>> matched_strategies(const std::string& baseline,
                                                                    const std::string& other) {
  // A backend's strategies are its emitter's: its own, or its twin's for a simulator.
  auto emitter_of = [](const std::string& backend) {
    const BackendRecord* r = find_backend(backend);
    return find_emitter(r ? r->source : backend);
  };
  const Emitter* a = emitter_of(baseline);
  const Emitter* b = emitter_of(other);
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!a || !b) return pairs;
  const std::vector<StrategyInfo> theirs = b->strategies();
  for (const StrategyInfo& s : a->strategies())
    for (const StrategyInfo& t : theirs)
      if (s.algorithm == t.algorithm) pairs.emplace_back(s.name, t.name);
  return pairs;
}

namespace {

bool within_noise(const BenchRecord& a, const BenchRecord& b) {
  double noise = std::max(a.cv * a.seconds, b.cv * b.seconds);
  return std::abs(a.seconds - b.seconds) <= noise;
}

LanguageRow language_row(const std::string& kind, const BenchRecord& cpp, const BenchRecord& o) {
  LanguageRow r;
  r.kernel = cpp.kernel;
  r.sizes = cpp.sizes;
  r.kind = kind;
  r.language = o.backend;
  r.cpp_variant = cpp.backend + "/" + cpp.variant;
  r.other_variant = o.backend + "/" + o.variant;
  r.cpp_seconds = cpp.seconds;
  r.other_seconds = o.seconds;
  r.ratio = o.seconds > 0 ? cpp.seconds / o.seconds : 0;
  r.within_noise = within_noise(cpp, o);
  r.noisy = cpp.spread.noisy || o.spread.noisy;
  if (cpp.spread.noisy) r.noise = "C++: " + describe_noise(cpp.spread);
  if (o.spread.noisy)
    r.noise += (r.noise.empty() ? "" : "; ") + o.backend + ": " + describe_noise(o.spread);
  return r;
}

}  // namespace

std::vector<LanguageRow> compare_languages(const std::vector<BenchRecord>& records) {
  // Measured records per kernel and size, in first-seen order.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<const BenchRecord*>> by_case;
  for (const BenchRecord& r : records) {
    if (r.status != BenchStatus::Measured || r.seconds <= 0) continue;
    auto key = std::make_pair(r.kernel, r.sizes);
    if (!by_case.count(key)) order.push_back(key);
    by_case[key].push_back(&r);
  }
  auto fastest = [](const std::vector<const BenchRecord*>& rs,
                    const std::string& backend) -> const BenchRecord* {
    const BenchRecord* best = nullptr;
    for (const BenchRecord* r : rs)
      if (r->backend == backend && (!best || r->seconds < best->seconds)) best = r;
    return best;
  };
  std::vector<LanguageRow> rows;
  for (const auto& key : order) {
    const auto& rs = by_case[key];
    for (const BackendRecord* lang : compared_backends()) {
      const BenchRecord* base = fastest(rs, lang->baseline);
      const BenchRecord* other = fastest(rs, lang->name);
      if (!base || !other) continue;
      if (lang->device == Device::Gpu) {
        rows.push_back(language_row("gpu", *base, *other));
        continue;
      }
      rows.push_back(language_row("best", *base, *other));
      for (const auto& [cs, os] : matched_strategies(lang->baseline, lang->name)) {
        const BenchRecord* a = nullptr;
        const BenchRecord* b = nullptr;
        for (const BenchRecord* r : rs) {
          if (r->backend == lang->baseline && r->strategy == cs) a = r;
          if (r->backend == lang->name && r->strategy == os) b = r;
        }
        if (a && b) rows.push_back(language_row("matched", *a, *b));
      }
    }
  }
  return rows;
}

nlohmann::json languages_json(const std::vector<LanguageRow>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const LanguageRow& r : rows) {
    a.push_back({{"kernel", r.kernel},
                 {"sizes", r.sizes},
                 {"kind", r.kind},
                 {"language", r.language},
                 {"cpp_variant", r.cpp_variant},
                 {"other_variant", r.other_variant},
                 {"cpp_seconds", r.cpp_seconds},
                 {"other_seconds", r.other_seconds},
                 {"ratio", r.ratio},
                 {"within_noise", r.within_noise},
                 {"noisy", r.noisy},
                 {"noise", r.noise}});
  }
  return a;
}

}  // namespace sb
