#include "driver.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "check/arg_reductions.h"
#include "check/bounds.h"
#include "check/derive_variants.h"
#include "check/typecheck.h"
#include "check/variant_check.h"
#include "frontend/spec_loader.h"
#include "lower/blocked_gemm.h"
#include "lower/host_bodies.h"
#include "lower/pipeline.h"
#include "support/safe_io.h"

namespace sb {

namespace fs = std::filesystem;

std::vector<std::string> default_spec_paths(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(root) / "specs", ec)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<IrStage>& ir_stages() {
  static const std::vector<IrStage> stages = {
      {"load", "the spec file parsed into the IR (spec_loader)"},
      {"typecheck", "names resolved and every expression typed (typecheck)"},
      {"arg_reductions",
       "bounds proven (bounds), then argmax and argmin as a max or min into a "
       "temp and the least index holding it (arg_reductions)"},
      {"check", "variants checked against their strategies (variant_check)"},
      {"derive_variants",
       "the variants of derived backends (mojo_gpu) taken from their source's (derive_variants)"},
  };
  static const std::vector<IrStage> all = [] {
    std::vector<IrStage> v = stages;
    for (const LowerPass& p : lower_passes()) v.push_back({p.name, p.what});
    return v;
  }();
  return all;
}

Result<Spec> load_and_check(const std::string& path, const std::string& dump_after) {
  auto loaded = load_spec(path);
  if (!loaded.ok()) return loaded;
  Spec& spec = loaded.value();
  if (dump_after == "load") std::cout << "# IR after load\n" << dump(spec);
  // The check stages, in order; each is a pass of its own (see check.h).
  SB_TRY(typecheck(spec));
  if (dump_after == "typecheck") std::cout << "# IR after typecheck\n" << dump(spec);
  SB_TRY(check_bounds(spec));
  SB_TRY(rewrite_arg_reductions(spec));
  if (dump_after == "arg_reductions") std::cout << "# IR after arg_reductions\n" << dump(spec);
  SB_TRY(check_variants(spec));
  if (dump_after == "check") std::cout << "# IR after check\n" << dump(spec);
  derive_variants(spec);
  if (dump_after == "derive_variants") std::cout << "# IR after derive_variants\n" << dump(spec);
  return loaded;
}

Result<std::vector<Spec>> load_all(const std::vector<std::string>& paths,
                                   const std::string& dump_after) {
  std::vector<Spec> specs;
  std::map<std::string, std::string> seen;
  for (const auto& p : paths) {
    auto s = load_and_check(p, dump_after);
    if (!s.ok()) return s.error();
    auto [it, fresh] = seen.emplace(s.value().name, p);
    if (!fresh)
      return make_error(s.value().loc,
                        "spec name '" + s.value().name + "' is already used by " + it->second);
    specs.push_back(std::move(s.value()));
  }
  return specs;
}

std::vector<GeneratedFile> generate(const std::vector<Spec>& specs) {
  std::vector<GeneratedFile> files;
  for (const Spec& s : specs) {
    for (const Emitter* e : all_emitters()) {
      if (!s.variants.count(e->backend())) continue;
      GeneratedFile f = e->emit(s);
      std::vector<CompanionFile> companions = std::move(f.companions);
      files.push_back(std::move(f));
      for (CompanionFile& c : companions) files.push_back({c.path, std::move(c.content)});
    }
  }
  return files;
}


namespace {

// "<name>.tmp.<pid>": a temporary of write_file_atomic or of a gen run, left behind when that
// process was killed. Those of live processes (another gen running now) are not stale.
// The pid of such a temporary, or 0 when `p` is not named like one.
long temp_pid(const fs::path& p) {
  const std::string n = p.filename().string();
  const size_t at = n.rfind(".tmp.");
  if (at == std::string::npos || at == 0) return 0;
  const std::string pid = n.substr(at + 5);
  if (pid.empty() || pid.size() > 9) return 0;
  for (char c : pid)
    if (c < '0' || c > '9') return 0;
  return std::stol(pid);
}

bool is_stale_temp(const fs::path& p) {
  const long v = temp_pid(p);
  if (v <= 0 || v == static_cast<long>(::getpid())) return false;
  return ::kill(static_cast<pid_t>(v), 0) != 0 && errno == ESRCH;
}

// Removes the stale temporaries under `dir`; returns how many.
int remove_stale_temps(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return 0;
  std::vector<fs::path> stale;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec) && is_stale_temp(it->path())) stale.push_back(it->path());
  }
  int n = 0;
  for (const auto& p : stale) n += fs::remove(p, ec) ? 1 : 0;
  return n;
}

