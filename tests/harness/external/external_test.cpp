// External systems: the timing readers on recorded outputs, command templates, spec
// validation of `kind: external` entries, and how collected samples become rank CSVs or a
// failed rank.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/input_error.h"
#include "common/torch_python.h"
#include "harness/external/command_template.h"
#include "harness/external/external_system.h"
#include "harness/external/timing_readers.h"
#include "harness/spec/spec.h"
#include "tests/harness/spec/spec_test_util.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using harness::InputError;
using harness_test::TempDir;

std::string data_file(const std::string& name) {
  std::ifstream in(std::string(HARNESS_TEST_DATA) + "/external/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

harness::TimingRead jsonl(const std::string& text) {
  std::istringstream in(text);
  return harness::read_jsonl_timings(in);
}

// ---- line protocol ----

TEST(JsonlTimings, ReadsRecordedTorchDdpOutputSkippingLogLines) {
  const auto read = jsonl(data_file("torch_ddp_rank0.stdout"));
  ASSERT_FALSE(read.malformed);
  ASSERT_EQ(read.samples.size(), 3u);
  EXPECT_EQ(*read.samples[1].iteration, 1);
  EXPECT_DOUBLE_EQ(read.samples[0].fields.at("forward_ms"), 101.25);
  EXPECT_DOUBLE_EQ(read.samples[1].fields.at("iteration_ms"), 312.5);
  EXPECT_EQ(read.samples[1].fields.count("loss"), 0u);  // not a timing field
  EXPECT_EQ(read.samples[2].line, 5);
  EXPECT_EQ(read.last_line, "done");
}

TEST(JsonlTimings, ALineStartingWithABraceThatDoesNotParseIsMalformed) {
  const auto read =
      jsonl("starting\n{\"iter\": 0, \"iteration_ms\": 3}\n{\"iter\": 1, \"iteration_ms\": }\n");
  ASSERT_TRUE(read.malformed);
  EXPECT_EQ(read.malformed->line, 3);
  EXPECT_EQ(read.malformed->text, "{\"iter\": 1, \"iteration_ms\": }");
  EXPECT_NE(read.malformed->reason.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(read.samples.size(), 1u);
}

TEST(JsonlTimings, WrongTypesAndMissingTimingsAreMalformed) {
  EXPECT_EQ(jsonl("{\"iter\": 0, \"forward_ms\": \"fast\"}\n").malformed->reason,
            "\"forward_ms\" must be a number >= 0, got \"fast\"");
  EXPECT_EQ(jsonl("{\"iter\": -1, \"forward_ms\": 2}\n").malformed->reason,
            "\"iter\" must be a non-negative integer, got -1");
  EXPECT_EQ(jsonl("{\"loss\": 0.5}\n").malformed->reason,
            "no timing field (expected at least one of forward_ms, backward_ms, step_ms, "
            "iteration_ms)");
  EXPECT_EQ(jsonl("  {}\n").malformed->line, 1);
}

// ---- regex with named groups ----

TEST(RegexTimings, NamedGroupsOnRecordedMegatronStyleLog) {
  const auto pattern = harness::compile_named_regex(
      R"(iteration +(?<iter>[0-9]+)/ *[0-9]+ \| elapsed time per iteration \(ms\): (?<iteration_ms>[0-9.]+))");
  EXPECT_EQ(pattern.group_names, (std::vector<std::string>{"iter", "iteration_ms"}));
  std::istringstream in(data_file("megatron_style.log"));
  const auto read = harness::read_regex_timings(in, pattern);
  ASSERT_FALSE(read.malformed);
  ASSERT_EQ(read.samples.size(), 3u);
  EXPECT_EQ(*read.samples[0].iteration, 1);
  EXPECT_DOUBLE_EQ(read.samples[1].fields.at("iteration_ms"), 398.25);
  EXPECT_DOUBLE_EQ(read.samples[2].fields.at("iteration_ms"), 401.0);
  EXPECT_EQ(read.samples[2].line, 5);
}

TEST(RegexTimings, UnnamedAndNonCapturingGroupsKeepTheNumbering) {
  // "(a|b)" captures (group 1, unnamed), "(?:...)" does not, "[(]" and "\(" are literals.
  const auto pattern = harness::compile_named_regex(
      R"((fwd|forward)[(] *(?:ms)?\) (?<forward_ms>[0-9.]+) bwd (?<backward_ms>[0-9.]+))");
  EXPECT_EQ(pattern.group_names, (std::vector<std::string>{"", "forward_ms", "backward_ms"}));
  std::istringstream in("fwd( ms) 1.5 bwd 2.25\nforward( ) 3 bwd 4\n");
  const auto read = harness::read_regex_timings(in, pattern);
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(read.samples[0].fields.at("backward_ms"), 2.25);
  EXPECT_DOUBLE_EQ(read.samples[1].fields.at("forward_ms"), 3.0);
}

TEST(RegexTimings, ACaptureThatIsNotANumberIsMalformed) {
  const auto pattern = harness::compile_named_regex(R"(time: (?<iteration_ms>[0-9.]+))");
  std::istringstream in("time: 12.5\ntime: 1.2.3\n");
  const auto read = harness::read_regex_timings(in, pattern);
  ASSERT_TRUE(read.malformed);
  EXPECT_EQ(read.malformed->line, 2);
  EXPECT_EQ(read.malformed->reason, "group 'iteration_ms' captured '1.2.3', not a number >= 0");
}

TEST(RegexTimings, BadPatternsAreRejected) {
  auto reason = [](const std::string& pattern) {
    try {
      harness::compile_named_regex(pattern);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(reason("(?<iteration>[0-9]+)"),
            "unknown group name 'iteration' (expected iter, forward_ms, backward_ms, step_ms or "
            "iteration_ms)");
  EXPECT_EQ(reason("(?<iter>[0-9]+)"),
            "no named timing group (expected e.g. (?<iteration_ms>[0-9.]+))");
  EXPECT_EQ(reason("(?<step_ms>1)(?<step_ms>2)"), "group name 'step_ms' used twice");
  EXPECT_EQ(reason("(?<=a)(?<step_ms>1)"), "lookbehind '(?<=' / '(?<!' is not supported");
  EXPECT_NE(reason("(?<step_ms>[0-9]").find("invalid regular expression"), std::string::npos);
}

// ---- Chrome / Kineto trace ----

TEST(ChromeTraceTimings, StepEventsInStartOrder) {
  const auto read = harness::read_chrome_trace_timings(
      data_file("kineto_trace.json"), harness::TextPattern(harness::kDefaultStepName));
  ASSERT_FALSE(read.malformed);
  ASSERT_EQ(read.samples.size(), 3u);  // the instant event and aten::mm are not steps
  EXPECT_DOUBLE_EQ(read.samples[0].fields.at("iteration_ms"), 101.25);
  EXPECT_DOUBLE_EQ(read.samples[1].fields.at("iteration_ms"), 95.5);
  EXPECT_DOUBLE_EQ(read.samples[2].fields.at("iteration_ms"), 99.0);
}

TEST(ChromeTraceTimings, AConfigurableStepNameAndAPlainArray) {
  const std::string trace =
      R"([{"ph": "X", "name": "train_step", "ts": 0, "dur": 2000},
          {"ph": "X", "name": "train_step_inner", "ts": 1, "dur": 1}])";
  const auto read = harness::read_chrome_trace_timings(trace, harness::TextPattern("train_step"));
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(read.samples[0].fields.at("iteration_ms"), 2.0);
}

TEST(ChromeTraceTimings, BrokenTracesAreMalformed) {
  const harness::TextPattern steps(harness::kDefaultStepName);
  const auto truncated =
      harness::read_chrome_trace_timings("{\"traceEvents\": [\n{\"ph\": ", steps);
  ASSERT_TRUE(truncated.malformed);
  EXPECT_EQ(truncated.malformed->line, 2);
  const auto no_dur = harness::read_chrome_trace_timings(
      R"([{"ph": "X", "name": "ProfilerStep#1", "ts": 5}])", steps);
  ASSERT_TRUE(no_dur.malformed);
  EXPECT_EQ(no_dur.malformed->reason, "step event #1 has no numeric \"ts\" and \"dur\" >= 0");
}

// ---- samples to rank CSV ----

TEST(SampleTable, MissingPhasesAreLeftOutAndIterationIsDerived) {
  const auto read = jsonl(
      "{\"iter\": 7, \"forward_ms\": 1.5, \"backward_ms\": 2}\n"
      "{\"iter\": 8, \"forward_ms\": 1, \"backward_ms\": 2.5}\n");
  const auto table = harness::samples_to_csv(read.samples);
  ASSERT_FALSE(table.error);
  EXPECT_TRUE(table.derived_iteration);
  EXPECT_EQ(table.csv, "iteration,forward_ms,backward_ms,iteration_ms\n7,1.5,2,3.5\n8,1,2.5,3.5\n");
}

TEST(SampleTable, ASampleWithOtherFieldsIsAnError) {
  const auto read = jsonl("{\"iteration_ms\": 1}\n{\"forward_ms\": 1}\n");
  const auto table = harness::samples_to_csv(read.samples);
  ASSERT_TRUE(table.error);
  EXPECT_EQ(table.error->line, 2);
  EXPECT_EQ(table.error->reason, "this sample lacks iteration_ms, which the first had");
}

// ---- templates ----

TEST(CommandTemplate, RendersPlaceholdersAndEscapedBraces) {
  const std::map<std::string, std::string> values = {{"rank", "1"},
                                                     {"point.model.input_shape", "3,32,32"}};
  EXPECT_EQ(harness::render_template("--rank={rank} --shape {point.model.input_shape}", values),
            "--rank=1 --shape 3,32,32");
  EXPECT_EQ(harness::render_template("{{\"rank\": {rank}}}", values), "{\"rank\": 1}");
  EXPECT_EQ(harness::template_placeholders("a{rank}b{point.ddp.bucket_mb}"),
            (std::vector<std::string>{"rank", "point.ddp.bucket_mb"}));
}

TEST(CommandTemplate, Errors) {
  auto error = [](const std::string& text) {
    try {
      harness::render_template(text, {{"rank", "0"}});
    } catch (const harness::TemplateError& e) {
      return std::string(e.what());
    }
    return std::string("rendered");
  };
  EXPECT_EQ(error("{world}"), "unknown placeholder '{world}'");
  EXPECT_EQ(error("x {rank"),
            "'{' at character 3 does not start a placeholder like {rank} (got '{rank'; write "
            "'{{' for a literal brace)");
  EXPECT_EQ(error("{}"),
            "'{' at character 1 does not start a placeholder like {rank} (got '{}'; write '{{' "
            "for a literal brace)");
  EXPECT_EQ(error("a}"), "stray '}' at character 2 (write '}}' for a literal brace)");
}

// ---- spec validation ----

const char* kExternalSpec = R"SPEC(name: ext
model: {name: mlp, batch_size: 8}
run: {world_size: 2, iterations: 4}
systems:
  - overlap
  - name: script
    kind: external
    command: ["/bin/sh", "run.sh", "{rank}", "{point.ddp.bucket_mb}"]
    env: {OMP_NUM_THREADS: "1", OUT: "{output_dir}/x"}
    timings: {format: regex, pattern: "t=(?<iteration_ms>[0-9.]+)", skip_first: 1}
    requires: ["true"]
)SPEC";

harness::LoadOptions options() {
  harness::LoadOptions o;
  o.known_models = {"mlp"};
  return o;
}

std::string spec_error(const std::string& text) {
  return harness_test::spec_load_error(text, options());
}

std::string with(const std::string& text, const std::string& from, const std::string& to) {
  return harness_test::replace_once(text, from, to);
}

TEST(ExternalSpec, LoadsAnExternalSystem) {
  TempDir dir;
  const auto e = harness::load_experiment(dir.write("s.yaml", kExternalSpec).string(), options());
  ASSERT_EQ(e.systems.size(), 2u);
  const auto& system = e.systems[1];
  EXPECT_EQ(system.kind(), harness::SystemKind::kExternal);
  ASSERT_TRUE(system.external);
  EXPECT_EQ(system.external->command.size(), 4u);
  EXPECT_EQ(system.external->environment[1].first, "OUT");
  EXPECT_EQ(system.external->timings.format, "regex");
  EXPECT_EQ(system.external->timings.skip_first, 1);
  EXPECT_EQ(system.external->requires_probes, std::vector<std::string>{"true"});
  EXPECT_FALSE(e.systems[0].external);
}

TEST(ExternalSpec, UnknownPlaceholderNamesTheItemAndSuggests) {
  EXPECT_EQ(spec_error(with(kExternalSpec, "{point.ddp.bucket_mb}", "{point.ddp.bucket_m}")),
            "spec.yaml:8:46: systems.command: unknown placeholder '{point.ddp.bucket_m}' "
            "(expected one of: rank, world_size, local_rank, master_addr, master_port, "
            "output_dir, iterations, warmup, seed, repeat, torch_python, point.<key path>); did "
            "you mean "
            "'{point.ddp.bucket_mb}'?");
  EXPECT_EQ(spec_error(with(kExternalSpec, "{output_dir}/x", "{output_dir/x")),
            "spec.yaml:9:38: systems.env.OUT: '{' at character 1 does not start a placeholder "
            "like {rank} (got '{output_dir/x'; write '{{' for a literal brace)");
}

TEST(ExternalSpec, MisspeltKeysAndBadValues) {
  EXPECT_EQ(spec_error(with(kExternalSpec, "    requires:", "    require:")),
            "spec.yaml:11:5: unknown key 'systems.require' (did you mean 'requires'?)");
  EXPECT_EQ(spec_error(with(kExternalSpec, "format: regex", "format: regexp")),
            "spec.yaml:10:23: systems.timings.format: unknown value 'regexp' (expected one of: "
            "jsonl, regex, chrome_trace); did you mean 'regex'?");
  EXPECT_EQ(spec_error(with(kExternalSpec, "(?<iteration_ms>", "(?<iter_ms>")),
            "spec.yaml:10:39: systems.timings.pattern: unknown group name 'iter_ms' (expected "
            "iter, forward_ms, backward_ms, step_ms or iteration_ms)");
  EXPECT_EQ(spec_error(with(kExternalSpec, "kind: external", "kind: externel")),
            "spec.yaml:7:11: systems.kind: unknown value 'externel' (expected one of: ddp, "
            "expert_parallel, external, pipeline, sharded, spmd, tensor_parallel); did you mean "
            "'external'?");
  EXPECT_EQ(spec_error(with(kExternalSpec,
                            "command: [\"/bin/sh\", \"run.sh\", \"{rank}\", "
                            "\"{point.ddp.bucket_mb}\"]",
                            "command: []")),
            "spec.yaml:8:14: systems.command: expected a non-empty list of strings (the program "
            "and its arguments), got an empty list");
  EXPECT_EQ(spec_error(with(kExternalSpec, "    env: {OMP_NUM_THREADS", "    env: {OMP-THREADS")),
            "spec.yaml:9:11: systems.env: 'OMP-THREADS' is not a valid environment variable "
            "name");
  // ddp-only keys do not apply to an external system.
  EXPECT_EQ(spec_error(with(kExternalSpec, "    requires:", "    mode: overlap\n    requires:")),
            "spec.yaml:11:5: unknown key 'systems.mode'");
}

TEST(ExternalSpec, MissingCommandAndTimingsFile) {
  const std::string no_command = with(kExternalSpec,
                                      "    command: [\"/bin/sh\", \"run.sh\", \"{rank}\", "
                                      "\"{point.ddp.bucket_mb}\"]\n",
                                      "");
  EXPECT_EQ(spec_error(no_command),
            "spec.yaml:6:5: missing required key 'systems.command' (the program and its "
            "arguments)");
  EXPECT_EQ(spec_error(with(kExternalSpec,
                            "timings: {format: regex, pattern: "
                            "\"t=(?<iteration_ms>[0-9.]+)\", skip_first: 1}",
                            "timings: {format: chrome_trace}")),
            "spec.yaml:10:14: systems.timings.file: missing: timings read from a file need "
            "'file' (e.g. {output_dir}/rank{rank}.jsonl)");
}

// ---- requirements, launch plan and collection ----

TEST(ExternalRun, RequirementProbes) {
  harness::ExternalSystem system;
  system.requires_probes = {"true", "echo 'No module named torch' >&2; exit 3"};
  EXPECT_EQ(harness::failed_requirement(system),
            "`echo 'No module named torch' >&2; exit 3` exited with code 3: No module named "
            "torch");
  system.requires_probes = {"true"};
  EXPECT_FALSE(harness::failed_requirement(system));
}

// {torch_python}: the Python whose torch is the rank program's LibTorch (the build's, from where
// LibTorch is), in commands and in requires: probes, which may name nothing else.
TEST(ExternalRun, TorchPythonIsTheBuildsPythonInCommandsAndProbes) {
  const std::string python = harness::torch_python();
  ASSERT_FALSE(python.empty());  // Debian's /usr/bin/python3, or the PyPI environment's
  EXPECT_TRUE(fs::exists(python)) << python;
  TempDir dir;
  harness::PointConfig point;
  point.run.world_size = 1;
  point.run.iterations = 1;
  harness::ExternalSystem system;
  system.command = {"{torch_python}", "-c", "pass"};
  const auto launch = harness::plan_external_launch(system, {&point, 0, dir.path(), 1234});
  EXPECT_EQ(fs::path(launch.commands[0][0]), fs::path(python));
  system.requires_probes = {"{torch_python} -c 'import sys; sys.exit(7)'"};
  EXPECT_EQ(harness::failed_requirement(system),
            "`" + python + " -c 'import sys; sys.exit(7)'` exited with code 7");
  EXPECT_EQ(spec_error(with(kExternalSpec, "requires: [\"true\"]", "requires: [\"{rank}\"]")),
            "spec.yaml:11:16: systems.requires: unknown placeholder '{rank}' (expected one of: "
            "torch_python)");
}

TEST(ExternalLaunch, HeapPolicyVariablesYieldToTheSpecsEnvAndToRunHeapSystem) {
  TempDir dir;
  harness::PointConfig point;
  point.run.world_size = 1;
  point.run.iterations = 1;
  harness::ExternalSystem system;
  system.command = {"/bin/true"};
  system.environment = {{"MALLOC_TOP_PAD_", "0"}};
  const harness::ExternalRunContext run{&point, 0, dir.path(), 1234};
  const auto retained = harness::plan_external_launch(system, run);
  EXPECT_EQ(retained.ranks[0].environment.at("MALLOC_TOP_PAD_"), "0");  // the spec's own
  EXPECT_EQ(retained.ranks[0].environment.at("MALLOC_MMAP_THRESHOLD_"), "33554432");
  point.run.heap = "system";
  const auto stock = harness::plan_external_launch(system, run);
  EXPECT_EQ(stock.ranks[0].environment.count("MALLOC_MMAP_THRESHOLD_"), 0u);
  EXPECT_EQ(stock.ranks[0].environment.count("MALLOC_TRIM_THRESHOLD_"), 0u);
}

TEST(ExternalLaunch, OnEmulatedMachinesEachRankRunsInItsMachineAndBindsItsInterface) {
  TempDir dir;
  harness::PointConfig point;
  point.run.world_size = 4;
  point.run.iterations = 1;
  harness::ExternalSystem system;
  system.command = {"/bin/true", "--local", "{local_rank}", "--master", "{master_addr}"};
  harness::EmulatedClusterShape shape;
  shape.machines = 2;
  shape.ranks_per_machine = 2;
  const harness::NetworkPlan network = harness::plan_network(shape, 4242);
  const harness::ExternalRunContext run{&point, 0, dir.path(), 1234, &network};
  const auto launch = harness::plan_external_launch(system, run);
  ASSERT_EQ(launch.ranks.size(), 4u);
  // Ranks fill machine 0 first: ranks 2 and 3 live in machine 1, local ranks 0 and 1 there.
  const auto& rank3 = launch.ranks[3];
  EXPECT_EQ(rank3.prefix,
            (std::vector<std::string>{"ip", "netns", "exec", network.machines[1].netns}));
  EXPECT_EQ(rank3.arguments,
            (std::vector<std::string>{"--local", "1", "--master", network.machines[0].address}));
  EXPECT_EQ(rank3.environment.at("LOCAL_RANK"), "1");
  EXPECT_EQ(rank3.environment.at("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(rank3.environment.at("GROUP_RANK"), "1");
  EXPECT_EQ(rank3.environment.at("MASTER_ADDR"), "10.99.0.1");
  EXPECT_EQ(rank3.environment.at("GLOO_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(rank3.environment.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(launch.ranks[0].prefix[3], network.machines[0].netns);
  // On loopback: none of it.
  const auto plain = harness::plan_external_launch(system, {&point, 0, dir.path(), 1234});
  EXPECT_TRUE(plain.ranks[3].prefix.empty());
  EXPECT_EQ(plain.ranks[3].environment.count("GLOO_SOCKET_IFNAME"), 0u);
  EXPECT_EQ(plain.ranks[3].environment.at("LOCAL_RANK"), "3");
  EXPECT_EQ(plain.ranks[3].environment.at("MASTER_ADDR"), "127.0.0.1");
}

struct Collected {
  std::optional<harness::RankFailure> failure;
  std::string csv0;
};

// Writes the given stdout of two ranks into a run folder and collects them.
Collected collect(const std::string& rank0, const std::string& rank1, long long skip_first = 0) {
  TempDir dir;
  harness::PointConfig point;
  point.run.world_size = 2;
  point.run.iterations = 2;
  harness::ExternalSystem system;
  system.command = {"/bin/true", "--rank", "{rank}"};
  system.timings.skip_first = skip_first;
  const harness::ExternalRunContext run{&point, 0, dir.path(), 1234};
  const auto launch = harness::plan_external_launch(system, run);
  EXPECT_FALSE(launch.error);
  EXPECT_EQ(launch.ranks[1].arguments, (std::vector<std::string>{"--rank", "1"}));
  EXPECT_EQ(launch.ranks[1].environment.at("MASTER_PORT"), "1234");
  // run.heap (retain by default) reaches the external process as glibc's variables.
  EXPECT_EQ(launch.ranks[1].environment.at("MALLOC_TRIM_THRESHOLD_"), "2147483647");
  dir.write("rank0.stdout", rank0);
  dir.write("rank1.stdout", rank1);
  dir.write("rank1.stderr", "Traceback (most recent call last):\nValueError: boom\n");
  nlohmann::json details;
  Collected out;
  out.failure = harness::collect_external_samples(system, run, launch, details);
  if (fs::exists(dir.path() / "rank0.csv")) out.csv0 = harness::read_file(dir.path() / "rank0.csv");
  return out;
}

const char* kTwoSamples = "{\"iteration_ms\": 5}\n{\"iteration_ms\": 6}\n";

TEST(ExternalRun, CompleteRanksBecomeRankCsvs) {
  const std::string three = "{\"iteration_ms\": 9}\n" + std::string(kTwoSamples);
  const auto out = collect("warm\n" + three + "{\"iteration_ms\": 7}\n", three, 1);
  EXPECT_FALSE(out.failure);
  // skip_first drops the first sample; the one after run.iterations is left out.
  EXPECT_EQ(out.csv0, "iteration,iteration_ms\n0,5\n1,6\n");
}

TEST(ExternalRun, NeverPrintingASampleIsAFailedRank) {
  const auto out = collect(kTwoSamples, "loading\nready\n");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->rank, 1);
  EXPECT_EQ(out.failure->reason,
            "exited 0 without printing a sample in rank1.stdout (expected 2 measured samples: "
            "one JSON object per measured iteration, e.g. {\"iter\": 0, \"iteration_ms\": "
            "12.5}); last line: 'ready'");
  EXPECT_EQ(out.failure->stderr_tail, "Traceback (most recent call last):\nValueError: boom\n");
}

TEST(ExternalRun, ExitingEarlyAndMalformedLinesAreFailedRanks) {
  const auto early = collect(kTwoSamples, "{\"iteration_ms\": 5}\n");
  ASSERT_TRUE(early.failure);
  EXPECT_EQ(early.failure->reason.substr(0, 46), "exited 0 after 1 of 2 samples in rank1.stdout ");
  const auto malformed = collect("{\"iteration_ms\": 5}\n{\"iteration_ms\": 5,\n", kTwoSamples);
  ASSERT_TRUE(malformed.failure);
  EXPECT_EQ(malformed.failure->rank, 0);
  EXPECT_EQ(malformed.failure->reason.substr(0, 44),
            "printed a malformed sample at rank0.stdout:2");
  EXPECT_NE(malformed.failure->reason.find("'{\"iteration_ms\": 5,'"), std::string::npos);
}

TEST(ExternalRun, ProgressNoteSaysHowFarAFailedRankGot) {
  TempDir dir;
  harness::PointConfig point;
  point.run.world_size = 2;
  point.run.iterations = 4;
  harness::ExternalSystem system;
  system.command = {"/bin/true"};
  const harness::ExternalRunContext run{&point, 0, dir.path(), 1};
  const auto launch = harness::plan_external_launch(system, run);
  dir.write("rank1.stdout", "starting\n{\"iteration_ms\": 5}\n");
  EXPECT_EQ(harness::external_progress_note(system, run, launch, 1),
            "after 1 of 4 samples in rank1.stdout");
  EXPECT_EQ(harness::external_progress_note(system, run, launch, 0), "");  // no stdout yet
}

TEST(ExternalRun, AMissingProgramIsReportedBeforeLaunch) {
  TempDir dir;
  harness::PointConfig point;
  point.run.world_size = 1;
  point.run.iterations = 1;
  harness::ExternalSystem system;
  system.command = {"no-such-program-for-harness-tests"};
  const auto launch = harness::plan_external_launch(system, {&point, 0, dir.path(), 1});
  ASSERT_TRUE(launch.error);
  EXPECT_EQ(launch.error->reason,
            "cannot run 'no-such-program-for-harness-tests': not found on PATH");
}

}  // namespace
