// `harness compare`'s engine: two sets of named sample groups (a base and a new side) matched
// by name, and a verdict per row that rests on runs, never on iterations.
//
// A run is one launch of the ranks (a process per rank; for Google Benchmark, a repetition).
// Iterations of one process share its placement, clock and memory layout, so they are not
// independent samples of the code's speed: a test over pooled iterations calls every shift
// between two processes significant. Each run therefore contributes one value (the median, or
// the mean, of its iterations), and the change is the Hodges-Lehmann shift between the
// logarithms of both sides' runs (times vary by factors) with its distribution-free interval
// (harness/analysis/shift_interval.h), as a percentage. A row is
// a regression only when the whole interval lies beyond +threshold and the change beyond the
// noise floor; pooled iterations stay in the descriptive tables.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/analysis/mann_whitney.h"
#include "harness/analysis/shift_interval.h"

namespace harness {

// One group of runs: in a results folder a point (its label), a system and a phase; for Google
// Benchmark a benchmark name with group "" and item "real_time".
struct SampleSet {
  std::string group;
  std::string name;
  std::string item;
  std::vector<double> runs;  // one value per run: the statistic of its iterations
  size_t iterations = 0;     // iteration samples behind those values (0: not known)
};

struct CompareOptions {
  double threshold_pct = 5;           // the interval must lie beyond this for a verdict
  double alpha = 0.05;                // 1 - the interval's confidence (and the U test's level)
  std::string metric = "p50";         // p50 | mean: each run's statistic of its iterations
  double noise_floor = 0;             // in the samples' unit: a smaller change is never a verdict
  std::set<std::string> gated_items;  // items (phases) judged; empty: every item
  double memory_tolerance_pct = 10;   // measured counters (peak memory) within this are equal
};

enum class Verdict {
  regression,
  improvement,
  no_change,     // the interval lies within +-threshold
  unresolved,    // the interval reaches across +threshold or -threshold: more runs would tell
  below_floor,   // beyond the threshold, but by less than the noise floor in absolute terms
  too_few_runs,  // no interval at this alpha with so few runs: inconclusive
  descriptive,   // an item the gate does not judge (a phase, unless asked for)
  changed,       // a layout counter differs (neither better nor worse)
  not_compared,  // a side has no runs (failed or missing)
};

const char* verdict_name(Verdict verdict);

struct CompareRow {
  std::string group, name, item;
  size_t runs_base = 0, runs_new = 0;
  size_t iterations_base = 0, iterations_new = 0;
  double base_value = 0, new_value = 0;  // medians over runs of the runs' statistic
  // The Hodges-Lehmann shift as a percentage of the base, with its interval (when the runs
  // allow one); taken between the runs' logarithms (log_scale) unless a value is <= 0.
  double change_pct = 0;
  std::optional<ShiftInterval> shift;  // of the logarithms, or in the samples' unit
  bool log_scale = true;
  double change_low_pct = 0, change_high_pct = 0;
  MannWhitneyResult test;  // over runs; meaningful when both sides have runs
  bool gated = true;
  Verdict verdict = Verdict::not_compared;
  std::vector<std::string> warnings;
};

// An exact counter of one system at one point (harness/results/run_counters.h) on both sides.
struct CounterRow {
  std::string group, name, counter;
  std::string base_text, new_text;  // the values as printed
  double change_pct = 0;            // 0 for layouts
  Verdict verdict = Verdict::no_change;
};

struct Comparison {
  std::string source;  // "results" or "gbench": column names of the rendering
  std::string unit;    // "ms", "ns"
  std::string base_label, new_label;
  CompareOptions options;
  std::vector<CompareRow> rows;  // in the base's order
  std::vector<CounterRow> counters;
  std::vector<std::string> only_in_base;  // "group / name / item"
  std::vector<std::string> only_in_new;
  std::vector<std::string> notes;  // said before the table (e.g. an allowed spec change)
};

// Throws InputError for a metric other than p50 or mean, or an alpha outside (0, 1): called
// where the options are read, before anything runs, and again by compare_sample_sets.
void check_compare_options(const CompareOptions& options);

// Matches sets by (group, name, item). Throws InputError when nothing matches.
Comparison compare_sample_sets(const std::vector<SampleSet>& base,
                               const std::vector<SampleSet>& candidate,
                               const CompareOptions& options);

// "5%", "5" and "2.5 %" are percent; throws InputError otherwise.
double parse_threshold_percent(const std::string& text);

// Throws InputError "OPTION: expected a level in (0, 1) (got VALUE)" unless 0 < level < 1 (nan
// is refused): a significance level or a p-value bound.
void check_level(const std::string& option, double level);

// The documented exit codes of a comparison: 1 when a row (timing or counter) is a
// regression; else 3 when a judged row had too few runs for a verdict, an interval across the
// threshold (unresolved), or no runs on a side (inconclusive); else 0.
inline constexpr int kInconclusiveExitCode = 3;
int comparison_exit_code(const Comparison& comparison);

bool has_regression(const Comparison& comparison);

}  // namespace harness
