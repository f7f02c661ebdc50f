// Where a rank's iteration goes, from its trace (like HiDup's Table III): compute, the union of
// communication intervals, the part of communication hidden under compute, the exposed rest,
// and idle (bubble) time: the part of the rank's span [first event start, last event end]
// covered by no event at all. An all-to-all blocks the compute it sits in (expert
// parallelism's dispatch inside forward, its gradient's inside backward): compute excludes it.
// Interval arithmetic on unions, so overlapping events (a send beside a recv, two all-reduce
// buckets in flight) are counted once.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/analysis/trace_merge.h"

namespace harness {

// Half-open time intervals [start, end).
using TimeInterval = std::pair<double, double>;

// Sorted, disjoint intervals covering exactly the union of `intervals` (empty ones dropped;
// touching ones merged).
std::vector<TimeInterval> interval_union(std::vector<TimeInterval> intervals);

// The total length of disjoint intervals.
double interval_length(const std::vector<TimeInterval>& disjoint);

// The intersection of two sets of sorted disjoint intervals (sorted, disjoint).
std::vector<TimeInterval> interval_intersection(const std::vector<TimeInterval>& a,
                                                const std::vector<TimeInterval>& b);

// The parts of [start, end) that no interval of `disjoint` covers.
std::vector<TimeInterval> interval_gaps(const std::vector<TimeInterval>& disjoint, double start,
                                        double end);

// The union of a rank's spans whose category satisfies `keep`.
template <typename Keep>
std::vector<TimeInterval> spans_union(const RankTrace& rank, Keep keep) {
  std::vector<TimeInterval> intervals;
  for (const auto& span : rank.spans) {
    if (keep(span.category)) intervals.emplace_back(span.start_us, span.end_us);
  }
  return interval_union(std::move(intervals));
}

// Idle (bubble) intervals of a rank in microseconds: its span minus every event.
std::vector<TimeInterval> idle_intervals(const RankTrace& rank);

struct RankBreakdown {
  long long rank = 0;
  std::optional<long long> stage;
  size_t events = 0;  // complete events counted
  double start_ms = 0, span_ms = 0;
  double compute_ms = 0, forward_ms = 0, backward_ms = 0, step_ms = 0;
  double comm_ms = 0, send_ms = 0, recv_ms = 0, allreduce_ms = 0, alltoall_ms = 0, allgather_ms = 0,
         reducescatter_ms = 0;
  double overlap_ms = 0;       // compute and communication at once
  double exposed_comm_ms = 0;  // communication with no compute beside it
  double idle_ms = 0;          // neither
  double idle_fraction = 0;    // idle_ms / span_ms
};

RankBreakdown rank_breakdown(const RankTrace& rank);

// The breakdown of every rank of a run and the run's span (first event to last, all ranks).
struct TraceBreakdown {
  std::vector<RankBreakdown> ranks;
  double span_ms = 0;
};
TraceBreakdown trace_breakdown(const LoadedTrace& trace);

// "p000 (ddp.bucket_mb=25) / overlap / rep0": a run as messages and headings name it.
std::string trace_run_name(const TraceRun& run);

// A markdown section for the run: a heading, what was traced, and the table (a row per rank,
// a stage column for pipeline systems, a mean row when there are several ranks).
std::string breakdown_markdown(const LoadedTrace& trace, const TraceBreakdown& breakdown,
                               const std::string& experiment, const std::string& merged_file);

nlohmann::json breakdown_json(const LoadedTrace& trace, const TraceBreakdown& breakdown,
                              const std::string& experiment, const std::string& merged_file);

}  // namespace harness
