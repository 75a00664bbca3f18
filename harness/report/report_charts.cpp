#include "report/report_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "results/analysis.h"
#include "support/diag.h"
#include "results/stats.h"

namespace sb {

namespace {

using json = nlohmann::json;

json num_or_null(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}


// The rate of the point's unit at `seconds` per call.
double rate_at(const BenchRecord& r, const std::string& unit, double seconds) {
  if (seconds <= 0) return 0;
  return (unit == "GFLOP/s" ? r.flops : r.bytes) / seconds * 1e-9;
}

}  // namespace

double quantile(std::vector<double> v, double q) {
  SB_ASSERT(!v.empty(), "quantile of an empty sample");
  std::sort(v.begin(), v.end());
  double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  size_t i = static_cast<size_t>(std::floor(pos));
  size_t j = std::min(i + 1, v.size() - 1);
  double f = pos - static_cast<double>(i);
  return v[i] * (1 - f) + v[j] * f;
}

RatioInterval ratio_of_medians(const std::vector<double>& a, const std::vector<double>& b,
                               double level, int resamples, uint64_t seed) {
  SB_ASSERT(!a.empty() && !b.empty(), "ratio of medians of an empty sample");
  RatioInterval out;
  double mb = median(b);
  SB_ASSERT(mb > 0, "ratio of medians over a non-positive median");
  out.ratio = median(a) / mb;
  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  std::vector<double> ra(a.size()), rb(b.size());
  std::uniform_int_distribution<size_t> pick_a(0, a.size() - 1), pick_b(0, b.size() - 1);
  for (int i = 0; i < resamples; ++i) {
    for (double& x : ra) x = a[pick_a(rng)];
    for (double& x : rb) x = b[pick_b(rng)];
    double d = median(rb);
    if (d > 0) ratios.push_back(median(ra) / d);
  }
  if (ratios.empty()) {
    out.lo = out.hi = out.ratio;
    return out;
  }
  double tail = (1 - level) / 2;
  out.lo = quantile(ratios, tail);
  out.hi = quantile(ratios, 1 - tail);
  return out;
}

void add_chart_data(json& data, const std::vector<const StoredRun*>& runs,
                    const CompareOptions& opt) {
  data["caches"] = json::array();
  data["overview"] = {{"best", json::array()}, {"languages", json::array()}};
  if (runs.empty()) return;
  const StoredRun& latest = *runs.back();

  // Caches of the latest run that hold data.
  const json& ctx = latest.context;
  if (ctx.is_object() && ctx.contains("caches") && ctx["caches"].is_array()) {
    for (const auto& c : ctx["caches"]) {
      if (!c.is_object()) continue;
      std::string type = c.value("type", "");
      if (type == "Instruction") continue;
      if (!c.contains("size") || !c["size"].is_number() || !c.contains("level") ||
          !c["level"].is_number_integer())
        continue;
      double bytes = c["size"].get<double>();
      if (bytes <= 0) continue;
      data["caches"].push_back({{"level", c["level"]}, {"type", type}, {"bytes", bytes}});
    }
  }

  // The latest run's measured cases by key.
  std::map<std::string, const StoredBenchmark*> by_key;
  for (const auto& b : latest.benchmarks)
    if (b.record.status == BenchStatus::Measured && b.record.seconds > 0 && !b.samples.empty())
      by_key[match_key(b.record.kernel, b.record.backend, b.record.variant, b.record.sizes)] = &b;
  // The fastest case of each backend at each kernel and size.
  std::map<std::string, const StoredBenchmark*> fastest_at;  // "kernel/backend/sorted sizes"
  for (const auto& [key, b] : by_key) {
    const BenchRecord& r = b->record;
    std::string fkey = r.kernel + "/" + r.backend + "/" + sorted_sizes(r.sizes);
    auto it = fastest_at.find(fkey);
    if (it == fastest_at.end() || r.seconds < it->second->record.seconds) fastest_at[fkey] = b;
  }
  auto fastest = [&](const std::string& kernel, const std::string& backend,
                     const std::string& sizes) -> const StoredBenchmark* {
    auto it = fastest_at.find(kernel + "/" + backend + "/" + sorted_sizes(sizes));
    return it == fastest_at.end() ? nullptr : it->second;
  };

  for (auto& [kname, k] : data["kernels"].items()) {
    // Points: working set, repetitions, bands and speed-ups.
    for (auto& p : k["points"]) {
      auto it = by_key.find(match_key(kname, p.value("backend", ""), p.value("variant", ""),
                                     p.value("sizes", "")));
      if (it == by_key.end()) continue;
      const StoredBenchmark& b = *it->second;
      const BenchRecord& r = b.record;
      std::string unit = p.value("unit", "");
      p["working_set_bytes"] = r.bytes > 0 ? json(r.bytes) : json(nullptr);
      p["samples"] = b.samples;
      p["rate_lo"] = num_or_null(rate_at(r, unit, quantile(b.samples, 0.75)));
      p["rate_hi"] = num_or_null(rate_at(r, unit, quantile(b.samples, 0.25)));
      p["device"] = device_name(device_of(r.backend));
      json vs_naive = nullptr, vs_cpp = nullptr;
      if (!r.naive_variant.empty()) {
        auto n = by_key.find(match_key(kname, r.backend, r.naive_variant, r.sizes));
        if (n != by_key.end()) vs_naive = n->second->record.seconds / r.seconds;
      }
      if (const StoredBenchmark* cpp = fastest(kname, native_backend(Device::Cpu).name, r.sizes))
        vs_cpp = cpp->record.seconds / r.seconds;
      p["vs_naive"] = vs_naive;
      p["vs_cpp"] = vs_cpp;
    }

    // The largest size (by working set, then by the product of sizes) of each backend, and the
    // kernel's largest size overall.
    std::map<std::string, const StoredBenchmark*> largest;  // backend -> a case at its largest
    std::vector<std::string> backend_order;
    const StoredBenchmark* overall = nullptr;
    auto bigger = [](const StoredBenchmark* a, const StoredBenchmark* b) {
      return a->record.bytes > b->record.bytes;
    };
    for (const auto& b : latest.benchmarks) {
      const BenchRecord& r = b.record;
      if (r.kernel != kname || r.status != BenchStatus::Measured || r.seconds <= 0 ||
          b.samples.empty())
        continue;
      auto it = largest.find(r.backend);
      if (it == largest.end()) {
        backend_order.push_back(r.backend);
        largest[r.backend] = &b;
      } else if (bigger(&b, it->second)) {
        it->second = &b;
      }
      if (!overall || bigger(&b, overall)) overall = &b;
    }
    for (const std::string& backend : backend_order) {
      const StoredBenchmark* best = fastest(kname, backend, largest[backend]->record.sizes);
      if (!best) continue;
      const BenchRecord& r = best->record;
      std::string unit;
      double rate = bound_rate(r.roofline.bound, r.gbps, r.gflops, r.bytes, &unit);
      data["overview"]["best"].push_back(
          {{"kernel", kname},
           {"backend", backend},
           {"variant", r.variant},
           {"sizes", r.sizes},
           {"device", device_name(device_of(backend))},
           {"seconds", r.seconds},
           {"working_set_bytes", r.bytes > 0 ? json(r.bytes) : json(nullptr)},
           {"intensity", r.bytes > 0 && r.flops > 0 ? json(r.flops / r.bytes) : json(nullptr)},
           {"gbps", r.bytes > 0 ? json(r.gbps) : json(nullptr)},
           {"gflops", r.flops > 0 ? json(r.gflops) : json(nullptr)},
           {"rate", num_or_null(rate)},
           {"unit", unit},
           {"bound", bound_name(r.roofline.bound)},
           {"fraction", r.roofline_fraction ? json(*r.roofline_fraction) : json(nullptr)}});
    }

    // Distributions of the repetitions at the kernel's largest size.
    json dist = {{"sizes", overall ? json(overall->record.sizes) : json(nullptr)},
                 {"rows", json::array()}};
    if (overall) {
      std::string want = sorted_sizes(overall->record.sizes);
      for (const auto& b : latest.benchmarks) {
        const BenchRecord& r = b.record;
        if (r.kernel != kname || r.status != BenchStatus::Measured || b.samples.empty() ||
            sorted_sizes(r.sizes) != want)
          continue;
        dist["rows"].push_back({{"backend", r.backend},
                                {"variant", r.variant},
                                {"median", r.seconds},
                                {"samples", b.samples}});
      }
    }
    k["distribution"] = dist;

    // Every backend with a baseline in its record against that baseline (another language
    // against C++, a GPU language against CUDA) at the largest size both measured.
    for (const BackendRecord* rec : compared_backends()) {
      const std::string& other = rec->name;
      const std::string& base = rec->baseline;
      const StoredBenchmark* at = nullptr;  // a case of `other` at the largest shared size
      for (const auto& b : latest.benchmarks) {
        const BenchRecord& r = b.record;
        if (r.kernel != kname || r.backend != other || r.status != BenchStatus::Measured ||
            r.seconds <= 0 || b.samples.empty() || !fastest(kname, base, r.sizes))
          continue;
        if (!at || bigger(&b, at)) at = &b;
      }
      if (!at) continue;
      const StoredBenchmark* o = fastest(kname, other, at->record.sizes);
      const StoredBenchmark* c = fastest(kname, base, at->record.sizes);
      RatioInterval ci = ratio_of_medians(c->samples, o->samples);
      data["overview"]["languages"].push_back({{"kernel", kname},
                                               {"language", other},
                                               {"against", base},
                                               {"sizes", at->record.sizes},
                                               {"base_variant", c->record.variant},
                                               {"other_variant", o->record.variant},
                                               {"base_seconds", c->record.seconds},
                                               {"other_seconds", o->record.seconds},
                                               {"base_repetitions", c->samples.size()},
                                               {"other_repetitions", o->samples.size()},
                                               {"ratio", num_or_null(ci.ratio)},
                                               {"lo", num_or_null(ci.lo)},
                                               {"hi", num_or_null(ci.hi)}});
    }
  }

  // History of every case across the runs: kernel -> backend/variant -> sizes.
  struct Series {
    std::string sizes;  // as last seen (spec order)
    double bytes = 0;
    json points = json::array();
    const StoredBenchmark* previous = nullptr;
  };
  struct VariantHistory {
    std::string backend, variant;
    std::vector<std::string> size_order;
    std::map<std::string, Series> by_size;
  };
  std::map<std::string, std::vector<std::string>> variant_order;  // kernel -> backend/variant
  std::map<std::string, std::map<std::string, VariantHistory>> hist;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& b : runs[i]->benchmarks) {
      const BenchRecord& r = b.record;
      if (r.status != BenchStatus::Measured || r.seconds <= 0 || b.samples.empty()) continue;
      std::string vkey = r.backend + "/" + r.variant;
      auto& per_kernel = hist[r.kernel];
      auto vit = per_kernel.find(vkey);
      if (vit == per_kernel.end()) {
        variant_order[r.kernel].push_back(vkey);
        vit = per_kernel.emplace(vkey, VariantHistory{r.backend, r.variant, {}, {}}).first;
      }
      VariantHistory& vh = vit->second;
      std::string skey = sorted_sizes(r.sizes);
      auto sit = vh.by_size.find(skey);
      if (sit == vh.by_size.end()) {
        vh.size_order.push_back(skey);
        sit = vh.by_size.emplace(skey, Series{}).first;
      }
      Series& s = sit->second;
      s.sizes = r.sizes;
      if (r.bytes > 0) s.bytes = r.bytes;
      std::string verdict;
      if (s.previous)
        verdict = verdict_name(judge_samples(s.previous->samples, b.samples, opt).verdict);
      std::transform(verdict.begin(), verdict.end(), verdict.begin(), ::tolower);
      s.previous = &b;
      s.points.push_back({{"run", i},
                          {"seconds", r.seconds},
                          {"lo", quantile(b.samples, 0.25)},
                          {"hi", quantile(b.samples, 0.75)},
                          {"repetitions", b.samples.size()},
                          {"verdict", verdict}});
    }
  }
  for (auto& [kname, k] : data["kernels"].items()) {
    k["history"] = json::array();
    auto hk = hist.find(kname);
    if (hk == hist.end()) continue;
    for (const std::string& vkey : variant_order[kname]) {
      VariantHistory& vh = hk->second[vkey];
      // Sizes by working set, smallest first.
      std::vector<std::string> order = vh.size_order;
      std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
        return vh.by_size[a].bytes < vh.by_size[b].bytes;
      });
      json sizes = json::array();
      for (const std::string& skey : order) {
        Series& s = vh.by_size[skey];
        sizes.push_back({{"sizes", s.sizes},
                         {"working_set_bytes", s.bytes > 0 ? json(s.bytes) : json(nullptr)},
                         {"points", std::move(s.points)}});
      }
      k["history"].push_back(
          {{"backend", vh.backend}, {"variant", vh.variant}, {"series", std::move(sizes)}});
    }
  }
}

}  // namespace sb
