#include "build/module.h"

#include <dlfcn.h>

#include <cstring>

#include "build/toolchain.h"

namespace sb {

namespace {

Error module_error(const std::string& path, const std::string& msg) {
  return Error{Loc{path, 0, 0}, msg, ""};
}

}  // namespace

Result<Module> Module::load(const std::string& path, const Spec& spec, const std::string& backend) {
  // Only what specbench wrote into the cache is loaded (toolchain.h: dlopen_cache_entry).
  std::string error;
  void* handle = dlopen_cache_entry(path, "specbench_module", error);
  if (!handle) return module_error(path, error);
  dlerror();
  void* sym = dlsym(handle, "specbench_module");
  if (!sym) {
    const char* e = dlerror();
    return module_error(
        path, std::string("module exports no specbench_module(): ") + (e ? e : "symbol is null"));
  }
  auto fn = reinterpret_cast<sb_module_fn>(sym);
  const sb_module* m = fn();
  if (!m) return module_error(path, "specbench_module() returned NULL");
  if (m->abi_version != SPECBENCH_ABI_VERSION)
    return module_error(path, "module ABI version " + std::to_string(m->abi_version) +
                                  ", the harness expects " + std::to_string(SPECBENCH_ABI_VERSION) +
                                  " (regenerate it)");
  if (!m->spec || spec.name != m->spec)
    return module_error(path, "module is for spec '" + std::string(m->spec ? m->spec : "(null)") +
                                  "', expected '" + spec.name + "'");
  if (!m->backend || backend != m->backend)
    return module_error(path, "module is for backend '" +
                                  std::string(m->backend ? m->backend : "(null)") +
                                  "', expected '" + backend + "'");
  if (m->num_tensors != static_cast<int>(spec.tensors.size()))
    return module_error(path, "module expects " + std::to_string(m->num_tensors) +
                                  " tensors, spec '" + spec.name + "' has " +
                                  std::to_string(spec.tensors.size()));
  if (m->num_sizes != static_cast<int>(spec.sizes.size()))
    return module_error(path, "module expects " + std::to_string(m->num_sizes) +
                                  " size parameters, spec '" + spec.name + "' has " +
                                  std::to_string(spec.sizes.size()));
  if (m->num_variants < 0 || (m->num_variants > 0 && !m->variants))
    return module_error(path, "module has a malformed variant table");
  for (int i = 0; i < m->num_variants; ++i) {
    if (!m->variants[i].name || !m->variants[i].fn)
      return module_error(path, "variant " + std::to_string(i) + " has no name or function");
  }
  Module mod;
  mod.path_ = path;
  mod.table_ = m;
  return mod;
}

sb_variant_fn Module::find(const std::string& name) const {
  for (int i = 0; i < table_->num_variants; ++i) {
    if (name == table_->variants[i].name) return table_->variants[i].fn;
  }
  return nullptr;
}

std::vector<std::string> Module::variant_names() const {
  std::vector<std::string> names;
  for (int i = 0; i < table_->num_variants; ++i) names.emplace_back(table_->variants[i].name);
  return names;
}

}  // namespace sb