Error io_error(const fs::path& p, const std::string& what, int err) {
  return Error{Loc{p.string(), 0, 0}, what + ": " + std::strerror(err), ""};
}

// A gen run's writes, staged: every new content goes to a temporary next to its target, and
// only when all are written are they renamed into place. A failure while staging removes the
// temporaries and the folders made for them, so generated/ is left as it was.
class Stage {
 public:
  ~Stage() { abandon(); }

  Status add(const fs::path& target, const std::string& content) {
    std::error_code ec;
    auto st = fs::symlink_status(target, ec);
    if (!ec && fs::exists(st) && !fs::is_regular_file(st))
      return Error{Loc{target.string(), 0, 0}, "cannot replace it: it is not a regular file", ""};
    SB_TRY(make_parents(target.parent_path()));
    fs::path tmp = target;
    tmp += ".tmp." + std::to_string(::getpid());
    SB_TRY(write_new_file(tmp.string(), content));
    staged_.push_back({target, tmp});
    return {};
  }

  // Renames every temporary into place.
  Status commit() {
    for (size_t i = 0; i < staged_.size(); ++i) {
      if (std::rename(staged_[i].tmp.c_str(), staged_[i].target.c_str()) != 0) {
        int err = errno;
        staged_.erase(staged_.begin(), staged_.begin() + static_cast<long>(i));
        return io_error(staged_.front().target, "cannot replace file", err);
      }
    }
    staged_.clear();
    made_.clear();
    return {};
  }

 private:
  // Creates the missing folders of `dir`, outermost first, remembering them for abandon().
  Status make_parents(const fs::path& dir) {
    std::vector<fs::path> missing;
    std::error_code ec;
    for (fs::path d = dir; !d.empty() && !fs::exists(d, ec); d = d.parent_path()) {
      missing.push_back(d);
      if (d == d.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      if (::mkdir(it->c_str(), 0755) != 0 && errno != EEXIST)
        return io_error(*it, "cannot create folder", errno);
      made_.push_back(*it);
    }
    return {};
  }

  void abandon() {
    std::error_code ec;
    for (const auto& s : staged_) fs::remove(s.tmp, ec);
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) fs::remove(*it, ec);  // if empty
    staged_.clear();
    made_.clear();
  }

