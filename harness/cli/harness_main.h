// The harness command line: every command on one CLI::App, parsed and run. In the library
// rather than in main.cpp so that CLI11's parser (all inline, ~5 s of compile at -O2) is built
// once, in the batch with the commands that already instantiate CLI11, not in a file of its own.
#pragma once

namespace harness {

// The exit code (common/cli_exit.h has what each one means).
int harness_main(int argc, char** argv);

}  // namespace harness
