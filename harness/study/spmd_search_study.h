// Runs a `kind: spmd_search` spec (harness/spec/spmd_search_spec.h): HiDup's Table IV and
// Figure 12 on the harness's own search. Every search runs before anything is written, so a
// graph the search refuses leaves no results folder behind.
#pragma once

#include <yaml-cpp/yaml.h>

#include <ostream>
#include <string>
#include <vector>

namespace harness {

// Writes <output>/<name>/<timestamp>/: spec.yaml, noise.md and noise.json (Table IV: each
// model's mean relative time per noise level and communication scale, every seed's in the
// JSON), search_time.md and search_time.json (Figure 12: operators, states and the median
// search time per point, every repeat's in the JSON); prints the tables. InputError on bad
// input. Returns the exit code.
int run_spmd_search_spec(const std::string& spec_path, YAML::Node root,
                         const std::vector<std::string>& overrides, bool quick, bool dry_run,
                         std::ostream& out);

}  // namespace harness
