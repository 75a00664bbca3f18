#include "backends/mojo_gpu/emit_mojo_gpu.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/common/emit_common.h"
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

// The printer as an Emitter, for file_header and the lowering's spelled intrinsics; it is not
// one of all_emitters() (emit_mojo_gpu.h).
class MojoGpuEmitter final : public Emitter {
 public:
  std::string backend() const override { return kBackend; }
  std::string extension() const override { return "mojo"; }
  // The cuda strategies: a mojo_gpu variant is a cuda variant.
  std::vector<StrategyInfo> strategies() const override { return cuda_emitter().strategies(); }
  // The statements are printed by the mojo backend's lowering (mojo_lowering.h).
  bool spells(Fn fn) const override { return find_emitter("mojo")->spells(fn); }
  // Prints a lowered spec whose mojo_gpu variants are set (emit_mojo_gpu).
  GeneratedFile print_lowered(const Spec& spec) const { return print(spec); }

 protected:
  GeneratedFile print(const Spec& spec) const override;
};

GeneratedFile MojoGpuEmitter::print(const Spec& spec) const {
  mojo_gpu::GpuFileNeeds needs;
  std::string kernels;
  for (const Variant& v : backend_variants(spec, backend()))
    kernels += mojo_gpu::variant_kernels(spec, v, needs);

  std::string out = mojo_hash_comments(file_header(spec, *this));
  // The cuda variants without a counterpart, and why.
  std::string missing;
  for (const Variant& v : backend_variants(spec, "cuda")) {
    const std::string why = mojo_gpu::missing_reason(spec, v);
    if (!why.empty())
      missing += wrap_hash("  " + v.name + " (strategy " + v.strategy + "): " + why + ".", "    ");
  }
  if (!missing.empty())
    out += "#\n# cuda variants without a Mojo GPU counterpart yet, and the kernel form they need:\n" +
           missing;
  out +=
      "#\n# The cuda variants' kernels (backends/cuda/cuda_kernels.cpp) as Mojo GPU kernels, from "
      "the same\n# GPU mapping (lower/gpu_mapping.h). Compiled to PTX by `mojo build --emit asm "
      "--target-triple\n# nvptx64-nvidia-cuda --target-cpu sm_XX --target-accelerator "
      "nvidia:sm_XX`; not run yet (no\n# launch route, no simulator), so there are no launchers "
      "and no specbench_module().\n\n";

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
  return {spec.name + "/" + backend() + "/" + spec.name + "." + extension(), out};
}

const MojoGpuEmitter& mojo_gpu_emitter() {
  static const MojoGpuEmitter kEmitter;
  return kEmitter;
}

}  // namespace

std::optional<GeneratedFile> emit_mojo_gpu(const Spec& spec) {
  auto it = spec.variants.find("cuda");
  if (it == spec.variants.end()) return std::nullopt;
  const MojoGpuEmitter& em = mojo_gpu_emitter();
  Spec lowered = lower(spec, [&em](Fn fn) { return em.spells(fn); });
  std::vector<Variant> printed;
  for (const Variant& v : lowered.variants.at("cuda"))
    if (mojo_gpu::missing_reason(lowered, v).empty()) printed.push_back(v);
  if (printed.empty()) return std::nullopt;
  lowered.variants[kBackend] = printed;
  return em.print_lowered(lowered);
}

}  // namespace sb
