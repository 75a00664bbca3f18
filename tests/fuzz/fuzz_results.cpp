// libFuzzer harness of the results reader (harness/results/history.h): any bytes given to
// parse_results are read back or rejected with an error naming the file, never a crash, a hang
// or an unbounded allocation; what is read back can be compared and turned into report data (the
// paths `compare` and `report` take). Seeds in corpus/results/: small valid results files and
// the reproducers of issue 19 (a context nesting 149,000 arrays; a run of NUL bytes, as read
// from /dev/zero).
#include <cstddef>
#include <cstdint>
#include <string>

#include "results/history.h"
#include "results/history_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > sb::kMaxResultsBytes) return 0;  // load_results refuses these before parsing
  const std::string text(reinterpret_cast<const char*>(data), size);
  sb::Result<sb::StoredRun> run = sb::parse_results(text, "fuzz.json");
  if (!run.ok()) {
    SB_ASSERT(run.error().loc.file == "fuzz.json", "a results error must name the file");
    return 0;
  }
  sb::Comparison c = sb::compare_runs(run.value(), run.value(), {});
  (void)sb::format_comparison(c);
  (void)sb::comparison_json(c).dump(2);
  (void)sb::report_data({run.value()}, {}).dump(-1, ' ', false,
                                                 nlohmann::json::error_handler_t::replace);
  return 0;
}
