// Pipeline parallelism: stages of layers, each run data-parallel on its ranks (replicas split
// every micro-batch), micro-batches flowing forward through the stages and gradients back in the
// order of the runtime's own schedule (runtime/pipeline/layout_schedule.h: GPipe, DAPPLE's 1F1B,
// interleaved 1F1B, ZB-H1, ZB-V or a schedule CSV; a rank may hold several stages), then every
// rank all-reduces its gradients over its replicas and steps. The execution model of the
// planner's plan.json.
#pragma once

#include <string>
#include <vector>

#include "runtime/pipeline/pipeline_schedule.h"
#include "simulator/cluster.h"
#include "simulator/layer_costs.h"
#include "simulator/system_result.h"
#include "simulator/tensor_collectives.h"

namespace harness::simulator {

// The runtime's schedules (runtime/pipeline/pipeline_schedule.h): a simulated rank runs exactly
// the action list a real one does.
using PipelineSchedule = runtime::PipelineSchedule;

struct PipelineStage {
  std::vector<int> layers;  // layer indices (LayerCosts)
  std::vector<int> ranks;   // its replicas (tensor groups under a tensor axis); stages of one
                            // rank list the same ones
};

struct PipelineSystem {
  std::vector<PipelineStage> stages;
  PipelineSchedule schedule = PipelineSchedule::kDapple;
  std::string schedule_csv;  // the CSV's text, for PipelineSchedule::kCsv
  int micro_batches = 1;
  // I's share of a stage's backward where the schedule splits it (W the rest) and the profile
  // did not time the split (LayerCosts::backward_input_s): a linear layer's input and weight
  // gradients cost a matmul each.
  double backward_input_share = 0.5;
  double global_batch = 1;  // samples per iteration over the whole pipeline
  double step_s = 0;        // the whole model's optimizer step; a stage runs its parameters' share
  // How a stage's replicas hold it (baselines/sharded/replica_shards.h): 0 whole; 1 gradients
  // all-reduced, each replica steps its chunk, the chunks all-gathered; 2 the same with the
  // gradients reduce-scattered; 3 (FSDP, gathered once per iteration) priced as 2.
  int zero_stage = 0;
  // A tensor axis inside the stages (a train spec's pipeline `tensor`): the stages' `ranks` are
  // tensor groups, group g being ranks g·tensor..g·tensor+tensor-1, and slice j of every group
  // runs the pipeline with slice j of the others, summing its gradients over its replicas. The
  // profile's layers are one slice's (`harness profile layers --tensor`); each split block's
  // passes wait in Megatron's collectives on its group (simulator/tensor_collectives.h), its
  // I the input gradient's and its W the norms' partial gradients'. Under sequence parallelism a
  // stage hands on 1/tensor of an activation between split blocks (the token shards).
  int tensor = 1;
  SplitBlockComm tensor_comm;
  // Full recomputation of the first of each `recompute_every` split blocks (0: none): a
  // recomputed block's backward waits in its forward's collectives first.
  int recompute_every = 0;
};

// Checks the stages against the profile and the world: every layer in exactly one stage, no
// edge from a later stage to an earlier one, ranks (groups) below `world` (over the tensor
// degree), a rank in several stages only with the same replicas, a tensor axis only over a
// profile with blocks to split. Throws std::invalid_argument with the reason.
void validate_pipeline(const LayerCosts& costs, const PipelineSystem& system, int world);

// Bytes (at the profile batch) crossing the boundary after stage s: the output activations of
// layers in stages <= s that feed a layer in a later stage.
std::vector<double> boundary_bytes(const LayerCosts& costs, const PipelineSystem& system);

// Each stage's pipeline position (stages with the same ranks share one) and the schedule the
// system runs, with its sends and receives: the runtime's own (layout_schedule.h).
std::vector<int> stage_positions(const PipelineSystem& system);
runtime::ScheduleTable pipeline_schedule_of(const PipelineSystem& system);

SimulatedIteration simulate_pipeline(const Cluster& cluster, const LayerCosts& costs,
                                     const PipelineSystem& system, int world, ComputeNoise& noise);

}  // namespace harness::simulator
