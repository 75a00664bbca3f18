// Unit tests of the fuse_attention pass (codegen/lower/fuse_attention.h): where attention groups
// start, that they do not overlap, and its `--dump-ir fuse_attention` text.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "driver.h"
#include "lower/fuse_attention.h"
#include "lower/patterns.h"
#include "rc_spec.h"

namespace sb {
namespace {

const char* kTensors =
    "  q: {type: f32, shape: [R, C], role: in}\n"
    "  kk: {type: f32, shape: [R, C], role: in}\n"
    "  v: {type: f32, shape: [R, C], role: in}\n"
    "  s: {type: f32, shape: [R, R], role: temp}\n"
    "  m: {type: f32, shape: [R], role: temp}\n"
    "  p: {type: f32, shape: [R, R], role: temp}\n"
    "  l: {type: f32, shape: [R], role: temp}\n"
    "  y: {type: f32, shape: [R, C], role: out}\n"
    "  s2: {type: f32, shape: [R, R], role: temp}\n"
    "  m2: {type: f32, shape: [R], role: temp}\n"
    "  p2: {type: f32, shape: [R, R], role: temp}\n"
    "  l2: {type: f32, shape: [R], role: temp}\n"
    "  y2: {type: f32, shape: [R, C], role: out}\n"
    "  z: {type: f32, shape: [R], role: out}\n";

// The five statements of attention over the tensors named with `sfx`.
std::string attention(const std::string& sfx) {
  const std::string s = "s" + sfx, m = "m" + sfx, p = "p" + sfx, l = "l" + sfx, y = "y" + sfx;
  return "  " + s + "[i, j] = sum(d in 0..C: q[i, d] * kk[j, d])\n" +  //
         "  " + m + "[i] = max(j in 0..R: " + s + "[i, j])\n" +
         "  " + p + "[i, j] = exp(" + s + "[i, j] - " + m + "[i])\n" +
         "  " + l + "[i] = sum(j in 0..R: " + p + "[i, j])\n" +
         "  " + y + "[i, e] = sum(j in 0..R: " + p + "[i, j] * v[j, e]) / " + l + "[i]\n";
}

Spec fused(const std::string& compute) {
  // The tensors that `compute` names (a spec declares no tensor it does not use).
  std::string tensors;
  std::istringstream lines(kTensors);
  for (std::string line; std::getline(lines, line);) {
    const std::string name = line.substr(2, line.find(':') - 2);
    if (std::regex_search(compute, std::regex("\\b" + name + "\\["))) tensors += line + "\n";
  }
  Spec spec = load_rc_spec(tensors, compute);
  fuse_attention(spec);
  return spec;
}

TEST(FuseAttention, EachGroupStartsAtItsScores) {
  const Spec spec = fused("  z[i] = q[i, 0]\n" + attention("") + attention("2"));
  EXPECT_TRUE(spec.schedule.fuse_attention_done);
  EXPECT_EQ(spec.schedule.attention_groups, (std::vector<size_t>{1, 1 + kAttentionStatements}));
  const std::string text = dump_fuse_attention(spec);
  EXPECT_NE(text.find("attention group stmts 1..5, temps never written when fused: s, m, p, l\n"
                      "  stmt 1: s[i, j] = sum(d in 0..C: q[i, d] * kk[j, d])\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("attention group stmts 6..10, temps never written when fused: s2, m2, p2, "
                      "l2\n"),
            std::string::npos)
      << text;
}

TEST(FuseAttention, NoGroupWhereTheShapeDoesNotMatch) {
  // A later statement reads the row sums: the fused form would never write them.
  const Spec spec = fused(attention("") + "  z[i] = l[i]\n");
  EXPECT_TRUE(spec.schedule.attention_groups.empty());
  EXPECT_EQ(dump_fuse_attention(spec), "no attention groups\n");
}

}  // namespace
}  // namespace sb
