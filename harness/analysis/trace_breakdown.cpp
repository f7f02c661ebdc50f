#include "harness/analysis/trace_breakdown.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>

namespace harness {

using nlohmann::json;

std::vector<TimeInterval> interval_union(std::vector<TimeInterval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<TimeInterval> merged;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (!merged.empty() && start <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, end);
    } else {
      merged.emplace_back(start, end);
    }
  }
  return merged;
}

double interval_length(const std::vector<TimeInterval>& disjoint) {
  double total = 0;
  for (const auto& [start, end] : disjoint) total += end - start;
  return total;
}

std::vector<TimeInterval> interval_intersection(const std::vector<TimeInterval>& a,
                                                const std::vector<TimeInterval>& b) {
  std::vector<TimeInterval> common;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double start = std::max(a[i].first, b[j].first);
    const double end = std::min(a[i].second, b[j].second);
    if (start < end) common.emplace_back(start, end);
    // The interval that ends first cannot meet anything further along the other list.
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return common;
}

std::vector<TimeInterval> interval_gaps(const std::vector<TimeInterval>& disjoint, double start,
                                        double end) {
  std::vector<TimeInterval> gaps;
  double cursor = start;
  for (const auto& [from, to] : disjoint) {
    if (to <= cursor) continue;
    if (from >= end) break;
    if (from > cursor) gaps.emplace_back(cursor, from);
    cursor = std::max(cursor, to);
  }
  if (cursor < end) gaps.emplace_back(cursor, end);
  return gaps;
}

namespace {

std::pair<double, double> rank_extent(const RankTrace& rank) {
  double start = std::numeric_limits<double>::infinity();
  double end = -std::numeric_limits<double>::infinity();
  for (const auto& span : rank.spans) {
    start = std::min(start, span.start_us);
    end = std::max(end, span.end_us);
  }
  return {start, end};
}

double category_ms(const RankTrace& rank, const char* category) {
  return interval_length(spans_union(rank, [&](const std::string& c) { return c == category; })) /
         1000.0;
}

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", 100.0 * fraction);
  return text;
}

}  // namespace

std::vector<TimeInterval> idle_intervals(const RankTrace& rank) {
  const auto [start, end] = rank_extent(rank);
  return interval_gaps(spans_union(rank, [](const std::string&) { return true; }), start, end);
}

RankBreakdown rank_breakdown(const RankTrace& rank) {
  RankBreakdown row;
  row.rank = rank.rank;
  row.stage = rank.stage;
  row.events = rank.spans.size();
  const auto [start, end] = rank_extent(rank);
  row.start_ms = start / 1000.0;
  row.span_ms = (end - start) / 1000.0;
  // A blocking all-to-all inside forward or backward is waiting, not computing.
  const auto all_to_all = spans_union(rank, [](const std::string& c) { return c == "alltoall"; });
  const auto compute = interval_intersection(spans_union(rank, is_compute_category),
                                             interval_gaps(all_to_all, start, end));
  const auto comm = spans_union(rank, is_comm_category);
  row.compute_ms = interval_length(compute) / 1000.0;
  row.comm_ms = interval_length(comm) / 1000.0;
  row.overlap_ms = interval_length(interval_intersection(compute, comm)) / 1000.0;
  row.exposed_comm_ms = row.comm_ms - row.overlap_ms;
  row.idle_ms = interval_length(idle_intervals(rank)) / 1000.0;
  row.idle_fraction = row.span_ms > 0 ? row.idle_ms / row.span_ms : 0;
  row.forward_ms = category_ms(rank, "forward");
  // B and I, and a zero-bubble schedule's W.
  row.backward_ms = category_ms(rank, "backward") + category_ms(rank, "backward_weight");
  row.step_ms = category_ms(rank, "step");
  row.send_ms = category_ms(rank, "send");
  row.recv_ms = category_ms(rank, "recv");
  row.allreduce_ms = category_ms(rank, "allreduce");
  row.alltoall_ms = interval_length(all_to_all) / 1000.0;
  row.allgather_ms = category_ms(rank, "allgather");
  row.reducescatter_ms = category_ms(rank, "reducescatter");
  return row;
}

TraceBreakdown trace_breakdown(const LoadedTrace& trace) {
  TraceBreakdown breakdown;
  double end = 0;
  for (const auto& rank : trace.ranks) {
    breakdown.ranks.push_back(rank_breakdown(rank));
    end = std::max(end, rank_extent(rank).second);
  }
  breakdown.span_ms = end / 1000.0;  // the ranks' times start at the run's earliest event, 0
  return breakdown;
}

std::string trace_run_name(const TraceRun& run) {
  return run.point + (run.label.empty() || run.label == "default" ? "" : " (" + run.label + ")") +
         " / " + run.system + " / rep" + std::to_string(run.repeat);
}

