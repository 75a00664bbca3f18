// Golden tests: each spec in tests/golden/specs/ is loaded, checked and emitted for every backend;
// the result must equal tests/golden/expected/<name>/<backend>/<name>.<ext> byte for byte.
// The mojo_gpu printer (not an emitter of all_emitters(): backends/mojo_gpu/emit_mojo_gpu.h) is
// tested the same way, at expected/<name>/mojo_gpu/<name>.mojo, for the specs it prints; for the
// others there must be no such file.
// With SB_UPDATE_GOLDEN=1 in the environment the expected files are rewritten instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "driver.h"
#include "backends/emitter.h"
#include "backends/mojo_gpu/emit_mojo_gpu.h"

namespace sb {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string spec;     // path of the spec file
  std::string name;     // spec file stem
  std::string backend;  // emitter backend
};

std::vector<Case> cases() {
  std::vector<std::string> specs;
  for (const auto& e : fs::directory_iterator(fs::path(SB_GOLDEN_DIR) / "specs"))
    if (e.path().extension() == ".yaml") specs.push_back(e.path().string());
  std::sort(specs.begin(), specs.end());
  std::vector<Case> out;
  for (const auto& s : specs)
    for (const Emitter* e : all_emitters())
      out.push_back({s, fs::path(s).stem().string(), e->backend()});
  return out;
}

bool updating() {
  const char* v = std::getenv("SB_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first differing line of two texts, for a readable failure message.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(a, la));
    const bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "texts differ only in the final newline";
    if (!ha || !hb || la != lb) {
      return "first difference at line " + std::to_string(line) +
             ":\n  expected: " + (ha ? la : "<end of file>") +
             "\n  actual:   " + (hb ? lb : "<end of file>");
    }
  }
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, MatchesExpected) {
  const Case& c = GetParam();
  Result<Spec> spec = load_and_check(c.spec);
  ASSERT_TRUE(spec.ok()) << format_error(spec.error());
  const Emitter* em = find_emitter(c.backend);
  ASSERT_NE(em, nullptr);
  const GeneratedFile file = em->emit(spec.value());
  EXPECT_EQ(file.path, c.name + "/" + c.backend + "/" + c.name + "." + em->extension());
  EXPECT_EQ(em->emit(spec.value()).content, file.content) << "emission is not deterministic";

  const fs::path expected = fs::path(SB_GOLDEN_DIR) / "expected" / file.path;
  if (updating()) {
    fs::create_directories(expected.parent_path());
    std::ofstream(expected, std::ios::binary) << file.content;
    GTEST_SKIP() << "rewrote " << expected.string();
  }
  ASSERT_TRUE(fs::exists(expected))
      << expected.string() << " is missing; run with SB_UPDATE_GOLDEN=1 to create it";
  const std::string want = read_file(expected);
  EXPECT_TRUE(want == file.content) << expected.string() << " differs from the emitter's output ("
                                    << "SB_UPDATE_GOLDEN=1 rewrites it after an intended change)\n"
                                    << first_difference(want, file.content);
}

class GoldenMojoGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenMojoGpu, MatchesExpected) {
  const std::string name = fs::path(GetParam()).stem().string();
  Result<Spec> spec = load_and_check(GetParam());
  ASSERT_TRUE(spec.ok()) << format_error(spec.error());
  const std::optional<GeneratedFile> file = emit_mojo_gpu(spec.value());
  const fs::path expected =
      fs::path(SB_GOLDEN_DIR) / "expected" / name / "mojo_gpu" / (name + ".mojo");
  if (!file) {
    if (updating()) fs::remove(expected);
    EXPECT_FALSE(fs::exists(expected)) << expected.string() << " exists, but the spec has no "
                                       << "mojo_gpu variant (SB_UPDATE_GOLDEN=1 removes it)";
    return;
  }
  EXPECT_EQ(file->path, name + "/mojo_gpu/" + name + ".mojo");
  EXPECT_EQ(emit_mojo_gpu(spec.value())->content, file->content) << "emission is not deterministic";
  if (updating()) {
    fs::create_directories(expected.parent_path());
    std::ofstream(expected, std::ios::binary) << file->content;
    GTEST_SKIP() << "rewrote " << expected.string();
  }
  ASSERT_TRUE(fs::exists(expected))
      << expected.string() << " is missing; run with SB_UPDATE_GOLDEN=1 to create it";
  const std::string want = read_file(expected);
  EXPECT_TRUE(want == file->content) << expected.string() << " differs from the printer's output ("
                                     << "SB_UPDATE_GOLDEN=1 rewrites it after an intended change)\n"
                                     << first_difference(want, file->content);
}

std::vector<std::string> golden_specs() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(SB_GOLDEN_DIR) / "specs"))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Specs, GoldenMojoGpu, ::testing::ValuesIn(golden_specs()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return fs::path(i.param).stem().string() + "_mojo_gpu";
                         });

INSTANTIATE_TEST_SUITE_P(Specs, Golden, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return i.param.name + "_" + i.param.backend;
                         });

}  // namespace
}  // namespace sb
