// `harness-rank models`, `harness-rank layers ...` and `harness-rank version`: the zoo's
// answers (rank/zoo_queries.h) printed as one JSON document on stdout, for the harness
// (harness/launch/rank_program.h) to read. A bad model or option is one line on stderr, exit 2.
#pragma once

namespace CLI {
class App;
}

namespace harness {

void add_zoo_query_commands(CLI::App& app);

}  // namespace harness
