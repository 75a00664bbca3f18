// The mlir runtime: the mlir backend's generated files (generated/<k>/mlir/<k>.mlir, see
// codegen/backends/mlir/emit_mlir.h), lowered by LLVM 19's tools into shared libraries that run in
// host memory on the calling thread (the `openmp` variants use LLVM libomp's worker threads).
//
// Tools: SPECBENCH_MLIR_OPT, SPECBENCH_MLIR_TRANSLATE and SPECBENCH_MLIR_CLANG from the
// environment when set, else mlir-opt-19, mlir-translate-19 and clang-19 from PATH or
// /usr/lib/llvm-19/bin (Debian's mlir-19-tools and clang-19, installed by
// harness/scripts/setup.sh). LLVM's OpenMP runtime is the libomp.so that `clang-19
// -print-file-name=libomp.so` names (libomp-19-dev); libgomp lacks the __kmpc_* entry points that
// MLIR's OpenMP lowering calls.
//
// The compile command is one bash script (its text, which names every tool and its version, is
// part of the module's cache key), run as `bash -c SCRIPT mlir -o <module> <kernel>.mlir`:
//   1. split the file at its `// -----` lines, one module per variant;
//   2. for each: mlir-opt-19 <the module's `// sb-pipeline:` line>
//   (codegen/backends/mlir/mlir_pipelines.cpp, its @simd_bytes@ replaced by the bytes of the
//   host's widest vectors, 64, 32 or 16, from clang-19 -march=native's predefined macros),
//      mlir-translate-19 --mlir-to-llvmir, clang-19 -O3 -march=native -fPIC -c (with
//      -fveclib=libmvec on x86-64 glibc);
//   3. the C shim (the file's `//| ` lines) compiled by clang-19 -O3 -fPIC -c against
//      specbench_abi.h;
//   4. clang-19 -shared, linked with compiler-rt's builtins archive (the one `clang-19
//      -rtlib=compiler-rt -print-libgcc-file-name` names, libclang-rt-19-dev), -lm, libomp (rpath
//      to its folder) and there -lmvec. LLVM lowers a conversion to bf16 to a call of
//      __truncsfbf2 where the CPU has no instruction for it (no AVX512-BF16: AVX2 machines such as
//      AMD Zen 3), and GCC 12's libgcc lacks it: without the archive, bf16_matmul's module built
//      there but failed to load ("undefined symbol: __truncsfbf2").
// A failing step prints which variant and which command failed, then the tool's own message.
//
// The environment: KMP_BLOCKTIME=1 unless set (see MlirRuntime()).
//
// Availability: the three tools run (`--version`), and libomp.so and the builtins archive exist.
// Otherwise the backend is skipped with the reason, and its compile command is a stand-in that
// compiles nothing (as for mojo), so its variants are reported as skipped, not as failed builds.
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "backends/mlir/mlir_pipelines.h"
#include "run/runtime.h"

namespace sb {

namespace {

namespace fs = std::filesystem;

struct MlirTools {
  std::string opt, translate, clang, libomp_dir, builtins;
  std::string versions;  // one line per tool, for the cache key
  Availability avail;
};

std::string find_tool(const char* env, const std::string& name) {
  if (const char* e = std::getenv(env); e && *e) return e;
  std::error_code ec;
  const std::string llvm19 = "/usr/lib/llvm-19/bin/" + name.substr(0, name.rfind('-'));
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      std::string dir = p.substr(start, end - start);
      if (!dir.empty() && fs::exists(fs::path(dir) / name, ec))
        return (fs::path(dir) / name).string();
      start = end + 1;
    }
  }
  if (fs::exists(llvm19, ec)) return llvm19;
  return "";
}

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  size_t b = l.find_first_not_of(" \t");
  return b == std::string::npos ? "" : l.substr(b);
}

