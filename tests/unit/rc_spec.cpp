#include "rc_spec.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

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

}  // namespace sb
