#include "harness/analysis/trace_merge.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "common/limits.h"
#include "common/text_pattern.h"
#include "common/text_util.h"
#include "harness/results/run_manifest.h"
#include "harness/results/run_status.h"
#include "runtime/protocol/trace_recorder.h"

namespace harness {

namespace fs = std::filesystem;
using nlohmann::json;

bool is_compute_category(const std::string& category) {
  return std::find(std::begin(kTraceComputeCategories), std::end(kTraceComputeCategories),
                   category) != std::end(kTraceComputeCategories);
}

bool is_comm_category(const std::string& category) {
  return std::find(std::begin(kTraceCommCategories), std::end(kTraceCommCategories), category) !=
         std::end(kTraceCommCategories);
}

std::string rank_label(const RankTrace& rank) {
  return "rank " + std::to_string(rank.rank) +
         (rank.stage ? " (stage " + std::to_string(*rank.stage) + ")" : "");
}

namespace {

const TextPattern kRankFile(R"(trace_rank(\d+)\.json)");
const TextPattern kRepeatFolder(R"(rep(\d+))");

// nlohmann's message without its "[json.exception...] parse error at line L, column C: "
// prefix: the location is given separately.
// What to call event #index in a message: its position and, when it has one, its name.
std::string event_where(const fs::path& file, size_t index, const json& event) {
  std::string where = file.string() + ": traceEvents[" + std::to_string(index) + "]";
  if (event.is_object()) {
    const auto name = event.find("name");
    if (name != event.end() && name->is_string())
      where += " (\"" + name->get<std::string>() + "\")";
  }
  return where;
}

long long integer_field(const json& object, const char* key, const fs::path& file,
                        const std::string& where, long long fallback) {
  const auto found = object.find(key);
  if (found == object.end()) return fallback;
  if (!found->is_number_integer()) {
    throw InputError(file.string() + ": " + where + "." + key + " is not an integer");
  }
  return found->get<long long>();
}

// Trace viewers expect the slices of one thread to nest; two all-reduce buckets in flight at
// once overlap without nesting, and Perfetto would misplace or drop one. Such an event moves to
// an extra thread of the same rank (tid + 100 k, named "<thread> #k+1"), greedily: the first
// lane whose last slice has ended.
json split_overlapping(json timed, long long rank) {
  std::map<long long, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < timed.size(); ++i) {
    const json& event = timed[i];
    if (event.value("ph", "") == "X") by_thread[event["tid"].get<long long>()].push_back(i);
  }
  json extra = json::array();
  for (auto& [tid, indices] : by_thread) {
    std::stable_sort(indices.begin(), indices.end(), [&](size_t a, size_t b) {
      return timed[a]["ts"].get<double>() < timed[b]["ts"].get<double>();
    });
    std::vector<double> lane_end;  // the end of the last slice of each lane
    for (size_t i : indices) {
      const double start = timed[i]["ts"].get<double>();
      const double end = start + timed[i]["dur"].get<double>();
      size_t lane = 0;
      // 1 ns of slack: an event that starts where the previous one ended does not overlap it.
      while (lane < lane_end.size() && lane_end[lane] > start + 1e-3) ++lane;
      if (lane == lane_end.size()) {
        lane_end.push_back(end);
        if (lane > 0) {
          const long long threads = static_cast<long long>(std::size(runtime::kTraceThreads));
          const std::string base = tid >= 0 && tid < threads ? runtime::kTraceThreads[tid]
                                                             : "thread " + std::to_string(tid);
          extra.push_back({{"name", "thread_name"},
                           {"ph", "M"},
                           {"pid", rank},
                           {"tid", tid + 100 * static_cast<long long>(lane)},
                           {"args", {{"name", base + " #" + std::to_string(lane + 1)}}}});
        }
      } else {
        lane_end[lane] = end;
      }
      if (lane > 0) timed[i]["tid"] = tid + 100 * static_cast<long long>(lane);
    }
  }
  for (auto& event : timed) extra.push_back(std::move(event));
  return extra;
}

// The per-rank trace file as JSON: an object with a "traceEvents" array; malformed JSON is an
// InputError at its file:line:column.
json parse_trace_document(const fs::path& file) {
  const json document = read_json_file(file);
  if (!document.is_object() || !document.contains("traceEvents") ||
      !document["traceEvents"].is_array()) {
    throw InputError(file.string() +
                     ": expected a JSON object with a \"traceEvents\" array (per-rank trace)");
  }
  return document;
}

// otherData: the rank (which must be the file's), world size, iteration, stage, system and
// schedule the rank wrote.
void read_other_data(const json& document, const fs::path& file, RankTrace& trace) {
  trace.other_data = document.value("otherData", json::object());
  if (!trace.other_data.is_object()) {
    throw InputError(file.string() + ": otherData is not an object");
  }
  const long long stated = integer_field(trace.other_data, "rank", file, "otherData", trace.rank);
  if (stated != trace.rank) {
    throw InputError(file.string() + ": otherData.rank is " + std::to_string(stated) +
                     " but the file is named for rank " + std::to_string(trace.rank));
  }
  trace.world_size = integer_field(trace.other_data, "world_size", file, "otherData", 0);
  trace.iteration = integer_field(trace.other_data, "iteration", file, "otherData", -1);
  if (trace.other_data.contains("stage")) {
    trace.stage = integer_field(trace.other_data, "stage", file, "otherData", 0);
  }
  if (trace.other_data.contains("system") && trace.other_data["system"].is_string()) {
    trace.system = trace.other_data["system"].get<std::string>();
  }
  if (trace.other_data.contains("schedule") && trace.other_data["schedule"].is_string()) {
    trace.schedule = trace.other_data["schedule"].get<std::string>();
  }
}

}  // namespace

