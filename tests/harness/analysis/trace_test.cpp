// harness trace and the timeline figure: interval arithmetic, the per-rank breakdown of the
// hand-made traces in tests/data/trace/run (a DDP run and a 2-stage GPipe run whose expected
// numbers are worked out in the comments), the merged Chrome trace, filters, one-line errors
// for bad traces, and the Gantt chart drawn by gnuplot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/analysis/breakdown_table.h"
#include "harness/analysis/trace_breakdown.h"
#include "harness/analysis/trace_merge.h"
#include "harness/cli/plot_command.h"
#include "harness/cli/trace_command.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using harness::InputError;
using harness::read_file;
using harness::TimeInterval;
using harness_test::TempDir;
using nlohmann::json;

constexpr double kOrigin = 8123456789.25;  // the fixtures' earliest ts (us)

// A writable copy of the fixture results folder.
fs::path copy_fixture(const TempDir& dir) {
  fs::copy(fs::path(HARNESS_TEST_DATA) / "trace" / "run", dir.path() / "run",
           fs::copy_options::recursive);
  return dir.path() / "run";
}

harness::LoadedTrace load(const fs::path& run, const std::string& system) {
  for (const auto& found : harness::find_trace_runs(run)) {
    if (found.system == system) return harness::load_trace_run(found);
  }
  ADD_FAILURE() << "no run for " << system;
  return {};
}

// Options selecting runs, as the command line would give them.
harness::TraceOptions only(std::string point, std::string system = "",
                           std::optional<long long> repeat = {}, fs::path output = {}) {
  harness::TraceOptions options;
  options.point = std::move(point);
  options.system = std::move(system);
  options.repeat = repeat;
  options.output = std::move(output);
  return options;
}

// The message of the InputError that `run_trace` throws.
std::string trace_error(const fs::path& run, harness::TraceOptions options = {}) {
  std::ostringstream out, err;
  try {
    harness::run_trace(run, options, out, err);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TraceIntervals, UnionIntersectionGaps) {
  // Overlapping, nested, touching and empty intervals, out of order.
  const auto merged = harness::interval_union({{5, 7}, {0, 2}, {1, 3}, {3, 4}, {5.5, 6}, {8, 8}});
  EXPECT_EQ(merged, (std::vector<TimeInterval>{{0, 4}, {5, 7}}));
  EXPECT_DOUBLE_EQ(harness::interval_length(merged), 6);
  const auto common = harness::interval_intersection(merged, {{-1, 0.5}, {3.5, 6}, {6.5, 10}});
  EXPECT_EQ(common, (std::vector<TimeInterval>{{0, 0.5}, {3.5, 4}, {5, 6}, {6.5, 7}}));
  EXPECT_EQ(harness::interval_gaps(merged, -1, 9),
            (std::vector<TimeInterval>{{-1, 0}, {4, 5}, {7, 9}}));
  EXPECT_EQ(harness::interval_gaps(merged, 0, 7), (std::vector<TimeInterval>{{4, 5}}));
  EXPECT_TRUE(harness::interval_union({}).empty());
}

void expect_row(const harness::RankBreakdown& row, std::vector<double> expected) {
  SCOPED_TRACE("rank " + std::to_string(row.rank));
  const std::vector<double> got = {row.span_ms,     row.compute_ms,      row.forward_ms,
                                   row.backward_ms, row.step_ms,         row.comm_ms,
                                   row.send_ms,     row.recv_ms,         row.allreduce_ms,
                                   row.overlap_ms,  row.exposed_comm_ms, row.idle_ms};
  ASSERT_EQ(got.size(), expected.size());
  const char* names[] = {"span", "compute", "forward",   "backward", "step",    "comm",
                         "send", "recv",    "allreduce", "overlap",  "exposed", "idle"};
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-9) << names[i];
}

