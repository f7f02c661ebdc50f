#include "harness/analysis/memory_table.h"

#include <cstdio>

namespace harness {

std::string render_memory_markdown(const RunSummary& summary) {
  constexpr double kMiB = 1024.0 * 1024.0;
  std::string out;
  char row[512];
  for (const auto& point : summary.points) {
    // GPU columns where any system of the point ran on a GPU; a CPU system's cells there say '-'.
    bool device = false;
    for (const auto& system : point.systems) {
      device = device || (system.memory && system.memory->peak_device_allocated_bytes);
    }
    const auto mib = [&](const std::optional<double>& bytes) {
      char cell[32];
      if (!bytes) return std::string("-");
      std::snprintf(cell, sizeof cell, "%.0f", *bytes / kMiB);
      return std::string(cell);
    };
    std::string rows;
    for (const auto& system : point.systems) {
      const auto& m = system.memory;
      if (!m) continue;
      std::snprintf(row, sizeof row, "| %s | %.1f | %.1f | %.1f | %.1f | %.0f |",
                    system.name.c_str(), m->parameter_bytes / kMiB,
                    m->expert_parameter_bytes / kMiB, m->gradient_bytes / kMiB,
                    m->optimizer_state_bytes / kMiB, m->peak_resident_bytes / kMiB);
      rows += row;
      if (device) {
        rows += " " + mib(m->peak_device_allocated_bytes) + " | " +
                mib(m->peak_device_reserved_bytes) + " |";
      }
      rows += " " + std::to_string(m->ranks) + " |\n";
    }
    if (rows.empty()) continue;
    out += "### " + summary.manifest.experiment + ": " + point.point.label +
           " - memory per rank\n\n"
           "MiB per rank, the largest over ranks (first repeat): parameters (of them, experts), "
           "gradients, optimizer state, peak resident memory of the process" +
           std::string(device ? "; on a GPU, the caching allocator's peaks after warm-up: "
                                "allocated (live tensors) and reserved (held from the driver)"
                              : "") +
           ".\n\n| system | parameters | experts | gradients | optimizer | peak RSS |" +
           std::string(device ? " GPU peak allocated | GPU peak reserved |" : "") +
           " ranks |\n|---|---:|---:|---:|---:|---:|" + std::string(device ? "---:|---:|" : "") +
           "---:|\n" + rows + "\n";
  }
  return out;
}

}  // namespace harness
