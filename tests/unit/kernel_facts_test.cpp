// ptxas's report parsed into kernel facts (harness/build/kernel_facts.h), on reports captured
// from nvcc 13.0 (`nvcc -Xptxas -v`, sm_80 and sm_90): tests/unit/ptxas/fixture.ptxas.txt is the
// report of fixture.cu (a kernel that spills, one with static shared memory, one with a stack
// frame that calls a function kept apart), softmax.ptxas.txt that of generated/softmax/cuda,
// compiler warnings included.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "build/kernel_facts.h"

namespace sb {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(SB_TESTS_DIR) + "/unit/ptxas/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const KernelFacts* find(const std::vector<KernelFacts>& fs, const std::string& sym, int arch) {
  for (const KernelFacts& f : fs)
    if (f.symbol == sym && f.arch == arch) return &f;
  return nullptr;
}

TEST(PtxasReport, FixtureKernels) {
  auto r = parse_ptxas_report(fixture("fixture.ptxas.txt"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& fs = r.value();
  ASSERT_EQ(fs.size(), 6u);  // three kernels, two architectures; fx_helper is no entry

  // Registers capped at 32 by __launch_bounds__(1024, 2): spills, and a stack frame for them.
  const KernelFacts* s80 = find(fs, "fx_spills", 80);
  ASSERT_NE(s80, nullptr);
  EXPECT_EQ(s80->registers, 32);
  EXPECT_EQ(s80->stack_bytes, 528);
  EXPECT_EQ(s80->spill_store_bytes, 988);
  EXPECT_EQ(s80->spill_load_bytes, 996);
  EXPECT_EQ(s80->shared_bytes, 0);
  EXPECT_EQ(s80->barriers, 0);
  const KernelFacts* s90 = find(fs, "fx_spills", 90);
  ASSERT_NE(s90, nullptr);
  EXPECT_EQ(s90->stack_bytes, 520);
  EXPECT_EQ(s90->spill_store_bytes, 992);
  EXPECT_EQ(s90->spill_load_bytes, 1000);

  // 4 KiB of static shared memory and one barrier (sm_90's line has no cmem part).
  for (int arch : {80, 90}) {
    const KernelFacts* sh = find(fs, "_Z9fx_sharedIfEvPKT_PS0_", arch);
    ASSERT_NE(sh, nullptr) << arch;
    EXPECT_EQ(sh->registers, 12);
    EXPECT_EQ(sh->shared_bytes, 4096);
    EXPECT_EQ(sh->barriers, 1);
    EXPECT_EQ(sh->stack_bytes, 0);
  }

  // The entry's own stack frame; the properties of fx_helper (0 bytes) that follow it are not
  // the entry's.
  const KernelFacts* st = find(fs, "_Z8fx_stackPKfPfi", 80);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->registers, 31);
  EXPECT_EQ(st->stack_bytes, 192);
  EXPECT_EQ(st->spill_store_bytes, 0);
  EXPECT_EQ(fs[0].symbol, "_Z8fx_stackPKfPfi");  // report order
  EXPECT_EQ(fs[0].arch, 80);
}

TEST(PtxasReport, GeneratedSoftmax) {
  auto r = parse_ptxas_report(fixture("softmax.ptxas.txt"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& fs = r.value();
  EXPECT_EQ(fs.size(), 24u);  // 12 kernels x 2 architectures
  const KernelFacts* b = find(fs, "_Z24sb_block_per_row_s0_rowsPKfPfll", 80);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->registers, 40);
  EXPECT_EQ(b->shared_bytes, 32);
  EXPECT_EQ(b->barriers, 1);
  // A generated kernel that spills on sm_90 and not on sm_80.
  const KernelFacts* w90 = find(fs, "_Z30sb_warp_per_row_s0_rows_globalPKfPfll", 90);
  ASSERT_NE(w90, nullptr);
  EXPECT_EQ(w90->registers, 32);
  EXPECT_EQ(w90->stack_bytes, 8);
  EXPECT_EQ(w90->spill_store_bytes, 8);
  EXPECT_EQ(w90->spill_load_bytes, 8);
  const KernelFacts* w80 = find(fs, "_Z30sb_warp_per_row_s0_rows_globalPKfPfll", 80);
  ASSERT_NE(w80, nullptr);
  EXPECT_EQ(w80->registers, 37);
  EXPECT_EQ(w80->spill_store_bytes, 0);
}

TEST(PtxasReport, StrippedOutputKeepsTheWarnings) {
  const std::string text = fixture("softmax.ptxas.txt");
  const std::string s = strip_ptxas_report(text);
  EXPECT_NE(s.find("warning #550-D: variable \"rowmax\" was set but never used"), std::string::npos);
  EXPECT_EQ(s.find("ptxas"), std::string::npos);
  EXPECT_EQ(s.find("bytes stack frame"), std::string::npos);
  EXPECT_EQ(strip_ptxas_report("a warning\n"), "a warning\n");
  EXPECT_TRUE(parse_ptxas_report(s).ok());
  EXPECT_TRUE(parse_ptxas_report(s).value().empty());
}

TEST(PtxasReport, MalformedReportsAreErrors) {
  const std::string entry = "ptxas info    : Compiling entry function 'k' for 'sm_80'\n";
  const std::string props =
      "ptxas info    : Function properties for k\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
  const std::string used = "ptxas info    : Used 10 registers, 352 bytes cmem[0]\n";
  // The well-formed one, without barriers or smem on its Used line.
  auto ok = parse_ptxas_report(entry + props + used);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  ASSERT_EQ(ok.value().size(), 1u);
  EXPECT_EQ(ok.value()[0].registers, 10);
  EXPECT_EQ(ok.value()[0].shared_bytes, 0);
  EXPECT_EQ(ok.value()[0].barriers, 0);

  auto fails = [](const std::string& text, const std::string& says) {
    auto r = parse_ptxas_report(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
  };
  fails(used, "outside an entry function");
  fails(entry + props, "has no \"Used N registers\" line");
  fails(entry + props + entry, "has no \"Used N registers\" line");
  fails(entry + props + used + entry + props + used, "reported twice for sm_80");
  fails(entry + props + used + used, "outside an entry function");
  fails(entry + "ptxas info    : Function properties for k\n", "ends under");
  fails(entry + "ptxas info    : Function properties for k\n" + used, "expected the stack frame");
  fails(entry + props + "ptxas info    : Used x registers\n", "no number before 'registers'");
  fails("ptxas info    : Compiling entry function 'k' for 'compute_80'\n",
        "cannot read the entry function and architecture");
  fails("ptxas info    : Compiling entry function 'k'\n",
        "cannot read the entry function and architecture");
  fails(entry + "ptxas info    : Function properties for k\n    8 bytes stack frame\n" + used,
        "cannot read the stack frame and spills");
  // sm_90a is sm_90's kernel facts.
  auto a = parse_ptxas_report("ptxas info    : Compiling entry function 'k' for 'sm_90a'\n" + used);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.value()[0].arch, 90);
}

TEST(KernelNames, Readable) {
  EXPECT_EQ(readable_kernel_name("_Z23sb_thread_per_output_s0PKfPfll"), "sb_thread_per_output_s0");
  EXPECT_EQ(readable_kernel_name("_Z9fx_sharedIfEvPKT_PS0_"), "fx_shared<…>");
  EXPECT_EQ(readable_kernel_name("_ZL6staticPf"), "static");
  EXPECT_EQ(readable_kernel_name("fx_spills"), "fx_spills");
  EXPECT_EQ(readable_kernel_name(
                "_ZN3cub21CUB_300001_SM_800_9006detail6reduce18DeviceReduceKernelINS2_10policy_"
                "hubIfy13sb_op_sum_f32E10Policy1000EN6thrust27THRUST_300001_SM_800_900_NS17count"
                "ing_iteratorIlNS9_11use_defaultESB_SB_EEyS5_f14sb_cub_s0_termEEvT0_PT3_T1_NS0_13"
                "GridEvenShareISH_EET2_T4_"),
            "cub::CUB_300001_SM_800_900::detail::reduce::DeviceReduceKernel<…>");
  EXPECT_EQ(readable_kernel_name("_ZN3cub21CUB_300001_SM_800_9006detail11EmptyKernelIvEEvv"),
            "cub::CUB_300001_SM_800_900::detail::EmptyKernel<…>");
  // What it cannot read stays as it is.
  EXPECT_EQ(readable_kernel_name("_Z99short"), "_Z99short");
  EXPECT_EQ(readable_kernel_name("_Z"), "_Z");
  EXPECT_EQ(readable_kernel_name("_ZNSt3foo"), "_ZNSt3foo");
}

TEST(KernelFactsFile, RoundTripAndValidation) {
  auto r = parse_ptxas_report(fixture("fixture.ptxas.txt"));
  ASSERT_TRUE(r.ok());
  const std::string hash = "fnv1a64 0123456789abcdef 4096";
  const std::string text = facts_file_text(r.value(), "", hash);
  std::string error = "x";
  auto back = read_facts_file_text(text, hash, error);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), r.value());
  EXPECT_EQ(error, "");

  // A recorded report error comes back.
  auto with_error = read_facts_file_text(facts_file_text({}, "cannot read", hash), hash, error);
  ASSERT_TRUE(with_error.ok());
  EXPECT_EQ(error, "cannot read");

  auto rejects = [&](const std::string& t, const std::string& says) {
    std::string e;
    auto x = read_facts_file_text(t, hash, e);
    ASSERT_FALSE(x.ok()) << t;
    EXPECT_NE(x.error().message.find(says), std::string::npos) << x.error().message;
  };
  {
    std::string e;
    auto other = read_facts_file_text(text, "fnv1a64 0123456789abcdee 4096", e);
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.error().message.find("another module"), std::string::npos);
  }
  rejects("", "not a JSON object");
  rejects(text.substr(0, text.size() / 2), "not a JSON object");
  rejects("{}", "not a version-1");
  auto edited = [&text](const std::string& from, const std::string& to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  rejects(edited("\"registers\": 31", "\"registers\": -1"), "kernel 0 is malformed");
  rejects(edited("\"symbol\": \"_Z8fx_stackPKfPfi\"", "\"symbol\": 7"), "kernel 0 is malformed");
  rejects(edited("\"arch\": 80", "\"arch\": 0"), "kernel 0 is malformed");
  rejects(edited("\"kernels\": [", "\"kernelz\": ["), "no 'kernels' list");
}

}  // namespace
}  // namespace sb
