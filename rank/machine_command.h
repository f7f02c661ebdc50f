// `harness-rank machine`: the limits of this machine as LibTorch sees them (the BLAS it loaded,
// fp32/bf16 GEMM on one core and on all, a memory triad), one JSON document on stdout for
// `harness machine` (harness/cli/machine_command.h).
#pragma once

namespace CLI {
class App;
}

namespace harness {

void add_machine_command(CLI::App& app);

}  // namespace harness
