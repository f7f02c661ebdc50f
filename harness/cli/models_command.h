// `harness models`: the model zoo with parameter counts (counted by the rank program, which
// builds each model once).
#pragma once

#include "harness/launch/rank_program.h"

namespace CLI {
class App;
}

namespace harness {

class ModelsCommand {
 public:
  explicit ModelsCommand(RankProgram& rank_program) : rank_program_(rank_program) {}
  // Adds `models` to the app; the app calls back into this object, which must outlive it.
  void add_to(CLI::App& app);

 private:
  RankProgram& rank_program_;
};

}  // namespace harness
