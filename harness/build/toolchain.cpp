#include "build/toolchain.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

extern char** environ;

namespace sb {

namespace fs = std::filesystem;

namespace {

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~") == std::string::npos) return s;
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += shell_quote(a);
  }
  return s;
}

}  // namespace

ToolchainOptions default_toolchain_options() {
  ToolchainOptions o;
  const char* cxx = std::getenv("SPECBENCH_CXX");
  o.cxx = cxx && *cxx ? cxx : SPECBENCH_CXX;
  o.nvcc = SPECBENCH_NVCC;
  o.abi_dir = SPECBENCH_ABI_DIR;
  return o;
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  ProcessResult r;
  if (argv.empty() || argv[0].empty()) {
    r.exit_code = 127;
    r.output = "no program to run\n";
    return r;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r.exit_code = 127;
    r.output = std::string("pipe: ") + std::strerror(errno) + "\n";
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    r.exit_code = 127;
    r.output = "cannot run " + argv[0] + ": " + std::strerror(rc) + "\n";
    return r;
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      r.output.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exit_code = 128 + WTERMSIG(status);
  else
    r.exit_code = 127;
  return r;
}

std::string compiler_version(const std::string& compiler) {
  static std::mutex mu;
  static std::map<std::string, std::string> memo;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = memo.find(compiler);
    if (it != memo.end()) return it->second;
  }
  std::string v;
  if (!compiler.empty()) {
    ProcessResult p = run_process({compiler, "--version"});
    if (p.exit_code == 0) v = p.output;
  }
  std::lock_guard<std::mutex> lock(mu);
  memo[compiler] = v;
  return v;
}

std::string hex64(uint64_t h) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

uint64_t fnv1a64(std::string_view data, uint64_t h) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string m = line.substr(colon + 1);
        size_t b = m.find_first_not_of(" \t");
        return b == std::string::npos ? "unknown" : m.substr(b);
      }
    }
  }
  return "unknown";
}

std::string cache_key(const std::string& source_text, const std::string& abi_text,
                      const CompileCommand& cmd, const std::string& compiler_version_text) {
  // Every field is length-prefixed so that moving bytes between fields changes the key.
  uint64_t h = fnv1a64("specbench-module-v1");
  auto field = [&h](std::string_view s) {
    h = fnv1a64(std::to_string(s.size()) + ":", h);
    h = fnv1a64(s, h);
  };
  field(source_text);
  field(abi_text);
  field(cmd.compiler);
  bool native = false;
  for (const auto& f : cmd.flags) {
    field(f);
    if (f == "-march=native") native = true;
  }
  field(compiler_version_text);
  // -march=native code depends on the machine, and a cache folder may be shared between machines.
  if (native) field(cpu_model());
  return hex64(h);
}

namespace {

// The content of an open file, from its start; false on a read error.
bool read_fd(int fd, std::string& out) {
  out.clear();
  char buf[1 << 16];
  off_t at = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, static_cast<size_t>(n));
    at += n;
  }
}

// Why a file of the cache, open as `fd`, is not one specbench would have written; "" when it is.
std::string ownership_problem(int fd, bool want_nonempty) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::string("cannot stat it: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "it is writable by group or others";
  if (want_nonempty && st.st_size == 0) return "it is empty";
  return "";
}

std::string hash_line(std::string_view image) {
  return "fnv1a64 " + hex64(fnv1a64(image)) + " " + std::to_string(image.size()) + "\n";
}

// Opens `path` without following a symbolic link; -1 with `why` set on failure.
int open_entry(const std::string& path, std::string& why) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    why = errno == ELOOP ? "it is a symbolic link" : std::string("cannot open it: ") + std::strerror(errno);
  return fd;
}

