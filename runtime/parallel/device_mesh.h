// Where each rank of a system sits on its device mesh and whom it meets there: its coordinate
// on every axis the system has, and the groups its collectives and sends run in. The rank order
// is torchtitan's: pipeline outermost, then data (a pipeline position's replicas are
// consecutive ranks for `stages: N`), then tensor; an inline layout places ranks itself, and the
// mesh reads them from it. With a tensor axis of t, a pipeline's layout places tensor groups:
// its rank v is ranks v x t ... v x t + t - 1. Torch-free: `--dry-run` prints it before any rank
// starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/parallel/parallel_system.h"

namespace runtime {

struct MeshPlace {
  int rank = 0;
  int pipeline = 0;  // the pipeline position (0 without a pipeline axis)
  int data = 0;      // the replica index among the ranks that hold the same parameters
  // The ranks it sums (or shards) its data axis's gradients with, itself included.
  std::vector<int> data_group;
  // The ranks of the next pipeline stages it sends its rows of each micro-batch to (the replica
  // mapping of runtime/pipeline/pipeline_layout.h).
  std::vector<int> sends_to;
  // The tensor axis: this rank's slice of each split layer, and the ranks that hold the others
  // (consecutive ranks: torchtitan's order puts the tensor axis innermost). Empty without it.
  int tensor = 0;
  std::vector<int> tensor_group;
};

struct DeviceMesh {
  int pipeline = 1;  // degrees: positions x replicas of the first stage (its layout's shape)
  int data = 1;
  int tensor = 1;
  bool experts = false;           // the expert axis spans the data ranks
  std::vector<MeshPlace> places;  // by rank
};

// Where a rank sits beside a tensor axis of `degree`, innermost in torchtitan's order: slice
// `slice` of tensor group `group`, the group being ranks group x degree .. group x degree +
// degree - 1. The one statement of that rule for the mesh and the ranks that build its groups.
struct TensorSeat {
  int group = 0;
  int slice = 0;
};
TensorSeat tensor_seat(int rank, int degree);
int rank_at(TensorSeat seat, int degree);

// The mesh of `system` over `world` ranks training on `global_batch` samples; a pipeline axis
// must hold its stages (placed ranks) and micro-batches. Throws std::invalid_argument for a
// layout that leaves a rank out.
DeviceMesh device_mesh(const ParallelSystem& system, int world, int64_t global_batch);

// "mesh: pipeline 2 x data 2" and a line per rank ("rank 0 (pipeline 0, data 0): all-reduces in
// [0, 1]; sends to [2]"), the collectives named as the system runs them; at most `ranks` ranks
// listed, then how many more.
std::string describe_mesh(const ParallelSystem& system, const DeviceMesh& mesh, int ranks = 8);

}  // namespace runtime
