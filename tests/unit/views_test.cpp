// Views (Tensor::view_of): the loader's resolution of a view to its base, the host tensors the
// harness makes for them, the base pointer a runtime passes for a view, the bytes a spec with
// views moves (a view's reads are its base's bytes, counted once), and the outputs verify
// compares when an output is written through a view.
#include <gtest/gtest.h>

#include <string>

#include "driver.h"
#include "lower/fuse_attention.h"
#include "lower/row_fusion.h"
#include "run/buffers.h"
#include "run/metrics.h"
#include "run/runner.h"
#include "run/runtime.h"

namespace sb {
namespace {

// tests/golden/specs/views.yaml: x [N, M] with views flat [N * M] (of x), other [M, N] (of
// flat, so of x) and mat [N, M] (of other); cube f64 [N, 2, M] with rows [N * 2, M]; ids i64 [K]
// with idv [K, 1]; outputs sq [N, M], re [M, N], rs f64 [N * 2], g [K].
void load_views(Spec* out) {
  Result<Spec> r = load_and_check(std::string(SB_TESTS_DIR) + "/golden/specs/views.yaml");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  *out = std::move(r.value());
}

int tensor(const Spec& s, const std::string& name) {
  const int t = s.find_tensor(name);
  EXPECT_GE(t, 0) << name;
  return t;
}

TEST(Views, AViewOfAViewNamesTheFirstBaseAndTakesItsTypeRoleAndRange) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load_views(&s));
  EXPECT_EQ(s.tensors[tensor(s, "x")].view_of, -1);
  EXPECT_EQ(s.tensors[tensor(s, "flat")].view_of, tensor(s, "x"));
  EXPECT_EQ(s.tensors[tensor(s, "other")].view_of, tensor(s, "x"));
  EXPECT_EQ(s.tensors[tensor(s, "mat")].view_of, tensor(s, "x"));
  const Tensor& rows = s.tensors[tensor(s, "rows")];
  EXPECT_EQ(rows.type, DType::F64);
  EXPECT_EQ(rows.role, Role::In);
  EXPECT_EQ(rows.shape.size(), 2u);
  const Tensor& idv = s.tensors[tensor(s, "idv")];
  EXPECT_EQ(idv.type, DType::I64);
  ASSERT_NE(idv.init_hi_expr, nullptr);  // the gathered range, for the bounds proof
  EXPECT_EQ(to_string(*idv.init_hi_expr, s, nullptr), "N - 1");
}

TEST(Views, HostTensorsOfAViewCopyTheBaseAndRuntimesPassTheBasePointer) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load_views(&s));
  const SizePoint p = {3, 4, 6};  // N, M, K
  HostTensors h = make_host_tensors(s, p, InputKind::Random, 7);
  const int x = tensor(s, "x"), other = tensor(s, "other"), ids = tensor(s, "ids");
  const int idv = tensor(s, "idv");
  EXPECT_EQ(h[x].alias, -1);
  EXPECT_EQ(h[other].alias, x);
  EXPECT_EQ(h[other].elements, 12);
  EXPECT_EQ(h[other].bytes, h[x].bytes);  // the reference reads the base's values
  EXPECT_EQ(h[idv].bytes, h[ids].bytes);

  DeviceTensors dev;
  dev.ptrs.assign(h.size(), nullptr);
  for (size_t t = 0; t < h.size(); ++t)
    if (h[t].alias < 0) dev.ptrs[t] = h[t].data();
  dev.link_views(h);
  EXPECT_EQ(dev.ptrs[other], dev.ptrs[x]);
  EXPECT_EQ(dev.ptrs[idv], dev.ptrs[ids]);
  EXPECT_TRUE(dev.owns(x));
  EXPECT_FALSE(dev.owns(other));
  EXPECT_FALSE(dev.owns(tensor(s, "rows")));
}

TEST(Views, AViewsReadsMoveItsBasesBytesOnce) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load_views(&s));
  const int64_t N = 17, M = 5, K = 40;
  // x (read as x, flat, other and mat), cube (as rows), ids (as ids and idv), fid: once each;
  // then the outputs sq, re, rs (f64), g and fg.
  const int64_t in = N * M * 4 + N * 2 * M * 8 + K * 8 + K * 8;
  const int64_t out = N * M * 4 + M * N * 4 + N * 2 * 8 + K * 4 + K * 4;
  EXPECT_EQ(bytes_moved(s, {N, M, K}), in + out);
}

