// Golden tests: each spec in tests/golden/specs/ is loaded, checked and emitted for every backend;
// the result must equal tests/golden/expected/<name>/<backend>/<name>.<ext> byte for byte, and so
// must each companion file (mojo_gpu's <name>.launch.cpp). A derived backend (mojo_gpu) prints
// only the specs that have variants for it (check/derive_variants.h); for the others there must be
// no expected file.
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
  const fs::path dir = fs::path(SB_GOLDEN_DIR) / "expected" / c.name / c.backend;
  if (!em->derived_from().empty() && !spec.value().variants.count(c.backend)) {
    if (updating()) fs::remove_all(dir);
    EXPECT_FALSE(fs::exists(dir)) << dir.string() << " exists, but the spec has no "
                                  << c.backend << " variant (SB_UPDATE_GOLDEN=1 removes it)";
    return;
  }
  const GeneratedFile file = em->emit(spec.value());
  EXPECT_EQ(file.path, c.name + "/" + c.backend + "/" + c.name + "." + em->extension());
  const GeneratedFile again = em->emit(spec.value());
  EXPECT_EQ(again.content, file.content) << "emission is not deterministic";
  std::vector<CompanionFile> files = {{file.path, file.content}};
  for (const CompanionFile& f : file.companions) files.push_back(f);
  ASSERT_EQ(again.companions.size(), file.companions.size());
  for (size_t i = 0; i < file.companions.size(); ++i)
    EXPECT_EQ(again.companions[i].content, file.companions[i].content)
        << "emission of " << file.companions[i].path << " is not deterministic";

  for (const CompanionFile& f : files) {
    const fs::path expected = fs::path(SB_GOLDEN_DIR) / "expected" / f.path;
    if (updating()) {
      fs::create_directories(expected.parent_path());
      std::ofstream(expected, std::ios::binary) << f.content;
      continue;
    }
    ASSERT_TRUE(fs::exists(expected))
        << expected.string() << " is missing; run with SB_UPDATE_GOLDEN=1 to create it";
    const std::string want = read_file(expected);
    EXPECT_TRUE(want == f.content) << expected.string() << " differs from the emitter's output ("
                                   << "SB_UPDATE_GOLDEN=1 rewrites it after an intended change)\n"
                                   << first_difference(want, f.content);
  }
  if (updating()) GTEST_SKIP() << "rewrote " << dir.string();
}

INSTANTIATE_TEST_SUITE_P(Specs, Golden, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return i.param.name + "_" + i.param.backend;
                         });

}  // namespace
}  // namespace sb
