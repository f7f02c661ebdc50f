#include "harness/analysis/memory_table.h"

#include <cstdio>

namespace harness {

std::string render_memory_markdown(const RunSummary& summary) {
  constexpr double kMiB = 1024.0 * 1024.0;
  std::string out;
  char row[512];
  for (const auto& point : summary.points) {
    std::string rows;
    for (const auto& system : point.systems) {
      const auto& m = system.memory;
      if (!m) continue;
      std::snprintf(row, sizeof row, "| %s | %.1f | %.1f | %.1f | %.1f | %.0f | %lld |\n",
                    system.name.c_str(), m->parameter_bytes / kMiB,
                    m->expert_parameter_bytes / kMiB, m->gradient_bytes / kMiB,
                    m->optimizer_state_bytes / kMiB, m->peak_resident_bytes / kMiB, m->ranks);
      rows += row;
    }
    if (rows.empty()) continue;
    out += "### " + summary.manifest.experiment + ": " + point.point.label +
           " - memory per rank\n\n"
           "MiB per rank, the largest over ranks (first repeat): parameters (of them, experts), "
           "gradients, optimizer state, peak resident memory of the process.\n\n"
           "| system | parameters | experts | gradients | optimizer | peak RSS | ranks |\n"
           "|---|---:|---:|---:|---:|---:|---:|\n" +
           rows + "\n";
  }
  return out;
}

}  // namespace harness
