// Results folders: never reused, files written whole, samples read back, summaries and the
// compare_ddp-style tables computed from a hand-made folder with known numbers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/analysis/comparison_table.h"
#include "harness/analysis/memory_table.h"
#include "harness/analysis/utilisation_table.h"
#include "harness/results/results_folder.h"
#include "harness/results/run_manifest.h"
#include "harness/results/run_status.h"
#include "harness/results/run_summary.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using harness_test::TempDir;

TEST(ResultFiles, RunDirectoriesAreNeverReused) {
  TempDir dir;
  const auto a = harness::create_run_directory(dir.path(), "exp");
  const auto b = harness::create_run_directory(dir.path(), "exp");
  EXPECT_NE(a, b);
  EXPECT_TRUE(fs::is_directory(a));
  EXPECT_TRUE(fs::is_directory(b));
  EXPECT_EQ(a.parent_path(), dir.path() / "exp");
}

TEST(ResultFiles, AtomicWriteLeavesNoTemporaryBehind) {
  TempDir dir;
  harness::write_file_atomic(dir.path() / "sub" / "x.txt", "first");
  harness::write_file_atomic(dir.path() / "sub" / "x.txt", "second");
  EXPECT_EQ(harness::read_file(dir.path() / "sub" / "x.txt"), "second");
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path() / "sub")) ++files;
  EXPECT_EQ(files, 1u);
}

// A folder with one point, two systems, two ranks each; iteration times chosen so that the
// pooled statistics are easy to compute by hand.
fs::path make_results_folder(const TempDir& dir, bool second_system_failed = false) {
  harness::Manifest manifest;
  manifest.experiment = "demo";
  manifest.baseline = "base";
  manifest.systems = {{"base", "ddp", "overlap"}, {"fast", "ddp", "sync"}};
  manifest.points = {{"p000", "ddp.bucket_mb=5", {{"ddp.bucket_mb", "5"}}, 2, 1, 2, 1}};
  const fs::path root = dir.path() / "run";
  harness::write_file_atomic(root / "manifest.json",
                             harness::json_text(harness::manifest_to_json(manifest), 2));
  auto write_rank = [&](const std::string& system, int rank, double a, double b) {
    const fs::path raw = harness::run_raw_directory(root, "p000", system, 0);
    char text[256];
    std::snprintf(text, sizeof text,
                  "iteration,forward_ms,backward_ms,step_ms,iteration_ms\n"
                  "0,1,2,0.5,%g\n1,1,2,0.5,%g\n",
                  a, b);
    harness::write_file_atomic(raw / ("rank" + std::to_string(rank) + ".csv"), text);
  };
  write_rank("base", 0, 10, 20);
  write_rank("base", 1, 30, 40);  // pooled: 10 20 30 40 -> mean 25, p50 25
  write_rank("fast", 0, 5, 10);
  write_rank("fast", 1, 15, 20);  // pooled: 5 10 15 20 -> mean 12.5, p50 12.5
  for (const char* system : {"base", "fast"}) {
    const bool failed = second_system_failed && std::string(system) == "fast";
    harness::write_file_atomic(harness::run_raw_directory(root, "p000", system, 0) / "status.json",
                               failed ? R"({"status": "failed"})" : R"({"status": "complete"})");
  }
  return root;
}

TEST(RunSummary, PoolsRanksAndComputesStatistics) {
  TempDir dir;
  const auto summary = harness::summarize_run_directory(make_results_folder(dir));
  ASSERT_EQ(summary.points.size(), 1u);
  const auto& systems = summary.points[0].systems;
  ASSERT_EQ(systems.size(), 2u);
  const auto& base = systems[0].phases.at("iteration");
  EXPECT_EQ(base.count, 4u);
  EXPECT_DOUBLE_EQ(base.mean, 25);
  EXPECT_DOUBLE_EQ(base.p50, 25);
  EXPECT_DOUBLE_EQ(base.p90, 37);  // h = 2.7 -> 30 + 0.7*10
  EXPECT_DOUBLE_EQ(systems[1].phases.at("iteration").mean, 12.5);
  EXPECT_DOUBLE_EQ(systems[1].phases.at("forward").mean, 1);
}