// The checks of untrusted_cache_entry on the module open as `fd` (its content in `image`).
std::string check_entry(int fd, const std::string& path, const std::string& entry_symbol,
                        std::string& image) {
  std::string why = ownership_problem(fd, /*want_nonempty=*/true);
  if (!why.empty()) return why;
  if (!read_fd(fd, image)) return std::string("cannot read it: ") + std::strerror(errno);
  const std::string hash_path = path + ".hash";
  int hfd = open_entry(hash_path, why);
  if (hfd < 0) return "its hash file " + hash_path + ": " + why + " (specbench did not write it)";
  why = ownership_problem(hfd, /*want_nonempty=*/false);
  std::string recorded;
  bool read_ok = why.empty() && read_fd(hfd, recorded);
  ::close(hfd);
  if (!why.empty()) return "its hash file " + hash_path + ": " + why;
  if (!read_ok) return "cannot read its hash file " + hash_path;
  if (recorded != hash_line(image))
    return "its content does not match its hash file (truncated or replaced)";
  if (!entry_symbol.empty() && !elf_exports(image, entry_symbol))
    return "it does not export " + entry_symbol + "()";
  return "";
}

// Reads the facts file of the module at `path` whose content is `image`: the facts and the
// recorded report error into `facts` and `error`; "" when it is one specbench wrote for this
// module, else why not.
std::string read_facts_entry(const std::string& path, std::string_view image,
                             std::vector<KernelFacts>& facts, std::string& error) {
  const std::string facts_path = path + ".facts";
  std::string why;
  int fd = open_entry(facts_path, why);
  if (fd < 0) return "its facts file " + facts_path + ": " + why + " (specbench did not write it)";
  why = ownership_problem(fd, /*want_nonempty=*/true);
  std::string text;
  bool read_ok = why.empty() && read_fd(fd, text);
  ::close(fd);
  if (!why.empty()) return "its facts file " + facts_path + ": " + why;
  if (!read_ok) return "cannot read its facts file " + facts_path;
  std::string line = hash_line(image);
  line.pop_back();  // the newline
  auto r = read_facts_file_text(text, line, error);
  if (!r.ok()) return "its facts file " + facts_path + ": " + r.error().message;
  facts = std::move(r.value());
  return "";
}

// Writes `text` to `path` as specbench writes the cache's small files: 0644, through `tmp` and a
// rename. "" on success, else the error.
std::string write_cache_file(const std::string& path, const std::string& tmp,
                             const std::string& text) {
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  bool written = fd >= 0 && ::fchmod(fd, 0644) == 0 &&
                 ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  int err = errno;
  if (fd >= 0) written = ::close(fd) == 0 && written;
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (written) err = errno;
    ::unlink(tmp.c_str());
    return std::strerror(err);
  }
  return "";
}

}  // namespace

bool elf_exports(std::string_view image, const std::string& symbol) {
  auto fits = [&image](uint64_t off, uint64_t len) {
    return off <= image.size() && len <= image.size() - off;
  };
  Elf64_Ehdr eh;
  if (!fits(0, sizeof eh)) return false;
  std::memcpy(&eh, image.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr))
    return false;
  auto section = [&](uint64_t i, Elf64_Shdr& sh) {
    uint64_t off = eh.e_shoff + i * sizeof(Elf64_Shdr);
    if (i >= eh.e_shnum || off < eh.e_shoff || !fits(off, sizeof sh)) return false;
    std::memcpy(&sh, image.data() + off, sizeof sh);
    return true;
  };
  for (uint64_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh, strtab;
    if (!section(i, sh)) return false;
    if (sh.sh_type != SHT_DYNSYM) continue;
    if (!section(sh.sh_link, strtab) || !fits(sh.sh_offset, sh.sh_size) ||
        !fits(strtab.sh_offset, strtab.sh_size))
      return false;
    std::string_view names = image.substr(strtab.sh_offset, strtab.sh_size);
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= sh.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, image.data() + sh.sh_offset + at, sizeof sym);
      if (sym.st_shndx == SHN_UNDEF || sym.st_name >= names.size()) continue;
      std::string_view name = names.substr(sym.st_name);
      name = name.substr(0, name.find('\0'));
      if (name == symbol) return true;
    }
  }
  return false;
}

