#include "harness/analysis/system_verdicts.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/statistics.h"
#include "common/text_util.h"
#include "harness/analysis/shift_interval.h"

namespace harness {
namespace {

constexpr const char* kJudgedPhase = "iteration";

// Each complete run's median iteration (its ranks pooled): one value per process launch.
std::vector<double> run_medians(const SystemSamples& system) {
  std::vector<double> medians;
  for (const PhaseSamples& run : system.runs) {
    const auto found = run.find(kJudgedPhase);
    if (found != run.end() && !found->second.empty()) {
      medians.push_back(percentile(found->second, 50));
    }
  }
  return medians;
}

SystemVerdict judge(const std::string& point, const SystemSamples& system,
                    const std::vector<double>& baseline, double alpha) {
  SystemVerdict verdict;
  verdict.point = point;
  verdict.system = system.name;
  const std::vector<double> runs = run_medians(system);
  verdict.baseline_runs = baseline.size();
  verdict.system_runs = runs.size();
  if (baseline.empty() || runs.empty()) return verdict;  // no_runs
  const RelativeShift shift = relative_shift(baseline, runs, alpha);
  verdict.change_pct = shift.change_pct;
  if (baseline.size() == 1 || runs.size() == 1) {
    verdict.kind = SystemVerdictKind::one_run;
  } else if (!shift.shift) {
    verdict.kind = SystemVerdictKind::too_few_runs;
  } else {
    verdict.low_pct = shift.low_pct;
    verdict.high_pct = shift.high_pct;
    verdict.kind = shift.low_pct > 0    ? SystemVerdictKind::slower
                   : shift.high_pct < 0 ? SystemVerdictKind::faster
                                        : SystemVerdictKind::no_difference;
  }
  return verdict;
}

std::string verdict_text(const SystemVerdict& v, double alpha) {
  switch (v.kind) {
    case SystemVerdictKind::slower:
      return "slower";
    case SystemVerdictKind::faster:
      return "faster";
    case SystemVerdictKind::no_difference:
      return "no difference shown";
    case SystemVerdictKind::too_few_runs:
      return "too few runs for an interval (" + std::to_string(fewest_runs_for_interval(alpha)) +
             " each needed): no verdict";
    case SystemVerdictKind::one_run:
      return "one run: no verdict";
    case SystemVerdictKind::no_runs:
      break;
  }
  return "no complete run: no verdict";
}

std::string change_cell(const SystemVerdict& v) {
  if (v.kind == SystemVerdictKind::no_runs) return "—";
  if (v.low_pct && v.high_pct) {
    return format_change_with_interval(v.change_pct, *v.low_pct, *v.high_pct);
  }
  return format_signed_percent(v.change_pct);
}

}  // namespace

std::vector<SystemVerdict> system_verdicts(const ResultSamples& samples, double alpha) {
  std::vector<SystemVerdict> verdicts;
  const std::string& baseline = samples.manifest.baseline;
  for (const PointSamples& point : samples.points) {
    const auto base = std::find_if(point.systems.begin(), point.systems.end(),
                                   [&](const SystemSamples& s) { return s.name == baseline; });
    if (base == point.systems.end() || point.systems.size() < 2) continue;
    const std::vector<double> baseline_runs = run_medians(*base);
    for (const SystemSamples& system : point.systems) {
      if (system.name != baseline) {
        verdicts.push_back(judge(point.point.label, system, baseline_runs, alpha));
      }
    }
  }
  return verdicts;
}

std::string render_system_verdicts(const std::vector<SystemVerdict>& verdicts,
                                   const std::string& baseline, double alpha) {
  if (verdicts.empty()) return "";
  const int confidence = static_cast<int>(std::lround((1 - alpha) * 100));
  std::ostringstream out;
  out << "### Systems against the baseline, over runs\n\n";
  const bool all_single = std::all_of(verdicts.begin(), verdicts.end(), [](const auto& v) {
    return v.kind == SystemVerdictKind::one_run;
  });
  if (all_single) {
    out << "One run of each system (run.repeats: 1): no verdict. The delta% above compares "
           "iterations of one process each, which are not independent samples; run.repeats: "
        << fewest_runs_for_interval(alpha) << " or more gives each system's change against "
        << baseline << " a " << confidence << "% interval.\n\n";
    return out.str();
  }
  out << "Iteration time, each run's median; the change against " << baseline
      << " is the Hodges-Lehmann shift between the runs with its " << confidence
      << "% interval, and a system is slower or faster only when the whole interval is.\n\n"
      << "| point | system | runs | " << baseline << " runs | change | verdict |\n"
      << "|---|---|---:|---:|---:|---|\n";
  for (const SystemVerdict& v : verdicts) {
    out << "| " << v.point << " | " << v.system << " | " << v.system_runs << " | "
        << v.baseline_runs << " | " << change_cell(v) << " | " << verdict_text(v, alpha) << " |\n";
  }
  return out.str() + "\n";
}

}  // namespace harness
