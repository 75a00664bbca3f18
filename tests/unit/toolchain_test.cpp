// The module toolchain: cache keys, the cache itself, and how compile errors reach the user.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "build/module.h"
#include "run/runtime.h"
#include "build/toolchain.h"

namespace fs = std::filesystem;

namespace {

class ToolchainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("specbench_toolchain_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }

  sb::BuildJob job(const std::string& source) {
    sb::ToolchainOptions tools = sb::default_toolchain_options();
    sb::BuildJob j;
    j.kernel = "toy";
    j.backend = "cpu";
    j.source = source;
    j.abi_header = tools.abi_dir + "/specbench_abi.h";
    j.cmd = sb::find_runtime("cpu")->compile_command(tools);
    return j;
  }

  fs::path dir_;
};

const char* kModule = R"(#include "specbench_abi.h"
static int run(const sb_args* a) { ((float*)a->tensors[0])[0] = 1.0f; return 0; }
static const sb_variant variants[] = {{"only", run}};
static const sb_module module = {SPECBENCH_ABI_VERSION, "toy", "cpu", 1, 1, 1, variants};
extern "C" const sb_module* specbench_module(void) { return &module; }
)";

TEST(CacheKey, ChangesWithEveryInput) {
  sb::CompileCommand cmd{"/usr/bin/c++", {"-O3"}, "g++"};
  std::string base = sb::cache_key("int x;", "abi", cmd, "g++ 12");
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(base, sb::cache_key("int x;", "abi", cmd, "g++ 12"));
  EXPECT_NE(base, sb::cache_key("int y;", "abi", cmd, "g++ 12"));
  EXPECT_NE(base, sb::cache_key("int x;", "abi2", cmd, "g++ 12"));
  EXPECT_NE(base, sb::cache_key("int x;", "abi", cmd, "g++ 13"));
  sb::CompileCommand other = cmd;
  other.flags.push_back("-g");
  EXPECT_NE(base, sb::cache_key("int x;", "abi", other, "g++ 12"));
  other = cmd;
  other.compiler = "/usr/bin/g++-12";
  EXPECT_NE(base, sb::cache_key("int x;", "abi", other, "g++ 12"));
  // Bytes moved between fields must not collide.
  EXPECT_NE(sb::cache_key("ab", "c", cmd, "v"), sb::cache_key("a", "bc", cmd, "v"));
}

TEST_F(ToolchainTest, CachesAndRebuildsWhenTheFileChanges) {
  std::string src = write("toy.cpp", kModule);
  std::string cache = (dir_ / "cache").string();
  sb::BuildResult first = sb::build_module(job(src), cache);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(fs::exists(first.module_path));
  EXPECT_EQ(fs::path(first.module_path).filename().string(), "toy-cpu-" + first.key + ".so");

  sb::BuildResult again = sb::build_module(job(src), cache);
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.module_path, first.module_path);

  // A hand edit: a new key, a new module, no stale reuse.
  write("toy.cpp", std::string(kModule) + "// edited\n");
  sb::BuildResult edited = sb::build_module(job(src), cache);
  ASSERT_TRUE(edited.ok) << edited.error;
  EXPECT_FALSE(edited.cached);
  EXPECT_NE(edited.key, first.key);
  EXPECT_NE(edited.module_path, first.module_path);

  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(cache))
    EXPECT_TRUE(e.path().extension() == ".so" || e.path().extension() == ".hash") << e.path();
}

TEST_F(ToolchainTest, AHeaderBesideTheAbiHeaderIsPartOfTheKey) {
  // A copy of the ABI folder, so that one of its other headers can be edited.
  fs::path abi = dir_ / "abi";
  fs::create_directories(abi);
  const std::string real_abi = sb::default_toolchain_options().abi_dir;
  for (const auto& e : fs::directory_iterator(real_abi))
    fs::copy_file(e.path(), abi / e.path().filename());
  ASSERT_TRUE(fs::exists(abi / "specbench_host_alloc.h"));
  std::string src = write("toy.cpp", kModule);
  std::string cache = (dir_ / "cache").string();
  sb::BuildJob j = job(src);
  j.abi_header = (abi / "specbench_abi.h").string();
  j.cmd.flags.push_back("-I" + abi.string());
  sb::BuildResult first = sb::build_module(j, cache);
  ASSERT_TRUE(first.ok) << first.error;

  std::ofstream(abi / "specbench_host_alloc.h", std::ios::app) << "/* edited */\n";
  sb::BuildResult edited = sb::build_module(j, cache);
  ASSERT_TRUE(edited.ok) << edited.error;
  EXPECT_FALSE(edited.cached);
  EXPECT_NE(edited.key, first.key);
}

