// The figures of each kind for a results folder. A kind that does not fit the folder says why
// in `unfit` (one line) and draws nothing, rather than an empty chart.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/plot/gnuplot.h"
#include "harness/results/report_samples.h"

namespace harness {

struct FigureSet {
  std::vector<Figure> figures;
  std::string unfit;               // why the kind does not apply; "" when it does
  std::vector<std::string> notes;  // one line each: what was left out and why
};

// Latency (p50 line, p10-p90 band, p99 marks) vs ddp.bucket_mb, one line per system, one
// figure per phase and per combination of the other sweep coordinates.
FigureSet bucket_sweep_figures(const ResultSamples& samples);

// The same for every other numeric sweep axis with two or more values (bandwidth, batch,
// micro-batches, ...): one figure per axis, phase and combination of the other coordinates.
FigureSet sweep_figures(const ResultSamples& samples);

// Iteration latency (every phase) and the iteration's speedup over the slowest level against
// the inter-machine bandwidth of emulated machines (cluster.network.inter_machine.bandwidth,
// swept directly or inside a swept `cluster` map); points on one machine are not drawn.
FigureSet bandwidth_figures(const ResultSamples& samples);

// Iteration time and throughput vs run.world_size, one line per system.
FigureSet scaling_figures(const ResultSamples& samples);

// Empirical CDF of iteration latency, one line per system, one figure per point.
FigureSet cdf_figures(const ResultSamples& samples);

// Planner speedups vs global batch for the four strategies, one panel per plan.csv found
// under `directory` (a model, device layout and mode of a `kind: plan` run).
FigureSet planner_figures(const std::filesystem::path& directory, const std::string& experiment);

// Gantt chart of one traced iteration per run (trace_rank<r>.json in raw/<point>/<system>/
// rep<k>/): a row per rank and stage, compute and communication lanes, idle gaps.
FigureSet timeline_figures(const std::filesystem::path& directory, const std::string& experiment);

}  // namespace harness
