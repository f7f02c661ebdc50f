// Per-rank Chrome traces of a results folder (the contract the rank workers write:
// raw/<point>/<system>/rep<k>/trace_rank<r>.json, one measured iteration per rank): finding
// them, reading and checking them, and merging one run's ranks into a single trace that opens
// in Perfetto or chrome://tracing. Torch-free; `harness trace` and the timeline figure use it.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace harness {

// The event categories of the contract: compute, then communication.
inline constexpr const char* kTraceComputeCategories[] = {"forward", "backward", "backward_weight",
                                                          "step"};
inline constexpr const char* kTraceCommCategories[] = {"send",     "recv",      "allreduce",
                                                       "alltoall", "allgather", "reducescatter"};

bool is_compute_category(const std::string& category);
bool is_comm_category(const std::string& category);

// One complete event of a contract category, times in microseconds.
struct TraceSpan {
  double start_us = 0;
  double end_us = 0;
  std::string category;
  std::string name;
  long long micro_batch = -1;  // args.micro_batch, -1 when absent
};

struct RankTrace {
  std::filesystem::path file;
  long long rank = 0;              // from the file name (otherData.rank must agree)
  std::optional<long long> stage;  // otherData.stage (pipeline systems)
  long long world_size = 0;        // otherData.world_size, 0 when absent
  long long iteration = -1;        // otherData.iteration, -1 when absent
  std::string system;              // otherData.system
  std::string schedule;            // otherData.schedule (pipeline systems)
  nlohmann::json other_data;       // otherData as written (an object, possibly empty)
  nlohmann::json events;           // traceEvents as written
  std::vector<TraceSpan> spans;    // the complete events of the six categories
};

// "rank 2 (stage 1)", or "rank 2" without a stage.
std::string rank_label(const RankTrace& rank);

// Reads and checks one trace_rank<r>.json. Throws InputError with one line naming the file and
// what is wrong: malformed JSON (with line:column), no traceEvents array, an event missing a
// field or with a field of the wrong type, an otherData.rank that disagrees with the name.
// Events of other categories or phases are kept for the merged file; `warnings` says so.
RankTrace read_rank_trace(const std::filesystem::path& file, std::vector<std::string>& warnings);

// The traces of one run (a point, a system, a repeat) of a results folder.
struct TraceRun {
  std::string point;  // point id, e.g. p000
  std::string label;  // the point's label from manifest.json ("" when there is none)
  std::string system;
  long long repeat = 0;
  std::filesystem::path directory;                // the run's raw folder
  std::vector<std::filesystem::path> rank_files;  // trace_rank<r>.json, by rank
};

// Every run folder raw/<point>/<system>/rep<k>/ holding at least one trace_rank<r>.json,
// ordered by point, system (manifest order when there is a manifest) and repeat.
std::vector<TraceRun> find_trace_runs(const std::filesystem::path& results_directory);

// A run's ranks read and shifted so that the earliest event of all ranks is at 0.
struct LoadedTrace {
  TraceRun run;
  std::vector<RankTrace> ranks;  // by rank; span times relative to origin_us
  double origin_us = 0;          // the earliest event's ts as the ranks wrote it
  std::vector<std::string> warnings;
};
LoadedTrace load_trace_run(const TraceRun& run);

// The merged Chrome trace of a run: every rank's events with pid = rank and ts shifted by
// -origin_us, metadata events kept (a process_name and a process_sort_index per rank added
// where the rank did not name itself), and otherData describing the run and each rank.
nlohmann::json merged_trace(const LoadedTrace& trace, const std::string& experiment);

}  // namespace harness
