// The `specbench` command line. Exit codes: 0 success; 1 a verification, build or benchmark
// failure (or stale files for `gen --check`, or a regression found by `compare` or `nightly`);
// 2 a user error (bad flag, unknown kernel or backend, bad spec, unreadable results file), printed
// without a stack trace.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <iomanip>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/console.h"
#include "check/typecheck.h"
#include "driver.h"
#include "results/export.h"
#include "backends/emitter.h"
#include "results/compare.h"
#include "results/history.h"
#include "results/history_format.h"
#include "results/results.h"
#include "run/blas_core.h"
#include "run/runner.h"
#include "run/runtime.h"
#include "support/safe_io.h"
#include "build/toolchain.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

struct Globals {
  std::string root;       // --root; empty: the current directory (resolve_root)
  std::string cache_dir;  // empty: $SPECBENCH_CACHE_DIR, else <root>/build/module-cache
  int jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string cuda_arch = "80,90";
  // --variant and --filter (build, verify, bench, run): which variants to take.
  std::vector<std::string> variants;  // names, or backend/name
  std::string filter;                 // a regular expression searched in kernel/backend/variant
};

// A user error: printed as "specbench: error: ..." and turned into exit code 2.
struct UserError {
  std::string message;
};

void progress(const std::string& line) {
  std::cerr << line << std::endl;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The tree a command reads and writes: --root as given, else the current directory when it holds
// specs/. Both, like spec paths, are taken relative to the current directory. Printed (stderr),
// so that a command never works on another checkout unnoticed.
std::string resolve_root(const std::string& asked) {
  std::error_code ec;
  fs::path root = asked.empty() ? fs::current_path(ec) : fs::absolute(asked, ec);
  if (ec) throw UserError{"cannot resolve the root '" + asked + "': " + ec.message()};
  if (asked.empty() && !fs::is_directory(root / "specs"))
    throw UserError{"no specs/ in the current directory (" + root.string() +
                    "): run specbench from a specbench checkout, or pass --root DIR, the folder "
                    "holding specs/ and generated/"};
  root = root.lexically_normal();
  std::string text = root.string();
  if (text.size() > 1 && text.back() == '/') text.pop_back();
  std::cerr << "specbench: root " << text << "\n";
  return text;
}

std::string cache_dir(const Globals& g) {
  if (!g.cache_dir.empty()) return g.cache_dir;
  if (const char* env = std::getenv("SPECBENCH_CACHE_DIR"); env && *env) return env;
  return (fs::path(g.root) / "build" / "module-cache").string();
}

sb::ToolchainOptions toolchain(const Globals& g) {
  sb::ToolchainOptions t = sb::default_toolchain_options();
  t.cuda_archs.clear();
  std::stringstream ss(g.cuda_arch);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      int a = std::stoi(item, &used);
      if (used != item.size() || a < 10 || a > 1000) throw std::invalid_argument(item);
      t.cuda_archs.push_back(a);
    } catch (const std::exception&) {
      throw UserError{"--cuda-arch: '" + item + "' is not an SM architecture like 80 or 90"};
    }
  }
  if (t.cuda_archs.empty()) throw UserError{"--cuda-arch: no architecture given"};
  return t;
}

std::vector<sb::Spec> load_specs(const Globals& g) {
  std::vector<std::string> paths = sb::default_spec_paths(g.root);
  if (paths.empty()) throw UserError{"no specs found under " + g.root + "/specs"};
  auto specs = sb::load_all(paths);
  if (!specs.ok()) {
    std::cerr << sb::format_error(specs.error());
    std::exit(2);
  }
  return std::move(specs.value());
}

std::vector<const sb::Spec*> select_specs(const std::vector<sb::Spec>& all,
                                          const std::vector<std::string>& kernels) {
  std::vector<const sb::Spec*> out;
  if (kernels.empty()) {
    for (const auto& s : all) out.push_back(&s);
    return out;
  }
  std::vector<std::string> known;
  for (const auto& s : all) known.push_back(s.name);
  std::set<std::string> seen;
  for (const auto& k : kernels) {
    const sb::Spec* found = nullptr;
    for (const auto& s : all) {
      if (s.name == k) found = &s;
    }
    if (!found) throw UserError{"unknown kernel '" + k + "' (known: " + join(known) + ")"};
    if (seen.insert(k).second) out.push_back(found);
  }
  return out;
}

// Backends that have both an emitter and a runtime.
std::vector<std::string> known_backends() {
  std::vector<std::string> v;
  for (sb::Runtime* r : sb::all_runtimes()) {
    if (sb::find_emitter(r->source_backend())) v.push_back(r->backend());
  }
  return v;
}

std::vector<std::string> select_backends(const std::vector<std::string>& asked) {
  std::vector<std::string> known = known_backends();
  if (asked.empty()) return known;
  std::vector<std::string> out;
  for (const auto& b : asked) {
    if (std::find(known.begin(), known.end(), b) == known.end())
      throw UserError{"unknown backend '" + b + "' (known: " + join(known) + ")"};
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  }
  return out;
}

// Whether --variant and --filter take `backend`'s variant `v` of `kernel` (both when given).
bool selected(const Globals& g, const std::string& kernel, const std::string& backend,
              const std::string& v) {
  if (!g.variants.empty() &&
      std::none_of(g.variants.begin(), g.variants.end(),
                   [&](const std::string& n) { return n == v || n == backend + "/" + v; }))
    return false;
  if (!g.filter.empty()) {
    std::regex re(g.filter, std::regex::ECMAScript);  // checked when parsed
    if (!std::regex_search(kernel + "/" + backend + "/" + v, re)) return false;
  }
  return true;
}

bool selecting(const Globals& g) {
  return !g.variants.empty() || !g.filter.empty();
}

// The variants a runtime takes from a spec (those of its source backend).
const std::vector<sb::Variant>* source_variants(const sb::Spec& spec, const std::string& backend) {
  auto it = spec.variants.find(sb::find_runtime(backend)->source_backend());
  return it == spec.variants.end() ? nullptr : &it->second;
}

// The specs with at least one selected variant on one of `backends`; a user error when none is.
std::vector<const sb::Spec*> narrow_specs(const Globals& g,
                                          const std::vector<const sb::Spec*>& specs,
                                          const std::vector<std::string>& backends) {
  if (!selecting(g)) return specs;
  std::vector<const sb::Spec*> out;
  for (const sb::Spec* spec : specs) {
    bool any = false;
    for (const auto& b : backends)
      if (const auto* vs = source_variants(*spec, b))
        for (const auto& v : *vs) any = any || selected(g, spec->name, b, v.name);
    if (any) out.push_back(spec);
  }
  if (out.empty())
    throw UserError{"no variant of the selected kernels and backends matches" +
                    (g.variants.empty() ? std::string() : " --variant " + join(g.variants)) +
                    (g.filter.empty() ? std::string() : " --filter '" + g.filter + "'")};
  return out;
}

// Keeps only the selected variants in the targets' specs (after the build: the modules hold
// every variant and are looked up by name, and the generated files are compared with the whole
// spec), and drops targets with none. A variant stays when it is selected for any target taking
// its backend's code (cuda and cudasim share the cuda variants).
void narrow_targets(const Globals& g, std::vector<sb::Target>& targets) {
  if (!selecting(g)) return;
  std::map<std::pair<const sb::Spec*, std::string>, std::vector<std::string>> users;
  for (const auto& t : targets)
    users[{t.spec, t.runtime->source_backend()}].push_back(t.backend);
  for (const auto& [key, backends] : users) {
    // The specs are the caller's (load_specs' vector), held here through const pointers.
    auto& vs = const_cast<sb::Spec*>(key.first)->variants[key.second];
    vs.erase(std::remove_if(vs.begin(), vs.end(),
                            [&](const sb::Variant& v) {
                              return std::none_of(
                                  backends.begin(), backends.end(), [&](const std::string& b) {
                                    return selected(g, key.first->name, b, v.name);
                                  });
                            }),
             vs.end());
  }
  std::vector<sb::Target> kept;
  for (auto& t : targets) {
    bool any = false;
    for (const auto& v : t.spec->variants.at(t.runtime->source_backend()))
      any = any || selected(g, t.spec->name, t.backend, v.name);
    if (any) kept.push_back(std::move(t));
  }
  targets = std::move(kept);
}