TEST(TraceBreakdown, DataParallelRanks) {
  TempDir dir;
  const auto trace = load(copy_fixture(dir), "overlap");
  ASSERT_EQ(trace.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(trace.origin_us, kOrigin);
  const auto breakdown = harness::trace_breakdown(trace);
  EXPECT_NEAR(breakdown.span_ms, 8.5, 1e-9);
  // Rank 0 (us): forward [0,2000], backward [2000,6000], all-reduce buckets [3000,5500] and
  // [5000,7000] (union [3000,7000]: 4 ms, not 4.5), step [7500,8500]. Span 8.5; compute 7;
  // overlapped [3000,6000] = 3; exposed 1; idle [7000,7500] = 0.5 (5.9%).
  expect_row(breakdown.ranks[0], {8.5, 7, 2, 4, 1, 4, 0, 0, 4, 3, 1, 0.5});
  EXPECT_NEAR(breakdown.ranks[0].idle_fraction, 0.5 / 8.5, 1e-12);
  // Rank 1: forward [300,2500], backward [2500,6500], all-reduce [3000,5500] + [6500,7000],
  // step [7000,8000]: every interval touches the next, so no idle time. Span 7.7, compute 7.2,
  // comm 3, overlapped 2.5, exposed 0.5.
  expect_row(breakdown.ranks[1], {7.7, 7.2, 2.2, 4, 1, 3, 0, 0, 3, 2.5, 0.5, 0});
  EXPECT_NEAR(breakdown.ranks[1].start_ms, 0.3, 1e-9);
  EXPECT_FALSE(breakdown.ranks[0].stage.has_value());
}

TEST(TraceBreakdown, AllToAllInsideComputeIsNotCompute) {
  // Expert parallelism (us): forward [0,10000] waits in a dispatch all-to-all [2000,5000];
  // backward [10000,20000] in a gradient all-to-all [12000,14000]; a bucket all-reduce
  // [15000,22000] overlaps backward's end.
  harness::RankTrace rank;
  rank.spans = {{0, 10000, "forward", "forward"},
                {2000, 5000, "alltoall", "moe 0 dispatch"},
                {10000, 20000, "backward", "backward"},
                {12000, 14000, "alltoall", "moe 0 dispatch backward"},
                {15000, 22000, "allreduce", "allreduce bucket 0"}};
  const harness::RankBreakdown row = harness::rank_breakdown(rank);
  // compute = [0,2] + [5,12] + [14,20] = 15 ms; all-to-all 3 + 2 = 5; comm = 5 + 7 = 12;
  // overlapped: compute and comm at once = [15,20] = 5; exposed 12 - 5 = 7; idle 0.
  EXPECT_NEAR(row.compute_ms, 15, 1e-9);
  EXPECT_NEAR(row.alltoall_ms, 5, 1e-9);
  EXPECT_NEAR(row.allreduce_ms, 7, 1e-9);
  EXPECT_NEAR(row.comm_ms, 12, 1e-9);
  EXPECT_NEAR(row.overlap_ms, 5, 1e-9);
  EXPECT_NEAR(row.exposed_comm_ms, 7, 1e-9);
  EXPECT_NEAR(row.idle_ms, 0, 1e-9);
  EXPECT_NEAR(row.forward_ms, 10, 1e-9);  // as the rank measured it, waiting included
}

TEST(BreakdownTable, OneRowPerTracedSystemMeanOverRanks) {
  TempDir dir;
  const std::string md = harness::render_breakdown_markdown(copy_fixture(dir), "trace_fixture");
  EXPECT_NE(md.find("### trace_fixture: pipeline.micro_batches=2 - time breakdown"),
            std::string::npos)
      << md;
  // The DDP run's ranks (TraceBreakdown.DataParallelRanks): spans 8.5 and 7.7, compute 7 and
  // 7.2, all-reduce 4 and 3, idle 0.5 and 0 -> means 8.1, 7.1, 3.5, 0.25.
  EXPECT_NE(md.find("| overlap | 8.100 | 7.100 | 0.000 | 3.500 | 0.000 | 0.000 | 0.000 | 0.000 | "
                    "0.250 | 2 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gpipe_2x1 | "), std::string::npos) << md;  // the pipeline run's row
  // No traces, no section.
  TempDir empty;
  EXPECT_EQ(harness::render_breakdown_markdown(empty.path(), "x"), "");
}

// The traced iteration (the fixture's measured iteration 7) beside its run: each iteration on
// its slowest rank is 2 2 3 4 5 6 7 50 9 10, so the traced one takes 50 ms against a median of
// (5 + 6) / 2 = 5.5, with all 10 at or below it: marked, and the legend says why.
TEST(BreakdownTable, TheTracedIterationStandsBesideTheRunsMedian) {
  TempDir dir;
  const fs::path run = copy_fixture(dir);
  const fs::path ddp = run / "raw" / "p000" / "overlap" / "rep0";
  std::string rank0 = "iteration,forward_ms,backward_ms,step_ms,iteration_ms\n";
  std::string rank1 = rank0;
  for (int i = 0; i < 10; ++i) {
    const double slow = i == 7 ? 50 : i + 1;
    rank0 += std::to_string(i) + ",0,0,0," + std::to_string(slow) + "\n";
    rank1 += std::to_string(i) + ",0,0,0,2\n";
  }
  harness::write_file_atomic(ddp / "rank0.csv", rank0);
  harness::write_file_atomic(ddp / "rank1.csv", rank1);
  const std::string md = harness::render_breakdown_markdown(run, "trace_fixture");
  EXPECT_NE(md.find("| overlap | 8.100 | 7.100 | 0.000 | 3.500 | 0.000 | 0.000 | 0.000 | 0.000 | "
                    "0.250 | 2 | 50.000 | 5.500 | 100‡ |"),
            std::string::npos)
      << md;
  // The pipeline run has no samples here: its place is not known, and says so.
  EXPECT_NE(md.find("| 2 | — | — | — |"), std::string::npos) << md;
  EXPECT_NE(md.find(harness::kAtypicalLegend), std::string::npos) << md;
}

TEST(TraceBreakdown, PipelineStagesWithBubbles) {
  TempDir dir;
  const auto trace = load(copy_fixture(dir), "gpipe_2x1");
  const auto breakdown = harness::trace_breakdown(trace);
  ASSERT_EQ(breakdown.ranks.size(), 2u);
  EXPECT_EQ(breakdown.ranks[0].stage, 0);
  EXPECT_EQ(breakdown.ranks[1].stage, 1);
  EXPECT_NEAR(breakdown.span_ms, 6.6, 1e-9);
  // Stage 0: forward mb0/mb1 [0,2000], sends [1000,1200] (beside forward mb1) and [2000,2200],
  // recvs [3000,4200] and [4300,5200] (beside backward mb0), backward [4200,6200], step
  // [6200,6600]. Compute 4.4, comm 0.2+0.2+1.2+0.9 = 2.5, overlapped 0.2+0.9 = 1.1, exposed
  // 1.4; the bubble [2200,3000] is idle: 0.8 of 6.6.
  expect_row(breakdown.ranks[0], {6.6, 4.4, 2, 2, 0.4, 2.5, 0.4, 2.1, 0, 1.1, 1.4, 0.8});
  // Stage 1: recv [800,1200], forward [1200,2000], recv [2000,2200], forward [2200,3000],
  // backward [3000,5000], sends [4000,4200] (beside backward mb1) and [5000,5200], step
  // [5200,5600]: span 4.8 with no gap; compute 4, comm 1, overlapped 0.2.
  expect_row(breakdown.ranks[1], {4.8, 4, 1.6, 2, 0.4, 1, 0.4, 0.6, 0, 0.2, 0.8, 0});
}

TEST(TraceCommand, MergesEveryRunAndWritesTheBreakdown) {
  TempDir dir;
  const fs::path run = copy_fixture(dir);
  std::ostringstream out, err;
  EXPECT_EQ(harness::run_trace(run, {}, out, err), 0);
  EXPECT_EQ(err.str(), "");
  const fs::path ddp = run / "raw/p000/overlap/rep0";
  const json merged = harness::parse_json(read_file(ddp / "trace.json"));
  EXPECT_EQ(merged["displayTimeUnit"], "ms");
  EXPECT_EQ(merged["otherData"]["experiment"], "trace_fixture");
  EXPECT_DOUBLE_EQ(merged["otherData"]["time_origin_us"].get<double>(), kOrigin);
  EXPECT_EQ(merged["otherData"]["ranks"][1]["iteration"], 7);
  size_t metadata = 0, complete = 0, sort_index = 0;
  double earliest = 1e300;
  for (const auto& event : merged["traceEvents"]) {
    if (event["ph"] == "M") {
      ++metadata;
      sort_index += event["name"] == "process_sort_index";
      continue;
    }
    ++complete;
    earliest = std::min(earliest, event["ts"].get<double>());
    if (event["name"] == "allreduce bucket 1") {
      // Rank 0's bucket 1 [5000,7000] overlaps bucket 0 [3000,5500] without nesting: it moves
      // to a second all-reduce thread. Rank 1's [6500,7000] does not.
      EXPECT_EQ(event["tid"], event["pid"] == 0 ? 103 : 3) << event;
    }
    if (event["name"] == "forward" && event["pid"] == 1) {
      EXPECT_DOUBLE_EQ(event["ts"].get<double>(), 300);  // shifted, not rounded
      EXPECT_DOUBLE_EQ(event["dur"].get<double>(), 2200);
    }
  }
  EXPECT_EQ(complete, 10u);
  // The ranks' names kept, a sort index added per rank, a name for rank 0's second
  // all-reduce thread.
  EXPECT_EQ(metadata, 2u * 5u + 2u + 1u);
  EXPECT_EQ(sort_index, 2u);
  EXPECT_DOUBLE_EQ(earliest, 0);
  const auto second_thread =
      std::find_if(merged["traceEvents"].begin(), merged["traceEvents"].end(),
                   [](const json& e) { return e["ph"] == "M" && e["tid"] == 103; });
  ASSERT_NE(second_thread, merged["traceEvents"].end());
  EXPECT_EQ((*second_thread)["args"]["name"], "allreduce #2");
  EXPECT_EQ((*second_thread)["pid"], 0);

  const std::string table = read_file(ddp / "trace_breakdown.md");
  EXPECT_NE(table.find("| 0 | 8.500 | 7.000 | 2.000 | 4.000 | 1.000 | 4.000 | 0.000 | 0.000 | "
                       "4.000 | 0.000 | 0.000 | 0.000 | 3.000 | 1.000 | 0.500 | 5.9 |"),
            std::string::npos)
      << table;
  // Mean of the two ranks; idle % over both spans: 0.5 / 16.2.
  EXPECT_NE(table.find("| mean | 8.100 | 7.100 |"), std::string::npos) << table;
  EXPECT_NE(table.find(" 0.250 | 3.1 |\n"), std::string::npos) << table;
  EXPECT_NE(out.str().find(table), std::string::npos);  // printed as written
  // The ranks chose the traced iteration nearest the run's median and said so.
  EXPECT_NE(table.find("iteration 7 (8.500 ms; the run's median 8.250 ms over 16 iterations, "
                       "the nearest of 16 traced), 2 rank(s)"),
            std::string::npos)
      << table;

  const fs::path pipe = run / "raw/p000/gpipe_2x1/rep0";
  const std::string staged = read_file(pipe / "trace_breakdown.md");
  EXPECT_NE(staged.find("| rank | stage | span ms |"), std::string::npos) << staged;
  EXPECT_NE(staged.find("| 0 | 0 | 6.600 | 4.400 |"), std::string::npos) << staged;
  EXPECT_NE(staged.find("iteration 7, 2 rank(s), schedule gpipe"), std::string::npos);
  const json numbers = harness::parse_json(read_file(pipe / "trace_breakdown.json"));
  EXPECT_EQ(numbers["merged_trace"], "raw/p000/gpipe_2x1/rep0/trace.json");
  EXPECT_EQ(numbers["ranks"][1]["stage"], 1);
  EXPECT_NEAR(numbers["ranks"][0]["idle_fraction"].get<double>(), 0.8 / 6.6, 1e-12);
  EXPECT_NEAR(numbers["ranks"][0]["exposed_comm_ms"].get<double>(), 1.4, 1e-9);
}

TEST(TraceCommand, FiltersAndOutput) {
  TempDir dir;
  const fs::path run = copy_fixture(dir);
  harness::TraceOptions options;
  options.system = "gpipe_2x1";
  options.point = "pipeline.micro_batches=2";  // a label works as well as p000
  options.output = dir.path() / "merged.json";
  std::ostringstream out, err;
  harness::run_trace(run, options, out, err);
  EXPECT_TRUE(fs::exists(dir.path() / "merged.json"));
  EXPECT_FALSE(fs::exists(run / "raw/p000/overlap/rep0/trace_breakdown.md"));
  EXPECT_FALSE(fs::exists(run / "raw/p000/gpipe_2x1/rep0/trace.json"));
  EXPECT_TRUE(fs::exists(run / "raw/p000/gpipe_2x1/rep0/trace_breakdown.md"));

  EXPECT_EQ(trace_error(run, only("p007")),
            run.string() + ": no traces match --point p007 (runs with traces have points p000)");
  EXPECT_EQ(trace_error(run, only("", "sync")),
            run.string() +
                ": no traces match --system sync (runs with traces have systems gpipe_2x1, "
                "overlap)");
  EXPECT_EQ(trace_error(run, only("", "", 3)),
            run.string() + ": no traces match --repeat 3 (runs with traces have repeats 0)");
  EXPECT_EQ(trace_error(run, only("", "", {}, "x.json")),
            "--output x.json takes the merged trace of one run, 2 runs have traces here (choose "
            "one with --point, --system, --repeat)");
}

TEST(TraceCommand, OneLineErrors) {
  TempDir dir;
  EXPECT_EQ(trace_error(dir.path() / "missing"),
            (dir.path() / "missing").string() + ": no such results folder");
  EXPECT_EQ(trace_error(dir.path()),
            dir.path().string() +
                ": no traces in this results folder (no raw/<point>/<system>/rep<k>/"
                "trace_rank<r>.json)");

  const fs::path run = copy_fixture(dir);
  const fs::path rank1 = run / "raw/p000/overlap/rep0/trace_rank1.json";
  const std::string good = read_file(rank1);
  // A comma missing between two events on line 3: the parser stops at column 3 of line 3.
  std::string broken = good;
  const size_t line2_end = broken.find('\n', broken.find('\n') + 1);
  broken.erase(line2_end - 1, 1);
  harness::write_file_atomic(rank1, broken);
  const std::string message = trace_error(run);
  EXPECT_EQ(message.rfind(rank1.string() + ":3:3: malformed JSON: syntax error", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  // Nothing was written for the good run either.
  EXPECT_FALSE(fs::exists(run / "raw/p000/gpipe_2x1/rep0/trace.json"));

  const auto error_for = [&](const json& document) {
    harness::write_file_atomic(rank1, harness::json_text(document));
    return trace_error(run, only("", "overlap"));
  };
  json document = harness::parse_json(good);
  json missing = document;
  missing["traceEvents"][6].erase("dur");
  EXPECT_EQ(error_for(missing),
            rank1.string() + ": traceEvents[6] (\"backward\"): missing \"dur\"");
  json text_ts = document;
  text_ts["traceEvents"][5]["ts"] = "300";
  EXPECT_EQ(
      error_for(text_ts),
      rank1.string() + ": traceEvents[5] (\"forward\"): \"ts\" is not a number (microseconds)");
  // Finite but beyond any clock: refused where it is read, not printed as a run span of 1e31 ms.
  json far_ts = document;
  far_ts["traceEvents"][5]["ts"] = 1e308;
  EXPECT_EQ(error_for(far_ts), rank1.string() +
                                   ": traceEvents[5] (\"forward\"): \"ts\" is 1e+308 us, beyond "
                                   "+-1e+16 (a clock of 317 years)");
  json long_dur = document;
  long_dur["traceEvents"][6]["dur"] = 2e13;
  EXPECT_EQ(error_for(long_dur), rank1.string() +
                                     ": traceEvents[6] (\"backward\"): \"dur\" is 2e+13 us, more "
                                     "than 1e+13 (115 days)");
  json no_phase = document;
  no_phase["traceEvents"][5].erase("ph");
  EXPECT_EQ(error_for(no_phase),
            rank1.string() + ": traceEvents[5] (\"forward\"): missing \"ph\" (the event phase)");
  json wrong_rank = document;
  wrong_rank["otherData"]["rank"] = 0;
  EXPECT_EQ(error_for(wrong_rank),
            rank1.string() + ": otherData.rank is 0 but the file is named for rank 1");
  EXPECT_EQ(
      error_for(json::array()),
      rank1.string() + ": expected a JSON object with a \"traceEvents\" array (per-rank trace)");
  json only_metadata = document;
  only_metadata["traceEvents"] = json::array({document["traceEvents"][0]});
  EXPECT_NE(error_for(only_metadata).find(rank1.string() + ": no complete (\"ph\": \"X\") event"),
            std::string::npos);
}

TEST(TraceCommand, WarnsAboutWhatItDoesNotCount) {
  TempDir dir;
  const fs::path run = copy_fixture(dir);
  const fs::path rank1 = run / "raw/p000/overlap/rep0/trace_rank1.json";
  json document = harness::parse_json(read_file(rank1));
  document["traceEvents"].push_back({{"name", "loss"},
                                     {"cat", "loss"},
                                     {"ph", "X"},
                                     {"ts", kOrigin - 100},
                                     {"dur", 50},
                                     {"pid", 1},
                                     {"tid", 0}});
  harness::write_file_atomic(rank1, harness::json_text(document));
  fs::remove(run / "raw/p000/overlap/rep0/trace_rank0.json");
  std::ostringstream out, err;
  harness::run_trace(run, only("", "overlap"), out, err);
  EXPECT_NE(err.str().find("warning: " + rank1.string() +
                           ": 1 event(s) of category 'loss' kept in the merged trace but not "
                           "counted in the breakdown"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("world size 2 but no trace from rank(s) 0"), std::string::npos);
  // The uncounted event is the earliest: it is at 0 and the counted ones after it.
  const json merged = harness::parse_json(read_file(run / "raw/p000/overlap/rep0/trace.json"));
  EXPECT_DOUBLE_EQ(merged["otherData"]["time_origin_us"].get<double>(), kOrigin - 100);
  const json numbers =
      harness::parse_json(read_file(run / "raw/p000/overlap/rep0/trace_breakdown.json"));
  EXPECT_NEAR(numbers["ranks"][0]["start_ms"].get<double>(), 0.4, 1e-9);
  EXPECT_NEAR(numbers["ranks"][0]["span_ms"].get<double>(), 7.7, 1e-9);
}

TEST(TimelinePlot, GanttPerRunWithLanesAndIdle) {
  if (!harness_test::have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  TempDir dir;
  const fs::path run = copy_fixture(dir);
  std::ostringstream out;
  EXPECT_EQ(harness::run_plots(run, {"timeline"}, out), 2u);
  const fs::path plots = run / "plots";
  for (const char* stem : {"timeline_p000_overlap_rep0", "timeline_p000_gpipe_2x1_rep0"}) {
    SCOPED_TRACE(stem);
    for (const char* extension : {".png", ".svg", ".dat", ".gp"}) {
      EXPECT_GT(fs::file_size(plots / (std::string(stem) + extension)), 100u) << extension;
    }
    EXPECT_EQ(read_file(plots / (std::string(stem) + ".png")).substr(1, 3), "PNG");
  }
  const std::string script = read_file(plots / "timeline_p000_gpipe_2x1_rep0.gp");
  EXPECT_NE(script.find("set ytics (\"rank 0 (stage 0)\" 0, \"rank 1 (stage 1)\" 1)"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("set xlabel \"time since the first event of the iteration (ms)\""),
            std::string::npos);
  EXPECT_NE(script.find("trace_fixture: timeline of one iteration\\npoint p000 "
                        "(pipeline.micro_batches=2)\\nsystem gpipe_2x1"),
            std::string::npos);
  for (const char* title : {"idle (bubble)", "forward", "backward", "send", "recv"}) {
    EXPECT_NE(script.find(std::string("title \"") + title + "\""), std::string::npos) << title;
  }
  EXPECT_EQ(script.find("title \"all-reduce\""), std::string::npos);  // none in this run
  // Stage 0's bubble [2.2, 3] ms spans its whole row; lanes: compute on top (twice as tall),
  // then send, then recv: row 0 is [-0.42, 0.42], a unit is 0.84 / 4 = 0.21.
  const std::string data = read_file(plots / "timeline_p000_gpipe_2x1_rep0.dat");
  EXPECT_NE(data.find("# block 0: idle (bubble)\n2.2 3 -0.42 0.42 0 \"idle\"\n"), std::string::npos)
      << data;
  EXPECT_NE(data.find("0 1 -0.42 0 0 \"forward mb0\"\n"), std::string::npos) << data;
  EXPECT_NE(data.find("1 1.2 0 0.21 0 \"send mb0\"\n"), std::string::npos) << data;
  EXPECT_NE(data.find("3 4.2 0.21 0.42 0 \"recv mb0\"\n"), std::string::npos) << data;
  EXPECT_NE(data.find("0.5 -0.21 \"F0\"\n"), std::string::npos) << data;  // micro-batch label
  const json index = harness::parse_json(read_file(plots / "figures.json"));
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index[0]["kind"], "timeline");
}

TEST(TimelinePlot, SaysSoWithoutTracesAndLimitsTheCount) {
  TempDir dir;
  const fs::path empty = dir.path() / "empty";
  fs::create_directories(empty / "raw/p000/overlap/rep0");
  std::ostringstream out;
  EXPECT_EQ(harness::run_plots(empty, {"timeline"}, out), 0u);
  EXPECT_EQ(out.str(), "plot timeline: does not fit " + empty.string() +
                           ": no traces in this results folder\n");
  if (!harness_test::have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  // 14 points of one system, a second repeat of the first: 12 figures, one per point.
  const fs::path run = copy_fixture(dir);
  fs::remove_all(run / "raw/p000/gpipe_2x1");
  const fs::path source = run / "raw/p000/overlap/rep0";
  fs::copy(source, run / "raw/p000/overlap/rep1");
  for (int p = 1; p < 14; ++p) {
    char id[8];
    std::snprintf(id, sizeof id, "p%03d", p);
    fs::create_directories(run / "raw" / id / "overlap");
    fs::copy(source, run / "raw" / id / "overlap/rep0");
  }
  std::ostringstream many;
  EXPECT_EQ(harness::run_plots(run, {"timeline"}, many), 12u);
  EXPECT_NE(many.str().find("plot timeline: drew the first 12 runs; 2 more have traces"),
            std::string::npos)
      << many.str();
  EXPECT_FALSE(fs::exists(run / "plots/timeline_p000_overlap_rep1.png"));
  EXPECT_FALSE(fs::exists(run / "plots/timeline_p012_overlap_rep0.png"));
}

}  // namespace

namespace {

TEST(TimelinePlot, ZeroBubbleWeightPassesAreDrawnApartAndCountedAsBackward) {
  // Rank 1's backward of micro-batch 1 split as a zero-bubble schedule runs it: I for the
  // first 600 us, W for the last 400. The breakdown still counts both as backward; the
  // timeline draws W in its own colour on the compute lane.
  TempDir dir;
  const fs::path run = copy_fixture(dir);
  const fs::path rank1 = run / "raw/p000/gpipe_2x1/rep0/trace_rank1.json";
  json document = harness::parse_json(read_file(rank1));
  for (auto& event : document["traceEvents"]) {
    if (event.value("name", "") != "backward mb1") continue;
    event["name"] = "backward-input mb1";
    event["dur"] = 600;
    json weight = event;
    weight["name"] = "backward-weight mb1";
    weight["cat"] = "backward_weight";
    weight["ts"] = event["ts"].get<double>() + 600;
    weight["dur"] = 400;
    document["traceEvents"].push_back(weight);
    break;
  }
  harness::write_file_atomic(rank1, harness::json_text(document));
  const auto breakdown = harness::trace_breakdown(load(run, "gpipe_2x1"));
  EXPECT_NEAR(breakdown.ranks[1].backward_ms, 2.0, 1e-9);  // 1.0 + 0.6 + 0.4
  if (!harness_test::have_gnuplot()) GTEST_SKIP() << "gnuplot is not installed";
  std::ostringstream out;
  EXPECT_EQ(harness::run_plots(run, {"timeline"}, out), 2u);
  const std::string script = read_file(run / "plots" / "timeline_p000_gpipe_2x1_rep0.gp");
  EXPECT_NE(script.find("title \"backward (W)\""), std::string::npos) << script;
}

}  // namespace