TEST(RunSummary, MemoryPerRankIsTheLargestOverRanks) {
  TempDir dir;
  const fs::path root = make_results_folder(dir);
  // "fast" wrote memory files (as DDP and expert-parallel ranks do), "base" none.
  const fs::path raw = harness::run_raw_directory(root, "p000", "fast", 0);
  harness::write_file_atomic(raw / "memory_rank0.json",
                             R"({"parameter_bytes": 3145728, "expert_parameter_bytes": 1048576,
                                 "gradient_bytes": 3145728, "optimizer_state_bytes": 0,
                                 "peak_resident_bytes": 419430400})");
  harness::write_file_atomic(raw / "memory_rank1.json",
                             R"({"parameter_bytes": 4194304, "expert_parameter_bytes": 2097152,
                                 "gradient_bytes": 4194304, "optimizer_state_bytes": 4194304,
                                 "peak_resident_bytes": 398458880})");
  const auto summary = harness::summarize_run_directory(root);
  const auto& systems = summary.points[0].systems;
  EXPECT_FALSE(systems[0].memory);
  ASSERT_TRUE(systems[1].memory);
  const harness::RankMemory& m = *systems[1].memory;
  EXPECT_DOUBLE_EQ(m.parameter_bytes, 4194304);        // rank 1's 4 MiB
  EXPECT_DOUBLE_EQ(m.peak_resident_bytes, 419430400);  // rank 0's 400 MiB
  EXPECT_EQ(m.ranks, 2);
  EXPECT_EQ(harness::summary_to_json(
                summary)["points"][0]["systems"][1]["memory_per_rank"]["expert_parameter_bytes"],
            2097152.0);
  const std::string md = harness::render_memory_markdown(summary);
  EXPECT_NE(md.find("### demo: ddp.bucket_mb=5 - memory per rank"), std::string::npos) << md;
  EXPECT_NE(md.find("| fast | 4.0 | 2.0 | 4.0 | 4.0 | 400 | 2 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| base |"), std::string::npos) << md;
  EXPECT_EQ(md.find("GPU peak"), std::string::npos) << md;  // no rank ran on a GPU
}

// Ranks on a GPU add the caching allocator's peaks: the largest over ranks, in the summary,
// the counters and two more columns of the memory table.
TEST(RunSummary, GpuRanksAddTheirDevicePeaks) {
  TempDir dir;
  const fs::path root = make_results_folder(dir);
  const fs::path raw = harness::run_raw_directory(root, "p000", "fast", 0);
  const std::string common = R"("parameter_bytes": 1048576, "expert_parameter_bytes": 0,
      "gradient_bytes": 1048576, "optimizer_state_bytes": 0, "peak_resident_bytes": 209715200)";
  harness::write_file_atomic(raw / "memory_rank0.json",
                             "{" + common +
                                 R"(, "peak_device_allocated_bytes": 314572800,
                                 "peak_device_reserved_bytes": 419430400})");
  harness::write_file_atomic(raw / "memory_rank1.json",
                             "{" + common +
                                 R"(, "peak_device_allocated_bytes": 335544320,
                                 "peak_device_reserved_bytes": 402653184})");
  const auto summary = harness::summarize_run_directory(root);
  const harness::RankMemory& m = *summary.points[0].systems[1].memory;
  EXPECT_DOUBLE_EQ(*m.peak_device_allocated_bytes, 335544320);  // rank 1's 320 MiB
  EXPECT_DOUBLE_EQ(*m.peak_device_reserved_bytes, 419430400);   // rank 0's 400 MiB
  EXPECT_EQ(
      harness::summary_to_json(
          summary)["points"][0]["systems"][1]["memory_per_rank"]["peak_device_reserved_bytes"],
      419430400.0);
  const std::string md = harness::render_memory_markdown(summary);
  EXPECT_NE(md.find("| peak RSS | GPU peak allocated | GPU peak reserved | ranks |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| fast | 1.0 | 0.0 | 1.0 | 0.0 | 200 | 320 | 400 | 2 |"), std::string::npos)
      << md;
}

