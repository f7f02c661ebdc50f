// One metric's trend over commits as a standalone SVG: every run's value as a point, the line of
// the commits' medians, each level between change points as its median and a p10-p90 band, the
// change points marked and labelled with their commit and change, commits labelled on the axis.
#pragma once

#include <string>

#include "harness/history/series_analysis.h"

namespace harness {

std::string trend_chart_svg(const History& history, const MetricSeries& series,
                            const SeriesAnalysis& analysis);

}  // namespace harness
