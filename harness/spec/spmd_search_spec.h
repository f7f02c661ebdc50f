// `kind: spmd_search` specs: HiDup's search experiments (SoCC 2022) on the harness's own search
// (planner/spmd), at any size, since a search needs no ranks: Table IV (VI.I), the strategy
// searched on inputs with random noise, priced on the true ones, and Figure 12 (VI.J), the
// search's time against the model's depth and the ranks. Keys: experiments/README.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/spec/spec.h"

namespace harness {

// A zoo transformer as the search sees it: the model (a training spec's `model:` shape keys),
// the sequences of an iteration over all ranks, and the ranks.
struct SearchedModel {
  std::string label;  // names its rows and folders
  ModelConfig model;
  long long global_batch = 0;
  long long ranks = 0;
};

// Table IV: each model's strategy searched under each noise level (+-percent on every
// operator's FLOPs and every collective's bandwidth) and each communication scale, over seeds.
struct NoiseTable {
  std::vector<SearchedModel> models;
  std::vector<double> levels_percent;
  std::vector<double> comm_scales;
  long long seeds = 10;
  long long first_seed = 1;
};

// Figure 12: the search's time at each depth (the model's ranks) and at each number of ranks
// (the model's depth), the median of `repeats` searches.
struct SearchTimeFigure {
  SearchedModel model;
  std::vector<long long> depths, ranks;
  long long repeats = 5;
};

struct SpmdSearchSpec {
  std::string name, output;
  YAML::Node resolved;  // the spec with --quick and --set applied, for spec.yaml
  std::string comm;     // comm.json of `harness profile comm`
  double gflops = 0;    // one rank's
  std::optional<NoiseTable> noise;
  std::optional<SearchTimeFigure> search_time;
};

// Every error of the spec at once (file:line:column), as InputError; the comm.json read and
// every model checked against the zoo and the search's graphs.
SpmdSearchSpec read_spmd_search_spec(const std::string& spec_path, YAML::Node root,
                                     const std::vector<std::string>& overrides, bool quick);

}  // namespace harness
