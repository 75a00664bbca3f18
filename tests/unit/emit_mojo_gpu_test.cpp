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

// The mojo_gpu file of a checked spec, when the spec has mojo_gpu variants (derive_variants).
std::optional<GeneratedFile> emit_mojo_gpu(const Spec& spec) {
  if (!spec.variants.count("mojo_gpu")) return std::nullopt;
  return mojo_gpu_emitter().emit(spec);
}

TEST(MojoGpu, EveryKernelFormHasARecord) {
  for (int k = 0; k <= static_cast<int>(GpuKernel::FusedAttention); ++k) {
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
    // The launcher file declares and launches exactly the exported kernels.
    ASSERT_EQ(f->companions.size(), 1u) << f->path;
    const std::string& launch = f->companions[0].content;
    EXPECT_EQ(f->companions[0].path, spec.value().name + "/mojo_gpu/" + spec.value().name +
                                         ".launch.cpp");
    std::set<std::string> declared, called;
    const std::regex decl("SB_MOJO_KERNEL\\(([A-Za-z0-9_]+)\\);");
    const std::regex call("SB_MOJO_LAUNCH\\(([A-Za-z0-9_]+),");
    for (std::sregex_iterator it(launch.begin(), launch.end(), decl), end; it != end; ++it)
      declared.insert((*it)[1]);
    for (std::sregex_iterator it(launch.begin(), launch.end(), call), end; it != end; ++it)
      called.insert((*it)[1]);
    EXPECT_EQ(declared, exported) << f->companions[0].path;
    EXPECT_EQ(called, exported) << f->companions[0].path;
    // Its variant table is the derived variants.
    for (const Variant& v : spec.value().variants.at("mojo_gpu"))
      EXPECT_NE(launch.find("{\"" + v.name + "\", sb_variant_" + v.name + "}"), std::string::npos)
          << v.name;
  }
  EXPECT_GT(files, 50);
}