// tests/golden/specs/output_views.yaml: outputs y [B, T, O] written as yrows [B * T, O], s [B, T]
// written as sflat [B * T] and read back as sflat, q [B * T], z [T, B] written as zt [B, T], and
// u [B, T] written as u beside uflat, a view no statement names.
void load_output_views(Spec* out) {
  Result<Spec> r = load_and_check(std::string(SB_TESTS_DIR) + "/golden/specs/output_views.yaml");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  *out = std::move(r.value());
}

TEST(Views, AViewOfAnOutputIsAnOutputThatVerifyComparesWhereAStatementWritesIt) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load_output_views(&s));
  const int y = tensor(s, "y"), yrows = tensor(s, "yrows");
  EXPECT_EQ(s.tensors[yrows].view_of, y);
  EXPECT_EQ(s.tensors[yrows].role, Role::Out);
  EXPECT_EQ(s.tensors[tensor(s, "uflat")].view_of, tensor(s, "u"));
  // Each storage once, under the name written: never y, s, z (written through views) or uflat.
  const std::vector<int> want = {yrows, tensor(s, "sflat"), tensor(s, "q"), tensor(s, "zt"),
                                 tensor(s, "u")};
  EXPECT_EQ(out_tensors(s), want);
}

TEST(Views, AnOutputsViewGetsTheOutputsBufferAndItsBytesCountOnce) {
  Spec s;
  ASSERT_NO_FATAL_FAILURE(load_output_views(&s));
  const int64_t B = 3, T = 5, C = 9, O = 10;
  const SizePoint p = {B, T, C, O};
  HostTensors h = make_host_tensors(s, p, InputKind::Random, 3);
  const int y = tensor(s, "y"), yrows = tensor(s, "yrows");
  EXPECT_EQ(h[yrows].alias, y);
  EXPECT_EQ(h[yrows].elements, B * T * O);
  DeviceTensors dev;
  dev.ptrs.assign(h.size(), nullptr);
  for (size_t t = 0; t < h.size(); ++t)
    if (h[t].alias < 0) dev.ptrs[t] = h[t].data();
  dev.link_views(h);
  EXPECT_EQ(dev.ptrs[yrows], dev.ptrs[y]);
  EXPECT_FALSE(dev.owns(yrows));
  // x and w read; y, s, q, z and u written: the views add nothing.
  const int64_t in = B * T * C * 4 + O * C * 4;
  const int64_t out = B * T * O * 4 + B * T * 4 * 4;
  EXPECT_EQ(bytes_moved(s, p), in + out);
}

// tests/golden/specs/storage_views.yaml: a temp h [B, T, C] read as hrows [B * T, C]; row sums s
// read back as sbt [B, T]; an output g [B * T] read back as gbt [B, T].
TEST(Views, AStorageReadThroughAnotherNameLeavesEveryStatementUnfused) {
  Result<Spec> r = load_and_check(std::string(SB_TESTS_DIR) + "/golden/specs/storage_views.yaml");
  ASSERT_TRUE(r.ok()) << format_error(r.error());
  Spec& s = r.value();
  EXPECT_EQ(s.tensors[tensor(s, "hrows")].role, Role::Temp);
  EXPECT_EQ(storage_of(s, tensor(s, "sbt")), tensor(s, "s"));
  EXPECT_EQ(storage_of(s, tensor(s, "s")), tensor(s, "s"));
  EXPECT_TRUE(reads_across_names(s));
  row_fusion(s);
  fuse_attention(s);
  EXPECT_TRUE(s.schedule.row_groups.empty());
  EXPECT_TRUE(s.schedule.attention_groups.empty());
  EXPECT_NE(dump_row_fusion(s).find("read through another name"), std::string::npos);
  // Views of inputs, and outputs written through a view and read back under that name, do not
  // count.
  Spec o;
  ASSERT_NO_FATAL_FAILURE(load_output_views(&o));
  EXPECT_FALSE(reads_across_names(o));
  Spec v;
  ASSERT_NO_FATAL_FAILURE(load_views(&v));
  EXPECT_FALSE(reads_across_names(v));
}

}  // namespace
}  // namespace sb
