#include "harness/cli/compare_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>

#include "common/input_error.h"
#include "common/json_file.h"
#include "common/text_util.h"
#include "harness/analysis/compare_gbench.h"
#include "harness/analysis/compare_report.h"
#include "harness/analysis/compare_results.h"
#include "harness/results/run_manifest.h"

namespace harness {
namespace {

std::set<std::string> judged_phases(const std::string& text) {
  if (text == "all") return {};
  std::set<std::string> phases;
  for (const std::string& phase : split(text, ',')) {
    if (std::find(std::begin(kPhases), std::end(kPhases), phase) == std::end(kPhases)) {
      throw InputError("--phases: unknown phase '" + phase +
                       "' (expected all, or a comma list of forward, backward, step, iteration)");
    }
    phases.insert(phase);
  }
  return phases;
}

}  // namespace

CompareOptions compare_options_of(const CompareRequest& request) {
  CompareOptions options;
  options.threshold_pct = parse_threshold_percent(request.threshold);
  options.alpha = request.alpha;
  options.metric = request.metric;
  if (!(request.noise_floor_ms >= 0 && request.noise_floor_ms < 1e9)) {
    throw InputError("--noise-floor-ms: expected a time >= 0");
  }
  try {
    options.memory_tolerance_pct = parse_threshold_percent(request.memory_tolerance);
  } catch (const InputError&) {
    throw InputError("--memory-tolerance: expected a percentage such as 10% (got '" +
                     request.memory_tolerance + "')");
  }
  // Google Benchmark repeats a body until its time is stable: its repetitions have no phases
  // and no floor of their own.
  if (!request.gbench) {
    options.gated_items = judged_phases(request.phases);
    options.noise_floor = request.noise_floor_ms;
  }
  check_compare_options(options);
  return options;
}

Comparison compare_request(const CompareRequest& request) {
  const CompareOptions options = compare_options_of(request);
  Comparison comparison;
  if (request.gbench) {
    comparison = compare_sample_sets(read_gbench_samples(request.base),
                                     read_gbench_samples(request.candidate), options);
    comparison.source = "gbench";
    comparison.unit = "ns";
  } else {
    comparison =
        compare_result_sides(read_result_side(request.base), read_result_side(request.candidate),
                             options, request.allow_spec_change);
  }
  comparison.base_label = request.base;
  comparison.new_label = request.candidate;
  return comparison;
}

int run_compare(const CompareRequest& request, std::ostream& out) {
  const Comparison comparison = compare_request(request);
  if (request.format == "json") {
    out << json_text(comparison_to_json(comparison), 2) << "\n";
  } else {
    out << render_comparison_markdown(comparison);
  }
  return comparison_exit_code(comparison);
}

void add_compare_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "compare",
      "Compare two sides over runs: change with its interval, verdict per row, exact counters");
  sub->footer(
      "Example:\n"
      "  harness compare results/ci_regression/<base stamp> results/ci_regression/<new stamp> "
      "--threshold 5%\n"
      "(exit 0: no regression, 1: a regression, 3: too few runs to say)");
  auto request = std::make_shared<CompareRequest>();
  sub->add_option("base", request->base,
                  "Baseline: a results folder, or a folder of results folders of one study (or "
                  "gbench JSON)")
      ->required();
  sub->add_option("new", request->candidate, "New side, the same way")->required();
  sub->add_option("--threshold", request->threshold,
                  "A regression's whole interval must lie beyond this relative change")
      ->capture_default_str();
  sub->add_option("--alpha", request->alpha, "1 - the interval's confidence")
      ->capture_default_str();
  sub->add_option("--metric", request->metric, "Each run's statistic of its iterations")
      ->check(CLI::IsMember({"p50", "mean"}))
      ->capture_default_str();
  sub->add_option("--phases", request->phases,
                  "Phases judged (the others are descriptive): a comma list, or all")
      ->capture_default_str();
  sub->add_option("--noise-floor-ms", request->noise_floor_ms,
                  "A change smaller than this (ms) is never a verdict")
      ->capture_default_str();
  sub->add_option("--memory-tolerance", request->memory_tolerance,
                  "Peak resident memory within this is unchanged")
      ->capture_default_str();
  sub->add_flag("--allow-spec-change", request->allow_spec_change,
                "Compare sides that ran different specs (the difference is printed)");
  sub->add_option("--format", request->format, "Output format")
      ->check(CLI::IsMember({"md", "json"}))
      ->capture_default_str();
  sub->add_flag("--gbench", request->gbench,
                "BASE and NEW are Google Benchmark JSON outputs (repetitions are runs)");
  sub->callback([request]() {
    const int code = run_compare(*request, std::cout);
    std::cout.flush();
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace harness
