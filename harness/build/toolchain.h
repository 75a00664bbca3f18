// Compiling generated translation units into kernel modules (shared libraries), with a
// content-addressed cache.
//
// A module is always built from the file as it is on disk now: the cache key hashes (FNV-1a-64)
// the source text, the ABI header text, the compiler path, the flags and the compiler's
// `--version` output (plus the host CPU model when the flags say -march=native). A hand-edited
// file therefore gets a new key and is rebuilt on the next run, with no CMake step. Modules live
// at <cache_dir>/<kernel>-<backend>-<key>.so; each is written under a temporary name and renamed
// into place, so concurrent builders and readers never see a partial file. Old entries are never
// deleted by specbench (remove the cache folder to reclaim space).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "build/kernel_facts.h"

namespace sb {

// How to invoke a compiler on one translation unit: the toolchain runs
// `compiler flags... -o <module> <source>`.
struct CompileCommand {
  std::string compiler;  // absolute path or a name looked up in PATH; empty = not available
  std::vector<std::string> flags;
  std::string label;  // short name for progress lines: "g++", "nvcc"
  // Headers outside the ABI folder that the module includes (cudasim's cuda_runtime.h): their
  // text enters the cache key, so a changed header rebuilds the modules compiled against it.
  std::vector<std::string> key_headers = {};
  // The flags make nvcc print ptxas's report (-Xptxas -v): the build parses it into
  // BuildResult::kernel_facts and keeps the facts in the cache beside the module.
  bool kernel_facts = false;
  // Tools the compiler runs in turn (a build script's Mojo and clang): their `--version` output
  // enters the cache key as the compiler's does.
  std::vector<std::string> key_tools = {};
  // Files built with the source, named by replacing its extension (".mojo") with each suffix
  // (".launch.cpp"): their text enters the cache key, and a missing one fails the build.
  std::vector<std::string> companion_suffixes = {};
};

// Settings shared by every backend's compile command.
struct ToolchainOptions {
  std::string cxx;                      // C++ compiler for host modules
  std::string nvcc;                     // CUDA compiler; empty when the toolkit was not found
  std::string abi_dir;                  // folder holding specbench_abi.h
  std::vector<int> cuda_archs{80, 90};  // SM architectures to compile CUDA modules for
};

// The compile-time defaults: SPECBENCH_CXX (the environment's SPECBENCH_CXX instead when set and
// not empty, as SPECBENCH_MOJO names the Mojo compiler), SPECBENCH_NVCC, SPECBENCH_ABI_DIR, archs
// 80 and 90.
ToolchainOptions default_toolchain_options();

// A child process run to completion. exit_code is the process's status, 127 when it could not be
// started, 128 + signal when killed. `output` holds stdout and stderr interleaved.
struct ProcessResult {
  int exit_code = 0;
  std::string output;
};
ProcessResult run_process(const std::vector<std::string>& argv);

// `compiler --version`, whole output; memoised per compiler; "" when it cannot be run.
std::string compiler_version(const std::string& compiler);

uint64_t fnv1a64(std::string_view data, uint64_t h = 0xcbf29ce484222325ull);
// `h` as 16 lower-case hex digits, the form of every hash specbench shows or stores.
std::string hex64(uint64_t h);

// The cache key: 16 lower-case hex digits.
std::string cache_key(const std::string& source_text, const std::string& abi_text,
                      const CompileCommand& cmd, const std::string& compiler_version_text);

struct BuildJob {
  std::string kernel;
  std::string backend;
  std::string source;      // path of the generated translation unit
  std::string abi_header;  // path of specbench_abi.h (its text, and that of every file beside
                           // it, is part of the key)
  CompileCommand cmd;
  // The symbol the module must export (defined in its dynamic symbol table) for the build to
  // count and be cached: a compiler that exits 0 without producing it (e.g. a source path read
  // as an option) is a failed build. Probe modules name their own entry point.
  std::string entry_symbol = "specbench_module";
};

struct BuildResult {
  bool ok = false;
  bool cached = false;      // the module was already in the cache; nothing was compiled
  std::string module_path;  // set when ok
  std::string key;
  // When !ok: what went wrong, for the user. For a compiler failure this is the command line
  // followed by the compiler's own output (which names the source file and line).
  std::string error;
  std::string log;     // the compiler's own output (warnings, or a failure's errors); may be empty
  double seconds = 0;  // wall time spent, including hashing
  // When an entry of the cache was found but not trusted, why (it was rebuilt); else "".
  std::string rebuilt_because;
  // The backend has no compiler here (CompileCommand::compiler empty): nothing was attempted.
  // A backend that is also unavailable reports its variants as skipped, not failed.
  bool no_compiler = false;
  // When ok and the command asks for them (CompileCommand::kernel_facts): ptxas's facts of every
  // kernel of the module (kernel_facts.h), from the compile or from the cache. When the report
  // could not be read, kernel_facts_error says why (the module is still built and usable).
  std::vector<KernelFacts> kernel_facts;
  std::string kernel_facts_error;
};

// The cache trusts only what specbench wrote: beside each module <entry>.so it writes
// <entry>.so.hash ("fnv1a64 <16 hex digits> <size>\n", the module's content hash) after the
// module is in place, both owned by the user and not writable by group or others (0755, 0644).
// A module built with CompileCommand::kernel_facts also has <entry>.so.facts (kernel_facts.h:
// facts_file_text, naming the module's hash line), written like the hash file and before it; a
// cache hit for such a command reads its facts from there, and an entry whose facts file is
// missing, not one specbench wrote, or written for another module is rebuilt.
// An entry is used only when the module and its hash file are regular files (not symbolic
// links) owned by the effective user, not writable by group or others, the module is not empty,
// its size and content hash match the hash file, and it exports the job's entry symbol;
// otherwise it is rebuilt (and replaced). Why an entry at `path` is not trusted, or "" when it is.
std::string untrusted_cache_entry(const std::string& path, const std::string& entry_symbol);
// dlopen() of a cache entry after those checks, made on the very file that is loaded (it is
// opened once and loaded through /proc/self/fd, so it cannot be swapped in between). nullptr
// with `error` set when a check or dlopen fails.
void* dlopen_cache_entry(const std::string& path, const std::string& entry_symbol,
                         std::string& error);
// Whether the ELF shared library `image` (the bytes of the file) defines `symbol` in its dynamic
// symbol table. False for anything that is not a 64-bit little-endian ELF file.
bool elf_exports(std::string_view image, const std::string& symbol);

// Builds one module (or finds it in the cache). Creates cache_dir when missing. Thread-safe.
// The source is passed to the compiler as an absolute path, so that no path can be read as an
// option (a root named "-x" gives "/.../-x/generated/...", not "-x").
BuildResult build_module(const BuildJob& job, const std::string& cache_dir);

// Called once per finished job, serialised: (index into jobs, result, finished count).
using BuildProgress = std::function<void(size_t, const BuildResult&, size_t)>;

// Builds every job on up to `parallel` threads. Results are in job order.
std::vector<BuildResult> build_modules(const std::vector<BuildJob>& jobs,
                                       const std::string& cache_dir, int parallel,
                                       const BuildProgress& progress = {});

// The first line of /proc/cpuinfo's "model name", or "unknown".
std::string cpu_model();

}  // namespace sb
