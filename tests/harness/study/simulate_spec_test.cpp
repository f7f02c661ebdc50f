// `kind: simulate` specs: errors with file:line:column, and a small study whose results folder
// parses back like a real run's (samples, summary, tables that `harness report` regenerates
// byte for byte, traces).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/cli/report_command.h"
#include "harness/results/report_samples.h"
#include "harness/results/run_summary.h"
#include "harness/spec/spec.h"
#include "harness/study/simulate_study.h"
#include "tests/test_util.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using harness_test::TempDir;
using nlohmann::json;

// Four layers: forward 1/2/3/4 ms, backward twice that, at profile batch 2; 1 MB parameters.
const char* kProfile =
    "node0 -- Input0 -- forward_compute_time=0.000, backward_compute_time=0.000, "
    "activation_size=1000.0, parameter_size=0.0\n"
    "node1 -- Linear1 -- forward_compute_time=1.0, backward_compute_time=2.0, "
    "activation_size=1000000.0, parameter_size=1000000.0\n"
    "node2 -- Linear2 -- forward_compute_time=2.0, backward_compute_time=4.0, "
    "activation_size=1000000.0, parameter_size=1000000.0\n"
    "node3 -- Linear3 -- forward_compute_time=3.0, backward_compute_time=6.0, "
    "activation_size=1000000.0, parameter_size=1000000.0\n"
    "node4 -- Linear4 -- forward_compute_time=4.0, backward_compute_time=8.0, "
    "activation_size=1000.0, parameter_size=1000000.0\n"
    "\tnode0 -- node1\n\tnode1 -- node2\n\tnode2 -- node3\n\tnode3 -- node4\n";

const char* kTopology =
    "name: test\ngpu_memory_bytes: 16e9\nbandwidth:\n  intra_machine: 10.0e9\n"
    "  inter_machine_p2p: 1.0e9\n  inter_machine_collective: 2.0e9\nmachines: [2, 2]\n";

struct Study {
  TempDir dir;
  std::string spec_path;
  std::string write_spec(const std::string& body) {
    dir.write("graph.txt", kProfile);
    dir.write("topology.yaml", kTopology);
    spec_path = dir.write("spec.yaml", body).string();
    return spec_path;
  }
  // Runs the spec; returns the exit code and the error text without the folder prefix.
  int run(const std::string& body, std::string* error = nullptr,
          const std::vector<std::string>& sets = {}) {
    write_spec(body);
    std::ostringstream out;
    try {
      return run_simulate_spec(spec_path, parse_yaml_file(spec_path), sets, false, out);
    } catch (const InputError& e) {
      std::string message = e.what();
      const std::string prefix = dir.path().string() + "/";
      if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
      if (error) *error = message;
      return 2;
    }
  }
  fs::path results() const {
    fs::path found;
    for (const auto& entry : fs::directory_iterator(dir.path() / "out" / "sim")) {
      found = entry.path();
    }
    return found;
  }
};

std::string spec_text(const std::string& systems, const std::string& extra = "") {
  return "kind: simulate\n"
         "name: sim\n"
         "output: OUT\n"
         "simulate:\n"
         "  model: {profile: DIR/graph.txt, pbs: 2, batch_size: 2, step_ms: 0.5}\n"
         "  cluster: {topology: DIR/topology.yaml, gpus_per_machine: 2, intra_latency_us: 0,\n"
         "            inter_latency_us: 0}\n"
         "  run: {world_size: 4, iterations: 3}\n"
         "  systems:\n" +
         systems + extra;
}

std::string in_dir(std::string text, const fs::path& dir) {
  for (const std::string key : {"DIR", "OUT"}) {
    const std::string value = key == "DIR" ? dir.string() : (dir / "out").string();
    for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, 3, value);
  }
  return text;
}

TEST(SimulateSpec, ErrorsNameFileLineAndColumn) {
  const std::string systems = "    - overlap\n";
  struct Case {
    std::string from, to, expected;
  };
  const std::vector<Case> cases = {
      {"iterations: 3", "iteratons: 3", "spec.yaml:8:"},
      {"iterations: 3", "iterations: 0", "spec.yaml:8:"},
      {"    - overlap\n", "    - warp\n",
       "spec.yaml:10:7: simulate.systems: 'warp' is not a DDP mode"},
      {"    - overlap\n", "    - {name: p, kind: pipeline, schedule: zigzag}\n", "spec.yaml:10:"},
      {"    - overlap\n", "    - overlap\n  sweep: {run.iterations: [1, 2]}\n",
       "simulate.sweep: 'run.iterations' cannot be swept"},
      {"    - overlap\n", "    - overlap\n  sweep: {run.world_size: [2, 0]}\n", "spec.yaml:11:"},
      {"pbs: 2", "pbs: two", "spec.yaml:5:"},
      {"inter_latency_us: 0}", "inter_latency_us: 0, cpu_cores: -1}", "spec.yaml:7:"},
      {"inter_latency_us: 0}", "inter_latency_us: 0, inter_burst_bytes: -8}", "spec.yaml:7:"},
      {"inter_latency_us: 0}", "inter_latency_us: 0, p2p_ready: eager}", "spec.yaml:7:"},
      {"inter_latency_us: 0}", "inter_latency_us: 0, p2p_sends: all}", "spec.yaml:7:"},
  };
  for (const Case& c : cases) {
    Study study;
    std::string text = in_dir(spec_text(systems), study.dir.path());
    const auto at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    std::string error;
    EXPECT_EQ(study.run(text, &error), 2) << c.to;
    EXPECT_NE(error.find(c.expected), std::string::npos) << "got: " << error;
    EXPECT_FALSE(fs::exists(study.dir.path() / "out")) << "nothing written for bad input";
  }
}

