// The answers file (HARNESS_RANK_ANSWERS) against stand-in rank programs that log each start
// (rank_program_stand_in.h): a kept answer is a process that need not load LibTorch, and a file
// shared by several programs or environments keeps each one's answers rather than the last.
#include "harness/launch/rank_answers_file.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/json_file.h"
#include "tests/harness/launch/rank_program_stand_in.h"
#include "tests/test_util.h"

namespace {

using harness::adopt_kept_answers;
using harness::keep_answers;
using harness::kKeptRankPrograms;
using harness::RankProgram;
using harness_test::model_named;
using harness_test::rank_program_stand_in;
using harness_test::rank_program_starts;
using harness_test::ScopedEnv;
using harness_test::TempDir;

// One string of what each of the file's entries holds for (`holds_for` at `pointer`), in the
// file's order.
std::vector<std::string> kept_for(const std::filesystem::path& file, const std::string& pointer) {
  std::vector<std::string> values;
  const nlohmann::json kept = harness::read_json_file(file);
  for (const auto& entry : kept.at("rank_programs")) {
    values.push_back(entry.at("holds_for").at(nlohmann::json::json_pointer(pointer)));
  }
  return values;
}

// The programs of the file's entries, in its order.
std::vector<std::string> kept_programs(const std::filesystem::path& file) {
  return kept_for(file, "/program");
}

TEST(RankAnswersFile, TwoProgramsShareOneFileAndEachTakesItsOwnAnswers) {
  TempDir files, first_dir, second_dir;
  const auto file = files.path() / "answers.json";
  const std::string first = rank_program_stand_in(first_dir);
  const std::string second = rank_program_stand_in(second_dir);
  {
    RankProgram asked(first);
    EXPECT_FALSE(adopt_kept_answers(asked, file));  // no file yet
    asked.layer_forward_flops(model_named("mlp"));
    keep_answers(asked, file);
  }
  {
    RankProgram asked(second);
    EXPECT_FALSE(adopt_kept_answers(asked, file));  // the file holds the first program's only
    asked.layer_names(model_named("vgg19"));
    keep_answers(asked, file);
  }
  EXPECT_EQ(kept_programs(file), (std::vector<std::string>{second, first}));  // newest first

  RankProgram first_again(first), second_again(second);
  ASSERT_TRUE(adopt_kept_answers(first_again, file));
  ASSERT_TRUE(adopt_kept_answers(second_again, file));
  EXPECT_EQ(first_again.layer_forward_flops(model_named("mlp")), (std::vector<double>{100, 20}));
  EXPECT_EQ(first_again.torch_version(), "9.9.9");
  EXPECT_EQ(second_again.layer_names(model_named("vgg19")),
            (std::vector<std::string>{"vgg19.0", "vgg19.1"}));
  EXPECT_EQ(second_again.torch_version(), "9.9.9");
  // Each asked once, in its first command; the second program's answers are not the first's.
  EXPECT_EQ(rank_program_starts(first_dir),
            (std::vector<std::string>{"layers --model mlp --input-shape 64 --flops --version"}));
  EXPECT_EQ(rank_program_starts(second_dir),
            (std::vector<std::string>{"layers --model vgg19 --input-shape 64 --version"}));
  first_again.layer_names(model_named("vgg19"));
  EXPECT_EQ(rank_program_starts(first_dir).back(), "layers --model vgg19 --input-shape 64");
}

// `harness models` asks for the zoo's listing: kept like the other answers, so that a second
// command lists the zoo without starting the program.
TEST(RankAnswersFile, TheZoosListingIsAskedOnce) {
  TempDir files, dir;
  const auto file = files.path() / "cache" / "harness" / "answers.json";  // folders made
  const std::string program = rank_program_stand_in(dir);
  {
    RankProgram asked(program);
    EXPECT_EQ(asked.models().at(0).at("parameters"), 1000);
    EXPECT_EQ(asked.models().at(0).at("name"), "mlp");  // the same answer, not asked again
    keep_answers(asked, file);
  }
  RankProgram again(program);
  ASSERT_TRUE(adopt_kept_answers(again, file));
  EXPECT_EQ(again.models().at(0).at("description"), "a stand-in");
  EXPECT_EQ(rank_program_starts(dir), (std::vector<std::string>{"models"}));
}

TEST(RankAnswersFile, KeepsTheNewestEntriesAndOneForEachProgramAndEnvironment) {
  TempDir files, dir;
  const auto file = files.path() / "answers.json";
  const std::string program = rank_program_stand_in(dir);
  // One program in kKeptRankPrograms environments (what it sees differs with each), then the
  // first of them again, then one more.
  std::vector<std::string> devices;
  for (std::size_t k = 0; k < kKeptRankPrograms; ++k) devices.push_back(std::to_string(k));
  devices.push_back("0");
  devices.push_back(std::to_string(kKeptRankPrograms));
  for (const std::string& visible : devices) {
    const ScopedEnv environment("CUDA_VISIBLE_DEVICES", visible);
    RankProgram asked(program);
    if (!adopt_kept_answers(asked, file)) asked.torch_version();
    keep_answers(asked, file);
  }
  // Asked once in each environment: the second "0" took its entry and moved it first, and "8"
  // pushed out the oldest, "1".
  EXPECT_EQ(rank_program_starts(dir).size(), kKeptRankPrograms + 1);
  EXPECT_EQ(kept_for(file, "/environment/CUDA_VISIBLE_DEVICES"),
            (std::vector<std::string>{"8", "0", "7", "6", "5", "4", "3", "2"}));
  // "1" was pushed out: asked again.
  const ScopedEnv environment("CUDA_VISIBLE_DEVICES", "1");
  RankProgram asked(program);
  EXPECT_FALSE(adopt_kept_answers(asked, file));
}

TEST(RankAnswersFile, AFileInAnotherFormIsAskedAgainAndReplaced) {
  TempDir files, dir;
  const std::string program = rank_program_stand_in(dir);
  RankProgram asked(program);
  asked.layer_names(model_named("mlp"));
  const std::string answers = harness::json_text(asked.answers());
  // Malformed JSON, another document, one program's answers without the list around them.
  for (const std::string& content : {std::string("{\"rank_programs\": [ "), std::string("[1, 2]"),
                                     std::string("{\"rank_programs\": 3}"), answers}) {
    const auto file = files.write("answers.json", content);
    RankProgram again(program);
    EXPECT_FALSE(adopt_kept_answers(again, file)) << content;
    keep_answers(asked, file);
    EXPECT_EQ(kept_programs(file), (std::vector<std::string>{program})) << content;
    EXPECT_TRUE(adopt_kept_answers(again, file)) << content;
  }
}

TEST(RankAnswersFile, AFileThatCannotBeWrittenThrows) {
  TempDir files, dir;
  RankProgram asked(rank_program_stand_in(dir));
  asked.torch_version();
  const auto not_a_folder = files.write("answers.json", "");
  EXPECT_THROW(keep_answers(asked, not_a_folder / "answers.json"), std::exception);
  EXPECT_FALSE(adopt_kept_answers(asked, not_a_folder / "answers.json"));
}

}  // namespace
