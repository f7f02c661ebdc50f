// Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of two independent samples, the test
// `harness compare` uses to tell a real latency change from noise without assuming normality.
//
// Ranks are midranks (ties share the mean of the ranks they span). U of a sample is its rank
// sum minus n(n+1)/2, i.e. the number of pairs in which its value is the larger, ties counting
// one half. The p-value is
//   - exact (the permutation distribution of U, by counting) when there are no ties and
//     n1 + n2 <= kExactLimit;
//   - otherwise the normal approximation with the tie-corrected variance
//       sigma^2 = n1 n2 / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))
//     and a continuity correction of 0.5: z = (|U - n1 n2 / 2| - 0.5) / sigma.
// These are the choices of scipy.stats.mannwhitneyu(method="auto", use_continuity=True),
// except that scipy switches to the normal approximation at 8 samples per side.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace harness {

inline constexpr size_t kExactLimit = 40;

struct MannWhitneyResult {
  size_t n1 = 0;
  size_t n2 = 0;
  double u1 = 0;  // U of the first sample: pairs where it is larger (+ half the ties)
  double u2 = 0;  // n1 n2 - u1
  double z = 0;   // |z| after the continuity correction; 0 when the p-value is exact
  double p_value = 1;
  bool exact = false;
  bool ties = false;
};

enum class MannWhitneyMethod {
  automatic,   // exact when there are no ties and n1 + n2 <= kExactLimit, else normal
  asymptotic,  // always the normal approximation
};

// How many of the C(n1 + n2, n1) arrangements of n1 + n2 distinct values give the first sample
// U = k, for k = 0 .. n1 n2: the exact null distribution. Exact in doubles while
// n1 + n2 <= kExactLimit.
std::vector<double> u_null_counts(size_t n1, size_t n2);

// Both samples must be non-empty (std::invalid_argument otherwise).
MannWhitneyResult mann_whitney_u(const std::vector<double>& first,
                                 const std::vector<double>& second,
                                 MannWhitneyMethod method = MannWhitneyMethod::automatic);

}  // namespace harness
