// Statistics for comparing two runs: the Mann-Whitney U test over repetitions.
#pragma once

#include <vector>

namespace sb {

struct MannWhitney {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, ties counting 1/2
  double p = 1;        // two-sided p-value
  bool exact = false;  // from the exact distribution (else the normal approximation)
};

// Two-sided Mann-Whitney U test of samples `a` and `b` (each non-empty; SB_ASSERT otherwise).
// Without ties and with n1 + n2 <= kExactLimit, p comes from the exact distribution of U
// (p = 2 min(P(U <= u), P(U >= u)), at most 1). Otherwise from the normal approximation with the
// tie correction of the variance and a continuity correction of 1/2; p = 1 when every value is
// tied.
inline constexpr int kExactLimit = 40;
// `exact_allowed` = false forces the normal approximation (for tests).
MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b,
                           bool exact_allowed = true);

// The smallest two-sided p-value the test can give for samples of sizes n1 and n2, whatever the
// data (complete separation, no ties): 2 / C(n1 + n2, n1), at most 1. When it is not below the
// significance level, no difference can ever be called significant.
double min_p_value(int n1, int n2);

double median(std::vector<double> v);  // of a non-empty sample

}  // namespace sb
