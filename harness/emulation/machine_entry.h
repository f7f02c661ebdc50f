// Running a command on one emulated machine as if it were a host of its own (issue 34): inside
// the machine's network namespace, under its own host name (a UTS namespace), and in a mount
// namespace where a private folder is an empty tmpfs, so that what its ranks write stays on the
// machine, as on a cluster without a shared file system; results reach the harness only through
// the launcher's stream and the rendezvous store. `harness enter-machine` is this as a program:
// the wrapper that starts mpirun on machine 0 and Open MPI's rsh agent for the others (mpirun
// calls its agent as `AGENT HOST COMMAND...`, the command meant for a remote shell).
#pragma once

#include <string>
#include <vector>

#include "harness/emulation/network_plan.h"

namespace harness {

// Where `enter-machine` finds a machine and what it keeps private there.
struct MachineEntry {
  std::vector<EmulatedMachine> machines;  // by address
  std::string private_folder;             // "" for none
};

// The words of `harness enter-machine` for the machines of `plan` (without the host and
// command): `harness` the harness binary. Open MPI splits its agent on spaces: InputError when
// a path holds one.
std::vector<std::string> enter_machine_words(const std::string& harness, const NetworkPlan& plan,
                                             const std::string& private_folder);

// Parses the `--machines ADDRESS=NETNS,...` list enter_machine_words writes; InputError when
// malformed.
std::vector<EmulatedMachine> parse_machine_list(const std::string& text);

// The machine of `entry` with address or namespace `host`; InputError naming it when none.
const EmulatedMachine& find_machine(const MachineEntry& entry, const std::string& host);

// Enters `machine` (network, host name, private folder with TMPDIR in it) and replaces this
// process with `command`: run as it is, or with `through_shell` joined into one line for
// /bin/sh (what an rsh agent is handed). Needs root. On failure prints one line and exits 126.
[[noreturn]] void exec_on_machine(const EmulatedMachine& machine, const std::string& private_folder,
                                  const std::vector<std::string>& command, bool through_shell);

}  // namespace harness
