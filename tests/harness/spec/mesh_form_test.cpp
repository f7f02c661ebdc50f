// A system written as its device mesh (harness/spec/mesh_form.h): each composed form reads as
// the short form it stands for, in train and simulate specs, and its errors point into it.
#include "harness/spec/mesh_form.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/input_error.h"
#include "harness/spec/simulate_spec.h"
#include "harness/spec/spec.h"
#include "harness/study/simulate_study.h"
#include "tests/harness/spec/spec_test_util.h"
#include "tests/test_util.h"

namespace mesh_form_test {

using harness_test::TempDir;

// A Llama-style decoder at world 8: every axis has room.
const char* kLlamaSpec = R"(name: mesh
model: {name: llama, batch_size: 4, input_shape: [32], depth: 4, width: 128, vocab: 1000}
run: {world_size: 8, iterations: 2}
pipeline: {micro_batches: 4}
systems:
  - SYSTEM
)";

harness::LoadOptions llama_options() {
  harness::LoadOptions options;
  options.known_models = {"llama", "bert_moe"};
  return options;
}

std::string with_system(const std::string& system) {
  return harness_test::replace_once(kLlamaSpec, "SYSTEM", system);
}

harness::SystemConfig read_one(const std::string& system) {
  TempDir dir;
  const auto path = dir.write("spec.yaml", with_system(system));
  const harness::Experiment e = harness::load_experiment(path.string(), llama_options());
  EXPECT_EQ(e.systems.size(), 1u);
  return e.systems.at(0);
}

// The description, the stage count and the bucket cap: what a rank and a dry run get.
void expect_same_system(const std::string& short_form, const std::string& mesh_form) {
  SCOPED_TRACE(mesh_form);
  const harness::SystemConfig expected = read_one(short_form);
  const harness::SystemConfig got = read_one(mesh_form);
  EXPECT_EQ(static_cast<const runtime::ParallelSystem&>(got),
            static_cast<const runtime::ParallelSystem&>(expected));
  EXPECT_EQ(got.kind(), expected.kind());
  EXPECT_EQ(got.stage_count, expected.stage_count);
  EXPECT_EQ(got.stages_per_rank, expected.stages_per_rank);
  EXPECT_EQ(got.bucket_mb, expected.bucket_mb);
}

TEST(MeshForm, EveryComposedSystemReadsAsItsShortForm) {
  expect_same_system("{name: s, mode: sync, bucket_mb: 5}",
                     "{name: s, mesh: {data: 8}, mode: sync, bucket_mb: 5}");
  expect_same_system("{name: s, kind: sharded, stage: 1, unit: model, prefetch: false}",
                     "{name: s, mesh: {}, zero_stage: 1, unit: model, prefetch: false}");
  expect_same_system("{name: s, kind: sharded}", "{name: s, mesh: {data: 8}, zero_stage: 3}");
  expect_same_system(
      "{name: s, kind: tensor_parallel, tensor: 2, sequence_parallel: true, zero_stage: 3}",
      "{name: s, mesh: {tensor: 2, data: 4}, sequence_parallel: true, zero_stage: 3}");
  expect_same_system("{name: s, kind: pipeline, schedule: gpipe, stages: 2, zero_stage: 1}",
                     "{name: s, mesh: {pipeline: 2, data: 4}, schedule: gpipe, zero_stage: 1}");
  expect_same_system("{name: s, kind: pipeline, stages: 2, tensor: 2, sequence_parallel: true}",
                     "{name: s, mesh: {pipeline: 2, tensor: 2, data: 2}, sequence_parallel: true}");
  expect_same_system(
      "{name: s, kind: pipeline, schedule: interleaved_1f1b, stages: 2, stages_per_rank: 2}",
      "{name: s, mesh: {pipeline: 2}, schedule: interleaved_1f1b, stages_per_rank: 2}");
  // A pipeline of degree 1 is no pipeline: the mesh says which axes split the model.
  expect_same_system("{name: s, mode: overlap}", "{name: s, mesh: {pipeline: 1}, mode: overlap}");
}

TEST(MeshForm, TheExpertAxisShardsAMixturesExperts) {
  const std::string moe = R"(name: mesh
model: {name: bert_moe, batch_size: 2, input_shape: [16], depth: 2, width: 64}
run: {world_size: 4, iterations: 2}
systems:
  - {name: ep, kind: expert_parallel, zero_stage: 2}
  - {name: ep_mesh, mesh: {experts: true, data: 4}, zero_stage: 2}
)";
  TempDir dir;
  const harness::Experiment e =
      harness::load_experiment(dir.write("spec.yaml", moe).string(), llama_options());
  ASSERT_EQ(e.systems.size(), 2u);
  runtime::ParallelSystem composed = e.systems[1];
  composed.name = e.systems[0].name;
  EXPECT_EQ(composed, static_cast<const runtime::ParallelSystem&>(e.systems[0]));
  EXPECT_EQ(e.systems[1].kind(), runtime::SystemKind::kExpertParallel);
}

std::string first_error(const std::string& system) {
  const std::string all = harness_test::spec_load_error(with_system(system), llama_options());
  return all.substr(0, all.find('\n'));
}

