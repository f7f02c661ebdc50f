// One metric's history analysed: each commit's median over its runs is the series (a commit is
// the unit: its runs are repeats of one build), its change points found by E-divisive means
// (change_points.h), and each change described by its two sides: the commits between it and the
// change points beside it. Shared by `history check` (the verdict) and `history report` (the
// charts), so that both show the same changes.
#pragma once

#include <optional>
#include <vector>

#include "harness/analysis/shift_interval.h"
#include "harness/history/change_points.h"
#include "harness/history/history_records.h"

namespace harness {

struct SeriesChange {
  size_t position = 0;  // index into MetricSeries::commits of the first commit after the change
  ChangePoint point;
  // Of the commits' medians on each side, at most 100 commits a side, the nearest.
  double median_before = 0, median_after = 0;
  // after / before - 1 in percent: the Hodges-Lehmann shift between the two sides' commit
  // medians (relative_shift: of their logarithms), with its interval at the check's alpha where
  // the sides allow one.
  double change_pct = 0;
  std::optional<double> low_pct, high_pct;
  bool worse = false;     // the direction the metric's Better calls worse
  size_t runs_after = 0;  // the runs of the commits on its after side
};

struct SeriesAnalysis {
  std::vector<double> medians;  // per commit of MetricSeries::commits
  std::vector<SeriesChange> changes;
};

SeriesAnalysis analyse_series(const MetricSeries& series, const ChangePointOptions& options,
                              double alpha);

}  // namespace harness
