#include "harness/results/rank_memory.h"

#include <algorithm>

namespace harness {

std::optional<RankMemory> largest_rank_memory(const std::vector<nlohmann::json>& ranks) {
  if (ranks.empty()) return std::nullopt;
  RankMemory memory;
  const auto take = [](double& largest, const nlohmann::json& rank, const char* key) {
    largest = std::max(largest, rank.value(key, 0.0));
  };
  for (const auto& rank : ranks) {
    take(memory.parameter_bytes, rank, "parameter_bytes");
    take(memory.expert_parameter_bytes, rank, "expert_parameter_bytes");
    take(memory.gradient_bytes, rank, "gradient_bytes");
    take(memory.optimizer_state_bytes, rank, "optimizer_state_bytes");
    take(memory.peak_resident_bytes, rank, "peak_resident_bytes");
    const auto take_device = [&](std::optional<double>& largest, const char* key) {
      if (!rank.contains(key) || !rank[key].is_number()) return;
      largest = std::max(largest.value_or(0.0), rank[key].get<double>());
    };
    take_device(memory.peak_device_allocated_bytes, "peak_device_allocated_bytes");
    take_device(memory.peak_device_reserved_bytes, "peak_device_reserved_bytes");
  }
  memory.ranks = static_cast<long long>(ranks.size());
  return memory;
}

}  // namespace harness
