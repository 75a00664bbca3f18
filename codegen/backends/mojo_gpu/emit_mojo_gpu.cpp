#include "backends/mojo_gpu/emit_mojo_gpu.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/common/emit_common.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/emit_cuda.h"
#include "backends/cuda/strategies/strategy.h"
#include "backends/mojo/mojo_lowering.h"
#include "backends/mojo_gpu/gpu_kernels.h"
#include "backends/mojo_gpu/strategies.h"
#include "lower/pipeline.h"

namespace sb {

namespace {

const char* const kBackend = "mojo_gpu";

// `text` as # comment lines of at most 100 columns, continuation lines starting with `indent`.
std::string wrap_hash(const std::string& text, const std::string& indent) {
  std::string out, line = "#";
  size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (line.size() + 1 + word.size() > 100 && !first) {
      out += line + "\n";
      line = "# " + indent;
      line.pop_back();
    }
    line += " " + word;
    first = false;
    pos = end + 1;
  }
  return out + line + "\n";
}

// The printer as an Emitter: a derived backend of cuda (emit_mojo_gpu.h).
class MojoGpuEmitter final : public Emitter {
 public:
  std::string backend() const override { return kBackend; }
  std::string extension() const override { return "mojo"; }
  // The cuda strategies: a mojo_gpu variant is a cuda variant.
  std::vector<StrategyInfo> strategies() const override { return cuda_emitter().strategies(); }
  // The statements are printed by the mojo backend's lowering (mojo_lowering.h).
  bool spells(Fn fn) const override { return find_emitter("mojo")->spells(fn); }
  std::string derived_from() const override { return "cuda"; }
  // The mapping each mojo_gpu variant prints (its cuda strategy's), and the bodies.
  std::string dump_gpu_mapping(const Spec& spec) const override {
    return cuda::dump_gpu_variants(spec, backend(), cuda::GpuDump::Mapping, mapping(spec));
  }
  std::string dump_gpu_bodies(const Spec& spec) const override {
    return cuda::dump_gpu_variants(spec, backend(), cuda::GpuDump::Bodies, mapping(spec));
  }
  static std::function<GpuMapping(const Variant&)> mapping(const Spec& spec) {
    return [&spec](const Variant& v) { return mojo_gpu::variant_mapping(spec, v); };
  }
  bool derives(const Spec& lowered, const Variant& v, std::string* why) const override {
    std::string reason = mojo_gpu::missing_reason(lowered, v);
    if (why) *why = reason;
    return reason.empty();
  }

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

// The launcher file: the host side of `<spec>.mojo`.
std::string launcher_file(const Spec& spec, const Emitter& em, const std::string& launchers,
                          const std::vector<std::string>& kernel_names,
                          const std::vector<std::string>& scratch) {
  std::string out = file_header(spec, em);
  out += "//\n// The host side of " + spec.name +
         ".mojo: one launcher per variant, launching its kernels in order\n"
         "// with the grids of the cuda launcher of the same variant, through the launch runtime "
         "of\n// specbench_mojo_gpu.h (the simulator, or the CUDA driver API on a GPU).\n";
  // math.h: the f16 element type's rounding (storage_types) calls rintf and fminf.
  out += "\n#include <math.h>\n#include <stdint.h>\n\n#include \"specbench_abi.h\"\n"
         "#include \"specbench_mojo_gpu.h\"\n\n";
  // The element types the launcher's pointers name (it only passes them on).
  out += storage_types(spec, StorageLang::Cpu);
  out += banner("Kernels: the functions " + spec.name + ".mojo exports");
  for (const std::string& k : kernel_names) out += "SB_MOJO_KERNEL(" + k + ");\n";
  out += "\n";
  if (!scratch.empty()) {
    out += banner("Scratch buffers in device memory, allocated on first use (one launch of a "
                  "variant at a time)");
    for (const std::string& d : scratch) out += d + "\n";
    out += "\n";
  }
  out += banner("Launchers: one function per variant, launching its kernels in order") + launchers;
  out += banner("Dispatch") + dispatch_section(spec, em.backend());
  return out;
}

GeneratedFile MojoGpuEmitter::print(const Spec& spec) const {
  mojo_gpu::GpuFileNeeds needs;
  std::string kernels, launchers;
  std::vector<std::string> kernel_names, scratch;
  std::vector<KernelLaunch> launches;
  for (const Variant& v : backend_variants(spec, backend())) {
    mojo_gpu::VariantCode code = mojo_gpu::variant_code(spec, v, needs);
    kernels += code.kernels;
    launchers += code.launcher;
    kernel_names.insert(kernel_names.end(), code.kernel_names.begin(), code.kernel_names.end());
    scratch.insert(scratch.end(), code.scratch.begin(), code.scratch.end());
    launches.insert(launches.end(), code.launches.begin(), code.launches.end());
  }

  std::string out = mojo_hash_comments(file_header(spec, *this));
  // The cuda variants without a counterpart, and why.
  std::string missing;
  for (const Variant& v : backend_variants(spec, "cuda")) {
    std::string why;
    if (!derives(spec, v, &why))
      missing += wrap_hash("  " + v.name + " (strategy " + v.strategy + "): " + why + ".", "    ");
  }
  if (!missing.empty())
    out += "#\n# cuda variants without a Mojo GPU counterpart yet, and the kernel form they need:\n" +
           missing;
  out +=
      "#\n# The cuda variants' kernels (backends/cuda/cuda_kernels.cpp) as Mojo GPU kernels, from "
      "the same\n# GPU mapping (lower/gpu_mapping.h). Device code only: " + spec.name +
      ".launch.cpp beside this file\n# launches them. Compiled to PTX by `mojo build --emit asm "
      "--target-triple nvptx64-nvidia-cuda\n# --target-cpu sm_XX --target-accelerator "
      "nvidia:sm_XX`, and to NVVM IR (--emit llvm) for the\n# simulator, mojo_gpusim.\n\n";
  // Imports: the standard library's, then MAX's.
  std::map<std::string, std::set<std::string>> imports = needs.stmt.imports();
  for (const auto& [module, names] : needs.imports) imports[module].insert(names.begin(), names.end());
  std::string std_lines, max_lines;
  for (const auto& [module, names] : imports) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    (module.rfind("std.", 0) == 0 ? std_lines : max_lines) +=
        "from " + module + " import " + list + "\n";
  }
  out += std_lines + (std_lines.empty() || max_lines.empty() ? "" : "\n") + max_lines;
  out += imports.empty() ? "\n" : "\n\n";
  const std::string helpers = needs.stmt.helpers();
  std::string device_helpers;
  for (const auto& [name, def] : needs.helpers) device_helpers += def + "\n\n";
  if (!helpers.empty() || !device_helpers.empty())
    out += mojo_section("Helpers") + helpers + device_helpers;
  out += mojo_section("Kernels: one function per variant and statement") + kernels;
  // One trailing newline.
  while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
    out.pop_back();
  const std::string dir = spec.name + "/" + backend() + "/";
  GeneratedFile f{dir + spec.name + "." + extension(), out, launches};
  f.companions.push_back(
      {dir + spec.name + ".launch.cpp", launcher_file(spec, *this, launchers, kernel_names, scratch)});
  return f;
}


}  // namespace

const Emitter& mojo_gpu_emitter() {
  static const MojoGpuEmitter kEmitter;
  return kEmitter;
}

}  // namespace sb