TEST(SimulateSpec, MissingProfileIsAnInputErrorBeforeAnythingIsWritten) {
  Study study;
  std::string text = in_dir(spec_text("    - overlap\n"), study.dir.path());
  text.replace(text.find("graph.txt"), 9, "nothere.txt");
  std::string error;
  EXPECT_EQ(study.run(text, &error), 2);
  EXPECT_NE(error.find("nothere.txt"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(study.dir.path() / "out"));
}

TEST(SimulateSpec, StudyWritesAResultsFolderThatReportRebuilds) {
  Study study;
  const std::string systems =
      "    - overlap\n"
      "    - sync\n"
      "    - {name: accum2, kind: dp, accumulation: 2}\n"
      "    - {name: gpipe, kind: pipeline, schedule: gpipe, micro_batches: 4,\n"
      "       stages: [{layers: \"0-1\", replicas: 2}, {layers: \"2-3\", replicas: 2}]}\n"
      "    - {name: dapple, kind: pipeline, schedule: dapple, micro_batches: 4,\n"
      "       stages: [{layers: \"0-1\", ranks: [0, 1]}, {layers: \"2-3\", ranks: [2, 3]}]}\n";
  const std::string extra =
      "  sweep: {run.world_size: [4], cluster.inter_bandwidth: [1.0e9, 4.0e9]}\n";
  ASSERT_EQ(study.run(in_dir(spec_text(systems, extra), study.dir.path())), 0);
  const fs::path results = study.results();
  const json manifest = parse_json(read_file(results / "manifest.json"));
  ASSERT_EQ(manifest["points"].size(), 2u);
  EXPECT_EQ(manifest["points"][1]["label"], "run.world_size=4, cluster.inter_bandwidth=4.0e9");
  EXPECT_EQ(manifest["systems"].size(), 5u);

  // Samples: every rank, 3 iterations, no noise: identical rows.
  const fs::path raw = results / "raw" / "p000" / "sync" / "rep0";
  for (int r = 0; r < 4; ++r) {
    const auto samples = read_sample_file(raw / ("rank" + std::to_string(r) + ".csv"));
    ASSERT_EQ(samples.at("iteration").size(), 3u);
    EXPECT_EQ(samples.at("iteration")[0], samples.at("iteration")[2]);
  }
  // Sync DDP on 4 ranks, batch 2 = pbs: forward 10 ms, backward 20 ms, step 0.5 ms, then
  // the buckets: 1 MiB first cap then 25 MiB -> [layer 4 (1 MB... < 1 MiB, so with layer 3)],
  // [layers 2, 1]: two 2 MB buckets over a ring of 2 machines x 2 GPUs (NIC 1 GB/s, the ring
  // crosses it once per direction): 6 steps x 0.5 MB / 1 GB/s = 3 ms each.
  const auto rank0 = read_sample_file(raw / "rank0.csv");
  EXPECT_NEAR(rank0.at("forward")[0], 10.0, 1e-6);
  EXPECT_NEAR(rank0.at("step")[0], 0.5, 1e-6);
  EXPECT_NEAR(rank0.at("iteration")[0], 10.0 + 20.0 + 2 * 3.0 + 0.5, 1e-6);
  EXPECT_EQ(parse_json(read_file(raw / "status.json"))["status"], "complete");
  const json config = parse_json(read_file(raw / "config.json"));
  EXPECT_EQ(config["model"]["batch_size"], 2);
  EXPECT_EQ(config["system"]["buckets"], 2);
  // `kind: dp` is a spelling of ddp, the one enumeration's: DDP that accumulates.
  const json accumulating =
      parse_json(read_file(results / "raw" / "p000" / "accum2" / "rep0" / "config.json"));
  EXPECT_EQ(accumulating["system"]["kind"], "ddp");
  EXPECT_EQ(accumulating["system"]["accumulation"], 2);

  // Traces of one iteration per rank, following the contract.
  const json trace =
      parse_json(read_file(results / "raw" / "p000" / "dapple" / "rep0" / "trace_rank2.json"));
  EXPECT_EQ(trace["otherData"]["rank"], 2);
  EXPECT_EQ(trace["otherData"]["stage"], 1);
  EXPECT_EQ(trace["otherData"]["schedule"], "dapple");
  int forwards = 0, recvs = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    forwards += e["cat"] == "forward";
    recvs += e["cat"] == "recv";
    EXPECT_GE(e["dur"].get<double>(), 0.0);
  }
  EXPECT_EQ(forwards, 4);
  EXPECT_EQ(recvs, 4);  // one activation per micro-batch from its stage-0 peer

  // Summaries pool every rank; `harness report` rebuilds the same tables.
  const ResultSamples samples = read_result_samples(results);
  EXPECT_EQ(samples.points[0].systems[0].phases.at("iteration").size(), 12u);
  const std::string table = read_file(results / "table.md");
  const std::string summary = read_file(results / "summary.json");
  fs::remove(results / "table.md");
  std::ostringstream out;
  EXPECT_EQ(run_report(results, out), 0);
  EXPECT_EQ(read_file(results / "table.md"), table);
  EXPECT_EQ(read_file(results / "summary.json"), summary);
  // More inter-machine bandwidth never makes the DDP iteration slower.
  const json s = parse_json(summary);
  EXPECT_NE(table.find("accum2"), std::string::npos);
  EXPECT_NE(table.find("dapple"), std::string::npos);
}

// Sync DDP on the test profile, its step from the profile's own profile.json (measured with 1
// thread per rank, SGD step 2 ms), the cluster's `gpus_per_machine: 2` replaced by `cluster`.
std::string sync_with_measured_step(Study& study, const std::string& cluster) {
  study.dir.write("profile.json", R"({"threads": 1, "whole_model": {"step": {"median_ms": 2.0}}})");
  std::string text = in_dir(spec_text("    - sync\n"), study.dir.path());
  text.replace(text.find(", step_ms: 0.5"), 14, "");
  text.replace(text.find("gpus_per_machine: 2"), 19, cluster);
  return text;
}

// A cluster entry `bad` ("key: value") is refused at its line of spec.yaml, naming the key.
void expect_cluster_key_refused(const std::string& bad) {
  Study study;
  std::string text = in_dir(spec_text("    - sync\n"), study.dir.path());
  text.replace(text.find("gpus_per_machine: 2"), 19, "gpus_per_machine: 1, " + bad);
  std::string error;
  EXPECT_EQ(study.run(text, &error), 2) << bad;
  EXPECT_NE(error.find("spec.yaml:6:"), std::string::npos) << "got: " << error;
  EXPECT_NE(error.find(bad.substr(0, bad.find(':'))), std::string::npos) << "got: " << error;
}

// kind: sharded, stage 3 without prefetch on 4 ranks of one machine (10 GB/s, no latency): each
// 1 MB layer's all-gather and reduce-scatter is 3 ring steps of 0.25 MB, 75 us. Forward: each
// layer gathered before it, 10 ms + 4 x 75 us; backward: the last layer gathered again (75 us),
// then each layer's reduce-scatter and the next one's gather (150 us) between the backwards
// (20 ms), the last reduce-scatter (75 us), then a quarter of the 0.5 ms step: 31.025 ms.
TEST(SimulateSpec, AShardedSystemGathersEachLayerAroundItsUse) {
  Study study;
  const std::string systems =
      "    - {name: zero3, kind: sharded, stage: 3, prefetch: false}\n"
      "    - {name: zero1, kind: sharded, stage: 1}\n"
      "    - {name: zero3_whole, kind: sharded, stage: 3, unit: model, prefetch: false}\n";
  ASSERT_EQ(study.run(in_dir(spec_text(systems, "  baseline: zero3\n"), study.dir.path()), nullptr,
                      {"simulate.cluster.gpus_per_machine=4"}),
            0);
  const fs::path raw = study.results() / "raw" / "p000" / "zero3" / "rep0";
  EXPECT_NEAR(read_sample_file(raw / "rank3.csv").at("iteration")[0], 31.025, 1e-6);
  const json config = parse_json(read_file(raw / "config.json"));
  EXPECT_EQ(config["system"]["stage"], 3);
  EXPECT_EQ(config["system"]["prefetch"], false);
  EXPECT_EQ(config["system"]["units"], 4);
  EXPECT_EQ(config["system"]["unit"], "layer");
  // Stage 3 on 4 ranks: a quarter of the 4 MB of parameters, of their gradients, and AdamW's two
  // moments of that quarter.
  EXPECT_EQ(config["system"]["memory_per_rank"]["parameter_bytes"], 1000000);
  EXPECT_EQ(config["system"]["memory_per_rank"]["gradient_bytes"], 1000000);
  EXPECT_EQ(config["system"]["memory_per_rank"]["optimizer_state_bytes"], 2000000);
  // A measured all-gather (the link probe's fit): 300 us and 5 GB/s of bus bandwidth, so each
  // gather takes 3 steps of 100 us + 0.25 MB / 5 GB/s = 450 us; the 8 gathers are exposed:
  // 31.025 + 8 x (0.45 - 0.075) = 34.025 ms.
  Study measured;
  ASSERT_EQ(
      measured.run(in_dir(spec_text(systems, "  baseline: zero3\n"), measured.dir.path()), nullptr,
                   {"simulate.cluster.gpus_per_machine=4", "simulate.cluster.gather_latency_us=300",
                    "simulate.cluster.gather_bandwidth=5e9"}),
      0);
  EXPECT_NEAR(read_sample_file(measured.results() / "raw" / "p000" / "zero3" / "rep0" / "rank3.csv")
                  .at("iteration")[0],
              34.025, 1e-6);
  std::string error;
  EXPECT_EQ(
      study.run(in_dir(spec_text("    - {name: z, kind: sharded, stage: 5}\n"), study.dir.path()),
                &error),
      2);
  EXPECT_NE(error.find("simulate.systems.stage: must be <= 3 (got 5)"), std::string::npos) << error;

  // The whole model as one unit (a train spec's key, read by the same reader): one 4 MB gather
  // of 3 ring steps of 1 MB (300 us) before forward and again before backward, one
  // reduce-scatter after it, none hidden: 30 ms + 3 x 300 us + the quarter step, 31.025 ms.
  const fs::path whole = study.results() / "raw" / "p000" / "zero3_whole" / "rep0";
  EXPECT_NEAR(read_sample_file(whole / "rank3.csv").at("iteration")[0], 31.025, 1e-6);
  const json whole_config = parse_json(read_file(whole / "config.json"));
  EXPECT_EQ(whole_config["system"]["unit"], "model");
  EXPECT_EQ(whole_config["system"]["units"], 1);
  EXPECT_EQ(whole_config["system"]["memory_per_rank"]["parameter_bytes"], 1000000);
  // A bucket cap below one byte, refused as a train spec refuses it.
  EXPECT_EQ(study.run(in_dir(spec_text("    - {name: z, kind: sharded, bucket_mb: 1e-9}\n"),
                             study.dir.path()),
                      &error),
            2);
  EXPECT_NE(error.find("bucket_mb: must be at least one byte"), std::string::npos) << error;
}

