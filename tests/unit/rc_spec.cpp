#include "rc_spec.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "driver.h"

namespace sb {

Spec load_rc_spec(const std::string& tensors, const std::string& compute) {
  static int n = 0;
  const std::string text =
      "name: t\ndoc: test spec\nsizes:\n"
      "  R: {bench: [64], verify: [3]}\n"
      "  C: {bench: [64], verify: [5]}\n"
      "tensors:\n" +
      tensors + "compute: |\n" + compute +
      "variants:\n  cpu:\n    - {name: loops, strategy: loops}\n";
  const auto path =
      std::filesystem::temp_directory_path() /
      ("sb_rc_spec_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".yaml");
  std::ofstream(path) << text;
  Result<Spec> s = load_and_check(path.string());
  std::filesystem::remove(path);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : format_error(s.error()));
  return s.ok() ? std::move(s.value()) : Spec{};
}

std::string rc_tensors(const std::vector<std::string>& names) {
  static const std::map<std::string, std::string> kTable = {
      {"a", "{type: f32, shape: [R, C], role: in}"},
      {"b", "{type: f32, shape: [C, C], role: in}"},
      {"s", "{type: f32, shape: [R], role: out}"},
      {"t", "{type: f32, shape: [C, R], role: in}"},
      {"v", "{type: f32, shape: [C], role: out}"},
      {"x", "{type: f32, shape: [C], role: in}"},
      {"y", "{type: f32, shape: [R, C], role: out}"},
      {"z", "{type: f32, shape: [], role: out}"},
      {"bias", "{type: f32, shape: [C], role: in}"}};
  std::string out;
  for (const std::string& n : names) out += "  " + n + ": " + kTable.at(n) + "\n";
  return out;
}

}  // namespace sb
