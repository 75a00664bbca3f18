// The `specbench` command line. Exit codes: 0 success; 1 a verification, build or benchmark
// failure (or stale files for `gen --check`); 2 a user error (bad flag, unknown kernel or backend,
// bad spec), printed without a stack trace.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "console.h"
#include "driver.h"
#include "emitter.h"
#include "results.h"
#include "runner.h"
#include "runtime.h"
#include "toolchain.h"

namespace {

namespace fs = std::filesystem;

struct Globals {
  std::string root = SPECBENCH_SOURCE_DIR;
  std::string cache_dir;  // empty: $SPECBENCH_CACHE_DIR, else <root>/build/module-cache
  int jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string cuda_arch = "80,90";
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

// Builds the modules, printing progress and every compiler failure. Sets `failed` when any
// build failed.
std::vector<sb::Target> build(const Globals& g, const std::vector<const sb::Spec*>& specs,
                              const std::vector<std::string>& backends, bool& failed) {
  sb::BuildSettings s;
  s.root = g.root;
  s.cache_dir = cache_dir(g);
  s.tools = toolchain(g);
  s.jobs = g.jobs;
  std::vector<sb::Target> targets = sb::build_targets(specs, backends, s, progress);
  failed = false;
  for (const auto& t : targets) {
    if (t.build.ok) continue;
    failed = true;
    std::cerr << "error: building " << t.spec->name << " for " << t.backend << " failed\n"
              << t.build.error;
    if (!t.build.error.empty() && t.build.error.back() != '\n') std::cerr << "\n";
  }
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
              const std::vector<std::string>& backends_asked) {
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
  return failed ? 1 : 0;
}

int cmd_verify(const Globals& g, const std::vector<std::string>& kernels,
               const std::vector<std::string>& backends_asked, int seeds) {
  std::vector<std::string> backends = select_backends(backends_asked);
  std::vector<sb::Spec> all = load_specs(g);
  auto specs = select_specs(all, kernels);
  bool build_failed = false;
  auto targets = build(g, specs, backends, build_failed);
  sb::VerifyOptions vo;
  vo.seeds = seeds;
  auto records = sb::verify(targets, vo, progress);
  std::cout << sb::format_verify_table(records);
  if (std::string traffic = sb::format_traffic_table(records); !traffic.empty())
    std::cout << "\n" << traffic;
  std::string failures = sb::format_verify_failures(records);
  if (!failures.empty()) std::cout << "\n" << failures;
  std::cout << "\n" << sb::format_verify_totals(records) << "\n";
  return build_failed || !sb::failed_variants(records).empty() ? 1 : 0;
}

struct BenchFlags {
  std::string out;
  int repetitions = 3;
  double min_time = 0.05;
  std::string sizes = "bench";
  bool no_probes = false;
};

// Benchmarks `targets`, prints the summary and writes the results file. Returns true when no
// case failed.
bool bench_and_report(const Globals& g, const std::vector<sb::Target>& targets, const BenchFlags& f,
                      const std::set<std::string>& exclude, const nlohmann::json* verification) {
  sb::BenchOptions bo;
  bo.verify_sizes = f.sizes == "verify";
  bo.repetitions = f.repetitions;
  bo.min_time = f.min_time;
  bo.exclude = exclude;
  bo.context = sb::run_context(g.root, toolchain(g));
  if (f.no_probes) {
    bo.probes.reason = "--no-probes";
  } else {
    std::cerr << "== probes\n";
    sb::ProbeOptions po;
    po.tools = toolchain(g);
    po.cache_dir = cache_dir(g);
    bo.probes = sb::run_probes(po, progress);
  }
  auto report = sb::bench(targets, bo, progress);
  if (!report.ok()) {
    std::cerr << sb::format_error(report.error());
    return false;
  }
  auto& doc = report.value().doc;
  if (verification) doc["verification"] = *verification;
  std::cout << "\n" << sb::format_bench_summary(report.value());
  std::string path = f.out.empty() ? sb::default_results_path(g.root, std::time(nullptr)) : f.out;
  sb::Status st = sb::write_results(path, doc);
  if (!st.ok()) {
    std::cerr << sb::format_error(st.error());
    return false;
  }
  std::string md = sb::markdown_path(path);
  st = sb::write_file_atomic(
      md, sb::format_bench_summary_markdown(report.value(), fs::path(path).filename().string()));
  if (!st.ok()) {
    std::cerr << sb::format_error(st.error());
    return false;
  }
  std::cout << "\nresults: " << path << "\nsummary: " << md << "\n";
  for (const auto& r : report.value().records) {
    if (r.status == sb::BenchStatus::Failed) return false;
  }
  return true;
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
  std::cerr << "== build\n";
  bool build_failed = false;
  auto targets = build(g, specs, backends, build_failed);
  std::cerr << "== verify\n";
  sb::VerifyOptions vo;
  vo.seeds = seeds;
  auto records = sb::verify(targets, vo, progress);
  std::cout << sb::format_verify_summary(records);
  std::string failures = sb::format_verify_failures(records);
  if (!failures.empty()) std::cout << "\n" << failures;
  std::cout << sb::format_verify_totals(records) << "\n";
  auto failed = sb::failed_variants(records);
  nlohmann::json vsum = {{"checks", records.size()}, {"passed", 0}, {"failed", 0}, {"skipped", 0}};
  for (const auto& r : records) {
    const char* k = r.outcome == sb::Outcome::Pass   ? "passed"
                    : r.outcome == sb::Outcome::Fail ? "failed"
                                                     : "skipped";
    vsum[k] = vsum[k].get<int>() + 1;
  }
  std::cerr << "== bench\n";
  std::vector<sb::Target> timed;
  for (auto& t : targets)
    if (t.runtime->timed() || !backends_asked.empty()) timed.push_back(std::move(t));
  bool ok = bench_and_report(g, timed, f, failed, &vsum);
  return ok && !build_failed && failed.empty() ? 0 : 1;
}

int cmd_list(const Globals& g, bool strategies) {
  std::vector<sb::Spec> all = load_specs(g);
  std::cout << sb::format_spec_list(all) << "\n" << sb::format_backends();
  if (strategies) std::cout << "\n" << sb::format_strategies();
  return 0;
}

int real_main(int argc, char** argv) {
  CLI::App app{
      "specbench: kernels written once as YAML specs, generated for every backend, "
      "verified against a double-precision reference and benchmarked."};
  app.require_subcommand(1);
  app.fallthrough();  // global options are accepted after the subcommand too
  Globals g;
  app.add_option("--root", g.root, "repository root holding specs/ and generated/")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
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
  auto add_seeds = [&](CLI::App* sc) {
    sc->add_option("--seeds", seeds, "random input sets per size (plus zeros and large)")
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
                   "which size points to time: the spec's bench or verify sizes")
        ->check(CLI::IsMember({"bench", "verify"}))
        ->capture_default_str();
    sc->add_flag("--no-probes", bf.no_probes,
                 "skip the machine probes (memory bandwidth, sgemm, FMA peak) that give each "
                 "result its limit");
  };

