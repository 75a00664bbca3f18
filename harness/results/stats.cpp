#include "results/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "support/diag.h"

namespace sb {

namespace {

// counts[u] = number of arrangements of n1 and n2 distinct values giving U = u, built with the
// recurrence c(n1, n2, u) = c(n1 - 1, n2, u - n2) + c(n1, n2 - 1, u), in doubles (the counts
// exceed 64 bits well before kExactLimit; only their ratios matter).
std::vector<double> u_distribution(int n1, int n2) {
  // table[j][u] for the current i (n1 so far) and j = 0..n2.
  const int umax = n1 * n2;
  std::vector<std::vector<double>> prev(n2 + 1, std::vector<double>(umax + 1, 0.0));
  for (int j = 0; j <= n2; ++j) prev[j][0] = 1;  // i = 0: U = 0 in one way
  for (int i = 1; i <= n1; ++i) {
    std::vector<std::vector<double>> cur(n2 + 1, std::vector<double>(umax + 1, 0.0));
    cur[0][0] = 1;  // j = 0: U = 0
    for (int j = 1; j <= n2; ++j) {
      for (int u = 0; u <= i * j; ++u) {
        // The largest value belongs to the first sample (it beats all j of the second) or to the
        // second (it adds nothing to U).
        double from_a = u >= j ? prev[j][u - j] : 0.0;
        cur[j][u] = from_a + cur[j - 1][u];
      }
    }
    prev = std::move(cur);
  }
  return prev[n2];
}

}  // namespace

double median(std::vector<double> v) {
  SB_ASSERT(!v.empty(), "median of an empty sample");
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b,
                           bool exact_allowed) {
  SB_ASSERT(!a.empty() && !b.empty(), "Mann-Whitney U of an empty sample");
  const size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  std::vector<std::pair<double, int>> all;  // value, sample (0: a, 1: b)
  for (double x : a) all.push_back({x, 0});
  for (double x : b) all.push_back({x, 1});
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // Average ranks (1-based) over ties; tie_term = sum of t^3 - t over groups of t tied values.
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && all[j].first == all[i].first) ++j;
    double t = static_cast<double>(j - i);
    double avg = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += avg;
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  MannWhitney r;
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2);
  r.u = rank_sum_a - dn1 * (dn1 + 1) / 2;

  if (exact_allowed && !ties && static_cast<int>(n) <= kExactLimit) {
    std::vector<double> c = u_distribution(static_cast<int>(n1), static_cast<int>(n2));
    double total = std::accumulate(c.begin(), c.end(), 0.0);
    long u = std::lround(r.u);
    double le = 0, ge = 0;
    for (long k = 0; k < static_cast<long>(c.size()); ++k) {
      if (k <= u) le += c[k];
      if (k >= u) ge += c[k];
    }
    r.p = std::min(1.0, 2 * std::min(le, ge) / total);
    r.exact = true;
    return r;
  }
  const double dn = static_cast<double>(n);
  double mu = dn1 * dn2 / 2;
  double var = dn1 * dn2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (var <= 0) {
    r.p = 1;
    return r;
  }
  double z = std::max(0.0, std::fabs(r.u - mu) - 0.5) / std::sqrt(var);
  r.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

double min_p_value(int n1, int n2) {
  if (n1 <= 0 || n2 <= 0) return 1;
  // C(n1 + n2, n1) in log space: lgamma keeps it finite for any size.
  double log_c = std::lgamma(n1 + n2 + 1.0) - std::lgamma(n1 + 1.0) - std::lgamma(n2 + 1.0);
  return std::min(1.0, 2 * std::exp(-log_c));
}

}  // namespace sb
