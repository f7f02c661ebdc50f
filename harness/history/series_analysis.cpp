#include "harness/history/series_analysis.h"

#include <algorithm>

#include "common/statistics.h"

namespace harness {

namespace {

// A change is measured on at most this many commits each side of it, the nearest: its size is
// the local level's, and the Hodges-Lehmann interval sorts every pairwise difference (10,000 of
// them, where whole sides of 1,000 commits would sort a million per change).
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
  const RelativeShift shift = relative_shift(before, after, alpha);
  change.change_pct = shift.change_pct;
  if (shift.shift) {
    change.low_pct = shift.low_pct;
    change.high_pct = shift.high_pct;
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
