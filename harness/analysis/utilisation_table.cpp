#include "harness/analysis/utilisation_table.h"

#include <algorithm>
#include <cstdio>

namespace harness {
namespace {

// The optional columns of a point's table: tokens/s for a model that reads tokens, HFU where
// some system recomputes.
struct UtilisationColumns {
  bool tokens = false;
  bool hardware = false;
};

std::string utilisation_percent(const std::optional<double>& share) {
  char cell[32] = "-";
  if (share) std::snprintf(cell, sizeof cell, "%.1f", *share * 100);
  return cell;
}

std::string utilisation_row(const SystemSummary& system, const Utilisation& u,
                            UtilisationColumns columns) {
  char row[512];
  std::snprintf(row, sizeof row, "| %s | %.3f | %.3f | %.2f | %s |", system.name.c_str(),
                u.flops_per_rank / 1e9, u.iteration_p50_ms, u.gflops_per_rank,
                utilisation_percent(u.mfu).c_str());
  std::string out = row;
  // Without recomputation the hardware does the model's FLOPs: its HFU is its MFU.
  if (columns.hardware) out += " " + utilisation_percent(u.hfu ? u.hfu : u.mfu) + " |";
  out += " " + std::to_string(u.samples) + " |";
  if (columns.tokens) {
    std::snprintf(row, sizeof row, " %.0f | %.0f |", system.tokens_per_s.value_or(0),
                  system.tokens_per_s_per_rank().value_or(0));
    out += row;
  }
  return out + "\n";
}

// What the table's numbers are, and its header.
std::string utilisation_heading(const std::optional<double>& peak, const std::string& precision,
                                UtilisationColumns columns) {
  std::string out;
  if (peak) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "Per rank: model FLOPs per iteration (3 x forward), iteration p50, achieved "
                  "GFLOP/s, MFU against the measured %s GEMM peak of a rank (%.1f GFLOP/s: "
                  "its cores', or its share of its GPU's; env.json).\n\n",
                  precision.c_str(), *peak);
    out += line;
  } else {
    out +=
        "Per rank: model FLOPs per iteration (3 x forward), iteration p50, achieved "
        "GFLOP/s; no MFU: env.json has no machine figure for the math the ranks ran in "
        "(harness machine measures fp32, and bf16 where the CPU has it; GPUs: fp32, tf32, "
        "bf16).\n\n";
  }
  if (columns.tokens) {
    out +=
        "tokens/s: every rank's batch of tokens (model.batch_size x tokens x ranks) over the "
        "iteration p50; per rank, that over the ranks.\n\n";
  }
  if (columns.hardware) {
    out +=
        "HFU: the hardware's FLOPs over the same peak, the recomputed layers' forward counted "
        "again (PaLM's hardware FLOPs utilisation; MFU counts the model's only).\n\n";
  }
  out += "| system | GFLOP / iteration | p50 ms | GFLOP/s | MFU % |" +
         std::string(columns.hardware ? " HFU % |" : "") + " samples |";
  out += columns.tokens ? " tokens/s | tokens/s per rank |\n" : "\n";
  return out + "|---|---:|---:|---:|---:|" + std::string(columns.hardware ? "---:|" : "") +
         "---:|" + std::string(columns.tokens ? "---:|---:|" : "") + "\n";
}

}  // namespace

std::string render_utilisation_markdown(const RunSummary& summary) {
  std::string out;
  for (const auto& point : summary.points) {
    const auto& systems = point.systems;
    const UtilisationColumns columns{
        std::any_of(systems.begin(), systems.end(),
                    [](const SystemSummary& s) { return s.tokens_per_s; }),
        std::any_of(systems.begin(), systems.end(),
                    [](const SystemSummary& s) { return s.utilisation && s.utilisation->hfu; })};
    std::string rows;
    std::optional<double> peak;
    std::string precision;
    for (const auto& system : systems) {
      if (!system.utilisation) continue;
      const Utilisation& u = *system.utilisation;
      if (u.peak_gflops_per_rank) {
        peak = u.peak_gflops_per_rank;
        precision = u.precision;
      }
      rows += utilisation_row(system, u, columns);
    }
    if (rows.empty()) continue;
    out += "### " + summary.manifest.experiment + ": " + point.point.label +
           " - compute utilisation\n\n" + utilisation_heading(peak, precision, columns) + rows +
           "\n";
  }
  return out;
}

}  // namespace harness
