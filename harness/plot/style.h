// What the figure kinds share: series colours, axis tics at the swept values, and grouping
// of a sweep's points by every coordinate except the one on the x axis.
#pragma once

#include <string>
#include <vector>

#include "harness/results/report_samples.h"

namespace harness {

// A colour-blind-safe cycle (Okabe-Ito), as a gnuplot colour spec: rgb "#rrggbb".
std::string series_color(size_t index);

// "set xtics (...)" at exactly these values (sorted, deduplicated), labelled as written.
std::string xtics_at(const std::vector<double>& values);

// Number text for data files: shortest round-trip form.
std::string data_number(double value);

// Points sharing every coordinate but `axis`, in sweep order.
struct PointGroup {
  std::string label;  // the other coordinates ("default" when none)
  std::vector<const PointSamples*> points;
};
std::vector<PointGroup> group_points_except(const ResultSamples& samples, const std::string& axis);

// "Experiment: " prefix for titles.
std::string experiment_title(const ResultSamples& samples);

}  // namespace harness
