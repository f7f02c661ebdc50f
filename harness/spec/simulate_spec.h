// `kind: simulate` specs: what one point of a simulation study says (model profile, cluster,
// run, DDP and pipeline settings) and its systems, read by the same YAML reader, --set
// overrides and sweep expander as every other spec kind. Keys: simulator/README.md.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/spec/mesh_form.h"
#include "runtime/parallel/parallel_system.h"
#include "runtime/profile/layer_profiler.h"

namespace harness {

// A layer range's compute after a wait, as profile.json's after_idle measured it (`harness
// profile layers`): the range's median forward and backward after each idle gap (ms; gap 0,
// back to back, first).
struct AfterIdleSettings {
  int first_layer = 0;  // positions in the profile's layer order (its chain indexes)
  int last_layer = 0;
  std::vector<double> gap_ms, forward_ms, backward_ms;
};

struct ModelSettings {
  std::string profile;
  long long pbs = 0;
  long long batch_size = 0;  // per GPU: global batch = batch_size x world_size
  double step_ms = 0;
  double threads = 1;  // intra-op threads the profile was measured with (CPU profiles)
  // The tensor axis the profile's layers are slices of (profile.json's `tensor`, `harness
  // profile layers --tensor`; 1: whole layers), and whether the vocabulary was split too
  // (profile.json's `vocabulary_parallel`, `--vocabulary-parallel`).
  int tensor = 1;
  bool vocabulary_parallel = false;
  // Whether the slice's norms ran on token shards, where profile.json says (`harness profile
  // estimate --sequence-parallel`; a measured slice's norms are whole either way).
  std::optional<bool> sequence_parallel;
  // The blocks the profile recomputed (profile.json's `activation_checkpointing` and
  // `recompute_every`, `harness profile layers --activation-checkpointing`): none, full or
  // selective. Their backward times hold the recomputation; a tensor axis also repeats a fully
  // recomputed block's forward collectives. `model.activation_checkpointing`, where a spec
  // gives it, must be the profile's.
  std::string activation_checkpointing = "none";
  long long recompute_every = 1;
  // The zoo model and its tokens per sample the profile measured (profile.json's `model` and
  // `input_shape`; empty and 0 where it does not say): sequence parallelism's partial
  // gradients are priced from them.
  std::string zoo_model;
  long long tokens = 0;
  // `model.after_idle` (default true): the profile's after-idle timings, whole model or per
  // stage of a stage profile; empty where it has none or the spec turned them off.
  std::vector<AfterIdleSettings> after_idle;
  // A zero-bubble stage's I and W per chain layer (ms), where the profile timed the backward
  // split (profile.json's layers' backward_input and backward_weight medians: `harness profile
  // layers --split-backward`); empty where it did not.
  std::vector<double> backward_input_ms, backward_weight_ms;
  // What each chain layer keeps for backward (bytes at the profile batch), where profile.json
  // counts it (`harness profile estimate`'s layers' stored_bytes); empty: not known, and the
  // systems' memory_per_rank counts no activations.
  std::vector<double> stored_bytes;
  // What each chain layer's I holds until its W (profile.json's weight_pending_bytes, `harness
  // profile layers --split-backward`); empty: none counted.
  std::vector<double> weight_pending_bytes;
  // The most each chain layer's backward allocates above its start (profile.json's
  // backward_working_bytes); empty: not counted.
  std::vector<double> backward_working_bytes;
  // Each chain layer's mixtures of experts (profile.json's layers' `mixtures`; count 0: none),
  // what expert parallelism shards and exchanges; empty where no layer has one.
  std::vector<runtime::LayerMixtures> mixtures;
};

struct ClusterSettings {
  std::string topology;  // planner topology YAML; empty: planner/topologies/v100_8x2.yaml
  std::string comm_profile;
  long long gpus_per_machine = 0;  // 0: the topology's first machine
  std::optional<double> intra_bandwidth, inter_bandwidth, inter_p2p_bandwidth;
  std::optional<double> intra_latency_us, inter_latency_us;
  std::string collective = "ring";
  // Point-to-point streams across machines: "full" duplex, or "half" (both directions of a
  // pair share its rate, as Gloo's pairs do; simulator/cluster.h).
  std::string p2p_duplex = "full";
  // How a receiver's "ready" reaches a point-to-point sender: "separate" from the data (NCCL),
  // or "behind_sends", queued behind what the receiver already sends that peer on the one
  // connection of their pair (Gloo's TCP; simulator/cluster.h).
  std::string p2p_ready = "separate";
  // A rank's point-to-point sends: through "one" channel, one at a time, or "per_peer"
  // channels side by side (Gloo's TCP pairs, NCCL's peer channels; simulator/cluster.h).
  std::string p2p_sends = "one";
  // An emulated link's token bucket on each machine's way out, bytes (0: none; a real NIC).
  double inter_burst_bytes = 0;
  // What a burst from it costs: its latency (unset: inter_latency_us) and the host's own path
  // (unset: at once); the link probe's `burst` fit (simulator/cluster.h).
  std::optional<double> inter_burst_latency_us, inter_burst_bandwidth;
  // What passing the bucket adds to a longer transfer, microseconds (may be negative); the link
  // probe's `past_bucket_latency_us` (simulator/cluster.h).
  double inter_past_bucket_latency_us = 0;
  // Sharded systems' all-gathers and reduce-scatters as measured on their own (the link
  // probe's or comm_profile's fits): the whole op's latency, microseconds, and its bus
  // bandwidth, bytes/s; unset: priced as the all-reduce's steps.
  std::optional<double> gather_latency_us, gather_bandwidth, scatter_latency_us, scatter_bandwidth;
  // What a send call across machines holds its thread for when it writes its own message (its
  // receive posted): [bytes, microseconds] pairs, ascending; empty: free. The link probe's
  // `send_call_us` (simulator/cluster.h).
  std::vector<std::pair<double, double>> inter_send_call_us;
  // The same inside a machine; unset: a loopback comm profile's `handover` calls, else free.
  std::optional<std::vector<std::pair<double, double>>> intra_send_call_us;
  double cpu_cores = 0;  // per host, shared by its CPU ranks' compute; 0: not modelled
  // Consecutive machines of one host, sharing its cpu_cores (emulated machines of one host).
  long long machines_per_host = 1;
  // The share of a core a rank's communication threads keep busy while they move data; unset:
  // the comm profile's all-reduce measurement, else 1.
  std::optional<double> comm_cores_per_rank;
  // The same for a collective's steps inside a machine (the link probe's in-machine
  // all-reduce); unset: comm_cores_per_rank for every step.
  std::optional<double> intra_comm_cores_per_rank;
  // One pass of the gradient reducer over a bucket: bytes/s and a fixed cost (`harness profile
  // comm --ops copy`'s fit); unset: comm_profile's copy fit, else the passes are not priced.
  std::optional<double> bucket_copy_bandwidth, bucket_copy_latency_us;
};

struct RunSettings {
  long long world_size = 0;
  long long iterations = 10;
  long long repeats = 1;
  long long seed = 0;
  double noise_percent = 0;
  long long trace_ranks = 16;
};

struct PipelineSettings {
  long long micro_batches = 0;  // 0: the plan's
  std::string plan;             // plan.json, "auto", or empty (inline stages only)
  std::string schedule = "dapple";
};

struct PointSettings {
  ModelSettings model;
  ClusterSettings cluster;
  RunSettings run;
  double bucket_mb = 25, first_bucket_mb = 1;
  PipelineSettings pipeline;
};

struct InlineStage {
  std::vector<int> layer_positions;  // positions in the profile's topological order
  std::vector<int> ranks;            // empty: `replicas` consecutive ranks
  long long replicas = 0;
};

struct SystemSettings {
  std::string name;
  // ddp (also spelt dp), expert_parallel, pipeline, sharded or tensor_parallel: the train
  // spec's enumeration.
  runtime::SystemKind kind = runtime::SystemKind::kDdp;
  std::string mode = "overlap";
  // sharded: the ZeRO stage, unit and prefetch (a train spec's keys); pipeline: zero_stage,
  // how its stages' replicas hold them; expert_parallel: zero_stage, how the ranks hold the
  // dense part
  runtime::DataAxis data;
  runtime::TensorAxis tensor;  // tensor_parallel: the degree and sequence parallelism
  std::optional<double> bucket_mb;
  long long accumulation = 1;  // ddp: micro-batches whose gradients accumulate (simulated only)
  std::optional<std::string> schedule, plan;
  // Inline stages without ranks: the list is ranks x this many stages, placed as the schedule
  // places them (interleaved: stage c on rank c mod p; zbv: the V).
  int stages_per_rank = 1;
  std::optional<long long> micro_batches;
  std::vector<InlineStage> stages;
  // `stages: N`, as a train spec's: N stages cut where the profile's forward times balance
  // (balanced_stages), each an equal share of the world (of its tensor groups); 0: none.
  int balanced_stage_count = 0;
  // Written as a device mesh (harness/spec/mesh_form.h): its data degree checked at each point.
  std::optional<MeshDegrees> mesh;
  std::string where;  // spec location, for errors found while simulating
};

struct SimPoint {
  std::string id, label;
  std::vector<std::pair<std::string, std::string>> coordinates;
  PointSettings settings;
};

struct SimulateSpec {
  std::string name, output;
  std::vector<SystemSettings> systems;
  std::string baseline;
  std::vector<SimPoint> points;
  std::vector<std::string> plots;
  YAML::Node resolved;
};

// Paths (inside the simulate map) a sweep may vary.
const std::vector<std::string>& simulate_sweepable();

// Validates the whole spec (InputError with file:line:column) and expands its sweep.
SimulateSpec read_simulate_spec(const std::string& spec_path, YAML::Node root,
                                const std::vector<std::string>& overrides);

}  // namespace harness