// Builds the modules, printing progress and every compiler failure. Sets `failed` when any
// build failed. With --variant or --filter, only the kernels with a selected variant are built,
// and the targets carry only the selected variants.
std::vector<sb::Target> build(const Globals& g, const std::vector<const sb::Spec*>& specs_in,
                              const std::vector<std::string>& backends, bool& failed) {
  std::vector<const sb::Spec*> specs = narrow_specs(g, specs_in, backends);
  sb::BuildSettings s;
  s.root = g.root;
  s.cache_dir = cache_dir(g);
  s.tools = toolchain(g);
  s.jobs = g.jobs;
  std::vector<sb::Target> targets = sb::build_targets(specs, backends, s, progress);
  failed = false;
  for (const auto& t : targets) {
    if (t.build.ok) continue;
    if (t.build.no_compiler && !t.runtime->availability().ok) continue;  // skipped, said above
    failed = true;
    std::cerr << "error: building " << t.spec->name << " for " << t.backend << " failed\n"
              << t.build.error;
    if (!t.build.error.empty() && t.build.error.back() != '\n') std::cerr << "\n";
  }
  narrow_targets(g, targets);
  return targets;
}

int cmd_gen(const Globals& g, const std::vector<std::string>& specs, bool check,
            const std::string& dump) {
  sb::GenOptions o;
  o.root = g.root;
  o.specs = specs;
  o.check = check;
  o.dump_after = dump;
  return sb::run_gen(o);
}

int cmd_build(const Globals& g, const std::vector<std::string>& kernels,
              const std::vector<std::string>& backends_asked, bool facts) {
  std::vector<std::string> backends = select_backends(backends_asked);
  std::vector<sb::Spec> all = load_specs(g);
  auto specs = select_specs(all, kernels);
  bool failed = false;
  auto targets = build(g, specs, backends, failed);
  int cached = 0, ok = 0;
  for (const auto& t : targets) {
    ok += t.build.ok;
    cached += t.build.ok && t.build.cached;
  }
  std::cout << ok << " of " << targets.size() << " modules built (" << cached
            << " from the cache) in " << cache_dir(g) << "\n";
  for (const auto& t : targets)
    if (t.build.ok && !t.build.kernel_facts_error.empty())
      std::cerr << "note: no kernel facts for " << t.spec->name << " (" << t.backend
                << "): " << t.build.kernel_facts_error << "\n";
  const std::vector<sb::KernelFactRow> rows = sb::kernel_fact_rows(targets);
  std::cout << (facts ? sb::format_kernel_facts(rows) : sb::format_kernel_facts_line(rows));
  return failed ? 1 : 0;
}

std::string sci3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

// `verify`'s table: one row per variant (checks passed, the largest errors over them), or with
// `verbose` one row per check; each beside the error the spec allows (|got - ref| <= atol +
// rtol * mag, mag the reference's magnitude).
std::string format_verify_rows(const std::vector<sb::VerifyRecord>& records,
                               const std::vector<sb::Target>& targets, bool verbose) {
  auto allowed = [&](const std::string& kernel) -> std::string {
    for (const auto& t : targets)
      if (t.spec->name == kernel) {
        std::string a =
            "atol " + sci3(t.spec->tol.atol) + " + rtol " + sci3(t.spec->tol.rtol) + " x mag";
        // f16 and bf16 outputs: at least their type's epsilon (tensor_rtol).
        std::set<std::string> raised;
        for (size_t i = 0; i < t.spec->tensors.size(); ++i) {
          const sb::Tensor& tn = t.spec->tensors[i];
          const double r = sb::tensor_rtol(*t.spec, static_cast<int>(i));
          if (tn.role == sb::Role::Out && r > t.spec->tol.rtol)
            raised.insert(std::string(sb::dtype_name(tn.type)) + " outputs rtol " + sci3(r));
        }
        for (const std::string& x : raised) a += "; " + x;
        return a;
      }
    return "-";
  };
  std::vector<std::vector<std::string>> rows;
  if (verbose) {
    for (const auto& r : records) {
      bool measured = r.outcome != sb::Outcome::Skipped && r.sizes != "-";
      std::string note = r.outcome == sb::Outcome::Pass ? "" : r.detail.substr(0, r.detail.find('\n'));
      rows.push_back({r.kernel, r.backend, r.variant, r.sizes, r.inputs, sb::outcome_name(r.outcome),
                      measured ? sci3(r.max_abs_err) : "-", measured ? sci3(r.max_rel_err) : "-",
                      allowed(r.kernel), sb::escape_control(note)});
    }
    return sb::format_table({"kernel", "backend", "variant", "size", "inputs", "result",
                             "max abs err", "max rel err", "allowed", "note"},
                            rows);
  }
  struct Agg {
    const sb::VerifyRecord* first;
    int pass = 0, fail = 0, skipped = 0;
    double abs = 0, rel = 0;
    std::string note;
  };
  std::vector<Agg> aggs;
  std::map<std::string, size_t> index;
  for (const auto& r : records) {
    auto [it, added] = index.emplace(r.kernel + "/" + r.backend + "/" + r.variant, aggs.size());
    if (added) aggs.push_back(Agg{&r, 0, 0, 0, 0, 0, ""});
    Agg& a = aggs[it->second];
    a.pass += r.outcome == sb::Outcome::Pass;
    a.fail += r.outcome == sb::Outcome::Fail;
    a.skipped += r.outcome == sb::Outcome::Skipped;
    if (r.outcome != sb::Outcome::Skipped && r.sizes != "-") {
      a.abs = std::max(a.abs, r.max_abs_err);
      a.rel = std::max(a.rel, r.max_rel_err);
    }
    if (r.outcome != sb::Outcome::Pass && a.note.empty())
      a.note = r.detail.substr(0, r.detail.find('\n'));
  }
  for (const auto& a : aggs) {
    int run = a.pass + a.fail;
    rows.push_back({a.first->kernel, a.first->backend, a.first->variant,
                    run ? std::to_string(a.pass) + "/" + std::to_string(run) : "-",
                    a.fail ? "FAIL" : (a.skipped && !run ? "skipped" : "pass"),
                    run ? sci3(a.abs) : "-", run ? sci3(a.rel) : "-", allowed(a.first->kernel),
                    sb::escape_control(a.note)});
  }
  return sb::format_table({"kernel", "backend", "variant", "checks", "result", "max abs err",
                           "max rel err", "allowed", "note"},
                          rows);
}

// Which of a spec's size lists a command runs at: bench's (bench, run, nightly) or verify's.
enum class SizeList { Bench, Verify };