namespace {

struct Column {
  const char* heading;
  double RankBreakdown::*value;
};
constexpr Column kColumns[] = {
    {"span ms", &RankBreakdown::span_ms},
    {"compute ms", &RankBreakdown::compute_ms},
    {"forward", &RankBreakdown::forward_ms},
    {"backward", &RankBreakdown::backward_ms},
    {"step", &RankBreakdown::step_ms},
    {"comm ms", &RankBreakdown::comm_ms},
    {"send", &RankBreakdown::send_ms},
    {"recv", &RankBreakdown::recv_ms},
    {"allreduce", &RankBreakdown::allreduce_ms},
    {"alltoall", &RankBreakdown::alltoall_ms},
    {"allgather", &RankBreakdown::allgather_ms},
    {"reducescatter", &RankBreakdown::reducescatter_ms},
    {"overlapped ms", &RankBreakdown::overlap_ms},
    {"exposed comm ms", &RankBreakdown::exposed_comm_ms},
    {"idle ms", &RankBreakdown::idle_ms},
};

// " (12.3 ms; the run's median 12.1 ms over 40 iterations, the nearest of 16 traced)", where the
// ranks said how the iteration was chosen (runtime/protocol/traced_iteration.h).
std::string typical_text(const nlohmann::json& other) {
  const auto number = [&](const char* key) {
    const auto found = other.find(key);
    return found != other.end() && found->is_number() ? std::optional<double>(*found)
                                                      : std::nullopt;
  };
  const auto took = number("iteration_ms"), median = number("median_iteration_ms");
  const auto measured = number("measured_iterations"), traced = number("traced_iterations");
  if (!took || !median || !measured || !traced) return "";
  return " (" + ms(*took) + " ms; the run's median " + ms(*median) + " ms over " +
         std::to_string(static_cast<long long>(*measured)) + " iterations, the nearest of " +
         std::to_string(static_cast<long long>(*traced)) + " traced)";
}

std::string iteration_text(const LoadedTrace& trace) {
  std::vector<long long> iterations;
  for (const auto& rank : trace.ranks) {
    if (rank.iteration >= 0) iterations.push_back(rank.iteration);
  }
  std::sort(iterations.begin(), iterations.end());
  iterations.erase(std::unique(iterations.begin(), iterations.end()), iterations.end());
  if (iterations.empty()) return "iteration not stated";
  std::string text = iterations.size() == 1 ? "iteration " : "iterations ";
  for (size_t i = 0; i < iterations.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(iterations[i]);
  }
  return text + typical_text(trace.ranks.front().other_data);
}

}  // namespace

std::string breakdown_markdown(const LoadedTrace& trace, const TraceBreakdown& breakdown,
                               const std::string& experiment, const std::string& merged_file) {
  const bool staged = std::any_of(breakdown.ranks.begin(), breakdown.ranks.end(),
                                  [](const RankBreakdown& r) { return r.stage.has_value(); });
  std::ostringstream out;
  out << "## " << experiment << ": " << trace_run_name(trace.run) << "\n\n"
      << iteration_text(trace) << ", " << trace.ranks.size() << " rank(s)"
      << (trace.ranks.empty() || trace.ranks.front().schedule.empty()
              ? ""
              : ", schedule " + trace.ranks.front().schedule)
      << ", run span " << ms(breakdown.span_ms) << " ms; merged trace: " << merged_file << "\n\n"
      << "Times in ms. compute = forward + backward + step, less the all-to-alls they wait in; "
         "comm = the union of send, recv, allreduce, alltoall, allgather and reducescatter "
         "intervals; overlapped = compute "
         "and comm at once; exposed comm = comm - "
         "overlapped; idle = span - (compute + comm - overlapped).\n\n";
  out << "| rank |" << (staged ? " stage |" : "");
  for (const auto& column : kColumns) out << " " << column.heading << " |";
  out << " idle % |\n|---:|" << (staged ? "---:|" : "");
  for (size_t i = 0; i <= std::size(kColumns); ++i) out << "---:|";
  out << "\n";
  for (const auto& row : breakdown.ranks) {
    out << "| " << row.rank << " |";
    if (staged) out << " " << (row.stage ? std::to_string(*row.stage) : "-") << " |";
    for (const auto& column : kColumns) out << " " << ms(row.*column.value) << " |";
    out << " " << percent(row.idle_fraction) << " |\n";
  }
  if (breakdown.ranks.size() > 1) {
    const double n = static_cast<double>(breakdown.ranks.size());
    out << "| mean |" << (staged ? " |" : "");
    double span = 0, idle = 0;
    for (const auto& column : kColumns) {
      double sum = 0;
      for (const auto& row : breakdown.ranks) sum += row.*column.value;
      out << " " << ms(sum / n) << " |";
    }
    for (const auto& row : breakdown.ranks) {
      span += row.span_ms;
      idle += row.idle_ms;
    }
    out << " " << percent(span > 0 ? idle / span : 0) << " |\n";
  }
  return out.str();
}

json breakdown_json(const LoadedTrace& trace, const TraceBreakdown& breakdown,
                    const std::string& experiment, const std::string& merged_file) {
  json ranks = json::array();
  for (const auto& row : breakdown.ranks) {
    json entry = {{"rank", row.rank}, {"events", row.events}, {"start_ms", row.start_ms}};
    if (row.stage) entry["stage"] = *row.stage;
    entry["span_ms"] = row.span_ms;
    entry["compute_ms"] = row.compute_ms;
    entry["forward_ms"] = row.forward_ms;
    entry["backward_ms"] = row.backward_ms;
    entry["step_ms"] = row.step_ms;
    entry["comm_ms"] = row.comm_ms;
    entry["send_ms"] = row.send_ms;
    entry["recv_ms"] = row.recv_ms;
    entry["allreduce_ms"] = row.allreduce_ms;
    entry["alltoall_ms"] = row.alltoall_ms;
    entry["overlap_ms"] = row.overlap_ms;
    entry["exposed_comm_ms"] = row.exposed_comm_ms;
    entry["idle_ms"] = row.idle_ms;
    entry["idle_fraction"] = row.idle_fraction;
    ranks.push_back(std::move(entry));
  }
  json iterations = json::array();
  for (const auto& rank : trace.ranks) iterations.push_back(rank.iteration);
  json out = {{"experiment", experiment},     {"point", trace.run.point},
              {"system", trace.run.system},   {"repeat", trace.run.repeat},
              {"merged_trace", merged_file},  {"iterations", iterations},
              {"span_ms", breakdown.span_ms}, {"ranks", ranks}};
  if (!trace.run.label.empty()) out["point_label"] = trace.run.label;
  return out;
}

}  // namespace harness
