// Unit tests of the streaming-stores policy (codegen/lower/streaming.h): which statements may
// stream, and whose bytes decide it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "driver.h"
#include "lower/row_fusion.h"
#include "lower/streaming.h"

namespace sb {
namespace {

Spec load(const std::string& tensors, const std::string& compute) {
  static int n = 0;
  const std::string text =
      "name: t\ndoc: test spec\nsizes:\n"
      "  R: {bench: [64], verify: [3]}\n"
      "  C: {bench: [64], verify: [5]}\n"
      "tensors:\n" +
      tensors + "compute: |\n" + compute +
      "variants:\n  cpu:\n    - {name: loops, strategy: loops}\n";
  const auto path = std::filesystem::temp_directory_path() /
                    ("sb_streaming_test_" + std::to_string(::getpid()) + "_" +
                     std::to_string(n++) + ".yaml");
  std::ofstream(path) << text;
  Result<Spec> s = load_and_check(path.string());
  std::filesystem::remove(path);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : format_error(s.error()));
  return s.ok() ? std::move(s.value()) : Spec{};
}

const char* kSoftmaxLike =
    "  x: {type: f32, shape: [R, C], role: in}\n"
    "  m: {type: f32, shape: [R], role: temp}\n"
    "  e: {type: f32, shape: [R, C], role: temp}\n"
    "  s: {type: f32, shape: [R], role: temp}\n"
    "  y: {type: f32, shape: [R, C], role: out}\n"
    "  v: {type: f32, shape: [C], role: out}\n"
    "  z: {type: f32, shape: [], role: out}\n";

const char* kSoftmaxCompute =
    "  m[r] = max(c in 0..C: x[r, c])\n"
    "  e[r, c] = exp(x[r, c] - m[r])\n"
    "  s[r] = sum(c in 0..C: e[r, c])\n"
    "  y[r, c] = e[r, c] / s[r]\n"
    "  v[c] = x[0, c] * 2\n"
    "  z = x[0, 0]\n";

TEST(Streaming, ThresholdAndLineAreTheDocumentedOnes) {
  EXPECT_EQ(kStreamMinBytes, 32 * 1024 * 1024);
  EXPECT_EQ(kStreamLineBytes, 64);
}

TEST(Streaming, OnlyElementwiseOutputsInMemoryAreCandidates) {
  const Spec spec = load(kSoftmaxLike, kSoftmaxCompute);
  ASSERT_EQ(spec.stmts.size(), 6u);
  // Reductions never stream.
  EXPECT_FALSE(stream_candidate(spec.stmts[0], false, false));
  EXPECT_FALSE(stream_candidate(spec.stmts[2], true, false));
  // Elementwise of rank 2: alone or in a row group, unless held as a row-local temp.
  EXPECT_TRUE(stream_candidate(spec.stmts[1], false, false));
  EXPECT_TRUE(stream_candidate(spec.stmts[1], true, false));
  EXPECT_FALSE(stream_candidate(spec.stmts[1], true, true));
  EXPECT_TRUE(stream_candidate(spec.stmts[3], true, false));
  // Rank 1: alone only (a row of one element is not streamed).
  EXPECT_TRUE(stream_candidate(spec.stmts[4], false, false));
  EXPECT_FALSE(stream_candidate(spec.stmts[4], true, false));
  // A scalar never streams.
  EXPECT_FALSE(stream_candidate(spec.stmts[5], false, false));
}

TEST(Streaming, BytesCountTheTensorsInMemory) {
  const Spec spec = load(kSoftmaxLike, kSoftmaxCompute);
  auto id = [&](const std::string& name) {
    for (size_t t = 0; t < spec.tensors.size(); ++t)
      if (spec.tensors[t].name == name) return static_cast<int>(t);
    ADD_FAILURE() << "no tensor " << name;
    return -1;
  };
  // Every output and every tensor read, once each.
  EXPECT_EQ(stream_tensors(spec, 0, 3),
            (std::set<int>{id("x"), id("m"), id("e"), id("s"), id("y")}));
  EXPECT_EQ(stream_tensors(spec, 1, 1), (std::set<int>{id("x"), id("m"), id("e")}));
  // A row group's row-local temps are not in memory, so they do not count.
  EXPECT_EQ(stream_tensors(spec, 0, 3, {id("m"), id("e"), id("s")}),
            (std::set<int>{id("x"), id("y")}));
}

}  // namespace
}  // namespace sb
