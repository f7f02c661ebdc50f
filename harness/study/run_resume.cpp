#include "harness/study/run_resume.h"

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/results/run_manifest.h"
#include "harness/results/run_summary.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

bool run_has_complete_results(const fs::path& raw, long long world_size, long long iterations) {
  try {
    const json status = parse_json(read_file(raw / "status.json"));
    if (status.value("status", "") != "complete") return false;
    for (long long r = 0; r < world_size; ++r) {
      const auto samples = read_sample_file(raw / ("rank" + std::to_string(r) + ".csv"));
      auto it = samples.find("iteration");
      if (it == samples.end()) it = samples.begin();
      if (it == samples.end() || static_cast<long long>(it->second.size()) != iterations) {
        return false;
      }
    }
    return true;
  } catch (const std::exception&) {
    return false;  // missing or unreadable: run it again
  }
}

void check_resumable(const fs::path& directory, const Experiment& experiment) {
  const std::string where = "--resume " + directory.string();
  if (!fs::is_directory(directory)) throw InputError(where + ": no such results folder");
  Manifest before;
  try {
    before = read_manifest(directory);
  } catch (const std::exception& e) {
    throw InputError(where + ": not a results folder of `harness run` (" + e.what() + ")");
  }
  const Manifest now = make_manifest(experiment);
  auto differ = [&](const std::string& what, const std::string& was, const std::string& is) {
    throw InputError(where + ": made from another study: " + what + " was '" + was +
                     "', the spec now says '" + is + "'");
  };
  if (before.experiment != now.experiment) differ("the name", before.experiment, now.experiment);
  auto system_names = [](const Manifest& m) {
    std::string names;
    for (const auto& s : m.systems) names += (names.empty() ? "" : ", ") + s.name + "/" + s.mode;
    return names;
  };
  if (system_names(before) != system_names(now)) {
    differ("the systems", system_names(before), system_names(now));
  }
  if (before.points.size() != now.points.size()) {
    differ("the number of points", std::to_string(before.points.size()),
           std::to_string(now.points.size()));
  }
  for (size_t i = 0; i < now.points.size(); ++i) {
    const ManifestPoint &a = before.points[i], &b = now.points[i];
    const std::string point = "point " + b.id;
    if (a.label != b.label) differ(point, a.label, b.label);
    if (a.world_size != b.world_size) {
      differ(point + " run.world_size", std::to_string(a.world_size), std::to_string(b.world_size));
    }
    if (a.repeats != b.repeats) {
      differ(point + " run.repeats", std::to_string(a.repeats), std::to_string(b.repeats));
    }
    if (a.iterations != b.iterations) {
      differ(point + " run.iterations", std::to_string(a.iterations), std::to_string(b.iterations));
    }
    if (a.warmup != b.warmup) {
      differ(point + " run.warmup", std::to_string(a.warmup), std::to_string(b.warmup));
    }
  }
}

}  // namespace harness
