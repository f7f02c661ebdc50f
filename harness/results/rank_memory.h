// What the ranks of a DDP or expert-parallel run held (their memory_rank<r>.json, written by
// the rank program after training): the largest over ranks of the parameter bytes, the
// experts' part of them, gradient and optimizer-state bytes, and peak resident memory (LibTorch's
// own few hundred MB included), and on a GPU the device's allocated and reserved peaks.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace harness {

struct RankMemory {
  double parameter_bytes = 0;
  double expert_parameter_bytes = 0;
  double gradient_bytes = 0;
  double optimizer_state_bytes = 0;
  double peak_resident_bytes = 0;
  // Ranks on a GPU (run.device: cuda): the caching allocator's peaks after warm-up, of live
  // tensors and of what it held from the driver; none on the CPU.
  std::optional<double> peak_device_allocated_bytes;
  std::optional<double> peak_device_reserved_bytes;
  long long ranks = 0;  // how many ranks' files it rests on
};

// The largest of each figure over the ranks' files; nothing when there are none (pipelines,
// external systems, folders from before the files existed).
std::optional<RankMemory> largest_rank_memory(const std::vector<nlohmann::json>& ranks);

}  // namespace harness