TEST(MeshForm, ErrorsPointIntoTheMeshAndTheKeysBesideIt) {
  EXPECT_EQ(first_error("{name: s, mesh: {pipeline: 2, data: 2}}"),
            "spec.yaml:6:5: systems: s: mesh: pipeline 2 x tensor 1 x data 2 is 4 ranks, and "
            "run.world_size is 8");
  EXPECT_EQ(first_error("{name: s, mesh: {pipline: 2}}"),
            "spec.yaml:6:22: unknown key 'systems.mesh.pipline' (did you mean 'pipeline'?)");
  EXPECT_EQ(first_error("{name: s, mesh: {tensor: 2, experts: true}}"),
            "spec.yaml:6:21: systems.mesh: experts are sharded over the data axis alone: not "
            "composed with a pipeline or tensor axis");
  EXPECT_EQ(first_error("{name: s, kind: pipeline, mesh: {pipeline: 2}}"),
            "spec.yaml:6:21: systems.kind: goes with a short form; beside 'mesh' the axes' "
            "degrees say it (drop 'kind')");
  EXPECT_EQ(first_error("{name: s, mesh: {pipeline: 2}, stages: 4}"),
            "spec.yaml:6:44: systems.stages: goes with a short form; beside 'mesh' the axes' "
            "degrees say it (drop 'stages')");
  EXPECT_EQ(first_error("{name: s, mesh: {}, zero_stage: 4}"),
            "spec.yaml:6:37: systems.zero_stage: must be <= 3 (got 4)");
  EXPECT_EQ(first_error("{name: s, mesh: 2}"),
            "spec.yaml:6:21: systems.mesh: expected a map of axis degrees {pipeline: P, "
            "tensor: T, data: D, experts: BOOL}, got '2'");
  // The short form's own rules, at the keys the spec wrote.
  EXPECT_EQ(first_error("{name: s, mesh: {tensor: 3}}"),
            "spec.yaml:6:5: systems: s: tensor 3 does not divide run.world_size 8");
  EXPECT_EQ(first_error("{name: s, mesh: {}, zero_stage: 0, unit: model}"),
            "spec.yaml:6:5: missing required key 'systems.mode'");
  EXPECT_EQ(first_error("{name: s, mesh: {}, mode: sync, unit: model}"),
            "spec.yaml:6:37: unknown key 'systems.unit'");
}

// A simulate spec over a 4-layer profile at world 4.
struct SimulateSpecFiles {
  TempDir dir;
  std::string write(const std::string& systems) const {
    dir.write("graph.txt",
              "node1 -- Linear1 -- forward_compute_time=1.0, backward_compute_time=2.0, "
              "activation_size=1000.0, parameter_size=1000000.0\n"
              "node2 -- Linear2 -- forward_compute_time=2.0, backward_compute_time=4.0, "
              "activation_size=1000.0, parameter_size=1000000.0\n\tnode1 -- node2\n");
    dir.write("topology.yaml",
              "name: t\ngpu_memory_bytes: 16e9\nbandwidth:\n  intra_machine: 10.0e9\n"
              "  inter_machine_p2p: 1.0e9\n  inter_machine_collective: 2.0e9\nmachines: [2, 2]\n");
    const std::string d = dir.path().string();
    return dir
        .write("sim.yaml", "kind: simulate\nname: sim\noutput: " + d +
                               "/out\nsimulate:\n  model: {profile: " + d +
                               "/graph.txt, pbs: 2, batch_size: 2}\n  cluster: {topology: " + d +
                               "/topology.yaml, gpus_per_machine: 2}\n  run: {world_size: 4, "
                               "iterations: 2}\n  systems:\n" +
                               systems)
        .string();
  }
};

TEST(MeshForm, SimulateSpecsReadTheSameForm) {
  SimulateSpecFiles files;
  const std::string path = files.write(
      "    - {name: z2, kind: sharded, stage: 2}\n"
      "    - {name: z2_mesh, mesh: {data: 4}, zero_stage: 2}\n"
      "    - {name: pp, kind: pipeline, stages: 2, schedule: gpipe}\n"
      "    - {name: pp_mesh, mesh: {pipeline: 2, data: 2}, schedule: gpipe}\n");
  const harness::SimulateSpec spec = harness::read_simulate_spec(path, YAML::LoadFile(path), {});
  ASSERT_EQ(spec.systems.size(), 4u);
  for (size_t i : {0u, 2u}) {
    const harness::SystemSettings &expected = spec.systems[i], &got = spec.systems[i + 1];
    EXPECT_EQ(got.kind, expected.kind) << got.name;
    EXPECT_EQ(got.data, expected.data) << got.name;
    EXPECT_EQ(got.balanced_stage_count, expected.balanced_stage_count) << got.name;
    EXPECT_EQ(got.schedule, expected.schedule) << got.name;
  }
  EXPECT_EQ(spec.systems[3].balanced_stage_count, 2);

  const std::string wrong = files.write("    - {name: z2, mesh: {data: 2}, zero_stage: 2}\n");
  std::ostringstream out;
  try {
    harness::run_simulate_spec(wrong, YAML::LoadFile(wrong), {}, true, out);
    ADD_FAILURE() << "a mesh of 2 ranks simulated at world 4";
  } catch (const harness::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "sim.yaml:9:7: mesh: pipeline 1 x tensor 1 x data 2 is 2 ranks, and "
                  "run.world_size is 4"),
              std::string::npos)
        << e.what();
  }
  // Experts over the data axis, their dense part sharded: the short form's system.
  const std::string experts = files.write(
      "    - {name: ep, kind: expert_parallel, zero_stage: 1}\n"
      "    - {name: ep_mesh, mesh: {data: 4, experts: true}, zero_stage: 1}\n");
  const harness::SimulateSpec ep =
      harness::read_simulate_spec(experts, YAML::LoadFile(experts), {});
  ASSERT_EQ(ep.systems.size(), 2u);
  EXPECT_EQ(ep.systems[1].kind, runtime::SystemKind::kExpertParallel);
  EXPECT_EQ(ep.systems[1].data, ep.systems[0].data);
  EXPECT_EQ(ep.systems[1].data.zero_stage, 1);
}

}  // namespace mesh_form_test
