#include "runtime/parallel/device_mesh.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace runtime {
namespace {

std::string rank_list(const std::vector<int>& ranks) {
  std::string text = "[";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text + "]";
}

// What the data group runs, in the system's own words.
std::string data_collectives(const ParallelSystem& system) {
  const int zero = system.data.zero_stage;
  const std::string sums = zero == 0   ? "all-reduces in"
                           : zero == 1 ? "all-reduces and all-gathers in"
                                       : "reduce-scatters and all-gathers in";
  return system.experts ? "all-to-all and " + sums : sums;
}

// The ranks of stage c + 1 that replica `replica` of stage c hands its rows to.
std::vector<int> next_stage_ranks(const PipelineAxis& pipeline, int c, int replica, int64_t rows) {
  const auto& here = pipeline.stages[c].ranks;
  const auto& next = pipeline.stages[c + 1].ranks;
  std::vector<int> ranks;
  for (const SliceTransfer& t :
       slice_transfers(rows, static_cast<int>(here.size()), static_cast<int>(next.size()))) {
    if (t.source_replica == replica) ranks.push_back(next[t.destination_replica]);
  }
  return ranks;
}

DeviceMesh pipeline_mesh(const PipelineAxis& pipeline, int world, int64_t global_batch) {
  const PipelineLayout layout{pipeline.stages};
  DeviceMesh mesh;
  mesh.pipeline = layout.position_count();
  mesh.data = static_cast<int>(pipeline.stages.front().ranks.size());
  const std::vector<int> positions = layout.stage_positions();
  for (int rank = 0; rank < world; ++rank) {
    MeshPlace place{rank, positions[layout.stage_of(rank)], layout.replica_of(rank), {}, {}, 0, {}};
    place.data_group = pipeline.stages[layout.stage_of(rank)].ranks;
    const int64_t rows = micro_batch_samples(global_batch, pipeline.micro_batches, 0).size();
    std::set<int> next;
    for (int c : layout.stages_of(rank)) {
      if (c + 1 >= layout.stage_count()) continue;
      for (int r : next_stage_ranks(pipeline, c, place.data, rows)) {
        if (r != rank) next.insert(r);
      }
    }
    place.sends_to.assign(next.begin(), next.end());
    mesh.places.push_back(std::move(place));
  }
  return mesh;
}

// The world's tensor groups (the world itself without a tensor axis).
int tensor_groups(const ParallelSystem& system, int world) {
  const int t = system.tensor.degree;
  if (world % t != 0) {
    throw std::invalid_argument("a tensor axis of " + std::to_string(t) + " does not divide " +
                                std::to_string(world) + " ranks");
  }
  return world / t;
}

// The tensor group `group`'s ranks.
std::vector<int> tensor_group_ranks(int group, int t) {
  std::vector<int> ranks;
  for (int j = 0; j < t; ++j) ranks.push_back(rank_at({group, j}, t));
  return ranks;
}

// Replica d is tensor group d: its slices split its layers together; slice j of every replica
// sums (or shards) its gradients with the others'.
DeviceMesh tensor_mesh(const ParallelSystem& system, int world) {
  const int t = system.tensor.degree;
  DeviceMesh mesh;
  mesh.data = tensor_groups(system, world);
  mesh.tensor = t;
  for (int rank = 0; rank < world; ++rank) {
    const TensorSeat seat = tensor_seat(rank, t);
    MeshPlace place{rank, 0, seat.group, {}, {}, seat.slice, tensor_group_ranks(seat.group, t)};
    for (int d = 0; d < mesh.data; ++d) place.data_group.push_back(rank_at({d, seat.slice}, t));
    mesh.places.push_back(std::move(place));
  }
  return mesh;
}

// A pipeline mesh over tensor groups, spread over their ranks: pipeline rank v is tensor group
// v; slice j of a group sends to, and sums with, slice j of the others.
DeviceMesh split_over_tensor_axis(const DeviceMesh& groups, int t) {
  DeviceMesh mesh = groups;
  mesh.tensor = t;
  mesh.places.clear();
  const auto slice_ranks = [t](const std::vector<int>& group_ranks, int j) {
    std::vector<int> ranks;
    for (int v : group_ranks) ranks.push_back(rank_at({v, j}, t));
    return ranks;
  };
  for (const MeshPlace& group : groups.places) {
    for (int j = 0; j < t; ++j) {
      MeshPlace place = group;
      place.rank = rank_at({group.rank, j}, t);
      place.data_group = slice_ranks(group.data_group, j);
      place.sends_to = slice_ranks(group.sends_to, j);
      place.tensor = j;
      place.tensor_group = tensor_group_ranks(group.rank, t);
      mesh.places.push_back(std::move(place));
    }
  }
  return mesh;
}

std::string tensor_collectives(const ParallelSystem& system) {
  return system.tensor.sequence_parallel ? "all-gathers and reduce-scatters" : "all-reduces";
}

}  // namespace

