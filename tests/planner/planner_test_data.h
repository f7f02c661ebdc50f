// The folder of the planner tests' profiles (tests/data/planner), one definition for every
// planner test file: they are compiled together in one batch.
#pragma once

#include <string>

namespace harness::planner {

inline const std::string kData = PLANNER_TEST_DATA;

}  // namespace harness::planner
