// `harness enter-machine --machines ADDRESS=NETNS,... [--private DIR] [--shell] HOST COMMAND...`
// (internal, not in --help): runs COMMAND on the emulated machine HOST (its address or
// namespace), as harness/emulation/machine_entry.h describes. The harness starts mpirun through
// it on machine 0 and hands it to mpirun as the agent that starts Open MPI's daemons on the
// other machines (with --shell: the command is a line for a remote shell, as ssh would run it).
#pragma once

namespace CLI {
class App;
}

namespace harness {

void add_enter_machine_command(CLI::App& app);

}  // namespace harness