// zero_stage on a pipeline: stage 0 (layers 1-2, 2 MB) on ranks 0 and 1 of one machine at
// 10 GB/s. Plain replicas all-reduce it (2 x 1 MB / 10 GB/s, 0.2 ms) and step its half of the
// 0.5 ms step (0.25 ms); ZeRO-2 replicas reduce-scatter (0.1 ms), step half of that (0.125 ms)
// and all-gather (0.1 ms): rank 0's iteration is 0.125 ms shorter. FSDP (stage 3) gathers once
// per iteration, before the first forward: in a steady iteration, ZeRO-2's time. Each records
// what its fullest rank holds.
TEST(SimulateSpec, APipelinesShardedReplicasStepTheirChunk) {
  Study study;
  const std::string stages =
      "stages: [{layers: \"0-1\", ranks: [0, 1]}, {layers: \"2-3\", ranks: [2, 3]}]}\n";
  const std::string systems =
      "    - {name: plain, kind: pipeline, schedule: dapple, micro_batches: 2, " + stages +
      "    - {name: zero2, kind: pipeline, schedule: dapple, micro_batches: 2, zero_stage: 2, " +
      stages +
      "    - {name: fsdp, kind: pipeline, schedule: dapple, micro_batches: 2, zero_stage: 3, " +
      stages + "    - overlap\n";
  ASSERT_EQ(study.run(in_dir(spec_text(systems, "  baseline: plain\n"), study.dir.path())), 0);
  const auto iteration = [&](const std::string& system) {
    return read_sample_file(study.results() / "raw" / "p000" / system / "rep0" / "rank0.csv")
        .at("iteration")[0];
  };
  EXPECT_NEAR(iteration("plain") - iteration("zero2"), 0.125, 1e-6);
  EXPECT_NEAR(iteration("fsdp"), iteration("zero2"), 1e-9);
  const json config =
      parse_json(read_file(study.results() / "raw" / "p000" / "zero2" / "rep0" / "config.json"));
  EXPECT_EQ(config["system"]["zero_stage"], 2);
  // What the fullest rank holds, MB of parameters, gradients and AdamW's moments: DDP the whole
  // 4 MB model; a stage's replica its 2 MB, the moments (ZeRO-1), gradients (2) and parameters
  // (3) halved over its 2 replicas.
  const auto held = [&](const std::string& system) {
    const json memory = parse_json(read_file(study.results() / "raw" / "p000" / system / "rep0" /
                                             "config.json"))["system"]["memory_per_rank"];
    return std::vector<double>{memory["parameter_bytes"].get<double>() / 1e6,
                               memory["gradient_bytes"].get<double>() / 1e6,
                               memory["optimizer_state_bytes"].get<double>() / 1e6};
  };
  EXPECT_EQ(held("overlap"), (std::vector<double>{4, 4, 8}));
  EXPECT_EQ(held("plain"), (std::vector<double>{2, 2, 4}));
  EXPECT_EQ(held("zero2"), (std::vector<double>{2, 1, 2}));
  EXPECT_EQ(held("fsdp"), (std::vector<double>{1, 1, 2}));
  std::string error;
  EXPECT_EQ(study.run(in_dir(spec_text("    - {name: z, kind: pipeline, zero_stage: 4, " + stages),
                             study.dir.path()),
                      &error),
            2);
  EXPECT_NE(error.find("zero_stage: must be <= 3 (got 4)"), std::string::npos) << error;
}

// `stages: N`, a train spec's form: forwards of 1, 2, 3 and 4 ms balance best as layers 0-2
// (6 ms) and 3 (4 ms), each stage on half of the 4 ranks: the inline pipeline of those stages,
// to the simulated microsecond. More stages than the profile's layers: refused at the system.
TEST(SimulateSpec, BalancedStagesCutWhereTheForwardTimesBalance) {
  Study study;
  const std::string systems =
      "    - {name: balanced, kind: pipeline, schedule: dapple, micro_batches: 2, stages: 2}\n"
      "    - {name: inline, kind: pipeline, schedule: dapple, micro_batches: 2,\n"
      "       stages: [{layers: \"0-2\"}, {layers: \"3\"}]}\n";
  ASSERT_EQ(study.run(in_dir(spec_text(systems, "  baseline: inline\n"), study.dir.path())), 0);
  const auto raw = [&](const std::string& system) {
    return study.results() / "raw" / "p000" / system / "rep0";
  };
  for (const char* rank : {"rank0.csv", "rank3.csv"}) {
    EXPECT_DOUBLE_EQ(read_sample_file(raw("balanced") / rank).at("iteration")[0],
                     read_sample_file(raw("inline") / rank).at("iteration")[0]);
  }
  const json stages =
      parse_json(read_file(raw("balanced") / "config.json"))["system"]["stage_ranks"];
  EXPECT_EQ(stages,
            json::parse(R"([{"layers": 3, "ranks": [0, 1]}, {"layers": 1, "ranks": [2, 3]}])"));
  std::string error;
  EXPECT_EQ(
      study.run(in_dir(spec_text("    - {name: p, kind: pipeline, micro_batches: 2, stages: 5}\n"),
                       study.dir.path()),
                &error),
      2);
  EXPECT_NE(error.find("pipeline system 'p': 5 stages but"), std::string::npos) << error;
  EXPECT_NE(error.find("has 4 layers"), std::string::npos) << error;
}

