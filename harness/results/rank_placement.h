// The device and backend each rank says it actually trained on (the "placement" its rank
// program reads back from its parameters and communicator into memory_rank<r>.json or
// pipeline_rank<r>.json), and the precision its forward pass ran in where it reports one (DDP
// and expert-parallel ranks), held against what the spec asked for: a run that says cuda must
// have trained on cuda, one that says bf16 in bf16.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace harness {

struct PlacementMismatch {
  int rank = -1;
  std::string reason;  // "trained on cpu over gloo, but the spec asked for cuda over nccl"
};

// The first rank of `world_size` in `raw` whose reported placement differs from `device`
// ("cpu" | "cuda": any cuda:N matches) and `backend`, or whose reported precision differs from
// `precision` ("fp32" | "tf32" | "bf16"), or that reported no placement.
std::optional<PlacementMismatch> check_rank_placements(const std::filesystem::path& raw,
                                                       long long world_size,
                                                       const std::string& device,
                                                       const std::string& backend,
                                                       const std::string& precision);

}  // namespace harness
