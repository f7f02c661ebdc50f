#include "harness/analysis/utilisation_table.h"

#include <algorithm>
#include <cstdio>

namespace harness {

std::string render_utilisation_markdown(const RunSummary& summary) {
  std::string out;
  char row[512];
  for (const auto& point : summary.points) {
    std::string rows;
    std::optional<double> peak;
    std::string precision;
    // A point of a model that reads tokens adds tokens/s, in all and per rank.
    const bool tokens = std::any_of(point.systems.begin(), point.systems.end(),
                                    [](const SystemSummary& s) { return s.tokens_per_s; });
    for (const auto& system : point.systems) {
      const auto& u = system.utilisation;
      if (!u) continue;
      if (u->peak_gflops_per_rank) {
        peak = u->peak_gflops_per_rank;
        precision = u->precision;
      }
      char mfu[32] = "-";
      if (u->mfu) std::snprintf(mfu, sizeof mfu, "%.1f", *u->mfu * 100);
      std::snprintf(row, sizeof row, "| %s | %.3f | %.3f | %.2f | %s | %zu |", system.name.c_str(),
                    u->flops_per_rank / 1e9, u->iteration_p50_ms, u->gflops_per_rank, mfu,
                    u->samples);
      rows += row;
      if (tokens) {
        std::snprintf(row, sizeof row, " %.0f | %.0f |", system.tokens_per_s.value_or(0),
                      system.tokens_per_s_per_rank().value_or(0));
        rows += row;
      }
      rows += "\n";
    }
    if (rows.empty()) continue;
    out += "### " + summary.manifest.experiment + ": " + point.point.label +
           " - compute utilisation\n\n";
    if (peak) {
      std::snprintf(row, sizeof row,
                    "Per rank: model FLOPs per iteration (3 x forward), iteration p50, achieved "
                    "GFLOP/s, MFU against the measured %s GEMM peak of a rank (%.1f GFLOP/s: "
                    "its cores', or its share of its GPU's; env.json).\n\n",
                    precision.c_str(), *peak);
      out += row;
    } else {
      out +=
          "Per rank: model FLOPs per iteration (3 x forward), iteration p50, achieved "
          "GFLOP/s; no MFU: env.json has no machine figure for the math the ranks ran in "
          "(harness machine measures fp32, and bf16 where the CPU has it; GPUs: fp32, tf32, "
          "bf16).\n\n";
    }
    if (tokens) {
      out +=
          "tokens/s: every rank's batch of tokens (model.batch_size x tokens x ranks) over the "
          "iteration p50; per rank, that over the ranks.\n\n";
    }
    out += "| system | GFLOP / iteration | p50 ms | GFLOP/s | MFU % | samples |";
    out += tokens ? " tokens/s | tokens/s per rank |\n" : "\n";
    out += "|---|---:|---:|---:|---:|---:|" + std::string(tokens ? "---:|---:|" : "") + "\n" +
           rows + "\n";
  }
  return out;
}

}  // namespace harness
