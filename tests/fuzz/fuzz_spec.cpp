// libFuzzer harness: the whole spec text through the loader, every check and every emitter
// that the spec lists (what `specbench gen` does with one spec file).
// Corpus: tests/fuzz/corpus/spec/ (good specs, and the reproducers of issue 19).
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sb_fuzz::gen_one(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
