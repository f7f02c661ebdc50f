// `harness ab SPEC --base BUILD --new BUILD`: a baseline and a candidate build run the same
// spec in alternating rounds on this machine, then the two sides are compared over runs
// (harness compare); exits as compare does (0, 1 regression, 2 bad input, 3 inconclusive), or
// 1 when a study failed, 130 when interrupted. With --until-resolved the rounds double while a
// judged row is undecided, up to --max-rounds, alpha spent over the planned looks
// (harness/analysis/sequential_gate.h).
#pragma once

namespace CLI {
class App;
}

namespace harness {

void add_ab_command(CLI::App& app);

}  // namespace harness