// A model that reads tokens: tokens per second of the whole run (batch x tokens x ranks over
// the iteration p50), in summary.json and as two more columns of the utilisation table.
TEST(RunSummary, TokenModelsAddTokensPerSecond) {
  const nlohmann::json llama = {
      {"model", {{"name", "llama"}, {"batch_size", 2}, {"input_shape", {32}}}}};
  EXPECT_DOUBLE_EQ(*harness::tokens_per_second(llama, 2, 100.0), 2 * 32 * 2 / 0.1);
  EXPECT_FALSE(harness::tokens_per_second(
      {{"model", {{"name", "mlp"}, {"batch_size", 2}, {"input_shape", {64}}}}}, 2, 100.0));
  EXPECT_FALSE(harness::tokens_per_second(nlohmann::json(), 2, 100.0));  // an external system
  EXPECT_FALSE(harness::tokens_per_second(llama, 2, 0.0));

  TempDir dir;
  const fs::path root = make_results_folder(dir);
  for (const char* system : {"base", "fast"}) {
    const fs::path raw = harness::run_raw_directory(root, "p000", system, 0);
    nlohmann::json config = {
        {"model", {{"name", "bert"}, {"batch_size", 4}, {"input_shape", {16}}}}};
    harness::write_file_atomic(raw / "config.json", harness::json_text(config));
    harness::write_file_atomic(raw / "flops.json", R"({"iteration_flops_per_rank": [1e9, 1e9]})");
  }
  const auto summary = harness::summarize_run_directory(root);
  // fast: p50 12.5 ms, 4 x 16 tokens x 2 ranks = 128 tokens: 10240 tokens/s, 5120 per rank.
  EXPECT_DOUBLE_EQ(*summary.points[0].systems[1].tokens_per_s, 128 / 0.0125);
  const auto json = harness::summary_to_json(summary)["points"][0]["systems"][1];
  EXPECT_DOUBLE_EQ(json["tokens_per_s"].get<double>(), 10240);
  EXPECT_DOUBLE_EQ(json["tokens_per_s_per_rank"].get<double>(), 5120);
  const std::string md = harness::render_utilisation_markdown(summary);
  EXPECT_NE(md.find("| samples | tokens/s | tokens/s per rank |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 4 | 10240 | 5120 |"), std::string::npos) << md;
  // Without a token model, the columns are not there.
  TempDir other;
  const fs::path plain = make_results_folder(other);
  for (const char* system : {"base", "fast"}) {
    harness::write_file_atomic(harness::run_raw_directory(plain, "p000", system, 0) / "flops.json",
                               R"({"iteration_flops_per_rank": [1e9, 1e9]})");
  }
  const std::string no_tokens =
      harness::render_utilisation_markdown(harness::summarize_run_directory(plain));
  EXPECT_NE(no_tokens.find("| samples |\n"), std::string::npos) << no_tokens;
  EXPECT_EQ(no_tokens.find("tokens/s"), std::string::npos) << no_tokens;
}

