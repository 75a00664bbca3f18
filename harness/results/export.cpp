#include "results/export.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "results/analysis.h"

namespace sb {

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string context_text(const nlohmann::json& ctx, const char* key) {
  if (!ctx.is_object()) return "";
  auto it = ctx.find(key);
  return it != ctx.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string results_csv(const std::vector<StoredRun>& runs) {
  std::ostringstream out;
  for (size_t i = 0; i < kCsvColumns.size(); ++i) out << (i ? "," : "") << kCsvColumns[i];
  out << "\r\n";
  for (const StoredRun& run : runs) {
    std::string stamp = std::filesystem::path(run.path).stem().string();
    std::string prefix = csv_field(stamp) + "," + csv_field(run.date()) + "," +
                         csv_field(context_text(run.context, "host_name")) + "," +
                         csv_field(context_text(run.context, "git_commit"));
    for (const StoredBenchmark& b : run.benchmarks) {
      const BenchRecord& r = b.record;
      if (r.status != BenchStatus::Measured) continue;
      std::string item = prefix + "," + csv_field(r.kernel) + "," + csv_field(r.backend) + "," +
                         csv_field(r.variant) + "," + csv_field(r.strategy) + "," +
                         csv_field(r.sizes) + "," + num(r.bytes) + "," + num(r.flops);
      for (size_t k = 0; k < b.samples.size(); ++k) {
        double t = b.samples[k];
        out << item << "," << k << "," << b.samples.size() << "," << num(t) << ","
            << (t > 0 && r.bytes > 0 ? num(r.bytes / t * 1e-9) : "") << ","
            << (t > 0 && r.flops > 0 ? num(r.flops / t * 1e-9) : "") << ","
            << bound_name(r.roofline.bound) << "\r\n";
      }
    }
  }
  return out.str();
}

}  // namespace sb
