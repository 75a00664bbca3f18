// Unit tests of the host kernel bodies written once as loop IR (codegen/lower/host_bodies.h):
// what the parallel form of a running scan holds, read from the loop IR itself.
#include <gtest/gtest.h>

#include <string>

#include "lower/host_bodies.h"
#include "lower/running_scans.h"
#include "rc_spec.h"

namespace sb {
namespace {

TEST(HostBodies, ALongScanFoldsAndWalksItsBlocksInParallel) {
  Spec spec = load_rc_spec(rc_tensors({"x", "v"}), "  v[c] = sum(k in 0..c + 1: x[k])\n");
  running_scans(spec);
  const Statement& st = spec.stmts[0];
  const Expr* red = running_scan(spec, st, /*rows=*/false);
  ASSERT_NE(red, nullptr);
  const ScanSplitBodies b = scan_split_bodies(spec, st, *red);
  int parallel = 0, serial = 0, folds = 0, walks = 0, offsets = 0;
  loops::for_each_stmt(b.two_pass, [&](const loops::Stmt& s) {
    parallel += s.kind == loops::StmtKind::For && s.for_kind == loops::ForKind::Parallel;
    serial += s.kind == loops::StmtKind::For && s.for_kind == loops::ForKind::Serial;
    folds += s.kind == loops::StmtKind::FoldRange && s.spec == red;
    walks += s.kind == loops::StmtKind::ScanWalk && s.spec == red;
    offsets += s.kind == loops::StmtKind::Fold && s.name == "sb_off";
  });
  EXPECT_EQ(parallel, 2);  // the folds, then the walks
  EXPECT_EQ(serial, 1);    // the offsets, in order
  EXPECT_EQ(folds, 1);
  EXPECT_EQ(walks, 1);
  EXPECT_EQ(offsets, 1);
  const std::string head = loops::dump(b.head);
  EXPECT_NE(head.find("let sb_n: int = extent<v, 0>"), std::string::npos) << head;
  EXPECT_NE(head.find("let sb_lo: int = spec<0>"), std::string::npos) << head;
  const std::string d = loops::dump(b.two_pass);
  EXPECT_NE(d.find("let sb_nb: int = " + std::to_string(kScanBlocks)), std::string::npos) << d;
  EXPECT_NE(d.find("alloc sb_from: int[" + std::to_string(kScanBlocks) + "] stack_local"),
            std::string::npos)
      << d;
  // A block's new terms start where the range's end stands after the output before it.
  EXPECT_NE(d.find("if (sb_i0 > 0) {\n        let index<c>: int = (sb_i0 - 1)\n"
                   "        sb_k0 = max(sb_k0, spec<c + 1>)"),
            std::string::npos)
      << d;
  EXPECT_NE(
      d.find("sb_fold = fold(sb_fold, terms of sum(k in 0..(c + 1): x[k]) in [sb_k0, sb_k1))"),
      std::string::npos)
      << d;
  // The walk starts each block at its offset and at its first new term.
  EXPECT_NE(d.find("let sb_k0: int = sb_from[sb_b]\n      var sb_run: f32 = sb_part[sb_b]\n"
                   "      var index<k>: int = sb_k0\n      var index<c>: int = sb_i0\n"
                   "      scan_walk sum(k in 0..(c + 1): x[k]) to sb_i1 from sb_run"),
            std::string::npos)
      << d;
}

}  // namespace
}  // namespace sb