TEST(ComparisonTable, MarkdownHasDeltaAgainstTheBaseline) {
  TempDir dir;
  const auto summary = harness::summarize_run_directory(make_results_folder(dir));
  const std::string md = harness::render_markdown_tables(summary);
  EXPECT_NE(md.find("## ddp.bucket_mb=5 | iteration"), std::string::npos) << md;
  // fast: mean 12.5 vs 25 -> -50.0%; p50 12.5 vs 25 -> -50.0%; p90 18.5 vs 37 -> -50.0%. Of 4
  // samples, p90 and above are marked: less than one sample lies beyond them.
  EXPECT_NE(md.find("| fast | 4 | 12.50 | -50.0 | 12.50 | -50.0 | 18.50† | -50.0† |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| base (baseline) | 4 | 25.00 | — | 25.00 | — | 37.00† | — |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(std::string("\n") + harness::kFewSamplesLegend + "\n"), std::string::npos)
      << md;
}

// A percentile q is marked below n = 1 / (1 - q) samples: p50 from 2, p90 from 10, p95 from 20,
// p99 from 100; the mean never.
TEST(ComparisonTable, PercentilesOfTooFewSamplesAreMarked) {
  using harness::percentile_too_few_samples;
  EXPECT_TRUE(percentile_too_few_samples("p50", 1));
  EXPECT_FALSE(percentile_too_few_samples("p50", 2));
  EXPECT_TRUE(percentile_too_few_samples("p90", 9));
  EXPECT_FALSE(percentile_too_few_samples("p90", 10));
  EXPECT_TRUE(percentile_too_few_samples("p95", 19));
  EXPECT_FALSE(percentile_too_few_samples("p95", 20));
  EXPECT_TRUE(percentile_too_few_samples("p99", 10));
  EXPECT_TRUE(percentile_too_few_samples("p99", 99));
  EXPECT_FALSE(percentile_too_few_samples("p99", 100));
  EXPECT_FALSE(percentile_too_few_samples("mean", 1));
}

TEST(ComparisonTable, CsvRowsParseBack) {
  TempDir dir;
  const auto summary = harness::summarize_run_directory(make_results_folder(dir));
  const std::string csv = harness::render_csv_table(summary);
  std::istringstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header,
            "point_id,point,phase,system,is_baseline,n,mean_ms,mean_delta_pct,p50_ms,"
            "p50_delta_pct,p90_ms,p90_delta_pct,p95_ms,p95_delta_pct,p99_ms,p99_delta_pct");
  int rows = 0;
  bool found = false;
  for (std::string line; std::getline(in, line);) {
    ++rows;
    if (line.rfind("p000,\"ddp.bucket_mb=5\",iteration,fast,0,4,12.5000,-50.000,", 0) == 0) {
      found = true;
    }
  }
  EXPECT_EQ(rows, 8);  // 4 phases x 2 systems
  EXPECT_TRUE(found) << csv;
}

TEST(RunSummary, APhaseACompleteSystemDidNotTimeIsNotReportedNotFailed) {
  TempDir dir;
  auto summary = harness::summarize_run_directory(make_results_folder(dir, false));
  summary.points[0].systems[1].phases.erase("forward");
  const std::string md = harness::render_markdown_tables(summary);
  EXPECT_NE(md.find("| fast | 0 | not reported |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| fast | 0 | failed |"), std::string::npos) << md;
}

TEST(RunSummary, IncompleteRunsAreLeftOutAndMarkedFailed) {
  TempDir dir;
  const auto summary = harness::summarize_run_directory(make_results_folder(dir, true));
  EXPECT_EQ(summary.points[0].systems[1].complete_runs, 0);
  EXPECT_TRUE(summary.points[0].systems[1].phases.empty());
  const std::string md = harness::render_markdown_tables(summary);
  EXPECT_NE(md.find("| fast | 0 | failed |"), std::string::npos) << md;
  const auto json = harness::summary_to_json(summary);
  EXPECT_EQ(json["points"][0]["systems"][1]["complete_runs"], 0);
  EXPECT_EQ(json["points"][0]["systems"][0]["phases"]["iteration"]["count"], 4);
}

// A write that cannot land (the destination is a folder) leaves nothing behind: no temporary,
// the folder untouched.
TEST(AtomicFile, AFailedWriteLeavesNoTemporary) {
  TempDir dir;
  const auto folder = dir.path() / "trace.json";
  std::filesystem::create_directories(folder);
  EXPECT_THROW(harness::write_file_atomic(folder, "{}"), std::runtime_error);
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"trace.json"});
  EXPECT_TRUE(std::filesystem::is_directory(folder));
}

TEST(SampleFile, MalformedRowsAreReportedWithTheirLine) {
  TempDir dir;
  // A corrupt results folder is bad input (exit 2), never a regression or a hang: every value
  // is a finite, non-negative number written whole.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"abc", ":3: forward_ms is not a number: 'abc'"},
      {"nan", ":3: forward_ms is not finite: 'nan'"},
      {"inf", ":3: forward_ms is not finite: 'inf'"},
      {"-2.5", ":3: forward_ms is negative: '-2.5'"},
      {"1.5ms", ":3: forward_ms is not a number: '1.5ms'"},
  };
  for (const auto& [value, expected] : cases) {
    const auto file =
        dir.write("rank0.csv", "iteration,forward_ms,iteration_ms\n0,1.5,2\n1," + value + ",2\n");
    try {
      harness::read_sample_file(file);
      FAIL() << value;
    } catch (const harness::InputError& e) {
      EXPECT_EQ(std::string(e.what()), file.string() + expected);
    }
  }
  const std::vector<std::pair<std::string, std::string>> files = {
      {"iteration,forward_ms,iteration_ms\n0\n", ":2: expected 3 fields"},
      {"iteration,forward_ms,iteration_ms\n", ": no samples after the header"},
      {"iteration,forward_ms\n0,1\n",
       ":1: no 'iteration_ms' column (header 'iteration,forward_ms')"},
      {"", ":1: expected a header starting with 'iteration'"},
  };
  for (const auto& [text, expected] : files) {
    const auto file = dir.write("rank1.csv", text);
    try {
      harness::read_sample_file(file);
      FAIL() << text;
    } catch (const harness::InputError& e) {
      EXPECT_EQ(std::string(e.what()), file.string() + expected);
    }
  }
}