// A profile.json that timed each layer's backward split (`harness profile layers
// --split-backward`) prices ZB-H1's I and W by it: halves of every layer's backward give the
// iteration of no split at all (I = W = half the stage's backward), a quarter and three quarters
// another (the heavier first stage waits for the second's I), and config.json says which priced
// the run.
TEST(SimulateSpec, AProfiledSplitBackwardPricesZeroBubbleStages) {
  const auto zb_h1_iteration = [](const std::string& layers, std::string* split) {
    Study study;
    study.dir.write("profile.json",
                    R"({"threads": 1, "whole_model": {"step": {"median_ms": 0.5}})" + layers + "}");
    const std::string system =
        "    - {name: zb, kind: pipeline, schedule: zb_h1, micro_batches: 2, stages: [{layers: "
        "\"0-2\", ranks: [0, 1]}, {layers: \"3-3\", ranks: [2, 3]}]}\n";
    EXPECT_EQ(study.run(in_dir(spec_text(system), study.dir.path())), 0);
    const fs::path raw = study.results() / "raw" / "p000" / "zb" / "rep0";
    *split = parse_json(read_file(raw / "config.json"))["model"]["backward_split"];
    return read_sample_file(raw / "rank0.csv").at("iteration")[0];
  };
  const auto layers = [](double input_share) {
    std::string text = R"(, "layers": [)";
    for (int l = 1; l <= 4; ++l) {
      const double backward = 2.0 * l;  // kProfile's
      text += (l > 1 ? "," : "") + std::string(R"({"backward_input": {"median_ms": )") +
              std::to_string(backward * input_share) + R"(}, "backward_weight": {"median_ms": )" +
              std::to_string(backward * (1 - input_share)) + "}}";
    }
    return text + "]";
  };
  std::string none, halves, quarter;
  const double whole = zb_h1_iteration("", &none);
  EXPECT_EQ(none, "share");
  EXPECT_NEAR(zb_h1_iteration(layers(0.5), &halves), whole, 1e-9);
  EXPECT_EQ(halves, "profiled");
  EXPECT_GT(std::abs(zb_h1_iteration(layers(0.25), &quarter) - whole), 0.1);
}

// A profile that recomputed blocks (`harness profile layers --activation-checkpointing`) is
// simulated as it was timed: config.json says so, a spec that means another recomputation is
// refused at its key, and so is a zero-bubble schedule, whose I and W would each need a share.
TEST(SimulateSpec, ARecomputingProfileIsRecordedAndCheckedAgainstTheSpec) {
  const std::string profile =
      R"({"threads": 1, "activation_checkpointing": "full", "recompute_every": 2,)"
      R"( "whole_model": {"step": {"median_ms": 0.5}}})";
  Study study;
  study.dir.write("profile.json", profile);
  EXPECT_EQ(study.run(in_dir(spec_text("    - {name: ddp}\n"), study.dir.path())), 0);
  const json model =
      parse_json(read_file(study.results() / "raw" / "p000" / "ddp" / "rep0" / "config.json"))
          .at("model");
  EXPECT_EQ(model.at("activation_checkpointing"), "full");
  EXPECT_EQ(model.at("recompute_every"), 2);

  std::string text = spec_text("    - {name: ddp}\n");
  const std::string step = "step_ms: 0.5}";
  text.replace(text.find(step), step.size(), "step_ms: 0.5, activation_checkpointing: selective}");
  std::string error;
  EXPECT_EQ(study.run(in_dir(text, study.dir.path()), &error), 2);
  EXPECT_NE(error.find("spec.yaml:5:"), std::string::npos) << error;
  EXPECT_NE(error.find("the profile recomputes full (profile.json's activation_checkpointing): "
                       "profile with `harness profile layers --activation-checkpointing "
                       "selective`"),
            std::string::npos)
      << error;

  const std::string zb =
      "    - {name: zb, kind: pipeline, schedule: zb_h1, micro_batches: 2, stages: [{layers: "
      "\"0-2\", ranks: [0, 1]}, {layers: \"3-3\", ranks: [2, 3]}]}\n";
  EXPECT_EQ(study.run(in_dir(spec_text(zb), study.dir.path()), &error), 2);
  EXPECT_NE(error.find("pipeline system 'zb': the profile recomputes full"), std::string::npos)
      << error;
}

// ZeRO-2 on 4 ranks of one machine priced by a comm profile whose `rows` are `reducescatter_rows`
// (the all-reduce free): rank 3's simulated iteration, ms.
double zero2_iteration_ms(const std::string& reducescatter_rows) {
  Study study;
  study.dir.write("comm.json", R"({"world_size": 4, "backend": "gloo",
    "fits": [{"op": "allreduce", "latency_us": 0, "bus_bandwidth_bytes_per_s": 1e12}],
    "rows": )" + reducescatter_rows +
                                   "}");
  EXPECT_EQ(
      study.run(
          in_dir(spec_text("    - {name: zero2, kind: sharded, stage: 2}\n"), study.dir.path()),
          nullptr,
          {"simulate.cluster.gpus_per_machine=4",
           "simulate.cluster.comm_profile=" + (study.dir.path() / "comm.json").string()}),
      0);
  const fs::path raw = study.results() / "raw" / "p000" / "zero2" / "rep0";
  return read_sample_file(raw / "rank3.csv").at("iteration").at(0);
}

// A comm profile that timed the reduce-scatter size by size prices each one at the rate its
// size ran at: here 1 GB/s of bus bandwidth at every size (a flat table), against the links'
// 10 GB/s. ZeRO-2 on 4 ranks of one machine, 1 MB layers: forward 10 ms, backward 20 ms, each
// layer's reduce-scatter 3 ring steps of 0.25 MB at 1 GB/s (0.75 ms) hidden under the next
// backward but the last, a quarter of the 0.5 ms step, then 4 gathers at the links' rate (3 x
// 0.25 MB / 10 GB/s each): 31.175 ms.
TEST(SimulateSpec, AReduceScatterTimedSizeBySizeRunsAtItsSizesRate) {
  EXPECT_NEAR(zero2_iteration_ms(R"([{"op": "reducescatter", "bytes": 65536, "busbw_gbps": 1.0},
    {"op": "reducescatter", "bytes": 67108864, "busbw_gbps": 1.0}])"),
              31.175, 1e-6);
}

// The same profile with each size's mean time recorded at twice its p50 (a long tail): the
// reduce-scatter runs at half the rate, and the last one, exposed, takes 1.5 ms: 31.925 ms.
TEST(SimulateSpec, CollectivesArePricedAtTheirMeanTimeWhereTheRowsRecordIt) {
  EXPECT_NEAR(zero2_iteration_ms(R"([{"op": "reducescatter", "bytes": 65536, "busbw_gbps": 1.0,
      "p50_ms": 0.05, "mean_ms": 0.1},
    {"op": "reducescatter", "bytes": 67108864, "busbw_gbps": 1.0, "p50_ms": 50.3,
      "mean_ms": 100.6}])"),
              31.925, 1e-6);
}

// The test profile with a mixture of 4 experts in its second layer (0.5 MB of its 1 MB, 400 kB of
// token rows dispatched at the profile batch), as `harness profile layers --moe` records it.
void write_mixture_profile(Study& study, long long experts) {
  const std::string mixture = R"({"mixtures": {"count": 1, "experts": )" + std::to_string(experts) +
                              R"(, "expert_parameter_bytes": 500000, "dispatch_bytes": 400000}})";
  study.dir.write("profile.json", R"({"threads": 1, "whole_model": {"step": {"median_ms": 0.5}},
    "layers": [{}, )" + mixture + R"(, {}, {}]})");
}

