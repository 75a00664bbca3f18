// Console reporters: plain records in, text out. Nothing here measures, runs or decides.
#pragma once

#include <string>
#include <vector>

#include "emitter.h"
#include "ir.h"
#include "runner.h"

namespace sb {

// Left-aligned columns separated by two spaces, a header and a rule under it.
std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

// One row per check: kernel, backend, variant, size, inputs, result, max abs err, note (the first
// line of a failure or the skip reason).
std::string format_verify_table(const std::vector<VerifyRecord>& records);

// One row per kernel/backend/variant: checks passed out of run, worst error, result.
std::string format_verify_summary(const std::vector<VerifyRecord>& records);

// The full text of every failed check (at most `limit` of them, then a count of the rest).
std::string format_verify_failures(const std::vector<VerifyRecord>& records, size_t limit = 10);

// "N checks: P passed, F failed, S skipped".
std::string format_verify_totals(const std::vector<VerifyRecord>& records);

// The summary after bench/run, from best_per_size(): kernel, backend, best variant, size, time,
// GB/s, GFLOP/s; then the failed cases and, one line per kernel/backend, the skipped ones.
std::string format_bench_summary(const std::vector<BenchRecord>& best);

// `specbench list`: every spec with its sizes and, per backend, its variants and strategies.
std::string format_spec_list(const std::vector<Spec>& specs);
// Every backend: its file extension and whether it can run here (with the reason when not).
std::string format_backends();
// `specbench list --strategies`: every emitter's strategies with their parameters.
std::string format_strategies();

}  // namespace sb
