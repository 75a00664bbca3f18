// Loading a kernel module (a shared library built by the toolchain) through the C ABI.
#pragma once

#include <string>
#include <vector>

#include "support/diag.h"
#include "ir/ir.h"
#include "specbench_abi.h"

namespace sb {

// A loaded module whose table has been checked against its spec: abi_version is
// SPECBENCH_ABI_VERSION, spec and backend names match, num_tensors and num_sizes equal the spec's
// tensor and size-parameter counts, and every variant has a name and a function. Modules are
// never unloaded: a handle stays valid for the life of the process (CUDA modules register
// kernels with the runtime at load time, and unloading them is not worth the risk).
class Module {
 public:
  // dlopen()s `path` and checks the table returned by `specbench_module()`. Errors name the path.
  static Result<Module> load(const std::string& path, const Spec& spec, const std::string& backend);

  const sb_module& table() const { return *table_; }
  const std::string& path() const { return path_; }
  // The variant called `name`, or nullptr when the module does not export it.
  sb_variant_fn find(const std::string& name) const;
  std::vector<std::string> variant_names() const;

 private:
  std::string path_;
  const sb_module* table_ = nullptr;
};

}  // namespace sb
