#include "harness/history/series_analysis.h"

#include <algorithm>
#include <cmath>

#include "common/statistics.h"

namespace harness {

namespace {

std::vector<double> logarithms(const std::vector<double>& values, size_t begin, size_t end) {
  std::vector<double> out;
  for (size_t i = begin; i < end; ++i) out.push_back(std::log(values[i]));
  return out;
}

// A change is measured on at most this many commits each side of it, the nearest: its size is
// the local level's, and the Hodges-Lehmann interval sorts every pairwise difference (100 x 100,
// where 1,000 x 1,000 took a tenth of a second a change).
constexpr size_t kCommitsEachSide = 100;

SeriesChange describe_change(const std::vector<double>& medians, const ChangePoint& point,
                             size_t low, size_t high, Better better, double alpha) {
  low = std::max(low, point.index > kCommitsEachSide ? point.index - kCommitsEachSide : 0);
  high = std::min(high, point.index + kCommitsEachSide);
  SeriesChange change;
  change.position = point.index;
  change.point = point;
  const std::vector<double> before(medians.begin() + long(low),
                                   medians.begin() + long(point.index));
  const std::vector<double> after(medians.begin() + long(point.index),
                                  medians.begin() + long(high));
  change.median_before = percentile(before, 50);
  change.median_after = percentile(after, 50);
  bool positive = true;
  for (size_t i = low; i < high; ++i) positive = positive && medians[i] > 0;
  if (positive) {
    const auto to_pct = [](double log_shift) { return (std::exp(log_shift) - 1) * 100; };
    const std::vector<double> log_before = logarithms(medians, low, point.index);
    const std::vector<double> log_after = logarithms(medians, point.index, high);
    change.change_pct = to_pct(hodges_lehmann_shift(log_before, log_after));
    if (const auto interval = shift_interval(log_before, log_after, alpha)) {
      change.low_pct = to_pct(interval->low);
      change.high_pct = to_pct(interval->high);
    }
  } else if (change.median_before != 0) {
    change.change_pct = (change.median_after / change.median_before - 1) * 100;
  }
  change.worse = better == Better::lower ? change.change_pct > 0 : change.change_pct < 0;
  return change;
}

}  // namespace

SeriesAnalysis analyse_series(const MetricSeries& series, const ChangePointOptions& options,
                              double alpha) {
  SeriesAnalysis analysis;
  for (const CommitRuns& commit : series.commits) {
    analysis.medians.push_back(percentile(commit.runs, 50));
  }
  const std::vector<ChangePoint> points = change_points(analysis.medians, options);
  for (size_t k = 0; k < points.size(); ++k) {
    const size_t low = k == 0 ? 0 : points[k - 1].index;
    const size_t high = k + 1 == points.size() ? analysis.medians.size() : points[k + 1].index;
    SeriesChange change =
        describe_change(analysis.medians, points[k], low, high, series.key.better, alpha);
    for (size_t i = points[k].index; i < high; ++i)
      change.runs_after += series.commits[i].runs.size();
    analysis.changes.push_back(change);
  }
  return analysis;
}

}  // namespace harness