// Expert parallelism on 4 ranks of one machine at 10 GB/s, a rank's batch the profile's: an
// all-to-all of the 400 kB is 3 steps of 100 kB (30 us). Forward 10 ms and the mixture's three
// exchanges (60 us and the counts' few bytes); backward 20 ms with its two (60 us), the last two
// layers' bucket (2 MB, past the first bucket's 1 MiB) all-reduced under it, then the other 1.5
// MB of the dense part (6 steps of 375 kB: 225 us) and the step over 3.5 MB dense and 125 kB of
// experts of the 4 MB (0.453125 ms): 30.798125 ms. With the dense part at ZeRO-2: its 3.5 MB
// reduce-scattered after backward (3 steps of 875 kB: 262.5 us), the step over 875 kB of it (0.125
// ms) and the gather (262.5 us): 30.77 ms.
TEST(SimulateSpec, ExpertParallelismExchangesTokensAndShardsTheDensePart) {
  Study study;
  write_mixture_profile(study, 4);
  std::string text =
      in_dir(spec_text("    - {name: ep, kind: expert_parallel}\n"
                       "    - {name: ep_zero2, kind: expert_parallel, zero_stage: 2}\n"),
             study.dir.path());
  text.replace(text.find(", step_ms: 0.5"), 14, "");
  ASSERT_EQ(study.run(text, nullptr, {"simulate.cluster.gpus_per_machine=4"}), 0);
  const fs::path raw = study.results() / "raw" / "p000";
  EXPECT_NEAR(read_sample_file(raw / "ep" / "rep0" / "rank3.csv").at("iteration")[0], 30.798125,
              1e-4);
  EXPECT_NEAR(read_sample_file(raw / "ep_zero2" / "rep0" / "rank3.csv").at("iteration")[0], 30.77,
              1e-4);
  const json config = parse_json(read_file(raw / "ep" / "rep0" / "config.json")).at("system");
  EXPECT_EQ(config.at("experts_per_rank"), 1);
  EXPECT_EQ(config.at("zero_stage"), 0);
  EXPECT_EQ(config.at("memory_per_rank").at("parameter_bytes"), 3625000);

  std::string error;
  write_mixture_profile(study, 6);
  EXPECT_EQ(study.run(text, &error, {"simulate.cluster.gpus_per_machine=4"}), 2);
  EXPECT_NE(error.find("spec.yaml:10:"), std::string::npos) << error;
  EXPECT_NE(error.find("6 experts do not shard evenly over run.world_size 4"), std::string::npos)
      << error;
  fs::remove(study.dir.path() / "profile.json");
  EXPECT_EQ(study.run(text, &error, {"simulate.cluster.gpus_per_machine=4"}), 2);
  EXPECT_NE(error.find("system 'ep' shards experts, and"), std::string::npos) << error;
}

TEST(SimulateSpec, CpuRanksShareTheCoresAndStepAsTheirProfileMeasured) {
  // The profile's own profile.json: measured with 1 thread per rank, SGD step 2 ms. Sync DDP
  // on 4 ranks of one machine: forward 10 ms, backward 20 ms, two 2 MB buckets on a ring of 4
  // at 10 GB/s (6 steps x 0.5 MB = 0.3 ms each), the step 2 ms: 32.6 ms. With 2 cores for the
  // 4 ranks every phase takes twice as long: all four ranks compute at once, and the four
  // ranks' communication threads move the buckets with half a core each: 65.2 ms.
  for (const double cores : {0.0, 2.0}) {
    Study study;
    ASSERT_EQ(study.run(sync_with_measured_step(
                  study, "gpus_per_machine: 4, cpu_cores: " + std::to_string(cores))),
              0);
    const fs::path raw = study.results() / "raw" / "p000" / "sync" / "rep0";
    const auto rank3 = read_sample_file(raw / "rank3.csv");
    const double slowdown = cores == 2.0 ? 2.0 : 1.0;
    EXPECT_NEAR(rank3.at("iteration")[0], slowdown * 32.6, 1e-6) << cores;
    EXPECT_NEAR(rank3.at("step")[0], slowdown * 2.0, 1e-6);
    const json config = parse_json(read_file(raw / "config.json"));
    EXPECT_EQ(config["model"]["step_ms"], 2.0);
    EXPECT_EQ(config["cluster"]["cpu_cores_per_machine"], cores);
    EXPECT_EQ(config["cluster"]["cores_per_rank"], 1.0);
  }
}

// cluster.bucket_copy_bandwidth / _latency_us price the reducer's passes without a comm
// profile (a `harness profile comm --ops copy` fit). The case above without shared cores:
// forward and backward 30 ms, then, as the sync reducer runs them one bucket after the other,
// per 2 MB bucket 2 passes in (each 100 us + 2 MB / 1 GB/s = 2.1 ms), its all-reduce (0.3 ms)
// and 1 pass out, then the step (2 ms): 30 + 2 x (4.2 + 0.3 + 2.1) + 2 = 45.2 ms.
TEST(SimulateSpec, BucketCopiesArePricedFromTheSpecsFit) {
  Study study;
  ASSERT_EQ(study.run(sync_with_measured_step(study,
                                              "gpus_per_machine: 4, bucket_copy_bandwidth: 1e9, "
                                              "bucket_copy_latency_us: 100")),
            0);
  const fs::path raw = study.results() / "raw" / "p000" / "sync" / "rep0";
  EXPECT_NEAR(read_sample_file(raw / "rank3.csv").at("iteration")[0], 45.2, 1e-6);
  const json config = parse_json(read_file(raw / "config.json"));
  EXPECT_EQ(config["cluster"]["bucket_copy_bandwidth"], 1e9);
  EXPECT_NEAR(config["cluster"]["bucket_copy_latency_us"].get<double>(), 100.0, 1e-9);
  for (const std::string bad : {"bucket_copy_bandwidth: 0", "bucket_copy_latency_us: -1"}) {
    expect_cluster_key_refused(bad);
  }
}

// A pipeline from a planner's plan.json: its stages at the spec's global batch (2 x 4 = 8),
// the other batch's result beside it ignored.
TEST(SimulateSpec, APipelineRunsThePlanFilesStagesAtItsGlobalBatch) {
  Study study;
  const json stage0 = {{"layer_ids", {"node1", "node2", "node3"}}, {"gpus", {0, 1, 2}}};
  const json stage1 = {{"layer_ids", {"node4"}}, {"gpus", {3}}};
  const json plan = {
      {"results",
       {{{"global_batch_size", 16}, {"plan", nullptr}},
        {{"global_batch_size", 8},
         {"plan", {{"stages", {stage0, stage1}}, {"micro_batch_count", 2}, {"summary", "3+1"}}}},
        {{"global_batch_size", 32}, {"plan", nullptr}}}}};
  study.dir.write("plan.json", json_text(plan));
  const std::string text = in_dir(
      spec_text("    - {name: planned, kind: pipeline, schedule: dapple, plan: DIR/plan.json}\n"),
      study.dir.path());
  ASSERT_EQ(study.run(text), 0);
  const fs::path raw = study.results() / "raw" / "p000" / "planned" / "rep0";
  EXPECT_EQ(parse_json(read_file(raw / "status.json"))["status"], "complete");
  const json config = parse_json(read_file(raw / "config.json"));
  EXPECT_EQ(config["system"]["stage_ranks"],
            parse_json(R"([{"layers": 3, "ranks": [0, 1, 2]}, {"layers": 1, "ranks": [3]}])"));
  EXPECT_EQ(config["system"]["stages"], "3+1");  // the plan's summary
  EXPECT_EQ(config["system"]["micro_batches"], 2);
}

