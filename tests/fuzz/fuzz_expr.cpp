// libFuzzer harness: the input as the `compute` text, parsed by the expression parser directly
// (as statements, and as one shape-like expression), then placed in a fixed spec (f32 inputs
// x[N] and a[M, N], an f64 input d[N], an i32 input g[N] with values in [0, N - 1], and the f32
// output y[N] that the text must write), checked, and emitted by the cpu, cuda, mojo and mlir
// backends.
// Corpus: tests/fuzz/corpus/expr/ (statements, and the reproducers of issue 19).
#include "frontend/expr_parser.h"
#include "fuzz_common.h"

namespace {

const char* const kHead =
    "name: fuzz\n"
    "doc: fuzzed compute text\n"
    "sizes:\n"
    "  N: {bench: [64], verify: [5]}\n"
    "  M: {bench: [32], verify: [3]}\n"
    "tensors:\n"
    "  x: {type: f32, shape: [N], role: in}\n"
    "  a: {type: f32, shape: [M, N], role: in}\n"
    "  d: {type: f64, shape: [N], role: in}\n"
    "  g: {type: i32, shape: [N], role: in, init: [0, N - 1]}\n"
    "  y: {type: f32, shape: [N], role: out}\n"
    "compute: |\n";

const char* const kTail =
    "variants:\n"
    "  cpu:\n"
    "    - {name: loops, strategy: loops}\n"
    "  cuda:\n"
    "    - {name: thread_per_output, strategy: thread_per_output}\n"
    "  mojo:\n"
    "    - {name: loops, strategy: loops}\n"
    "  mlir:\n"
    "    - {name: loops, strategy: loops}\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sb::TextMap map;
  map.file = "fuzz.yaml";
  map.starts.push_back(sb::Loc{"fuzz.yaml", 1, 1});
  (void)sb::parse_statements(text, map);
  (void)sb::parse_expression(text, map);

  // The same text as a block scalar: every line indented by two spaces.
  std::string spec = kHead;
  spec += "  ";
  for (char c : text) {
    spec += c;
    if (c == '\n') spec += "  ";
  }
  spec += "\n";
  spec += kTail;
  sb_fuzz::gen_one(spec);
  return 0;
}
