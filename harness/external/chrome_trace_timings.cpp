// Iteration times from a Chrome / Kineto trace: torch.profiler marks each step with a
// complete event "ProfilerStep#N" whose duration (microseconds) is the step's wall time.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json_file.h"
#include "harness/external/timing_readers.h"

namespace harness {

TimingRead read_chrome_trace_timings(const std::string& text, const TextPattern& step_name) {
  using nlohmann::json;
  TimingRead read;
  json trace;
  try {
    trace = parse_json(text);
  } catch (const json::parse_error& e) {
    // Name the line the parser stopped on, like the line protocol does.
    const size_t byte = std::min<size_t>(e.byte, text.size());
    const long long line = 1 + std::count(text.begin(), text.begin() + byte, '\n');
    read.malformed = MalformedSample{line, "", "not a JSON trace (" + std::string(e.what()) + ")"};
    return read;
  }
  const json* events = &trace;
  if (trace.is_object() && trace.contains("traceEvents")) events = &trace["traceEvents"];
  if (!events->is_array()) {
    read.malformed =
        MalformedSample{0, "", "expected a JSON array of events or an object with \"traceEvents\""};
    return read;
  }
  std::vector<std::pair<double, TimingSample>> steps;  // (start, sample)
  long long index = 0;
  for (const auto& event : *events) {
    ++index;
    if (!event.is_object() || event.value("ph", "") != "X") continue;
    const auto name = event.find("name");
    if (name == event.end() || !name->is_string()) continue;
    const std::string label = name->get<std::string>();
    if (!step_name.matches(label)) continue;
    const auto dur = event.find("dur");
    const auto ts = event.find("ts");
    if (dur == event.end() || !dur->is_number() || dur->get<double>() < 0 || ts == event.end() ||
        !ts->is_number()) {
      read.malformed = MalformedSample{
          0, json_text(event).substr(0, 200),
          "step event #" + std::to_string(index) + " has no numeric \"ts\" and \"dur\" >= 0"};
      return read;
    }
    TimingSample sample;
    sample.fields["iteration_ms"] = dur->get<double>() / 1000.0;  // trace times are in us
    steps.emplace_back(ts->get<double>(), std::move(sample));
    read.last_line = label;
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& step : steps) read.samples.push_back(std::move(step.second));
  return read;
}

}  // namespace harness
