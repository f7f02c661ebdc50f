// A metric judged against a control measured in the same job, as Chromium's performance
// dashboard runs a reference build beside the tested one: each run of the tested build over the
// median of the control's runs at the same commit. The machine's level (a slower phase of a
// shared VM stretches both builds alike) cancels, and what is left is the code's own change.
#pragma once

#include <map>
#include <vector>

#include "harness/history/history_records.h"

namespace harness {

// `tested` with each commit's runs divided by the median of `control`'s runs at that commit
// (by commit index); commits without a control's runs are left out and counted. A series with no
// control at any commit comes back as it was.
MetricSeries against_control(const MetricSeries& tested,
                             const std::map<size_t, std::vector<double>>& control);

}  // namespace harness