// `--sizes`: "bench", "verify", or explicit points "N=1024,4096" (several names separated by
// spaces or ';', their lists zipped as the spec's are: "M=64,128 N=32,64"). Explicit points, or
// the other list, replace list `use` of the selected specs (the emitted code does not depend on
// them).
void apply_sizes(const std::string& sizes, std::vector<sb::Spec>& all,
                 const std::vector<const sb::Spec*>& chosen, SizeList use = SizeList::Bench) {
  auto is_chosen = [&](const sb::Spec& spec) {
    return std::any_of(chosen.begin(), chosen.end(),
                       [&](const sb::Spec* c) { return c->name == spec.name; });
  };
  auto list = [&](sb::SizeParam& p) -> std::vector<int64_t>& {
    return use == SizeList::Bench ? p.bench : p.verify;
  };
  if (sizes == "bench" || sizes == "verify") {
    // bench's own list is the default; verify at the bench sizes copies them (bench keeps the
    // verify list: `--sizes verify` there picks it by BenchOptions::verify_sizes).
    if (use == SizeList::Verify && sizes == "bench")
      for (sb::Spec& spec : all)
        if (is_chosen(spec))
          for (auto& p : spec.sizes) p.verify = p.bench;
    return;
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> given;
  std::string item;
  auto bad = [&](const std::string& why) {
    throw UserError{"--sizes '" + sb::escape_control(sizes) + "': " + why +
                    " (use bench, verify, or points like N=1024,4096 or \"M=64,128 N=32,64\")"};
  };
  std::string text = sizes;
  std::replace(text.begin(), text.end(), ';', ' ');
  std::stringstream words(text);
  while (words >> item) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) bad("'" + sb::escape_control(item) + "' is not NAME=V,V,...");
    std::string name = item.substr(0, eq);
    for (const auto& [n, v] : given)
      if (n == name) bad("size '" + sb::escape_control(name) + "' given twice");
    std::vector<int64_t> values;
    std::stringstream vs(item.substr(eq + 1));
    std::string v;
    while (std::getline(vs, v, ',')) {
      size_t used = 0;
      long long x = 0;
      try {
        x = std::stoll(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != v.size() || x < 1 || x > (1ll << 40))
        bad("'" + sb::escape_control(v) + "' is not a size from 1 to 2^40");
      values.push_back(x);
    }
    if (values.empty()) bad("no values for '" + sb::escape_control(name) + "'");
    given.emplace_back(name, values);
  }
  if (given.empty()) bad("no size given");
  size_t points = 1;
  for (const auto& [n, v] : given) {
    if (v.size() > 1 && points > 1 && v.size() != points)
      bad("the lists have different lengths (they are zipped: give each the same number of "
          "values, or one)");
    points = std::max(points, v.size());
  }
  const char* which = use == SizeList::Bench ? " bench" : " verify";
  for (sb::Spec& spec : all) {
    if (!is_chosen(spec)) continue;
    std::vector<std::string> names;
    for (const auto& p : spec.sizes) names.push_back(p.name);
    for (const auto& [n, v] : given)
      if (spec.find_size(n) < 0)
        bad("kernel '" + spec.name + "' has no size '" + sb::escape_control(n) + "' (its sizes: " +
            join(names) + ")");
    for (auto& p : spec.sizes) {
      auto it = std::find_if(given.begin(), given.end(),
                             [&](const auto& gv) { return gv.first == p.name; });
      if (it != given.end()) {
        list(p) = it->second;
      } else if (list(p).size() != 1) {
        bad("kernel '" + spec.name + "' lists " + std::to_string(list(p).size()) + which +
            " values for size '" + p.name + "': give " + p.name + "=... too");
      }
    }
    // The spec's checks at every size point hold at these too (extents of at least 1, sizes
    // of tensors, dividends of at least 0: the bounds proof relies on them).
    if (const sb::Status st = sb::check_size_points(spec); !st.ok())
      bad("kernel '" + spec.name + "': " + sb::escape_control(st.error().message));
  }
}

int cmd_verify(const Globals& g, const std::vector<std::string>& kernels,
               const std::vector<std::string>& backends_asked, int seeds, bool verbose,
               const std::string& sizes) {
  std::vector<std::string> backends = select_backends(backends_asked);
  std::vector<sb::Spec> all = load_specs(g);
  auto specs = select_specs(all, kernels);
  apply_sizes(sizes, all, specs, SizeList::Verify);
  bool build_failed = false;
  auto targets = build(g, specs, backends, build_failed);
  sb::VerifyOptions vo;
  vo.seeds = seeds;
  auto records = sb::verify(targets, vo, progress);
  std::cout << format_verify_rows(records, targets, verbose);
  if (std::string traffic = sb::format_traffic_table(records); !traffic.empty())
    std::cout << "\n" << traffic;
  std::string failures = sb::format_verify_failures(records);
  if (!failures.empty()) std::cout << "\n" << failures;
  std::cout << "\n" << sb::format_verify_totals(records) << "\n";
  return build_failed || !sb::failed_variants(records).empty() ? 1 : 0;
}