// The derived variants are the cuda variants with a counterpart, in order, with their strategies
// and parameters.
TEST(MojoGpu, VariantsAreDerivedFromCuda) {
  Result<Spec> spec = load_and_check(std::string(SB_TESTS_DIR) + "/../specs/softmax.yaml");
  ASSERT_TRUE(spec.ok()) << format_error(spec.error());
  const std::vector<Variant>& cuda = spec.value().variants.at("cuda");
  const std::vector<Variant>& mg = spec.value().variants.at("mojo_gpu");
  ASSERT_EQ(mg.size(), cuda.size());
  ASSERT_EQ(mg.size(), 4u);  // thread_per_output, grid_stride, warp_per_row, block_per_row
  for (size_t i = 0; i < mg.size(); ++i) {
    EXPECT_EQ(mg[i].name, cuda[i].name);
    EXPECT_EQ(mg[i].strategy, cuda[i].strategy);
    EXPECT_EQ(mg[i].params, cuda[i].params);
  }
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

// atomic_reduce of a max, min or product: a compare-and-swap loop on the bits for floats and for
// every product (as the cuda file's), Mojo's atomic max and min for integers.
TEST(MojoGpu, AtomicMaxMinAndProductsAreCompareAndSwapLoops) {
  const fs::path dir =
      fs::temp_directory_path() / ("sb_emit_mojo_gpu_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / "atomics.yaml";
  std::ofstream(path) << "name: atomics\ndoc: test\nsizes:\n  N: {bench: [64], verify: [1, 7]}\n"
                      << "tensors:\n  x: {type: f32, shape: [N], role: in}\n"
                      << "  v: {type: i32, shape: [N], role: in}\n"
                      << "  m: {type: f32, shape: [], role: out}\n"
                      << "  k: {type: i32, shape: [], role: out}\n"
                      << "  p: {type: i32, shape: [], role: out}\n"
                      << "compute: |\n  m = min(i in 0..N: x[i])\n  k = max(i in 0..N: v[i])\n"
                      << "  p = prod(i in 0..N: v[i])\n"
                      << "variants:\n  cuda:\n    - {name: a, strategy: atomic_reduce}\n";
  Result<Spec> spec = load_and_check(path.string());
  ASSERT_TRUE(spec.ok()) << format_error(spec.error());
  const std::optional<GeneratedFile> f = emit_mojo_gpu(spec.value());
  ASSERT_TRUE(f.has_value());
  const std::string& c = f->content;
  EXPECT_NE(c.find("def sb_atomic_min_f32(p: Pointer[Float32, MutUntrackedOrigin], v: Float32):"),
            std::string::npos);
  EXPECT_NE(c.find("sb_new = sb_min(sb_new, v)"), std::string::npos);
  EXPECT_NE(c.find("Atomic.compare_exchange["), std::string::npos);
  EXPECT_NE(c.find("sb_atomic_min_f32(m, sb_acc)"), std::string::npos);
  EXPECT_NE(c.find("Atomic.max[ordering=Ordering.RELAXED](k, sb_acc)"), std::string::npos);
  EXPECT_NE(c.find("sb_atomic_prod_i32(p, sb_acc)"), std::string::npos);
  EXPECT_EQ(c.find("without a Mojo GPU counterpart"), std::string::npos);
}

// A fused row group (warp_per_row, block_per_row) is one kernel per row group, staged in dynamic
// shared memory, with the kernel reading global memory beside it, launched by the same choice
// as the cuda launcher's.
TEST(MojoGpu, FusedRowGroupsAreOneKernel) {
  Result<Spec> spec = load_and_check(std::string(SB_TESTS_DIR) + "/../specs/softmax.yaml");
  ASSERT_TRUE(spec.ok()) << format_error(spec.error());
  const std::optional<GeneratedFile> f = emit_mojo_gpu(spec.value());
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->content.find("without a Mojo GPU counterpart"), std::string::npos);
  for (const std::string v : {"warp_per_row", "block_per_row"}) {
    EXPECT_NE(f->content.find("@export(\"sb_" + v + "_s0_rows\")"), std::string::npos) << v;
    EXPECT_NE(f->content.find("@export(\"sb_" + v + "_s0_rows_global\")"), std::string::npos)
        << v;
    EXPECT_EQ(f->content.find("def sb_" + v + "_s1"), std::string::npos) << v;
  }
  EXPECT_NE(f->content.find("name=\"sb_rows_f32\""), std::string::npos);
  EXPECT_NE(f->content.find("syncwarp()"), std::string::npos);
  ASSERT_EQ(f->companions.size(), 1u);
  const std::string& launch = f->companions[0].content;
  EXPECT_NE(launch.find("if (sb_smem <= 49152) {"), std::string::npos);
  EXPECT_NE(launch.find("SB_MOJO_LAUNCH(sb_warp_per_row_s0_rows, (unsigned)sb_blocks, 256, "
                        "(size_t)sb_smem, sb_stream,"),
            std::string::npos);
}

// Every kernel form of the GPU mapping is printed, so every cuda variant of every spec has its
// mojo_gpu counterpart (same names, in order), except in a spec with an f64 sin or cos, which
// Mojo 1.2.0 cannot compile for NVIDIA GPUs (F64SinAndCosHaveNoCounterpart); specs with f16 and
// bf16 tensors included.
TEST(MojoGpu, EveryCudaVariantHasACounterpart) {
  for (const mojo_gpu::KernelForm& f : mojo_gpu::kernel_forms()) EXPECT_TRUE(f.printed) << f.about;
  int specs = 0;
  for (const auto& e : fs::directory_iterator(fs::path(SB_TESTS_DIR) / ".." / "specs")) {
    if (e.path().extension() != ".yaml") continue;
    Result<Spec> spec = load_and_check(e.path().string());
    ASSERT_TRUE(spec.ok()) << format_error(spec.error());
    const auto cuda = spec.value().variants.find("cuda");
    if (cuda == spec.value().variants.end()) continue;
    const auto mg = spec.value().variants.find("mojo_gpu");
    ++specs;
    ASSERT_NE(mg, spec.value().variants.end()) << e.path();
    ASSERT_EQ(mg->second.size(), cuda->second.size()) << e.path();
    for (size_t i = 0; i < mg->second.size(); ++i)
      EXPECT_EQ(mg->second[i].name, cuda->second[i].name) << e.path();
    const std::optional<GeneratedFile> f = emit_mojo_gpu(spec.value());
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->content.find("without a Mojo GPU counterpart"), std::string::npos) << e.path();
  }
  EXPECT_GT(specs, 50);
}