TEST_F(ToolchainTest, CompileErrorNamesFileAndLine) {
  std::string src = write("broken.cpp",
                          "#include \"specbench_abi.h\"\n"
                          "int ok = 1;\n"
                          "int bad = undeclared_name;\n");
  sb::BuildResult r = sb::build_module(job(src), (dir_ / "cache").string());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("broken.cpp:3:"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("undeclared_name"), std::string::npos) << r.error;
  EXPECT_TRUE(r.module_path.empty());
  // The compiler's output alone, without the command line (whose flags may say "-Werror").
  EXPECT_NE(r.log.find("broken.cpp:3:"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("$ "), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("-shared"), std::string::npos) << r.log;
}

TEST_F(ToolchainTest, MissingCompilerIsAnErrorNotACrash) {
  std::string src = write("toy.cpp", kModule);
  sb::BuildJob j = job(src);
  j.cmd.compiler = (dir_ / "no-such-compiler").string();
  sb::BuildResult r = sb::build_module(j, (dir_ / "cache").string());
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.error.empty());
}

TEST_F(ToolchainTest, ParallelBuildsKeepJobOrder) {
  std::vector<sb::BuildJob> jobs;
  jobs.push_back(job(write("a.cpp", kModule)));
  jobs.push_back(job(write("b.cpp", "#error planted\n")));
  jobs.push_back(job(write("c.cpp", std::string(kModule) + "// c\n")));
  size_t calls = 0;
  auto results = sb::build_modules(jobs, (dir_ / "cache").string(), 3,
                                   [&](size_t, const sb::BuildResult&, size_t) { ++calls; });
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(calls, 3u);
  EXPECT_TRUE(results[0].ok);
  EXPECT_FALSE(results[1].ok);
  EXPECT_NE(results[1].error.find("b.cpp:1:"), std::string::npos) << results[1].error;
  EXPECT_TRUE(results[2].ok);
}

// A library whose constructor leaves a marker file: if it is ever loaded, the marker says so.
std::string planted_source(const fs::path& marker) {
  return std::string(kModule) + "#include <stdio.h>\n__attribute__((constructor)) static void "
                                "planted(void) { FILE* f = fopen(\"" +
         marker.string() + "\", \"w\"); if (f) fclose(f); }\n";
}