TEST(Manifest, RoundTripsThroughJson) {
  harness::Manifest m;
  m.experiment = "e";
  m.baseline = "a";
  m.systems = {{"a", "ddp", "overlap"}};
  m.points = {{"p000", "x=1", {{"x", "1"}}, 2, 3, 10, 4}};
  const auto back = harness::manifest_from_json(harness::manifest_to_json(m), "manifest.json");
  EXPECT_EQ(back.points[0].coordinates[0].second, "1");
  EXPECT_EQ(back.points[0].repeats, 3);
  EXPECT_EQ(back.systems[0].mode, "overlap");
}

// A manifest is input like a spec: report and compare loop over its numbers and build paths
// from its names, so each is checked against a spec's limits before anything reads on.
TEST(Manifest, EveryFieldIsCheckedAgainstTheLimitsOfASpec) {
  harness::Manifest m;
  m.experiment = "e";
  m.baseline = "a";
  m.systems = {{"a", "ddp", "overlap"}, {"b", "ddp", "sync"}};
  m.points = {{"p000", "x=1", {{"x", "1"}}, 2, 3, 10, 4}};
  const nlohmann::json good = harness::manifest_to_json(m);
  const auto error_of = [&](const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json bad = good;
    bad[nlohmann::json::json_pointer(pointer)] = value;
    return harness_test::thrown_message<harness::InputError>(
        [&] { harness::manifest_from_json(bad, "m.json"); });
  };
  EXPECT_EQ(error_of("/points/0/world_size", 1000000000),
            "m.json: points[0].world_size: expected an integer in [1, 4096], got 1000000000");
  EXPECT_EQ(error_of("/points/0/world_size", -2),
            "m.json: points[0].world_size: expected an integer in [1, 4096], got -2");
  EXPECT_EQ(error_of("/points/0/iterations", 0),
            "m.json: points[0].iterations: expected an integer in [1, 100000000], got 0");
  EXPECT_EQ(error_of("/points/0/repeats", "3"),
            "m.json: points[0].repeats: expected an integer in [1, 10000], got \"3\"");
  EXPECT_EQ(error_of("/points/0/warmup", -1),
            "m.json: points[0].warmup: expected an integer in [0, 100000000], got -1");
  EXPECT_EQ(error_of("/systems/1/name", "../../etc"),
            "m.json: systems[1].name: cannot name a folder: starts with '.'");
  EXPECT_EQ(error_of("/systems/1/name", "a"), "m.json: systems[1].name: duplicate system 'a'");
  EXPECT_EQ(error_of("/points/0/id", "p/0"),
            "m.json: points[0].id: cannot name a folder: has a '/'");
  EXPECT_EQ(error_of("/experiment", "a\nb"),
            "m.json: experiment: cannot name a folder: has a control character");
  EXPECT_EQ(error_of("/baseline", "c"), "m.json: baseline: 'c' is none of the systems");
  EXPECT_EQ(error_of("/points", nlohmann::json::array()), "m.json: points: no point");
  EXPECT_EQ(error_of("/points/0/cluster",
                     nlohmann::json{{"machines", 3}, {"inter_machine_rate_bits_per_s", nullptr}}),
            "m.json: points[0].cluster.machines: expected an integer in [1, 2], got 3");
  EXPECT_EQ(error_of("/points/0/cluster",
                     nlohmann::json{{"machines", 2}, {"inter_machine_rate_bits_per_s", -1}}),
            "m.json: points[0].cluster.inter_machine_rate_bits_per_s: expected a positive "
            "number, got -1");
  EXPECT_EQ(error_of("/points/0/repeats", 10000),
            "");  // accepted: 2 systems x 10^4 repeats x 2 ranks, within the bounds
  // 2 systems x 10^4 repeats x 4096 ranks: more rank files than any study may hold.
  nlohmann::json huge = good;
  huge["points"][0]["repeats"] = 10000;
  huge["points"][0]["world_size"] = 4096;
  EXPECT_EQ(harness_test::thrown_message<harness::InputError>(
                [&] { harness::manifest_from_json(huge, "m.json"); }),
            "m.json: points[0]: the study would hold more than 100000 runs or 1000000 rank "
            "files (points x systems x repeats x world size)");
}