RankTrace read_rank_trace(const fs::path& file, std::vector<std::string>& warnings) {
  RankTrace trace;
  trace.file = file;
  const std::optional<PatternMatch> match = kRankFile.match(file.filename().string());
  if (!match) {
    throw InputError(file.string() + ": not a per-rank trace name (expected trace_rank<r>.json)");
  }
  trace.rank = std::stoll(match->group(1));

  const json document = parse_trace_document(file);
  read_other_data(document, file, trace);

  trace.events = document["traceEvents"];
  std::map<std::string, size_t> other_categories;
  std::map<std::string, size_t> other_phases;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const json& event = trace.events[i];
    if (!event.is_object()) {
      throw InputError(event_where(file, i, event) + ": an event is not a JSON object");
    }
    const auto ph = event.find("ph");
    if (ph == event.end() || !ph->is_string()) {
      throw InputError(event_where(file, i, event) + ": missing \"ph\" (the event phase)");
    }
    const std::string phase = ph->get<std::string>();
    if (phase == "M") {
      if (!event.contains("name") || !event["name"].is_string()) {
        throw InputError(event_where(file, i, event) + ": metadata event missing \"name\"");
      }
      continue;
    }
    if (phase != "X") {
      ++other_phases[phase];
      continue;
    }
    // A complete event: every field the breakdown and the viewers need.
    for (const char* key : {"name", "cat", "ts", "dur", "tid"}) {
      if (!event.contains(key)) {
        throw InputError(event_where(file, i, event) + ": missing \"" + key + "\"");
      }
    }
    if (!event["name"].is_string() || !event["cat"].is_string()) {
      throw InputError(event_where(file, i, event) + ": \"name\" and \"cat\" must be strings");
    }
    for (const char* key : {"ts", "dur"}) {
      if (!event[key].is_number() || !std::isfinite(event[key].get<double>())) {
        throw InputError(event_where(file, i, event) + ": \"" + key +
                         "\" is not a number (microseconds)");
      }
    }
    if (!event["tid"].is_number_integer()) {
      throw InputError(event_where(file, i, event) + ": \"tid\" is not an integer");
    }
    const double dur = event["dur"].get<double>();
    if (dur < 0) throw InputError(event_where(file, i, event) + ": \"dur\" is negative");
    if (dur > kMaxTraceDurationUs) {
      throw InputError(event_where(file, i, event) + ": \"dur\" is " + format_general(dur) +
                       " us, more than " + format_general(kMaxTraceDurationUs) + " (115 days)");
    }
    if (std::abs(event["ts"].get<double>()) > kMaxTraceTimestampUs) {
      throw InputError(event_where(file, i, event) + ": \"ts\" is " +
                       format_general(event["ts"].get<double>()) + " us, beyond +-" +
                       format_general(kMaxTraceTimestampUs) + " (a clock of 317 years)");
    }
    const std::string category = event["cat"].get<std::string>();
    if (!is_compute_category(category) && !is_comm_category(category)) {
      ++other_categories[category];
      continue;
    }
    TraceSpan span;
    span.start_us = event["ts"].get<double>();
    span.end_us = span.start_us + dur;
    span.category = category;
    span.name = event["name"].get<std::string>();
    if (event.contains("args") && event["args"].is_object() &&
        event["args"].contains("micro_batch") && event["args"]["micro_batch"].is_number_integer()) {
      span.micro_batch = event["args"]["micro_batch"].get<long long>();
    }
    trace.spans.push_back(std::move(span));
  }
  if (trace.spans.empty()) {
    throw InputError(file.string() +
                     ": no complete (\"ph\": \"X\") event of a forward, backward, step, send, "
                     "recv, allreduce or alltoall category");
  }
  for (const auto& [category, count] : other_categories) {
    warnings.push_back(file.string() + ": " + std::to_string(count) + " event(s) of category '" +
                       category + "' kept in the merged trace but not counted in the breakdown");
  }
  for (const auto& [phase, count] : other_phases) {
    warnings.push_back(file.string() + ": " + std::to_string(count) + " event(s) of phase '" +
                       phase + "' kept in the merged trace but not counted in the breakdown");
  }
  return trace;
}

