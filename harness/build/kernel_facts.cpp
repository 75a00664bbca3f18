#include "build/kernel_facts.h"

#include <cctype>
#include <charconv>
#include <optional>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

namespace sb {

namespace {

constexpr std::string_view kInfo = "ptxas info";

Error report_error(int line, const std::string& msg) {
  return Error{Loc{"ptxas report", line, 0}, msg, ""};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The message of a "ptxas info    : <message>" line, or nullopt for any other line.
std::optional<std::string_view> info_message(std::string_view line) {
  line = trim(line);
  if (line.substr(0, kInfo.size()) != kInfo) return std::nullopt;
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return trim(line.substr(colon + 1));
}

// The stack-frame line under "Function properties for X".
bool is_properties_detail(std::string_view line) {
  return trim(line).find("bytes stack frame") != std::string_view::npos;
}

// The number just before `unit` in `text` ("39 registers" for unit "registers"): nullopt when
// `unit` is absent, an error message when the number is.
std::optional<int64_t> number_before(std::string_view text, std::string_view unit,
                                     std::string& bad) {
  size_t at = 0;
  for (;;) {
    at = text.find(unit, at);
    if (at == std::string_view::npos) return std::nullopt;
    // A whole word: "bytes smem" must not match inside "bytes smemx".
    size_t end = at + unit.size();
    bool word_end = end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end]));
    if (word_end && at >= 2 && text[at - 1] == ' ') break;
    at = end;
  }
  size_t stop = at - 1;  // the space before the unit
  size_t start = stop;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(text[start - 1]))) --start;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data() + start, text.data() + stop, v);
  if (start == stop || ec != std::errc() || p != text.data() + stop) {
    bad = "no number before '" + std::string(unit) + "'";
    return std::nullopt;
  }
  return v;
}

// Parses "sm_80" (or "sm_90a"): the digits; 0 when it is not such a name.
int parse_arch(std::string_view s) {
  if (s.substr(0, 3) != "sm_") return 0;
  s.remove_prefix(3);
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data() || v <= 0) return 0;
  for (; p != s.data() + s.size(); ++p)
    if (!std::isalpha(static_cast<unsigned char>(*p))) return 0;
  return v;
}

// The text between the first pair of single quotes after `from`, and where it ends.
std::optional<std::pair<std::string_view, size_t>> quoted(std::string_view s, size_t from) {
  size_t a = s.find('\'', from);
  if (a == std::string_view::npos) return std::nullopt;
  size_t b = s.find('\'', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  return std::make_pair(s.substr(a + 1, b - a - 1), b + 1);
}

}  // namespace

Result<std::vector<KernelFacts>> parse_ptxas_report(std::string_view output) {
  std::vector<KernelFacts> out;
  std::set<std::pair<std::string, int>> seen;
  bool open = false;        // out.back() is the entry being reported
  bool used_seen = false;   // ... and its "Used N registers" line was read
  int open_line = 0;
  int expect_detail = 0;    // 1: the next line is the open entry's stack frame; 2: another's
  int line_no = 0;
  auto close = [&]() -> Status {
    if (open && !used_seen)
      return report_error(open_line, "entry function '" + out.back().symbol +
                                         "' has no \"Used N registers\" line");
    open = false;
    return {};
  };
  size_t pos = 0;
  while (pos < output.size()) {
    size_t nl = output.find('\n', pos);
    std::string_view line =
        output.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? output.size() : nl + 1;
    ++line_no;
    if (expect_detail) {
      int which = expect_detail;
      expect_detail = 0;
      if (!is_properties_detail(line))
        return report_error(line_no, "expected the stack frame and spills under "
                                     "\"Function properties\", got: " + std::string(trim(line)));
      if (which == 2) continue;
      std::string bad;
      auto stack = number_before(line, "bytes stack frame", bad);
      auto stores = number_before(line, "bytes spill stores", bad);
      auto loads = number_before(line, "bytes spill loads", bad);
      if (!bad.empty() || !stack || !stores || !loads)
        return report_error(line_no, "cannot read the stack frame and spills: " +
                                         (bad.empty() ? std::string(trim(line)) : bad));
      out.back().stack_bytes = *stack;
      out.back().spill_store_bytes = *stores;
      out.back().spill_load_bytes = *loads;
      continue;
    }
    auto msg = info_message(line);
    if (!msg) continue;
    std::string_view m = *msg;
    if (m.rfind("Compiling entry function", 0) == 0) {
      if (Status s = close(); !s.ok()) return s.error();
      auto sym = quoted(m, 0);
      auto arch = sym ? quoted(m, sym->second) : std::nullopt;
      int a = arch ? parse_arch(arch->first) : 0;
      if (!sym || sym->first.empty() || a == 0)
        return report_error(line_no, "cannot read the entry function and architecture of: " +
                                         std::string(m));
      KernelFacts f;
      f.symbol = std::string(sym->first);
      f.arch = a;
      if (!seen.insert({f.symbol, a}).second)
        return report_error(line_no, "entry function '" + f.symbol + "' reported twice for sm_" +
                                         std::to_string(a));
      out.push_back(std::move(f));
      open = true;
      used_seen = false;
      open_line = line_no;
    } else if (m.rfind("Function properties for", 0) == 0) {
      std::string_view name = trim(m.substr(std::string_view("Function properties for").size()));
      expect_detail = open && !used_seen && name == out.back().symbol ? 1 : 2;
    } else if (m.rfind("Used ", 0) == 0) {
      if (!open || used_seen)
        return report_error(line_no, "\"" + std::string(m) + "\" outside an entry function");
      std::string bad;
      auto regs = number_before(m, "registers", bad);
      auto bars = number_before(m, "barriers", bad);
      auto smem = number_before(m, "bytes smem", bad);
      if (!bad.empty() || !regs)
        return report_error(line_no, "cannot read the registers of: " + std::string(m) +
                                         (bad.empty() ? "" : " (" + bad + ")"));
      out.back().registers = static_cast<int>(*regs);
      out.back().barriers = static_cast<int>(bars.value_or(0));
      out.back().shared_bytes = smem.value_or(0);
      used_seen = true;
    }
  }
  if (expect_detail)
    return report_error(line_no, "the report ends under \"Function properties\"");
  if (Status s = close(); !s.ok()) return s.error();
  return out;
}

