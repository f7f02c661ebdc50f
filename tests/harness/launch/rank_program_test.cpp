// RankProgram against a stand-in `harness-rank` (a /bin/sh script that logs each start and
// answers as the real one does): every process that loads LibTorch costs a third of a second
// before it does anything, so the version rides on the first model question, and nothing is
// asked twice.
#include "harness/launch/rank_program.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "harness/spec/spec.h"
#include "tests/test_util.h"

namespace {

using harness::RankProgram;
using harness_test::TempDir;

// A stand-in shaped like `harness-rank version` and `harness-rank layers ... [--flops]
// [--version]`: it appends its arguments to starts.log, one start a line.
std::string stand_in(const TempDir& dir) {
  const std::string log = (dir.path() / "starts.log").string();
  const auto script = dir.write("harness-rank", R"(#!/bin/sh
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
  chmod(script.c_str(), 0755);
  return script.string();
}

std::vector<std::string> starts(const TempDir& dir) {
  std::ifstream in(dir.path() / "starts.log");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
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
