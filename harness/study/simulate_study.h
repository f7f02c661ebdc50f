// `kind: simulate` studies (and `harness simulate SPEC`): the discrete-event simulator
// (simulator/) run over a spec's sweep of cluster sizes, bandwidths, batch sizes, bucket caps
// and plans, written as a results folder of the same format as real runs, so `harness
// report`, `plot` and `compare` read it unchanged.
#pragma once

#include <yaml-cpp/yaml.h>

#include <ostream>
#include <string>
#include <vector>

namespace harness {

// Validates the spec (InputError with file:line:column), simulates every point, system and
// repeat, and writes <output>/<name>/<UTC timestamp>/. With `dry_run` prints the matrix only.
// Returns the exit code: 0 when every run completed, 1 when one failed (a planner without a
// plan, a deadlock), the others kept.
int run_simulate_spec(const std::string& spec_path, YAML::Node root,
                      const std::vector<std::string>& overrides, bool dry_run, std::ostream& out);

}  // namespace harness
