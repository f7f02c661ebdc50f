#include "runtime/pipeline/pipeline_layout.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace runtime {

int PipelineLayout::stage_of(int rank) const {
  for (size_t s = 0; s < stages.size(); ++s) {
    const auto& ranks = stages[s].ranks;
    if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) return static_cast<int>(s);
  }
  throw std::invalid_argument("rank " + std::to_string(rank) + " serves no pipeline stage");
}

int PipelineLayout::replica_of(int rank) const {
  const auto& ranks = stages[stage_of(rank)].ranks;
  return static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
}

std::vector<int> PipelineLayout::stages_of(int rank) const {
  std::vector<int> served;
  for (size_t s = 0; s < stages.size(); ++s) {
    const auto& ranks = stages[s].ranks;
    if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) {
      served.push_back(static_cast<int>(s));
    }
  }
  return served;
}

std::vector<int> PipelineLayout::stage_positions() const {
  std::vector<int> positions(stages.size(), -1);
  std::vector<const std::vector<int>*> seen;
  for (size_t s = 0; s < stages.size(); ++s) {
    const auto found = std::find_if(seen.begin(), seen.end(),
                                    [&](const auto* ranks) { return *ranks == stages[s].ranks; });
    positions[s] = static_cast<int>(found - seen.begin());
    if (found == seen.end()) seen.push_back(&stages[s].ranks);
  }
  return positions;
}

int PipelineLayout::position_count() const {
  const auto positions = stage_positions();
  return positions.empty() ? 0 : *std::max_element(positions.begin(), positions.end()) + 1;
}

void validate_layout(const PipelineLayout& layout, int layer_count, int world_size) {
  if (layout.stages.empty()) throw std::invalid_argument("a pipeline needs at least one stage");
  int next_layer = 0;
  std::vector<int> served(world_size, -1);
  for (size_t s = 0; s < layout.stages.size(); ++s) {
    const auto& stage = layout.stages[s];
    const std::string where = "stage " + std::to_string(s) + ": ";
    if (stage.first_layer != next_layer) {
      throw std::invalid_argument(where + "starts at layer " + std::to_string(stage.first_layer) +
                                  ", expected " + std::to_string(next_layer) +
                                  " (stages must cover the layers in order, without gaps)");
    }
    if (stage.last_layer < stage.first_layer) {
      throw std::invalid_argument(where + "layer range " + std::to_string(stage.first_layer) + "-" +
                                  std::to_string(stage.last_layer) + " is empty");
    }
    if (stage.last_layer >= layer_count) {
      throw std::invalid_argument(where + "layer " + std::to_string(stage.last_layer) +
                                  " does not exist (the model has " + std::to_string(layer_count) +
                                  " layers, 0-" + std::to_string(layer_count - 1) + ")");
    }
    if (stage.ranks.empty()) throw std::invalid_argument(where + "has no ranks");
    for (int rank : stage.ranks) {
      if (rank < 0 || rank >= world_size) {
        throw std::invalid_argument(where + "rank " + std::to_string(rank) +
                                    " is outside the world of " + std::to_string(world_size) +
                                    " ranks");
      }
      if (std::count(stage.ranks.begin(), stage.ranks.end(), rank) > 1) {
        throw std::invalid_argument(where + "rank " + std::to_string(rank) + " is listed twice");
      }
      if (served[rank] >= 0 && layout.stages[served[rank]].ranks != stage.ranks) {
        throw std::invalid_argument(where + "rank " + std::to_string(rank) +
                                    " already serves stage " + std::to_string(served[rank]));
      }
      if (served[rank] < 0) served[rank] = static_cast<int>(s);
    }
    next_layer = stage.last_layer + 1;
  }
  if (next_layer != layer_count) {
    throw std::invalid_argument("the stages end at layer " + std::to_string(next_layer - 1) +
                                " but the model has " + std::to_string(layer_count) +
                                " layers (0-" + std::to_string(layer_count - 1) + ")");
  }
  for (int rank = 0; rank < world_size; ++rank) {
    if (served[rank] < 0) {
      throw std::invalid_argument("rank " + std::to_string(rank) +
                                  " serves no stage (every rank of the " +
                                  std::to_string(world_size) + " must serve one)");
    }
  }
}

namespace {
int64_t split_point(int64_t total, int parts, int index) { return total * index / parts; }
}  // namespace

SampleRange micro_batch_samples(int64_t global_batch, int micro_batches, int m) {
  return {split_point(global_batch, micro_batches, m),
          split_point(global_batch, micro_batches, m + 1)};
}

SampleRange replica_samples(int64_t samples, int replicas, int replica) {
  return {split_point(samples, replicas, replica), split_point(samples, replicas, replica + 1)};
}

std::vector<SliceTransfer> slice_transfers(int64_t samples, int source_replicas,
                                           int destination_replicas) {
  std::vector<SliceTransfer> transfers;
  for (int j = 0; j < source_replicas; ++j) {
    const SampleRange a = replica_samples(samples, source_replicas, j);
    for (int k = 0; k < destination_replicas; ++k) {
      const SampleRange b = replica_samples(samples, destination_replicas, k);
      const SampleRange overlap{std::max(a.begin, b.begin), std::min(a.end, b.end)};
      if (overlap.size() > 0) transfers.push_back({j, k, overlap});
    }
  }
  std::sort(transfers.begin(), transfers.end(),
            [](const auto& x, const auto& y) { return x.rows.begin < y.rows.begin; });
  return transfers;
}

std::pair<int, int> parse_layer_range(const std::string& text) {
  auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 6 ||
        !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); })) {
      throw std::invalid_argument("layer range '" + text +
                                  "' is not FIRST-LAST or one layer index (e.g. \"0-12\")");
    }
    return std::stoi(part);
  };
  const auto dash = text.find('-');
  if (dash == std::string::npos) {
    const int layer = number(text);
    return {layer, layer};
  }
  const int first = number(text.substr(0, dash));
  const int last = number(text.substr(dash + 1));
  if (last < first) {
    throw std::invalid_argument("layer range '" + text + "' ends before it starts");
  }
  return {first, last};
}

}  // namespace runtime
