// mojo_gpusim: rewrites NVVM IR from `mojo build --emit llvm --target-triple nvptx64-nvidia-cuda`
// for the CUDA simulator and compiles it into a shared library (see rewrite.h).
//   mojo_gpusim KERNELS.ll -o KERNELS.so [--emit-ll HOST.ll] [--clang CLANG] [--runtime-dir DIR]
// Exit status: 0 done, 1 the IR cannot be rewritten or compiled (the reason on stderr), 2 usage.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "rewrite.h"

int main(int argc, char** argv) {
  std::string in, out, emit_ll, clang = "clang-19", runtime = SB_GPUSIM_RUNTIME_DIR;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "mojo_gpusim: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-o") out = next();
    else if (a == "--emit-ll") emit_ll = next();
    else if (a == "--clang") clang = next();
    else if (a == "--runtime-dir") runtime = next();
    else if (!a.empty() && a[0] != '-' && in.empty()) in = a;
    else {
      std::cerr << "usage: mojo_gpusim KERNELS.ll -o KERNELS.so [--emit-ll HOST.ll] "
                   "[--clang CLANG] [--runtime-dir DIR]\n";
      return 2;
    }
  }
  if (in.empty() || (out.empty() && emit_ll.empty())) {
    std::cerr << "usage: mojo_gpusim KERNELS.ll -o KERNELS.so [--emit-ll HOST.ll]\n";
    return 2;
  }
  std::ifstream f(in);
  if (!f) {
    std::cerr << "mojo_gpusim: cannot read " << in << "\n";
    return 1;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  sb::gpusim::RewriteResult r = sb::gpusim::rewrite(ss.str(), in);
  if (!r.error.empty()) {
    std::cerr << "mojo_gpusim: " << r.error << "\n";
    return 1;
  }
  if (!emit_ll.empty()) {
    std::ofstream o(emit_ll);
    o << r.ir;
    if (!o) {
      std::cerr << "mojo_gpusim: cannot write " << emit_ll << "\n";
      return 1;
    }
  }
  if (!out.empty()) {
    std::string err = sb::gpusim::compile(r.ir, out, clang, runtime);
    if (!err.empty()) {
      std::cerr << "mojo_gpusim: " << err << "\n";
      return 1;
    }
  }
  return 0;
}