// Emulated machines of one host: 4 machines of 1 rank, 2 cores each, or 2 cores for all four
// (machines_per_host: 4). Sync DDP's forward (10 ms) and step (2 ms) run on all four ranks at
// once: the same times with cores of their own, twice them with half a core each.
TEST(SimulateSpec, MachinesOfOneHostShareItsCores) {
  for (const int per_host : {1, 4}) {
    Study study;
    ASSERT_EQ(study.run(sync_with_measured_step(
                  study,
                  "gpus_per_machine: 1, cpu_cores: 2, comm_cores_per_rank: 0.25, "
                  "machines_per_host: " +
                      std::to_string(per_host))),
              0);
    const fs::path raw = study.results() / "raw" / "p000" / "sync" / "rep0";
    const auto rank3 = read_sample_file(raw / "rank3.csv");
    const double slowdown = per_host == 4 ? 2.0 : 1.0;
    EXPECT_NEAR(rank3.at("forward")[0], slowdown * 10.0, 1e-6) << per_host;
    EXPECT_NEAR(rank3.at("step")[0], slowdown * 2.0, 1e-6) << per_host;
    const json config = parse_json(read_file(raw / "config.json"));
    EXPECT_EQ(config["cluster"]["machines_per_host"], per_host);
    EXPECT_EQ(config["cluster"]["comm_cores_per_rank"], 0.25);
    EXPECT_EQ(config["cluster"]["intra_comm_cores_per_rank"], 0.0);  // unset: none of its own
  }
  for (const std::string bad :
       {"machines_per_host: 0", "comm_cores_per_rank: 0", "intra_comm_cores_per_rank: 0"}) {
    expect_cluster_key_refused(bad);
  }
}

namespace {

// A spec of 4 machines of one GPU each (10 GB/s inside, 0.1 GB/s point to point across)
// running the 4-stage DAPPLE pipeline `p4` (a layer a stage) and, with `with_2x2`, 2 stages of
// 2 replicas `p2x2`, at 4 micro-batches; `cluster` is added to the spec's cluster map.
std::string four_machine_pipelines(Study& study, const std::string& cluster, bool with_2x2) {
  study.dir.write("four.yaml",
                  "name: four\ngpu_memory_bytes: 16e9\nbandwidth:\n  intra_machine: 10.0e9\n"
                  "  inter_machine_p2p: 0.1e9\n  inter_machine_collective: 2.0e9\n"
                  "machines: [1, 1, 1, 1]\n");
  std::string systems =
      "    - {name: p4, kind: pipeline, schedule: dapple, stages: [{layers: \"0-0\", "
      "ranks: [0]}, {layers: \"1-1\", ranks: [1]}, {layers: \"2-2\", ranks: [2]}, "
      "{layers: \"3-3\", ranks: [3]}]}\n";
  if (with_2x2) {
    systems +=
        "    - {name: p2x2, kind: pipeline, schedule: dapple, stages: [{layers: \"0-1\", "
        "ranks: [0, 1]}, {layers: \"2-3\", ranks: [2, 3]}]}\n";
  }
  std::string text =
      in_dir(spec_text(systems, "  pipeline: {micro_batches: 4}\n"), study.dir.path());
  text.replace(text.find("topology.yaml, gpus_per_machine: 2"), 34,
               "four.yaml, gpus_per_machine: 1, " + cluster);
  return text;
}

}  // namespace

// cluster.p2p_sends reaches the simulation: a straight pipeline of 4 stages on 4 machines over a
// slow point-to-point link, whose middle stages send gradients up and activations down, runs
// differently with a send channel per peer (per_peer) than with one (the engine's test,
// Network.PerPeerSendChannelsLetASendPassOneThatWaitsForItsReceiver, computes the difference
// by hand); 2 stages x 2 replicas, where each rank sends to one peer a direction, do not move.
// config.json says which was simulated.
TEST(SimulateSpec, PerPeerSendChannelsReachThePipeline) {
  std::map<std::string, std::map<std::string, double>> p50;
  for (const std::string sends : {"one", "per_peer"}) {
    Study study;
    const std::string text = four_machine_pipelines(
        study, "p2p_ready: behind_sends, p2p_sends: " + sends, /*with_2x2=*/true);
    ASSERT_EQ(study.run(text), 0) << sends;
    const json summary = parse_json(read_file(study.results() / "summary.json"));
    for (const auto& system : summary["points"][0]["systems"]) {
      p50[sends][system["name"]] = system["phases"]["iteration"]["p50"];
    }
    const json config =
        parse_json(read_file(study.results() / "raw" / "p000" / "p4" / "rep0" / "config.json"));
    EXPECT_EQ(config["cluster"]["p2p_sends"], sends);
    EXPECT_EQ(config["cluster"]["p2p_ready"], "behind_sends");
  }
  EXPECT_GT(std::abs(p50["per_peer"]["p4"] - p50["one"]["p4"]), 1.0);
  EXPECT_DOUBLE_EQ(p50["per_peer"]["p2x2"], p50["one"]["p2x2"]);
}

// cluster.inter_burst_latency_us / _bandwidth (the link probe's `burst` fit) price a burst
// from an emulated link's token bucket: a 4-stage pipeline over 4 machines, each with a bucket
// larger than any activation, so that every transfer is a burst: free but for the links'
// latency (0) before, and each at least 0.5 ms with them, 6 of them on the critical path of
// the first micro-batch's forward and backward alone.
TEST(SimulateSpec, ABurstFromTheBucketIsPricedFromTheSpec) {
  std::map<std::string, double> p50;
  for (const std::string burst :
       {"", ", inter_burst_latency_us: 500, inter_burst_bandwidth: 1e9"}) {
    Study study;
    const std::string text =
        four_machine_pipelines(study, "inter_burst_bytes: 1e9" + burst, /*with_2x2=*/false);
    ASSERT_EQ(study.run(text), 0) << burst;
    const json summary = parse_json(read_file(study.results() / "summary.json"));
    p50[burst] = summary["points"][0]["systems"][0]["phases"]["iteration"]["p50"];
    const json config =
        parse_json(read_file(study.results() / "raw" / "p000" / "p4" / "rep0" / "config.json"));
    if (burst.empty()) {
      EXPECT_TRUE(config["cluster"]["inter_burst_latency_us"].is_null());
      EXPECT_EQ(config["cluster"]["inter_burst_bandwidth"], 0.0);
    } else {
      EXPECT_NEAR(config["cluster"]["inter_burst_latency_us"].get<double>(), 500.0, 1e-9);
      EXPECT_EQ(config["cluster"]["inter_burst_bandwidth"], 1e9);
    }
  }
  EXPECT_GT(p50.at(", inter_burst_latency_us: 500, inter_burst_bandwidth: 1e9"), p50.at("") + 3.0);
  for (const std::string bad : {"inter_burst_latency_us: -1", "inter_burst_bandwidth: 0"}) {
    expect_cluster_key_refused(bad);
  }
}

