// RankProgram against a stand-in `harness-rank` (rank_program_stand_in.h: a /bin/sh script that
// logs each start and answers as the real one does): every process that loads LibTorch costs a
// third of a second before it does anything, so the version rides on the first model question,
// and nothing is asked twice.
#include "harness/launch/rank_program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "common/input_error.h"
#include "common/json_file.h"
#include "tests/harness/launch/rank_program_stand_in.h"
#include "tests/test_util.h"

namespace {

using harness::RankProgram;
using harness_test::model_named;
using harness_test::rank_program_stand_in;
using harness_test::rank_program_starts;
using harness_test::ScopedEnv;
using harness_test::TempDir;

TEST(RankProgram, AModelQuestionFirstBringsTheVersionInTheSameProcess) {
  TempDir dir;
  RankProgram program(rank_program_stand_in(dir));
  EXPECT_EQ(program.layer_forward_flops(model_named("mlp")), (std::vector<double>{100, 20}));
  ASSERT_EQ(rank_program_starts(dir).size(), 1u);
  EXPECT_EQ(rank_program_starts(dir)[0], "layers --model mlp --input-shape 64 --flops --version");
  // Answered from that one process: the version, the devices, the BLAS, the layer names.
  EXPECT_EQ(program.torch_version(), "9.9.9");
  EXPECT_EQ(program.devices().gpus, 2);
  EXPECT_TRUE(program.devices().nccl);
  EXPECT_EQ(program.blas().value("library", ""), "openblas-pthread");
  EXPECT_EQ(program.layer_names(model_named("mlp")), (std::vector<std::string>{"mlp.0", "mlp.1"}));
  EXPECT_EQ(rank_program_starts(dir).size(), 1u);
  // Another model is a question of its own, without the version it already has.
  EXPECT_EQ(program.layer_names(model_named("vgg19")),
            (std::vector<std::string>{"vgg19.0", "vgg19.1"}));
  ASSERT_EQ(rank_program_starts(dir).size(), 2u);
  EXPECT_EQ(rank_program_starts(dir)[1], "layers --model vgg19 --input-shape 64");
}

TEST(RankProgram, TheVersionFirstIsAskedAloneAndOnce) {
  TempDir dir;
  RankProgram program(rank_program_stand_in(dir));
  EXPECT_EQ(program.torch_version(), "9.9.9");
  EXPECT_EQ(program.devices().gpus, 2);
  EXPECT_EQ(program.layer_forward_flops(model_named("mlp")), (std::vector<double>{100, 20}));
  EXPECT_EQ(rank_program_starts(dir),
            (std::vector<std::string>{"version", "layers --model mlp --input-shape 64 --flops"}));
}

TEST(RankProgram, AnswersKeptFromAnotherRunAreNotAskedAgain) {
  TempDir dir;
  const std::string program = rank_program_stand_in(dir);
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
  EXPECT_EQ(rank_program_starts(dir).size(), 1u);
  // What was not asked before is asked, without the version it was given.
  EXPECT_EQ(next.layer_names(model_named("vgg19")),
            (std::vector<std::string>{"vgg19.0", "vgg19.1"}));
  ASSERT_EQ(rank_program_starts(dir).size(), 2u);
  EXPECT_EQ(rank_program_starts(dir)[1], "layers --model vgg19 --input-shape 64");
}

TEST(RankProgram, AnswersForAnotherProgramOrEnvironmentAreNotTaken) {
  TempDir dir;
  const std::string program = rank_program_stand_in(dir);
  RankProgram first(program);
  first.layer_names(model_named("mlp"));
  const nlohmann::json kept = first.answers();
  ASSERT_EQ(rank_program_starts(dir).size(), 1u);

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
  EXPECT_EQ(rank_program_starts(dir).size(), 2u);

  // Another build of the program at the same path (here 4 bytes longer).
  std::ofstream(program, std::ios::app) << "# 2\n";
  RankProgram rebuilt(program);
  EXPECT_FALSE(rebuilt.adopt_answers(kept));
  EXPECT_EQ(rebuilt.torch_version(), "9.9.9");
  EXPECT_EQ(rank_program_starts(dir).back(), "version");
}

TEST(RankProgram, AFailedModelQuestionLeavesTheVersionToBeAsked) {
  TempDir dir;
  RankProgram program(rank_program_stand_in(dir));
  try {
    program.layer_names(model_named("nosuch"));
    ADD_FAILURE() << "a model the rank program refused was answered";
  } catch (const harness::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "nosuch: unknown model");
  }
  EXPECT_EQ(program.torch_version(), "9.9.9");
  EXPECT_EQ(
      rank_program_starts(dir),
      (std::vector<std::string>{"layers --model nosuch --input-shape 64 --version", "version"}));
}

}  // namespace