// status.json of a run and of a study, read strictly: a corrupt one is never "not complete".
TEST(RunStatus, ReadStrictly) {
  TempDir dir;
  const fs::path raw = dir.path() / "raw";
  // The message after "RAW/status.json".
  const auto outcome_error = [&](const std::string& text) {
    harness::write_file_atomic(raw / "status.json", text);
    const std::string message =
        harness_test::thrown_message<harness::InputError>([&] { harness::read_run_outcome(raw); });
    return message.empty() ? "accepted" : message.substr((raw / "status.json").string().size());
  };
  EXPECT_EQ(harness::read_run_outcome(raw), std::nullopt);  // never ran
  harness::write_file_atomic(raw / "status.json", R"({"status": "interrupted", "ranks": 2})");
  EXPECT_EQ(harness::read_run_outcome(raw), harness::RunOutcome::kInterrupted);
  EXPECT_EQ(outcome_error(R"({"status": 12})"), ": status: expected a string, got 12");
  EXPECT_EQ(outcome_error(R"({"status": "done"})"),
            ": status: expected complete, failed or interrupted, got 'done'");
  EXPECT_EQ(outcome_error("{\"status\": 12"),
            ":1:14: malformed JSON: syntax error while parsing object - unexpected end of input; "
            "expected '}'");

  harness::write_file_atomic(dir.path() / "status.json",
                             R"({"complete": false, "runs": 4, "failures": [{}]})");
  const auto study = harness::read_study_status(dir.path());
  ASSERT_TRUE(study.has_value());
  EXPECT_EQ(study->failures, 1);
  EXPECT_EQ(study->runs, 4);
  harness::write_file_atomic(dir.path() / "status.json",
                             R"({"complete": true, "runs": 4, "failures": [{}]})");
  EXPECT_EQ(harness_test::thrown_message<harness::InputError>(
                [&] { harness::read_study_status(dir.path()); }),
            (dir.path() / "status.json").string() + ": complete: true with 1 failures of 4 runs");
}

}  // namespace

// Model FLOPs per rank (harness/results/model_flops.h), by hand: 3 x forward x samples.
TEST(ModelFlops, PerRankIterationFlopsUnderDataParallelismAndAPipeline) {
  const std::vector<double> layers = {10, 20};  // forward FLOPs per sample
  EXPECT_EQ(harness::rank_iteration_flops(layers, 4, 2, {}), (std::vector<double>{360, 360}));
  // Stage 0 (layer 0) on ranks 0 and 1, stage 1 (layer 1) on rank 2; global batch 2 x 3 = 6:
  // each stage-0 replica does 3 samples, rank 2 all 6.
  const std::vector<runtime::StageAssignment> stages = {{0, 0, {0, 1}}, {1, 1, {2}}};
  EXPECT_EQ(harness::rank_iteration_flops(layers, 2, 3, stages),
            (std::vector<double>{3 * 10 * 3, 3 * 10 * 3, 3 * 20 * 6}));
  // The same layout of tensor groups of 2 (world 6, global batch 12): stage 0 on groups 0 and 1
  // (ranks 0-3, 6 samples a group, half a group's work a rank), stage 1 on group 2 (ranks 4, 5).
  EXPECT_EQ(harness::rank_iteration_flops(layers, 2, 6, stages, 2),
            (std::vector<double>{3 * 10 * 6 / 2, 3 * 10 * 6 / 2, 3 * 10 * 6 / 2, 3 * 10 * 6 / 2,
                                 3 * 20 * 12 / 2, 3 * 20 * 12 / 2}));
}

// Recomputation: the hardware does the recomputed layers' forward once more, per rank.
TEST(ModelFlops, HardwareFlopsCountTheRecomputedForward) {
  const std::vector<double> layers = {10, 20, 30};
  const std::vector<double> recomputed = {0, 20, 0};  // layer 1's whole forward
  // 3 x 60 x 4 = 720 of the model's, and layer 1's forward again: 20 x 4.
  EXPECT_EQ(harness::hardware_iteration_flops(layers, recomputed, 4, 2, {}),
            (std::vector<double>{800, 800}));
  // Stage 0 (layers 0-1) on ranks 0 and 1, 3 samples each of the global 6; stage 1 on rank 2.
  const std::vector<runtime::StageAssignment> stages = {{0, 1, {0, 1}}, {2, 2, {2}}};
  EXPECT_EQ(harness::hardware_iteration_flops(layers, recomputed, 2, 3, stages),
            (std::vector<double>{3 * 30 * 3 + 20 * 3, 3 * 30 * 3 + 20 * 3, 3 * 30 * 6}));
  // flops.json keeps both; HFU divides the hardware's by the same p50 and peak as MFU.
  const nlohmann::json flops = harness::flops_json({1e8}, {1e9, 3e9}, {1.5e9, 3.5e9});
  EXPECT_EQ(flops["hardware_iteration_flops_per_rank"], nlohmann::json({1.5e9, 3.5e9}));
  const auto u = harness::utilisation(flops, {100, 300, 200}, 80.0);
  ASSERT_TRUE(u);
  EXPECT_DOUBLE_EQ(*u->mfu, 0.125);    // 2e9 / 0.2 s = 10 GFLOP/s of 80
  EXPECT_DOUBLE_EQ(*u->hfu, 0.15625);  // 2.5e9 / 0.2 s = 12.5 GFLOP/s of 80
  EXPECT_FALSE(harness::utilisation(harness::flops_json({1e8}, {1e9}), {200}, 80.0)->hfu);
  EXPECT_FALSE(harness::flops_json({1e8}, {1e9}).contains("hardware_iteration_flops_per_rank"));
}

