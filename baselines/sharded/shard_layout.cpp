#include "baselines/sharded/shard_layout.h"

#include <stdexcept>

namespace baselines {

ZeroStage zero_stage_from(long long stage) {
  if (stage < 1 || stage > 3) {
    throw std::invalid_argument("sharding stage " + std::to_string(stage) +
                                " (expected 1, 2 or 3)");
  }
  return static_cast<ZeroStage>(stage);
}

int stage_number(ZeroStage stage) { return static_cast<int>(stage); }

int64_t ShardLayout::elements() const {
  int64_t sum = 0;
  for (const auto& unit : units) sum += unit.elements;
  return sum;
}

int64_t ShardLayout::shard_elements() const {
  int64_t sum = 0;
  for (const auto& unit : units) sum += unit.shard_elements;
  return sum;
}

int64_t ShardLayout::padded_elements() const { return shard_elements() * world_size; }

ShardLayout make_shard_layout(const std::vector<UnitParameters>& units, int world_size) {
  if (world_size < 1) throw std::invalid_argument("a shard layout needs at least one rank");
  ShardLayout layout;
  layout.world_size = world_size;
  for (const auto& unit : units) {
    ShardUnit shard{unit.name, unit.numels};
    for (int64_t n : unit.numels) {
      if (n < 0) throw std::invalid_argument("unit " + unit.name + ": a negative parameter size");
      shard.elements += n;
    }
    if (shard.elements == 0) continue;
    shard.shard_elements = (shard.elements + world_size - 1) / world_size;
    shard.padded_elements = shard.shard_elements * world_size;
    layout.units.push_back(std::move(shard));
  }
  return layout;
}

ShardMemory sharded_memory(const ShardLayout& layout, ZeroStage stage, int64_t element_bytes,
                           int states_per_element) {
  const int64_t shard = layout.shard_elements() * element_bytes;
  ShardMemory memory;
  memory.parameter_bytes =
      stage == ZeroStage::kParameters ? shard : layout.padded_elements() * element_bytes;
  memory.gradient_bytes =
      stage == ZeroStage::kOptimizerState ? layout.elements() * element_bytes : shard;
  memory.optimizer_state_bytes = shard * states_per_element;
  return memory;
}

ShardTraffic sharded_traffic(const ShardLayout& layout, ZeroStage stage, int64_t element_bytes,
                             bool reshard_after_forward) {
  const double n = layout.world_size;
  const double padded = static_cast<double>(layout.padded_elements() * element_bytes);
  const double gather = padded * (n - 1) / n;  // (N-1) shards of c elements
  ShardTraffic traffic;
  switch (stage) {
    case ZeroStage::kOptimizerState:
      traffic.all_reduce_bytes =
          2 * (n - 1) / n * static_cast<double>(layout.elements() * element_bytes);
      traffic.all_gather_bytes = gather;
      break;
    case ZeroStage::kGradients:
      traffic.reduce_scatter_bytes = gather;
      traffic.all_gather_bytes = gather;
      break;
    case ZeroStage::kParameters:
      traffic.reduce_scatter_bytes = gather;
      traffic.all_gather_bytes = (reshard_after_forward ? 2 : 1) * gather;
      break;
  }
  return traffic;
}

}  // namespace baselines
