// HARNESS_RANK_ANSWERS: a file that keeps the rank programs' answers (RankProgram::answers)
// from one harness process to the next, so that a question that loads LibTorch (0.4 s of CPU
// before it does anything) is asked once per rank program, not once per command. `harness ab`
// gives each side's rounds one; the test suite gives its end-to-end tests one.
//
// It holds the answers of the kKeptRankPrograms rank programs (or environments) that wrote it
// last, each with what it holds for, newest first: `{"rank_programs": [answers, ...]}`. Two
// builds, or one build with and without LD_PRELOAD, that share a file keep an entry each rather
// than replacing each other's. A file missing, unreadable, malformed or for other programs is
// asked again, never an error: it only saves the questions.
#pragma once

#include <cstddef>
#include <filesystem>

#include "harness/launch/rank_program.h"

namespace harness {

inline constexpr std::size_t kKeptRankPrograms = 8;

// Takes the file's answers that hold for `rank_program` here; returns whether any did.
bool adopt_kept_answers(RankProgram& rank_program, const std::filesystem::path& file);

// Writes `rank_program`'s answers first in `file`, followed by the file's entries for other
// programs and environments as it holds them now (another harness may have written since this
// one read it), at most kKeptRankPrograms in all. Written atomically; throws where it cannot be.
void keep_answers(const RankProgram& rank_program, const std::filesystem::path& file);

}  // namespace harness
