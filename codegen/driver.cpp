#include "driver.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "bounds.h"
#include "lower/expand_intrinsics.h"
#include "spec_loader.h"
#include "typecheck.h"
#include "variant_check.h"

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
      {"check", "bounds proven and variants checked against their strategies (bounds, "
                "variant_check)"},
      {"expand_intrinsics", "per backend: intrinsics it does not spell replaced by their "
                            "default expansions (lower/expand_intrinsics)"},
  };
  return stages;
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
  SB_TRY(check_variants(spec));
  if (dump_after == "check") std::cout << "# IR after check\n" << dump(spec);
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
      files.push_back(e->emit(s));
    }
  }
  return files;
}

Status write_file_atomic(const std::string& path, const std::string& content) {
  fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) return make_error(Loc{path, 0, 0}, "cannot create folder: " + ec.message());
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return make_error(Loc{path, 0, 0}, "cannot write file");
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return make_error(Loc{path, 0, 0}, "cannot replace file: " + ec.message());
  }
  return {};
}

namespace {

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
  if (opt.dump_after == "expand_intrinsics") {
    for (const Spec& s : specs.value()) {
      for (const Emitter* e : all_emitters()) {
        if (!s.variants.count(e->backend())) continue;
        std::cout << "# IR after expand_intrinsics for backend " << e->backend() << "\n"
                  << dump(expand_intrinsics(s, [e](Fn fn) { return e->spells(fn); }));
      }
    }
  }
  std::vector<GeneratedFile> files = generate(specs.value());
  fs::path out_dir = opt.out_dir.empty() ? fs::path(opt.root) / "generated" : fs::path(opt.out_dir);

  std::set<std::string> produced;
  for (const auto& f : files) produced.insert(f.path);
  // Files under generated/ that no spec produces; only judged when every spec was given.
  std::vector<std::string> orphans;
  if (opt.specs.empty() && fs::exists(out_dir)) {
    for (const auto& e : fs::recursive_directory_iterator(out_dir)) {
      if (!e.is_regular_file()) continue;
      std::string rel = fs::relative(e.path(), out_dir).generic_string();
      if (rel == ".gitkeep" || rel == "README.md") continue;
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
  for (const auto& f : files) {
    fs::path p = out_dir / f.path;
    if (fs::exists(p) && read_all(p) == f.content) continue;
    Status st = write_file_atomic(p.string(), f.content);
    if (!st.ok()) {
      std::cerr << format_error(st.error());
      return 2;
    }
    ++written;
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
  return 0;
}

}  // namespace sb
