// The rank program's command line (`harness-rank worker|comm-worker|profile|models|...`). In the
// library rather than in main.cpp so that CLI11's parser (all inline, ~5 s of compile at -O2) is
// built once, in the group with the commands that already instantiate CLI11.
#pragma once

namespace harness {

// The exit code (common/cli_exit.h has what each one means).
int rank_main(int argc, char** argv);

}  // namespace harness
