// Unit tests of the mojo_gpu printer (backends/mojo_gpu/): every kernel form has a record, its
// variants are the cuda variants whose forms it prints, with the kernels the cuda file launches
// under the same names, and f64 sin and cos (which Mojo 1.2.0 cannot compile for NVIDIA GPUs)
// keep a variant out with the reason. Whether the files compile to PTX is checked by the
// `mojo-gpu-compile` CTest label (tests/mojo_gpu/), where Mojo is installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "backends/cuda/emit_cuda.h"
#include "backends/mojo_gpu/emit_mojo_gpu.h"
#include "backends/mojo_gpu/strategies.h"
#include "driver.h"

namespace sb {
namespace {

namespace fs = std::filesystem;

TEST(MojoGpu, EveryKernelFormHasARecord) {
  for (int k = 0; k <= static_cast<int>(GpuKernel::FusedRows); ++k) {
    const GpuKernel kind = static_cast<GpuKernel>(k);
    EXPECT_EQ(mojo_gpu::kernel_form(kind).kind, kind) << gpu_kernel_name(kind);
  }
  EXPECT_TRUE(mojo_gpu::kernel_form(GpuKernel::GridStride).printed);
}

// The names a file exports, and those the cuda file launches for the variants the mojo_gpu file
// has (a variant is there when one of its kernels is).
TEST(MojoGpu, KernelsAreTheCudaKernelsOfTheSameVariants) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(SB_TESTS_DIR) / ".." / "specs")) {
    if (e.path().extension() != ".yaml") continue;
    Result<Spec> spec = load_and_check(e.path().string());
    ASSERT_TRUE(spec.ok()) << format_error(spec.error());
    const std::optional<GeneratedFile> f = emit_mojo_gpu(spec.value());
    if (!f) continue;
    ++files;
    std::set<std::string> exported;
    const std::regex re("@export\\(\"([^\"]+)\"\\)");
    for (std::sregex_iterator it(f->content.begin(), f->content.end(), re), end; it != end; ++it)
      exported.insert((*it)[1]);
    std::set<std::string> variants;
    const GeneratedFile cu = cuda_emitter().emit(spec.value());
    for (const KernelLaunch& l : cu.launches)
      for (const std::string& x : exported)
        if (x.rfind("sb_" + l.variant + "_s", 0) == 0) variants.insert(l.variant);
    std::set<std::string> launched;
    for (const KernelLaunch& l : cu.launches)
      if (variants.count(l.variant)) launched.insert(l.kernel);
    EXPECT_FALSE(exported.empty()) << f->path;
    EXPECT_EQ(exported, launched) << f->path;
  }
  EXPECT_GT(files, 50);
}

Result<Spec> load(const std::string& name, const std::string& compute, const std::string& type) {
  const fs::path dir =
      fs::temp_directory_path() / ("sb_emit_mojo_gpu_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / (name + ".yaml");
  std::ofstream(path) << "name: " << name << "\ndoc: test\nsizes:\n"
                      << "  N: {bench: [64], verify: [1, 7]}\n"
                      << "tensors:\n  x: {type: " << type << ", shape: [N], role: in}\n"
                      << "  y: {type: " << type << ", shape: [N], role: out}\n"
                      << "compute: |\n" << compute << "variants:\n"
                      << "  cuda:\n    - {name: tpo, strategy: thread_per_output}\n"
                      << "    - {name: gs, strategy: grid_stride}\n";
  return load_and_check(path.string());
}

TEST(MojoGpu, F64SinAndCosHaveNoCounterpart) {
  Result<Spec> f32 = load("sin_f32", "  y[i] = sin(x[i])\n", "f32");
  ASSERT_TRUE(f32.ok()) << format_error(f32.error());
  const std::optional<GeneratedFile> a = emit_mojo_gpu(f32.value());
  ASSERT_TRUE(a.has_value());
  EXPECT_NE(a->content.find("@export(\"sb_tpo_s0\")"), std::string::npos);
  EXPECT_NE(a->content.find("from std.math import sin"), std::string::npos);

  Result<Spec> f64 = load("cos_f64", "  y[i] = cos(x[i])\n", "f64");
  ASSERT_TRUE(f64.ok()) << format_error(f64.error());
  EXPECT_FALSE(emit_mojo_gpu(f64.value()).has_value());
}

TEST(MojoGpu, HeaderNamesTheCudaVariantsWithoutACounterpart) {
  Result<Spec> spec = load_and_check(std::string(SB_TESTS_DIR) + "/../specs/softmax.yaml");
  ASSERT_TRUE(spec.ok()) << format_error(spec.error());
  const std::optional<GeneratedFile> f = emit_mojo_gpu(spec.value());
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->content.find("#   warp_per_row (strategy warp_per_row): its fused_rows kernel"),
            std::string::npos);
  EXPECT_EQ(f->content.find("def sb_warp_per_row_"), std::string::npos);
}

}  // namespace
}  // namespace sb