std::string untrusted_cache_entry(const std::string& path, const std::string& entry_symbol) {
  std::string why;
  int fd = open_entry(path, why);
  if (fd < 0) return why;
  std::string image;
  why = check_entry(fd, path, entry_symbol, image);
  ::close(fd);
  return why;
}

void* dlopen_cache_entry(const std::string& path, const std::string& entry_symbol,
                         std::string& error) {
  std::string why;
  int fd = open_entry(path, why);
  if (fd >= 0) {
    std::string image;
    why = check_entry(fd, path, entry_symbol, image);
  }
  if (!why.empty()) {
    if (fd >= 0) ::close(fd);
    error = "not loaded: this module cache entry is not one specbench wrote: " + why +
            " (run `specbench build` to rebuild it)";
    return nullptr;
  }
  // Load the file that was checked, not whatever the name points to now.
  std::string by_fd = "/proc/self/fd/" + std::to_string(fd);
  void* handle = ::access(by_fd.c_str(), R_OK) == 0 ? dlopen(by_fd.c_str(), RTLD_NOW | RTLD_LOCAL)
                                                     : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    error = std::string("cannot load module: ") + (e ? e : "unknown error");
    ::close(fd);
  }
  // The descriptor stays open with the module (never unloaded): the dynamic loader knows the
  // library by the name /proc/self/fd/<fd>, and a reused number would make a later dlopen() of
  // another module return this one.
  return handle;
}