std::string strip_ptxas_report(std::string_view output) {
  std::string out;
  bool detail = false;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t nl = output.find('\n', pos);
    size_t end = nl == std::string_view::npos ? output.size() : nl + 1;
    std::string_view line = output.substr(pos, end - pos);
    pos = end;
    bool drop = detail && is_properties_detail(line);
    detail = false;
    if (auto m = info_message(line)) {
      drop = true;
      detail = m->rfind("Function properties for", 0) == 0;
    }
    if (!drop) out += line;
  }
  return out;
}

namespace {

// Reads <length><identifier> at `at`; advances it.
std::optional<std::string> source_name(const std::string& s, size_t& at) {
  size_t start = at;
  while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) ++at;
  if (at == start) return std::nullopt;
  size_t len = 0;
  auto [p, ec] = std::from_chars(s.data() + start, s.data() + at, len);
  if (ec != std::errc() || len == 0 || len > s.size() - at) return std::nullopt;
  std::string id = s.substr(at, len);
  at += len;
  return id;
}

}  // namespace

std::string readable_kernel_name(const std::string& symbol) {
  if (symbol.rfind("_Z", 0) != 0) return symbol;
  size_t at = 2;
  if (at < symbol.size() && symbol[at] == 'L') ++at;  // internal linkage (a static kernel)
  std::string name;
  if (at < symbol.size() && symbol[at] == 'N') {
    ++at;
    for (;;) {
      if (at < symbol.size() && symbol[at] == 'E') break;
      if (at < symbol.size() && symbol[at] == 'I') {
        name += "<…>";
        break;
      }
      auto id = source_name(symbol, at);
      if (!id) return symbol;
      name += (name.empty() ? "" : "::") + *id;
    }
  } else {
    auto id = source_name(symbol, at);
    if (!id) return symbol;
    name = *id;
    if (at < symbol.size() && symbol[at] == 'I') name += "<…>";
  }
  return name.empty() ? symbol : name;
}

std::string facts_file_text(const std::vector<KernelFacts>& facts, const std::string& error,
                            const std::string& module_hash) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelFacts& f : facts)
    kernels.push_back({{"symbol", f.symbol},
                       {"arch", f.arch},
                       {"registers", f.registers},
                       {"barriers", f.barriers},
                       {"shared_bytes", f.shared_bytes},
                       {"stack_bytes", f.stack_bytes},
                       {"spill_store_bytes", f.spill_store_bytes},
                       {"spill_load_bytes", f.spill_load_bytes}});
  nlohmann::json doc = {{"format", "specbench-kernel-facts"},
                        {"version", 1},
                        {"module", module_hash},
                        {"error", error},
                        {"kernels", kernels}};
  return doc.dump(1) + "\n";
}

Result<std::vector<KernelFacts>> read_facts_file_text(std::string_view text,
                                                      const std::string& module_hash,
                                                      std::string& error) {
  auto bad = [](const std::string& why) { return Error{Loc{}, why, ""}; };
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return bad("it is not a JSON object");
  if (doc.value("format", "") != "specbench-kernel-facts" || !doc.contains("version") ||
      doc["version"] != 1)
    return bad("it is not a version-1 specbench kernel facts file");
  if (!doc.contains("module") || !doc["module"].is_string() || doc["module"] != module_hash)
    return bad("it was written for another module (its hash does not match)");
  if (!doc.contains("error") || !doc["error"].is_string()) return bad("it has no 'error' string");
  if (!doc.contains("kernels") || !doc["kernels"].is_array()) return bad("it has no 'kernels' list");
  std::vector<KernelFacts> out;
  for (const auto& k : doc["kernels"]) {
    auto count = [&k](const char* key, int64_t& v) {
      if (!k.contains(key) || !k[key].is_number_integer() || k[key].get<int64_t>() < 0) return false;
      v = k[key].get<int64_t>();
      return true;
    };
    KernelFacts f;
    int64_t arch = 0, regs = 0, bars = 0;
    if (!k.is_object() || !k.contains("symbol") || !k["symbol"].is_string() ||
        !count("arch", arch) || !count("registers", regs) || !count("barriers", bars) ||
        !count("shared_bytes", f.shared_bytes) || !count("stack_bytes", f.stack_bytes) ||
        !count("spill_store_bytes", f.spill_store_bytes) ||
        !count("spill_load_bytes", f.spill_load_bytes) || arch == 0 || arch > 1000 ||
        regs > 1000 || bars > 1000)
      return bad("kernel " + std::to_string(out.size()) + " is malformed");
    f.symbol = k["symbol"].get<std::string>();
    f.arch = static_cast<int>(arch);
    f.registers = static_cast<int>(regs);
    f.barriers = static_cast<int>(bars);
    out.push_back(std::move(f));
  }
  error = doc["error"].get<std::string>();
  return out;
}

}  // namespace sb