std::vector<TraceRun> find_trace_runs(const fs::path& results) {
  std::vector<TraceRun> runs;
  const fs::path raw = results / "raw";
  if (!fs::is_directory(raw)) return runs;
  std::map<std::string, std::string> labels;
  std::map<std::string, size_t> system_order;
  // A corrupt status is a corrupt folder, refused here as by report and compare, though a
  // trace of any run (failed ones too) is shown.
  read_study_status(results);
  if (fs::exists(results / "manifest.json")) {
    const Manifest manifest = read_manifest(results);
    for (const auto& point : manifest.points) labels[point.id] = point.label;
    for (size_t s = 0; s < manifest.systems.size(); ++s) {
      system_order[manifest.systems[s].name] = s;
    }
  }
  for (const auto& point : fs::directory_iterator(raw)) {
    if (!point.is_directory()) continue;
    for (const auto& system : fs::directory_iterator(point.path())) {
      if (!system.is_directory()) continue;
      for (const auto& repeat : fs::directory_iterator(system.path())) {
        if (!repeat.is_directory()) continue;
        const std::optional<PatternMatch> match =
            kRepeatFolder.match(repeat.path().filename().string());
        if (!match) continue;
        read_run_outcome(repeat.path());
        std::vector<std::pair<long long, fs::path>> ranks;
        for (const auto& file : fs::directory_iterator(repeat.path())) {
          if (!file.is_regular_file()) continue;
          const std::optional<PatternMatch> rank = kRankFile.match(file.path().filename().string());
          if (rank) ranks.emplace_back(std::stoll(rank->group(1)), file.path());
        }
        if (ranks.empty()) continue;
        std::sort(ranks.begin(), ranks.end());
        TraceRun run;
        run.point = point.path().filename().string();
        run.system = system.path().filename().string();
        run.repeat = std::stoll(match->group(1));
        run.directory = repeat.path();
        const auto label = labels.find(run.point);
        if (label != labels.end()) run.label = label->second;
        for (auto& [rank, file] : ranks) run.rank_files.push_back(file);
        runs.push_back(std::move(run));
      }
    }
  }
  const auto order = [&](const std::string& system) {
    const auto found = system_order.find(system);
    return found == system_order.end() ? system_order.size() : found->second;
  };
  std::sort(runs.begin(), runs.end(), [&](const TraceRun& a, const TraceRun& b) {
    return std::make_tuple(a.point, order(a.system), a.system, a.repeat) <
           std::make_tuple(b.point, order(b.system), b.system, b.repeat);
  });
  return runs;
}

