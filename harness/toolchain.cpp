#include "toolchain.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
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
  o.cxx = SPECBENCH_CXX;
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

BuildResult build_module(const BuildJob& job, const std::string& cache_dir) {
  auto t0 = std::chrono::steady_clock::now();
  auto finish = [&t0](BuildResult r) {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  };
  BuildResult r;
  if (job.cmd.compiler.empty()) {
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
  for (const auto& h : headers) {
    std::string text;
    if (!read_text(h.string(), text)) {
      r.error = h.string() + ": cannot read this header of the module ABI";
      return finish(r);
    }
    abi += "\n// " + h.filename().string() + "\n" + text;
  }
  std::string version = compiler_version(job.cmd.compiler);
  if (version.empty()) {
    r.error = "cannot run `" + job.cmd.compiler + " --version`: is the compiler installed?";
    return finish(r);
  }
  r.key = cache_key(source, abi, job.cmd, version);
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) {
    r.error = cache_dir + ": cannot create the module cache: " + ec.message();
    return finish(r);
  }
  std::string final_path =
      (fs::path(cache_dir) / (job.kernel + "-" + job.backend + "-" + r.key + ".so")).string();
  if (fs::exists(final_path, ec)) {
    r.ok = true;
    r.cached = true;
    r.module_path = final_path;
    return finish(r);
  }
  static std::atomic<unsigned> counter{0};
  std::string tmp =
      final_path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1));
  std::vector<std::string> argv{job.cmd.compiler};
  argv.insert(argv.end(), job.cmd.flags.begin(), job.cmd.flags.end());
  argv.push_back("-o");
  argv.push_back(tmp);
  argv.push_back(job.source);
  ProcessResult p = run_process(argv);
  if (p.exit_code != 0) {
    fs::remove(tmp, ec);
    r.error = "compiling " + job.source + " failed (exit " + std::to_string(p.exit_code) +
              "):\n$ " + join_command(argv) + "\n" + p.output;
    r.log = p.output;
    return finish(r);
  }
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    r.error = final_path + ": cannot move the module into the cache: " + ec.message();
    return finish(r);
  }
  r.ok = true;
  r.module_path = final_path;
  r.log = p.output;
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
