// The mojo runtime: the mojo backend's generated files (generated/<k>/mojo/<k>.mojo), compiled by
// the Mojo compiler into shared libraries that run in host memory on the calling thread (their
// `vectorize_parallel` variants use Mojo's own worker threads).
//
// The compiler is SPECBENCH_MOJO from the environment when set, else <source>/.venv/bin/mojo, the
// pinned Mojo that harness/scripts/setup.sh installs (mojo 1.2.0 with max-core 26.7.0, which
// brings the `max` Mojo package that `parallelize` lives in). It runs as
//   mojo build --emit shared-lib -O3 --fp-mode contract=fast -D specbench_host_cpu=<cpu>
//        -o <module>.so <kernel>.mojo       (one command line)
// with MODULAR_TELEMETRY_ENABLED=0 and MODULAR_CRASH_REPORTING_ENABLED=0 (set in this process's
// environment, which every compiler invocation inherits). -O3 is Mojo's default, made explicit.
// `--fp-mode contract=fast` is also Mojo's default, made explicit: it fuses a*b+c into FMAs, as
// g++ -O3 -march=native does for the cpu backend (GCC contracts by default in C++, also with
// -std=c++17), so both sides of a comparison round the same way. Mojo compiles for the host CPU
// by default (like -march=native); `-D specbench_host_cpu=...` defines a value the code never
// reads, so that the CPU model enters the module's cache key as it does for -march=native.
//
// The C ABI: the generated Mojo file declares the structs of specbench_abi.h itself and exports
// `specbench_module()` returning the sb_module table, exactly as the C++ modules do, so the
// Module loader works unchanged and no C shim is compiled or linked. One difference: Mojo 1.2.0
// has no global variables, and `global_constant` rejects a value holding pointers ("pointer not
// a writeable type"), so the table is built at each call in memory that is never freed (the
// harness calls specbench_module() once per module load).
//
// Availability: the compiler exists and `mojo --version` runs. Otherwise the backend is skipped
// with the reason, and nothing fails: its compile command is then a stand-in that compiles
// nothing (it writes an empty file in place of the module, which is never loaded), so `build`,
// `verify` and `bench` report the mojo variants as skipped rather than as failed builds.
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "run/runtime.h"

namespace sb {

namespace {

namespace fs = std::filesystem;

}  // namespace

std::string mojo_compiler_path() {
  if (const char* e = std::getenv("SPECBENCH_MOJO"); e && *e) return e;
  return std::string(SPECBENCH_SOURCE_DIR) + "/.venv/bin/mojo";
}

namespace {

// No telemetry or crash reports from any mojo invocation (builds, --version), which inherit
// this process's environment.
void quiet_mojo_environment() {
  setenv("MODULAR_TELEMETRY_ENABLED", "0", 1);
  setenv("MODULAR_CRASH_REPORTING_ENABLED", "0", 1);
}

// Whether the compiler is there and runs; memoised (the environment does not change).
const Availability& mojo_probe() {
  static Availability a;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = mojo_compiler_path();
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      a = {false, "mojo not found at " + path +
                      " (harness/scripts/setup.sh installs it; SPECBENCH_MOJO names another)"};
      return;
    }
    if (compiler_version(path).empty()) {
      ProcessResult p = run_process({path, "--version"});
      std::string out = p.output;
      while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
      a = {false, "cannot run `" + path + " --version` (exit " + std::to_string(p.exit_code) +
                      (out.empty() ? ")" : "): " + out)};
    }
  });
  return a;
}

}  // namespace

const Availability& mojo_compiler_availability() {
  quiet_mojo_environment();
  return mojo_probe();
}

namespace {

class MojoRuntime : public HostRuntime {
 public:
  MojoRuntime() { quiet_mojo_environment(); }

  std::string backend() const override { return "mojo"; }

  CompileCommand compile_command(const ToolchainOptions& /*opt*/) const override {
    // Without Mojo there is no compiler: nothing is built and the variants are skipped.
    if (!mojo_probe().ok) return CompileCommand{"", {}, "mojo"};
    return CompileCommand{mojo_compiler_path(),
                          {"build", "--emit", "shared-lib", "-O3", "--fp-mode", "contract=fast",
                           "-D", "specbench_host_cpu=" + cpu_model()},
                          "mojo"};
  }

  Availability availability() override { return mojo_probe(); }

  std::string device_name() override { return mojo_probe().ok ? "host" : "none"; }
};

}  // namespace

std::unique_ptr<Runtime> make_mojo_runtime() {
  return std::make_unique<MojoRuntime>();
}

}  // namespace sb
