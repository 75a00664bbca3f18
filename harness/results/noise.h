// How far a case's figures can be trusted: the spread of its repetitions (CV, a distribution-free
// confidence interval of the median, outliers, two clusters), a rate the machine cannot reach
// (above its limit at a working set beyond the last-level cache), and how loaded the machine was
// while it was timed (load average, CPU time taken by other processes). Plain numbers in, plain
// numbers out: no printing, and nothing here measures a kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb {

// ---------------------------------------------------------------------------------------------
// Spread of one case's repetitions

struct NoiseOptions {
  // The median's confidence interval is at least this level (or the widest interval, min to max,
  // when there are too few repetitions for it).
  double ci_level = 0.95;
  // Noisy when the interval's half-width exceeds this fraction of the median: the median is not
  // known to within compare's default minimum effect (5%).
  double max_ci_half_width = 0.05;
  // A repetition is an outlier when it is more than this factor away from the median (above
  // median * factor or below median / factor).
  double outlier_factor = 1.5;
  // Two clusters: consecutive sorted repetitions at least this factor apart, with at least two
  // repetitions on each side.
  double cluster_gap = 1.25;
  // Fewer repetitions than this: the spread is recorded, no verdict on noise is drawn.
  int min_repetitions = 3;
};

struct Spread {
  int n = 0;          // repetitions
  double median = 0;  // seconds
  double cv = 0;      // sample standard deviation / mean; 0 with fewer than 2
  double ci_low = 0;  // the median's confidence interval (seconds), from order statistics
  double ci_high = 0;
  double ci_level = 0;       // its actual coverage, e.g. 0.9375 for min..max of 5
  int outliers = 0;          // repetitions beyond outlier_factor from the median
  double worst_outlier = 1;  // the largest factor away from the median among them (>= 1)
  bool bimodal = false;      // two clusters (NoiseOptions::cluster_gap)
  int low_cluster = 0;       // repetitions in the faster cluster when bimodal
  bool judged = false;       // n >= min_repetitions: `noisy` means something
  bool noisy = false;
  std::vector<std::string> reasons;  // why noisy, one short phrase each

  double ci_half_width() const;  // (ci_high - ci_low) / 2 / median; 0 without a median
};

// The distribution-free interval [x_(k), x_(n+1-k)] of the sorted sample around the median:
// the largest k with P(Binomial(n, 1/2) < k) <= (1 - level) / 2, so its coverage
// 1 - 2 P(B < k) is at least `level`; k = 1 (min to max) when even that is below the level.
// Returns the 1-based k and sets *coverage. n >= 1.
int median_ci_rank(int n, double level, double* coverage);

// The spread of a sample of times (seconds; may be empty: n = 0, not judged).
Spread assess_spread(const std::vector<double>& samples, const NoiseOptions& opt = {});

// The spread as stored in a results entry's "noise" object (results/README.md).
nlohmann::json spread_json(const Spread& s);

// "noisy: median ±12% (93.8% CI), 1 outlier at 3.1x the median" style text; "" when not noisy.
std::string describe_noise(const Spread& s);

// ---------------------------------------------------------------------------------------------
// Implausible rates

// How far above main memory's rate a kernel whose working set is `working_set` bytes (the
// tensors' compulsory traffic) can run when a benchmark repeats it: the last-level cache
// (`llc_bytes`) serves at most its own size of the working set on each pass, and memory moves
// the rest, so the rate is at most W / (W - LLC) times the memory limit. A victim cache with a
// replacement policy that is not LRU (AMD's L3) keeps part of a stream much larger than itself
// from one pass to the next: on the development VM, relu read twice its rate at 32x the cache
// at a working set 2x the cache, in the same run (README.md, "Suspect figures"). Infinite for a
// working set inside the cache (no bound), 0 when the cache size is unknown.
double cache_lift(double working_set, int64_t llc_bytes);

// The reason a rate cannot be right, or "" when it is plausible: `fraction` of the bounding
// memory limit above 1.1 times the cache_lift of its working set (`llc_bytes`: 0 when unknown,
// then nothing is flagged). `rate_text` and `limit_text` are the figures as shown
// ("1.8e+05 GB/s", "38 GB/s").
std::string suspect_reason(std::optional<double> fraction, double working_set, int64_t llc_bytes,
                           const std::string& rate_text, const std::string& limit_text);
// The same for a compute-bound rate, which no cache explains: `fraction` of the compute limit (the
// better of the sgemm and FMA probes) above 1.1 at any working set.
std::string suspect_compute_reason(std::optional<double> fraction, const std::string& rate_text,
                                   const std::string& limit_text);
inline constexpr double kSuspectFraction = 1.1;

// The size in bytes of one last-level cache as this CPU sees it: the highest-level data or
// unified cache under `sysfs_cpu_cache` (/sys/devices/system/cpu/cpu0/cache); 0 when unknown.
int64_t last_level_cache_bytes(
    const std::string& sysfs_cpu_cache = "/sys/devices/system/cpu/cpu0/cache");
// The same from Google Benchmark's context "caches" array ({level, size, type}); 0 when absent.
int64_t last_level_cache_from_context(const nlohmann::json& context);
// "32768K" / "8M" / "1024" (sysfs size text) in bytes; 0 when unreadable.
int64_t parse_cache_size(const std::string& text);

// ---------------------------------------------------------------------------------------------
// Machine load while timing

struct CpuSnapshot {
  bool ok = false;             // /proc/loadavg and /proc/stat were read
  double load[3] = {0, 0, 0};  // 1, 5 and 15 minute load averages
  int runnable = 0;            // /proc/loadavg's running tasks (includes this one)
  double busy_seconds = 0;     // all CPUs: user, nice, system, irq, softirq (from /proc/stat)
  double steal_seconds = 0;    // time a hypervisor gave to other guests
  double own_cpu_seconds = 0;  // this process, every thread (getrusage)
  double wall_seconds = 0;     // a steady clock
};

// Parsers of the kernel's text, for tests: /proc/loadavg into load[] and runnable; the "cpu"
// line of /proc/stat into busy and steal seconds (`ticks_per_second`: sysconf(_SC_CLK_TCK)).
bool parse_loadavg(const std::string& text, CpuSnapshot& s);
bool parse_proc_stat(const std::string& text, double ticks_per_second, CpuSnapshot& s);

CpuSnapshot take_cpu_snapshot();

struct MachineLoad {
  int cores = 0;
  CpuSnapshot start, end;
  double other_cpu_seconds = 0;  // CPU time of other processes between start and end
  double other_fraction = 0;     // (other + steal) / (wall x cores)
  bool loaded_at_start = false;  // 1-minute load average above the core count
  bool contended = false;        // other_fraction above kContendedFraction
};
inline constexpr double kContendedFraction = 0.10;

// From two snapshots (start.ok and end.ok; else only what is known) on `cores` CPUs.
MachineLoad machine_load(const CpuSnapshot& start, const CpuSnapshot& end, int cores);
// The results context's "machine_load" object (results/README.md).
nlohmann::json machine_load_json(const MachineLoad& m);
// "load average 14.9 is above the 2 cores: ..." before timing; "" when not loaded.
std::string loaded_warning(const CpuSnapshot& start, int cores);

}  // namespace sb