  struct Staged {
    fs::path target, tmp;
  };
  std::vector<Staged> staged_;
  std::vector<fs::path> made_;
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int run_gen(const GenOptions& opt) {
  std::vector<std::string> paths = opt.specs.empty() ? default_spec_paths(opt.root) : opt.specs;
  if (paths.empty()) {
    std::cerr << "error: no specs found under " << opt.root << "/specs\n";
    return 2;
  }
  if (opt.dump_after == "list") {
    for (const IrStage& st : ir_stages()) std::printf("%-18s %s\n", st.name, st.what);
    return 0;
  }
  auto specs = load_all(paths, opt.dump_after);
  if (!specs.ok()) {
    std::cerr << format_error(specs.error());
    return 2;
  }
  for (const LowerPass& p : lower_passes()) {
    if (opt.dump_after != p.name) continue;
    for (const Spec& s : specs.value()) {
      for (const Emitter* e : all_emitters()) {
        if (!s.variants.count(e->backend())) continue;
        if (std::string(p.name) == "blocked_gemm") {  // loop IR, built by the printers' call
          std::cout << dump_blocked_gemm(s, e->backend(), e->gemm_target(),
                                         [e](const Variant& v) { return e->uses_blocked_gemm(v); });
          continue;
        }
        if (std::string(p.name) == "gpu_mapping") {  // per variant, from the strategy's schedule
          std::cout << e->dump_gpu_mapping(lower(s, [e](Fn fn) { return e->spells(fn); }));
          continue;
        }
        if (std::string(p.name) == "host_bodies") {  // loop IR, built by the host printers' call
          if (e->prints_host_bodies())
            std::cout << dump_host_bodies(lower(s, [e](Fn fn) { return e->spells(fn); }),
                                          e->backend());
          continue;
        }
        if (std::string(p.name) == "gpu_bodies") {  // loop IR, built by the GPU printers' call
          std::cout << e->dump_gpu_bodies(lower(s, [e](Fn fn) { return e->spells(fn); }));
          continue;
        }
        lower(s, [e](Fn fn) { return e->spells(fn); }, p.name, &std::cout,
              "backend " + e->backend());
      }
    }
  }
  std::vector<GeneratedFile> files = generate(specs.value());
  fs::path out_dir = opt.out_dir.empty() ? fs::path(opt.root) / "generated" : fs::path(opt.out_dir);

  // Litter of earlier runs that were killed mid-write (never touched by --check, which only
  // reports; a bad spec has already returned above).
  const int stale_temps = opt.check ? 0 : remove_stale_temps(out_dir);

  std::set<std::string> produced;
  for (const auto& f : files) produced.insert(f.path);
  // Files under generated/ that no spec produces; only judged when every spec was given.
  std::vector<std::string> orphans;
  if (opt.specs.empty() && fs::exists(out_dir)) {
    for (const auto& e : fs::recursive_directory_iterator(out_dir)) {
      if (!e.is_regular_file()) continue;
      std::string rel = fs::relative(e.path(), out_dir).generic_string();
      if (rel == ".gitkeep" || rel == "README.md") continue;
      if (temp_pid(e.path()) > 0) continue;  // a temporary: stale ones were removed above
      if (!produced.count(rel)) orphans.push_back(rel);
    }
    std::sort(orphans.begin(), orphans.end());
  }

  if (opt.check) {
    int stale = 0;
    for (const auto& f : files) {
      fs::path p = out_dir / f.path;
      if (!fs::exists(p)) {
        std::cerr << "stale: " << p.string() << " (missing)\n";
        ++stale;
      } else if (read_all(p) != f.content) {
        std::cerr << "stale: " << p.string() << " (differs from what its spec produces)\n";
        ++stale;
      }
    }
    for (const auto& o : orphans) {
      std::cerr << "stale: " << (out_dir / o).string() << " (no spec produces it)\n";
      ++stale;
    }
    if (stale) {
      std::cerr << stale << " stale file" << (stale == 1 ? "" : "s")
                << " under generated/; run 'specbench gen' to regenerate\n";
      return 1;
    }
    std::cout << "generated/ is up to date (" << files.size() << " files from "
              << specs.value().size() << " specs)\n";
    return 0;
  }

  int written = 0;
  {
    Stage stage;
    for (const auto& f : files) {
      fs::path p = out_dir / f.path;
      if (fs::exists(p) && read_all(p) == f.content) continue;
      Status st = stage.add(p, f.content);
      if (!st.ok()) {
        std::cerr << format_error(st.error()) << "nothing under " << out_dir.string()
                  << " was changed\n";
        return 2;
      }
      ++written;
    }
    Status st = stage.commit();
    if (!st.ok()) {
      std::cerr << format_error(st.error());
      return 2;
    }
  }
  std::error_code ec;
  for (const auto& o : orphans) {
    fs::remove(out_dir / o, ec);
    // Drop folders the removal left empty (backend, then kernel).
    for (fs::path d = (out_dir / o).parent_path(); d != out_dir && fs::is_empty(d, ec);
         d = d.parent_path())
      fs::remove(d, ec);
  }
  std::cout << "generated " << files.size() << " files from " << specs.value().size() << " specs ("
            << written << " updated, " << orphans.size() << " removed)\n";
  if (stale_temps > 0)
    std::cout << "removed " << stale_temps << " stale temporary file" << (stale_temps == 1 ? "" : "s")
              << " of an earlier, interrupted run\n";
  return 0;
}

}  // namespace sb
