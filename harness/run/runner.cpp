#include "run/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "run/blas_core.h"
#include "run/buffers.h"
#include "results/compare.h"
#include "backends/emitter.h"
#include "run/metrics.h"
#include "build/module.h"
#include "results/noise.h"
#include "run/reference.h"
#include "results/results.h"

namespace sb {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string fmt_seconds(double s) {
  char buf[32];
  if (s < 10)
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  else
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  return buf;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string gib(int64_t bytes) {
  char buf[48];
  const double b = static_cast<double>(bytes);
  if (b >= (1 << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1 << 30));
  else if (b >= (1 << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  return buf;
}

std::string first_line(const std::string& s) {
  size_t b = s.find_first_not_of("\n");
  if (b == std::string::npos) return "";
  size_t e = s.find('\n', b);
  return s.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  size_t p = t.rfind('\n');
  return p == std::string::npos ? t : t.substr(p + 1);
}

std::string variant_key(const std::string& k, const std::string& b, const std::string& v) {
  return k + "/" + b + "/" + v;
}

const std::vector<Variant>& variants_of(const Spec& spec, const std::string& backend) {
  static const std::vector<Variant> none;
  auto it = spec.variants.find(backend);
  return it == spec.variants.end() ? none : it->second;
}

// The spec's variants that a target runs: those of the backend its runtime takes code from.
const std::vector<Variant>& variants_of(const Target& t) {
  return variants_of(*t.spec, t.runtime->source_backend());
}

}  // namespace

std::vector<int> out_tensors(const Spec& spec) {
  std::vector<int> outs;
  for (const Statement& st : spec.stmts)
    if (spec.tensors[st.out].role == Role::Out) outs.push_back(st.out);
  std::sort(outs.begin(), outs.end());
  return outs;
}

namespace {

// The result of running one variant on one input set and comparing its outputs.
struct CheckResult {
  bool ok = true;
  double max_abs = 0;
  double max_rel = 0;
  std::string detail;
};

// Runs `fn` once on `host` (the tensors as make_host_tensors makes them; outputs come back into
// it) and compares every Out tensor with the reference, at every element (sample == 0) or at
// `sample` elements.
CheckResult check_on(Runtime& rt, const Spec& spec, const std::string& backend,
                     const std::string& variant, sb_variant_fn fn, const SizePoint& sizes,
                     HostTensors host, int64_t sample, uint64_t sample_seed) {
  CheckResult cr;
  try {
    // Guarded buffers (Runtime::set_guarded): reads past a tensor's ends give NaN or -1, and
    // writes there are found.
    rt.set_guarded(true);
    auto dev = rt.upload(host);
    rt.set_guarded(false);
    if (!dev.ok()) return CheckResult{false, 0, 0, dev.error().message};
    Status s = rt.run(fn, *dev.value(), sizes);
    if (!s.ok()) return CheckResult{false, 0, 0, s.error().message};
    std::vector<std::string> names;
    for (const Tensor& ten : spec.tensors) names.push_back(ten.name);
    if (Status g = rt.check_guards(*dev.value(), names); !g.ok())
      return CheckResult{false, 0, 0, g.error().message};
    std::vector<int> outs = out_tensors(spec);
    // Outputs come back into the host tensors themselves (the reference reads only the inputs),
    // and the host copies of temporaries go once uploaded: no second copy of anything.
    for (size_t t = 0; t < spec.tensors.size(); ++t)
      if (spec.tensors[t].role == Role::Temp) std::vector<unsigned char>().swap(host[t].bytes);
    for (int t : outs) {
      Status d = rt.download(*dev.value(), t, host[t]);
      if (!d.ok()) return CheckResult{false, 0, 0, d.error().message};
    }
    dev.value().reset();
    Reference ref(spec, sizes, host);
    for (size_t i = 0; i < outs.size(); ++i) {
      CompareResult r =
          compare_tensor(spec, sizes, outs[i], host[outs[i]], ref, sample, sample_seed);
      cr.max_abs = std::max(cr.max_abs, r.max_abs_err);
      cr.max_rel = std::max(cr.max_rel, r.max_rel_err);
      if (!r.ok) {
        cr.ok = false;
        // Mismatches with no finite error are non-finite values where finite ones belong.
        if (r.max_abs_err == 0) cr.max_abs = cr.max_rel = HUGE_VAL;
        if (!cr.detail.empty()) cr.detail += "\n";
        cr.detail += describe_failure(spec, backend, variant, sizes, outs[i], r);
      }
    }
  } catch (const std::exception& e) {
    return CheckResult{false, cr.max_abs, cr.max_rel, std::string("exception: ") + e.what()};
  }
  return cr;
}

// check_on, on freshly drawn `kind` inputs.
CheckResult check_once(Runtime& rt, const Spec& spec, const std::string& backend,
                       const std::string& variant, sb_variant_fn fn, const SizePoint& sizes,
                       InputKind kind, uint64_t seed, int64_t sample, uint64_t sample_seed) {
  HostTensors host;
  try {
    host = make_host_tensors(spec, sizes, kind, seed);
  } catch (const std::exception& e) {
    return CheckResult{false, 0, 0, std::string("exception: ") + e.what()};
  }
  return check_on(rt, spec, backend, variant, fn, sizes, std::move(host), sample, sample_seed);
}

// What stands between a target and running its variants: a failed build, an unavailable
// backend, a module that does not load. Empty reason = runnable.
struct Readiness {
  Outcome outcome = Outcome::Pass;
  std::string reason;
  std::unique_ptr<Module> module;
};

Readiness readiness(const Target& t) {
  Readiness r;
  if (!t.build.ok && t.build.no_compiler) {
    if (Availability a = t.runtime->availability(); !a.ok) {
      r.outcome = Outcome::Skipped;
      r.reason = a.reason;
      return r;
    }
  }
  if (!t.build.ok) {
    r.outcome = Outcome::Fail;
    // The compiler's first error line ("file:line:col: error: ...") says the most. It is looked
    // for in the compiler's output only: a command line can hold "error" too (-Werror, or the
    // mlir backend's whole build script).
    std::string summary = first_line(t.build.error);
    std::istringstream lines(t.build.log.empty() ? t.build.error : t.build.log);
    for (std::string l; std::getline(lines, l);) {
      if (l.find("error") != std::string::npos && l.rfind("compiling ", 0) != 0) {
        summary = l;
        break;
      }
    }
    r.reason = "build failed: " + summary;
    return r;
  }
  Availability a = t.runtime->availability();
  if (!a.ok) {
    r.outcome = Outcome::Skipped;
    r.reason = a.reason;
    return r;
  }
  auto m = Module::load(t.build.module_path, *t.spec, t.runtime->source_backend());
  if (!m.ok()) {
    r.outcome = Outcome::Fail;
    r.reason = format_error(m.error());
    while (!r.reason.empty() && r.reason.back() == '\n') r.reason.pop_back();
    return r;
  }
  r.module = std::make_unique<Module>(std::move(m.value()));
  return r;
}

std::vector<std::pair<std::string, int64_t>> size_pairs(const Spec& spec, const SizePoint& p) {
  std::vector<std::pair<std::string, int64_t>> v;
  for (size_t i = 0; i < spec.sizes.size() && i < p.size(); ++i)
    v.emplace_back(spec.sizes[i].name, p[i]);
  return v;
}

// Google Benchmark's display and file output in one pass: the console table for the user and
// the JSON document into a string (a custom file reporter needs --benchmark_out in 1.7.1).
class TeeReporter : public benchmark::BenchmarkReporter {
 public:
  // `console` (may be null: no display) is shared by every case's session so that its context
  // and table head are printed once; `show_context` is true for the first session only.
  TeeReporter(benchmark::ConsoleReporter* console, std::ostream* json_out, bool show_context)
      : console_(console), show_context_(show_context) {
    json_.SetOutputStream(json_out);
    json_.SetErrorStream(&json_errors_);
  }
  bool ReportContext(const Context& context) override {
    if (console_ && show_context_) console_->ReportContext(context);
    return json_.ReportContext(context);
  }
  // The JSON gets every repetition; the console only the aggregates when there are several.
  void ReportRuns(const std::vector<Run>& runs) override {
    if (console_) {
      std::vector<Run> shown;
      for (const Run& r : runs)
        if (r.run_type == Run::RT_Aggregate || r.repetitions <= 1) shown.push_back(r);
      if (!shown.empty()) console_->ReportRuns(shown);
    }
    json_.ReportRuns(runs);
  }
  void Finalize() override { json_.Finalize(); }

 private:
  benchmark::ConsoleReporter* console_;
  benchmark::JSONReporter json_;
  std::ostringstream json_errors_;
  bool show_context_;
};

// One benchmark case, shared by its registered lambda. Its tensors are created when the case
// first runs and released when another case starts, so only one case's data is alive at a time.
struct Case {
  const Target* target = nullptr;
  std::string variant;
  sb_variant_fn fn = nullptr;
  SizePoint sizes;
  std::string name;
  double bytes = 0;
  double flops = 0;
  std::string strategy;
  std::string naive_variant;
  Roofline roofline;
  double max_error = 0;
  std::unique_ptr<DeviceTensors> dev;
  std::string setup_error;
};

double to_seconds(double t, const std::string& unit) {
  if (unit == "ns") return t * 1e-9;
  if (unit == "us") return t * 1e-6;
  if (unit == "ms") return t * 1e-3;
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string format_sizes(const Spec& spec, const SizePoint& sizes) {
  std::string s;
  for (size_t i = 0; i < spec.sizes.size() && i < sizes.size(); ++i) {
    if (i) s += ",";
    s += spec.sizes[i].name + "=" + std::to_string(sizes[i]);
  }
  return s;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pass:
      return "pass";
    case Outcome::Fail:
      return "FAIL";
    case Outcome::Skipped:
      return "skipped";
  }
  return "?";
}

std::vector<Target> build_targets(const std::vector<const Spec*>& specs,
                                  const std::vector<std::string>& backends,
                                  const BuildSettings& settings, const ProgressFn& progress) {
  std::vector<Target> targets;
  std::vector<BuildJob> jobs;
  std::string abi_header = (fs::path(settings.tools.abi_dir) / "specbench_abi.h").string();
  for (const Spec* spec : specs) {
    for (const std::string& b : backends) {
      Runtime* rt = find_runtime(b);
      SB_ASSERT(rt, "backend '" + b + "' has no runtime");
      const std::string src = rt->source_backend();
      if (variants_of(*spec, src).empty()) continue;
      const Emitter* em = find_emitter(src);
      SB_ASSERT(em, "backend '" + src + "' has no emitter");
      Target t;
      t.spec = spec;
      t.backend = b;
      t.runtime = rt;
      t.source = (fs::path(settings.root) / "generated" / spec->name / src /
                  (spec->name + "." + em->extension()))
                     .string();
      if (fs::exists(t.source)) {
        // A hand edit is legitimate (that is how one experiments); say so, and build it as is.
        GeneratedFile gf = em->emit(*spec);
        bool same = read_text(t.source) == gf.content;
        // Files built with it (mojo_gpu's launchers) count as part of it.
        for (const CompanionFile& c : gf.companions)
          same = same && read_text((fs::path(settings.root) / "generated" / c.path).string()) ==
                             c.content;
        if (!same) {
          t.launches_unknown = "the generated file differs from what its spec generates";
          if (progress)
            progress("note: " + t.source +
                     (gf.companions.empty() ? "" : " (or a file built with it)") +
                     " differs from what " + spec->path +
                     " generates (edited by hand, or stale: run `specbench gen`); building it as "
                     "is");
        } else {
          t.launches = std::move(gf.launches);
        }
      } else {
        t.launches_unknown = "the generated file is missing";
      }
      BuildJob job;
      job.kernel = spec->name;
      job.backend = b;
      job.source = t.source;
      job.abi_header = abi_header;
      job.cmd = rt->compile_command(settings.tools);
      jobs.push_back(job);
      targets.push_back(std::move(t));
    }
  }
  auto t0 = Clock::now();
  size_t total = jobs.size();
  int parallel = std::max(1, settings.jobs);
  auto on_done = [&](size_t i, const BuildResult& r, size_t done) {
    if (!progress) return;
    std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " +
                       jobs[i].cmd.label + " " + jobs[i].kernel + " (" + jobs[i].backend + ") ";
    const Availability a =
        r.no_compiler ? find_runtime(jobs[i].backend)->availability() : Availability{};
    if (!r.ok && r.no_compiler && !a.ok)
      line += "skipped: " + a.reason;
    else if (!r.ok)
      line += "FAILED";
    else if (r.cached)
      line += "cached";
    else
      line += fmt_seconds(r.seconds);
    if (!r.rebuilt_because.empty())
      line += " (the cached module was rebuilt: " + r.rebuilt_because + ")";
    if (done < total) {
      // Remaining jobs at the average pace so far, spread over the worker threads.
      double elapsed = since(t0);
      double per_job = elapsed * std::min<double>(parallel, total) / done;
      double eta = per_job * (total - done) / std::min<double>(parallel, total - done);
      if (elapsed > 1.0) line += " (ETA " + fmt_seconds(eta) + ")";
    }
    progress(line);
  };
  std::vector<BuildResult> results = build_modules(jobs, settings.cache_dir, parallel, on_done);
  for (size_t i = 0; i < targets.size(); ++i) targets[i].build = std::move(results[i]);
  return targets;
}

std::vector<KernelFactRow> kernel_fact_rows(const std::vector<Target>& targets) {
  std::vector<KernelFactRow> rows;
  for (const Target& t : targets) {
    if (!t.build.ok) continue;
    const std::vector<Variant>& kept = variants_of(t);
    for (const KernelFacts& f : t.build.kernel_facts) {
      KernelFactRow r;
      r.kernel = t.spec->name;
      r.backend = t.backend;
      r.function = readable_kernel_name(f.symbol);
      r.facts = f;
      const KernelLaunch* launch = nullptr;
      for (const KernelLaunch& l : t.launches)
        if (l.kernel == r.function) launch = &l;
      if (launch) {
        r.variant = launch->variant;
        bool selected = std::any_of(kept.begin(), kept.end(),
                                    [&](const Variant& v) { return v.name == r.variant; });
        if (!selected) continue;
        r.block_threads = launch->block_threads;
        r.dynamic_shared = launch->dynamic_shared;
        if (r.block_threads == 0) r.block_unknown = "launched with more than one block size";
      } else if (!t.launches_unknown.empty()) {
        r.block_unknown = t.launches_unknown;
      } else {
        r.block_unknown = "not launched by the generated code (a library chooses its block size)";
      }
      const SmLimits* sm = find_sm_limits(f.arch);
      if (r.block_threads == 0)
        r.occupancy_unknown = "block size unknown";
      else if (!sm)
        r.occupancy_unknown = "no SM limits for sm_" + std::to_string(f.arch);
      else
        r.occupancy =
            theoretical_occupancy(*sm, r.block_threads, f.registers, f.shared_bytes, f.barriers);
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

nlohmann::json kernel_facts_json(const std::vector<KernelFactRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const KernelFactRow& r : rows) {
    nlohmann::json e = {{"kernel", r.kernel},
                        {"backend", r.backend},
                        {"variant", r.variant.empty() ? nlohmann::json() : nlohmann::json(r.variant)},
                        {"function", r.function},
                        {"symbol", r.facts.symbol},
                        {"arch", "sm_" + std::to_string(r.facts.arch)},
                        {"registers", r.facts.registers},
                        {"barriers", r.facts.barriers},
                        {"shared_bytes", r.facts.shared_bytes},
                        {"stack_bytes", r.facts.stack_bytes},
                        {"spill_store_bytes", r.facts.spill_store_bytes},
                        {"spill_load_bytes", r.facts.spill_load_bytes},
                        {"block_threads", r.block_threads ? nlohmann::json(r.block_threads)
                                                          : nlohmann::json()},
                        {"dynamic_shared", r.dynamic_shared}};
    if (r.block_threads == 0) e["block_unknown"] = r.block_unknown;
    if (r.occupancy) {
      const Occupancy& o = *r.occupancy;
      e["occupancy"] = o.fraction;
      e["occupancy_is_upper_bound"] = r.dynamic_shared;
      e["blocks_per_sm"] = o.blocks_per_sm;
      e["active_warps"] = o.active_warps;
      e["max_warps"] = o.max_warps;
      e["limited_by"] = o.limited_by;
      if (!o.valid) e["invalid_launch"] = o.invalid;
    } else {
      e["occupancy"] = nullptr;
      e["occupancy_unknown"] = r.occupancy_unknown;
    }
    out.push_back(std::move(e));
  }
  return out;
}

int64_t tensor_bytes(const Spec& spec, const SizePoint& sizes) {
  int64_t bytes = 0;
  for (size_t t = 0; t < spec.tensors.size(); ++t)
    bytes += tensor_elements(spec, static_cast<int>(t), sizes) * dtype_bytes(spec.tensors[t].type);
  return bytes;
}

int64_t verify_memory_estimate(const Spec& spec, const SizePoint& sizes) {
  // The host tensors and the runtime's copy of them (for host runtimes the same memory; counted
  // for every runtime, so the estimate is an upper bound), then the reference's memos.
  return 2 * tensor_bytes(spec, sizes) + reference_memory_bytes(spec, sizes);
}

std::optional<int64_t> verify_memory_available() {
  if (const char* env = std::getenv("SPECBENCH_VERIFY_MEMORY"); env && *env) {
    char* end = nullptr;
    long long v = std::strtoll(env, &end, 10);
    if (end && *end == '\0' && v >= 0) return v;
  }
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

std::vector<VerifyRecord> verify(const std::vector<Target>& targets, const VerifyOptions& opt,
                                 const ProgressFn& progress) {
  std::vector<VerifyRecord> records;
  struct InputSet {
    InputKind kind;
    uint64_t seed;
    std::string label;
    bool shifted = false;  // buffers one element past a 64-byte boundary (Runtime::can_shift)
  };
  std::vector<InputSet> inputs;
  for (int s = 1; s <= opt.seeds; ++s)
    inputs.push_back({InputKind::Random, static_cast<uint64_t>(s), "seed " + std::to_string(s)});
  inputs.push_back({InputKind::Zeros, 1, input_kind_name(InputKind::Zeros)});
  inputs.push_back({InputKind::Large, 1, input_kind_name(InputKind::Large)});
  inputs.push_back({InputKind::Random, 1, "seed 1, buffers shifted", true});

  size_t total = 0, done = 0;
  for (const Target& t : targets) total += variants_of(t).size();

  for (const Target& t : targets) {
    const Spec& spec = *t.spec;
    Readiness ready = readiness(t);
    for (const Variant& v : variants_of(t)) {
      auto t0 = Clock::now();
      ++done;
      std::string head = "[" + std::to_string(done) + "/" + std::to_string(total) + "] verify " +
                         variant_key(spec.name, t.backend, v.name);
      VerifyRecord base;
      base.kernel = spec.name;
      base.backend = t.backend;
      base.variant = v.name;
      if (!ready.module) {
        VerifyRecord r = base;
        r.sizes = r.inputs = "-";
        r.outcome = ready.outcome;
        r.detail = ready.reason;
        records.push_back(r);
        if (progress)
          progress(head + ": " + outcome_name(r.outcome) + " (" + first_line(r.detail) + ")");
        continue;
      }
      sb_variant_fn fn = ready.module->find(v.name);
      if (!fn) {
        VerifyRecord r = base;
        r.sizes = r.inputs = "-";
        r.outcome = Outcome::Fail;
        r.detail = ready.module->path() + ": module has no variant '" + v.name + "'";
        records.push_back(r);
        if (progress) progress(head + ": FAIL (variant missing from module)");
        continue;
      }
      int passed = 0, checks = 0;
      std::optional<size_t> traffic_record;  // index into records
      for (const SizePoint& p : spec.verify_points()) {
        // A size whose check needs more memory than the machine has is refused, with why,
        // instead of being killed by the kernel's OOM killer half-way.
        const int64_t need = verify_memory_estimate(spec, p);
        const std::optional<int64_t> have = verify_memory_available();
        if (have && need > *have) {
          VerifyRecord r = base;
          r.sizes = format_sizes(spec, p);
          r.inputs = "-";
          r.outcome = Outcome::Fail;
          r.detail = "not verified: " + spec.name + " at " + r.sizes + " needs about " +
                     gib(need) + " of memory to verify (" + gib(tensor_bytes(spec, p)) +
                     " of tensors), and " + gib(*have) + " are available";
          records.push_back(std::move(r));
          ++checks;
          continue;
        }
        for (int sched = 0; sched < t.runtime->schedules(); ++sched)
          for (const InputSet& in : inputs) {
            if (in.shifted && !t.runtime->can_shift()) continue;
            t.runtime->set_schedule(sched);
            t.runtime->set_shifted(in.shifted);
            CheckResult c =
                check_once(*t.runtime, spec, t.backend, v.name, fn, p, in.kind, in.seed, 0, 0);
            t.runtime->set_shifted(false);
            VerifyRecord r = base;
            r.sizes = format_sizes(spec, p);
            std::string order = t.runtime->schedule_name(sched);
            r.inputs = order.empty() ? in.label : in.label + ", " + order;
            r.outcome = c.ok ? Outcome::Pass : Outcome::Fail;
            r.max_abs_err = c.max_abs;
            r.max_rel_err = c.max_rel;
            r.detail = c.detail;
            std::optional<MemoryTraffic> traffic = t.runtime->last_traffic();
            if (c.ok && traffic && sched == 0 && &in == &inputs.front()) {
              const int64_t bytes = bytes_moved(spec, p);
              if (!traffic_record || bytes > records[*traffic_record].spec_bytes) {
                if (traffic_record) records[*traffic_record].traffic.reset();
                r.traffic = traffic;
                r.spec_bytes = bytes;
                traffic_record = records.size();
              }
            }
            records.push_back(std::move(r));
            ++checks;
            passed += c.ok;
          }
      }
      if (progress)
        progress(head + ": " + std::to_string(passed) + "/" + std::to_string(checks) + " passed (" +
                 fmt_seconds(since(t0)) + ")");
    }
    std::string note = t.runtime->report();
    if (progress && !note.empty()) progress(note);
  }
  return records;
}

std::set<std::string> failed_variants(const std::vector<VerifyRecord>& records) {
  std::set<std::string> s;
  for (const auto& r : records) {
    if (r.outcome == Outcome::Fail) s.insert(variant_key(r.kernel, r.backend, r.variant));
  }
  return s;
}

std::map<std::string, std::string> run_context(const std::string& root,
                                               const ToolchainOptions& tools) {
  std::map<std::string, std::string> c;
  ProcessResult git = run_process({"git", "-C", root, "rev-parse", "HEAD"});
  std::string commit = last_line(git.output);
  c["git_commit"] = git.exit_code == 0 && !commit.empty() ? commit : "unknown";
  // Whether tracked files differ from that commit (then the commit alone does not name the code
  // that ran): "true", "false" or "unknown".
  // git diff exits 1 on a difference, 0 on none, and otherwise on an error.
  const int diff = run_process({"git", "-C", root, "diff", "--quiet", "HEAD", "--"}).exit_code;
  c["git_modified"] = diff == 1 ? "true" : diff == 0 ? "false" : "unknown";
  std::string cxx = first_line(compiler_version(tools.cxx));
  c["cxx"] = cxx.empty() ? tools.cxx : cxx;
  std::string nvcc = last_line(compiler_version(tools.nvcc));
  c["nvcc"] = nvcc.empty() ? "none" : nvcc;
  c["cpu_model"] = cpu_model();
  // Which OpenBLAS kernels vendor_cpu runs, and why (run/blas_core.h).
  const BlasCoreChoice& blas = settle_openblas_core(SPECBENCH_OPENBLAS_LIBRARY);
  c["blas_core"] = blas.used.empty() ? "none" : blas.used + " (" + blas.why + ")";
  // Large host buffers are advised MADV_HUGEPAGE (specbench_host_alloc.h); whether that gives
  // huge pages depends on this kernel setting, e.g. "always [madvise] never".
  std::string thp = first_line(read_text("/sys/kernel/mm/transparent_hugepage/enabled"));
  c["transparent_hugepages"] = thp.empty() ? "unknown" : thp;
  Runtime* gpu = find_runtime(native_backend(Device::Gpu).name);
  c["gpu"] = gpu ? gpu->device_name() : "none";
  // The compiler version of each backend whose record names a context key: `mojo --version`,
  // e.g. "Mojo 1.2.0 (2016d0cd)".
  for (const BackendRecord& b : backend_records()) {
    if (b.version_key.empty()) continue;
    Runtime* rt = find_runtime(b.name);
    std::string version;
    if (rt && rt->availability().ok)
      version = first_line(compiler_version(rt->compile_command(tools).compiler));
    c[b.version_key] = version.empty() ? "none" : version;
  }
  c["specbench_version"] = kSpecbenchVersion;
  // The generator's identity beyond the commit (which misses uncommitted edits): a hash over
  // the codegen sources, subfolders included, in path order.
  const fs::path gen_root = fs::path(root) / "codegen";
  std::vector<fs::path> gen_files;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(gen_root, ec))
    if (e.is_regular_file()) gen_files.push_back(e.path().lexically_relative(gen_root));
  std::sort(gen_files.begin(), gen_files.end());
  uint64_t h = fnv1a64("");
  for (const auto& p : gen_files)
    h = fnv1a64(p.generic_string() + "\n" + read_text((gen_root / p).string()), h);
  c["generator_hash"] = gen_files.empty() ? "unknown" : hex64(h);
  return c;
}

Result<BenchReport> bench(const std::vector<Target>& targets, const BenchOptions& opt,
                          const ProgressFn& progress) {
  std::vector<ResultProblem> skipped, failed;
  std::vector<std::unique_ptr<Case>> cases;
  MachineLimits limits = limits_from_probes(opt.probes);

  size_t total = 0, done = 0;
  for (const Target& t : targets) {
    const auto pts = opt.verify_sizes ? t.spec->verify_points() : t.spec->bench_points();
    total += variants_of(t).size() * pts.size();
  }

  std::string check_inputs_spec;
  std::map<std::string, HostTensors> check_inputs;
  for (const Target& t : targets) {
    const Spec& spec = *t.spec;
    const std::vector<SizePoint> points =
        opt.verify_sizes ? spec.verify_points() : spec.bench_points();
    Readiness ready = readiness(t);
    for (const Variant& v : variants_of(t)) {
      sb_variant_fn fn = ready.module ? ready.module->find(v.name) : nullptr;
      for (const SizePoint& p : points) {
        ++done;
        ResultProblem prob{spec.name, t.backend, v.name, size_pairs(spec, p), "", 0};
        std::string head = "[" + std::to_string(done) + "/" + std::to_string(total) + "] check " +
                           variant_key(spec.name, t.backend, v.name) + " " + format_sizes(spec, p);
        if (!ready.module) {
          prob.reason = ready.reason;
          (ready.outcome == Outcome::Skipped ? skipped : failed).push_back(prob);
          continue;
        }
        if (!t.runtime->timed()) {
          prob.reason = t.backend + " is a simulator: it verifies, it is not timed";
          skipped.push_back(prob);
          continue;
        }
        if (!fn) {
          prob.reason = "module has no variant '" + v.name + "'";
          failed.push_back(prob);
          continue;
        }
        const std::string case_name =
            variant_key(spec.name, t.backend, v.name) + "/" + format_sizes(spec, p);
        if (opt.done.count(case_name)) continue;  // measured before a resume
        if (opt.exclude.count(variant_key(spec.name, t.backend, v.name))) {
          prob.reason = "failed verification at the verify sizes";
          failed.push_back(prob);
          continue;
        }
        auto t0 = Clock::now();
        // Every variant of every backend checks on a copy of the same inputs, made once per
        // kernel and size (copying is far cheaper than drawing them again); only the current
        // kernel's are kept.
        const std::string inputs_key = format_sizes(spec, p);
        if (check_inputs_spec != spec.name) {
          check_inputs.clear();
          check_inputs_spec = spec.name;
        }
        auto in = check_inputs.find(inputs_key);
        CheckResult c;
        try {
          if (in == check_inputs.end())
            in = check_inputs
                     .emplace(inputs_key, make_host_tensors(spec, p, InputKind::Random, 1))
                     .first;
          c = check_on(*t.runtime, spec, t.backend, v.name, fn, p, in->second, opt.sample,
                       opt.sample_seed);
        } catch (const std::exception& e) {
          c = CheckResult{false, 0, 0, std::string("setting up inputs: ") + e.what()};
        }
        if (!c.ok) {
          prob.reason = c.detail;
          prob.max_error = c.max_abs;
          failed.push_back(prob);
          if (progress) progress(head + ": FAIL, not timed");
          continue;
        }
        if (progress) progress(head + ": ok (" + fmt_seconds(since(t0)) + ")");
        auto k = std::make_unique<Case>();
        k->target = &t;
        k->variant = v.name;
        k->strategy = v.strategy;
        k->fn = fn;
        k->sizes = p;
        k->name = case_name;
        k->bytes = static_cast<double>(bytes_moved(spec, p));
        k->flops = flops(spec, p);
        k->naive_variant = variants_of(t).front().name;
        k->roofline = choose_bound(k->bytes, k->flops, limits_for(limits, t.backend));
        k->max_error = c.max_abs;
        cases.push_back(std::move(k));
      }
    }
  }
  check_inputs.clear();  // not held while timing

  // The cases of one kernel at one size (every backend and variant) run in one Google Benchmark
  // session with their repetitions randomly interleaved, so that a drift of the machine's speed
  // (this VM's memory bandwidth moves by tens of percent within minutes) touches all of them
  // alike instead of whichever ran during it. A switch to another case uploads the same inputs
  // afresh and runs the variant once untimed. A group is checkpointed (opt.checkpoint, per case) as
  // soon as it is done; its entries are annotated then, once, and collected.
  struct Group {
    std::vector<Case*> cases;
    std::unique_ptr<HostTensors> host;  // the inputs, made once when the group first runs
  };
  std::vector<Group> groups;
  {
    std::map<std::string, size_t> index;
    for (auto& k : cases) {
      const std::string key =
          k->target->spec->name + "/" + format_sizes(*k->target->spec, k->sizes);
      auto [it, fresh] = index.emplace(key, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].cases.push_back(k.get());
    }
  }
  nlohmann::json gbench_context;  // the first session's context
  nlohmann::json entries = nlohmann::json::array();
  std::vector<ResultCase> rcases;
  auto result_case = [](const Case& k) {
    return ResultCase{k.name,
                      k.target->spec->name,
                      k.target->backend,
                      k.variant,
                      size_pairs(*k.target->spec, k.sizes),
                      true,
                      k.max_error,
                      k.roofline,
                      k.strategy,
                      k.naive_variant,
                      k.bytes,
                      k.flops};
  };
  // The machine's state around the timing: a loaded start is said before anything is timed.
  const int cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  int64_t llc = last_level_cache_bytes();
  const CpuSnapshot load_start = take_cpu_snapshot();
  if (std::string w = loaded_warning(load_start, cores); !w.empty() && progress && !cases.empty())
    progress("warning: " + w);
  if (!cases.empty()) {
    std::vector<std::string> args{"specbench",
                                  "--benchmark_min_time=" + std::to_string(opt.min_time),
                                  "--benchmark_repetitions=" + std::to_string(opt.repetitions),
                                  "--benchmark_enable_random_interleaving=true"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    benchmark::Initialize(&argc, argv.data());
    // Google Benchmark keeps custom context in a global map that rejects duplicate keys.
    static std::set<std::string> added;
    for (const auto& [key, value] : opt.context) {
      if (added.insert(key).second) benchmark::AddCustomContext(key, value);
    }

    benchmark::ConsoleReporter console(isatty(1) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                 : benchmark::ConsoleReporter::OO_Tabular);
    Case* active = nullptr;
    auto t_start = Clock::now();
    size_t timed = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      Group& group = groups[g];
      for (Case* k : group.cases) {
        auto* b = benchmark::RegisterBenchmark(
            k->name.c_str(), [k, &group, &active](benchmark::State& st) {
              if (active != k) {
                if (active) active->dev.reset();
                active = k;
                k->setup_error.clear();
                try {
                  if (!group.host)
                    group.host = std::make_unique<HostTensors>(
                        make_host_tensors(*k->target->spec, k->sizes, InputKind::Random, 1));
                  auto dev = k->target->runtime->upload(*group.host);
                  if (!dev.ok()) {
                    k->setup_error = dev.error().message;
                  } else if (Status warm = k->target->runtime->run(k->fn, *dev.value(), k->sizes);
                             !warm.ok()) {
                    k->setup_error = warm.error().message;
                  } else {
                    // That untimed call on the fresh buffers kept their first touch, and the
                    // wake-up of this backend's threads (another backend's may still be spinning
                    // for KMP_BLOCKTIME or GOMP_SPINCOUNT), out of the timing.
                    k->dev = std::move(dev.value());
                  }
                } catch (const std::exception& e) {
                  k->setup_error = std::string("setting up inputs: ") + e.what();
                }
              }
              if (!k->dev) {
                st.SkipWithError(k->setup_error.c_str());
                return;
              }
              k->target->runtime->time(st, k->fn, *k->dev, k->sizes);
              using C = benchmark::Counter;
              if (k->bytes > 0) st.counters["bytes"] = C(k->bytes, C::kIsIterationInvariantRate);
              if (k->flops > 0) st.counters["flops"] = C(k->flops, C::kIsIterationInvariantRate);
            });
        k->target->runtime->configure(b);
      }
      std::ostringstream json_out;
      {
        TeeReporter tee(opt.display ? &console : nullptr, &json_out, /*show_context=*/g == 0);
        benchmark::RunSpecifiedBenchmarks(&tee);
      }
      if (active) active->dev.reset();
      active = nullptr;
      group.host.reset();
      benchmark::ClearRegisteredBenchmarks();
      std::vector<ResultCase> mine_cases;
      for (const Case* k : group.cases) mine_cases.push_back(result_case(*k));
      auto session = make_results_document(json_out.str(), mine_cases, {}, {}, {});
      if (!session.ok())
        return Error{Loc{},
                     session.error().message + " (timing " + group.cases.front()->name +
                         " and the other variants at its size)",
                     ""};
      if (gbench_context.is_null()) gbench_context = session.value()["context"];
      // The session reports in the interleaved order; keep the entries in case order.
      for (const Case* k : group.cases) {
        nlohmann::json mine = nlohmann::json::array();
        for (const auto& e : session.value()["benchmarks"])
          if (entry_is_of(e, k->name)) mine.push_back(e);
        if (llc <= 0) llc = last_level_cache_from_context(gbench_context);
        annotate_trust(mine, llc);
        if (opt.checkpoint) opt.checkpoint(k->name, mine);
        for (auto& e : mine) entries.push_back(std::move(e));
      }
      for (auto& rc : mine_cases) rcases.push_back(std::move(rc));
      timed += group.cases.size();
      if (progress) {
        double elapsed = since(t_start);
        double eta =
            elapsed / static_cast<double>(timed) * static_cast<double>(cases.size() - timed);
        const Case& first = *group.cases.front();
        progress("[" + std::to_string(timed) + "/" + std::to_string(cases.size()) + "] timed " +
                 first.target->spec->name + " " + format_sizes(*first.target->spec, first.sizes) +
                 ", " + std::to_string(group.cases.size()) + " variant(s) interleaved (" +
                 fmt_seconds(elapsed) + " so far, ETA " + fmt_seconds(eta) + ")");
      }
    }
    if (opt.display) console.Finalize();
  }
  const CpuSnapshot load_end = take_cpu_snapshot();

  ProbeResults probes = opt.probes;
  if (opt.end_probes) {
    probes = merge_probe_runs(opt.probes, opt.end_probes());
    limits = limits_from_probes(probes);
    for (auto& k : cases)
      k->roofline = choose_bound(k->bytes, k->flops, limits_for(limits, k->target->backend));
    for (auto& e : entries)
      for (const auto& k : cases)
        if (entry_is_of(e, k->name)) {
          annotate_roofline(e, k->roofline);
          break;
        }
    // The suspect flags follow the final limits.
    for (const auto& k : cases) {
      nlohmann::json mine = nlohmann::json::array();
      std::vector<size_t> at;
      for (size_t i = 0; i < entries.size(); ++i)
        if (entry_is_of(entries[i], k->name)) {
          at.push_back(i);
          mine.push_back(entries[i]);
        }
      annotate_trust(mine, llc);
      for (size_t j = 0; j < at.size(); ++j) entries[at[j]] = std::move(mine[j]);
    }
  }

  nlohmann::json shell = {
      {"context", gbench_context.is_null() ? nlohmann::json::object() : gbench_context},
      {"benchmarks", nlohmann::json::array()}};
  auto doc = make_results_document(gbench_context.is_null() ? std::string() : shell.dump(), {},
                                   skipped, failed, opt.context);
  if (!doc.ok()) return doc.error();
  doc.value()["benchmarks"] = std::move(entries);
  doc.value()["context"]["probes"] = probes_json(probes);
  doc.value()["context"]["limits"] = limits_json(limits);
  const MachineLoad load = machine_load(load_start, load_end, cores);
  doc.value()["context"]["machine_load"] = machine_load_json(load);
  doc.value()["context"]["llc_bytes"] = llc > 0 ? nlohmann::json(llc) : nlohmann::json(nullptr);

  BenchReport report;
  report.doc = std::move(doc.value());
  report.probes = probes;
  report.limits = limits;
  report.load = load;
  report.llc_bytes = llc;
  // Plain records: one per case, from its median (or only) entry in the document.
  for (const auto& k : cases) {
    BenchRecord r;
    r.kernel = k->target->spec->name;
    r.backend = k->target->backend;
    r.variant = k->variant;
    r.sizes = format_sizes(*k->target->spec, k->sizes);
    r.verified = true;
    r.max_error = k->max_error;
    r.bytes = k->bytes;
    r.flops = k->flops;
    r.strategy = k->strategy;
    r.naive_variant = k->naive_variant;
    r.roofline = k->roofline;
    const nlohmann::json* pick = nullptr;
    std::vector<double> samples;
    for (const auto& e : report.doc["benchmarks"]) {
      if (!entry_is_of(e, k->name)) continue;
      if (e.value("error_occurred", false)) {
        pick = &e;
        break;
      }
      if (e.value("run_type", "iteration") != "aggregate")
        samples.push_back(to_seconds(e.value("real_time", 0.0), e.value("time_unit", "ns")));
      std::string agg = e.value("aggregate_name", "");
      if (agg == "cv") r.cv = e.value("real_time", 0.0);  // a fraction, not a time
      if (agg == "median" || (agg.empty() && !pick)) pick = &e;
    }
    if (!pick) {
      r.status = BenchStatus::Failed;
      r.reason = "no result from Google Benchmark";
    } else if (pick->value("error_occurred", false)) {
      r.status = BenchStatus::Failed;
      r.reason = pick->value("error_message", "error");
    } else {
      r.status = BenchStatus::Measured;
      r.seconds = to_seconds(pick->value("real_time", 0.0), pick->value("time_unit", "ns"));
      if (r.seconds > 0) {
        r.gbps = k->bytes / r.seconds * 1e-9;
        r.gflops = k->flops / r.seconds * 1e-9;
      }
      r.roofline_fraction = roofline_fraction(r.roofline, r.gbps, r.gflops);
      r.spread = assess_spread(samples);
      r.suspect = suspect_of(r.roofline, r.gbps, r.gflops, r.bytes, r.roofline_fraction,
                             is_gpu_backend(r.backend) ? 0 : llc);
    }
    report.records.push_back(std::move(r));
  }
  for (const auto* list : {&skipped, &failed}) {
    for (const ResultProblem& p : *list) {
      BenchRecord r;
      r.kernel = p.kernel;
      r.backend = p.backend;
      r.variant = p.variant;
      for (const auto& [n, v] : p.sizes)
        r.sizes += (r.sizes.empty() ? "" : ",") + n + "=" + std::to_string(v);
      r.status = list == &skipped ? BenchStatus::Skipped : BenchStatus::Failed;
      r.verified = false;
      r.max_error = p.max_error;
      r.reason = p.reason;
      report.records.push_back(std::move(r));
    }
  }
  report.summary = summarize(report.records);
  report.doc["summary"] = summary_json(report.summary);
  report.languages = compare_languages(report.records);
  report.doc["languages"] = languages_json(report.languages);
  report.doc["kernel_facts"] = kernel_facts_json(kernel_fact_rows(targets));
  return report;
}

std::vector<BenchRecord> best_per_size(const std::vector<BenchRecord>& records) {
  std::vector<BenchRecord> best;
  std::map<std::string, size_t> index;
  for (const BenchRecord& r : records) {
    if (r.status != BenchStatus::Measured) continue;
    std::string key = r.kernel + "/" + r.backend + "/" + r.sizes;
    auto it = index.find(key);
    if (it == index.end()) {
      index[key] = best.size();
      best.push_back(r);
    } else if (r.seconds < best[it->second].seconds) {
      best[it->second] = r;
    }
  }
  for (const BenchRecord& r : records) {
    if (r.status != BenchStatus::Measured) best.push_back(r);
  }
  return best;
}

}  // namespace sb