// cluster.inter_send_call_us (the link probe's `send_call_us`) reaches the engine: the same
// 4-stage pipeline over 4 machines, every send call that writes its message now holding its
// rank 20 ms, some of them before a receive the next transfer waits for: more than one call's
// worth on the critical path (the slow link leaves the ranks slack that hides calls of 1 ms,
// now that receives are posted a compute action ahead); config.json carries the pairs. A table
// that is not [bytes, us] pairs with sizes ascending is refused at its line.
TEST(SimulateSpec, SendCallsArePricedFromTheSpec) {
  std::map<std::string, double> p50;
  for (const std::string calls : {"", ", inter_send_call_us: [[8, 20000], [65536, 20000]]"}) {
    Study study;
    const std::string text = four_machine_pipelines(study, "p2p_sends: one" + calls,
                                                    /*with_2x2=*/false);
    ASSERT_EQ(study.run(text), 0) << calls;
    const json summary = parse_json(read_file(study.results() / "summary.json"));
    p50[calls] = summary["points"][0]["systems"][0]["phases"]["iteration"]["p50"];
    const json config =
        parse_json(read_file(study.results() / "raw" / "p000" / "p4" / "rep0" / "config.json"));
    EXPECT_EQ(config["cluster"]["inter_send_call_us"],
              calls.empty() ? json::array() : json::parse("[[8.0, 20000.0], [65536.0, 20000.0]]"));
  }
  EXPECT_GT(p50.at(", inter_send_call_us: [[8, 20000], [65536, 20000]]"), p50.at("") + 20.0);
  for (const std::string bad :
       {"inter_send_call_us: 100", "inter_send_call_us: [[65536, 100], [8, 90]]",
        "inter_send_call_us: [[8, -1]]", "inter_send_call_us: [[8]]",
        "inter_send_call_us: [[8, fast]]"}) {
    expect_cluster_key_refused(bad);
  }
}

// A loopback comm profile's `handover` rows (a send call to a computing receiver) price the
// send calls inside a machine: a 4-stage pipeline on one machine of 4 ranks, every call whose
// receive is posted holding its rank 20 ms, runs longer than with free calls, and config.json
// carries the pairs; cluster.intra_send_call_us overrides them ([] frees them again), and an
// emulated cluster's profile, whose ping-pongs crossed its link, gives none.
TEST(SimulateSpec, SendCallsInsideAMachineArePricedFromTheHandOverRows) {
  const auto run = [](const std::string& emulated, const std::string& key, json* calls) {
    Study study;
    study.dir.write("comm.json",
                    R"({"world_size": 4, "backend": "gloo", "emulated_cluster": )" + emulated + R"(,
      "fits": [{"op": "allreduce", "latency_us": 0, "bus_bandwidth_bytes_per_s": 1e12}],
      "rows": [{"op": "handover", "bytes": 65536, "p50_ms": 20.0},
               {"op": "handover", "bytes": 4194304, "p50_ms": 20.0}]})");
    const std::string system =
        "    - {name: p4, kind: pipeline, schedule: dapple, micro_batches: 4, stages: [{layers: "
        "\"0\", ranks: [0]}, {layers: \"1\", ranks: [1]}, {layers: \"2\", ranks: [2]}, "
        "{layers: \"3\", ranks: [3]}]}\n";
    std::string text = in_dir(spec_text(system), study.dir.path());
    text.replace(
        text.find("gpus_per_machine: 2"), 19,
        "gpus_per_machine: 4, comm_profile: " + (study.dir.path() / "comm.json").string() + key);
    EXPECT_EQ(study.run(text), 0) << key;
    const fs::path raw = study.results() / "raw" / "p000" / "p4" / "rep0";
    *calls = parse_json(read_file(raw / "config.json"))["cluster"]["intra_send_call_us"];
    return read_sample_file(raw / "rank0.csv").at("iteration")[0];
  };
  json calls;
  const double priced = run("null", "", &calls);
  EXPECT_EQ(calls, json::parse("[[65536.0, 20000.0], [4194304.0, 20000.0]]"));
  const double freed = run("null", ", intra_send_call_us: []", &calls);
  EXPECT_EQ(calls, json::array());
  EXPECT_GT(priced, freed + 20.0);
  EXPECT_NEAR(run(R"({"machines": 2})", "", &calls), freed, 1e-9);
  EXPECT_EQ(calls, json::array());
  expect_cluster_key_refused("intra_send_call_us: [[65536, 100], [8, 90]]");
}

// cluster.inter_past_bucket_latency_us (the link probe's `past_bucket_latency_us`) reaches the
// engine: the 4-stage pipeline over 4 machines with a bucket of one byte, so that every
// activation and gradient passes it, each then 1 ms later; config.json carries it. A value that
// is not a number is refused at its line.
TEST(SimulateSpec, PassingTheBucketIsPricedFromTheSpec) {
  std::map<std::string, double> p50;
  for (const std::string past : {"0", "1000"}) {
    Study study;
    const std::string text = four_machine_pipelines(
        study,
        "inter_burst_bytes: 1, inter_burst_latency_us: 0, inter_past_bucket_latency_us: " + past,
        /*with_2x2=*/false);
    ASSERT_EQ(study.run(text), 0) << past;
    const json summary = parse_json(read_file(study.results() / "summary.json"));
    p50[past] = summary["points"][0]["systems"][0]["phases"]["iteration"]["p50"];
    const json config =
        parse_json(read_file(study.results() / "raw" / "p000" / "p4" / "rep0" / "config.json"));
    EXPECT_NEAR(config["cluster"]["inter_past_bucket_latency_us"].get<double>(), std::stod(past),
                1e-9);
  }
  EXPECT_GT(p50.at("1000"), p50.at("0") + 3.0);
  expect_cluster_key_refused("inter_past_bucket_latency_us: soon");
}

// Compute after a wait, from the stage profile's profile.json (`harness profile layers
// --stages 0-1,2-3` measures each stage's forward and backward after idle gaps): a 2-stage
// pipeline, one rank a stage on one machine, one micro-batch of 4 samples (batch 2 x world 2;
// the profile's batch 2, so twice its times). Stage 0: forward 6 ms, then its 2 MB activation
// crosses the ports (10 GB/s) in 0.2 ms; stage 1 idled 6.2 ms and computes forward 14 ms and
// backward 28 ms; the gradient 0.2 ms; stage 0's backward 12 ms and its step (half the
// parameters) 0.25 ms: 60.65 ms. Stage 1 measured 1.5x / 1x after 4 ms and 2x / 1.5x after
// 10 ms: at 6.2 ms its forward takes 1.5 + 0.5 x 2.2 / 6 = 1.6833x (+9.567 ms), its backward
// 1.1833x (+5.133 ms): 75.35 ms. Stage 0 measured nothing and keeps its time after its wait.
TEST(SimulateSpec, ComputeAfterAWaitIsPricedFromTheStageProfile) {
  std::map<std::string, double> iteration;
  for (const std::string priced : {"true", "false"}) {
    Study study;
    study.dir.write("profile.json", R"({"threads": 1, "whole_model": {"step": {"median_ms": 0.5}},
      "layers": [{}, {}, {}, {}],
      "stages": [{"layers": "0-1"},
                 {"layers": "2-3", "after_idle": [
                    {"gap_ms": 0, "forward": {"median_ms": 2}, "backward": {"median_ms": 4}},
                    {"gap_ms": 4, "forward": {"median_ms": 3}, "backward": {"median_ms": 4}},
                    {"gap_ms": 10, "forward": {"median_ms": 4}, "backward": {"median_ms": 6}}]}]})");
    std::string text = in_dir(
        spec_text("    - {name: p2, kind: pipeline, schedule: dapple, micro_batches: 1, stages: "
                  "[{layers: \"0-1\", ranks: [0]}, {layers: \"2-3\", ranks: [1]}]}\n"),
        study.dir.path());
    text.replace(text.find("world_size: 4"), 13, "world_size: 2");
    text.replace(text.find(", step_ms: 0.5"), 14, ", after_idle: " + priced);
    ASSERT_EQ(study.run(text), 0) << priced;
    const fs::path raw = study.results() / "raw" / "p000" / "p2" / "rep0";
    iteration[priced] = read_sample_file(raw / "rank0.csv").at("iteration")[0];
    const json config = parse_json(read_file(raw / "config.json"));
    EXPECT_EQ(config["model"]["after_idle_layers"],
              priced == "true" ? json::array({"2-3"}) : json::array());
  }
  EXPECT_NEAR(iteration.at("false"), 60.65, 1e-6);
  EXPECT_NEAR(iteration.at("true"), 60.65 + 14 * (0.5 * 2.2 / 6 + 0.5) + 28 * (0.5 * 2.2 / 6),
              1e-6);
  // Anything but true or false is refused at its line, naming the key; nothing is written.
  Study study;
  std::string text = in_dir(spec_text("    - sync\n"), study.dir.path());
  text.replace(text.find(", step_ms: 0.5"), 14, ", after_idle: maybe");
  std::string error;
  EXPECT_EQ(study.run(text, &error), 2);
  EXPECT_EQ(error.rfind("spec.yaml:5:", 0), 0u) << error;
  EXPECT_NE(error.find("simulate.model.after_idle: expected true or false"), std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(study.dir.path() / "out"));
}

