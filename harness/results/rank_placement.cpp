#include "harness/results/rank_placement.h"

#include <nlohmann/json.hpp>

#include "common/json_file.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The placement a rank reported: DDP ranks in their memory file, pipeline ranks in theirs.
std::optional<json> reported_placement(const fs::path& raw, long long rank) {
  const std::string r = std::to_string(rank);
  for (const std::string& name : {"memory_rank" + r + ".json", "pipeline_rank" + r + ".json"}) {
    if (!fs::exists(raw / name)) continue;
    json file;
    try {
      file = read_json_file(raw / name);
    } catch (const std::exception&) {
      return std::nullopt;  // unreadable: as good as none
    }
    if (file.is_object() && file.contains("placement") && file["placement"].is_object()) {
      return file["placement"];
    }
  }
  return std::nullopt;
}

bool same_device(const std::string& used, const std::string& asked) {
  return used == asked || (asked == "cuda" && used.rfind("cuda:", 0) == 0);
}

}  // namespace

std::optional<PlacementMismatch> check_rank_placements(const fs::path& raw, long long world_size,
                                                       const std::string& device,
                                                       const std::string& backend,
                                                       const std::string& precision) {
  for (long long rank = 0; rank < world_size; ++rank) {
    const auto placement = reported_placement(raw, rank);
    const int r = static_cast<int>(rank);
    if (!placement) {
      return PlacementMismatch{
          r, "reported no device or backend (expected " + device + " over " + backend + ")"};
    }
    const std::string used_device = placement->value("device", "?");
    const std::string used_backend = placement->value("backend", "?");
    if (!same_device(used_device, device) || used_backend != backend) {
      return PlacementMismatch{r, "trained on " + used_device + " over " + used_backend +
                                      ", but the spec asked for " + device + " over " + backend};
    }
    if (placement->contains("precision")) {
      const std::string used_precision = placement->value("precision", "?");
      if (used_precision != precision) {
        return PlacementMismatch{
            r, "trained in " + used_precision + ", but model.precision is " + precision};
      }
    }
  }
  return std::nullopt;
}

}  // namespace harness