// What is recomputed, by the catalog's chain of llama depth 2 (embeddings, 2 blocks, norm,
// head): full, the blocks' forward; selective, their attention cores, 4 s^2 h each.
TEST(ModelFlops, RecomputedForwardFlopsByMode) {
  const std::vector<double> layers = {1, 100, 200, 3, 40};
  EXPECT_TRUE(harness::recomputed_forward_flops("none", "llama", 2, {}, 8, 64, layers).empty());
  EXPECT_EQ(harness::recomputed_forward_flops("full", "llama", 2, {}, 8, 64, layers),
            (std::vector<double>{0, 100, 200, 0, 0}));
  // Every second block: block 0 only.
  EXPECT_EQ(harness::recomputed_forward_flops("full", "llama", 2, {}, 8, 64, layers, 2),
            (std::vector<double>{0, 100, 0, 0, 0}));
  const double core = 4.0 * 8 * 8 * 64;
  EXPECT_EQ(harness::recomputed_forward_flops("selective", "llama", 2, {}, 8, 64, layers),
            (std::vector<double>{0, core, core, 0, 0}));
  // bert_moe: full leaves the mixture block (block 2 of 2) alone, selective recomputes its core.
  const runtime::MoeShape moe{4, 1, 1.0, 2};
  EXPECT_EQ(harness::recomputed_forward_flops("full", "bert_moe", 2, moe, 8, 64, layers),
            (std::vector<double>{0, 100, 0, 0, 0}));
  EXPECT_EQ(harness::recomputed_forward_flops("selective", "bert_moe", 2, moe, 8, 64, layers),
            (std::vector<double>{0, core, core, 0, 0}));
}

// A point where a system recomputes gets an HFU column; a system that does not shows its MFU
// there (its hardware does the model's FLOPs).
TEST(ModelFlops, TheUtilisationTableAddsHfuWhereASystemRecomputes) {
  harness::RunSummary summary;
  summary.manifest.experiment = "x";
  harness::PointSummary point;
  point.point.label = "default";
  for (const auto& [name, hfu] : std::vector<std::pair<std::string, std::optional<double>>>{
           {"kept", std::nullopt}, {"recomputed", 0.25}}) {
    harness::SystemSummary system;
    system.name = name;
    harness::Utilisation u;
    u.flops_per_rank = 2e9;
    u.iteration_p50_ms = 200;
    u.gflops_per_rank = 10;
    u.mfu = 0.125;
    u.hfu = hfu;
    u.peak_gflops_per_rank = 80;
    u.samples = 3;
    system.utilisation = u;
    point.systems.push_back(system);
  }
  summary.points.push_back(point);
  const std::string md = harness::render_utilisation_markdown(summary);
  EXPECT_NE(md.find("| system | GFLOP / iteration | p50 ms | GFLOP/s | MFU % | HFU % | samples |\n"
                    "|---|---:|---:|---:|---:|---:|---:|\n"
                    "| kept | 2.000 | 200.000 | 10.00 | 12.5 | 12.5 | 3 |\n"
                    "| recomputed | 2.000 | 200.000 | 10.00 | 12.5 | 25.0 | 3 |\n"),
            std::string::npos)
      << md;
  summary.points[0].systems.pop_back();
  EXPECT_EQ(harness::render_utilisation_markdown(summary).find("HFU"), std::string::npos);
}

