// `harness compare`'s engine: two sets of named sample groups (a base and a new run) matched
// by name, the relative change of a metric, a two-sided Mann-Whitney U test, and a verdict
// per row. The sources (results folders, Google Benchmark JSON) only produce SampleSets.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness/analysis/mann_whitney.h"

namespace harness {

// Below this many samples on either side the test is flagged as weak (a row still gets a
// verdict: with few samples it just cannot reach significance).
inline constexpr size_t kFewSamples = 9;

// One group of samples: in a results folder a point (its label), a system and a phase; for
// Google Benchmark a benchmark name with group "" and item "real_time".
struct SampleSet {
  std::string group;
  std::string name;
  std::string item;
  std::vector<double> samples;
};

struct CompareOptions {
  double threshold_pct = 5;    // a significant change must exceed this to be a verdict
  double alpha = 0.05;         // significance level of the two-sided test
  std::string metric = "p50";  // p50 | mean
};

enum class Verdict { regression, improvement, no_change, not_compared };

const char* verdict_name(Verdict verdict);

struct CompareRow {
  std::string group, name, item;
  size_t n_base = 0, n_new = 0;
  double base_value = 0, new_value = 0;  // the metric
  double change_pct = 0;                 // (new - base) / base * 100; higher is slower
  MannWhitneyResult test;                // meaningful when both sides have samples
  Verdict verdict = Verdict::not_compared;
  std::vector<std::string> warnings;
};

struct Comparison {
  std::string source;  // "results" or "gbench": column names of the rendering
  std::string unit;    // "ms", "ns"
  std::string base_label, new_label;
  CompareOptions options;
  std::vector<CompareRow> rows;           // in the base's order
  std::vector<std::string> only_in_base;  // "group / name / item"
  std::vector<std::string> only_in_new;
};

// Matches sets by (group, name, item). Throws InputError when nothing matches.
Comparison compare_sample_sets(const std::vector<SampleSet>& base,
                               const std::vector<SampleSet>& candidate,
                               const CompareOptions& options);

// "5%", "5" and "2.5 %" are percent; throws InputError otherwise.
double parse_threshold_percent(const std::string& text);

bool has_regression(const Comparison& comparison);

std::string render_comparison_markdown(const Comparison& comparison);
nlohmann::json comparison_to_json(const Comparison& comparison);

}  // namespace harness