TensorSeat tensor_seat(int rank, int degree) { return {rank / degree, rank % degree}; }

int rank_at(TensorSeat seat, int degree) { return seat.group * degree + seat.slice; }

DeviceMesh device_mesh(const ParallelSystem& system, int world, int64_t global_batch) {
  if (world < 1) throw std::invalid_argument("a mesh needs at least one rank");
  if (system.pipeline && !system.pipeline->stages.empty()) {
    const DeviceMesh groups =
        pipeline_mesh(*system.pipeline, tensor_groups(system, world), global_batch);
    return system.tensor.split() ? split_over_tensor_axis(groups, system.tensor.degree) : groups;
  }
  if (system.pipeline) throw std::invalid_argument("the pipeline's stages are not placed yet");
  if (system.tensor.split()) return tensor_mesh(system, world);
  DeviceMesh mesh;
  mesh.data = world;
  mesh.experts = system.experts;
  std::vector<int> everyone(world);
  for (int r = 0; r < world; ++r) everyone[r] = r;
  for (int r = 0; r < world; ++r) mesh.places.push_back({r, 0, r, everyone, {}, 0, {}});
  return mesh;
}

std::string describe_mesh(const ParallelSystem& system, const DeviceMesh& mesh, int ranks) {
  std::string text = "      mesh: pipeline " + std::to_string(mesh.pipeline) + " x data " +
                     std::to_string(mesh.data) +
                     (mesh.tensor > 1 ? " x tensor " + std::to_string(mesh.tensor) : "") +
                     (mesh.experts ? " (experts over data)" : "") + "\n";
  const int shown = std::min(ranks, static_cast<int>(mesh.places.size()));
  for (int i = 0; i < shown; ++i) {
    const MeshPlace& place = mesh.places[i];
    std::vector<std::string> meets;
    if (place.data_group.size() > 1) {
      meets.push_back(data_collectives(system) + " " + rank_list(place.data_group));
    }
    if (!place.tensor_group.empty()) {
      const char* what = system.tensor.vocabulary_parallel ? "layers and the vocabulary" : "layers";
      meets.push_back(std::string("splits ") + what + " with " + rank_list(place.tensor_group) +
                      " (" + tensor_collectives(system) + ")");
    }
    if (!place.sends_to.empty()) meets.push_back("sends to " + rank_list(place.sends_to));
    if (meets.empty()) meets.push_back("alone");
    text += "        rank " + std::to_string(place.rank) + " (pipeline " +
            std::to_string(place.pipeline) + ", data " + std::to_string(place.data) +
            (mesh.tensor > 1 ? ", tensor " + std::to_string(place.tensor) : "") + "): ";
    for (size_t m = 0; m < meets.size(); ++m) text += (m ? "; " : "") + meets[m];
    text += "\n";
  }
  if (shown < static_cast<int>(mesh.places.size())) {
    text += "        ... " + std::to_string(mesh.places.size() - shown) + " more ranks\n";
  }
  return text;
}

}  // namespace runtime
