#include "harness/analysis/compare_gbench.h"

#include <map>

#include "common/atomic_file.h"
#include "common/input_error.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

double gbench_unit_ns(const std::string& unit) {
  if (unit == "ns") return 1;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  throw InputError("unknown Google Benchmark time_unit '" + unit + "'");
}

std::vector<SampleSet> read_gbench_samples(const fs::path& path) {
  if (!fs::is_regular_file(path)) throw InputError(path.string() + ": no such file");
  json document;
  try {
    document = json::parse(read_file(path));
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": not JSON: " + e.what());
  }
  if (!document.is_object() || !document.contains("benchmarks") ||
      !document["benchmarks"].is_array()) {
    throw InputError(path.string() + ": not Google Benchmark JSON (no 'benchmarks' list)");
  }
  std::vector<SampleSet> sets;
  std::map<std::string, size_t> index;  // run name -> position in sets, first-seen order
  for (const auto& entry : document["benchmarks"]) {
    try {
      if (entry.value("run_type", "iteration") != "iteration") continue;
      if (entry.contains("error_occurred") && entry["error_occurred"].get<bool>()) continue;
      // run_name is the benchmark without the repetition/aggregate suffix (newer versions).
      const std::string name = entry.value("run_name", entry.at("name").get<std::string>());
      const double scale = gbench_unit_ns(entry.value("time_unit", "ns"));
      auto [it, inserted] = index.emplace(name, sets.size());
      if (inserted) sets.push_back({"", name, "real_time", {}});
      sets[it->second].samples.push_back(entry.at("real_time").get<double>() * scale);
    } catch (const json::exception& e) {
      throw InputError(path.string() + ": benchmark entry without name or real_time: " + e.what());
    }
  }
  if (sets.empty()) throw InputError(path.string() + ": no benchmark runs in the file");
  return sets;
}

}  // namespace harness
