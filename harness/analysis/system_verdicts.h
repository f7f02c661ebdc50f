// The systems of one study against its baseline, judged over runs: the pooled tables' delta% is
// descriptive (iterations of one process are not independent samples), so a study that says
// "A is faster than B" says it here, from each run's median iteration, with the Hodges-Lehmann
// shift and its distribution-free interval (harness/analysis/shift_interval.h), or says that its
// runs cannot support a verdict.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/report_samples.h"

namespace harness {

// The level the study's own verdicts take (the tables' 95% intervals); `compare` and `ab` take
// --alpha.
inline constexpr double kSystemVerdictAlpha = 0.05;

enum class SystemVerdictKind {
  slower,         // the whole interval lies above 0
  faster,         // the whole interval lies below 0
  no_difference,  // the interval reaches across 0
  too_few_runs,   // runs on both sides, too few for an interval at this level
  one_run,        // a side has one run: no spread to judge a difference against
  no_runs,        // a side has no complete run
};

struct SystemVerdict {
  std::string point;   // the point's label
  std::string system;  // compared against the study's baseline
  size_t baseline_runs = 0, system_runs = 0;
  double change_pct = 0;  // the shift as a percentage of the baseline (runs on both sides)
  std::optional<double> low_pct, high_pct;  // its interval, where the runs allow one
  SystemVerdictKind kind = SystemVerdictKind::no_runs;
};

// Per point, every system but the baseline, on the iteration phase's per-run p50. Empty when the
// study names no baseline among its systems, or has one system.
std::vector<SystemVerdict> system_verdicts(const ResultSamples& samples, double alpha);

// The section table.md carries under the pooled tables: a row per verdict, or, where every
// system ran once, the one line that says so. "" for no verdicts.
std::string render_system_verdicts(const std::vector<SystemVerdict>& verdicts,
                                   const std::string& baseline, double alpha);

}  // namespace harness
