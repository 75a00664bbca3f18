// The generator's driver: sequences the stages (load -> check -> emit) and writes generated/.
#pragma once

#include <string>
#include <vector>

#include "support/diag.h"
#include "backends/emitter.h"
#include "ir/ir.h"

namespace sb {

// specs/*.yaml under `root`, sorted by name.
std::vector<std::string> default_spec_paths(const std::string& root);

// The stages and passes of the generator, in order, each with a line saying what it does: the
// names `gen --dump-ir NAME` accepts ("list" prints this list).
struct IrStage {
  const char* name;
  const char* what;
};
const std::vector<IrStage>& ir_stages();

// Loads and checks one spec. When `dump_after` names a stage, the IR after that stage is
// printed to stdout.
Result<Spec> load_and_check(const std::string& path, const std::string& dump_after = "");

// Loads and checks every path; the first error wins. Spec names must be unique.
Result<std::vector<Spec>> load_all(const std::vector<std::string>& paths,
                                   const std::string& dump_after = "");

// Emits every backend's file for every spec (paths relative to generated/).
std::vector<GeneratedFile> generate(const std::vector<Spec>& specs);

struct GenOptions {
  std::string root;                // repository root (holds specs/ and generated/)
  std::vector<std::string> specs;  // empty = default_spec_paths(root)
  bool check = false;              // compare only; write nothing
  std::string dump_after;          // see load_and_check
  std::string out_dir;             // default root + "/generated"
};

// `specbench gen`. Returns the process exit code: 0 ok; 1 when --check finds stale files (each
// listed on stderr); 2 on a user error (printed with file:line:col). Writes nothing unless every
// spec loads and checks. The run is staged: every changed file is written to a temporary next to
// it (`<file>.tmp.<pid>`), and only when all are written are they renamed into place, so an I/O
// error while staging leaves generated/ unchanged. Temporaries of earlier runs whose process is
// gone are removed. Without explicit specs it also removes generated files that no spec produces.
int run_gen(const GenOptions& opt);


}  // namespace sb
