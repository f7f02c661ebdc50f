// The device and backend each rank says it actually trained on (the "placement" its rank
// program reads back from its parameters and communicator into memory_rank<r>.json or
// pipeline_rank<r>.json), held against what the spec asked for: a run that says cuda must have
// trained on cuda.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace harness {

struct PlacementMismatch {
  int rank = -1;
  std::string reason;  // "trained on cpu over gloo, but run.device is cuda (backend nccl)"
};

// The first rank of `world_size` in `raw` whose reported placement differs from `device`
// ("cpu" | "cuda": any cuda:N matches) and `backend`, or that reported none.
std::optional<PlacementMismatch> check_rank_placements(const std::filesystem::path& raw,
                                                       long long world_size,
                                                       const std::string& device,
                                                       const std::string& backend);

}  // namespace harness
