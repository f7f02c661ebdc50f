// `harness compare BASE NEW`: two sides (each a results folder, or a folder of results folders
// of one study, as `harness ab` writes them; or, with --gbench, two Google Benchmark JSON
// files) compared row by row over runs; exit 1 on a regression, 3 when inconclusive.
#pragma once

#include <ostream>
#include <string>

#include "harness/analysis/compare_samples.h"

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
  std::string format = "md";         // md | json
  std::string phases = "iteration";  // the phases judged: a comma list, or "all"
  double noise_floor_ms = 0.05;
  std::string memory_tolerance = "10%";
  bool allow_spec_change = false;
  bool gbench = false;
};

// The comparison's options; throws InputError for a bad threshold, phase, floor or tolerance.
CompareOptions compare_options_of(const CompareRequest& request);

// The comparison the request asks for. Throws InputError for unusable input.
Comparison compare_request(const CompareRequest& request);

// Prints the comparison and returns its exit code (harness/analysis/compare_samples.h
// comparison_exit_code). Throws InputError for unusable input.
int run_compare(const CompareRequest& request, std::ostream& out);

void add_compare_command(CLI::App& app);

}  // namespace harness
