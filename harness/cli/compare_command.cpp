#include "harness/cli/compare_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "harness/analysis/compare_gbench.h"

namespace harness {

std::vector<SampleSet> result_sample_sets(const ResultSamples& samples) {
  std::vector<SampleSet> sets;
  for (const auto& point : samples.points) {
    for (const auto& system : point.systems) {
      for (const char* phase : kPhases) {
        auto found = system.phases.find(phase);
        sets.push_back({point.point.label, system.name, phase,
                        found == system.phases.end() ? std::vector<double>{} : found->second});
      }
    }
  }
  return sets;
}

int run_compare(const CompareRequest& request, std::ostream& out) {
  CompareOptions options;
  options.threshold_pct = parse_threshold_percent(request.threshold);
  options.alpha = request.alpha;
  options.metric = request.metric;
  Comparison comparison;
  if (request.gbench) {
    comparison = compare_sample_sets(read_gbench_samples(request.base),
                                     read_gbench_samples(request.candidate), options);
    comparison.source = "gbench";
    comparison.unit = "ns";
  } else {
    const ResultSamples base = read_result_samples(request.base);
    const ResultSamples candidate = read_result_samples(request.candidate);
    // Two different studies can share point labels and system names by chance: say so, so
    // that a "regression" between them is read as what it is.
    if (base.manifest.experiment != candidate.manifest.experiment) {
      std::fprintf(stderr,
                   "note: comparing two different studies, '%s' (base) and '%s' (new): rows "
                   "are matched by point, system and phase only\n",
                   base.manifest.experiment.c_str(), candidate.manifest.experiment.c_str());
    }
    comparison =
        compare_sample_sets(result_sample_sets(base), result_sample_sets(candidate), options);
    comparison.source = "results";
    comparison.unit = "ms";
  }
  comparison.base_label = request.base;
  comparison.new_label = request.candidate;
  if (request.format == "json") {
    out << comparison_to_json(comparison).dump(2) << "\n";
  } else {
    out << render_comparison_markdown(comparison);
  }
  return has_regression(comparison) ? 1 : 0;
}

void add_compare_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "compare", "Compare two results folders: change, Mann-Whitney U test, verdict per row");
  auto request = std::make_shared<CompareRequest>();
  sub->add_option("base", request->base, "Baseline results folder (or gbench JSON)")->required();
  sub->add_option("new", request->candidate, "New results folder (or gbench JSON)")->required();
  sub->add_option("--threshold", request->threshold,
                  "Smallest relative change that counts as a regression or improvement")
      ->capture_default_str();
  sub->add_option("--alpha", request->alpha, "Significance level of the two-sided test")
      ->capture_default_str();
  sub->add_option("--metric", request->metric, "Statistic whose change is reported")
      ->check(CLI::IsMember({"p50", "mean"}))
      ->capture_default_str();
  sub->add_option("--format", request->format, "Output format")
      ->check(CLI::IsMember({"md", "json"}))
      ->capture_default_str();
  sub->add_flag("--gbench", request->gbench,
                "BASE and NEW are Google Benchmark JSON outputs (repetitions as samples)");
  sub->callback([request]() {
    const int code = run_compare(*request, std::cout);
    std::cout.flush();
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
