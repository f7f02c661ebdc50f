// `harness history add | check | report`: benchmark results kept across commits in a database
// (harness/history/), change points found over them, and a static page of their trends. Exit
// codes: add 0 or 2; check 0 no regression, 1 a regression, 3 too short a history to say; 2 bad
// input (the database unchanged) for all three.
#pragma once

namespace CLI {
class App;
}

namespace harness {

void add_history_command(CLI::App& app);

}  // namespace harness