BuildResult build_module(const BuildJob& job, const std::string& cache_dir) {
  auto t0 = std::chrono::steady_clock::now();
  auto finish = [&t0](BuildResult r) {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  BuildResult r;
  if (job.cmd.compiler.empty()) {
    r.no_compiler = true;
    r.error = "no " + (job.cmd.label.empty() ? std::string("compiler") : job.cmd.label) +
              " for backend '" + job.backend + "' (not found when specbench was configured)";
    return finish(r);
  }
  std::string source, abi;
  if (!read_text(job.source, source)) {
    r.error = job.source + ": cannot read the generated file (run `specbench gen`)";
    return finish(r);
  }
  if (!read_text(job.abi_header, abi)) {
    r.error = job.abi_header + ": cannot read the ABI header";
    return finish(r);
  }
  // The other headers beside it (modules and probes may include them) are part of the key too.
  std::vector<fs::path> headers;
  std::error_code dir_ec;
  for (const auto& e : fs::directory_iterator(fs::path(job.abi_header).parent_path(), dir_ec)) {
    if (e.is_regular_file() && e.path() != fs::path(job.abi_header)) headers.push_back(e.path());
  }
  std::sort(headers.begin(), headers.end());
  for (const std::string& h : job.cmd.key_headers) headers.push_back(h);
  for (const std::string& suffix : job.cmd.companion_suffixes)
    headers.push_back(fs::path(job.source).replace_extension("").string() + suffix);
  for (const auto& h : headers) {
    std::string text;
    if (!read_text(h.string(), text)) {
      r.error = h.string() + ": cannot read this file of the module's build (an ABI header, or a file built with the source)";
      return finish(r);
    }
    abi += "\n// " + h.filename().string() + "\n" + text;
  }
  std::string version = compiler_version(job.cmd.compiler);
  if (version.empty()) {
    r.error = "cannot run `" + job.cmd.compiler + " --version`: is the compiler installed?";
    return finish(r);
  }
  for (const std::string& tool : job.cmd.key_tools) {
    const std::string v = compiler_version(tool);
    if (v.empty()) {
      r.error = "cannot run `" + tool + " --version`: is it installed?";
      return finish(r);
    }
    version += "\n" + v;
  }
  r.key = cache_key(source, abi, job.cmd, version);
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) {
    r.error = cache_dir + ": cannot create the module cache: " + ec.message();
    return finish(r);
  }
  std::string final_path =
      (fs::absolute(cache_dir, ec) / (job.kernel + "-" + job.backend + "-" + r.key + ".so"))
          .string();
  if (fs::exists(fs::symlink_status(final_path, ec))) {
    std::string image;
    int fd = open_entry(final_path, r.rebuilt_because);
    if (fd >= 0) {
      r.rebuilt_because = check_entry(fd, final_path, job.entry_symbol, image);
      ::close(fd);
    }
    if (r.rebuilt_because.empty() && job.cmd.kernel_facts)
      r.rebuilt_because =
          read_facts_entry(final_path, image, r.kernel_facts, r.kernel_facts_error);
    if (r.rebuilt_because.empty()) {
      r.ok = true;
      r.cached = true;
      r.module_path = final_path;
      return finish(r);
    }
    r.kernel_facts.clear();
    r.kernel_facts_error.clear();
  }
  static std::atomic<unsigned> counter{0};
  std::string tmp =
      final_path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1));
  std::vector<std::string> argv{job.cmd.compiler};
  argv.insert(argv.end(), job.cmd.flags.begin(), job.cmd.flags.end());
  // An absolute path never starts with '-': no source path can be taken for an option.
  const std::string source_path = fs::absolute(job.source, ec).string();
  argv.push_back("-o");
  argv.push_back(tmp);
  argv.push_back(source_path);
  ProcessResult p = run_process(argv);
  if (p.exit_code != 0) {
    fs::remove(tmp, ec);
    r.error = "compiling " + job.source + " failed (exit " + std::to_string(p.exit_code) +
              "):\n$ " + join_command(argv) + "\n" + p.output;
    r.log = p.output;
    return finish(r);
  }
  // A build counts only when it produced a library with the entry point.
  std::string image;
  {
    std::string why;
    int fd = open_entry(tmp, why);
    bool read_ok = fd >= 0 && read_fd(fd, image);
    if (fd >= 0) ::close(fd);
    if (!read_ok || !elf_exports(image, job.entry_symbol)) {
      fs::remove(tmp, ec);
      r.error = "compiling " + job.source + " exited 0 but produced no library exporting " +
                job.entry_symbol + "() (not cached):\n$ " + join_command(argv) + "\n" + p.output;
      r.log = p.output;
      return finish(r);
    }
  }
  // 0755 whatever the umask: the cache refuses entries writable by group or others.
  ::chmod(tmp.c_str(), 0755);
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    r.error = final_path + ": cannot move the module into the cache: " + ec.message();
    return finish(r);
  }
  const std::string line = hash_line(image);
  // ptxas's facts, then the hash file last: until it is in place the entry is not trusted (and
  // is rebuilt).
  r.log = p.output;
  if (job.cmd.kernel_facts) {
    auto facts = parse_ptxas_report(p.output);
    if (facts.ok())
      r.kernel_facts = std::move(facts.value());
    else
      r.kernel_facts_error = "cannot read ptxas's report (line " +
                             std::to_string(facts.error().loc.line) +
                             "): " + facts.error().message;
    r.log = strip_ptxas_report(p.output);
    const std::string facts_path = final_path + ".facts";
    std::string err = write_cache_file(
        facts_path, tmp + ".facts",
        facts_file_text(r.kernel_facts, r.kernel_facts_error, line.substr(0, line.size() - 1)));
    if (!err.empty()) {
      r.error = facts_path + ": cannot record the module's kernel facts: " + err;
      return finish(r);
    }
  }
  {
    const std::string hash_path = final_path + ".hash";
    std::string err = write_cache_file(hash_path, tmp + ".hash", line);
    if (!err.empty()) {
      r.error = hash_path + ": cannot record the module's hash: " + err;
      return finish(r);
    }
  }
  r.ok = true;
  r.module_path = final_path;
  return finish(r);
}

std::vector<BuildResult> build_modules(const std::vector<BuildJob>& jobs,
                                       const std::string& cache_dir, int parallel,
                                       const BuildProgress& progress) {
  std::vector<BuildResult> results(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t done = 0;
  auto worker = [&] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= jobs.size()) return;
      BuildResult r = build_module(jobs[i], cache_dir);
      std::lock_guard<std::mutex> lock(mu);
      results[i] = std::move(r);
      ++done;
      if (progress) progress(i, results[i], done);
    }
  };
  size_t n = std::min<size_t>(std::max(parallel, 1), jobs.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace sb
