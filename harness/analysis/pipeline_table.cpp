#include "harness/analysis/pipeline_table.h"
#include "harness/results/model_flops.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/json_file.h"
#include "common/text_util.h"
#include "harness/analysis/pipeline_bubble.h"
#include "harness/results/report_samples.h"
#include "harness/results/run_manifest.h"
#include "harness/results/run_status.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::optional<json> read_json(const fs::path& path) {
  const std::optional<std::string> text = read_input_file(path);
  if (!text) return std::nullopt;
  try {
    return parse_json(*text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

std::string optional_text(const std::optional<double>& value, int digits, double scale = 1) {
  return value ? format_fixed(*value * scale, digits) : "-";
}

std::string percent(const std::optional<double>& fraction) {
  return fraction ? format_fixed(*fraction * 100, 1) + "%" : "-";
}

// A system without a pipeline is named by its kind (ddp, sharded, tensor_parallel, ...).
std::string kind_layout(const json& config) {
  if (!config.is_object() || !config.contains("system") || !config["system"].is_object()) {
    return "dp";
  }
  return config["system"].value("kind", "dp");
}

// What the ranks' pipeline_rank<r>.json files add up to over a system's complete repeats.
struct RankSums {
  double bubble = 0, sent = 0, peak_activation_bytes = 0;
  long long bubble_count = 0, sent_count = 0;
  long long widest = 1;  // replicas of the most replicated stage
};

// One rank's file: the row's schedule and layout, its iterations into the sums.
void add_pipeline_rank(const json& info, PipelineTableRow& row, RankSums& sums) {
  row.schedule = info.value("schedule", "-");
  row.micro_batches = info.value("micro_batches", 0LL);
  row.global_batch = info.value("global_batch", row.global_batch);
  sums.widest = std::max(sums.widest, info.value("replicas", 1LL));
  const long long tensor = info.value("tensor", 1LL);
  row.layout = std::to_string(info.value("stages", 1LL)) + "x" + std::to_string(sums.widest) +
               (tensor > 1 ? "x" + std::to_string(tensor) : "");
  for (const auto& it : info.at("iterations")) {
    const double total = it.value("iteration_ms", 0.0);
    if (total > 0) {
      sums.bubble += it.value("bubble_ms", 0.0) / total;
      ++sums.bubble_count;
    }
    sums.sent += it.value("bytes_sent", 0.0);
    ++sums.sent_count;
    sums.peak_activation_bytes =
        std::max(sums.peak_activation_bytes, it.value("peak_allocated_bytes", 0.0));
  }
}

}  // namespace

std::vector<PipelineTableRow> read_pipeline_table(const fs::path& run_directory) {
  const ResultSamples samples = read_result_samples(run_directory);
  const json env = read_json(run_directory / "env.json").value_or(json::object());
  std::vector<PipelineTableRow> rows;
  bool any_pipeline = false;
  for (const auto& point : samples.points) {
    for (const auto& system : point.systems) {
      PipelineTableRow row;
      row.point_id = point.point.id;
      row.point_label = point.point.label;
      row.system = system.name;
      row.layout = kind_layout(system.config);
      row.schedule = "-";
      const auto iteration = system.phases.find("iteration");
      if (iteration == system.phases.end() || iteration->second.empty()) continue;
      row.iteration_ms = summarize(iteration->second);
      // External systems' configs have no model section; their throughput stays unknown.
      if (system.config.is_object() && system.config.contains("model") &&
          system.config["model"].is_object()) {
        row.global_batch = system.config["model"].value("batch_size", 0LL) * point.point.world_size;
      }
      // The pipeline metrics of every complete repeat, every rank.
      RankSums sums;
      double pipeline_bubble_sum = 0, costed_sum = 0;
      long long pipeline_bubble_runs = 0, costed_runs = 0;
      for (long long repeat = 0; repeat < point.point.repeats; ++repeat) {
        const fs::path raw = run_raw_directory(run_directory, point.point.id, system.name, repeat);
        if (read_run_outcome(raw) != RunOutcome::kComplete) continue;
        std::vector<json> run_ranks;
        for (long long rank = 0; rank < point.point.world_size; ++rank) {
          const auto info = read_json(raw / ("pipeline_rank" + std::to_string(rank) + ".json"));
          if (!info) continue;
          run_ranks.push_back(*info);
          any_pipeline = true;
          add_pipeline_rank(*info, row, sums);
        }
        if (run_ranks.empty()) continue;
        if (const auto measured = measured_pipeline_bubble(run_ranks)) {
          pipeline_bubble_sum += *measured;
          ++pipeline_bubble_runs;
        }
        if (!row.schedule_bubble_fraction)
          row.schedule_bubble_fraction = schedule_bubble(run_ranks);
        if (const auto costed = costed_schedule_bubble(run_ranks)) {
          costed_sum += *costed;
          ++costed_runs;
        }
      }
      if (costed_runs > 0)
        row.costed_bubble_fraction = costed_sum / static_cast<double>(costed_runs);
      if (pipeline_bubble_runs > 0) {
        row.pipeline_bubble_fraction =
            pipeline_bubble_sum / static_cast<double>(pipeline_bubble_runs);
      }
      if (sums.bubble_count > 0) row.bubble_fraction = sums.bubble / sums.bubble_count;
      if (sums.sent_count > 0) {
        row.mib_sent_per_iteration = sums.sent / sums.sent_count / (1024.0 * 1024.0);
      }
      if (sums.peak_activation_bytes > 0) {
        row.peak_activation_mib = sums.peak_activation_bytes / (1024.0 * 1024.0);
      }
      if (row.global_batch > 0 && row.iteration_ms.p50 > 0) {
        row.samples_per_s = row.global_batch / (row.iteration_ms.p50 / 1000.0);
      }
      if (const auto u = system_utilisation(env, system.flops, system.config, iteration->second)) {
        row.mfu = u->mfu;
      }
      rows.push_back(row);
    }
  }
  if (!any_pipeline) rows.clear();
  return rows;
}

std::string render_pipeline_markdown(const std::vector<PipelineTableRow>& rows) {
  std::string text =
      "## Pipeline study\n\n"
      "Layout = stages x replicas (x tensor slices, where a tensor axis splits each stage's "
      "layers); a system without a pipeline, its kind. Throughput = global batch / p50 iteration "
      "time. Bubble = share of a rank's "
      "iteration spent "
      "neither computing (forward, backward, step) nor all-reducing (waiting on send/recv counts "
      "as bubble), mean over ranks and iterations. Peak activations = the largest per-iteration "
      "peak of memory allocated on the rank's device (the CPU or its GPU) above the iteration's "
      "start on any rank. n = samples the "
      "percentiles rest on (ranks x iterations x repeats). MFU = model FLOPs per rank / p50 / the "
      "rank's measured GEMM peak, mean over ranks (table.md's compute utilisation). Pipeline "
      "bubble = a rank's idle share of the pipeline's span (first compute on any rank to the last "
      "compute on any rank, the all-reduce and step left out), mean over ranks and iterations; "
      "schedule's = the same from the schedule's action lists at F = I = W (free links); at run's "
      "costs = the lists at each rank's measured mean F, I and W (free links).\n\n"
      "| point | system | layout | schedule | micro-batches | samples/s | p50 ms | p90 ms | p99 ms "
      "| n | bubble | pipeline bubble | schedule's bubble | at run's costs | peak activations MiB "
      "| MiB sent/iter | MFU |\n"
      "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& row : rows) {
    text += "| " + row.point_id + " " + row.point_label + " | " + row.system + " | " + row.layout +
            " | " + row.schedule + " | " +
            (row.micro_batches > 0 ? std::to_string(row.micro_batches) : std::string("-")) + " | " +
            format_fixed(row.samples_per_s, 1) + " | " + format_fixed(row.iteration_ms.p50, 1) +
            " | " + format_fixed(row.iteration_ms.p90, 1) + " | " +
            format_fixed(row.iteration_ms.p99, 1) + " | " + std::to_string(row.iteration_ms.count) +
            " | " + percent(row.bubble_fraction) + " | " + percent(row.pipeline_bubble_fraction) +
            " | " + percent(row.schedule_bubble_fraction) + " | " +
            percent(row.costed_bubble_fraction) + " | " +
            optional_text(row.peak_activation_mib, 1) + " | " +
            optional_text(row.mib_sent_per_iteration, 2) + " | " +
            (row.mfu ? format_fixed(*row.mfu * 100, 1) + "%" : std::string("-")) + " |\n";
  }
  return text;
}

