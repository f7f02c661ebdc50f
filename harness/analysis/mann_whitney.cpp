#include "harness/analysis/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace harness {

// Number of arrangements of n1 + n2 distinct values whose first sample has U = k, for every k
// (the classic recurrence f(n1, n2, k) = f(n1 - 1, n2, k - n2) + f(n1, n2 - 1, k), built up
// over n2 with one row per n1). Doubles hold the counts exactly while C(n1 + n2, n1) < 2^53,
// which kExactLimit guarantees.
std::vector<double> u_null_counts(size_t n1, size_t n2) {
  // table[a][k] for the current number of second-sample values b: U = k with a first values.
  std::vector<std::vector<double>> table(n1 + 1);
  for (size_t a = 0; a <= n1; ++a) table[a].assign(1, 1.0);  // b = 0: only U = 0
  for (size_t b = 1; b <= n2; ++b) {
    std::vector<std::vector<double>> next(n1 + 1);
    next[0].assign(1, 1.0);
    for (size_t a = 1; a <= n1; ++a) {
      // The largest value belongs either to the first sample (beats all b values: U - b from
      // (a - 1, b)) or to the second sample (U from (a, b - 1)).
      next[a].assign(a * b + 1, 0.0);
      const auto& with_first = next[a - 1];
      for (size_t k = 0; k < with_first.size(); ++k) next[a][k + b] += with_first[k];
      const auto& with_second = table[a];
      for (size_t k = 0; k < with_second.size(); ++k) next[a][k] += with_second[k];
    }
    table = std::move(next);
  }
  return table[n1];
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& first,
                                 const std::vector<double>& second, MannWhitneyMethod method) {
  if (first.empty() || second.empty()) {
    throw std::invalid_argument("Mann-Whitney U test needs two non-empty samples");
  }
  MannWhitneyResult result;
  result.n1 = first.size();
  result.n2 = second.size();
  const size_t n = result.n1 + result.n2;

  std::vector<std::pair<double, int>> pooled;  // value, sample (0 first, 1 second)
  pooled.reserve(n);
  for (double x : first) pooled.emplace_back(x, 0);
  for (double x : second) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end());

  double rank_sum_first = 0;
  double tie_term = 0;  // sum over tie groups of t^3 - t
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_first += midrank;
    }
    if (t > 1) {
      tie_term += t * t * t - t;
      result.ties = true;
    }
    i = j;
  }
  const double n1 = static_cast<double>(result.n1);
  const double n2 = static_cast<double>(result.n2);
  result.u1 = rank_sum_first - n1 * (n1 + 1) / 2.0;
  result.u2 = n1 * n2 - result.u1;

  if (method == MannWhitneyMethod::automatic && !result.ties && n <= kExactLimit) {
    const std::vector<double> counts = u_null_counts(result.n1, result.n2);
    double total = 0;
    for (double c : counts) total += c;
    // Two-sided: twice the tail beyond the smaller U (the distribution is symmetric).
    const auto u_small = static_cast<size_t>(std::min(result.u1, result.u2));
    double tail = 0;
    for (size_t k = 0; k <= u_small; ++k) tail += counts[k];
    result.exact = true;
    result.p_value = std::min(1.0, 2.0 * tail / total);
    return result;
  }

  const double nn = static_cast<double>(n);
  const double variance = n1 * n2 / 12.0 * ((nn + 1) - tie_term / (nn * (nn - 1)));
  if (variance <= 0) {  // every value tied: no evidence of a difference
    result.p_value = 1;
    return result;
  }
  const double deviation = std::max(0.0, std::abs(result.u1 - n1 * n2 / 2.0) - 0.5);
  result.z = deviation / std::sqrt(variance);
  result.p_value = std::min(1.0, std::erfc(result.z / std::sqrt(2.0)));
  return result;
}

}  // namespace harness