// Issue 19: a library planted at a cache path (the right name, another content) is neither
// loaded nor used: the entry is rebuilt. Nor is one with a forged hash file that group or others
// may write, or (when the test can chown) one owned by another user.
TEST_F(ToolchainTest, APlantedLibraryIsNeverLoadedAndIsRebuilt) {
  std::string src = write("toy.cpp", kModule);
  std::string cache = (dir_ / "cache").string();
  sb::BuildResult good = sb::build_module(job(src), cache);
  ASSERT_TRUE(good.ok) << good.error;
  std::string err;
  void* h = sb::dlopen_cache_entry(good.module_path, "specbench_module", err);
  EXPECT_NE(h, nullptr) << err;

  // The planted library, built elsewhere, copied over the entry.
  fs::path marker = dir_ / "planted-ran";
  sb::BuildResult planted =
      sb::build_module(job(write("planted.cpp", planted_source(marker))), (dir_ / "other").string());
  ASSERT_TRUE(planted.ok) << planted.error;
  fs::remove(marker);
  // Renamed over the entry, as an attacker with write access to the folder would (rewriting the
  // file in place would also corrupt the copy this process has loaded).
  auto plant = [&] {
    const std::string tmp = good.module_path + ".planting";
    fs::copy_file(planted.module_path, tmp, fs::copy_options::overwrite_existing);
    fs::permissions(tmp, fs::perms(0755));
    fs::rename(tmp, good.module_path);
  };
  plant();
  EXPECT_EQ(sb::dlopen_cache_entry(good.module_path, "specbench_module", err), nullptr);
  EXPECT_NE(err.find("does not match its hash file"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(marker));
  sb::BuildResult again = sb::build_module(job(src), cache);
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_FALSE(again.cached);
  EXPECT_NE(again.rebuilt_because.find("hash"), std::string::npos) << again.rebuilt_because;
  EXPECT_NE(sb::dlopen_cache_entry(again.module_path, "specbench_module", err), nullptr) << err;
  EXPECT_FALSE(fs::exists(marker));

  // With its own hash file forged, but writable by others.
  plant();
  fs::copy_file(planted.module_path + ".hash", good.module_path + ".hash",
                fs::copy_options::overwrite_existing);
  fs::permissions(good.module_path, fs::perms(0777));
  EXPECT_EQ(sb::untrusted_cache_entry(good.module_path, "specbench_module"),
            "it is writable by group or others");
  EXPECT_EQ(sb::dlopen_cache_entry(good.module_path, "specbench_module", err), nullptr);
  EXPECT_NE(err.find("writable by group or others"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(marker));
  if (geteuid() == 0) {
    fs::permissions(good.module_path, fs::perms(0755));
    ASSERT_EQ(chown(good.module_path.c_str(), 65534, 65534), 0);
    EXPECT_EQ(sb::dlopen_cache_entry(good.module_path, "specbench_module", err), nullptr);
    EXPECT_NE(err.find("owned by uid 65534"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(marker));
  }
  sb::BuildResult rebuilt = sb::build_module(job(src), cache);
  ASSERT_TRUE(rebuilt.ok) << rebuilt.error;
  EXPECT_FALSE(rebuilt.cached);
  EXPECT_EQ(sb::untrusted_cache_entry(rebuilt.module_path, "specbench_module"), "");
  EXPECT_FALSE(fs::exists(marker));
}

// Issue 19: a 0-byte (or truncated) entry is rebuilt, not "cached" forever.
TEST_F(ToolchainTest, AnEmptyOrTruncatedEntryIsRebuilt) {
  std::string src = write("toy.cpp", kModule);
  std::string cache = (dir_ / "cache").string();
  sb::BuildResult first = sb::build_module(job(src), cache);
  ASSERT_TRUE(first.ok) << first.error;
  const auto size = fs::file_size(first.module_path);
  fs::resize_file(first.module_path, 0);
  sb::BuildResult again = sb::build_module(job(src), cache);
  ASSERT_TRUE(again.ok) << again.error;
  EXPECT_FALSE(again.cached);
  EXPECT_NE(again.rebuilt_because.find("empty"), std::string::npos) << again.rebuilt_because;
  EXPECT_EQ(fs::file_size(again.module_path), size);
  fs::resize_file(first.module_path, size / 2);
  sb::BuildResult third = sb::build_module(job(src), cache);
  ASSERT_TRUE(third.ok) << third.error;
  EXPECT_FALSE(third.cached);
  EXPECT_TRUE(sb::build_module(job(src), cache).cached);
}

// Issue 19: a build counts only when the library exports the entry symbol; nothing is cached.
TEST_F(ToolchainTest, ALibraryWithoutTheEntryPointIsAFailedBuild) {
  std::string cache = (dir_ / "cache").string();
  sb::BuildResult r = sb::build_module(job(write("empty.cpp", "int unrelated = 1;\n")), cache);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no library exporting specbench_module()"), std::string::npos) << r.error;
  for (const auto& e : fs::directory_iterator(cache)) ADD_FAILURE() << "left " << e.path();
  EXPECT_FALSE(sb::elf_exports("not an ELF file", "specbench_module"));
  EXPECT_FALSE(sb::elf_exports("", "specbench_module"));
}

// Issue 19: a source path that starts with '-' reaches the compiler as a file, not an option
// (`--root=-x` once linked an empty library and cached it under the right key).
TEST_F(ToolchainTest, ASourcePathLikeAnOptionIsAFile) {
  fs::create_directories(dir_ / "-x");
  write("-x/toy.cpp", kModule);
  fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  sb::BuildResult r = sb::build_module(job("-x/toy.cpp"), "-cache");
  fs::current_path(cwd);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.module_path.rfind((dir_ / "-cache").string(), 0), 0u) << r.module_path;
  EXPECT_EQ(sb::untrusted_cache_entry(r.module_path, "specbench_module"), "");
}

TEST(RunProcess, CapturesOutputAndStatus) {
  sb::ProcessResult p = sb::run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(p.exit_code, 3);
  EXPECT_NE(p.output.find("out"), std::string::npos);
  EXPECT_NE(p.output.find("err"), std::string::npos);
  EXPECT_EQ(sb::run_process({"/nonexistent/program"}).exit_code, 127);
}

TEST(CudaCommand, CompilesOnlyTheRequestedArchitectures) {
  sb::ToolchainOptions tools = sb::default_toolchain_options();
  tools.cuda_archs = {90};
  sb::CompileCommand c = sb::find_runtime("cuda")->compile_command(tools);
  std::string flags;
  for (const auto& f : c.flags) flags += f + " ";
  EXPECT_NE(flags.find("arch=compute_90,code=sm_90"), std::string::npos) << flags;
  EXPECT_EQ(flags.find("sm_80"), std::string::npos) << flags;
  EXPECT_NE(flags.find("-cudart shared"), std::string::npos) << flags;
}

TEST(ToolchainOptions, TheEnvironmentNamesTheCxxCompiler) {
  const char* before = std::getenv("SPECBENCH_CXX");
  const std::string saved = before ? before : "";
  ::unsetenv("SPECBENCH_CXX");
  const std::string built_in = sb::default_toolchain_options().cxx;
  EXPECT_FALSE(built_in.empty());
  ::setenv("SPECBENCH_CXX", "/opt/wrapped/c++", 1);
  EXPECT_EQ(sb::default_toolchain_options().cxx, "/opt/wrapped/c++");
  ::setenv("SPECBENCH_CXX", "", 1);  // empty: the built-in one
  EXPECT_EQ(sb::default_toolchain_options().cxx, built_in);
  if (before)
    ::setenv("SPECBENCH_CXX", saved.c_str(), 1);
  else
    ::unsetenv("SPECBENCH_CXX");
}

}  // namespace
