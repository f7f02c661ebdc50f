#include "harness/analysis/compare_samples.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "common/input_error.h"
#include "common/statistics.h"
#include "common/text_util.h"

namespace harness {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;

std::string describe(const Key& key) {
  const auto& [group, name, item] = key;
  return (group.empty() ? "" : group + " / ") + name + " / " + item;
}

// The verdict on a row with an interval: beyond the threshold as a whole, and beyond the noise
// floor in absolute terms, or it is no verdict.
Verdict judge(const CompareRow& row, const CompareOptions& options) {
  const double t = options.threshold_pct;
  const double floor = options.noise_floor;
  const double low = row.base_value * row.change_low_pct / 100;  // in the samples' unit
  const double high = row.base_value * row.change_high_pct / 100;
  if (row.change_low_pct > t) return low > floor ? Verdict::regression : Verdict::below_floor;
  if (row.change_high_pct < -t) {
    return -high > floor ? Verdict::improvement : Verdict::below_floor;
  }
  if (row.change_low_pct >= -t && row.change_high_pct <= t) return Verdict::no_change;
  // Part of the interval lies beyond a threshold: a verdict only if that part could be larger
  // than the floor.
  return std::max(std::abs(low), std::abs(high)) > floor ? Verdict::unresolved
                                                         : Verdict::below_floor;
}

void set_change(CompareRow& row, const SampleSet& base, const SampleSet& candidate, double alpha) {
  const RelativeShift change = relative_shift(base.runs, candidate.runs, alpha);
  row.log_scale = change.log_scale;
  row.change_pct = change.change_pct;
  row.shift = change.shift;
  row.change_low_pct = change.low_pct;
  row.change_high_pct = change.high_pct;
}

CompareRow compare_row(const SampleSet& base, const SampleSet& candidate,
                       const CompareOptions& options) {
  CompareRow row;
  row.group = base.group;
  row.name = base.name;
  row.item = base.item;
  row.runs_base = base.runs.size();
  row.runs_new = candidate.runs.size();
  row.iterations_base = base.iterations;
  row.iterations_new = candidate.iterations;
  row.gated = options.gated_items.empty() || options.gated_items.count(base.item) > 0;
  if (base.runs.empty() || candidate.runs.empty()) {
    row.warnings.push_back(std::string("no runs in the ") + (base.runs.empty() ? "base" : "new") +
                           " side (failed or missing)");
    return row;
  }
  row.base_value = percentile(base.runs, 50);
  row.new_value = percentile(candidate.runs, 50);
  row.test = mann_whitney_u(base.runs, candidate.runs);
  set_change(row, base, candidate, options.alpha);
  if (!row.shift) {
    row.verdict = row.gated ? Verdict::too_few_runs : Verdict::descriptive;
    row.warnings.push_back("too few runs for a verdict (base " + std::to_string(row.runs_base) +
                           ", new " + std::to_string(row.runs_new) + "; at least " +
                           std::to_string(fewest_runs_for_interval(options.alpha)) +
                           " a side at alpha " + std::to_string(options.alpha).substr(0, 6) + ")");
    return row;
  }
  row.verdict = row.gated ? judge(row, options) : Verdict::descriptive;
  return row;
}

}  // namespace

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::regression:
      return "regression";
    case Verdict::improvement:
      return "improvement";
    case Verdict::no_change:
      return "no change";
    case Verdict::unresolved:
      return "unresolved";
    case Verdict::below_floor:
      return "below noise floor";
    case Verdict::too_few_runs:
      return "inconclusive";
    case Verdict::descriptive:
      return "descriptive";
    case Verdict::changed:
      return "changed";
    case Verdict::not_compared:
      break;
  }
  return "not compared";
}

double parse_threshold_percent(const std::string& text) {
  std::string number = text;
  while (!number.empty() && number.back() == ' ') number.pop_back();
  if (!number.empty() && number.back() == '%') number.pop_back();
  try {
    size_t used = 0;
    const double value = std::stod(number, &used);
    if (used == number.size() && value >= 0 && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  throw InputError("--threshold: expected a percentage such as 5% (got '" + text + "')");
}

void check_compare_options(const CompareOptions& options) {
  if (options.metric != "p50" && options.metric != "mean") {
    throw InputError("--metric: expected p50 or mean (got '" + options.metric + "')");
  }
  check_level("--alpha", options.alpha);
}

void check_level(const std::string& option, double level) {
  if (!(level > 0 && level < 1)) {
    throw InputError(option + ": expected a level in (0, 1) (got " + format_general(level) + ")");
  }
}

Comparison compare_sample_sets(const std::vector<SampleSet>& base,
                               const std::vector<SampleSet>& candidate,
                               const CompareOptions& options) {
  check_compare_options(options);
  Comparison comparison;
  comparison.options = options;
  std::map<Key, const SampleSet*> by_key;
  for (const auto& set : candidate) by_key[{set.group, set.name, set.item}] = &set;
  std::map<Key, bool> matched;
  for (const auto& set : base) {
    const Key key{set.group, set.name, set.item};
    auto found = by_key.find(key);
    if (found == by_key.end()) {
      comparison.only_in_base.push_back(describe(key));
      continue;
    }
    matched[key] = true;
    comparison.rows.push_back(compare_row(set, *found->second, options));
  }
  for (const auto& set : candidate) {
    const Key key{set.group, set.name, set.item};
    if (!matched.count(key)) comparison.only_in_new.push_back(describe(key));
  }
  if (comparison.rows.empty()) {
    throw InputError("nothing to compare: no point, system and phase (or benchmark) is in both");
  }
  return comparison;
}

bool has_regression(const Comparison& comparison) {
  for (const auto& row : comparison.rows) {
    if (row.verdict == Verdict::regression) return true;
  }
  for (const auto& row : comparison.counters) {
    if (row.verdict == Verdict::regression) return true;
  }
  return false;
}

// Exit 0 says "no regression" and nothing less: a CI job reads it as a pass.
int comparison_exit_code(const Comparison& comparison) {
  if (has_regression(comparison)) return 1;
  for (const auto& row : comparison.rows) {
    const bool unjudged = row.verdict == Verdict::not_compared && row.gated;
    if (row.verdict == Verdict::too_few_runs || row.verdict == Verdict::unresolved || unjudged) {
      return kInconclusiveExitCode;
    }
  }
  return 0;
}

}  // namespace harness
