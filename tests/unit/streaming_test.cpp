// Unit tests of the streaming pass (codegen/lower/streaming.h): which statements stream their
// output alone and by rows, and whose bytes decide it; its `--dump-ir streaming` text.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "driver.h"
#include "lower/patterns.h"
#include "lower/pipeline.h"
#include "lower/row_fusion.h"
#include "lower/streaming.h"
#include "rc_spec.h"

namespace sb {
namespace {

Spec load(const std::string& tensors, const std::string& compute) {
  return load_rc_spec(tensors, compute);
}

// The spec with the row_fusion and streaming passes run on it.
Spec planned(const std::string& tensors, const std::string& compute) {
  Spec s = load(tensors, compute);
  row_fusion(s);
  streaming(s);
  return s;
}

int id(const Spec& spec, const std::string& name) {
  for (size_t t = 0; t < spec.tensors.size(); ++t)
    if (spec.tensors[t].name == name) return static_cast<int>(t);
  ADD_FAILURE() << "no tensor " << name;
  return -1;
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
  EXPECT_EQ(kStreamMinBytes, 48 * 1024 * 1024);
  EXPECT_EQ(kStreamLineBytes, 64);
}

TEST(Streaming, OnlyElementwiseOutputsInMemoryStream) {
  const Spec spec = planned(kSoftmaxLike, kSoftmaxCompute);
  ASSERT_EQ(spec.stmts.size(), 6u);
  const std::vector<StreamChoice>& c = spec.schedule.streams;
  ASSERT_EQ(c.size(), 6u);
  ASSERT_EQ(spec.schedule.row_groups.size(), 1u);  // stmts 0..3, m, e, s row-local
  // Reductions never stream.
  EXPECT_FALSE(c[0].whole);
  EXPECT_FALSE(c[0].rows);
  EXPECT_FALSE(c[2].whole);
  EXPECT_FALSE(c[2].rows);
  // Elementwise of rank 2 in the group: alone it streams; by rows only when its output is in
  // memory (e is held as a row-local temp, y is not).
  EXPECT_TRUE(c[1].whole);
  EXPECT_FALSE(c[1].rows);
  EXPECT_TRUE(c[3].whole);
  EXPECT_TRUE(c[3].rows);
  // Rank 1 outside the group: alone only (a row of one element is not streamed).
  EXPECT_TRUE(c[4].whole);
  EXPECT_FALSE(c[4].rows);
  // A scalar never streams.
  EXPECT_FALSE(c[5].whole);
  EXPECT_FALSE(c[5].rows);
}

TEST(Streaming, OutsideAGroupRowsStreamByTheirOwn) {
  // Two elementwise statements of rank 2 make no group (their rows do not reduce or reuse), so
  // nothing is row-local: both stream alone and by rows.
  const Spec spec = planned(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  t: {type: f32, shape: [R, C], role: temp}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  t[r, c] = x[r, c] * 2\n"
      "  y[r, c] = t[0, c] + 1\n");
  ASSERT_TRUE(spec.schedule.row_groups.empty());
  ASSERT_EQ(spec.schedule.streams.size(), 2u);
  for (const StreamChoice& c : spec.schedule.streams) {
    EXPECT_TRUE(c.whole);
    EXPECT_TRUE(c.rows);
  }
  EXPECT_TRUE(spec.schedule.group_tensors.empty());
}

TEST(Streaming, BytesCountTheTensorsInMemory) {
  const Spec spec = planned(kSoftmaxLike, kSoftmaxCompute);
  // Alone: the statement's output and every tensor it reads, once each.
  EXPECT_EQ(spec.schedule.streams[1].tensors,
            (std::set<int>{id(spec, "x"), id(spec, "m"), id(spec, "e")}));
  EXPECT_EQ(spec.schedule.streams[3].tensors,
            (std::set<int>{id(spec, "e"), id(spec, "s"), id(spec, "y")}));
  EXPECT_EQ(spec.schedule.streams[4].tensors, (std::set<int>{id(spec, "x"), id(spec, "v")}));
  // A row group: the tensors the whole group touches, less its row-local temps (not in memory).
  ASSERT_EQ(spec.schedule.group_tensors.size(), 1u);
  EXPECT_EQ(spec.schedule.group_tensors[0], (std::set<int>{id(spec, "x"), id(spec, "y")}));
}

TEST(Streaming, LinesPrefetchOnlyWhatTheyReadAlongTheOutput) {
  // Prefetched: reads whose subscripts are the output's own indices. Not prefetched: a broadcast
  // (m[r]), a shifted or reordered read, a read under a boundary rule, a row-local temp.
  const Spec spec = planned(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  w: {type: f32, shape: [R, C], role: in, boundary: zero}\n"
      "  u: {type: f32, shape: [C, R], role: in}\n"
      "  m: {type: f32, shape: [R], role: temp}\n"
      "  e: {type: f32, shape: [R, C], role: temp}\n"
      "  s: {type: f32, shape: [R], role: temp}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  m[r] = max(c in 0..C: x[r, c])\n"
      "  e[r, c] = exp(x[r, c] - m[r]) + w[r, c] + u[c, r] + w[r, C - 1 - c]\n"
      "  s[r] = sum(c in 0..C: e[r, c])\n"
      "  y[r, c] = e[r, c] / s[r] + x[r, c]\n");
  ASSERT_EQ(spec.schedule.row_groups.size(), 1u);
  const std::vector<StreamChoice>& c = spec.schedule.streams;
  EXPECT_EQ(c[1].prefetch, (std::set<int>{id(spec, "x")}));
  EXPECT_TRUE(c[1].prefetch_rows.empty());  // e is row-local: it does not stream by rows
  EXPECT_EQ(c[3].prefetch, (std::set<int>{id(spec, "e"), id(spec, "x")}));
  EXPECT_EQ(c[3].prefetch_rows, (std::set<int>{id(spec, "x")}));  // e is row-local
  // Statements that do not stream prefetch nothing.
  EXPECT_TRUE(c[0].prefetch.empty());
  EXPECT_TRUE(c[2].prefetch.empty());
  EXPECT_EQ(kStreamPrefetchBytes % kStreamLineBytes, 0);
}

TEST(Streaming, TheLastReaderOfARowPrefetchesTheNextRow) {
  // In the softmax-like group, x is read by statements 0 and 1: statement 1, the last, prefetches
  // its next row along c. Nothing else: y is written, m, e and s are row-local, and statement 4
  // is outside the group.
  const Spec spec = planned(kSoftmaxLike, kSoftmaxCompute);
  const std::vector<StreamChoice>& c = spec.schedule.streams;
  const int c_var = 1;  // e[r, c]: output variable 1
  EXPECT_EQ(c[1].next_rows, (std::map<int, int>{{id(spec, "x"), c_var}}));
  for (size_t k : {0u, 2u, 3u, 4u, 5u}) EXPECT_TRUE(c[k].next_rows.empty()) << "stmt " << k;
}

TEST(Streaming, NextRowsAlongAReductionAndNotForOtherReads) {
  // The last reader of x is a reduction: it prefetches along its reduction variable k. w is read
  // at another row (w[0, c]), u across rows (u[c, r]), b under a boundary rule, v is of rank 1:
  // none of them is prefetched. A group that does not stream (its outputs are of rank 1)
  // prefetches nothing.
  const Spec spec = planned(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  w: {type: f32, shape: [R, C], role: in}\n"
      "  u: {type: f32, shape: [C, R], role: in}\n"
      "  b: {type: f32, shape: [R, C], role: in, boundary: zero}\n"
      "  v: {type: f32, shape: [C], role: in}\n"
      "  m: {type: f32, shape: [R], role: temp}\n"
      "  s: {type: f32, shape: [R], role: temp}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  m[r] = max(c in 0..C: x[r, c])\n"
      "  s[r] = sum(k in 0..C: x[r, k] - m[r])\n"
      "  y[r, c] = s[r] * w[0, c] + u[c, r] + b[r, c + 1] + v[c]\n");
  ASSERT_EQ(spec.schedule.row_groups.size(), 1u);
  const std::vector<StreamChoice>& c = spec.schedule.streams;
  ASSERT_EQ(c[1].next_rows.size(), 1u);
  EXPECT_EQ(c[1].next_rows.begin()->first, id(spec, "x"));
  EXPECT_TRUE(spec.stmts[1].vars[c[1].next_rows.begin()->second].is_reduction);
  EXPECT_TRUE(c[0].next_rows.empty());  // x is read again later
  EXPECT_TRUE(c[2].next_rows.empty());

  const Spec quiet = planned(
      "  x: {type: f32, shape: [R, C], role: in}\n"
      "  m: {type: f32, shape: [R], role: temp}\n"
      "  s: {type: f32, shape: [R], role: out}\n",
      "  m[r] = max(c in 0..C: x[r, c])\n"
      "  s[r] = sum(c in 0..C: x[r, c] - m[r])\n");
  ASSERT_EQ(quiet.schedule.row_groups.size(), 1u);
  for (const StreamChoice& q : quiet.schedule.streams) EXPECT_TRUE(q.next_rows.empty());
}

TEST(Streaming, TheRestOfAContractionHasItsOwnChoice) {
  const Spec spec = planned(
      "  a: {type: f32, shape: [R, C], role: in}\n"
      "  b: {type: f32, shape: [C, C], role: in}\n"
      "  bias: {type: f32, shape: [C], role: in}\n"
      "  y: {type: f32, shape: [R, C], role: out}\n",
      "  y[i, j] = sum(k in 0..C: a[i, k] * b[k, j]) + bias[j]\n");
  ASSERT_TRUE(match_contraction(spec, spec.stmts[0]));
  EXPECT_FALSE(spec.schedule.streams[0].whole);  // it reduces
  ASSERT_EQ(spec.schedule.epilogue_streams.size(), 1u);
  const StreamChoice& e = spec.schedule.epilogue_streams[0];
  EXPECT_TRUE(e.whole);  // y[i, j] = y[i, j] + bias[j]
  EXPECT_EQ(e.tensors, (std::set<int>{id(spec, "bias"), id(spec, "y")}));
  // The printers find the choice of a statement and of an epilogue built from it.
  const auto m = match_contraction(spec, spec.stmts[0]);
  const Statement epi = epilogue_statement(spec, spec.stmts[0], m->reduce);
  EXPECT_EQ(&stream_choice(spec, spec.stmts[0]), &spec.schedule.streams[0]);
  EXPECT_EQ(&stream_choice(spec, epi), &e);
}

TEST(Streaming, LowerRunsThePassesInOrder) {
  const Spec spec = load(kSoftmaxLike, kSoftmaxCompute);
  EXPECT_FALSE(spec.schedule.streaming_done);
  const Spec lowered = lower(spec, [](Fn) { return true; });
  EXPECT_TRUE(lowered.schedule.row_fusion_done);
  EXPECT_TRUE(lowered.schedule.streaming_done);
  ASSERT_EQ(lowered.schedule.streams.size(), 6u);
  EXPECT_TRUE(lowered.schedule.streams[3].rows);
  EXPECT_FALSE(lowered.schedule.streams[1].rows);
  // A copy of the lowered spec keeps the decisions.
  EXPECT_EQ(clone(lowered).schedule.group_tensors, lowered.schedule.group_tensors);
}

TEST(Streaming, DumpSaysWhatStreams) {
  const Spec spec = lower(load(kSoftmaxLike, kSoftmaxCompute), [](Fn) { return true; });
  const std::string d = dump_streaming(spec);
  EXPECT_NE(d.find("stmt 0 (m[r] = max(c in 0..C: x[r, c])): alone no; by rows no\n"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("stmt 1 (e[r, c] = exp(x[r, c] - m[r])): alone streams, tensors x, m, e, "
                   "prefetch x; by rows no; prefetches the next row of x along c\n"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("stmt 3 (y[r, c] = e[r, c] / s[r]): alone streams, tensors e, s, y, prefetch "
                   "e; by rows streams\n"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("row group stmts 0..3: streams y, tensors x, y\n"), std::string::npos) << d;
}

}  // namespace
}  // namespace sb