// The tiled forms print the cuda variants' tiled kernels under the same names, with the same block
// sizes (2-D and 3-D blocks by their thread counts), and the stencil's window in dynamic shared
// memory with its untiled fallback.
TEST(MojoGpu, TiledFormsMatchTheCudaLaunches) {
  struct Case {
    const char* spec;
    std::vector<std::pair<std::string, int64_t>> kernels;  // name, threads per block
    const char* launch;  // a line of the launcher
  };
  const Case cases[] = {
      {"transpose", {{"sb_tiled_transpose_s0", 256}}, "const dim3 sb_block(32, 8);"},
      {"stencil2d",
       {{"sb_tiled_stencil_s0", 256}, {"sb_tiled_stencil_s0_untiled", 256}},
       "if (sb_smem <= 49152) {"},
      {"stencil3d", {{"sb_tiled_stencil_s0", 256}}, "const dim3 sb_block(32, 4, 2);"},
      {"matmul",
       {{"sb_tiled_matmul_s0", 256}, {"sb_register_blocked_matmul_s0", 256}},
       "const dim3 sb_block(16, 16);"},
  };
  for (const Case& c : cases) {
    Result<Spec> spec =
        load_and_check(std::string(SB_TESTS_DIR) + "/../specs/" + c.spec + ".yaml");
    ASSERT_TRUE(spec.ok()) << format_error(spec.error());
    const std::optional<GeneratedFile> f = emit_mojo_gpu(spec.value());
    ASSERT_TRUE(f.has_value()) << c.spec;
    EXPECT_EQ(f->content.find("cuda variants without a Mojo GPU counterpart"), std::string::npos)
        << c.spec;
    ASSERT_EQ(f->companions.size(), 1u) << c.spec;
    EXPECT_NE(f->companions[0].content.find(c.launch), std::string::npos) << c.spec;
    const GeneratedFile cu = cuda_emitter().emit(spec.value());
    for (const auto& [name, threads] : c.kernels) {
      EXPECT_NE(f->content.find("@export(\"" + name + "\")"), std::string::npos) << name;
      bool in_cuda = false, in_mojo = false;
      for (const KernelLaunch& l : cu.launches)
        if (l.kernel == name) in_cuda = l.block_threads == threads;
      for (const KernelLaunch& l : f->launches)
        if (l.kernel == name) {
          in_mojo = l.block_threads == threads;
          EXPECT_EQ(l.dynamic_shared, name == "sb_tiled_stencil_s0") << name;
        }
      EXPECT_TRUE(in_cuda) << name;
      EXPECT_TRUE(in_mojo) << name;
    }
  }
  // The window is external shared memory, one name per element type.
  Result<Spec> st = load_and_check(std::string(SB_TESTS_DIR) + "/../specs/stencil2d.yaml");
  ASSERT_TRUE(st.ok()) << format_error(st.error());
  EXPECT_NE(emit_mojo_gpu(st.value())->content.find("external_memory[Float64, "
                                                    "address_space=AddressSpace.SHARED, "
                                                    "alignment=16, name=\"sb_tile_f64\"]()"),
            std::string::npos);
}

}  // namespace
}  // namespace sb