TEST(ModelFlops, UtilisationAgainstTheMeasuredPeak) {
  const nlohmann::json flops = harness::flops_json({1e8}, {1e9, 3e9});
  EXPECT_DOUBLE_EQ(flops["forward_flops_per_sample"].get<double>(), 1e8);
  // Two threads per rank at 50 GFLOP/s per core, capped by the all-core figure (80).
  const nlohmann::json env = {
      {"threads_per_rank", 2},
      {"machine", {{"gemm_fp32", {{"gflops_one_core", 50.0}, {"gflops_all_cores", 80.0}}}}}};
  const auto peak = harness::rank_peak_gflops(env, "fp32");
  ASSERT_TRUE(peak);
  EXPECT_DOUBLE_EQ(*peak, 80.0);
  // Mean 2e9 FLOPs per rank over a p50 of 200 ms: 10 GFLOP/s, 12.5% of 80.
  const auto u = harness::utilisation(flops, {100, 300, 200}, peak);
  ASSERT_TRUE(u);
  EXPECT_DOUBLE_EQ(u->iteration_p50_ms, 200);
  EXPECT_DOUBLE_EQ(u->gflops_per_rank, 10);
  EXPECT_DOUBLE_EQ(*u->mfu, 0.125);
  EXPECT_EQ(u->samples, 3u);
  EXPECT_FALSE(harness::rank_peak_gflops(nlohmann::json::object(), "fp32"));
  EXPECT_FALSE(harness::utilisation(nlohmann::json(), {1}, peak));
  // Ranks on a GPU: the host CPU's GEMM is no roofline for them; GPU 0's is, shared by the ranks
  // that share a GPU.
  nlohmann::json on_gpu = env;
  on_gpu["device"] = "cuda";
  on_gpu["world_size"] = 2;
  EXPECT_FALSE(harness::rank_peak_gflops(on_gpu, "fp32"));  // no GPU measured
  on_gpu["machine"]["gpu"] = {{"count", 2}, {"gemm_fp32", {{"gflops", 51000.0}}}};
  EXPECT_DOUBLE_EQ(*harness::rank_peak_gflops(on_gpu, "fp32"), 51000.0);  // a GPU each
  on_gpu["machine"]["gpu"]["count"] = 1;
  EXPECT_DOUBLE_EQ(*harness::rank_peak_gflops(on_gpu, "fp32"), 25500.0);  // two ranks on one GPU
  on_gpu["device"] = "cpu";
  EXPECT_DOUBLE_EQ(*harness::rank_peak_gflops(on_gpu, "fp32"), 80.0);
}

TEST(ModelFlops, ThePeakIsTheGemmInTheMathTheRanksRanIn) {
  nlohmann::json env = {{"threads_per_rank", 1},
                        {"world_size", 2},
                        {"machine",
                         {{"gemm_fp32", {{"gflops_one_core", 50.0}, {"gflops_all_cores", 80.0}}},
                          {"gemm_bf16", {{"gflops_one_core", 120.0}, {"gflops_all_cores", 200.0}}},
                          {"gpu",
                           {{"count", 1},
                            {"gemm_fp32", {{"gflops", 51000.0}}},
                            {"gemm_tf32", {{"gflops", 360000.0}}},
                            {"gemm_bf16", {{"gflops", 840000.0}}}}}}}};
  // On the CPU: one core's bf16 GEMM for a bf16 rank; no TF32 on a CPU.
  EXPECT_DOUBLE_EQ(*harness::rank_peak_gflops(env, "bf16"), 120.0);
  EXPECT_DOUBLE_EQ(*harness::rank_peak_gflops(env, "fp32"), 50.0);
  EXPECT_FALSE(harness::rank_peak_gflops(env, "tf32"));
  // On the GPU the two ranks share: half of its GEMM in each math.
  env["device"] = "cuda";
  EXPECT_DOUBLE_EQ(*harness::rank_peak_gflops(env, "fp32"), 25500.0);
  EXPECT_DOUBLE_EQ(*harness::rank_peak_gflops(env, "tf32"), 180000.0);
  EXPECT_DOUBLE_EQ(*harness::rank_peak_gflops(env, "bf16"), 420000.0);
  // A cache from before GPUs' tf32 was measured: no peak rather than another math's.
  env["machine"]["gpu"].erase("gemm_tf32");
  EXPECT_FALSE(harness::rank_peak_gflops(env, "tf32"));
  // The precision a system trained in, from its config.json.
  EXPECT_EQ(harness::trained_precision({{"model", {{"precision", "bf16"}}}}), "bf16");
  EXPECT_EQ(harness::trained_precision({{"model", {{"name", "mlp"}}}}), "fp32");
  EXPECT_EQ(harness::trained_precision(nlohmann::json()), "fp32");
}