// {"<kernel>": FNV-1a-64 of its spec file} for the results context.
nlohmann::json spec_hashes(const std::vector<sb::Target>& targets) {
  nlohmann::json h = nlohmann::json::object();
  for (const auto& t : targets) {
    std::ifstream in(t.spec->path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    h[t.spec->name] = sb::hex64(sb::fnv1a64(ss.str()));
  }
  return h;
}

struct BenchFlags {
  std::string out;
  int repetitions = 5;  // compare's test needs at least 4 a side at alpha 0.05
  double min_time = 0.05;
  std::string sizes = "bench";
  bool no_probes = false;
};

// run_context plus how specbench and its benchmark library were built: Google Benchmark's own
// "library_build_type" describes the library (Debian's libbenchmark is built with assertions,
// so it says "debug" and prints a DEBUG banner); the timed code is specbench's and the modules'.
std::map<std::string, std::string> results_context(const Globals& g) {
  std::map<std::string, std::string> c = sb::run_context(g.root, toolchain(g));
  c["specbench_build_type"] = SPECBENCH_BUILD_TYPE;
  c["benchmark_library"] =
      "Google Benchmark from the system (Debian's libbenchmark); its library_build_type describes "
      "that library's own build, not specbench's or the timed modules'";
  return c;
}

// Runs the machine probes now and sets them to run again once the last case is timed (the run's
// limits take the better of the two); with `no_probes`, records why there are none.
void set_probes(const Globals& g, bool no_probes, sb::BenchOptions& bo) {
  if (no_probes) {
    bo.probes.reason = "--no-probes";
    return;
  }
  std::cerr << "== probes\n";
  sb::ProbeOptions po;
  po.tools = toolchain(g);
  po.cache_dir = cache_dir(g);
  bo.probes = sb::run_probes(po, progress);
  bo.end_probes = [po] {
    std::cerr << "== probes again, at the end of the run\n";
    return sb::run_probes(po, progress);
  };
}

// Writes the results document to `asked`; when that fails, to a fallback file (results.h:
// write_results_with_fallback), saying where; when every try fails, prints the document on
// stdout between marker lines, so that a run's measurements are never lost. `written` gets the
// file written. False when nothing could be written.
bool store_results(const std::string& asked, const nlohmann::json& doc, std::string& written) {
  sb::ResultsWrite w = sb::write_results_with_fallback(asked, doc);
  for (const auto& e : w.errors) std::cerr << sb::format_error(e);
  written = w.path;
  if (w.fallback)
    std::cerr << "warning: the results could not be written to " << asked
              << "; they were written to " << w.path << " instead\n";
  if (!w.path.empty()) return true;
  std::cerr << "specbench: error: the results could not be written anywhere; the results "
               "document follows on stdout\n";
  std::cout << "----- specbench results JSON -----\n"
            << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
            << "\n----- end of specbench results JSON -----\n";
  return false;
}

// Benchmarks `targets`, prints the summary and writes the results file. Returns true when no
// case failed.
bool bench_and_report(const Globals& g, const std::vector<sb::Target>& targets, const BenchFlags& f,
                      const std::set<std::string>& exclude, const nlohmann::json* verification) {
  sb::BenchOptions bo;
  bo.verify_sizes = f.sizes == "verify";
  bo.repetitions = f.repetitions;
  bo.min_time = f.min_time;
  bo.exclude = exclude;
  bo.context = results_context(g);
  set_probes(g, f.no_probes, bo);
  auto report = sb::bench(targets, bo, progress);
  if (!report.ok()) {
    std::cerr << sb::format_error(report.error());
    return false;
  }
  auto& doc = report.value().doc;
  if (verification) doc["verification"] = *verification;
  doc["context"]["spec_hashes"] = spec_hashes(targets);
  std::cout << "\n" << sb::format_bench_summary(report.value());
  std::string asked = f.out.empty() ? sb::default_results_path(g.root, std::time(nullptr)) : f.out;
  std::string path;
  if (!store_results(asked, doc, path)) return false;
  std::string md = sb::markdown_path(path);
  sb::Status st = sb::write_file_atomic(
      md, sb::format_bench_summary_markdown(report.value(), fs::path(path).filename().string()));
  if (!st.ok()) {
    std::cerr << sb::format_error(st.error());
    return false;
  }
  std::cout << "\nresults: " << path << "\nsummary: " << md << "\n";
  if (int need = sb::repetitions_needed(sb::CompareOptions{}.alpha); f.repetitions < need)
    std::cerr << "warning: " << path << " has " << f.repetitions
              << " repetition(s) per case: `specbench compare` cannot find a change in it at "
                 "alpha 0.05, which needs at least "
              << need << " a side (--repetitions " << need << " or more)\n";
  if (path != asked) return false;  // the measurements are safe, but not where they were asked
  for (const auto& r : report.value().records) {
    if (r.status == sb::BenchStatus::Failed) return false;
  }
  return true;
}

// The results document's "verification": {"checks", "passed", "failed", "skipped"}.
nlohmann::json verification_summary(const std::vector<sb::VerifyRecord>& records) {
  nlohmann::json v = {{"checks", records.size()}, {"passed", 0}, {"failed", 0}, {"skipped", 0}};
  for (const auto& r : records) {
    const char* k = r.outcome == sb::Outcome::Pass   ? "passed"
                    : r.outcome == sb::Outcome::Fail ? "failed"
                                                     : "skipped";
    v[k] = v[k].get<int>() + 1;
  }
  return v;
}

// Verifies `targets` (the given random input sets per size) and prints the per-variant summary,
// the first failures and the totals, as `run` and `nightly` show them.
std::vector<sb::VerifyRecord> verify_and_summarize(const std::vector<sb::Target>& targets,
                                                   int seeds, const sb::ProgressFn& progress) {
  sb::VerifyOptions vo;
  vo.seeds = seeds;
  auto records = sb::verify(targets, vo, progress);
  std::cout << format_verify_rows(records, targets, false);
  std::string failures = sb::format_verify_failures(records);
  if (!failures.empty()) std::cout << "\n" << failures;
  std::cout << sb::format_verify_totals(records) << "\n";
  return records;
}

// Backends that bench times by default: simulators are left out unless asked for by name.
std::vector<std::string> timed_only(const std::vector<std::string>& backends) {
  std::vector<std::string> out;
  for (const auto& b : backends)
    if (sb::find_runtime(b)->timed()) out.push_back(b);
  return out;
}

int cmd_bench(const Globals& g, const std::vector<std::string>& kernels,
              const std::vector<std::string>& backends_asked, const BenchFlags& f) {
  std::vector<std::string> backends = select_backends(backends_asked);
  if (backends_asked.empty()) backends = timed_only(backends);
  std::vector<sb::Spec> all = load_specs(g);
  auto specs = select_specs(all, kernels);
  apply_sizes(f.sizes, all, specs);
  bool build_failed = false;
  auto targets = build(g, specs, backends, build_failed);
  bool ok = bench_and_report(g, targets, f, {}, nullptr);
  return ok && !build_failed ? 0 : 1;
}

int cmd_run(const Globals& g, const std::vector<std::string>& kernels,
            const std::vector<std::string>& backends_asked, int seeds, const BenchFlags& f) {
  std::vector<std::string> backends = select_backends(backends_asked);
  std::cerr << "== gen\n";
  sb::GenOptions go;
  go.root = g.root;
  int rc = sb::run_gen(go);
  if (rc != 0) return rc;
  std::vector<sb::Spec> all = load_specs(g);
  auto specs = select_specs(all, kernels);
  apply_sizes(f.sizes, all, specs);
  std::cerr << "== build\n";
  bool build_failed = false;
  auto targets = build(g, specs, backends, build_failed);
  std::cerr << "== verify\n";
  auto records = verify_and_summarize(targets, seeds, progress);
  auto failed = sb::failed_variants(records);
  nlohmann::json vsum = verification_summary(records);
  std::cerr << "== bench\n";
  std::vector<sb::Target> timed;
  for (auto& t : targets)
    if (t.runtime->timed() || !backends_asked.empty()) timed.push_back(std::move(t));
  bool ok = bench_and_report(g, timed, f, failed, &vsum);
  return ok && !build_failed && failed.empty() ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// History: compare, report, nightly

struct HistoryFlags {
  double alpha = 0.05;
  double min_effect = 0.05;
  std::string markdown;  // compare: also write Markdown here
  std::string json;      // compare: also write JSON here
  std::string out;       // report: the site's folder
};

sb::CompareOptions compare_options(const HistoryFlags& h) {
  sb::CompareOptions o;
  o.alpha = h.alpha;
  o.min_effect = h.min_effect;
  return o;
}

// A results file of a run: "<UTC stamp>.json" (not a checkpoint, summary or comparison).
bool is_run_file(const fs::path& p) {
  static const std::regex stamp(R"(\d{8}T\d{6}Z\.json)");
  return std::regex_match(p.filename().string(), stamp);
}

// The run files in `dir`, oldest first (stamps sort by time).
std::vector<std::string> run_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && is_run_file(e.path())) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Loads results files, printing the first error (which names the file). nullopt on error.
std::optional<std::vector<sb::StoredRun>> load_runs(const std::vector<std::string>& paths) {
  std::vector<sb::StoredRun> runs;
  for (const auto& p : paths) {
    auto r = sb::load_results(p);
    if (!r.ok()) {
      std::cerr << sb::format_error(r.error());
      return std::nullopt;
    }
    runs.push_back(std::move(r.value()));
  }
  return runs;
}

bool write_or_report(const std::string& path, const std::string& content) {
  sb::Status st = sb::write_file_atomic(path, content);
  if (!st.ok()) std::cerr << sb::format_error(st.error());
  return st.ok();
}

// Prints the comparison and writes the requested files. Returns compare_exit_code, or 2 when a
// file cannot be written.
// A path of "-" puts that format on stdout instead of the table (its warnings go to stderr).
int show_comparison(const sb::Comparison& c, const std::string& markdown, const std::string& json) {
  auto put = [](const std::string& path, const std::string& text) {
    if (path != "-") return write_or_report(path, text);
    std::cout << text;
    return true;
  };
  if (markdown == "-" || json == "-") {
    for (const auto& w : c.warnings) std::cerr << "warning: " << sb::escape_control(w) << "\n";
  } else {
    std::cout << sb::format_comparison(c);
  }
  if (!markdown.empty() && !put(markdown, sb::format_comparison_markdown(c))) return 2;
  if (!json.empty() && !put(json, sb::comparison_json(c).dump(2) + "\n")) return 2;
  return sb::compare_exit_code(c);
}

int cmd_compare(const std::string& base, const std::string& now, const HistoryFlags& h) {
  auto runs = load_runs({base, now});
  if (!runs) return 2;
  sb::Comparison c = sb::compare_runs((*runs)[0], (*runs)[1], compare_options(h));
  return show_comparison(c, h.markdown, h.json);
}

std::string python_for_report() {
  if (const char* env = std::getenv("SPECBENCH_PYTHON"); env && *env) return env;
  fs::path venv = fs::path(SPECBENCH_SOURCE_DIR) / ".venv" / "bin" / "python";
  if (fs::exists(venv)) return venv.string();
  return "python3";
}

// Runs `argv` with stdout and stderr passed through (the report generator's progress and its
// messages reach the user as they come). The exit status, 127 when it cannot be started, 128 +
// signal when killed.
int run_passing_output(const std::vector<std::string>& argv, std::string* why) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  std::cout.flush();
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    *why = std::strerror(rc);
    return 127;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      *why = std::strerror(errno);
      return 127;
    }
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}

