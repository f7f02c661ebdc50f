#include "harness/analysis/shift_interval.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/statistics.h"
#include "harness/analysis/mann_whitney.h"

namespace harness {
namespace {

std::vector<double> sorted_differences(const std::vector<double>& base,
                                       const std::vector<double>& candidate) {
  if (base.empty() || candidate.empty()) {
    throw std::invalid_argument("a shift needs runs on both sides");
  }
  std::vector<double> differences;
  differences.reserve(base.size() * candidate.size());
  for (double y : candidate) {
    for (double x : base) differences.push_back(y - x);
  }
  std::sort(differences.begin(), differences.end());
  return differences;
}

// The standard normal quantile for an upper tail `tail` in (0, 0.5], by bisection on erfc: the
// gate asks for a handful per comparison, so plain and exact to 1e-12 beats a rational fit.
double normal_upper_quantile(double tail) {
  double low = 0, high = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (low + high) / 2;
    if (0.5 * std::erfc(mid / std::sqrt(2.0)) > tail) {
      low = mid;
    } else {
      high = mid;
    }
  }
  return (low + high) / 2;
}

struct CriticalU {
  long long c = -1;  // the largest U with P(U <= c) <= alpha / 2; -1 when none
  double confidence = 0;
  bool exact = false;
};

CriticalU critical_u(size_t n1, size_t n2, double alpha) {
  CriticalU critical;
  if (n1 + n2 <= kExactLimit) {
    const std::vector<double> counts = u_null_counts(n1, n2);
    double total = 0;
    for (double count : counts) total += count;
    double tail = 0;
    for (size_t k = 0; k < counts.size(); ++k) {
      if ((tail + counts[k]) / total > alpha / 2) break;
      tail += counts[k];
      critical.c = static_cast<long long>(k);
    }
    critical.exact = true;
    critical.confidence = 1 - 2 * tail / total;
    return critical;
  }
  const double m = static_cast<double>(n1) * static_cast<double>(n2);
  const double sigma = std::sqrt(m * static_cast<double>(n1 + n2 + 1) / 12.0);
  critical.c = static_cast<long long>(std::floor(m / 2 - normal_upper_quantile(alpha / 2) * sigma));
  critical.confidence = 1 - alpha;
  return critical;
}

double median_of_sorted(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

bool all_positive(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return v > 0; });
}

std::vector<double> logarithms(const std::vector<double>& values) {
  std::vector<double> logs;
  logs.reserve(values.size());
  for (double v : values) logs.push_back(std::log(v));
  return logs;
}

}  // namespace

double hodges_lehmann_shift(const std::vector<double>& base, const std::vector<double>& candidate) {
  return median_of_sorted(sorted_differences(base, candidate));
}

std::optional<ShiftInterval> shift_interval(const std::vector<double>& base,
                                            const std::vector<double>& candidate, double alpha) {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("alpha must lie in (0, 1)");
  const CriticalU critical = critical_u(base.size(), candidate.size(), alpha);
  if (critical.c < 0) return std::nullopt;
  const std::vector<double> differences = sorted_differences(base, candidate);
  const auto k = static_cast<size_t>(critical.c);
  ShiftInterval interval;
  interval.estimate = median_of_sorted(differences);
  interval.low = differences[k];
  interval.high = differences[differences.size() - 1 - k];
  interval.confidence = critical.confidence;
  interval.exact = critical.exact;
  return interval;
}

RelativeShift relative_shift(const std::vector<double>& base, const std::vector<double>& candidate,
                             double alpha) {
  RelativeShift change;
  change.log_scale = all_positive(base) && all_positive(candidate);
  const std::vector<double> x = change.log_scale ? logarithms(base) : base;
  const std::vector<double> y = change.log_scale ? logarithms(candidate) : candidate;
  const double base_median = percentile(base, 50);
  const auto as_pct = [&](double shift) {
    if (change.log_scale) return (std::exp(shift) - 1) * 100;
    return base_median != 0 ? shift / base_median * 100.0 : 0.0;
  };
  change.shift = shift_interval(x, y, alpha);
  change.change_pct = as_pct(change.shift ? change.shift->estimate : hodges_lehmann_shift(x, y));
  if (change.shift) {
    change.low_pct = as_pct(change.shift->low);
    change.high_pct = as_pct(change.shift->high);
  }
  return change;
}

size_t fewest_runs_for_interval(double alpha) {
  for (size_t n = 1;; ++n) {
    if (critical_u(n, n, alpha).c >= 0) return n;
  }
}

}  // namespace harness