// A stage profile of 2 stages x 2 replicas (4 processes) timed on the wall clock already holds
// each process's wait for one of 2 cores; simulating it on cluster.cpu_cores 2 shares the
// cores again: warned, naming the file. The same profile on the CPU clock, or the machine
// with 4 cores, gets no warning.
TEST(SimulateSpec, WarnsWhenAWallClockProfileRanMoreProcessesThanCores) {
  const auto run_with = [](const std::string& clock, int cores) {
    Study study;
    study.dir.write("profile.json", R"({"threads": 1, "co_located": 2, "clock": ")" + clock +
                                        R"(", "stages": [{"layers": "0-1"}, {"layers": "2-3"}],
                                        "whole_model": {"step": {"median_ms": 2.0}}})");
    std::string text = in_dir(spec_text("    - sync\n"), study.dir.path());
    text.replace(text.find("gpus_per_machine: 2"), 19,
                 "gpus_per_machine: 4, cpu_cores: " + std::to_string(cores));
    testing::internal::CaptureStderr();
    const int code = study.run(text);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(code, 0);
    return std::make_pair(err, (study.dir.path() / "profile.json").string());
  };
  const auto [wall_err, wall_path] = run_with("wall", 2);
  EXPECT_NE(wall_err.find("warning: " + wall_path +
                          " was timed on the wall clock by 4 processes at once, more than "
                          "cluster.cpu_cores (2): its times include waiting for a core, which "
                          "the simulator's sharing of the cores adds again (profile with "
                          "--clock cpu)\n"),
            std::string::npos)
      << wall_err;
  EXPECT_EQ(run_with("cpu", 2).first.find("warning:"), std::string::npos);
  EXPECT_EQ(run_with("wall", 4).first.find("warning:"), std::string::npos);
}

TEST(SimulateSpec, NoiseIsSeededAndVariesIterations) {
  Study a, b;
  const std::string extra = "";
  auto noisy = [](const fs::path& dir) {
    std::string text = in_dir(spec_text("    - overlap\n"), dir);
    text.replace(text.find("iterations: 3"), 13, "iterations: 3, noise: 10, seed: 7");
    return text;
  };
  ASSERT_EQ(a.run(noisy(a.dir.path())), 0);
  ASSERT_EQ(b.run(noisy(b.dir.path())), 0);
  const auto path = fs::path("raw") / "p000" / "overlap" / "rep0" / "rank1.csv";
  const auto first = read_sample_file(a.results() / path);
  EXPECT_EQ(read_file(a.results() / path), read_file(b.results() / path));
  EXPECT_NE(first.at("iteration")[0], first.at("iteration")[1]);
}

TEST(SimulateSpec, APlanThatCannotRunFailsItsRunAndKeepsTheOthers) {
  Study study;
  // A plan made for another cluster: a rank this world of 4 does not have.
  const json stage0 = {{"layer_ids", {"node1", "node2"}}, {"gpus", {0, 9}}};
  const json stage1 = {{"layer_ids", {"node3", "node4"}}, {"gpus", {2, 3}}};
  const json plan = {{"results",
                      {{{"global_batch_size", 8},
                        {"plan", {{"stages", {stage0, stage1}}, {"micro_batch_count", 2}}}}}}};
  study.dir.write("plan.json", json_text(plan));
  const std::string systems =
      "    - overlap\n"
      "    - {name: bad, kind: pipeline, plan: DIR/plan.json}\n";
  EXPECT_EQ(study.run(in_dir(spec_text(systems), study.dir.path())), 1);
  const fs::path results = study.results();
  const json status =
      parse_json(read_file(results / "raw" / "p000" / "bad" / "rep0" / "status.json"));
  EXPECT_EQ(status["status"], "failed");
  EXPECT_NE(status["failure"]["reason"].get<std::string>().find("rank 9 outside the world of 4"),
            std::string::npos);
  EXPECT_EQ(parse_json(
                read_file(results / "raw" / "p000" / "overlap" / "rep0" / "status.json"))["status"],
            "complete");
  EXPECT_FALSE(parse_json(read_file(results / "status.json"))["complete"].get<bool>());
}

// Stages the spec writes inline are the spec's: ones that do not place at some point of the
// sweep are refused, --dry-run too, before a folder is made.
TEST(SimulateSpec, InlineStagesThatDoNotPlaceAreRefusedBeforeAnythingIsWritten) {
  struct Case {
    std::string stages, sweep, expected;
  };
  const std::vector<Case> cases = {
      {"[{layers: \"0-1\", ranks: [0, 9]}, {layers: \"2-3\", ranks: [2, 3]}]", "",
       "spec.yaml:10:7: pipeline of system 'p' (inline): stage 0 names rank 9 outside the world "
       "of 4"},
      {"[{layers: \"0-1\"}, {layers: \"3-3\"}]", "",
       "spec.yaml:10:7: pipeline of system 'p' (inline): layer node3 (Linear3) is in no stage"},
      {"[{layers: \"0-1\"}, {layers: \"2-4\"}]", "",
       "spec.yaml:10:7: stage layer 4 but DIR/graph.txt has layers 0-3"},
      {"[{layers: \"0\"}, {layers: \"1\"}, {layers: \"2\"}, {layers: \"3\"}]",
       "  sweep: {run.world_size: [4, 6]}\n",
       "spec.yaml:10:7: stages without ranks or replicas split the world evenly, but 6 ranks do "
       "not divide into 4 stages"},
  };
  for (const Case& c : cases) {
    for (const bool dry_run : {true, false}) {
      Study study;
      const std::string text = in_dir(
          spec_text("    - {name: p, kind: pipeline, micro_batches: 2, stages: " + c.stages + "}\n",
                    c.sweep),
          study.dir.path());
      study.write_spec(text);
      std::ostringstream out;
      try {
        run_simulate_spec(study.spec_path, parse_yaml_file(study.spec_path), {}, dry_run, out);
        ADD_FAILURE() << "accepted: " << c.stages << c.sweep;
      } catch (const InputError& e) {
        EXPECT_EQ(e.what(), in_dir(study.dir.path().string() + "/" + c.expected, study.dir.path()));
      }
      EXPECT_EQ(out.str(), "") << "nothing printed";
      EXPECT_FALSE(fs::exists(study.dir.path() / "out")) << "nothing written for bad input";
    }
  }
}

}  // namespace
}  // namespace harness