// Writes <out>/report-data.json from `runs` and draws the site with make_report.py. Each way the
// generator can fail has its own message (make_report.py's exit codes).
int make_report(const std::vector<sb::StoredRun>& runs, const std::string& out,
                const HistoryFlags& h) {
  auto t0 = std::chrono::steady_clock::now();
  std::cerr << "report: " << runs.size() << " run(s), computing the report data\n";
  nlohmann::json data = sb::report_data(runs, compare_options(h));
  std::string data_path = (fs::path(out) / "report-data.json").string();
  if (!write_or_report(data_path,
                       data.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"))
    return 2;
  auto t1 = std::chrono::steady_clock::now();
  std::cerr << "report: data in " << std::fixed << std::setprecision(1)
            << std::chrono::duration<double>(t1 - t0).count() << " s; drawing "
            << data["kernels"].size() << " kernel(s)\n";
  std::string script =
      (fs::path(SPECBENCH_SOURCE_DIR) / "harness" / "report" / "make_report.py").string();
  std::string python = python_for_report();
  std::string why;
  int rc = run_passing_output({python, script, data_path, out}, &why);
  if (rc == 0) {
    std::cout << "report: " << (fs::path(out) / "index.html").string()
              << "\nsummary: " << (fs::path(out) / "summary.md").string() << "\n";
    return 0;
  }
  std::cerr << "specbench: error: ";
  switch (rc) {
    case 127:
      std::cerr << "cannot run the report generator's Python '" << sb::escape_control(python)
                << "'" << (why.empty() ? "" : ": " + why)
                << " (run harness/scripts/setup.sh, or set SPECBENCH_PYTHON)\n";
      break;
    case 3:
      std::cerr << "the report generator lacks a Python module (above): run "
                   "harness/scripts/setup.sh, or set SPECBENCH_PYTHON to a Python with "
                   "matplotlib\n";
      break;
    case 4:
      std::cerr << "the report generator could not write the site in "
                << sb::escape_control(out) << " (the cause is above)\n";
      break;
    case 5:
      std::cerr << "the report generator failed with an exception (above); this is a bug in "
                << script << "\n";
      break;
    default:
      std::cerr << "the report generator (" << script << ") exited with status " << rc << "\n";
  }
  return 2;
}

// Results files and folders of them as paths, oldest first within each folder.
std::vector<std::string> results_paths(const std::vector<std::string>& inputs) {
  std::vector<std::string> paths;
  for (const auto& in : inputs) {
    if (fs::is_directory(in)) {
      auto files = run_files(in);
      if (files.empty()) throw UserError{"no results files (<UTC stamp>.json) in " + in};
      paths.insert(paths.end(), files.begin(), files.end());
    } else {
      paths.push_back(in);
    }
  }
  return paths;
}

// `export`: every repetition of the runs as CSV, on stdout or into `out`.
int cmd_report(const std::vector<std::string>& inputs, const HistoryFlags& h) {
  auto runs = load_runs(results_paths(inputs));
  if (!runs) return 2;
  return make_report(*runs, h.out, h);
}

int cmd_export(const std::vector<std::string>& inputs, const std::string& format,
               const std::string& out) {
  auto runs = load_runs(results_paths(inputs));
  if (!runs) return 2;
  SB_ASSERT(format == "csv", "export: only csv is offered");
  std::string csv = sb::results_csv(*runs);
  if (out.empty() || out == "-") {
    std::cout << csv;
    return 0;
  }
  return write_or_report(out, csv) ? 0 : 2;
}

// The default repetitions of `nightly`: the test then resolves p far below 0.05 (min p ~1e-5).
constexpr int kNightlyRepetitions = 10;

struct NightlyFlags {
  std::string results_dir;  // default <root>/results/<host>
  std::string report_dir;   // default <root>/build/nightly-report
  bool fresh = false;       // ignore an interrupted run
};

// doc["nightly"][key], or null when either is missing or doc["nightly"] is not an object.
nlohmann::json nightly_field(const nlohmann::json& doc, const char* key) {
  if (!doc.is_object() || !doc.contains("nightly") || !doc["nightly"].is_object()) return nullptr;
  return doc["nightly"].value(key, nlohmann::json());
}

// Progress of the nightly's steps: "== nightly [3/8] verify (12s elapsed, ETA 40s)". The ETA
// comes from the step times of the previous complete nightly run with the same options.
class NightlyProgress {
 public:
  NightlyProgress(nlohmann::json previous_steps) : previous_(std::move(previous_steps)) {}
  void step(int k, const std::string& name) {
    finish();
    current_ = name;
    started_ = Clock::now();
    std::string eta = "ETA unknown (no earlier nightly run to go by)";
    if (previous_.is_object() && !previous_.empty()) {
      double rest = 0;
      bool counting = false;
      for (const char* s : kSteps) {
        if (name == s) counting = true;
        auto it = previous_.find(s);
        if (counting && it != previous_.end() && it->is_number()) rest += it->get<double>();
      }
      eta = "ETA " + seconds(rest) + " by the previous run";
    }
    std::cerr << "== nightly [" << k << "/8] " << name << " (" << seconds(elapsed()) << " elapsed, "
              << eta << ")" << std::endl;
  }
  void finish() {
    if (!current_.empty())
      steps_[current_] = steps_.value(current_, 0.0) +
                         std::chrono::duration<double>(Clock::now() - started_).count();
    current_.clear();
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  nlohmann::json& steps() { return steps_; }
  static std::string seconds(double s) {
    char buf[32];
    if (s < 120)
      std::snprintf(buf, sizeof buf, "%.0fs", s);
    else
      std::snprintf(buf, sizeof buf, "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
    return buf;
  }
  static constexpr const char* kSteps[] = {"gen --check", "build",   "verify", "bench",
                                           "store",       "compare", "report", "verdict"};

 private:
  using Clock = std::chrono::steady_clock;
  nlohmann::json previous_;
  nlohmann::json steps_ = nlohmann::json::object();
  std::string current_;
  Clock::time_point started_ = Clock::now();
  Clock::time_point t0_ = Clock::now();
};

// The newest checkpoint (<stamp>.partial.json) in `dir` of a nightly run with `options`, read
// back; sets `stamp` to its stamp. null (and `stamp` unchanged) when there is none to resume.
nlohmann::json find_checkpoint(const std::string& dir, const nlohmann::json& options,
                               std::string& stamp) {
  static const std::regex partial(R"(\d{8}T\d{6}Z\.partial\.json)");
  std::vector<std::string> partials;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && std::regex_match(e.path().filename().string(), partial))
      partials.push_back(e.path().string());
  if (partials.empty()) return nullptr;
  std::sort(partials.begin(), partials.end());
  const std::string& p = partials.back();
  auto read = sb::read_results_json(p);
  auto run = read.ok() ? sb::results_from_json(read.value(), p) : sb::Result<sb::StoredRun>(read.error());
  if (!run.ok()) {
    std::cerr << "warning: cannot resume: " << sb::format_error(run.error())
              << "starting a new run\n";
    return nullptr;
  }
  nlohmann::json doc = std::move(read.value());
  if (nightly_field(doc, "options") != options) {
    std::cerr << "note: " << p << " is an interrupted run with other options; starting a new "
              << "run (it is left as it is)\n";
    return nullptr;
  }
  stamp = fs::path(p).filename().string().substr(0, 16);
  std::cerr << "== nightly: resuming the interrupted run " << stamp << "\n";
  return doc;
}

// The cases an interrupted nightly run measured: the entries of `state` (its checkpoint) and of
// every case file in `cases_dir` (<n>.json: {"case", "benchmarks"}), kept when their case was
// measured without error; `done` receives those case names.
nlohmann::json measured_before(const nlohmann::json& state, const std::string& cases_dir,
                               std::set<std::string>& done) {
  nlohmann::json all = nlohmann::json::array();
  if (state.contains("benchmarks") && state["benchmarks"].is_array()) all = state["benchmarks"];
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cases_dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto read = sb::read_results_json(f);
    if (!read.ok()) {
      std::cerr << "warning: " << sb::format_error(read.error())
                << "its case is measured again\n";
      continue;
    }
    const nlohmann::json& c = read.value();
    if (!c.is_object() || !c.contains("benchmarks") || !c["benchmarks"].is_array()) {
      std::cerr << "warning: " << f << ": not a case checkpoint; its case is measured again\n";
      continue;
    }
    for (const auto& e : c["benchmarks"]) all.push_back(e);
  }
  nlohmann::json doc = {{"schema_version", sb::kResultsSchemaVersion},
                        {"context", nlohmann::json::object()},
                        {"benchmarks", all}};
  auto run = sb::parse_results(doc.dump(), cases_dir);
  nlohmann::json kept = nlohmann::json::array();
  if (!run.ok()) {
    std::cerr << "warning: " << sb::format_error(run.error()) << "measuring every case again\n";
    return kept;
  }
  for (const auto& b : run.value().benchmarks)
    if (b.record.status == sb::BenchStatus::Measured) done.insert(b.name);
  for (const auto& e : all)
    for (const auto& d : done)
      if (sb::entry_is_of(e, d)) {
        kept.push_back(e);
        break;
      }
  return kept;
}

int cmd_nightly(const Globals& g, const std::vector<std::string>& kernels,
                const std::vector<std::string>& backends_asked, int seeds, const BenchFlags& f,
                const HistoryFlags& h, const NightlyFlags& nf) {
  // Every backend is built and verified (the simulators too, as `run` does); only timed ones
  // are benchmarked.
  std::vector<std::string> backends = select_backends(backends_asked);
  std::string dir = nf.results_dir.empty()
                        ? (fs::path(g.root) / "results" / sb::host_name()).string()
                        : nf.results_dir;
  std::string report_dir = nf.report_dir.empty()
                               ? (fs::path(g.root) / "build" / "nightly-report").string()
                               : nf.report_dir;
  if (f.repetitions < sb::repetitions_needed(h.alpha))
    std::cerr << "warning: " << f.repetitions << " repetitions are too few for the compare test "
              << "to reach p < " << h.alpha << "; use --repetitions "
              << sb::repetitions_needed(h.alpha) << " or more\n";
  std::vector<std::string> kernel_list = kernels;
  std::sort(kernel_list.begin(), kernel_list.end());
  nlohmann::json options = {
      {"kernels", kernel_list}, {"backends", backends}, {"repetitions", f.repetitions},
      {"min_time", f.min_time}, {"sizes", f.sizes},     {"seeds", seeds},
      {"probes", !f.no_probes}};

  // An interrupted run with the same options is resumed: its checkpoint holds the verification
  // and every case measured so far.
  std::string stamp = sb::utc_stamp(std::time(nullptr));
  nlohmann::json resumed = nf.fresh ? nlohmann::json() : find_checkpoint(dir, options, stamp);
  std::error_code ec;
  const std::string partial_path = (fs::path(dir) / (stamp + ".partial.json")).string();
  const std::string cases_dir = (fs::path(dir) / (stamp + ".partial")).string();
  const std::string final_path = (fs::path(dir) / (stamp + ".json")).string();
  // A nightly killed between writing a file and renaming it leaves <file>.tmp.<pid>: gone now.
  int stale = sb::remove_stale_temporaries(dir) + sb::remove_stale_temporaries(cases_dir);
  if (stale > 0)
    std::cerr << "note: removed " << stale << " temporary file(s) left by an interrupted run\n";

  // The ETA source: the newest complete run in `dir` made by a nightly with these options.
  std::vector<std::string> previous_runs;
  for (const auto& p : run_files(dir))
    if (fs::path(p).filename().string() < stamp + ".json") previous_runs.push_back(p);
  nlohmann::json previous_steps;
  if (!previous_runs.empty()) {
    auto doc = sb::read_results_json(previous_runs.back());
    if (doc.ok() && nightly_field(doc.value(), "options") == options)
      previous_steps = nightly_field(doc.value(), "step_seconds");
  }
  NightlyProgress np(previous_steps);

  nlohmann::json state = resumed.is_object() ? resumed["nightly"] : nlohmann::json::object();
  state["state"] = "in_progress";
  state["options"] = options;
  state["stamp"] = stamp;
  // The checkpoint: `doc` plus the nightly state, written atomically.
  auto checkpoint = [&](nlohmann::json doc) {
    doc["nightly"] = state;
    if (!doc.contains("schema_version")) doc["schema_version"] = sb::kResultsSchemaVersion;
    sb::Status st = sb::write_results(partial_path, doc);
    if (!st.ok()) std::cerr << sb::format_error(st.error());
  };

  np.step(1, "gen --check");
  sb::GenOptions go;
  go.root = g.root;
  go.check = true;
  int rc = sb::run_gen(go);
  if (rc != 0) {
    std::cerr << "nightly: generated/ does not match the specs; run `specbench gen` and commit\n";
    return rc;
  }
  std::vector<sb::Spec> all = load_specs(g);
  auto specs = select_specs(all, kernels);
  apply_sizes(f.sizes, all, specs);

  np.step(2, "build");
  bool build_failed = false;
  auto targets = build(g, specs, backends, build_failed);

  np.step(3, "verify");
  nlohmann::json verification;
  std::set<std::string> failed;
  if (resumed.is_object() && resumed.contains("verification")) {
    verification = resumed["verification"];
    for (const auto& v : nightly_field(resumed, "failed_variants"))
      if (v.is_string()) failed.insert(v.get<std::string>());
    std::cerr << "verification was done before the interruption: " << verification.dump() << "\n";
  } else {
    auto records = verify_and_summarize(targets, seeds, progress);
    failed = sb::failed_variants(records);
    verification = verification_summary(records);
    state["failed_variants"] = failed;
    nlohmann::json context = sb::run_context(g.root, toolchain(g));
    context["date"] = stamp;
    checkpoint({{"context", context},
                {"benchmarks", nlohmann::json::array()},
                {"verification", verification}});
  }

  np.step(4, "bench");
  // The entries measured before the interruption, kept as they are.
  sb::BenchOptions bo;
  nlohmann::json kept = nlohmann::json::array();
  if (resumed.is_object()) {
    kept = measured_before(resumed, cases_dir, bo.done);
    std::cerr << bo.done.size() << " case(s) measured before the interruption are kept\n";
  }
  bo.verify_sizes = f.sizes == "verify";
  bo.repetitions = f.repetitions;
  bo.min_time = f.min_time;
  bo.exclude = failed;
  bo.context = results_context(g);
  const nlohmann::json hashes = spec_hashes(targets);
  set_probes(g, f.no_probes, bo);
  auto with_kept = [&](nlohmann::json doc) {
    nlohmann::json all_entries = kept;
    for (auto& e : doc["benchmarks"]) all_entries.push_back(std::move(e));
    doc["benchmarks"] = std::move(all_entries);
    doc["verification"] = verification;
    doc["context"]["spec_hashes"] = hashes;
    return doc;
  };
  // Each timed case is saved at once, in a small file of its own written atomically, so a kill
  // loses at most the case being timed and checkpointing stays linear in the run's size.
  int case_files = 0;
  {
    std::error_code ec2;
    for (const auto& e : fs::directory_iterator(cases_dir, ec2)) case_files += e.is_regular_file();
  }
  bo.checkpoint = [&](const std::string& name, const nlohmann::json& entries) {
    char file[32];
    std::snprintf(file, sizeof file, "%06d.json", ++case_files);
    sb::Status st = sb::write_results((fs::path(cases_dir) / file).string(),
                                      {{"case", name}, {"benchmarks", entries}});
    if (!st.ok()) std::cerr << sb::format_error(st.error());
  };
  std::vector<sb::Target> timed;
  for (auto& t : targets)
    if (t.runtime->timed()) timed.push_back(std::move(t));
  auto report = sb::bench(timed, bo, progress);
  if (!report.ok()) {
    std::cerr << sb::format_error(report.error());
    return 1;
  }

  np.step(5, "store");
  nlohmann::json doc = with_kept(report.value().doc);
  auto stored = sb::parse_results(doc.dump(), final_path);
  if (!stored.ok()) {
    std::cerr << sb::format_error(stored.error());
    return 1;
  }
  sb::BenchReport full;
  full.records = stored.value().records();
  full.probes = report.value().probes;
  full.limits = report.value().limits;
  full.load = report.value().load;
  full.summary = sb::summarize(full.records);
  full.languages = sb::compare_languages(full.records);
  doc["summary"] = sb::summary_json(full.summary);
  doc["languages"] = sb::languages_json(full.languages);
  full.doc = doc;
  std::cout << "\n" << sb::format_bench_summary(full);
  np.finish();
  state["state"] = "complete";
  state["step_seconds"] = np.steps();
  doc["nightly"] = state;
  std::string written;
  if (!store_results(final_path, doc, written) || written != final_path) return 2;
  if (!write_or_report(
          sb::markdown_path(final_path),
          sb::format_bench_summary_markdown(full, fs::path(final_path).filename().string())))
    return 2;
  std::cout << "\nresults: " << final_path << "\n";

  np.step(6, "compare");
  int compare_rc = 0;
  auto now = sb::load_results(final_path);
  if (!now.ok()) {
    std::cerr << sb::format_error(now.error());
    return 2;
  }
  if (previous_runs.empty()) {
    std::cout << "no earlier run in " << dir << " to compare with\n";
  } else {
    auto base = sb::load_results(previous_runs.back());
    if (!base.ok()) {
      std::cerr << "warning: cannot compare: " << sb::format_error(base.error());
    } else {
      // Only what this run could have measured: a run of a few kernels does not call every
      // other kernel of a full previous run missing.
      sb::StoredRun& b = base.value();
      std::set<std::string> names, chosen(backends.begin(), backends.end());
      for (const auto* sp : specs) names.insert(sp->name);
      auto outside = [&](const sb::BenchRecord& r) {
        return !names.count(r.kernel) || !chosen.count(r.backend);
      };
      std::erase_if(b.benchmarks, [&](const sb::StoredBenchmark& x) { return outside(x.record); });
      std::erase_if(b.problems, outside);
      sb::Comparison c = sb::compare_runs(b, now.value(), compare_options(h));
      compare_rc = show_comparison(c, (fs::path(report_dir) / "compare.md").string(),
                                   (fs::path(report_dir) / "compare.json").string());
    }
  }

  np.step(7, "report");
  int report_rc = 0;
  {
    std::vector<std::string> paths = run_files(dir);
    std::vector<sb::StoredRun> runs;
    for (const auto& p : paths) {
      auto r = sb::load_results(p);
      if (r.ok())
        runs.push_back(std::move(r.value()));
      else
        std::cerr << "warning: left out of the report: " << sb::format_error(r.error());
    }
    report_rc = make_report(runs, report_dir, h);
  }

  // The checkpoint goes only now: killed during compare or report, the run resumes with nothing
  // left to measure and does them again. The case files go first: a checkpoint without them
  // only means measuring again, never losing a case.
  fs::remove_all(cases_dir, ec);
  fs::remove(partial_path, ec);

  np.step(8, "verdict");
  bool bench_failed = false;
  for (const auto& r : full.records)
    if (r.status == sb::BenchStatus::Failed) bench_failed = true;
  np.finish();
  std::cerr << "== nightly: done in " << NightlyProgress::seconds(np.elapsed()) << "\n";
  if (compare_rc == 2 || report_rc != 0) return 2;
  if (build_failed || !failed.empty() || bench_failed || compare_rc != 0) {
    std::cerr << "nightly: FAILED:" << (build_failed ? " build" : "")
              << (!failed.empty() || bench_failed ? " verification" : "")
              << (compare_rc != 0 ? " regression" : "") << "\n";
    return 1;
  }
  return 0;
}

int cmd_list(const Globals& g, bool strategies, bool backends_json) {
  if (backends_json) {
    // The backend records alone (harness/report/backends.json is this output).
    std::cout << sb::backends_json().dump(2) << "\n";
    return 0;
  }
  std::vector<sb::Spec> all = load_specs(g);
  std::cout << sb::format_spec_list(all) << "\n" << sb::format_backends();
  if (strategies) std::cout << "\n" << sb::format_strategies();
  return 0;
}

// "specbench 0.1.0".
std::string version_text() {
  return std::string("specbench ") + sb::kSpecbenchVersion;
}

// The first argument that is neither an option nor the value of a global option: the
// subcommand's name. nullopt when there is none (then CLI11 says that one is required).
std::optional<std::string> first_word(int argc, char** argv) {
  static const std::set<std::string> with_value = {"--root", "--cache-dir", "-j", "--jobs",
                                                   "--cuda-arch"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return i + 1 < argc ? std::optional<std::string>(argv[i + 1]) : std::nullopt;
    if (!a.empty() && a[0] == '-') {
      if (with_value.count(a)) ++i;
      continue;
    }
    return a;
  }
  return std::nullopt;
}

int real_main(int argc, char** argv) {
  CLI::App app{
      "specbench: kernels written once as YAML specs, generated for every backend, "
      "verified against a double-precision reference and benchmarked."};
  app.require_subcommand(1);
  app.fallthrough();  // global options are accepted after the subcommand too
  Globals g;
  app.add_option("--root", g.root,
                 "repository root holding specs/ and generated/ (default: the current "
                 "directory, when it holds specs/)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--cache-dir", g.cache_dir,
                 "module cache (default: $SPECBENCH_CACHE_DIR, else <root>/build/module-cache)");
  app.add_option("-j,--jobs", g.jobs, "parallel compile jobs")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--cuda-arch", g.cuda_arch, "comma-separated SM architectures for CUDA modules")
      ->capture_default_str();

  std::vector<std::string> kernels, backends, spec_paths;
  int seeds = 3;
  BenchFlags bf;
  bool check = false, strategies = false;
  std::string dump;

  auto add_kernels = [&](CLI::App* sc) {
    sc->add_option("kernels", kernels, "kernel names (default: every spec)");
  };
  auto add_backends = [&](CLI::App* sc) {
    sc->add_option("-b,--backend", backends, "backend to use; repeatable (default: all)")
        ->delimiter(',')
        ->allow_extra_args(false);  // `--backend cpu softmax`: softmax is a kernel
  };
  auto add_select = [&](CLI::App* sc) {
    sc->add_option("--variant", g.variants,
                   "only this variant (a name, or backend/name); repeatable")
        ->allow_extra_args(false);
    sc->add_option("--filter", g.filter,
                   "only variants whose kernel/backend/variant matches this regular expression")
        ->check([](const std::string& re) -> std::string {
          try {
            std::regex check(re, std::regex::ECMAScript);
          } catch (const std::regex_error& e) {
            return "not a regular expression: " + std::string(e.what());
          }
          return "";
        });
  };
  auto add_seeds = [&](CLI::App* sc) {
    sc->add_option("--seeds", seeds,
                   "random input sets per size (plus zeros, large, and seed 1 on shifted buffers)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
  };
  auto add_bench = [&](CLI::App* sc) {
    sc->add_option("--out", bf.out,
                   "results file (default: <root>/results/<host>/<UTC time>.json)");
    sc->add_option("--repetitions", bf.repetitions, "repetitions of every benchmark")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    sc->add_option("--min-time", bf.min_time, "minimum seconds per repetition")
        ->check(CLI::Range(1e-4, 3600.0))
        ->capture_default_str();
    sc->add_option("--sizes", bf.sizes,
                   "which size points to time: the spec's bench or verify sizes, or explicit "
                   "points: N=1024,4096 (several names zipped: \"M=64,128 N=32,64\")")
        ->capture_default_str();
    sc->add_flag("--no-probes", bf.no_probes,
                 "skip the machine probes (memory bandwidth, sgemm, FMA peak) that give each "
                 "result its limit");
  };

  auto* gen = app.add_subcommand("gen", "generate code from specs into generated/");
  gen->add_option("specs", spec_paths, "spec files (default: specs/*.yaml)")
      ->check(CLI::ExistingFile);
  gen->add_flag("--check", check, "compare with generated/ instead of writing; exit 1 if stale");
  std::vector<std::string> stage_names{"list"};
  for (const sb::IrStage& st : sb::ir_stages()) stage_names.push_back(st.name);
  gen->add_option("--dump-ir", dump,
                  "print the IR after a stage or pass (list: print their names in order)")
      ->check(CLI::IsMember(stage_names));

  auto* build_sc = app.add_subcommand("build", "compile kernel modules (into the cache)");
  add_kernels(build_sc);
  add_backends(build_sc);
  add_select(build_sc);
  bool facts = false;
  build_sc->add_flag("--facts", facts,
                     "print each GPU kernel's ptxas facts (registers, shared memory, spills), "
                     "block size and occupancy");

  auto* verify_sc = app.add_subcommand("verify", "verify every variant against the reference");
  add_kernels(verify_sc);
  add_backends(verify_sc);
  add_select(verify_sc);
  add_seeds(verify_sc);
  bool verbose = false;
  verify_sc->add_flag("-v,--verbose", verbose, "one row per check instead of one per variant");
  std::string verify_sizes = "verify";
  verify_sc
      ->add_option("--sizes", verify_sizes,
                   "which size points to check: the spec's verify or bench sizes, or explicit "
                   "points: N=100000 (several names zipped: \"M=64,128 N=32,64\")")
      ->capture_default_str();

  auto* bench_sc = app.add_subcommand("bench", "benchmark verified variants; write results JSON");
  add_kernels(bench_sc);
  add_backends(bench_sc);
  add_select(bench_sc);
  add_bench(bench_sc);

  auto* run_sc = app.add_subcommand("run", "gen, build, verify, bench, summary and results file");
  add_kernels(run_sc);
  add_backends(run_sc);
  add_select(run_sc);
  add_seeds(run_sc);
  add_bench(run_sc);

  HistoryFlags hf;
  NightlyFlags nf;
  std::string base_file, new_file;
  std::vector<std::string> report_inputs;
  auto add_verdict = [&](CLI::App* sc) {
    sc->add_option("--alpha", hf.alpha, "significance level of the Mann-Whitney U test")
        ->check(CLI::Range(1e-9, 0.5))
        ->capture_default_str();
    sc->add_option("--min-effect", hf.min_effect,
                   "smallest change of the median time that counts (0.05: 5%)")
        ->check(CLI::Range(0.0, 10.0))
        ->capture_default_str();
  };

  auto* compare_sc = app.add_subcommand(
      "compare",
      "compare two results files: faster/slower/same/new/missing per benchmark; exit 1 "
      "on a regression or a failed verification");
  compare_sc->add_option("base", base_file, "the earlier results file")->required();
  compare_sc->add_option("new", new_file, "the later results file")->required();
  add_verdict(compare_sc);
  compare_sc->add_option("--markdown", hf.markdown,
                         "also write the comparison as Markdown here ('-': stdout, no table)");
  compare_sc->add_option("--json", hf.json,
                         "also write the comparison as JSON here ('-': stdout, no table)");

  auto* report_sc = app.add_subcommand(
      "report", "publish results as a static site (index.html, a page per kernel) and summary.md");
  report_sc
      ->add_option("results", report_inputs,
                   "results files, or folders of them (every <UTC stamp>.json inside)")
      ->required();
  report_sc->add_option("--out", hf.out, "the site's folder")->required();
  add_verdict(report_sc);

  std::vector<std::string> export_inputs;
  std::string export_format = "csv", export_out;
  auto* export_sc = app.add_subcommand(
      "export", "write every repetition of results files as CSV (one row per repetition)");
  export_sc
      ->add_option("results", export_inputs,
                   "results files, or folders of them (every <UTC stamp>.json inside)")
      ->required();
  export_sc->add_option("--format", export_format, "output format")
      ->check(CLI::IsMember({"csv"}))
      ->capture_default_str();
  export_sc->add_option("-o,--out", export_out, "write here instead of stdout");

  auto* nightly_sc = app.add_subcommand(
      "nightly",
      "gen --check, build, verify, bench, store, compare with the previous run, report; "
      "resumes an interrupted run");
  add_kernels(nightly_sc);
  add_backends(nightly_sc);
  add_seeds(nightly_sc);
  add_bench(nightly_sc);
  add_verdict(nightly_sc);
  nightly_sc->remove_option(nightly_sc->get_option("--out"));
  nightly_sc->add_option("--results-dir", nf.results_dir,
                         "where runs are stored and the previous one is found (default: "
                         "<root>/results/<host>)");
  nightly_sc->add_option("--report-dir", nf.report_dir,
                         "the report site, with compare.md and compare.json (default: "
                         "<root>/build/nightly-report)");
  nightly_sc->get_option("--repetitions")
      ->description("repetitions of every benchmark (default for nightly: " +
                    std::to_string(kNightlyRepetitions) + ")");
  nightly_sc->add_flag("--fresh", nf.fresh, "start a new run even if an interrupted one exists");

  auto* list_sc = app.add_subcommand("list", "show specs, variants and backends");
  list_sc->add_flag("--strategies", strategies, "also show every backend's strategies");
  bool backends_json = false;
  list_sc->add_flag("--backends-json", backends_json,
                    "print only the backend records, as JSON (harness/report/backends.json)");

  app.set_version_flag("--version", version_text(), "print specbench's version and exit");

  // The first word that is not an option (or a global option's value) names the subcommand.
  if (std::optional<std::string> word = first_word(argc, argv)) {
    bool known = true;
    try {
      app.get_subcommand(*word);
    } catch (const CLI::OptionNotFound&) {
      known = false;
    }
    if (!known) {
      std::cerr << "specbench: error: unknown subcommand '" << sb::escape_control(*word)
                << "' (run specbench --help for the list)\n";
      return 2;
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  try {
    if (std::string why = sb::host_name_override_error(); !why.empty()) throw UserError{why};
    // Every command that reads or writes the tree works on one root, said first.
    if (!*compare_sc && !*report_sc) g.root = resolve_root(g.root);
    if (*verify_sc || *bench_sc || *run_sc || *nightly_sc) {
      // Before any module that links OpenBLAS is loaded (run/blas_core.h).
      const sb::BlasCoreChoice& blas = sb::settle_openblas_core(SPECBENCH_OPENBLAS_LIBRARY);
      if (!blas.detected.empty() && blas.used != blas.detected)
        std::cerr << "specbench: note: vendor_cpu runs OpenBLAS's " << blas.used
                  << " kernels: " << blas.why << " (set OPENBLAS_CORETYPE to choose)\n";
    }
    if (*gen) return cmd_gen(g, spec_paths, check, dump);
    if (*build_sc) return cmd_build(g, kernels, backends, facts);
    if (*verify_sc) return cmd_verify(g, kernels, backends, seeds, verbose, verify_sizes);
    if (*bench_sc) return cmd_bench(g, kernels, backends, bf);
    if (*run_sc) return cmd_run(g, kernels, backends, seeds, bf);
    if (*list_sc) return cmd_list(g, strategies, backends_json);
    if (*compare_sc) return cmd_compare(base_file, new_file, hf);
    if (*report_sc) return cmd_report(report_inputs, hf);
    if (*export_sc) return cmd_export(export_inputs, export_format, export_out);
    if (*nightly_sc) {
      // Enough repetitions for the compare test, unless asked otherwise.
      if (nightly_sc->count("--repetitions") == 0) bf.repetitions = kNightlyRepetitions;
      return cmd_nightly(g, kernels, backends, seeds, bf, hf, nf);
    }
  } catch (const UserError& e) {
    std::cerr << "specbench: error: " << e.message << "\n";
    return 2;
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return real_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "specbench: internal error: " << e.what() << "\n";
    return 3;
  }
}
