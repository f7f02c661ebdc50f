// The line protocol: {"iter": 12, "forward_ms": 101.2, "backward_ms": 212.4, "step_ms": 3.1}.
#include <nlohmann/json.hpp>

#include "common/json_file.h"
#include "harness/external/timing_readers.h"

namespace harness {
namespace {

std::string shortened_line(const std::string& text) {
  return text.size() <= 200 ? text : text.substr(0, 200) + "...";
}

// Returns a reason when `object` is not a valid sample; fills `sample` otherwise.
std::optional<std::string> to_sample(const nlohmann::json& object, TimingSample& sample) {
  if (!object.is_object()) return "expected a JSON object, got " + std::string(object.type_name());
  for (const auto& [key, value] : object.items()) {
    if (key == "iter") {
      if (!value.is_number_integer() || value.get<long long>() < 0) {
        return "\"iter\" must be a non-negative integer, got " + json_text(value);
      }
      sample.iteration = value.get<long long>();
      continue;
    }
    bool timing = false;
    for (const char* field : kTimingFields) timing = timing || key == field;
    if (!timing) continue;  // other keys (loss, lr, ...) are the program's business
    if (!value.is_number() || value.get<double>() < 0) {
      return "\"" + key + "\" must be a number >= 0, got " + json_text(value);
    }
    sample.fields[key] = value.get<double>();
  }
  if (sample.fields.empty()) {
    return "no timing field (expected at least one of forward_ms, backward_ms, step_ms, "
           "iteration_ms)";
  }
  return std::nullopt;
}

}  // namespace

TimingRead read_jsonl_timings(std::istream& in) {
  TimingRead read;
  std::string line;
  for (long long number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    read.last_line = line;
    if (line[first] != '{') continue;  // the program's own log lines
    TimingSample sample;
    sample.line = number;
    std::optional<std::string> reason;
    try {
      reason = to_sample(parse_json(line), sample);
    } catch (const nlohmann::json::parse_error& e) {
      reason = "not valid JSON (" + std::string(e.what()) + ")";
    }
    if (reason) {
      read.malformed = MalformedSample{number, shortened_line(line), *reason};
      return read;
    }
    read.samples.push_back(std::move(sample));
  }
  return read;
}

}  // namespace harness
