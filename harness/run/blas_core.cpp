#include "run/blas_core.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sb {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

struct CoreIsa {
  const char* name;
  VectorIsa isa;
};

// OpenBLAS's x86-64 core names (driver/others/dynamic.c) by the widest ISA their kernels use.
constexpr CoreIsa kCores[] = {
    {"Katmai", VectorIsa::Sse},        {"Coppermine", VectorIsa::Sse},
    {"Northwood", VectorIsa::Sse},     {"Prescott", VectorIsa::Sse},
    {"Banias", VectorIsa::Sse},        {"Atom", VectorIsa::Sse},
    {"Core2", VectorIsa::Sse},         {"Penryn", VectorIsa::Sse},
    {"Dunnington", VectorIsa::Sse},    {"Nehalem", VectorIsa::Sse},
    {"Athlon", VectorIsa::Sse},        {"Opteron", VectorIsa::Sse},
    {"Opteron_SSE3", VectorIsa::Sse},  {"Barcelona", VectorIsa::Sse},
    {"Nano", VectorIsa::Sse},          {"Bobcat", VectorIsa::Sse},
    {"Sandybridge", VectorIsa::Avx},   {"Bulldozer", VectorIsa::Avx},
    {"Piledriver", VectorIsa::Avx},    {"Steamroller", VectorIsa::Avx},
    {"Excavator", VectorIsa::Avx},     {"Haswell", VectorIsa::Avx2},
    {"Zen", VectorIsa::Avx2},          {"SkylakeX", VectorIsa::Avx512},
    {"Cooperlake", VectorIsa::Avx512}, {"SapphireRapids", VectorIsa::Avx512},
};

// The core each ISA is best served by; Sse has none worth forcing.
const char* core_for_isa(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::Sse:
      return "";
    case VectorIsa::Avx:
      return "Sandybridge";
    case VectorIsa::Avx2:
      return "Haswell";
    case VectorIsa::Avx512:
      return "SkylakeX";
  }
  return "";
}

// Loads the library in a child process and returns openblas_get_corename(), or "" with `error`
// set. The child sees this process's environment as it is now. A child, because a loaded
// OpenBLAS cannot be unloaded or made to pick again.
std::string ask_core(const std::string& library_path, std::string& error) {
  int fds[2];
  if (::pipe(fds) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return "";
  }
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return "";
  }
  if (pid == 0) {
    ::close(fds[0]);
    const char* name = "";
    if (void* h = ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      using corename_fn = char* (*)();
      if (auto f = reinterpret_cast<corename_fn>(::dlsym(h, "openblas_get_corename")))
        if (const char* n = f()) name = n;
    }
    ssize_t unused = ::write(fds[1], name, std::strlen(name));
    (void)unused;
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[128];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, 30000);
    if (r <= 0) {
      ::kill(pid, SIGKILL);
      error = "the child loading OpenBLAS did not answer within 30 s";
      break;
    }
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (error.empty() && out.empty()) error = "the library did not name its core";
  return error.empty() ? out : "";
}

BlasCoreChoice choose(const std::string& library_path) {
  BlasCoreChoice c;
  if (library_path.empty()) return c;
  std::string error;
  if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user && *user) {
    c.used = ask_core(library_path, error);
    c.why = "OPENBLAS_CORETYPE=" + std::string(user) + " was set by the user";
    if (!error.empty()) c.why += " (" + error + ")";
    return c;
  }
  c.detected = ask_core(library_path, error);
  if (!error.empty()) {
    c.why = "OpenBLAS was not asked for its core: " + error;
    return c;
  }
  c.used = c.detected;
  const VectorIsa host = host_vector_isa();
  const std::string target = openblas_core_for(c.detected, host);
  if (target.empty()) {
    c.why = "detected by OpenBLAS";
    return c;
  }
  ::setenv("OPENBLAS_CORETYPE", target.c_str(), 1);
  std::string now = ask_core(library_path, error);
  if (error.empty() && same_name(now, target)) {
    c.used = now;
    c.why = "OPENBLAS_CORETYPE=" + target + " set by specbench: OpenBLAS detected " + c.detected +
            " on a CPU with " + isa_name(host);
    return c;
  }
  // This build of the library has no such kernels: let it run what it detected.
  ::unsetenv("OPENBLAS_CORETYPE");
  c.why = "detected by OpenBLAS, on a CPU with " + std::string(isa_name(host)) +
          "; this build does not run " + target + (error.empty() ? "" : " (" + error + ")");
  return c;
}

}  // namespace

const char* isa_name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::Sse:
      return "SSE";
    case VectorIsa::Avx:
      return "AVX";
    case VectorIsa::Avx2:
      return "AVX2";
    case VectorIsa::Avx512:
      return "AVX-512";
  }
  return "?";
}

VectorIsa host_vector_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return VectorIsa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::Avx2;
  if (__builtin_cpu_supports("avx")) return VectorIsa::Avx;
  return VectorIsa::Sse;
}

std::optional<VectorIsa> openblas_core_isa(std::string_view core) {
  for (const CoreIsa& c : kCores)
    if (same_name(core, c.name)) return c.isa;
  return std::nullopt;
}

std::string openblas_core_for(std::string_view detected, VectorIsa host) {
  std::optional<VectorIsa> d = openblas_core_isa(detected);
  if (!d || *d >= host) return "";
  return core_for_isa(host);
}

BlasCoreChoice choose_openblas_core(const std::string& library_path) {
  return choose(library_path);
}

const BlasCoreChoice& settle_openblas_core(const std::string& library_path) {
  static const BlasCoreChoice choice = choose(library_path);
  return choice;
}

}  // namespace sb
