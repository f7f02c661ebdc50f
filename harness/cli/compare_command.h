// `harness compare BASE NEW`: two results folders (or, with --gbench, two Google Benchmark
// JSON files) compared row by row; exit code 1 when a row is a significant regression.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "harness/analysis/compare_samples.h"
#include "harness/results/report_samples.h"

namespace CLI {
class App;
}

namespace harness {

struct CompareRequest {
  std::string base;
  std::string candidate;
  std::string threshold = "5%";
  double alpha = 0.05;
  std::string metric = "p50";
  std::string format = "md";  // md | json
  bool gbench = false;
};

// Point label, system and phase of every pooled sample group, in manifest order.
std::vector<SampleSet> result_sample_sets(const ResultSamples& samples);

// Prints the comparison; returns 1 when any row is a significant regression beyond the
// threshold, else 0. Throws InputError for unusable input.
int run_compare(const CompareRequest& request, std::ostream& out);

void add_compare_command(CLI::App& app);

}  // namespace harness
