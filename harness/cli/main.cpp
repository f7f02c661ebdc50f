// harness: one CLI for the experiment harness. It loads no LibTorch: whatever needs it runs
// in the rank program (harness-rank, beside this binary) as a process of its own.
#include "harness/cli/harness_main.h"

int main(int argc, char** argv) { return harness::harness_main(argc, argv); }
