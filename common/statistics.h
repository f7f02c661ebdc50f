// Descriptive statistics of latency samples. Percentiles use linear interpolation between
// closest ranks (numpy.percentile's default, "linear"): the q-th percentile of n sorted
// samples x is x[k] + f * (x[k+1] - x[k]) with h = q/100 * (n-1), k = floor(h), f = h - k.
#pragma once

#include <cstddef>
#include <vector>

namespace harness {

struct SampleSummary {
  size_t count = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n-1 in the denominator); 0 for n < 2
  double min = 0;
  double p50 = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
  double max = 0;
};

// q in [0, 100]; `sorted` must be ascending and non-empty.
double percentile_sorted(const std::vector<double>& sorted, double q);

// Convenience for unsorted input.
double percentile(std::vector<double> samples, double q);

// All fields; an empty input gives count 0 and zeros elsewhere.
SampleSummary summarize(std::vector<double> samples);

}  // namespace harness
