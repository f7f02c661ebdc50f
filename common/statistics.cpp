#include "common/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace harness {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of no samples");
  if (q < 0 || q > 100) throw std::invalid_argument("percentile outside [0, 100]");
  const double h = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t k = static_cast<size_t>(std::floor(h));
  if (k + 1 >= sorted.size()) return sorted.back();
  const double f = h - static_cast<double>(k);
  return sorted[k] + f * (sorted[k + 1] - sorted[k]);
}

double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return percentile_sorted(samples, q);
}

SampleSummary summarize(std::vector<double> samples) {
  SampleSummary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  // Sum in ascending order for a sum that does not depend on the order samples arrived in.
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  if (s.count > 1) {
    double squares = 0;
    for (double x : samples) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(s.count - 1));
  }
  s.min = samples.front();
  s.max = samples.back();
  s.p50 = percentile_sorted(samples, 50);
  s.p90 = percentile_sorted(samples, 90);
  s.p95 = percentile_sorted(samples, 95);
  s.p99 = percentile_sorted(samples, 99);
  return s;
}

}  // namespace harness
