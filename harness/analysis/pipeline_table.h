// The study table of pipeline runs (`pipeline.md`, `pipeline.csv` beside table.md): per point
// and system, throughput, iteration latency percentiles, bubble fraction, peak activation
// memory, bytes sent and MFU -- from the raw files alone (rank<r>.csv and pipeline_rank<r>.json),
// so `harness report` rebuilds it. Data-parallel systems get a row too (no bubble, no
// stash), so DDP sits beside GPipe and DAPPLE.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/statistics.h"

namespace harness {

struct PipelineTableRow {
  std::string point_id;
  std::string point_label;
  std::string system;
  std::string layout;           // "2x2" (stages x replicas of the widest stage), "dp" for DDP
  std::string schedule;         // dapple | gpipe | "-" (DDP)
  long long micro_batches = 0;  // 0: not a pipeline
  long long global_batch = 0;
  SampleSummary iteration_ms;             // pooled over ranks, iterations and repeats
  double samples_per_s = 0;               // global batch / p50 iteration time
  std::optional<double> bubble_fraction;  // mean over ranks and iterations
  // The pipeline's own bubble, measured and as its schedule gives it (pipeline_bubble.h).
  std::optional<double> pipeline_bubble_fraction, schedule_bubble_fraction;
  std::optional<double> costed_bubble_fraction;  // mean over complete repeats
  std::optional<double> peak_activation_mib;     // max over ranks of the allocator's peak
  std::optional<double> mib_sent_per_iteration;  // mean per rank
  std::optional<double> mfu;  // model FLOPs utilisation (harness/results/model_flops.h)
};

// Rows of every complete run; empty when the folder has no pipeline system.
std::vector<PipelineTableRow> read_pipeline_table(const std::filesystem::path& run_directory);

std::string render_pipeline_markdown(const std::vector<PipelineTableRow>& rows);
std::string render_pipeline_csv(const std::vector<PipelineTableRow>& rows);

}  // namespace harness