const MlirTools& mlir_tools() {
  static MlirTools t;
  static std::once_flag once;
  std::call_once(once, [] {
    struct Want {
      const char* env;
      const char* name;
      std::string* out;
    };
    const Want wants[] = {{"SPECBENCH_MLIR_OPT", "mlir-opt-19", &t.opt},
                          {"SPECBENCH_MLIR_TRANSLATE", "mlir-translate-19", &t.translate},
                          {"SPECBENCH_MLIR_CLANG", "clang-19", &t.clang}};
    for (const Want& w : wants) {
      *w.out = find_tool(w.env, w.name);
      if (w.out->empty()) {
        t.avail = {false, std::string(w.name) +
                              " not found (harness/scripts/setup.sh installs it; " + w.env +
                              " names another)"};
        return;
      }
      std::string v = compiler_version(*w.out);
      if (v.empty()) {
        t.avail = {false, "cannot run `" + *w.out + " --version`"};
        return;
      }
      // mlir-opt's first line is "LLVM (http://llvm.org/):"; its version is on the second.
      std::string line = first_line(v);
      if (line.rfind("LLVM (", 0) == 0) line = first_line(v.substr(v.find('\n') + 1));
      t.versions += std::string("# ") + w.name + ": " + line + "\n";
    }
    ProcessResult p = run_process({t.clang, "-print-file-name=libomp.so"});
    std::string lib = first_line(p.output);
    std::error_code ec;
    if (p.exit_code != 0 || lib.empty() || lib[0] != '/' || !fs::exists(lib, ec)) {
      t.avail = {false, "LLVM's libomp.so not found by `" + t.clang +
                            " -print-file-name=libomp.so` (package libomp-19-dev)"};
      return;
    }
    t.libomp_dir = fs::path(lib).parent_path().string();
    ProcessResult rt = run_process({t.clang, "-rtlib=compiler-rt", "-print-libgcc-file-name"});
    const std::string builtins = first_line(rt.output);
    if (rt.exit_code != 0 || builtins.empty() || builtins[0] != '/' || !fs::exists(builtins, ec)) {
      t.avail = {false, "compiler-rt's builtins not found by `" + t.clang +
                            " -rtlib=compiler-rt -print-libgcc-file-name` (package "
                            "libclang-rt-19-dev)"};
      return;
    }
    t.builtins = builtins;
  });
  return t;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class MlirRuntime : public HostRuntime {
 public:
  MlirRuntime() {
    // libomp's idle workers spin for 200 ms after each parallel region by default. The cpu
    // backend's modules use libgomp in the same process, and on a small machine the spinning
    // libomp workers starved them: saxpy cpu/omp_simd at N=65536 took 8 ms instead of 4.5 us
    // after the mlir openmp variants had run. One millisecond keeps the workers warm between
    // the back-to-back calls of one benchmark (mlir openmp 4.7 us there) without that. Read by
    // libomp when it starts; a value already in the environment is kept.
    setenv("KMP_BLOCKTIME", "1", 0);
  }

  std::string backend() const override { return "mlir"; }

  CompileCommand compile_command(const ToolchainOptions& opt) const override {
    const MlirTools& t = mlir_tools();
    // Without the tools there is no compiler: nothing is built and the variants are skipped.
    if (!t.avail.ok) return CompileCommand{"", {}, "mlir"};
    std::string s;
    s += "# Lowers a generated .mlir file into a specbench module "
         "(harness/run/runtime_mlir.cpp).\n";
    s += t.versions;
    s += "# host cpu (-march=native): " + cpu_model() + "\n";
    s += "set -eu -o pipefail\n";
    s += "opt=" + quote(t.opt) + "\ntranslate=" + quote(t.translate) + "\nclang=" + quote(t.clang) +
         "\nabi=" + quote(opt.abi_dir) + "\nomp=" + quote(t.libomp_dir) +
         "\nbuiltins=" + quote(t.builtins) + "\n";
#if defined(__x86_64__) && defined(__GLIBC__)
    // Vector math calls to glibc's libmvec, as the cpu backend's SIMD loops.
    s += "veclib=-fveclib=libmvec\nmvec='-Wl,--no-as-needed -lmvec'\n";
#else
    s += "veclib=\nmvec=\n";
#endif
    s += R"SH(out=$2
src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v dir="$work" '/^\/\/ -----$/ { n++; next } n > 0 { print > (dir "/v" n ".mlir") }' "$src"
sed -n -e 's@^//| @@p' -e 's@^//|$@@p' "$src" > "$work/shim.c"
step() {
  local what=$1
  shift
  if ! "$@" > "$work/log" 2>&1; then
    echo "mlir: $what failed:"
    echo "\$ $*"
    cat "$work/log"
    exit 1
  fi
}
# The host's native vector bytes, as the cpu backend's SB_SIMD_BYTES: a pipeline line may name
# the transform schedule for them (mlir_native_tiles, codegen/backends/mlir/mlir_pipelines.h).
defs=$("$clang" -march=native -dM -E -x c /dev/null)
case $defs in
  *__AVX512F__*) simd=64 ;;
  *__AVX__*) simd=32 ;;
  *) simd=16 ;;
esac
objs=()
for f in "$work"/v*.mlir; do
  [ -e "$f" ] || { echo "mlir: $src holds no variant module"; exit 1; }
  name=$(sed -n 's@^// sb-variant: @@p' "$f")
  pipeline=$(sed -n 's@^// sb-pipeline: @@p' "$f")
  [ -n "$pipeline" ] || { echo "mlir: variant $name has no sb-pipeline line"; exit 1; }
  pipeline=${pipeline//)SH" +
         std::string(kMlirSimdBytes) + R"SH(/$simd}
  read -r -a passes <<< "$pipeline"
  step "variant $name: mlir-opt" "$opt" "${passes[@]}" "$f" -o "${f%.mlir}.llvm.mlir"
  step "variant $name: mlir-translate" "$translate" --mlir-to-llvmir "${f%.mlir}.llvm.mlir" -o "${f%.mlir}.ll"
  step "variant $name: clang" "$clang" -O3 -march=native -fPIC -Wno-override-module $veclib -c "${f%.mlir}.ll" -o "${f%.mlir}.o"
  objs+=("${f%.mlir}.o")
done
step "the C shim" "$clang" -O3 -fPIC -Wall -Werror -x c -I"$abi" -c "$work/shim.c" -o "$work/shim.o"
step "linking" "$clang" -shared -o "$out" "${objs[@]}" "$work/shim.o" "$builtins" $mvec -lm -L"$omp" -Wl,-rpath,"$omp" -lomp
)SH";
    return CompileCommand{"/bin/bash", {"-c", s, "mlir"}, "mlir"};
  }

  Availability availability() override {
    return mlir_tools().avail;
  }

  std::string device_name() override {
    return mlir_tools().avail.ok ? "host" : "none";
  }
};

}  // namespace

std::unique_ptr<Runtime> make_mlir_runtime() {
  return std::make_unique<MlirRuntime>();
}

}  // namespace sb
