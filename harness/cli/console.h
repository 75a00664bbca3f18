// Console reporters: plain records in, text out. Nothing here measures, runs or decides.
#pragma once

#include <string>
#include <vector>

#include "backends/emitter.h"
#include "ir/ir.h"
#include "run/runner.h"

namespace sb {

// Left-aligned columns separated by two spaces, a header and a rule under it.
// `s` as the text of one Markdown table cell: '|' escaped, line breaks as spaces.
std::string md_cell(const std::string& s);

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

// The global-memory traffic of the records that carry it (one per simulated variant), with the
// spec's implied traffic and the ratio to the kernel's first (naive) variant; "" when none do.
std::string format_traffic_table(const std::vector<VerifyRecord>& records);

// `build --facts`: one row per kernel and architecture of the GPU modules: kernel, backend,
// variant, function, arch, registers, static shared memory, stack frame, spill stores/loads,
// block size and theoretical occupancy (with what limits it), then a legend; "" when no row.
std::string format_kernel_facts(const std::vector<KernelFactRow>& rows);
// One line about those rows for `build` without --facts: kernels, spills, low occupancy.
std::string format_kernel_facts_line(const std::vector<KernelFactRow>& rows);

// The machine probes and the limits taken from them, one line each.
std::string format_probes(const ProbeResults& probes, const MachineLimits& limits);

// The summary after bench/run: the probes and limits, then one row per kernel/backend/size from
// report.summary: kernel, size, backend, best variant, time, bound, the bound's rate (GB/s or
// GFLOP/s), % of the limit, x vs naive, x vs vendor, and a note on what those mean; then the
// failed cases and, one line per kernel/backend, the skipped ones.
std::string format_bench_summary(const BenchReport& report);

// The same summary as a Markdown document (written beside the results JSON); `results_file`
// names the JSON file it accompanies.
std::string format_bench_summary_markdown(const BenchReport& report,
                                          const std::string& results_file);

// `specbench list`: every spec with its sizes and, per backend, its variants and strategies.
std::string format_spec_list(const std::vector<Spec>& specs);
// Every backend: its file extension and whether it can run here (with the reason when not).
std::string format_backends();
// `specbench list --strategies`: every emitter's strategies with their parameters.
std::string format_strategies();

}  // namespace sb
