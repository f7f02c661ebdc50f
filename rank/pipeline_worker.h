// The rank program of a pipeline system (system kind "pipeline" in the worker's config):
// builds the model, runs this rank's stage for warm-up + measured iterations, and writes
// rank<r>.csv (the samples every system writes), pipeline_rank<r>.json (per-iteration stage
// metrics) and trace_rank<r>.json (one traced iteration). Called by worker.cpp once the
// rendezvous is done.
#pragma once

#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <optional>
#include <string>

#include "rank/rank_device.h"
#include "runtime/comm/communicator.h"
#include "runtime/models/model_zoo.h"
#include "runtime/protocol/fault_injection.h"
#include "runtime/protocol/worker_config.h"

namespace runtime {

struct RankContext {
  int rank = 0;
  int world_size = 1;
  std::string out_dir;
  c10::intrusive_ptr<c10d::Store> store;
  Communicator* world = nullptr;
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  std::optional<Fault> fault;
  // The address the world's Gloo listens on; a stage's replica group listens there too (on
  // emulated or real machines, loopback is no address the other replicas can reach).
  std::string gloo_host = "127.0.0.1";
};

// The model section of a worker config as the zoo's options; both the data-parallel and the
// pipeline rank build their model from it. With a tensor axis, the options of its slice `slice`.
ModelOptions model_options_from(const WorkerModel& model, const TensorAxis& tensor = {},
                                int slice = 0);

// Trains on `device` (its model, batch and stage; the replicas' group on its backend); the
// caller gathers the result files and synchronises the ranks after.
void run_pipeline_rank(const WorkerConfig& config, const RankContext& context,
                       const RankDevice& device);

}  // namespace runtime
