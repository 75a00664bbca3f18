// The bad-spec corpus: every tests/errors/NN_description.yaml must be rejected by
// load_and_check(), and the first line of the formatted error, with the spec's path written as
// FILE, must equal NN_description.expected.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/diag.h"
#include "driver.h"

namespace fs = std::filesystem;

namespace {

const fs::path kDir = SB_ERRORS_DIR;

// Stems ("01_yaml_unclosed_flow_map") of every bad spec, sorted.
std::vector<std::string> bad_specs() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kDir))
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().stem());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

class BadSpec : public ::testing::TestWithParam<std::string> {};

TEST_P(BadSpec, IsRejectedWithTheExpectedMessage) {
  const fs::path spec = kDir / (GetParam() + ".yaml");
  const fs::path expected_path = kDir / (GetParam() + ".expected");
  ASSERT_TRUE(fs::exists(expected_path)) << expected_path << " is missing";
  const std::string expected = first_line(read_text(expected_path));

  const auto start = std::chrono::steady_clock::now();
  auto result = sb::load_and_check(spec.string());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  ASSERT_FALSE(result.ok()) << spec << " was accepted; expected: " << expected;
  // Pathological inputs (deep nesting, alias bombs) must be refused quickly, not ground through.
  EXPECT_LT(seconds, 5.0) << spec << " took " << seconds << " s to reject";

  const sb::Error& err = result.error();
  EXPECT_EQ(err.loc.file, spec.string()) << "errors name the spec file as given";
  EXPECT_GT(err.loc.line, 0) << "errors point at a line";
  const std::string text = sb::format_error(err);
  EXPECT_EQ(replace_all(first_line(text), spec.string(), "FILE"), expected) << text;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadSpec, ::testing::ValuesIn(bad_specs()), test_name);

TEST(ErrorCorpus, IsCompleteAndPaired) {
  const auto specs = bad_specs();
  EXPECT_GE(specs.size(), 30u);
  for (const auto& e : fs::directory_iterator(kDir)) {
    if (e.path().extension() != ".expected") continue;
    EXPECT_TRUE(fs::exists(kDir / (e.path().stem().string() + ".yaml")))
        << e.path() << " has no spec";
    const std::string line = first_line(read_text(e.path()));
    EXPECT_EQ(line.rfind("FILE:", 0), 0u) << e.path() << ": expected lines start with FILE:";
    EXPECT_NE(line.find(": error: "), std::string::npos) << e.path();
  }
}

}  // namespace
