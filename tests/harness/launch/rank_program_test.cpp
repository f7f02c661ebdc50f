// RankProgram against a stand-in `harness-rank` (a /bin/sh script that logs each start and
// answers as the real one does): every process that loads LibTorch costs a third of a second
// before it does anything, so the version rides on the first model question, and nothing is
// asked twice.
#include "harness/launch/rank_program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "common/json_file.h"
#include "harness/spec/spec.h"
#include "tests/test_util.h"

namespace {

using harness::RankProgram;
using harness_test::ScopedEnv;
using harness_test::TempDir;

// A stand-in shaped like `harness-rank version` and `harness-rank layers ... [--flops]
// [--version]`: it appends its arguments to starts.log, one start a line.
std::string stand_in(const TempDir& dir) {
  const std::string log = (dir.path() / "starts.log").string();
  const auto script = dir.write_program("harness-rank", R"(#!/bin/sh
echo "$*" >> ')" + log + R"('
version='{"torch_version": "9.9.9", "torch_python": "/usr/bin/python3", "cuda_devices": 2,
          "nccl": true, "blas": {"library": "openblas-pthread", "path": "/lib/libblas.so.3"}}'
case "$1" in
  version) echo "$version"; exit 0 ;;
  layers) ;;
  *) echo "error: unknown command $1" >&2; exit 2 ;;
esac
model=""; flops=""; with_version=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift ;;
    --flops) flops=', "forward_flops": [100, 20]' ;;
    --version) with_version=", \"version\": $version" ;;
  esac
  shift
done
if [ "$model" = nosuch ]; then echo "error: nosuch: unknown model" >&2; exit 2; fi
echo "{\"names\": [\"$model.0\", \"$model.1\"]$flops$with_version}"
)");
  return script.string();
}

std::vector<std::string> starts(const TempDir& dir) {
  return harness_test::file_lines(dir.path() / "starts.log");
}

harness::ModelConfig model_named(const std::string& name) {
  harness::ModelConfig model;
  model.name = name;
  model.input_shape = {64};
  return model;
}

TEST(RankProgram, AModelQuestionFirstBringsTheVersionInTheSameProcess) {
  TempDir dir;
  RankProgram program(stand_in(dir));
  EXPECT_EQ(program.layer_forward_flops(model_named("mlp")), (std::vector<double>{100, 20}));
  ASSERT_EQ(starts(dir).size(), 1u);
  EXPECT_EQ(starts(dir)[0], "layers --model mlp --input-shape 64 --flops --version");
  // Answered from that one process: the version, the devices, the BLAS, the layer names.
  EXPECT_EQ(program.torch_version(), "9.9.9");
  EXPECT_EQ(program.devices().gpus, 2);
  EXPECT_TRUE(program.devices().nccl);
  EXPECT_EQ(program.blas().value("library", ""), "openblas-pthread");
  EXPECT_EQ(program.layer_names(model_named("mlp")), (std::vector<std::string>{"mlp.0", "mlp.1"}));
  EXPECT_EQ(starts(dir).size(), 1u);
  // Another model is a question of its own, without the version it already has.
  EXPECT_EQ(program.layer_names(model_named("vgg19")),
            (std::vector<std::string>{"vgg19.0", "vgg19.1"}));
  ASSERT_EQ(starts(dir).size(), 2u);
  EXPECT_EQ(starts(dir)[1], "layers --model vgg19 --input-shape 64");
}

TEST(RankProgram, TheVersionFirstIsAskedAloneAndOnce) {
  TempDir dir;
  RankProgram program(stand_in(dir));
  EXPECT_EQ(program.torch_version(), "9.9.9");
  EXPECT_EQ(program.devices().gpus, 2);
  EXPECT_EQ(program.layer_forward_flops(model_named("mlp")), (std::vector<double>{100, 20}));
  EXPECT_EQ(starts(dir),
            (std::vector<std::string>{"version", "layers --model mlp --input-shape 64 --flops"}));
}

TEST(RankProgram, AnswersKeptFromAnotherRunAreNotAskedAgain) {
  TempDir dir;
  const std::string program = stand_in(dir);
  RankProgram first(program);
  EXPECT_EQ(first.layer_forward_flops(model_named("mlp")), (std::vector<double>{100, 20}));
  const nlohmann::json kept = harness::parse_json(harness::json_text(first.answers()));
  EXPECT_EQ(kept.at("version").at("torch_version"), "9.9.9");
  EXPECT_EQ(kept.at("holds_for").at("program"), (dir.path() / "harness-rank").string());

  RankProgram next(program);
  ASSERT_TRUE(next.adopt_answers(kept));
  EXPECT_EQ(next.layer_forward_flops(model_named("mlp")), (std::vector<double>{100, 20}));
  EXPECT_EQ(next.layer_names(model_named("mlp")), (std::vector<std::string>{"mlp.0", "mlp.1"}));
  EXPECT_EQ(next.torch_version(), "9.9.9");
  EXPECT_EQ(next.devices().gpus, 2);
  EXPECT_EQ(starts(dir).size(), 1u);
  // What was not asked before is asked, without the version it was given.
  EXPECT_EQ(next.layer_names(model_named("vgg19")),
            (std::vector<std::string>{"vgg19.0", "vgg19.1"}));
  ASSERT_EQ(starts(dir).size(), 2u);
  EXPECT_EQ(starts(dir)[1], "layers --model vgg19 --input-shape 64");
}

TEST(RankProgram, AnswersForAnotherProgramOrEnvironmentAreNotTaken) {
  TempDir dir;
  const std::string program = stand_in(dir);
  RankProgram first(program);
  first.layer_names(model_named("mlp"));
  const nlohmann::json kept = first.answers();
  ASSERT_EQ(starts(dir).size(), 1u);

  // Another environment: the devices it sees (and the libraries it loads) may differ. The value
  // differs from whatever this process has, set or not, and is put back after.
  {
    const char* devices = std::getenv("CUDA_VISIBLE_DEVICES");
    const ScopedEnv other("CUDA_VISIBLE_DEVICES", std::string(devices ? devices : "") + "9");
    EXPECT_FALSE(RankProgram(program).adopt_answers(kept));
  }
  EXPECT_TRUE(RankProgram(program).adopt_answers(kept));

  // Malformed: nothing is taken, and the questions are asked.
  nlohmann::json malformed = kept;
  malformed["layer_forward_ms"] = 3;
  RankProgram unread(program);
  EXPECT_FALSE(unread.adopt_answers(malformed));
  EXPECT_FALSE(unread.adopt_answers(nlohmann::json::array()));
  unread.layer_names(model_named("mlp"));
  EXPECT_EQ(starts(dir).size(), 2u);

  // Another build of the program at the same path (here 4 bytes longer).
  std::ofstream(program, std::ios::app) << "# 2\n";
  RankProgram rebuilt(program);
  EXPECT_FALSE(rebuilt.adopt_answers(kept));
  EXPECT_EQ(rebuilt.torch_version(), "9.9.9");
  EXPECT_EQ(starts(dir).back(), "version");
}

TEST(RankProgram, AFailedModelQuestionLeavesTheVersionToBeAsked) {
  TempDir dir;
  RankProgram program(stand_in(dir));
  try {
    program.layer_names(model_named("nosuch"));
    ADD_FAILURE() << "a model the rank program refused was answered";
  } catch (const harness::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "nosuch: unknown model");
  }
  EXPECT_EQ(program.torch_version(), "9.9.9");
  EXPECT_EQ(starts(dir), (std::vector<std::string>{
                             "layers --model nosuch --input-shape 64 --version", "version"}));
}

}  // namespace
