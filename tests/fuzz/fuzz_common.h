// Shared by the libFuzzer harnesses: the input as a spec file on disk, loaded, checked and
// emitted by every backend it lists, as `specbench gen` does.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "support/diag.h"
#include "driver.h"
#include "backends/emitter.h"

namespace sb_fuzz {

// A per-process scratch file named like a spec (the loader reads only *.yaml files).
inline const std::string& scratch_spec_path() {
  static const std::string path =
      (std::filesystem::temp_directory_path() /
       ("sb_fuzz_" + std::to_string(::getpid()) + ".yaml"))
          .string();
  return path;
}

// Writes `text` as the scratch spec, then loads, checks and emits it. Every outcome but a crash
// is fine: a user error is formatted (as gen prints it) and dropped.
inline void gen_one(const std::string& text) {
  const std::string& path = scratch_spec_path();
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  } else {
    return;
  }
  auto spec = sb::load_and_check(path);
  if (!spec.ok()) {
    (void)sb::format_error(spec.error());
    return;
  }
  for (const sb::Emitter* e : sb::all_emitters()) {
    if (!spec.value().variants.count(e->backend())) continue;
    (void)e->emit(spec.value());
  }
}

}  // namespace sb_fuzz