  auto* gen = app.add_subcommand("gen", "generate code from specs into generated/");
  gen->add_option("specs", spec_paths, "spec files (default: specs/*.yaml)")
      ->check(CLI::ExistingFile);
  gen->add_flag("--check", check, "compare with generated/ instead of writing; exit 1 if stale");
  gen->add_option("--dump-ir", dump, "print the IR after a stage")
      ->check(CLI::IsMember({"load", "typecheck", "check"}));

  auto* build_sc = app.add_subcommand("build", "compile kernel modules (into the cache)");
  add_kernels(build_sc);
  add_backends(build_sc);

  auto* verify_sc = app.add_subcommand("verify", "verify every variant against the reference");
  add_kernels(verify_sc);
  add_backends(verify_sc);
  add_seeds(verify_sc);

  auto* bench_sc = app.add_subcommand("bench", "benchmark verified variants; write results JSON");
  add_kernels(bench_sc);
  add_backends(bench_sc);
  add_bench(bench_sc);

  auto* run_sc = app.add_subcommand("run", "gen, build, verify, bench, summary and results file");
  add_kernels(run_sc);
  add_backends(run_sc);
  add_seeds(run_sc);
  add_bench(run_sc);

  auto* list_sc = app.add_subcommand("list", "show specs, variants and backends");
  list_sc->add_flag("--strategies", strategies, "also show every backend's strategies");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  try {
    if (*gen) return cmd_gen(g, spec_paths, check, dump);
    if (*build_sc) return cmd_build(g, kernels, backends);
    if (*verify_sc) return cmd_verify(g, kernels, backends, seeds);
    if (*bench_sc) return cmd_bench(g, kernels, backends, bf);
    if (*run_sc) return cmd_run(g, kernels, backends, seeds, bf);
    if (*list_sc) return cmd_list(g, strategies);
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
