// The module toolchain: cache keys, the cache itself, and how compile errors reach the user.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "module.h"
#include "runtime.h"
#include "toolchain.h"

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
    EXPECT_EQ(e.path().extension(), ".so") << e.path();
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

}  // namespace
