#include "harness/history/control_ratio.h"

#include "common/statistics.h"

namespace harness {

MetricSeries against_control(const MetricSeries& tested,
                             const std::map<size_t, std::vector<double>>& control) {
  if (control.empty()) return tested;
  MetricSeries ratio{tested.environment, tested.key, {}, true, 0};
  ratio.key.unit = "x control";
  for (const CommitRuns& commit : tested.commits) {
    const auto found = control.find(commit.commit);
    const double level =
        found == control.end() || found->second.empty() ? 0.0 : percentile(found->second, 50);
    if (!(level > 0)) {  // no control here, or one no ratio can be taken against
      ++ratio.commits_without_control;
      continue;
    }
    CommitRuns runs{commit.commit, {}};
    for (double value : commit.runs) runs.runs.push_back(value / level);
    ratio.commits.push_back(std::move(runs));
  }
  return ratio;
}

}  // namespace harness