std::string render_pipeline_csv(const std::vector<PipelineTableRow>& rows) {
  std::string text =
      "point,label,system,layout,schedule,micro_batches,global_batch,samples_per_s,p50_ms,p90_ms,"
      "p99_ms,n,bubble_fraction,peak_activation_mib,mib_sent_per_iteration,mfu,"
      "pipeline_bubble_fraction,schedule_bubble_fraction,costed_bubble_fraction\n";
  for (const auto& row : rows) {
    text += row.point_id + ",\"" + row.point_label + "\"," + row.system + "," + row.layout + "," +
            row.schedule + "," + std::to_string(row.micro_batches) + "," +
            std::to_string(row.global_batch) + "," + format_fixed(row.samples_per_s, 3) + "," +
            format_fixed(row.iteration_ms.p50, 3) + "," + format_fixed(row.iteration_ms.p90, 3) +
            "," + format_fixed(row.iteration_ms.p99, 3) + "," +
            std::to_string(row.iteration_ms.count) + "," + optional_text(row.bubble_fraction, 4) +
            "," + optional_text(row.peak_activation_mib, 3) + "," +
            optional_text(row.mib_sent_per_iteration, 4) + "," + optional_text(row.mfu, 4) + "," +
            optional_text(row.pipeline_bubble_fraction, 4) + "," +
            optional_text(row.schedule_bubble_fraction, 4) + "," +
            optional_text(row.costed_bubble_fraction, 4) + "\n";
  }
  return text;
}

}  // namespace harness
