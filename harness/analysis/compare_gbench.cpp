#include "harness/analysis/compare_gbench.h"

#include <cmath>
#include <map>

#include "common/input_error.h"
#include "common/json_file.h"

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

namespace {

// One iteration entry's real time in ns. A missing or non-numeric field, an unknown unit or a
// time that is not finite and >= 0 is bad input, named by the entry's index and name.
double entry_time_ns(const json& entry, const std::string& where) {
  const auto field = [&](const char* key) -> const json& {
    if (!entry.contains(key)) throw InputError(where + ": missing \"" + key + "\"");
    return entry[key];
  };
  const json& real_time = field("real_time");
  if (!real_time.is_number()) {
    throw InputError(where + ": real_time is " + json_text(real_time) + ", not a number");
  }
  const double value = real_time.get<double>();
  if (!std::isfinite(value) || value < 0) {
    throw InputError(where + ": real_time is " + json_text(real_time) +
                     " (must be a finite time >= 0)");
  }
  const json unit = entry.value("time_unit", json("ns"));
  if (!unit.is_string()) throw InputError(where + ": time_unit is not a string");
  try {
    return value * gbench_unit_ns(unit.get<std::string>());
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
}

}  // namespace

std::vector<SampleSet> read_gbench_samples(const fs::path& path) {
  if (!fs::is_regular_file(path)) throw InputError(path.string() + ": no such file");
  const json document = read_json_file(path);
  if (!document.is_object() || !document.contains("benchmarks") ||
      !document["benchmarks"].is_array()) {
    throw InputError(path.string() + ": not Google Benchmark JSON (no 'benchmarks' list)");
  }
  std::vector<SampleSet> sets;
  std::map<std::string, size_t> index;  // run name -> position in sets, first-seen order
  const json& benchmarks = document["benchmarks"];
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const json& entry = benchmarks[i];
    std::string where = path.string() + ": benchmarks[" + std::to_string(i) + "]";
    if (!entry.is_object()) throw InputError(where + ": not an object");
    if (entry.contains("name") && entry["name"].is_string()) {
      where += " (\"" + entry["name"].get<std::string>() + "\")";
    }
    const json run_type = entry.value("run_type", json("iteration"));
    if (run_type != "iteration") continue;
    if (entry.value("error_occurred", json(false)) == true) continue;
    // run_name is the benchmark without the repetition/aggregate suffix (newer versions).
    const json name = entry.contains("run_name") ? entry["run_name"] : entry.value("name", json());
    if (!name.is_string()) throw InputError(where + ": missing \"name\"");
    const double ns = entry_time_ns(entry, where);
    auto [it, inserted] = index.emplace(name.get<std::string>(), sets.size());
    if (inserted) sets.push_back({"", name.get<std::string>(), "real_time", {}});
    sets[it->second].runs.push_back(ns);
  }
  if (sets.empty()) throw InputError(path.string() + ": no benchmark runs in the file");
  return sets;
}

}  // namespace harness