LoadedTrace load_trace_run(const TraceRun& run) {
  LoadedTrace loaded;
  loaded.run = run;
  double origin = std::numeric_limits<double>::infinity();
  for (const auto& file : run.rank_files) {
    loaded.ranks.push_back(read_rank_trace(file, loaded.warnings));
    for (const auto& event : loaded.ranks.back().events) {
      // Every timed event counts, not only the six categories: nothing lands before 0.
      if (event.value("ph", "") != "M" && event.contains("ts") && event["ts"].is_number()) {
        origin = std::min(origin, event["ts"].get<double>());
      }
    }
  }
  loaded.origin_us = origin;
  std::set<long long> iterations;
  long long world_size = 0;
  for (auto& rank : loaded.ranks) {
    for (auto& span : rank.spans) {
      span.start_us -= origin;
      span.end_us -= origin;
    }
    if (rank.iteration >= 0) iterations.insert(rank.iteration);
    world_size = std::max(world_size, rank.world_size);
  }
  const std::string where = (run.directory).string();
  if (iterations.size() > 1) {
    std::string list;
    for (long long i : iterations) list += (list.empty() ? "" : ", ") + std::to_string(i);
    loaded.warnings.push_back(where + ": the ranks traced different iterations (" + list +
                              "); the merged timeline mixes them");
  }
  if (world_size > static_cast<long long>(loaded.ranks.size())) {
    std::string missing;
    for (long long r = 0; r < world_size; ++r) {
      const bool found = std::any_of(loaded.ranks.begin(), loaded.ranks.end(),
                                     [r](const RankTrace& t) { return t.rank == r; });
      if (!found) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
    loaded.warnings.push_back(where + ": world size " + std::to_string(world_size) +
                              " but no trace from rank(s) " + missing);
  }
  return loaded;
}

json merged_trace(const LoadedTrace& trace, const std::string& experiment) {
  json events = json::array();
  json ranks = json::array();
  for (const auto& rank : trace.ranks) {
    bool named = false;
    bool sorted = false;
    json timed = json::array();
    for (json event : rank.events) {
      event["pid"] = rank.rank;  // one process per rank, whatever the rank wrote
      if (event.value("ph", "") == "M") {
        named |= event["name"] == "process_name";
        sorted |= event["name"] == "process_sort_index";
        events.push_back(std::move(event));
        continue;
      }
      if (event.contains("ts") && event["ts"].is_number()) {
        event["ts"] = event["ts"].get<double>() - trace.origin_us;
      }
      timed.push_back(std::move(event));
    }
    if (!named) {
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", rank.rank},
                        {"tid", 0},
                        {"args", {{"name", rank_label(rank)}}}});
    }
    if (!sorted) {
      events.push_back({{"name", "process_sort_index"},
                        {"ph", "M"},
                        {"pid", rank.rank},
                        {"tid", 0},
                        {"args", {{"sort_index", rank.rank}}}});
    }
    for (auto& event : split_overlapping(timed, rank.rank)) events.push_back(std::move(event));
    json about = rank.other_data;
    about["rank"] = rank.rank;
    about["file"] = rank.file.filename().string();
    ranks.push_back(std::move(about));
  }
  json other = {{"merged_by", "harness trace"},
                {"experiment", experiment},
                {"point", trace.run.point},
                {"system", trace.run.system},
                {"repeat", trace.run.repeat},
                {"time_origin_us", trace.origin_us},
                {"clock", "steady"},
                {"ranks", ranks}};
  if (!trace.run.label.empty()) other["point_label"] = trace.run.label;
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace harness
