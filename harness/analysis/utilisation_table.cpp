#include "harness/analysis/utilisation_table.h"

#include <cstdio>

namespace harness {

std::string render_utilisation_markdown(const RunSummary& summary) {
  std::string out;
  char row[512];
  for (const auto& point : summary.points) {
    std::string rows;
    std::optional<double> peak;
    std::string precision;
    for (const auto& system : point.systems) {
      const auto& u = system.utilisation;
      if (!u) continue;
      if (u->peak_gflops_per_rank) {
        peak = u->peak_gflops_per_rank;
        precision = u->precision;
      }
      char mfu[32] = "-";
      if (u->mfu) std::snprintf(mfu, sizeof mfu, "%.1f", *u->mfu * 100);
      std::snprintf(row, sizeof row, "| %s | %.3f | %.3f | %.2f | %s | %zu |\n",
                    system.name.c_str(), u->flops_per_rank / 1e9, u->iteration_p50_ms,
                    u->gflops_per_rank, mfu, u->samples);
      rows += row;
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
    out += "| system | GFLOP / iteration | p50 ms | GFLOP/s | MFU % | samples |\n";
    out += "|---|---:|---:|---:|---:|---:|\n" + rows + "\n";
  }
  return out;
}

}  // namespace harness
