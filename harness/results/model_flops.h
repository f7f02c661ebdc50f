// Model FLOPs per rank and iteration, and what they make of measured times: achieved GFLOP/s
// and MFU (model FLOPs utilisation) against the machine's measured fp32 GEMM peak.
//
// The rule: a training iteration does 3x the forward FLOPs (backward computes gradients for
// inputs and for weights) of the samples a rank processes: its batch under data parallelism;
// under a pipeline, its stage's layers for the global batch's share of its replica (global
// batch / the stage's replicas). Forward FLOPs are the matrix products and convolutions
// LibTorch runs (runtime/models/flop_count.h). A rank's peak is the one-core GEMM figure x its
// threads_per_rank (capped at the all-core figure).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/models/model_catalog.h"
#include "runtime/pipeline/pipeline_layout.h"

namespace harness {

// FLOPs each rank does per iteration; `stages` empty for data parallelism. Where a tensor axis of
// `tensor` ranks splits the stages' layers, a stage's `ranks` are tensor groups (group g: ranks
// g·tensor..g·tensor+tensor-1, runtime/parallel/device_mesh.h), each of whose ranks does 1/tensor
// of the group's share. (Under tensor parallelism without a pipeline a group trains batch_size x
// tensor samples, so each rank's share is the data-parallel rank's.)
std::vector<double> rank_iteration_flops(const std::vector<double>& layer_forward_flops,
                                         long long batch_size, long long world_size,
                                         const std::vector<runtime::StageAssignment>& stages,
                                         int tensor = 1);

// The FLOPs each rank's hardware does per iteration where backward runs forward work again
// (activation checkpointing): the model's, plus `recomputed_forward_flops` per sample per layer
// once more (PaLM's hardware FLOPs). In chain order; a shorter list leaves the rest out.
std::vector<double> hardware_iteration_flops(const std::vector<double>& layer_forward_flops,
                                             const std::vector<double>& recomputed_forward_flops,
                                             long long batch_size, long long world_size,
                                             const std::vector<runtime::StageAssignment>& stages,
                                             int tensor = 1);

// What backward runs again per sample, layer by layer, under `model.activation_checkpointing`:
// "full", the forward of every layer runtime::recomputed_layers names (the first of each `every`);
// "selective", each transformer block's attention core, 4 s^2 h (its two products of s x s x h
// multiply-adds, s tokens of width h); "none", nothing (an empty list).
std::vector<double> recomputed_forward_flops(const std::string& recompute, const std::string& model,
                                             int64_t depth, const runtime::MoeShape& moe,
                                             int64_t tokens, int64_t width,
                                             const std::vector<double>& layer_forward_flops,
                                             int64_t every = 1);

// flops.json of a run's raw folder: the rule, the per-layer forward FLOPs per sample, the
// iteration FLOPs per rank, and the hardware's where they differ (recomputation; empty: none).
nlohmann::json flops_json(const std::vector<double>& layer_forward_flops,
                          const std::vector<double>& rank_flops,
                          const std::vector<double>& hardware_rank_flops = {});

// The per-rank peak GFLOP/s of env.json's machine figures in the math the ranks ran in
// (`precision`, the model's: fp32, tf32 or bf16): on the CPU the GEMM of that dtype for
// `threads_per_rank` threads; for ranks on GPUs (env.json's device cuda) GPU 0's GEMM in that
// math, divided among the ranks that share a GPU. Nothing when env.json has no such figure (a
// CPU has no tf32).
std::optional<double> rank_peak_gflops(const nlohmann::json& env, const std::string& precision);

// The precision a system's config.json trained in (its model's; fp32 where it names none).
std::string trained_precision(const nlohmann::json& system_config);

// Tokens per second of the whole run (every rank's batch: model.batch_size x tokens per sample
// x `world_size`) over the iteration p50, for a model that reads tokens (the zoo's bert,
// bert_moe, llama); nothing for other models or a config.json that does not say.
std::optional<double> tokens_per_second(const nlohmann::json& system_config, long long world_size,
                                        double iteration_p50_ms);

struct Utilisation {
  double flops_per_rank = 0;    // mean over ranks, per iteration
  double iteration_p50_ms = 0;  // pooled over ranks and repeats
  double gflops_per_rank = 0;   // mean over ranks of their FLOPs / p50
  std::optional<double> mfu;    // gflops_per_rank / peak; nothing without machine figures
  // The hardware's FLOPs (recomputation counted) over the same peak, where flops.json has them.
  std::optional<double> hfu;
  std::optional<double> peak_gflops_per_rank;
  std::string precision = "fp32";  // the math of the peak: the model's precision
  size_t samples = 0;              // iteration samples the p50 rests on
};

// A system's utilisation as the results tables give it: from its flops.json and iteration
// samples against env.json's peak in the precision its config.json trained in (no MFU where
// env.json has no such peak); nothing when flops or samples are missing.
std::optional<Utilisation> system_utilisation(const nlohmann::json& env,
                                              const nlohmann::json& flops,
                                              const nlohmann::json& system_config,
                                              const std::vector<double>& iteration_ms);

// From a system's flops.json and its iteration samples; nothing when either is missing.
std::optional<Utilisation> utilisation(const nlohmann::json& flops,
                                       const std::vector<double>& iteration_ms,
                                       std::optional<double> peak_gflops_per_rank);

}  // namespace harness
